"""Check a step's code the way a reviewer would (AL3): find it, parse it, run its tests.

The code is the Python in the step's fenced blocks (an unfenced answer counts only when the
whole of it parses as a multi-line module that defines something). The tests, in order of
trust: those the user attached to the session, those written in the task, those the team
wrote (the coder's own ``test_*`` functions and ``assert`` lines, else the tester's). They run
in :mod:`backends.multiagent.sandbox`.

Every step ends with one of three statuses, and so does the session:

* ``verified`` — the code parsed, loaded, and every test that ran passed (at least one);
* ``failed`` — it did not parse, did not load, a test failed, or the run was killed;
* ``unverified`` — nothing could check it (no code, or no tests): the model's draft.

A session is verified only when each step with code is verified; failed when any is.
"""

from __future__ import annotations

import ast
import re
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from backends.i18n import N_, _
from backends.multiagent import summaries
from backends.multiagent.sandbox import (
    Limits,
    NetworkChoice,
    NoInterpreterError,
    SandboxRun,
    run_tests,
)

Status = Literal["verified", "failed", "unverified"]
VERIFIED: Status = "verified"
FAILED: Status = "failed"
UNVERIFIED: Status = "unverified"
#: what the user reads for each status (the session list, the phase line, the CLI)
LABELS: dict[str, str] = {
    VERIFIED: N_("verified"),
    FAILED: N_("failed verification"),
    UNVERIFIED: N_("unverified draft"),
}
#: a step's check is over when its record holds one of these
CHECKED: tuple[Status, ...] = (VERIFIED, FAILED, UNVERIFIED)

