"""Issue 24: a task that asks for tests gets them written, or is told precisely why not.

"Write a Python function is_palindrome(s) with tests" ended with "no tests were given or
written", though the tester had been asked and had answered with code, not tests.
"""

from __future__ import annotations

import pytest

from backends.multiagent.events import RETRY
from backends.multiagent.team import EXPERTS
from backends.multiagent.verify import UNVERIFIED, VERIFIED, asks_for_tests, check, written_tests
from tests.backends.multiagent.conftest import MakeService
from tests.backends.multiagent.test_examples import _service
from tests.backends.multiagent.test_verify import FAST, GOOD, ONE_CODER_STEP

PALINDROME = "```python\ndef is_palindrome(s):\n    return s == s[::-1]\n```"
CODE_NOT_TESTS = "```python\ndef is_palindrome(s):\n    return s[::-1] == s\n```"
TESTS = "```python\ndef test_palindrome():\n    assert is_palindrome('aba')\n```"
BROKEN_TESTS = "```python\ndef test_palindrome(:\n    assert is_palindrome('aba')\n```"
TASK = "Write a Python function is_palindrome(s) with tests"


@pytest.mark.parametrize(
    "task",
    [
        TASK,
        "Write add(a, b) in Python and unit tests",
        "Write a parser, include some tests",
        "Escribe una función es_palindromo(s) con tests",
        "Escribe una función suma(a, b) con pruebas",
        "Función suma con pruebas unitarias",
    ],
)
def test_a_task_that_asks_for_tests_is_read_as_such(task: str) -> None:
    assert asks_for_tests(task)


@pytest.mark.parametrize(
    "task", ["Write add(a, b) in Python", "Plan a blood test schedule", "Escribe una función"]
)
def test_a_task_that_does_not_ask_for_tests(task: str) -> None:
    assert not asks_for_tests(task)


def test_why_a_testers_answer_holds_no_tests() -> None:
    assert written_tests(TESTS)[1] == ""
    assert written_tests(CODE_NOT_TESTS) == (
        "",
        "its answer has no test_ function or assert (it wrote code, not tests)",
    )
    assert written_tests(BROKEN_TESTS)[1].startswith("its tests do not parse: ")
    assert written_tests("Tests are important.") == ("", "its answer has no Python code")
    mute = check(PALINDROME, [("tests the tester wrote", "def test_x():\n    assert 1\n")])
    assert mute.status == UNVERIFIED
    assert mute.summary.endswith("do not call anything the code defines (is_palindrome)")


def test_the_tester_that_wrote_code_is_asked_again_and_its_tests_run(
    make_service: MakeService,
) -> None:
    service, chat = _service(
        make_service, [ONE_CODER_STEP, PALINDROME, CODE_NOT_TESTS, TESTS, "Review."]
    )
    session = service.ask(TASK)
    tester_calls = [p for p in chat.calls if p.system == EXPERTS["tester"].system]
    assert len(tester_calls) == 2
    assert "it wrote code, not tests" in tester_calls[1].user
    assert any(e["kind"] == RETRY and e["expert"] == "tester" for e in session.events)
    step = session.data["steps"][0]
    assert step["verification"]["tests_from"] == "tests the tester wrote"
    assert session.data["verification"]["status"] == VERIFIED


def test_tests_that_never_come_are_said_precisely(make_service: MakeService) -> None:
    service, _chat = _service(
        make_service, [ONE_CODER_STEP, PALINDROME, CODE_NOT_TESTS, BROKEN_TESTS, "Review."]
    )
    session = service.ask(TASK)
    step = session.data["steps"][0]
    assert step["verification"]["status"] == UNVERIFIED
    assert step["verification"]["summary"] == (
        "not verifiable: the code parses, but no tests were given and the tester was asked "
        "for them twice: its tests do not parse: invalid syntax (line 1)"
    )
    assert "the tester was asked" in session.data["result"]


def test_a_task_with_tests_asked_gets_the_testers_even_beside_the_coders_own(
    make_service: MakeService,
) -> None:
    own = GOOD.replace("```\nDone.", "\ndef test_own():\n    assert add(1, 1) == 2\n```")
    tester = "```python\ndef test_add():\n    assert add(2, 3) == 5\n```"
    service, chat = _service(make_service, [ONE_CODER_STEP, own, tester, "Review."])
    session = service.ask("Write add(a, b) in Python, with tests")
    assert any(p.system == EXPERTS["tester"].system for p in chat.calls)
    step = session.data["steps"][0]
    assert step["verification"]["tests_from"] == "tests the tester wrote"
    assert session.data["verification"]["status"] == VERIFIED
    assert FAST.wall_seconds > 0


def test_the_sessions_summary_says_why_nothing_ran(make_service: MakeService) -> None:
    service, _chat = _service(
        make_service, [ONE_CODER_STEP, PALINDROME, CODE_NOT_TESTS, CODE_NOT_TESTS, "Review."]
    )
    session = service.ask(TASK)
    assert session.data["verification"]["summary"] == (
        "the code could not be checked (no tests ran): the model's draft — step 1: the code "
        "parses, but no tests were given and the tester was asked for them twice: its answer "
        "has no test_ function or assert (it wrote code, not tests)"
    )
    assert "it wrote code, not tests" in session.events[-1]["text"]
