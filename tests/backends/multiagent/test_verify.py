"""AL3: a coding step's result says what was verified — the sandbox, the check, the retry."""

from __future__ import annotations

import ast
import contextlib
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.models.chat import ScriptedChat
from backends.multiagent.events import RETRY, VERIFICATION, VERIFYING
from backends.multiagent.sandbox import Limits, namespace_available, run_tests
from backends.multiagent.team import EXPERTS
from backends.multiagent.verify import (
    FAILED,
    UNVERIFIED,
    VERIFIED,
    check,
    find_tests,
    label,
    python_source,
    split_tests,
)
from tests.backends.multiagent.conftest import MakeService

FAST = Limits(wall_seconds=4.0, cpu_seconds=3, memory_mb=256)

GOOD = "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```\nDone."
BAD = "```python\ndef add(a, b):\n    return a - b\n```"
TESTS = (
    "def test_adds():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
)
ONE_CODER_STEP = "1. coder: write the add function in Python"


@pytest.fixture
def listener() -> Iterator[int]:
    """A loopback server the sandboxed code will try to reach."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(5)
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield port
    server.close()
    thread.join(6)
    assert not accepted, "the sandboxed code reached the network"


# -- the sandbox ---------------------------------------------------------------------------------
def test_passing_code_passes_and_each_test_is_reported() -> None:
    run = run_tests("def add(a, b):\n    return a + b\n", TESTS, FAST)
    assert run.ok
    assert [(t.name, t.outcome) for t in run.tests] == [
        ("test_adds", "passed"),
        ("test_zero", "passed"),
    ]


@pytest.mark.parametrize("network", ["auto", "audit hook"])
def test_code_that_opens_a_socket_is_blocked(network: Any, listener: int) -> None:
    code = (
        "import socket\n"
        "def fetch(port):\n"
        "    s = socket.socket()\n"
        "    s.settimeout(2)\n"
        "    s.connect(('127.0.0.1', port))\n"
        "    return 'reached'\n"
    )
    run = run_tests(
        code, f"def test_fetch():\n    assert fetch({listener}) == 'reached'\n", FAST, network
    )
    assert not run.ok
    (test,) = run.tests
    assert test.outcome == "failed"
    assert "refused in the sandbox: socket.connect" in test.output


@pytest.mark.skipif(not namespace_available(), reason="no unprivileged user namespaces here")
def test_in_a_network_namespace_there_is_no_interface_but_loopback() -> None:
    code = (
        "import socket\ndef interfaces():\n    return [name for _, name in socket.if_nameindex()]\n"
    )
    run = run_tests(code, "def test_only_loopback():\n    assert interfaces() == ['lo']\n", FAST)
    assert run.network == "namespace"
    assert run.ok, run.tests


def test_an_endless_loop_is_killed_at_the_time_limit() -> None:
    limits = Limits(wall_seconds=1.5, cpu_seconds=30)
    run = run_tests(
        "def spin():\n    while True:\n        pass\n", "def test_spin():\n    spin()\n", limits
    )
    assert not run.ok
    assert run.killed.startswith("time limit")
    assert run.tests[0].outcome == "failed" and "time limit" in run.tests[0].output


def test_an_endless_loop_is_stopped_by_the_cpu_limit_too() -> None:
    limits = Limits(wall_seconds=20, cpu_seconds=1)
    run = run_tests(
        "def spin():\n    while True:\n        pass\n", "def test_spin():\n    spin()\n", limits
    )
    assert not run.ok and run.killed.startswith("CPU limit")


def test_a_memory_hog_is_stopped_at_the_memory_limit() -> None:
    code = "def hog():\n    return bytearray(2 * 1024 ** 3)\n"
    run = run_tests(code, "def test_hog():\n    assert len(hog()) > 0\n", FAST)
    assert not run.ok
    assert run.tests[0].outcome == "failed"
    assert "memory limit (256 MB)" in run.tests[0].output


def test_code_that_ends_the_process_never_passes() -> None:
    for code in ("import os\nos._exit(0)\n", "import sys\nsys.exit(0)\n"):
        run = run_tests(code, "def test_nothing():\n    pass\n", FAST)
        assert not run.ok and not run.imported and run.tests == []


def test_writes_outside_the_scratch_folder_and_new_processes_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "written"
    code = (
        "import subprocess\n"
        f"def write():\n    open({str(target)!r}, 'w').write('x')\n"
        "def scratch():\n    open('here.txt', 'w').write('x')\n    return open('here.txt').read()\n"
        "def spawn():\n    subprocess.run(['true'])\n"
    )
    tests = (
        "def test_write():\n    write()\n"
        "def test_scratch():\n    assert scratch() == 'x'\n"
        "def test_spawn():\n    spawn()\n"
    )
    run = run_tests(code, tests, FAST)
    outcomes = {t.name: (t.outcome, t.output) for t in run.tests}
    assert outcomes["test_scratch"][0] == "passed"
    assert "refused in the sandbox: writing" in outcomes["test_write"][1]
    assert "refused in the sandbox: subprocess.Popen" in outcomes["test_spawn"][1]
    assert not target.exists()


def test_pytest_and_unittest_styles_run_without_pytest() -> None:
    code = "def half(x):\n    if x % 2:\n        raise ValueError('odd')\n    return x // 2\n"
    tests = (
        "import pytest\nimport unittest\nfrom solution import half\n"
        "@pytest.mark.parametrize('x,y', [(2, 1), (4, 2)])\n"
        "def test_half(x, y):\n    assert half(x) == y\n"
        "def test_odd():\n    with pytest.raises(ValueError, match='odd'):\n        half(3)\n"
        "class HalfTest(unittest.TestCase):\n"
        "    def test_zero(self):\n        self.assertEqual(half(0), 0)\n"
    )
    run = run_tests(code, tests, FAST)
    assert run.ok, run.tests
    assert [t.name for t in run.tests] == [
        "test_half[0]",
        "test_half[1]",
        "test_odd",
        "HalfTest.test_zero",
    ]


# -- finding the code and the tests ----------------------------------------------------------------
def test_the_code_and_its_tests_are_found_in_an_answer() -> None:
    assert python_source(GOOD) == ("def add(a, b):\n    return a + b\n", "")
    assert python_source("Just prose, no code.")[1] == "no code in the answer"
    assert "not Python" in python_source("```bash\nls -l\n```")[1]
    assert python_source("def parse(text): ...")[0] == ""  # one line of prose-like code
    code, tests = split_tests(
        "import math\ndef f():\n    return 1\n\ndef test_f():\n    assert f() == 1\n"
    )
    assert code.startswith("import math") and "test_f" not in code
    assert tests.startswith("def test_f")
    task = "Write add(a, b).\n```python\nassert add(1, 2) == 3\n```"
    assert find_tests(task).strip() == "assert add(1, 2) == 3"
    assert find_tests("Write a function that adds two numbers.") == ""


def test_check_says_verified_failed_or_unverified() -> None:
    assert check(GOOD, [("given", TESTS)], limits=FAST).status == VERIFIED
    failed = check(BAD, [("given", TESTS)], limits=FAST)
    assert failed.status == FAILED and failed.summary == "1 of 2 tests failed"
    assert "AssertionError" in failed.feedback()
    broken = check("```python\ndef add(a, b)\n    return a\n```", [("given", TESTS)], limits=FAST)
    assert broken.status == FAILED and broken.summary.startswith("the code does not parse")
    assert check("No code here.", [("given", TESTS)], limits=FAST).status == UNVERIFIED
    untested = check(GOOD, [], limits=FAST)
    assert untested.status == UNVERIFIED and "no tests" in untested.summary
    own = GOOD.replace("```\nDone.", "\ndef test_add():\n    assert add(1, 1) == 2\n```")
    mine = check(own, [], limits=FAST)
    assert mine.status == VERIFIED and mine.tests_from == "the coder's own tests"
    trivial = GOOD.replace("```\nDone.", "\ndef test_ok():\n    assert True\n```")
    empty = check(trivial, [], limits=FAST)
    assert empty.status == UNVERIFIED and "do not call anything the code defines" in empty.summary
    assert label("done", {}) == "unverified draft"  # a session from before checks
    assert label("done", {"verification": {"status": "failed"}}) == "failed verification"
    assert label("working", {}) == "working"


# -- the coordinator -------------------------------------------------------------------------------
def _service(make_service: MakeService, replies: list[str]) -> tuple[Any, ScriptedChat]:
    chat = ScriptedChat(replies=replies)
    service = make_service(chat=chat)
    service.coordinator.limits = FAST
    return service, chat


def test_code_that_passes_its_tests_is_verified(make_service: MakeService) -> None:
    service, chat = _service(make_service, [ONE_CODER_STEP, GOOD, "Correct. add returns a + b."])
    seen: list[dict[str, Any]] = []
    session = service.ask("Write add(a, b) in Python", on_event=seen.append, tests=TESTS)
    assert session.phase == "done"
    assert session.data["verification"]["status"] == VERIFIED
    assert label(session.phase, session.data) == "verified"
    step = session.data["steps"][0]
    assert step["verification"]["tests_from"] == "the tests you attached"
    [attempt] = step["verification"]["attempts"]
    assert [(t["name"], t["outcome"]) for t in attempt["tests"]] == [
        ("test_adds", "passed"),
        ("test_zero", "passed"),
    ]
    # the user's tests are never shown to the model
    assert all("test_adds" not in p.user for p in chat.calls)
    kinds = [e["kind"] for e in seen]
    assert kinds.index(VERIFYING) < kinds.index(VERIFICATION) < kinds.index("session_finished")
    assert seen[-1]["verification"] == VERIFIED
    assert seen[-1]["text"] == (
        "Finished — verified: the code passed the tests you attached (2 of 2)."
    )
    result = session.data["result"]
    assert "## Verified" in result and "✓ `test_adds` — passed" in result
    # the reviewer is told what the check found
    assert "Check: verified — 2 of 2 tests passed" in chat.calls[-1].user


def test_a_failing_step_is_retried_once_with_the_failure_and_then_verified(
    make_service: MakeService,
) -> None:
    service, chat = _service(make_service, [ONE_CODER_STEP, BAD, GOOD, "Fixed after a retry."])
    session = service.ask("Write add(a, b) in Python", tests=TESTS)
    step = session.data["steps"][0]
    assert [a["status"] for a in step["verification"]["attempts"]] == [FAILED, VERIFIED]
    assert session.data["verification"]["status"] == VERIFIED
    assert step["drafts"] == [BAD] and step["result"] == GOOD
    retry_prompt = chat.calls[2]
    assert retry_prompt.system == EXPERTS["coder"].system
    assert "It failed its check" in retry_prompt.user and "AssertionError" in retry_prompt.user
    assert any(e["kind"] == RETRY for e in session.events)


def test_code_that_keeps_failing_is_never_done(make_service: MakeService) -> None:
    service, chat = _service(make_service, [ONE_CODER_STEP, BAD, BAD, "Looks right to me."])
    session = service.ask("Write add(a, b) in Python", tests=TESTS)
    coder_calls = [p for p in chat.calls if p.system == EXPERTS["coder"].system]
    assert len(coder_calls) == 2  # once, then one retry: no more
    assert session.data["verification"]["status"] == FAILED
    assert label(session.phase, session.data) == "failed verification"
    assert session.events[-1]["text"].startswith("Finished — failed verification")
    result = session.data["result"]
    assert result.splitlines()[2] == "## Failed verification"
    assert "## Answer — the reviewer's words; the code failed its check" in result
    assert "✗ `test_adds` — failed" in result and "AssertionError" in result


def test_find_tests_the_task_are_run(make_service: MakeService) -> None:
    task = "Write add(a, b) in Python so that:\n```python\nassert add(2, 2) == 4\n```"
    service, _chat = _service(make_service, [ONE_CODER_STEP, BAD, BAD, "Review."])
    session = service.ask(task)
    step = session.data["steps"][0]
    assert step["verification"]["tests_from"] == "the tests in the task"
    assert session.data["verification"]["status"] == FAILED


def test_without_tests_the_tester_writes_them(make_service: MakeService) -> None:
    tester = "```python\ndef test_add():\n    assert add(1, 2) == 3\n```"
    service, chat = _service(make_service, [ONE_CODER_STEP, GOOD, tester, "Review."])
    session = service.ask("Write add(a, b) in Python")
    assert chat.calls[2].system == EXPERTS["tester"].system
    assert "def add(a, b)" in chat.calls[2].user
    step = session.data["steps"][0]
    assert step["verification"]["tests_from"] == "tests the tester wrote"
    assert session.data["verification"]["status"] == VERIFIED


def test_a_result_without_code_is_an_unverified_draft(make_service: MakeService) -> None:
    service, _chat = _service(
        make_service, [ONE_CODER_STEP, "Use a + b; it is simple.", "Review: fine."]
    )
    session = service.ask("Write add(a, b) in Python", tests=TESTS)
    assert session.data["verification"]["status"] == UNVERIFIED
    assert label(session.phase, session.data) == "unverified draft"
    assert "## Unverified draft" in session.data["result"]
    assert "the model's draft" in session.data["result"]


def test_code_that_does_not_parse_fails_without_asking_the_tester(
    make_service: MakeService,
) -> None:
    broken = "```python\ndef add(a, b)\n    return a + b\n```"
    service, chat = _service(make_service, [ONE_CODER_STEP, broken, broken, "Review."])
    session = service.ask("Write add(a, b) in Python")
    assert all(p.system != EXPERTS["tester"].system for p in chat.calls)
    step = session.data["steps"][0]
    assert [a["summary"] for a in step["verification"]["attempts"]] == [
        "the code does not parse: expected ':' (line 1)"
    ] * 2
    assert session.data["verification"]["status"] == FAILED


def test_the_scratch_folder_is_removed_and_the_environment_is_stripped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CUSTODIA_SECRET_FOR_TEST", "do not pass me on")
    code = (
        "import os, sys\n"
        "def where():\n    return os.getcwd(), sorted(os.environ), sys.flags.isolated\n"
    )
    run = run_tests(code, "def test_where():\n    assert False, repr(where())\n", FAST)
    (test,) = run.tests
    shown = test.output.splitlines()[-1].removeprefix("AssertionError: ")
    cwd, names, isolated = ast.literal_eval(shown)
    assert Path(cwd).name == "scratch" and not Path(cwd).exists()
    assert set(names) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_CTYPE"}
    assert isolated == 1


def test_in_the_bundle_the_check_runs_in_the_systems_python_or_says_it_cannot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from backends.multiagent import sandbox

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    python3 = shutil.which("python3")
    assert sandbox.interpreter() == python3  # the bundle's executable is the app itself
    if python3 is not None:
        assert check(GOOD, [("given", TESTS)], limits=FAST).status == VERIFIED
    monkeypatch.setenv("PATH", "/nonexistent")
    nothing = check(GOOD, [("given", TESTS)], limits=FAST)
    assert nothing.status == UNVERIFIED and "no Python interpreter" in nothing.summary
