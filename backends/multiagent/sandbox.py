"""Run model-written Python against tests in a child process that cannot reach the network.

What the child gets (AL3):

* **no network** — a new, empty network namespace (``unshare -rn``: a user namespace maps the
  user to root inside it, and the net namespace has only a loopback that is down) where the
  kernel allows unprivileged user namespaces; everywhere, an audit hook (:pep:`578`) installed
  before the code is read refuses ``socket.connect``/``bind``/``getaddrinfo``/``sendto``,
  starting processes (``subprocess``, ``os.system``/``exec``/``spawn``/``fork``) and loading
  native libraries (``ctypes``). :attr:`SandboxRun.network` says which held;
* **bounded time** — a wall-time limit (the whole process group is killed) and a CPU limit
  (``RLIMIT_CPU``);
* **bounded memory** — ``RLIMIT_AS`` (allocation fails with ``MemoryError``, or the process
  dies), ``RLIMIT_FSIZE`` on files, no core dumps;
* **a scratch folder** — its working directory and ``HOME``/``TMPDIR``, removed afterwards;
  the audit hook refuses changing anything outside it (symlinks resolved): opening for
  writing, ``os.remove``/``rename``/``replace``/``rmdir``/``mkdir``/``truncate``/``chmod``/
  ``chown``/``utime``/``setxattr``, ``shutil.rmtree``/``move``/``copy*``, a hard link to a
  file outside or a symlink placed or pointing outside, ``sqlite3.connect`` to a file outside
  (``:memory:`` is fine) and SQLite ``ATTACH`` of one (an authorizer on each connection).
  What it cannot see: ``os.mkfifo``/``os.mknod`` (no audit event), a relative path opened
  with ``dir_fd``, and C code writing by itself;
* **a stripped environment** — ``PATH``, ``HOME``, ``TMPDIR``, ``LANG`` only, Python in
  isolated mode (``-I``: no ``PYTHON*`` variables, no user site, no script folder on the path).

The limits are set by the child itself, first thing, not in a ``preexec_fn``: the app calls
this from worker threads, and ``preexec_fn`` is not safe in a threaded parent.

It is a check of honest code, like a CI job, not a jail for hostile code: code that knows it is
being checked can reach the runner in its own process (and forge its report), and the hook does
not stop a C extension already installed. What it guarantees is that an ordinary mistake — an
endless loop, a huge list, a stray request, a ``sys.exit`` — shows as a failure, never as a pass.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

#: the network isolation of a run
Network = Literal["namespace", "audit hook"]
NetworkChoice = Literal["auto", "namespace", "audit hook"]

#: what the runner writes to the results file, one JSON object a line
_RUNNER = r"""
import sys, os, json, time, traceback, resource, ast, types, importlib.util, io, contextlib

ARGS = json.loads(sys.argv[1])
SCRATCH = os.path.realpath(ARGS["scratch"])
OUT = os.fdopen(ARGS["fd"], "w", buffering=1)

def report(**record):
    OUT.write(json.dumps(record) + "\n")
    OUT.flush()

mb = ARGS["memory_mb"] * 1024 * 1024
for name, value in (("RLIMIT_AS", mb), ("RLIMIT_CPU", ARGS["cpu_seconds"]),
                    ("RLIMIT_FSIZE", ARGS["file_mb"] * 1024 * 1024), ("RLIMIT_CORE", 0)):
    resource.setrlimit(getattr(resource, name), (value, value))

_REFUSED = {
    "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname",
    "socket.sendto", "socket.sendmsg", "subprocess.Popen", "os.system", "os.exec",
    "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "pty.spawn", "ctypes.dlopen",
    "os.kill", "os.killpg",
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

def _fd_target(fd):
    # the path an open file descriptor names, or None (a pipe, a socket)
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return target if target.startswith("/") else None

def _resolved(path, dir_fd=None, follow=True):
    # where `path` really is: symlinks resolved (only its folder's with follow=False, for the
    # calls that act on the entry itself: remove, rename, mkdir); None for a pipe
    if isinstance(path, int):
        return _fd_target(path)
    path = os.fsdecode(os.fspath(path))
    if not os.path.isabs(path) and isinstance(dir_fd, int) and dir_fd >= 0:
        base = _fd_target(dir_fd)
        path = os.path.join(base if base is not None else "/", path)
    path = os.path.abspath(path)
    if follow:
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))

