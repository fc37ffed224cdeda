"""The session store's own additions to the contract suite (tests/contract/sessions.py):
``reload`` for a run that claims a session, ``list_durable`` for a listing shown as the whole
history, and limit validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.errors import StoreUnavailableError
from backends.multiagent.sessions import SessionStore
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore


def store_on(path: Path, l2: MemoryTTLStore | None = None) -> SessionStore:
    return SessionStore(l2 or MemoryTTLStore(), lambda: SqliteSessionMirror(path), retry_after=0)


def test_reload_takes_a_fresher_sqlite_row_over_l1(tmp_path: Path) -> None:
    path = tmp_path / "multiagent.sqlite3"
    mine = store_on(path)
    session = mine.save(Session.new("task"))
    other = store_on(path)  # another process
    newer = other.get(session.session_id)
    assert newer is not None
    newer.phase = "working"
    newer.data["by"] = "the other process"
    other.save(newer)
    other.close()

    assert mine.get(session.session_id).phase == "planning"  # type: ignore[union-attr]  # L1 (MA3)
    got = mine.reload(session.session_id)
    assert got is not None and got.phase == "working" and got.data["by"] == "the other process"
    assert mine.get(session.session_id).phase == "working"  # type: ignore[union-attr]  # cached
    mine.close()


def test_reload_keeps_l1_when_it_is_the_freshest(tmp_path: Path) -> None:
    path = tmp_path / "multiagent.sqlite3"
    read_only = SqliteSessionMirror(path)  # created, then opened read-only: saves fail
    read_only.close()
    l2 = MemoryTTLStore()
    store = SessionStore(l2, lambda: SqliteSessionMirror(path, read_only=True), retry_after=0)
    session = store.save(Session.new("only in L1 and L2"))
    session.phase = "reviewing"
    store.save(session)
    got = store.reload(session.session_id)
    assert got is not None and got.phase == "reviewing"
    assert store.reload("unknown") is None
    store.close()


def test_reload_takes_a_fresher_l2_copy_and_repairs_sqlite(tmp_path: Path) -> None:
    """A process whose SQLite failed left its latest save only in L2 (Redis): a resume
    elsewhere starts from it, as a restart would (MA4), and writes it back to SQLite."""
    path = tmp_path / "multiagent.sqlite3"
    l2 = MemoryTTLStore()  # shared, as Redis is between processes
    mine = store_on(path, l2)
    session = mine.save(Session.new("task"))
    newer = session.copy()
    newer.phase = "working"
    newer.updated_at = session.updated_at + 10
    l2.set(f"custodia:session:{session.session_id}", newer.to_json(), 60)

    got = mine.reload(session.session_id)
    assert got is not None and got.phase == "working"
    mine.close()
    mirror = SqliteSessionMirror(path)
    try:
        assert mirror.load(session.session_id).phase == "working"  # type: ignore[union-attr]
    finally:
        mirror.close()


@pytest.mark.parametrize("damage", ["corrupt", "a folder"])
def test_list_durable_raises_where_list_degrades(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "multiagent.sqlite3"
    if damage == "corrupt":
        path.write_bytes(b"garbage" * 500)
    else:
        path.mkdir()
    store = store_on(path)
    kept = store.save(Session.new("lives in L1"))
    assert [s.session_id for s in store.list()] == [kept.session_id]  # MA6: never raises
    with pytest.raises(StoreUnavailableError, match=str(path)):
        store.list_durable()
    assert store.health()["sqlite"].startswith("degraded")
    store.close()


def test_list_durable_merges_like_list(tmp_path: Path) -> None:
    store = store_on(tmp_path / "multiagent.sqlite3")
    for n in range(3):
        store.save(Session(session_id=f"s{n}", task=f"task {n}", created_at=float(n + 1)))
    assert [s.session_id for s in store.list_durable(limit=2)] == ["s2", "s1"]
    assert store.list_durable(phase="done") == []
    store.close()


@pytest.mark.parametrize("limit", [0, -1, True, 2.5])
def test_a_limit_must_be_a_positive_integer(tmp_path: Path, limit: object) -> None:
    path = tmp_path / "multiagent.sqlite3"
    store = store_on(path)
    store.save(Session.new("task"))
    mirror = SqliteSessionMirror(path)
    try:
        for listing in (store.list, store.list_durable, mirror.list):
            with pytest.raises(ValueError, match="limit must be a positive integer"):
                listing(limit=limit)  # type: ignore[operator]
    finally:
        mirror.close()
        store.close()
