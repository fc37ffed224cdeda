"""A multi-agent session really running in another process, held mid-run until killed.

The child builds the service from its environment (``CUSTODIA_HOME`` …) the way the CLI
does, starts (or resumes) a session and runs it with a scripted model that stops answering
at call number ``block_at`` — so the child holds the session's run lock, with part of the
work already saved, for as long as the test wants. ``kill()`` is ``kill -9``.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

ROOT = Path(__file__).resolve().parents[3]

#: what the child's experts answer (the parent's scripted model answers differently)
CHILD_REPLIES = [
    "1. Research CSV dialects\n2. Write a python function to parse CSV",
    "Dialects differ in quoting (said by the first process).",
    "def parse(text): ...  # first process",
    "Reviewed by the first process.",
]

CHILD = """
import sys, time
from backends import config
from backends.models.chat import ScriptedChat
from backends.multiagent.service import MultiAgentService
from backends.services import Services

mode, arg, block_at, replies = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]

class Blocking(ScriptedChat):
    def stream(self, prompt, should_stop=lambda: False):
        if len(self.calls) + 1 == block_at:
            print("blocked", flush=True)
            time.sleep(300)  # until the test kills this process
        yield from super().stream(prompt, should_stop)

services = Services(config.load(), chat=Blocking(replies=list(replies)))
service = services.get("multiagent", MultiAgentService)
session = service.start(arg) if mode == "start" else service.session(arg)
print("session", session.session_id, flush=True)
service.run(session.session_id)
print("finished", flush=True)
"""


class RunningElsewhere:
    """``with RunningElsewhere(env, start="task") as other: other.session_id, other.pid``."""

    def __init__(
        self,
        env: Mapping[str, str],
        *,
        start: str = "",
        resume: str = "",
        block_at: int = 3,
        timeout: float = 60.0,
    ) -> None:
        mode, arg = ("start", start) if start else ("resume", resume)
        # Only the given configuration: nothing of the harness' own CUSTODIA_* settings.
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
        child_env.update(env)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, mode, arg, str(block_at), *CHILD_REPLIES],
            cwd=ROOT,
            env=child_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.pid = self.proc.pid
        self.timeout = timeout
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._errors: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, daemon=True),
            threading.Thread(target=self._read_errors, daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        try:
            self.session_id = self._expect("session").split()[1]
            self._expect("blocked")
        except BaseException:
            self.kill()
            raise

    def _expect(self, prefix: str) -> str:
        """The child's next stdout line, which must start with ``prefix``."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:  # end of output, or too slow
                self.kill()
                err = "".join(self._errors)
                raise AssertionError(f"the other process never printed {prefix!r}: {err}")
            if line.startswith(prefix):
                return line.strip()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _read_errors(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:  # drained, so the child never blocks on a full pipe
            self._errors.append(line)

    def kill(self) -> None:
        """``kill -9``: the process dies mid-run, as in a crash."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for reader in self._readers:
            reader.join(timeout=10)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> RunningElsewhere:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.kill()


def stored_row(home: Path, session_id: str) -> tuple[float, str, str]:
    """The session's SQLite row as another program reads it (read-only):
    (updated_at, phase, data as JSON text)."""
    import sqlite3

    from backends.multiagent.service import SESSIONS_FILE

    conn = sqlite3.connect(f"{(home / SESSIONS_FILE).resolve().as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT updated_at, phase, data FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
    finally:
        conn.close()
    assert row is not None, session_id
    return float(row[0]), str(row[1]), str(row[2])