def _inside(real):
    return real is None or real == "/dev/null" or real == SCRATCH or real.startswith(
        SCRATCH + os.sep)

def _refuse_outside(event, path, dir_fd=None, follow=True):
    real = _resolved(path, dir_fd, follow)
    if not _inside(real):
        raise PermissionError(f"refused in the sandbox: {event} outside the scratch folder: {real}")

def _dir_fd(args, index):
    return args[index] if len(args) > index else None

#: event -> the arguments that name what it changes: (index, dir_fd index or None, follow)
_CHANGES = {
    "os.remove": ((0, 1, False),),
    "os.rmdir": ((0, 1, False),),
    "os.mkdir": ((0, 2, False),),
    "os.rename": ((0, 2, False), (1, 3, False)),
    # a hard link to a file outside would let it be written through the link
    "os.link": ((0, 2, True), (1, 3, False)),
    "os.chmod": ((0, 2, True),),
    "os.chown": ((0, 3, True),),
    "os.utime": ((0, 3, True),),
    "os.truncate": ((0, None, True),),
    "os.setxattr": ((0, None, True),),
    "os.removexattr": ((0, None, True),),
    "os.chflags": ((0, None, True),),
    "shutil.rmtree": ((0, 1, False),),
    "shutil.move": ((0, None, False), (1, None, True)),
    "shutil.copyfile": ((1, None, True),),
    "shutil.copymode": ((1, None, True),),
    "shutil.copystat": ((1, None, True),),
    "shutil.copytree": ((1, None, True),),
    "shutil.chown": ((0, None, True),),
    "shutil.unpack_archive": ((1, None, True),),
    "shutil.make_archive": ((0, None, True),),
}

def _sqlite_path(database):
    # the file a sqlite3.connect opens, or None for an in-memory (or private temporary) one
    if isinstance(database, bytes):
        database = database.decode("utf-8", "replace")
    database = os.fspath(database)
    if isinstance(database, bytes):
        database = database.decode("utf-8", "replace")
    if database in ("", ":memory:"):
        return None
    if database.startswith("file:"):
        path, _, query = database[5:].partition("?")
        if path in ("", ":memory:") or "mode=memory" in query:
            return None
        if path.startswith("//"):  # file://host/path: the host is empty or localhost
            path = "/" + path[2:].partition("/")[2]
        from urllib.parse import unquote
        return unquote(path)
    return database

def _sqlite_authorizer(action, arg1, arg2, db, trigger):
    # ATTACH opens a file from C: the same rule as sqlite3.connect; a file name that is not a
    # literal (a bound parameter) reaches the authorizer as None, and is denied
    if action == 24:  # SQLITE_ATTACH
        if arg1 is None:
            return 1  # SQLITE_DENY
        path = _sqlite_path(arg1)
        if path is not None and not _inside(_resolved(path)):
            return 1
    return 0

def _hook(event, args):
    if event in _REFUSED:
        raise PermissionError(f"refused in the sandbox: {event}")
    if event == "open" and len(args) >= 3:
        path, mode, flags = args[0], args[1], args[2]
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS)
        if writing and isinstance(path, (str, bytes)):
            real = os.path.realpath(os.fsdecode(path))
            if not _inside(real):
                raise PermissionError(f"refused in the sandbox: writing {real}")
    elif event in _CHANGES:
        for index, fd_index, follow in _CHANGES[event]:
            if len(args) > index and args[index] is not None:
                dir_fd = args[fd_index] if fd_index is not None and len(args) > fd_index else None
                _refuse_outside(event, args[index], dir_fd, follow)
    elif event == "os.symlink" and len(args) >= 2:
        _refuse_outside(event, args[1], _dir_fd(args, 2), follow=False)
        where = _resolved(args[1], _dir_fd(args, 2), follow=False)
        target = os.path.join(os.path.dirname(where), os.fsdecode(os.fspath(args[0])))
        _refuse_outside("a symlink to a file", target)
    elif event == "sqlite3.connect" and args:
        path = _sqlite_path(args[0])
        if path is not None:
            _refuse_outside(event, path)

# a small stand-in for pytest's helpers, so pytest-style tests run without pytest
class _Raises:
    def __init__(self, expected, match=None):
        self.expected, self.match, self.value = expected, match, None
    def __enter__(self):
        return self
    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError(f"DID NOT RAISE {self.expected}")
        if not issubclass(kind, self.expected):
            return False
        if self.match is not None:
            import re
            assert re.search(self.match, str(value)), f"{value!r} does not match {self.match!r}"
        self.value = value
        return True

