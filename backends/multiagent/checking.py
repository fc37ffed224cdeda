"""The check of one step's code within a run (MA7): find its tests — the user's, the task's,
the coder's own, else the tester's (asked once more when it wrote none that can run) — run
them in the sandbox (:mod:`~backends.multiagent.verify`), and do a step that failed once more
with the failure as feedback. The record goes to ``step["verification"]``, saved after each
attempt, so an interrupted check resumes.
"""

from __future__ import annotations

import ast
from typing import Any

from backends import i18n
from backends.i18n import N_, _
from backends.multiagent.events import RETRY, VERIFICATION, VERIFYING
from backends.multiagent.run import Run
from backends.multiagent.summaries import translate
from backends.multiagent.team import EXPERTS
from backends.multiagent.verify import (
    CHECKED,
    FAILED,
    LABELS,
    VERIFIED,
    Attempt,
    asks_for_tests,
    check,
    find_tests,
    python_source,
    split_tests,
    written_tests,
)
from backends.multiagent.words import expert_name


def verify_step(run: Run, step: dict[str, Any]) -> None:
    """Check the step's code; a failure is retried once, the failure as feedback. The
    record goes to ``step["verification"]`` (saved after each attempt: resumable)."""
    record = step.get("verification") or {}
    if record.get("status") in CHECKED:
        return
    attempts: list[dict[str, Any]] = list(record.get("attempts") or [])
    while True:
        run.progress.check()
        attempt = _check_once(run, step, len(attempts) + 1)
        attempts.append(attempt.to_dict())
        # stored again with what its check found (the same text: the same point)
        run.remember(EXPERTS[step["expert"]], step["result"], step["ticket"], attempt.status)
        step["verification"] = {"status": "checking", "attempts": attempts}
        run.save()
        if attempt.status != FAILED or step.get("retried"):
            break
        run.event(
            RETRY,
            _(
                "Step {index} failed its check ({summary}); the {expert} tries once more "
                "with the failure."
            ).format(
                index=step["index"],
                summary=translate(attempt.summary),
                expert=expert_name(step["expert"]),
            ),
            expert=step["expert"],
            ticket=step["ticket"],
            step=step["index"],
        )
        prompt = (
            f"Task: {run.session.task}\nYour step ({step['index']}): {step['title']}\n"
            f"Your previous answer:\n{step['result']}\n\n"
            f"It failed its check:\n{attempt.feedback()}\n\n"
            "Fix the code. Write the whole corrected code in one ```python block."
        )
        retried = run.act(EXPERTS[step["expert"]], prompt, ticket=step["ticket"])
        step.setdefault("drafts", []).append(step["result"])
        step["result"] = retried
        step["retried"] = True
        run.save()
    step["verification"] = {
        "status": attempt.status,
        "summary": attempt.summary
        + (" (after one retry)" if len(attempts) > 1 and attempt.status == VERIFIED else ""),
        "tests_from": attempt.tests_from,
        "attempts": attempts,
    }
    run.save()


def _check_once(run: Run, step: dict[str, Any], number: int) -> Attempt:
    """One attempt: find the tests (asking the tester when nobody wrote any), run them."""
    answer = str(step.get("result") or "")
    data = run.session.data
    given = [
        (N_("the tests you attached"), str(data.get("tests") or "")),
        (N_("the tests in the task"), find_tests(run.session.task)),
    ]
    source, _why = python_source(answer)
    code, own_tests = split_tests(source)
    wanted = asks_for_tests(run.session.task) or not own_tests.strip()
    if (
        source
        and _parses(code)
        and not any(t.strip() for _, t in given)
        and wanted
        and "tester" not in step
    ):
        _ask_tester(run, step, code)
    tests, why_none = written_tests(str(step.get("tester") or ""))
    given.append((N_("tests the tester wrote"), tests))
    missing = ""
    if "tester" in step and why_none:
        twice = " twice" if step.get("tester_drafts") else ""
        missing = f"the tester was asked for them{twice}: {why_none}"
    if source:
        run.event(
            VERIFYING,
            _(
                "Checking step {index}'s code: parsing it, then running its tests in a "
                "sandbox (no network, {seconds} s, {mb} MB)"
            ).format(
                index=step["index"],
                seconds=i18n.number(run.c.limits.wall_seconds, None),
                mb=run.c.limits.memory_mb,
            ),
            step=step["index"],
        )
    attempt = check(answer, given, number, run.c.limits, run.c.network, missing=missing)
    if source or number > 1:
        run.event(
            VERIFICATION,
            _("Step {index}: {label} — {summary}").format(
                index=step["index"],
                label=_(LABELS[attempt.status]),
                summary=translate(attempt.summary),
            ),
            step=step["index"],
            verification=attempt.to_dict(),
        )
    return attempt


def _ask_tester(run: Run, step: dict[str, Any], code: str) -> None:
    """The tester writes the tests nobody gave; an answer with none that can run (no
    ``test_`` function, tests that do not parse) is asked for once more, with why."""
    prompt = f"Task: {run.session.task}\nThe code:\n```python\n{code.strip()}\n```"
    answer = run.act(EXPERTS["tester"], prompt, ticket=step["ticket"])
    _tests, why_none = written_tests(answer)
    if why_none:
        run.event(
            RETRY,
            _(
                "Step {index}: the tester wrote no tests that can run ({why}); it is asked "
                "once more."
            ).format(index=step["index"], why=translate(why_none)),
            expert="tester",
            ticket=step["ticket"],
            step=step["index"],
        )
        again = (
            f"{prompt}\n\nYour previous answer had no tests that can run: {why_none}. "
            "Write only pytest functions named test_… that call the code above and assert "
            "its results, in one ```python block. Do not write the code again."
        )
        step.setdefault("tester_drafts", []).append(answer)
        answer = run.act(EXPERTS["tester"], again, ticket=step["ticket"])
    step["tester"] = answer
    run.save()


def _parses(code: str) -> bool:
    """Code worth writing tests for (a syntax error is the finding already)."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def step_done(step: dict[str, Any]) -> bool:
    """Worked on and checked (a step of a session from before checks is checked on resume)."""
    record = step.get("verification")
    return (
        step.get("result") is not None
        and isinstance(record, dict)
        and record.get("status") in CHECKED
    )


def check_line(step: dict[str, Any]) -> str:
    record = step.get("verification") or {}
    if record.get("status") not in CHECKED:
        return ""
    return f"\n  Check: {LABELS[record['status']]} — {record.get('summary', '')}"
