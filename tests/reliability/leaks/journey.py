"""One journey through every assistant, as a user drives the headless CLI, fully recorded.

:func:`run_journey` runs ``custodia`` commands in-process (``backends.cli.main``, the same
code as the ``custodia`` entry point) on a fresh data dir with an encryption key and a
Postgres password set, with:

* the app's own log file (``custodia.log`` in the data dir, as ``desktop.app`` sets it up)
  at DEBUG level, so everything any backend logs is there to scan;
* stdout and stderr captured;
* a **recording socket**: every ``connect``/``connect_ex``/``sendto``/``create_connection``
  and every name resolution is recorded (before the network block of tests/harness/netblock
  gets to refuse it), so the test can assert that every address was on this machine;
* the umask a desktop session usually has (022), so files that are private are private
  because Custodia made them so, not because the test runner's umask hid it;
* a snapshot of the system temporary directory before and after.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends import cli

#: in the history of an encrypted conversation: must never appear in clear anywhere
HISTORY_MARKER = "zebra-quartz-4417 the patient's secret"
KEY_ENV = "CONVERSATIONS_KEY"
POSTGRES_PASSWORD = "pw-Kx81-never-logged"
NEO4J_PASSWORD = "neo-Qz27-never-logged"


@dataclass
class Journey:
    home: Path
    key: str
    outputs: list[tuple[list[str], int, str, str]] = field(default_factory=list)
    addresses: list[tuple[str, Any]] = field(default_factory=list)
    new_temp_files: list[Path] = field(default_factory=list)
    log_text: str = ""

    @property
    def all_output(self) -> str:
        return "\n".join(out + err for _, _, out, err in self.outputs)


class _Recorder:
    """Wraps the socket functions (outermost): records, then calls through."""

    def __init__(self, journey: Journey) -> None:
        self.journey = journey
        self._saved: list[tuple[Any, str, Any]] = []

    def __enter__(self) -> _Recorder:
        record = self.journey.addresses

        def wrap_method(name: str) -> None:
            original = getattr(socket.socket, name)

            def method(sock: socket.socket, address: Any, *args: Any) -> Any:
                target = args[-1] if name == "sendto" and args else address
                if name != "sendto" or args:
                    record.append((f"{name}:{sock.family.name}", target))
                return original(sock, address, *args)

            self._saved.append((socket.socket, name, original))
            setattr(socket.socket, name, method)

        for name in ("connect", "connect_ex", "sendto"):
            wrap_method(name)
        for name in ("create_connection", "getaddrinfo"):
            original = getattr(socket, name)

            def function(
                *args: Any, _name: str = name, _original: Any = original, **kw: Any
            ) -> Any:
                record.append((_name, args[0] if args else kw.get("host")))
                return _original(*args, **kw)

            self._saved.append((socket, name, original))
            setattr(socket, name, function)
        return self

    def __exit__(self, *exc: object) -> None:
        for target, name, original in reversed(self._saved):
            setattr(target, name, original)


def _temp_files() -> set[Path]:
    root = Path(tempfile.gettempdir())
    out: set[Path] = set()
    for path in root.glob("*"):
        if path.name.startswith(("pytest-of-", "custodia-servers-")):
            continue
        try:
            if path.is_file():
                out.add(path)
            elif path.is_dir():
                out.update(p for p in path.rglob("*") if p.is_file())
        except OSError:
            continue
    return out


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def _app_log(home: Path) -> Iterator[Path]:
    from desktop.app import _setup_logging

    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    _setup_logging(home)
    added = [h for h in root.handlers if h not in before]
    root.setLevel(logging.DEBUG)
    try:
        yield home / "custodia.log"
    finally:
        for handler in added:
            handler.flush()
            handler.close()
            root.removeHandler(handler)
        root.setLevel(level)


def run_journey(home: Path, key: str, extra_env: dict[str, str] | None = None) -> Journey:
    journey = Journey(home, key)
    env = {
        "CUSTODIA_HOME": str(home),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
        KEY_ENV: key,
        "CUSTODIA_POSTGRES_DSN": f"postgresql://custodia_app:{POSTGRES_PASSWORD}@127.0.0.1:9/x",
        "CUSTODIA_NEO4J_PASSWORD": NEO4J_PASSWORD,
        "CUSTODIA_NEW_CONVERSATIONS_KEY": "",
        **(extra_env or {}),
    }
    notes = home.parent / "notes"
    notes.mkdir(exist_ok=True)
    (notes / "my-notes.md").write_text(
        "# Ana's notes\n\nAtrial fibrillation is treated with anticoagulants. " * 5
    )
    commands: list[list[str]] = [
        ["memories", "add", "I am allergic to penicillin"],
        ["ask", "memories", "What am I allergic to?"],
        ["ask", "conversations", HISTORY_MARKER],
        ["conversations", "list"],
        ["conversations", "search", "zebra quartz"],
        ["ask", "multiagent", "Parse CSV files"],
        ["sessions"],
        ["kb", "import", str(notes), "--user", "ana"],
        ["ask", "tutor", "How is atrial fibrillation treated?", "--user", "ana"],
        ["audit", "checkpoint"],
        ["audit", "verify"],
        ["forget", "ana"],
        ["reindex", "conversations"],
        ["storage"],
        ["doctor", "--json"],
        ["audit", "export", "--format", "jsonl", "--output", str(home.parent / "audit.jsonl")],
    ]
    temp_before = _temp_files()
    old_umask = os.umask(0o022)
    try:
        with _environment(env), _app_log(home) as log_path, _Recorder(journey):
            for argv in commands:
                out, err = io.StringIO(), io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                    try:
                        code = cli.main(argv)
                    except SystemExit as exit_:  # argparse
                        code = int(exit_.code or 0)
                journey.outputs.append((argv, code, out.getvalue(), err.getvalue()))
            _discover_models(home)
    finally:
        os.umask(old_umask)
    journey.log_text = log_path.read_text(encoding="utf-8", errors="replace")
    journey.new_temp_files = sorted(_temp_files() - temp_before)
    return journey


def _discover_models(home: Path) -> None:
    """What the conversations tab does at start: look for local model runtimes."""
    from backends import config
    from backends.services import Services
    from tests.parts import conversations_service as get_service

    services = Services(config.load())
    try:
        get_service(services).discover_models(timeout=0.5)
    finally:
        services.close()