class _Approx:
    def __init__(self, expected, rel=1e-6, abs=1e-12):
        self.expected, self.rel, self.abs = expected, rel, abs
    def _close(self, a, b):
        import math
        return math.isclose(a, b, rel_tol=self.rel, abs_tol=self.abs)
    def __eq__(self, other):
        e = self.expected
        if isinstance(e, (list, tuple)):
            return len(e) == len(other) and all(self._close(a, b) for a, b in zip(e, other))
        return self._close(other, e)
    def __repr__(self):
        return f"approx({self.expected!r})"

class _Mark:
    def parametrize(self, names, values, **kwargs):
        def mark(fn):
            fn._params = ([n.strip() for n in names.split(",")] if isinstance(names, str)
                          else list(names), list(values))
            return fn
        return mark
    def __getattr__(self, name):
        return lambda *a, **k: (a[0] if len(a) == 1 and callable(a[0]) and not k
                                else (lambda fn: fn))

class _Skip(Exception):
    pass

pytest = types.ModuleType("pytest")
pytest.raises = _Raises
pytest.approx = _Approx
pytest.mark = _Mark()
pytest.fail = lambda msg="": (_ for _ in ()).throw(AssertionError(msg))
def _skip(msg=""):
    raise _Skip(msg)
pytest.skip = _skip
sys.modules["pytest"] = pytest

# ATTACH opens a file from C, past the hook: each connection gets an authorizer that applies
# the same rule to it (the audit event comes before the connection can take one)
import sqlite3
_connect = sqlite3.connect
def _guarded_connect(*args, **kwargs):
    connection = _connect(*args, **kwargs)
    connection.set_authorizer(_sqlite_authorizer)
    return connection
sqlite3.connect = sqlite3.dbapi2.connect = _guarded_connect

sys.path.insert(0, SCRATCH)
sys.dont_write_bytecode = True
sys.addaudithook(_hook)

