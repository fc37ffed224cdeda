"""The multi-agent team in Spanish (issue 27): its checks' summaries ("3 of 3 tests passed",
"not verifiable: …"), its feed's kinds, phases and experts, its retries and tickets, its
result — while what it stores stays English (the reviewer's prompt, the review guard and
``session_status`` read it), and sessions stored in English before still read in Spanish."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import config, failures, i18n
from backends.cli import build_parser
from backends.models.chat import ScriptedChat
from backends.multiagent import summaries
from backends.multiagent.cli import format_event, verification_lines
from backends.multiagent.result import assemble_result
from backends.multiagent.sandbox import Limits
from backends.multiagent.verify import check, session_status, session_summary
from backends.services import Services
from backends.stores.sessions import Session
from tests.i18n_words import compile_catalogues, english_words

FAST = Limits(wall_seconds=4.0, cpu_seconds=3, memory_mb=256)
ADD = "```python\ndef add(a, b):\n    return a + b\n```"
TESTS = (
    "def test_adds():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
)
ATTACHED = "the tests you attached"


@pytest.fixture
def spanish(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    compile_catalogues()
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    i18n.install("es")
    try:
        yield tmp_path
    finally:
        i18n.install("en")


def _without_raw(text: str) -> str:
    """``text`` without what is no message of Custodia's: a Python error's own words (its
    details), code in backticks, the names the code defines ("(add)")."""
    text = re.sub(r"`[^`]*`", " ", failures.without_details(text))
    return text.replace("(add)", " ")


def _attempts() -> list[str]:
    """A summary of every kind the check writes, from real checks in the sandbox."""
    spin = "```python\ndef add(a, b):\n    while True:\n        pass\n```"
    mean = "```python\ndef mean(xs):\n    return 0\n```"
    stdlib = "from statistics import mean\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n"
    skipped = "import pytest\n\ndef test_later():\n    pytest.skip('later')\n    add(1, 2)\n"
    cases = [
        check("Only prose, no code at all.", []),
        check("```js\nfunction f() {}\n```", []),
        check("```python\ndef add(a, b:\n    return a\n```", []),
        check(ADD, []),
        check(ADD, [], missing="the tester was asked for them twice: its answer was empty"),
        check(ADD, [], missing="the tester was asked for them: its answer has no Python code"),
        check(ADD, [(ATTACHED, "def test_nothing():\n    assert True\n")]),
        check(ADD, [(ATTACHED, TESTS)], limits=FAST),
        check(ADD.replace("a + b", "a - b"), [(ATTACHED, TESTS)], limits=FAST),
        check(ADD, [(ATTACHED, "value = add(1, 2)\n")], limits=FAST),
        check(mean, [(ATTACHED, stdlib)], limits=FAST),
        check(ADD, [(ATTACHED, skipped)], limits=FAST),
        check(
            spin,
            [(ATTACHED, "def test_spin():\n    add(1, 2)\n")],
            limits=Limits(wall_seconds=1.5, cpu_seconds=30),
        ),
        check(
            "```python\nimport no_such_module_here\n\ndef add(a, b):\n    return a\n```",
            [(ATTACHED, TESTS)],
            limits=FAST,
        ),
    ]
    said = [c.summary for c in cases]
    said.append(said[7] + " (after one retry)")
    said.append("not verifiable: no Python interpreter to run the code in (install python3)")
    return said


def test_every_summary_the_check_writes_reads_in_spanish(spanish: Path) -> None:
    """Each summary stays English as stored, and reads in Spanish where it is shown."""
    said = _attempts()
    assert said[7] == "2 of 2 tests passed" and said[8] == "1 of 2 tests failed", said
    left = []
    for summary in said:
        shown = summaries.translate(summary)
        if shown == summary or english_words(_without_raw(shown)):
            left.append(f"{summary!r} -> {shown!r}")
    assert not left, "\n".join(left)
    assert summaries.translate(said[7]) == "pruebas superadas: 2 de 2"
    assert summaries.translate("1 of 1 tests passed (after one retry)").endswith(
        "(tras un reintento)"
    )


def test_english_summaries_are_shown_as_they_are_stored() -> None:
    for summary in ("2 of 2 tests passed", "not verifiable: the tests define no test", "x"):
        assert summaries.translate(summary) == summary


def _session(summary: str, status: str = "failed") -> Session:
    """A finished session as a run before there was a Spanish Custodia stored it."""
    attempt = {
        "attempt": 1,
        "status": status,
        "summary": summary,
        "tests_from": ATTACHED,
        "tests": [
            {"name": "test_adds", "outcome": "failed", "seconds": 0.01, "output": "boom"},
            {"name": "test_zero", "outcome": "passed", "seconds": 0.01, "output": ""},
        ],
        "code_lines": 2,
        "network": "namespace",
        "limits": {"wall_seconds": 10.0, "memory_mb": 256},
        "seconds": 0.2,
        "output": "",
    }
    steps = [
        {
            "index": 1,
            "title": "escribe la función",
            "expert": "coder",
            "result": ADD,
            "verification": {
                "status": status,
                "summary": summary,
                "tests_from": ATTACHED,
                "attempts": [attempt],
            },
        }
    ]
    data = {
        "steps": steps,
        "review": "Revisión.",
        "verification": {
            "status": status,
            "label": "failed verification",
            "summary": "step 1: " + summary,
        },
    }
    return Session("s1", "Escribe una función que sume en Python", phase="done", data=data)


def test_a_session_stored_in_english_reads_in_spanish(spanish: Path) -> None:
    session = _session("1 of 2 tests failed")
    lines = verification_lines(session)
    result = assemble_result(session)
    shown = "\n".join(lines) + "\n" + result.replace(ADD, " ")
    left = [line for line in shown.splitlines() if english_words(_without_raw(line))]
    assert not left, "\n".join(left)
    assert lines[0] == "verificación: no superó la verificación — paso 1: pruebas fallidas: 1 de 2"
    assert "  paso 1 (programador): " in lines[1] and "pruebas que adjuntaste" in lines[2]
    assert "sin red (espacio de nombres), 10,0 s, 256 MB" in lines[2], lines[2]
    # what is stored is as it was: the review guard and the reviewer's prompt read it
    assert session.data["steps"][0]["verification"]["summary"] == "1 of 2 tests failed"


def test_the_verdict_is_said_again_in_the_language_shown(spanish: Path) -> None:
    """A verdict stored in English reads in Spanish, and the reverse."""
    session = _session("not verifiable: the tests define no test", "unverified")
    session.data["verification"]["summary"] = "stored in another language"
    assert session_summary(session.data).startswith("no se pudo comprobar el código")
    i18n.install("en")
    assert session_summary(session.data) == (
        "the code could not be checked (no tests ran): the model's draft — "
        "step 1: the tests define no test"
    )
    assert session_status(session.data["steps"])[1] == session_summary(session.data)


def test_english_lines_are_as_before() -> None:
    session = _session("1 of 2 tests failed")
    lines = verification_lines(session)
    assert lines[0] == "verification: failed verification — step 1: 1 of 2 tests failed"
    assert lines[1] == "  step 1 (coder): failed verification — 1 of 2 tests failed"
    assert lines[2] == (
        "    tests: the tests you attached; sandbox: no network (namespace), 10.0 s, 256 MB"
    )
    event = {"seq": 3, "ts": 0.0, "phase": "planning", "kind": "session_started", "text": "t"}
    assert format_event(event).endswith("#3   [planning] session_started: t")


def test_the_feed_says_kinds_phases_and_experts_in_spanish(spanish: Path) -> None:
    event = {"seq": 2, "ts": 0.0, "phase": "done", "kind": "phase", "expert": "", "text": "done"}
    assert format_event(event).endswith("#2   [terminada] fase: terminada")
    event = {"seq": 9, "ts": 0.0, "phase": "working", "kind": "retry", "expert": "tester"}
    assert format_event(event).endswith("#9   [trabajando] probador reintento: ")


def _ask(replies: list[str], tests: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    chat = ScriptedChat(replies=["1. coder: escribe la función", *replies, "Revisión."])
    services = Services(config.load(), chat=chat)
    try:
        task = "Escribe una función que sume en Python"
        argv = ["ask", "multiagent", "--tests", str(tests), task]
        args = build_parser().parse_args(argv)
        args.handler(args, services)
    finally:
        services.close()
    return capsys.readouterr().out.splitlines()


def test_a_run_with_a_retry_speaks_spanish(
    spanish: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The feed, the retry, the verdict, the steps and the tests of ``custodia ask
    multiagent``: no English word but the code's and the tests' own."""
    tests = spanish / "test_add.py"
    tests.write_text(TESTS, encoding="utf-8")
    wrong = ADD.replace("a + b", "a - b")
    out = _ask([wrong, ADD], tests, capsys) + _ask([wrong, wrong], tests, capsys)
    said = [
        line
        for line in out
        if not line.startswith("        ")  # a failed test's own output
        and "resultado: ```python" not in line  # the model's code
    ]
    left = [line for line in said if english_words(_without_raw(line))]
    assert not left, "\n".join(left)
    assert any("[trabajando] programador reintento: El paso 1 no superó" in x for x in out), out
    assert any(x.endswith(" verificado") for x in out) and "    ✓ test_adds  superada" in out


def test_sessions_speak_spanish_and_their_json_stays_english(
    spanish: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from backends.cli import main

    assert main(["ask", "multiagent", "Escribe un poema"]) == 0
    capsys.readouterr()
    assert main(["sessions"]) == 0
    listed = capsys.readouterr().out
    assert "borrador sin verificar" in listed and "unverified" not in listed, listed
    assert main(["sessions", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    assert rows[0]["phase"] == "done" and rows[0]["status"] == "unverified draft"
    assert main(["sessions", "--health"]) == 0
    health = capsys.readouterr().out
    assert "sesiones L1 (memoria): correcto" in health, health
    assert not [line for line in health.splitlines() if english_words(line)], health
