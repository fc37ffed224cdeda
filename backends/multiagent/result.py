"""The session's result as Markdown (what the result pane shows, copies and exports, and the
CLI prints): the task, what was verified, the reviewer's answer — only the words of it that
may be shown (:mod:`~backends.multiagent.review`), never cut mid-sentence — and each step's
work with its check.
"""

from __future__ import annotations

import re

from backends.i18n import _, number
from backends.multiagent.plan import BULLET
from backends.multiagent.review import guard_review
from backends.multiagent.summaries import translate as summary_text
from backends.multiagent.verify import (
    CHECKED,
    FAILED,
    LABELS,
    UNVERIFIED,
    VERIFIED,
    session_summary,
)
from backends.multiagent.words import (
    expert_name,
    limit_text,
    network_name,
    outcome_name,
    phase_name,
    status_label,
)
from backends.stores.sessions import Session

_SENTENCE_END = re.compile(r"[.!?…)\]`\"'»”:;]\s*$")


def complete_text(text: str) -> tuple[str, bool]:
    """``text`` without a last sentence cut off by the token limit; True when cut.

    A text that ends a sentence (or a list item, a code block) is whole. Otherwise it is cut
    back to the end of its last whole sentence or line, unless that would drop most of it.
    """
    text = text.rstrip()
    if not text or _SENTENCE_END.search(text) or text.endswith("```"):
        return text, False
    if BULLET.match(text.rsplit("\n", 1)[-1]):
        return text, False  # a list's last item: lists often end without a full stop
    ends = [m.end() for m in re.finditer(r"[.!?…](?=\s)|\n", text)]
    if ends and ends[-1] >= len(text) // 3:
        return text[: ends[-1]].rstrip(), True
    return text + "…", True


def assemble_result(session: Session) -> str:
    """The session's result as Markdown: the task, the reviewer's answer, then each step's
    work, in plan order — what the result pane shows, copies and exports."""
    data = session.data
    lines = [f"# {session.task.strip()}", ""]
    lines += verification_markdown(session)
    review = str(data.get("review") or "").strip()
    if review:
        review, cut = complete_text(review)
        record = data.get("verification")
        status = record.get("status") if isinstance(record, dict) else None
        headings: dict[str, str] = {
            FAILED: _("Answer — the reviewer's words; the code failed its check"),
            UNVERIFIED: _("Answer — the reviewer's words, unchecked"),
        }
        shown, withheld = guard_review(review, str(status or UNVERIFIED), steps=data.get("steps"))
        lines += ["## " + headings.get(str(status), _("Answer")), ""]
        lines += [shown or _("*(Nothing of the reviewer's words can be shown: see below.)*"), ""]
        if withheld:
            lines.append(_("*Withheld from the reviewer's words:*"))
            lines += [f"- ~~{_md_line(s.text)}~~ — {s.reason}" for s in withheld]
            lines.append("")
        if cut:
            lines += [
                _(
                    "*(The reviewer's answer reached the length limit; cut at its last "
                    "complete sentence.)*"
                ),
                "",
            ]
    steps = list(data.get("steps") or [])
    if steps:
        lines += ["## " + _("Steps"), ""]
    for step in steps:
        title = str(step.get("title", "")).strip()
        expert = expert_name(str(step.get("expert", "")))
        lines += [f"### {step.get('index', '?')}. {title} — {expert}", ""]
        result = step.get("result")
        if result is None:
            lines += ["*" + _("(not done yet)") + "*", ""]
        else:
            lines += [str(result).strip() or "*" + _("(no text)") + "*", ""]
        check = step.get("verification")
        if isinstance(check, dict) and check.get("status") in CHECKED:
            said = _("Check: {label} — {summary}").format(
                label=status_label(str(check["status"])),
                summary=summary_text(str(check.get("summary", ""))),
            )
            lines += [f"*{said}*", ""]
    if not review and session.phase != "done":
        said = _("(Session {phase}: no final answer yet.)").format(phase=phase_name(session.phase))
        lines += [f"*{said}*", ""]
    return "\n".join(lines).rstrip() + "\n"


def _md_line(text: str) -> str:
    """``text`` as one line of Markdown that cannot open code or strike-through."""
    return " ".join(text.replace("`", "'").replace("~", "-").split())[:300]


_MARKS = {"passed": "✓", "failed": "✗", "error": "⚠", "skipped": "–"}


def verification_markdown(session: Session) -> list[str]:
    """The "what was verified" section: the status, then each checked step's tests with their
    outcome, the failures' output, and the sandbox's limits. Empty before the run ends."""
    record = session.data.get("verification")
    if session.phase != "done" or not isinstance(record, dict):
        return []
    status = str(record.get("status") or UNVERIFIED)
    heading = _(LABELS[status]) if status in LABELS else status
    lines = [f"## {heading[:1].upper()}{heading[1:]}", "", f"{session_summary(session.data)}."]
    if status == UNVERIFIED:
        lines[-1] += " " + _("Nothing here was run: read it as the model's draft.")
    lines.append("")
    for step in session.data.get("steps") or []:
        check = step.get("verification")
        if not isinstance(check, dict) or check.get("status") not in CHECKED:
            continue
        attempts = list(check.get("attempts") or [])
        step_name = _("Step {index}").format(index=step.get("index"))
        lines += [
            _("{step} ({expert}): {label} — {summary}").format(
                step=f"**{step_name}**",
                expert=expert_name(str(step.get("expert") or "")),
                label=status_label(str(check["status"])),
                summary=summary_text(str(check.get("summary", ""))),
            ),
            "",
        ]
        for attempt in attempts:
            if len(attempts) > 1:
                said = _("Attempt {number}: {summary}").format(
                    number=attempt.get("attempt"),
                    summary=summary_text(str(attempt.get("summary", ""))),
                )
                lines += [said, ""]
            if attempt.get("tests_from"):
                limits = attempt.get("limits") or {}
                ran = _(
                    "Tests: {source}; sandbox: no network ({network}), {seconds} s, {mb} MB, "
                    "{took} s"
                )
                lines += [
                    ran.format(
                        source=summary_text(str(attempt["tests_from"])),
                        network=network_name(str(attempt.get("network"))),
                        seconds=limit_text(limits.get("wall_seconds", "?")),
                        mb=limit_text(limits.get("memory_mb", "?")),
                        took=number(float(attempt.get("seconds") or 0), 2),
                    ),
                    "",
                ]
            for test in attempt.get("tests") or []:
                outcome = str(test.get("outcome"))
                mark = _MARKS.get(outcome, "?")
                lines.append(f"- {mark} `{test.get('name')}` — {outcome_name(outcome)}")
            if attempt.get("tests"):
                lines.append("")
            failures = [t for t in attempt.get("tests") or [] if t.get("outcome") != "passed"]
            output = "\n\n".join(
                f"{t['name']}:\n{t['output']}" for t in failures if t.get("output")
            ) or str(attempt.get("output") or "")
            if output.strip() and attempt.get("status") != VERIFIED:
                lines += ["```text", output.strip()[-1500:], "```", ""]
    return lines