def trimmed(text, limit=2000):
    return text if len(text) <= limit else text[: limit // 2] + "\n…\n" + text[-limit // 2:]

def failure(err):
    if isinstance(err, MemoryError):
        return f"MemoryError: the memory limit ({ARGS['memory_mb']} MB) was reached"
    lines = traceback.format_exception(type(err), err, err.__traceback__)
    # the runner's own frames say nothing about the code, nor do asyncio's around an async test
    lines = [l for l in lines if "_custodia_runner.py" not in l
             and f"{os.sep}asyncio{os.sep}" not in l]
    return trimmed("".join(lines).strip())

code = open(os.path.join(SCRATCH, "solution.py"), encoding="utf-8").read()
tests = open(os.path.join(SCRATCH, "test_solution.py"), encoding="utf-8").read()
solution = types.ModuleType("solution")
solution.__file__ = os.path.join(SCRATCH, "solution.py")
sys.modules["solution"] = solution
started = time.perf_counter()
try:
    exec(compile(code, "solution.py", "exec"), solution.__dict__)
except BaseException as err:
    report(kind="import", ok=False, output=failure(err), seconds=time.perf_counter() - started)
    report(kind="end")
    OUT.close()
    os._exit(0)
report(kind="import", ok=True, seconds=time.perf_counter() - started)

# the tests may import the code under any module name: those that do not exist are the code
tree = ast.parse(tests)
for node in ast.walk(tree):
    names = []
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        names = [node.module]
    elif isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    for name in names:
        if name not in sys.modules and importlib.util.find_spec(name.split(".")[0]) is None:
            sys.modules[name] = solution

# a test that imports a name the code defines from a module that exists (`from statistics
# import mean`) replaces the code's with the library's: it would check the library, so the
# run refuses to verify instead
_MISSING = object()

def _shadowed():
    own = {k: v for k, v in vars(solution).items() if not k.startswith("__")}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            pairs = [(node.module, a.name, a.asname or a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            pairs = [(a.name, None, a.asname or a.name.split(".")[0]) for a in node.names]
        else:
            continue
        for module, name, bound in pairs:
            if sys.modules.get(module) is solution:
                continue
            if name != "*" and bound not in own:
                continue
            try:
                real = importlib.import_module(module)
            except BaseException:
                continue  # the test's own import fails, loudly
            if name is None:
                real = importlib.import_module(bound) if bound == module.split(".")[0] else real
                found = {bound: real}
            elif name == "*":
                public = getattr(real, "__all__", None) or [
                    k for k in vars(real) if not k.startswith("_")]
                found = {k: getattr(real, k, _MISSING) for k in public if k in own}
            else:
                found = {bound: getattr(real, name, _MISSING)}
            for key, value in found.items():
                if value is not _MISSING and value is not own[key]:
                    top = module.split(".")[0]
                    where = ("the standard library" if top in sys.stdlib_module_names
                             else f"the installed package `{top}`")
                    what = f"{module}.{name}" if name not in (None, "*") else module
                    if name == "*":
                        what = f"{module}.{key}"
                    return f"the tests import `{what}` from {where}, not the code's `{key}`"
    return ""

def _untouched():
    # tests that reach the code by none of its names (`import statistics` and
    # `statistics.mean(...)` beside the code's `mean`) check something else
    defs = set()
    for node in ast.parse(code).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defs |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    defs |= {k for k, v in vars(solution).items()
             if getattr(v, "__module__", None) == "solution" and not k.startswith("__")}
    aliases, elsewhere = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                bound = a.asname or a.name.split(".")[0]
                if sys.modules.get(a.name) is solution:
                    aliases.add(bound)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if sys.modules.get(node.module) is solution and any(
                    a.name == "*" or a.name in defs for a in node.names):
                return ""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in defs:
            return ""
        if isinstance(node, ast.Attribute) and node.attr in defs:
            if isinstance(node.value, ast.Name) and node.value.id in aliases:
                return ""
            elsewhere.append(f"{ast.unparse(node.value)}.{node.attr}")
    if elsewhere:
        return f"the tests call `{elsewhere[0]}`, not the code's `{elsewhere[0].rsplit('.', 1)[1]}`"
    return "the tests use nothing the code defines"

reason = _shadowed() or _untouched()
if reason:
    report(kind="refused", reason=reason)
    report(kind="end")
    OUT.close()
    os._exit(0)

namespace = dict(solution.__dict__)
namespace["__name__"] = "test_solution"
top_asserts = any(isinstance(n, ast.Assert) for n in tree.body)
name = "module-level assertions" if top_asserts else "loading the tests"
report(kind="start", name=name)
started = time.perf_counter()
try:
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(tests, "test_solution.py", "exec"), namespace)
except BaseException as err:
    report(kind="test", name=name, outcome="failed", output=failure(err),
           seconds=time.perf_counter() - started)
    report(kind="end")
    OUT.close()
    os._exit(0)
if top_asserts:
    report(kind="test", name=name, outcome="passed", output="",
           seconds=time.perf_counter() - started)

import unittest, inspect, warnings

class _CannotRun(Exception):
    pass

def _call(test, kwargs):
    # a coroutine runs to its end in its own event loop; a generator would never run its body
    result = test(**kwargs)
    if inspect.iscoroutine(result):
        import asyncio
        asyncio.run(result)
    elif inspect.isgenerator(result) or inspect.isasyncgen(result) or inspect.isawaitable(result):
        raise _CannotRun(f"the test returned a {type(result).__name__} instead of running "
                         "(a test that yields is not run)")

defined = {n.name for n in tree.body
           if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
cases = []
for key, value in list(namespace.items()):
    if key not in defined:
        continue
    if inspect.isfunction(value) and key.startswith("test"):
        params = getattr(value, "_params", None)
        if params:
            names_, rows = params
            for i, row in enumerate(rows):
                row = row if isinstance(row, (tuple, list)) and len(names_) > 1 else (row,)
                cases.append((f"{key}[{i}]", value, dict(zip(names_, row))))
        else:
            cases.append((key, value, None))
    elif inspect.isclass(value) and issubclass(value, unittest.TestCase):
        for method in unittest.TestLoader().getTestCaseNames(value):
            cases.append((f"{key}.{method}", value(method), "unittest"))
    elif inspect.isclass(value) and key.startswith("Test"):
        for method in sorted(m for m in vars(value) if m.startswith("test")):
            cases.append((f"{key}.{method}", getattr(value(), method), None))

for name, case, how in cases:
    report(kind="start", name=name)
    started = time.perf_counter()
    outcome, output = "passed", ""
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            if how == "unittest":
                result = unittest.TestResult()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    case.run(result)
                problems = result.failures + result.errors
                unrun = [w for w in caught if "return a value that is not None" in str(w.message)]
                if problems:
                    outcome, output = "failed", trimmed(problems[0][1])
                elif unrun:
                    # an async (or yielding) test method in a plain TestCase: never awaited
                    outcome = "error"
                    output = ("the test returned a coroutine or a generator, which unittest does "
                              "not run (an async test needs unittest.IsolatedAsyncioTestCase)")
                elif result.skipped:
                    outcome, output = "skipped", result.skipped[0][1]
            elif isinstance(how, dict):
                _call(case, how)
            else:
                needed = [p for p in inspect.signature(case).parameters]
                if needed:
                    outcome = "error"
                    output = f"needs pytest fixtures the sandbox does not have: {needed}"
                else:
                    _call(case, {})
    except _Skip as err:
        outcome, output = "skipped", str(err)
    except _CannotRun as err:
        outcome, output = "error", str(err)
    except BaseException as err:
        outcome, output = "failed", failure(err)
    report(kind="test", name=name, outcome=outcome, output=output,
           seconds=time.perf_counter() - started)
report(kind="end")
OUT.close()
os._exit(0)
"""


@dataclass(frozen=True)
class Limits:
    """What one run may use."""

    wall_seconds: float = 10.0
    cpu_seconds: int = 10
    memory_mb: int = 256
    file_mb: int = 16
    #: stdout/stderr kept (their ends)
    output_chars: int = 4000


@dataclass
class TestResult:
    name: str
    #: passed, failed (also the test running when the run was killed), error (it could not
    #: run: a pytest fixture), skipped
    outcome: str
    seconds: float = 0.0
    output: str = ""


@dataclass
class SandboxRun:
    """What happened to one run: each test's outcome, and the run's own end."""

    network: str
    tests: list[TestResult] = field(default_factory=list)
    #: the code itself ran (module level) without an error
    imported: bool = False
    import_error: str = ""
    #: "time limit", "memory limit", "CPU limit", "output limit" or "" (ended by itself)
    killed: str = ""
    exit_code: int | None = None
    #: the runner reached its end (every test reported)
    complete: bool = False
    #: why the tests were not run though they could be (they would check something other than
    #: the code: "the tests import `statistics.mean` from the standard library, …"); "" if run
    refused: str = ""
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    limits: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> list[TestResult]:
        return [t for t in self.tests if t.outcome == "passed"]

    @property
    def failed(self) -> list[TestResult]:
        return [t for t in self.tests if t.outcome == "failed"]

    @property
    def ok(self) -> bool:
        """Every test ran and passed, at least one, and the run ended by itself."""
        return (
            self.imported
            and self.complete
            and not self.killed
            and not self.refused
            and bool(self.tests)
            and all(t.outcome == "passed" for t in self.tests)
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class NoInterpreterError(RuntimeError):
    """No Python to run the code in (the bundle's executable is the app, not a Python)."""


def interpreter() -> str | None:
    """The Python the checks run in: this one, or in the PyInstaller bundle (whose executable
    is the app) the system's ``python3`` — the runner needs the standard library only."""
    if not getattr(sys, "frozen", False):
        return sys.executable
    return shutil.which("python3")


@functools.cache
def namespace_available() -> bool:
    """Whether ``unshare -rn`` works here (unprivileged user namespaces allowed)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    try:
        done = subprocess.run(
            [unshare, "-rn", "--", "true"],
            capture_output=True,
            timeout=5,
            env={"PATH": "/usr/bin:/bin"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _tail(raw: bytes, limit: int) -> str:
    text = raw.decode("utf-8", errors="replace")
    return text if len(text) <= limit else "…" + text[-limit:]


def run_tests(
    code: str,
    tests: str,
    limits: Limits | None = None,
    network: NetworkChoice = "auto",
) -> SandboxRun:
    """Run ``tests`` against ``code`` in a sandboxed child process (see the module docstring).

    Raises :class:`NoInterpreterError` when there is no Python to run it in.

    ``tests`` may hold ``test_*`` functions (pytest style, ``pytest.raises``/``approx``/
    ``mark.parametrize`` provided; ``async def`` ones each run in their own event loop),
    ``Test*`` classes, ``unittest.TestCase`` classes, or plain top-level ``assert`` lines; the
    code's names are visible to them, and ``from solution import …`` (or any module name that
    does not exist) imports the code. A test that cannot be run (a generator, an ``async``
    method of a plain ``TestCase``) is an error, never a pass. Tests that import a name the
    code defines from a module that exists (``from statistics import mean``) would check that
    module instead, and so do tests that use none of the code's names (``statistics.mean``
    beside the code's ``mean``): they are not run, and :attr:`SandboxRun.refused` says why.
    """
    limits = limits or Limits()
    python = interpreter()
    if python is None:
        raise NoInterpreterError("no Python interpreter to run the code in (install python3)")
    use_ns = network == "namespace" or (network == "auto" and namespace_available())
    result = SandboxRun(network="namespace" if use_ns else "audit hook", limits=asdict(limits))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="custodia-check-") as own:
        own_dir = Path(own)
        scratch = own_dir / "scratch"
        scratch.mkdir()
        (scratch / "solution.py").write_text(code, encoding="utf-8")
        (scratch / "test_solution.py").write_text(tests, encoding="utf-8")
        runner = own_dir / "_custodia_runner.py"
        runner.write_text(_RUNNER, encoding="utf-8")
        results_path = own_dir / "results.jsonl"
        out_path, err_path = own_dir / "stdout", own_dir / "stderr"
        with (
            results_path.open("wb") as results,
            out_path.open("wb") as out,
            err_path.open("wb") as err,
        ):
            args = {
                "scratch": str(scratch),
                "fd": results.fileno(),
                "memory_mb": limits.memory_mb,
                "cpu_seconds": limits.cpu_seconds,
                "file_mb": limits.file_mb,
            }
            command = [python, "-I", "-B", str(runner), json.dumps(args)]
            if use_ns:
                command = [shutil.which("unshare") or "unshare", "-rn", "--", *command]
            env = {
                "PATH": "/usr/bin:/bin",
                "HOME": str(scratch),
                "TMPDIR": str(scratch),
                "LANG": "C.UTF-8",
            }
            child = subprocess.Popen(
                command,
                cwd=scratch,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=(results.fileno(),),
                start_new_session=True,  # its own process group: killed whole
            )
            try:
                result.exit_code = child.wait(timeout=limits.wall_seconds)
            except subprocess.TimeoutExpired:
                result.killed = f"time limit ({limits.wall_seconds:g} s)"
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)
                result.exit_code = child.wait()
        result.seconds = time.perf_counter() - started
        result.stdout = _tail(out_path.read_bytes(), limits.output_chars)
        result.stderr = _tail(err_path.read_bytes(), limits.output_chars)
        if not result.killed and result.exit_code not in (0, None):
            result.killed = _death(result.exit_code, result.stderr, limits)
        _read_results(result, results_path.read_text(encoding="utf-8", errors="replace"))
    return result


def _death(code: int, stderr: str, limits: Limits) -> str:
    """Why a child ended with ``code`` (negative: a signal)."""
    if code in (-signal.SIGXCPU, -signal.SIGKILL) and "MemoryError" not in stderr:
        return f"CPU limit ({limits.cpu_seconds} s)"
    if code == -signal.SIGXFSZ:
        return f"file size limit ({limits.file_mb} MB)"
    if "MemoryError" in stderr or code in (-signal.SIGSEGV, -signal.SIGABRT):
        return f"memory limit ({limits.memory_mb} MB)"
    if code < 0:
        return (
            f"signal {signal.Signals(-code).name}" if -code in signal.valid_signals() else "killed"
        )
    return f"exit code {code}"


def _read_results(result: SandboxRun, text: str) -> None:
    running = ""
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        kind = record.get("kind")
        if kind == "import":
            result.imported = bool(record.get("ok"))
            result.import_error = str(record.get("output") or "")
        elif kind == "start":
            running = str(record.get("name", ""))
        elif kind == "test":
            running = ""
            result.tests.append(
                TestResult(
                    name=str(record.get("name", "?")),
                    outcome=str(record.get("outcome", "failed")),
                    seconds=float(record.get("seconds") or 0.0),
                    output=str(record.get("output") or ""),
                )
            )
        elif kind == "refused":
            result.refused = str(record.get("reason") or "the tests were not run")
        elif kind == "end":
            result.complete = True
    if running:
        # the test that was running when the process ended: it failed
        why = f"killed at the {result.killed}" if result.killed else "the process ended"
        result.tests.append(TestResult(running, "failed", 0.0, f"stopped: {why}"))
