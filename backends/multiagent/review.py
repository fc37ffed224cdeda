"""What of the reviewer's words may be shown (issue 24): the answer policy's parroting guard
with the team's own scaffolding, a claim about the code's check that the record does not hold,
and code that no step wrote (nothing checked it) are withheld, each with why.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from backends.answers import WITHHELD, Shown, echoed_scaffolding
from backends.grounding import split_sentences
from backends.i18n import _
from backends.multiagent.verify import FAILED, LABELS, UNVERIFIED, VERIFIED, code_blocks

#: the team's own prompt scaffolding (:meth:`Coordinator._review`, the retry, the memory
#: context), which a small reviewer copies back: "- [coder] step 2 (…):", "Check: …"
_TEAM_SCAFFOLDING = re.compile(
    r"\[(?:planner|coder|researcher|tester|reviewer)\]\s*step\s*\d+"
    r"|^\s*(?:[-*]\s*)?(?:check|results|task|your step\s*\(\d+\)|your previous answer)\s*:"
    r"|\bit failed its check\b|\[(?:agent_results|code_patterns|session_memory)\b",
    re.IGNORECASE | re.MULTILINE,
)
#: a sentence's claim about the code's check, by the status it claims
_CLAIMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        UNVERIFIED,
        re.compile(
            r"\bunverified\b|\bnot\s+(?:been\s+)?(?:verified|checked|tested)\b"
            r"|\bcould\s+not\s+be\s+(?:checked|verified)\b",
            re.IGNORECASE,
        ),
    ),
    (
        FAILED,
        re.compile(
            r"\bfailed\s+(?:its\s+|the\s+)?(?:verification|check|tests?)\b"
            r"|\btests?\s+(?:have\s+)?failed\b|\bfails?\s+(?:its|the|all)\s+tests?\b",
            re.IGNORECASE,
        ),
    ),
    (
        VERIFIED,
        re.compile(
            r"(?<![-\w])verified\b|\b(?:all\s+)?(?:the\s+|its\s+)?tests?\s+(?:all\s+)?pass"
            r"(?:es|ed)?\b|\bpass(?:es|ed)?\s+(?:all\s+)?(?:its|the|all)\s+tests?\b"
            r"|\b(?:works|runs)\s+correctly\b",
            re.IGNORECASE,
        ),
    ),
)


def _claims(sentence: str) -> set[str]:
    """The statuses ``sentence`` claims for the code ("verified", "tests passed" …)."""
    found: set[str] = set()
    rest = sentence
    for status, pattern in _CLAIMS:  # "unverified" first, so its "verified" is not counted
        if pattern.search(rest):
            found.add(status)
            rest = pattern.sub(" ", rest)
    return found


def guard_review(
    review: str, status: str, steps: Iterable[dict[str, Any]] | None = None
) -> tuple[str, list[Shown]]:
    """The reviewer's words that may be shown, and those withheld with why (issue 24).

    The answer policy's parroting guard (:func:`backends.answers.echoed_scaffolding`) with the
    team's own scaffolding: a sentence that copies the prompt ("- [coder] step 2 (…)",
    "Check: …"), or claims a check the record does not hold ("verified" over an unverified
    draft; "the tests pass" over failed code), is withheld; so is code that no step wrote
    (nothing checked it — the steps' own code is shown below them, with its check).
    """
    written = {
        _norm_code(b.source) for s in steps or [] for b in code_blocks(str(s.get("result") or ""))
    }
    kept: list[str] = []
    withheld: list[Shown] = []
    label = _(LABELS.get(status, status))
    for kind, text in _review_segments(review):
        if kind == "code":
            if _norm_code(text) in written:
                kept.append(f"```python\n{text.strip(chr(10))}\n```")
            else:
                first = next((x.strip() for x in text.splitlines() if x.strip()), "")
                reason = _("code no step wrote: nothing checked it (each step's code is below)")
                withheld.append(Shown(f"{first} …", WITHHELD, reason=reason))
            continue
        out_lines: list[str] = []
        for line in text.split("\n"):
            sentences = split_sentences(line)
            bad: list[Shown] = []
            for sentence in sentences:
                echoed = echoed_scaffolding(sentence) or _echoed_team(sentence, line)
                wrong = _claims(sentence) - {status}
                if echoed:
                    reason = _("it copies the prompt (“{0}”)").format(echoed)
                    bad.append(Shown(sentence, WITHHELD, reason=reason))
                elif wrong:
                    reason = _("it claims the code is {0}; the check found: {1}").format(
                        _(LABELS[sorted(wrong)[0]]), label
                    )
                    bad.append(Shown(sentence, WITHHELD, reason=reason))
            withheld += bad
            if not bad:
                out_lines.append(line)
            elif len(bad) < len(sentences):
                dropped = {b.text for b in bad}
                out_lines.append(" ".join(s for s in sentences if s not in dropped))
        kept.append("\n".join(out_lines).strip("\n"))
    shown = "\n\n".join(k for k in kept if k.strip())
    return shown.strip(), withheld


def _echoed_team(sentence: str, line: str) -> str:
    match = _TEAM_SCAFFOLDING.search(sentence) or (
        _TEAM_SCAFFOLDING.search(line) if line.lstrip().startswith(sentence[:12]) else None
    )
    return match.group(0).strip() if match else ""


def _norm_code(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip("\n").splitlines())


_FENCE_MID_LINE = re.compile(r"^(.*?\S)[ \t]*(```+[\w+#.-]*)[ \t]*$", re.MULTILINE)
_BLOCK = re.compile(r"^[ \t]*```[^\n]*\n.*?(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)


def _fence_own_line(match: re.Match[str]) -> str:
    """An opening fence after words moved to its own line (an odd number of backticks
    before it would make it the end of an inline span instead)."""
    if match.group(1).count("`") % 2:
        return match.group(0)
    return f"{match.group(1)}\n{match.group(2)}"


def _review_segments(text: str) -> list[tuple[str, str]]:
    """``text`` as prose and fenced code, in order; a fence opened after some words on the
    same line ("… step 2 (…): ```python") opens a block too (the small model writes that)."""
    text = _FENCE_MID_LINE.sub(_fence_own_line, text)
    out: list[tuple[str, str]] = []
    last = 0
    for match in _BLOCK.finditer(text):
        if text[last : match.start()].strip():
            out.append(("prose", text[last : match.start()]))
        body = match.group(0)
        inner = re.sub(r"\A[ \t]*```[^\n]*\n|\n?[ \t]*```[ \t]*\Z", "", body)
        out.append(("code", inner))
        last = match.end()
    if text[last:].strip():
        out.append(("prose", text[last:]))
    return out
