"""The SQLite index (CA3): shared safely by concurrent processes, rebuilt when damaged."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.conversations import index as index_module
from backends.conversations.files import FileStamp
from backends.conversations.index import ConversationIndex, IndexRow
from backends.errors import StoreUnavailableError

from .conftest import MakeAgent

ROOT = Path(__file__).resolve().parents[3]
INDEX = "conversations.sqlite3"


def test_processes_opening_a_new_index_at_once_all_succeed(tmp_path: Path) -> None:
    """Two processes switching a new file to WAL at once: SQLite answers one of them
    "database is locked" without waiting (no busy handler there); the folder lock and the
    retries make every open and write succeed. Before, ~1 round in 10 failed."""
    rounds, processes = 30, 3
    start = time.time() + 2.0  # all children imported and waiting by then
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.backends.conversations.index_child",
                str(tmp_path),
                str(rounds),
                str(start),
                f"p{i}",
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(processes)
    ]
    failures: list[str] = []
    for child in children:
        out, _ = child.communicate(timeout=120)
        assert child.returncode == 0
        failures += json.loads(out.strip().splitlines()[-1])
    assert failures == []
    for r in range(rounds):
        db = sqlite3.connect(tmp_path / f"round{r}" / INDEX)
        assert db.execute("SELECT count(*) FROM conversations").fetchone()[0] == processes
        db.close()


def test_a_garbage_index_is_moved_aside_and_rebuilt(
    make_agent: MakeAgent, caplog: pytest.LogCaptureFixture
) -> None:
    agent = make_agent()
    ids = sorted(agent.ask(f"kept in the files {i}").conversation_id for i in range(3))
    agent.close()
    path = agent.config.path(INDEX)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(b"this is not a SQLite database at all\n" * 200)
    with caplog.at_level(logging.WARNING):
        again = make_agent()
    assert sorted(r.id for r in again.conversations()) == ids
    [aside] = path.parent.glob(f"{INDEX}.damaged-*")
    assert aside.read_bytes().startswith(b"this is not a SQLite database")
    assert again.index.recovered == aside
    assert any("damaged" in r.getMessage() and aside.name in r.getMessage() for r in caplog.records)


def test_an_index_with_damaged_pages_is_rebuilt(make_agent: MakeAgent) -> None:
    agent = make_agent()
    for i in range(40):  # a few pages of rows
        agent.ask(f"row {i} " + "x" * 50)
    ids = sorted(r.id for r in agent.conversations())
    agent.close()
    path = agent.config.path(INDEX)
    db = sqlite3.connect(path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    raw = bytearray(path.read_bytes())
    page = 4096
    assert len(raw) > 3 * page
    raw[page : 3 * page] = os.urandom(2 * page)  # the header stays valid: it opens
    path.write_bytes(bytes(raw))
    again = make_agent()
    assert sorted(r.id for r in again.conversations()) == ids
    assert again.index.recovered is not None and again.index.recovered.exists()


def test_an_index_damaged_while_in_use_is_rebuilt(make_agent: MakeAgent) -> None:
    agent = make_agent()
    ids = sorted(agent.ask(f"in use {i}").conversation_id for i in range(3))
    path = agent.config.path(INDEX)
    agent.index._execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with open(path, "r+b") as fh:  # the same file, overwritten under the open connection
        fh.write(b"\0garbage" * 1000)
    agent.index._execute("PRAGMA shrink_memory")  # drop cached pages: the disk is read again
    assert sorted(r.id for r in agent.conversations()) == ids  # found damaged: rebuilt
    recovered = agent.index.recovered
    assert recovered is not None and recovered.read_bytes().startswith(b"\0garbage")
    agent.ask("and it keeps working")
    assert len(agent.conversations()) == 4


def test_a_locked_index_is_reported_never_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Busy is not damage: an index another writer holds is an environment error, and the
    file (a good one) stays where it is."""
    monkeypatch.setattr(index_module, "BUSY_TIMEOUT", 0.1)
    monkeypatch.setattr(index_module, "RETRY_SECONDS", 0.3)
    path = tmp_path / INDEX
    first = ConversationIndex(path)
    first.apply([_row("kept.json")])
    first.close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        index = ConversationIndex(path)  # migrating needs the write lock: refused
    except StoreUnavailableError as err:
        assert "locked" in str(err)
    else:  # pragma: no cover - the assertion below says what went wrong
        index.close()
        pytest.fail("opened an index whose write lock another connection holds")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert not list(tmp_path.glob("*.damaged-*"))
    assert [r.file for r in ConversationIndex(path).rows()] == ["kept.json"]


def _row(file: str) -> IndexRow:
    return IndexRow(file, "n", "2025-01-01", "p", "m", file, 0, False, "", None, FileStamp(1, 1, 1))


def test_an_index_of_the_first_schema_gains_the_title_column(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    """An index written before issue 20 (schema 1): migration 0002 adds ``title``; its rows
    read back unchanged and a titled conversation is listed by its title."""
    from backends.stores.engines.sqlite import connect, migrate

    agent = make_agent()
    cid = agent.ask("Bees dance to show where flowers are").conversation_id
    path = agent.config.path(INDEX)
    agent.close()
    path.unlink()
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)
    old = connect(path)
    assert migrate(old, index_module.MIGRATIONS[:1]) == 1
    stamp = FileStamp.of((agent.folder / f"{cid}.json").stat())
    old.execute(
        "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?, 0, '', NULL, ?, ?, ?)",
        (f"{cid}.json", "Old name", "2025-01-01", "scripted", "scripted",
         str(agent.folder / f"{cid}.json"), 2, stamp.ino, stamp.mtime_ns, stamp.size),
    )  # fmt: skip
    old.commit()
    old.close()
    reopened = make_agent(start=False)
    [row] = reopened.index.rows()
    assert (row.name, row.title, row.messages) == ("Old name", "", 2)
    [shown] = reopened.conversations()  # the clear title from the file itself
    assert shown.name == "Bees dance to show where flowers are"
