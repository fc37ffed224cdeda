"""MA6: a failing layer is logged and marked degraded; the session goes on; nothing raises.

Faults are real: a Redis server stopped mid-run or never there, a SQLite file opened
read-only, a database that hits its size limit (SQLite's own "database or disk is full"),
a corrupt file, a Qdrant folder locked by another instance.
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.multiagent.coordinator import Coordinator
from backends.multiagent.events import Feed
from backends.multiagent.sessions import SessionStore
from backends.multiagent.tickets import TicketBoard
from backends.stores.bus.memory import InProcessEventBus
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore
from backends.stores.vectors.qdrant import QdrantSemanticMemory
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory
from tests.backends.multiagent.conftest import REPLIES, MakeService
from tests.backends.multiagent.test_coordinator import HookedChat


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def coordinator_on(store: SessionStore) -> Coordinator:
    l2 = MemoryTTLStore()
    return Coordinator(
        store,
        TicketBoard(l2, retry_after=0),
        Feed(InProcessEventBus()),
        lambda: ScriptedChat(replies=list(REPLIES)),
    )


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "multiagent.sqlite3"
    SqliteSessionMirror(path).close()  # created, migrated, empty
    yield path


def rows(path: Path) -> dict[str, str]:
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT session_id, phase FROM sessions").fetchall())
    finally:
        conn.close()


@pytest.mark.server
def test_redis_stopped_mid_run(
    make_service: MakeService, redis_config: Config, namespace: str, redis_server: Any
) -> None:
    def stop_redis(call: int) -> None:
        if call == 2:
            redis_server.stop()

    service = make_service(
        chat=HookedChat(list(REPLIES), stop_redis), cfg=redis_config, namespace=namespace
    )
    session = service.start("Parse CSV files")
    assert service.health()["sessions L2 (redis)"] == "ok"
    final = service.run(session.session_id)
    assert final.phase == "done"
    health = service.health()
    for layer in ("sessions L2 (redis)", "tickets (redis)", "live feed (redis)"):
        assert health[layer].startswith("degraded"), (layer, health[layer])
    assert health["sessions SQLite"] == "ok"
    assert rows(service.sessions_path)[session.session_id] == "done"
    assert service.session(session.session_id).phase == "done"  # type: ignore[union-attr]
    assert service.live_tickets(session.session_id) == []  # no raise, just nothing
    # Redis back: the next save goes through and the layer is healthy again.
    redis_server.start()
    service.sessions.save(final)
    assert service.health()["sessions L2 (redis)"] == "ok"


def test_redis_never_reachable(make_service: MakeService, config: Config) -> None:
    cfg = replace(
        config, profile="server", redis_url=f"redis://127.0.0.1:{closed_port()}/0"
    ).validated()
    service = make_service(cfg=cfg)
    final = service.ask("Parse CSV files")
    assert final.phase == "done"
    health = service.health()
    assert health["sessions L2 (redis)"].startswith("degraded")
    assert health["tickets (redis)"].startswith("degraded")
    assert health["live feed (redis)"].startswith("degraded")
    assert rows(service.sessions_path)[final.session_id] == "done"
    assert service.list_sessions()[0].session_id == final.session_id


def test_sqlite_read_only(db: Path) -> None:
    store = SessionStore(
        MemoryTTLStore(), lambda: SqliteSessionMirror(db, read_only=True), retry_after=0
    )
    final = coordinator_on(store).run(coordinator_on(store).start("Parse CSV files").session_id)
    assert final.phase == "done"
    assert "readonly" in store.health()["sqlite"]
    assert store.health()["l2"] == "ok"
    assert store.get(final.session_id).phase == "done"  # type: ignore[union-attr]
    assert store.pending_sqlite == 1
    assert rows(db) == {}
    store.close()


def test_disk_full_then_space_again(db: Path) -> None:
    mirror_holder: list[SqliteSessionMirror] = []

    def open_mirror() -> SqliteSessionMirror:
        mirror_holder.append(SqliteSessionMirror(db))
        return mirror_holder[-1]

    store = SessionStore(MemoryTTLStore(), open_mirror, retry_after=0)
    conn = mirror_holder[0].connection
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")  # the disk is full now

    big = Session.new("big")
    big.data["blob"] = "x" * 200_000
    store.save(big)
    final = coordinator_on(store).run(coordinator_on(store).start("Parse CSV files").session_id)
    assert final.phase == "done"
    assert "full" in store.health()["sqlite"]
    assert store.pending_sqlite == 2
    assert store.get(big.session_id).data["blob"] == big.data["blob"]  # type: ignore[union-attr]

    conn.execute("PRAGMA max_page_count=1073741823")  # space again
    store.save(store.get(final.session_id))  # type: ignore[arg-type]
    assert store.health()["sqlite"] == "ok"
    assert store.pending_sqlite == 0
    assert rows(db) == {big.session_id: "planning", final.session_id: "done"}
    store.close()


def test_sqlite_cannot_even_be_opened(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be")
    store = SessionStore(
        MemoryTTLStore(), lambda: SqliteSessionMirror(blocker / "s.sqlite3"), retry_after=0
    )
    final = coordinator_on(store).run(coordinator_on(store).start("Parse CSV files").session_id)
    assert final.phase == "done"
    assert store.health()["sqlite"].startswith("degraded")
    assert [s.session_id for s in store.list()] == [final.session_id]
    store.close()


def test_a_corrupt_sqlite_file_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "multiagent.sqlite3"
    garbage = b"this is not a database" * 100
    path.write_bytes(garbage)
    store = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(path), retry_after=0)
    session = store.save(Session.new("still works"))
    assert store.get(session.session_id) is not None
    assert "not a database" in store.health()["sqlite"]
    store.close()
    assert path.read_bytes() == garbage  # nothing overwritten


def test_semantic_memory_held_too_long_by_another_instance(
    make_service: MakeService, config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holding the memory longer than the wait (a long re-embedding): the run
    goes on without memory and says why."""
    monkeypatch.setattr(EdgeSemanticMemory, "DEFAULT_WAIT", 0.3)
    service = make_service()
    other = EdgeSemanticMemory(HashingEmbedder(384), path=config.qdrant_edge_path, idle=60)
    try:
        other.count("agent_results")  # takes the lease and keeps it (idle 60 s)
        final = service.ask("Parse CSV files")
    finally:
        other.close()
    assert final.phase == "done"
    warnings = [e["text"] for e in final.events if e["kind"] == "warning"]
    assert warnings and "another Custodia process" in warnings[0]
    assert "another Custodia process" in service.health()["semantic memory (qdrant-edge)"]


def test_damaged_qdrant_folder_is_moved_aside_and_memory_starts_empty(config: Config) -> None:
    """A kill while Qdrant wrote meta.json leaves it empty (found by the crash loop)."""
    first = QdrantSemanticMemory(HashingEmbedder(384), path=config.qdrant_path)
    first.close()
    meta = config.qdrant_path / "meta.json"
    assert meta.exists()
    meta.write_bytes(b"")  # what a SIGKILL mid-write leaves
    memory = QdrantSemanticMemory(HashingEmbedder(384), path=config.qdrant_path)
    try:
        memory.check()  # opens and works
    finally:
        memory.close()
    aside = [p for p in config.qdrant_path.parent.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1 and (aside[0] / "meta.json").read_bytes() == b""  # kept, not deleted
