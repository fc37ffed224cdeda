"""MA5: two processes writing one SQLite file (WAL) both succeed."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from backends.multiagent.sessions import SessionStore
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore

ROOT = Path(__file__).resolve().parents[3]

WRITER = """
import json, sys
from pathlib import Path
from backends.stores.sessions import Session
from backends.multiagent.sessions import SessionStore
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore

path, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
store = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(path), retry_after=0)
for i in range(count):
    session = Session(session_id=f"{name}-{i}", task=f"task {i}", data={"writer": name})
    store.save(session)
    session.phase = "working"
    store.save(session)
print(json.dumps({"health": store.health(), "pending": store.pending_sqlite}))
store.close()
"""


def test_two_processes_share_one_wal_file(tmp_path: Path) -> None:
    path = tmp_path / "multiagent.sqlite3"
    SqliteSessionMirror(path).close()
    count = 150
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, str(count)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    for report in reports:
        assert report == {"health": {"l1": "ok", "l2": "ok", "sqlite": "ok"}, "pending": 0}
    conn = sqlite3.connect(path)
    try:
        got = dict(conn.execute("SELECT session_id, phase FROM sessions").fetchall())
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()
    assert len(got) == 2 * count and set(got.values()) == {"working"}
    # A third reader sees both writers' sessions.
    store = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(path))
    assert len(store.list()) == 2 * count
    store.close()