_FENCED = re.compile(r"```[ \t]*([\w+#.-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_PYTHON_TAGS = {"", "python", "py", "python3", "pycon", "pytest"}
#: what the feedback to a retry keeps of a failure
FEEDBACK_CHARS = 1200


@dataclass
class Block:
    language: str
    source: str


def code_blocks(text: str) -> list[Block]:
    """The fenced blocks of ``text`` (an unterminated last one included: cut by max_tokens)."""
    return [Block(m.group(1).lower(), m.group(2)) for m in _FENCED.finditer(text)]


def _parses(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def python_source(text: str) -> tuple[str, str]:
    """The Python in a model's answer, and why there is none (``""`` when there is).

    Fenced blocks tagged Python (or untagged) are joined; a block tagged another language
    means code that cannot be checked here. An unfenced answer counts when all of it parses
    and it defines a function or a class on more than one line.
    """
    blocks = code_blocks(text)
    python = [b.source for b in blocks if b.language in _PYTHON_TAGS]
    if python:
        return "\n\n".join(s.strip("\n") for s in python) + "\n", ""
    if blocks:
        tags = sorted({b.language for b in blocks})
        return "", f"code in {', '.join(tags)}, not Python: the sandbox runs Python only"
    stripped = text.strip()
    tree = _parses(stripped) if "\n" in stripped else None
    if tree is not None and any(
        isinstance(n, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef) for n in tree.body
    ):
        return stripped + "\n", ""
    return "", "no code in the answer"


def _is_test_node(node: ast.stmt) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return node.name.startswith("test")
    if isinstance(node, ast.ClassDef):
        bases = {ast.unparse(b) for b in node.bases}
        return node.name.startswith("Test") or any(b.endswith("TestCase") for b in bases)
    if isinstance(node, ast.Assert):
        return True
    if isinstance(node, ast.If):  # if __name__ == "__main__": tests and prints
        return "__main__" in ast.unparse(node.test)
    return False


def _imports_a_test_library(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        modules = [node.module or ""]
    else:
        return False
    return any(m.split(".")[0] in ("pytest", "unittest") for m in modules)


def split_tests(source: str) -> tuple[str, str]:
    """``source`` as (code, tests): tests are the ``test*`` functions, ``Test*``/``TestCase``
    classes and top-level asserts; a ``__main__`` block goes with neither (it would run).

    A source that does not parse is all code (the syntax error is the finding).
    """
    tree = _parses(source)
    if tree is None:
        return source, ""
    lines = source.splitlines(keepends=True)
    code: list[str] = []
    tests: list[str] = []
    for node in tree.body:
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        text = "".join(lines[start - 1 : node.end_lineno])
        if isinstance(node, ast.If) and _is_test_node(node):
            continue
        if _is_test_node(node) or _imports_a_test_library(node):
            tests.append(text)
        else:
            code.append(text)
    if not tests:
        return source, ""
    return "".join(code), "".join(tests)


def find_tests(text: str) -> str:
    """The tests written in ``text`` (a task, a tester's answer): those of its Python blocks,
    or of all of it when it is Python."""
    blocks = [b.source for b in code_blocks(text) if b.language in _PYTHON_TAGS]
    sources = blocks or ([text] if _parses(text.strip()) is not None else [])
    found = [split_tests(s)[1] for s in sources]
    return "\n\n".join(t.strip("\n") for t in found if t.strip()) + ("\n" if any(found) else "")


#: a task that asks for tests (EN/ES): "with tests", "and unit tests", "con pruebas" …
_ASKS_FOR_TESTS = re.compile(
    r"\b(?:with|and|plus|including|include|add|write|also)\s+(?:some\s+|a\s+few\s+|its\s+)?"
    r"(?:unit\s+|pytest\s+)?tests?\b|\bunit[- ]tests?\b|\btest\s+cases?\b"
    r"|\b(?:con|y|incluye|añade|escribe|más)\s+(?:unos\s+|unas\s+|algunos\s+|algunas\s+|sus\s+)?"
    r"(?:tests?|pruebas?|casos\s+de\s+prueba)\b|\bpruebas\s+unitarias\b",
    re.IGNORECASE,
)


def asks_for_tests(task: str) -> bool:
    """Whether ``task`` asks for tests ("… with tests", "… con pruebas"): the team writes
    them (the tester), and the check runs them."""
    return bool(_ASKS_FOR_TESTS.search(task))


def written_tests(answer: str) -> tuple[str, str]:
    """The tests a tester's ``answer`` writes, and why there are none ("" when there are):
    no Python, Python that does not parse, or code without a ``test_`` function or assert."""
    if not answer.strip():
        return "", "its answer was empty"
    blocks = [b.source for b in code_blocks(answer) if b.language in _PYTHON_TAGS]
    sources = blocks or ([answer] if _parses(answer.strip()) is not None else [])
    if not sources:
        return "", "its answer has no Python code"
    for source in sources:
        try:
            ast.parse(source)
        except SyntaxError as err:
            if not split_tests(source)[1]:
                return "", f"its tests do not parse: {err.msg} (line {err.lineno})"
    found = find_tests(answer)
    if not found.strip():
        return "", "its answer has no test_ function or assert (it wrote code, not tests)"
    return found, ""


@dataclass
class Attempt:
    """One check of one answer: what ran and how it ended."""

    attempt: int
    status: Status
    #: why, in one line ("3 of 3 tests passed", "SyntaxError line 4: …", "no tests")
    summary: str
    tests_from: str = ""
    tests: list[dict[str, Any]] = field(default_factory=list)
    code_lines: int = 0
    #: how the network was cut ("namespace", "audit hook"), the limits; "" when nothing ran
    network: str = ""
    limits: dict[str, Any] = field(default_factory=dict)
    killed: str = ""
    seconds: float = 0.0
    #: the end of the run's stderr / the load error
    output: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempt": self.attempt,
            "status": self.status,
            "summary": self.summary,
            "tests_from": self.tests_from,
            "tests": self.tests,
            "code_lines": self.code_lines,
            "network": self.network,
            "limits": self.limits,
            "killed": self.killed,
            "seconds": round(self.seconds, 3),
            "output": self.output,
        }

    def feedback(self) -> str:
        """The failure as the coder is told it on its retry (trimmed)."""
        parts = [self.summary]
        for test in self.tests:
            if test["outcome"] != "passed" and test.get("output"):
                parts.append(f"{test['name']}:\n{test['output']}")
        if self.output and len(parts) == 1:
            parts.append(self.output)
        text = "\n".join(parts)
        return text if len(text) <= FEEDBACK_CHARS else text[:FEEDBACK_CHARS] + "\n…"


def check(
    answer: str,
    tests: list[tuple[str, str]],
    attempt: int = 1,
    limits: Limits | None = None,
    network: NetworkChoice = "auto",
    missing: str = "",
) -> Attempt:
    """Check the code of ``answer`` against ``tests`` — ``(where from, source)`` pairs, the
    first non-empty one used — plus the tests ``answer`` writes itself when none is given.
    ``missing``: why the tests someone was asked for are not there ("the tester was asked:
    its tests do not parse"), said when nothing could run.
    """
    started = time.perf_counter()
    source, why = python_source(answer)
    if not source:
        return Attempt(attempt, UNVERIFIED, f"not verifiable: {why}")
    code, own_tests = split_tests(source)
    lines = len(code.strip().splitlines())
    try:
        ast.parse(code)
    except SyntaxError as err:
        summary = f"the code does not parse: {err.msg} (line {err.lineno})"
        return Attempt(
            attempt,
            FAILED,
            summary,
            code_lines=lines,
            output=f"SyntaxError: {err.msg}\n{(err.text or '').rstrip()}",
            seconds=time.perf_counter() - started,
        )
    chosen = [(where, t) for where, t in tests if t.strip()]
    if not chosen and own_tests.strip():
        chosen = [(N_("the coder's own tests"), own_tests)]
    if not chosen:
        summary = "not verifiable: the code parses, but no tests were given or written"
        if missing:
            summary = f"not verifiable: the code parses, but no tests were given and {missing}"
        return Attempt(
            attempt,
            UNVERIFIED,
            summary,
            code_lines=lines,
            seconds=time.perf_counter() - started,
        )
    where, test_source = chosen[0]
    if not _exercises(test_source, code):
        return Attempt(
            attempt,
            UNVERIFIED,
            f"not verifiable: {where} do not call anything the code defines "
            f"({', '.join(sorted(_defined(code))) or 'nothing'})",
            tests_from=where,
            code_lines=lines,
            seconds=time.perf_counter() - started,
        )
    try:
        run = run_tests(code, test_source, limits, network=network)
    except NoInterpreterError as err:
        return Attempt(attempt, UNVERIFIED, f"not verifiable: {err}", tests_from=where)
    return _attempt(attempt, where, lines, run)


def _defined(code: str) -> set[str]:
    tree = _parses(code)
    names: set[str] = set()
    for node in tree.body if tree is not None else []:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _exercises(tests: str, code: str) -> bool:
    """The tests name something the code defines (``assert True`` checks nothing)."""
    tree = _parses(tests)
    if tree is None:
        return True  # the run reports the syntax error
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    return bool(used & _defined(code))


def _attempt(number: int, where: str, lines: int, run: SandboxRun) -> Attempt:
    status, summary, output = _judge(run)
    return Attempt(
        number,
        status,
        summary,
        tests_from=where,
        tests=[
            {
                "name": t.name,
                "outcome": t.outcome,
                "seconds": round(t.seconds, 4),
                "output": t.output,
            }
            for t in run.tests
        ],
        code_lines=lines,
        network=run.network,
        limits=run.limits,
        killed=run.killed,
        seconds=run.seconds,
        output=output,
    )


def _judge(run: SandboxRun) -> tuple[Status, str, str]:
    """A run's status, its summary and the output worth showing."""
    passed, total = len(run.passed), len(run.tests)
    if run.ok:
        return VERIFIED, f"{passed} of {total} tests passed", ""
    if run.refused:
        return UNVERIFIED, f"not verifiable: {run.refused}", ""
    if not run.imported:
        if run.import_error:
            last = run.import_error.strip().splitlines()[-1]
            return FAILED, f"the code fails when loaded: {last}", run.import_error
        if run.killed:
            return FAILED, f"the code was killed while loading: {run.killed}", run.stderr
        return FAILED, "the code ended the process while loading", run.stderr
    failed = [t for t in run.tests if t.outcome == "failed"]
    if failed:
        killed = f"; killed at the {run.killed}" if run.killed else ""
        return FAILED, f"{len(failed)} of {total} tests failed{killed}", run.stderr
    if run.killed or not run.complete:
        why = f"killed at the {run.killed}" if run.killed else "the process ended early"
        return FAILED, f"the test run stopped: {why}", run.stderr
    if not total:
        return UNVERIFIED, "not verifiable: the tests define no test", ""
    # only errors and skips: the tests could not run, which says nothing about the code
    return (
        UNVERIFIED,
        f"not verifiable: {total - passed} of {total} tests could not run in the sandbox",
        "",
    )


def session_status(steps: list[dict[str, Any]]) -> tuple[Status, str]:
    """The session's status from its steps' checks, and one line saying why."""
    checked = [s for s in steps if s.get("verification")]
    statuses = [str(s["verification"].get("status")) for s in checked]
    with_code = [
        s for s, st in zip(checked, statuses, strict=True) if st != UNVERIFIED or _had_code(s)
    ]
    if FAILED in statuses:
        bad = [
            _("step {index}: {summary}").format(
                index=s.get("index"),
                summary=summaries.translate(str(s["verification"].get("summary", ""))),
            )
            for s in checked
            if s["verification"]["status"] == FAILED
        ]
        return FAILED, "; ".join(bad)
    if with_code and all(s["verification"]["status"] == VERIFIED for s in with_code):
        count = sum(
            len(s["verification"]["attempts"][-1].get("tests") or [])
            for s in with_code
            if s["verification"].get("attempts")
        )
        retried = any(len(s["verification"].get("attempts") or []) > 1 for s in with_code)
        after = " " + _("after one retry") if retried else ""
        sources = sorted({_(str(s["verification"].get("tests_from") or "")) for s in with_code})
        passed = _("the code passed {sources} ({count} of {count})").format(
            sources=_(" and ").join(sources), count=count
        )
        return VERIFIED, passed + after
    if with_code:
        why = "; ".join(
            _("step {index}: {summary}").format(
                index=s.get("index"),
                summary=summaries.translate(
                    str(s["verification"].get("summary", "")).removeprefix("not verifiable: ")
                ),
            )
            for s in with_code
            if s["verification"]["status"] == UNVERIFIED
        )
        draft = _("the code could not be checked (no tests ran): the model's draft")
        return UNVERIFIED, f"{draft} — {why}" if why else draft
    return UNVERIFIED, _("nothing in it could be checked (no code): the model's draft")


def session_summary(data: dict[str, Any]) -> str:
    """Why a finished session is what it is, in the installed language: said again from its
    steps' checks (the stored line is in the language the run spoke, English before there
    was a Spanish Custodia); the stored line when its steps say something else or nothing."""
    record = data.get("verification")
    if not isinstance(record, dict):
        return ""
    stored = str(record.get("summary") or "")
    steps = [s for s in data.get("steps") or [] if isinstance(s, dict)]
    if not any(isinstance(s.get("verification"), dict) for s in steps):
        return summaries.translate(stored)
    status, why = session_status(steps)
    return why if status == record.get("status") else summaries.translate(stored)


def _had_code(step: dict[str, Any]) -> bool:
    attempts = step["verification"].get("attempts") or []
    return any(int(a.get("code_lines") or 0) > 0 for a in attempts)


def status_of(data: dict[str, Any]) -> Status:
    """A finished session's status (``unverified`` for sessions from before checks)."""
    record = data.get("verification")
    status = record.get("status") if isinstance(record, dict) else None
    return status if status in (VERIFIED, FAILED) else UNVERIFIED


def label(phase: str, data: dict[str, Any]) -> str:
    """What the user reads for a session's state: its phase, or for a finished one its
    status — never "done" (a run that ended is verified, failed verification or a draft)."""
    if phase != "done":
        return phase
    return LABELS[status_of(data)]
