"""AL3: "nothing unverified is done" — async tests run, the code cannot change files outside its
scratch folder, and tests that would check the standard library instead of the code refuse."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from backends.multiagent.sandbox import Limits, run_tests
from backends.multiagent.verify import FAILED, UNVERIFIED, VERIFIED, check

FAST = Limits(wall_seconds=8.0, cpu_seconds=6, memory_mb=256)

ADD_WRONG = "def add(a, b):\n    return a - b\n"
ADD_RIGHT = "def add(a, b):\n    return a + b\n"
ASYNC_TESTS = (
    "import asyncio\n"
    "from solution import add\n\n"
    "def test_zero():\n    assert add(0, 0) == 0\n\n"
    "async def test_add():\n    await asyncio.sleep(0)\n    assert add(1, 2) == 3\n\n"
    "class TestAdd:\n"
    "    async def test_more(self):\n        assert add(2, 2) == 4\n"
)


def _outcomes(code: str, tests: str) -> dict[str, str]:
    run = run_tests(code, tests, FAST)
    return {t.name: t.outcome for t in run.tests}


def test_async_tests_run_and_a_wrong_answer_fails() -> None:
    # before: `async def test_add` was never collected and `TestAdd.test_more` was a coroutine
    # never awaited — "verified, 2 of 2 passed" for `a - b`
    run = run_tests(ADD_WRONG, ASYNC_TESTS, FAST)
    outcomes = {t.name: t.outcome for t in run.tests}
    assert outcomes == {"test_zero": "passed", "test_add": "failed", "TestAdd.test_more": "failed"}
    assert not run.ok
    failure = next(t.output for t in run.tests if t.name == "test_add")
    assert "assert add(1, 2) == 3" in failure
    assert "asyncio" not in failure  # the event loop's frames say nothing about the code
    right = run_tests(ADD_RIGHT, ASYNC_TESTS, FAST)
    assert right.ok, right.tests
    assert len(right.passed) == 3
    assert check(f"```python\n{ADD_WRONG}```", [("the user's tests", ASYNC_TESTS)]).status == FAILED


def test_a_test_that_cannot_run_is_an_error_never_a_pass() -> None:
    tests = (
        "import unittest\n"
        "def test_yields():\n    assert add(1, 2) == 3\n    yield\n\n"
        "class TestPlain(unittest.TestCase):\n"
        "    async def test_never_awaited(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
        "class TestLoop(unittest.IsolatedAsyncioTestCase):\n"
        "    async def test_awaited(self):\n        self.assertEqual(add(1, 2), 3)\n"
    )
    outcomes = _outcomes(ADD_WRONG, tests)
    assert outcomes == {
        "test_yields": "error",
        "TestPlain.test_never_awaited": "error",
        "TestLoop.test_awaited": "failed",
    }
    attempt = check(f"```python\n{ADD_RIGHT}```", [("the user's tests", tests.split("class")[0])])
    assert attempt.status == UNVERIFIED


ESCAPES = {
    "remove": "os.remove(V / 'victim')",
    "unlink_path": "(V / 'victim').unlink()",
    "truncate": "os.truncate(V / 'victim', 0)",
    "rename": "os.rename(V / 'victim', V / 'renamed')",
    "replace_in": "os.replace(V / 'victim', 'here')",
    "rmdir": "os.rmdir(V / 'folder')",
    "rmtree": "shutil.rmtree(V / 'folder')",
    "chmod": "os.chmod(V / 'victim', 0)",
    "fchmod": "fd = os.open(V / 'victim', os.O_RDONLY)\n    os.fchmod(fd, 0)",
    "utime": "os.utime(V / 'victim', (0, 0))",
    "mkdir": "os.mkdir(V / 'made')",
    "makedirs": "os.makedirs(V / 'made' / 'deeper')",
    "symlink_outside": "os.symlink('/etc/hostname', V / 'made')",
    "symlink_to_outside": "os.symlink(V / 'victim', 'link')",
    "link_to_outside": "os.link(V / 'victim', 'hard')",
    "write": "open(V / 'victim', 'w').write('x')",
    "write_through_symlink": "os.symlink(V, 'out')\n    open('out/victim', 'a').write('x')",
    "copyfile": "shutil.copyfile('solution.py', V / 'made')",
    "move": "shutil.move(str(V / 'victim'), 'here')",
    "sqlite": "sqlite3.connect(V / 'made.sqlite3').execute('create table t(x)')",
    "sqlite_uri": "sqlite3.connect(f'file:{V}/made.sqlite3?mode=rwc', uri=True)",
    "sqlite_vacuum_into": (
        "c = sqlite3.connect(':memory:')\n    c.execute(f\"vacuum into '{V}/made.sqlite3'\")"
    ),
    "removedirs": "os.removedirs(V / 'folder')",
    "sqlite_attach_parameter": (
        "c = sqlite3.connect(':memory:')\n"
        "    c.execute('attach database ? as other', (f'{V}/made.sqlite3',))"
    ),
    "sqlite_attach": (
        "c = sqlite3.connect(':memory:')\n"
        "    c.execute(f\"attach database '{V}/made.sqlite3' as other\")\n"
        "    c.execute('create table other.t(x)')"
    ),
}


def test_the_code_cannot_change_files_outside_its_scratch_folder(tmp_path: Path) -> None:
    # before: a test removed one file, truncated another and created a SQLite database outside,
    # and the run was ok
    victims = tmp_path / "victims"
    victims.mkdir()
    (victims / "victim").write_text("keep me")
    (victims / "folder").mkdir()
    os.utime(victims / "victim", (1_000_000, 1_000_000))
    before = sorted(p.name for p in victims.iterdir())
    stat = (victims / "victim").stat()
    tests = "import os, shutil, sqlite3\nfrom pathlib import Path\n"
    tests += f"V = Path({str(victims)!r})\nONE = f()\n\n"
    for name, body in ESCAPES.items():
        tests += f"def test_{name}():\n    {body}\n\n"
    run = run_tests("def f():\n    return 1\n", tests, FAST)
    assert run.complete, run.stderr
    for result in run.tests:
        assert result.outcome == "failed", (result.name, result.outcome)
        # ATTACH and VACUUM INTO are refused by an SQLite authorizer: "not authorized"
        refused = "refused in the sandbox" in result.output or "authoriz" in result.output
        assert refused, (result.name, result.output)
    assert len(run.tests) == len(ESCAPES)
    assert not run.ok
    assert sorted(p.name for p in victims.iterdir()) == before
    assert (victims / "victim").read_text() == "keep me"
    after = (victims / "victim").stat()
    assert (after.st_mode, after.st_mtime) == (stat.st_mode, stat.st_mtime)


def test_inside_the_scratch_folder_the_same_calls_work() -> None:
    tests = (
        "import os, shutil, sqlite3, tempfile\n"
        "from pathlib import Path\n\n"
        "def test_files():\n"
        "    assert Path.cwd() == Path(os.environ['HOME']) == Path(tempfile.gettempdir())\n"
        "    os.makedirs('a/b')\n"
        "    Path('a/b/f').write_text('x')\n"
        "    os.chmod('a/b/f', 0o600)\n"
        "    os.utime('a/b/f', (0, 0))\n"
        "    os.symlink('f', 'a/b/l')\n"
        "    os.link('a/b/f', 'a/h')\n"
        "    os.rename('a/h', 'a/h2')\n"
        "    os.truncate('a/h2', 0)\n"
        "    shutil.copyfile('a/b/f', 'a/c')\n"
        "    shutil.move('a/c', 'a/d')\n"
        "    with tempfile.NamedTemporaryFile('w') as t:\n"
        "        t.write('x')\n"
        "    c = sqlite3.connect('a/x.sqlite3')\n"
        "    c.execute(\"attach database 'a/y.sqlite3' as y\")\n"
        "    c.execute('create table y.t(x)')\n"
        "    c.execute(\"vacuum into 'a/z.sqlite3'\")\n"
        "    c.close()\n"
        "    sqlite3.connect(':memory:').execute('select 1')\n"
        "    shutil.rmtree('a')\n"
        "    assert f() == 1\n"
    )
    run = run_tests("def f():\n    return 1\n", tests, FAST)
    assert run.ok, [(t.name, t.output) for t in run.tests]


@pytest.mark.parametrize(
    "tests",
    [
        "from statistics import mean\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n",
        "def test_mean():\n    from statistics import mean\n    assert mean([1, 2, 3]) == 2\n",
        "from statistics import *\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n",
    ],
    ids=["top", "inside", "star"],
)
def test_tests_of_the_standard_library_never_verify_the_code(tests: str) -> None:
    # before: a `mean` returning 0 was "verified, 1 of 1" — the test checked statistics.mean
    for body in ("return 0", "return sum(xs) / len(xs)"):
        answer = f"```python\ndef mean(xs):\n    {body}\n```"
        attempt = check(answer, [("the user's tests", tests)])
        assert attempt.status == UNVERIFIED, attempt.summary
        assert "`statistics.mean` from the standard library" in attempt.summary


@pytest.mark.parametrize(
    ("tests", "called"),
    [
        (
            "import statistics\n\ndef test_mean():\n    assert statistics.mean([1, 2, 3]) == 2\n",
            "statistics.mean",
        ),
        (
            "import statistics as s\n\ndef test_mean():\n    assert s.mean([1, 2, 3]) == 2\n",
            "s.mean",
        ),
    ],
    ids=["module", "alias"],
)
def test_tests_calling_the_library_by_its_module_never_verify_the_code(
    tests: str, called: str
) -> None:
    # before: `statistics.mean(...)` named `mean`, so it counted as exercising the code's mean
    attempt = check("```python\ndef mean(xs):\n    return 0\n```", [("the user's tests", tests)])
    assert attempt.status == UNVERIFIED
    assert f"`{called}`, not the code's `mean`" in attempt.summary
    # the code reached as a module is the code
    through = "import solution as s\n\ndef test_mean():\n    assert s.mean([1, 2, 3]) == 2\n"
    wrong = check("```python\ndef mean(xs):\n    return 0\n```", [("the user's tests", through)])
    assert wrong.status == FAILED


def test_the_library_as_the_expected_value_still_checks_the_code() -> None:
    tests = (
        "from statistics import mean as expected\n"
        "from solution import mean\n\n"
        "def test_mean():\n    assert mean([1, 2, 3]) == expected([1, 2, 3])\n"
    )
    wrong = check("```python\ndef mean(xs):\n    return 0\n```", [("the user's tests", tests)])
    assert wrong.status == FAILED
    right = "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"
    assert check(right, [("the user's tests", tests)]).status == VERIFIED
    # the code reusing the library's own function is the same object: nothing is replaced
    same = "```python\nfrom statistics import mean\n\ndef middle(xs):\n    return mean(xs)\n```"
    reuse = "from statistics import mean\n\ndef test_middle():\n    assert middle([1, 3]) == 2\n"
    assert check(same, [("the user's tests", reuse)]).status == VERIFIED


def test_sqlite_in_memory_is_allowed() -> None:
    assert sqlite3.sqlite_version  # the runner's sqlite3 is the same module
    tests = "import sqlite3\n\ndef test_memory():\n"
    tests += "    assert sqlite3.connect(':memory:').execute('select 1').fetchone() == (f(),)\n"
    assert run_tests("def f():\n    return 1\n", tests, FAST).ok
