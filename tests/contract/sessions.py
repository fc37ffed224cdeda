"""Contract of the session store role (MA1–MA7): L1 dict, L2 TTL store, SQLite WAL mirror; the
abstract suite only.

Run with each L2 from a fixtures class in ``tests/backends/stores/sessions/``: the embedded
in-process TTL store and a real Redis. MA3/MA4 ordering tests are here: a fresher L2 copy wins
at start-up, a stale one does not, and a read miss never touches L2.
"""

from __future__ import annotations

import json
import sqlite3
import stat
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from backends.multiagent.sessions import SessionStore
from backends.stores.sessions import SESSION_TTL, Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl import TTLItem, TTLStore
from backends.stores.ttl.memory import MemoryTTLStore
from tests.contract import describing

MA7_COLUMNS = [
    # (name, type, pk)
    ("session_id", "TEXT", 1),
    ("created_at", "REAL", 0),
    ("updated_at", "REAL", 0),
    ("phase", "TEXT", 0),
    ("model", "TEXT", 0),
    ("task", "TEXT", 0),
    ("data", "TEXT", 0),
]


@dataclass
class CountingTTLStore:
    """Observes calls to a real TTL store (it stores nothing itself)."""

    inner: TTLStore
    calls: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.inner.kind

    def set(self, key: str, value: str, ttl: float) -> None:
        self.calls.append("set")
        self.inner.set(key, value, ttl)

    def get(self, key: str) -> str | None:
        self.calls.append("get")
        return self.inner.get(key)

    def remaining(self, key: str) -> float | None:
        self.calls.append("remaining")
        return self.inner.remaining(key)

    def delete(self, key: str) -> bool:
        self.calls.append("delete")
        return self.inner.delete(key)

    def items(self, prefix: str) -> list[TTLItem]:
        self.calls.append("items")
        return self.inner.items(prefix)

    def ping(self) -> None:
        self.inner.ping()

    def close(self) -> None:
        self.inner.close()


Factory = Callable[..., SessionStore]


class SessionMirrorContract:
    @pytest.fixture
    def l2(self) -> Iterator[TTLStore]:
        raise NotImplementedError

    @pytest.fixture
    def namespace(self) -> str:
        return f"contract-{uuid.uuid4().hex[:8]}"

    @pytest.fixture
    def db(self, tmp_path: Path) -> Path:
        return tmp_path / "data" / "multiagent.sqlite3"

    @pytest.fixture
    def open_store(self, l2: TTLStore, namespace: str, db: Path) -> Iterator[Factory]:
        opened: list[SessionStore] = []

        def factory(l2_store: TTLStore | None = None, path: Path | None = None) -> SessionStore:
            target = path or db
            store = SessionStore(
                l2_store or l2,
                lambda: SqliteSessionMirror(target),
                namespace=namespace,
                retry_after=0,
            )
            opened.append(store)
            return store

        yield factory
        for store in opened:
            store.close()

    def key(self, namespace: str, session_id: str) -> str:
        return f"{namespace}:session:{session_id}"

    # -- copy_to: a migration warms the L2 ---------------------------------------------------
    def test_copy_to_warms_the_l2_with_recent_sessions_and_their_ttl_left(
        self, l2: TTLStore, namespace: str, db: Path
    ) -> None:
        from backends.progress import Progress

        mirror = SqliteSessionMirror(db)
        try:
            now = time.time()
            recent = [Session.new(f"recent {i}") for i in range(3)]
            for i, session in enumerate(recent):
                session.updated_at = now - 3600 * (i + 1)
                mirror.save(session)
            old = Session.new("two days ago", model="m")
            old.updated_at = now - 2 * SESSION_TTL
            mirror.save(old)
            fresher = recent[0].copy()
            fresher.updated_at = now
            fresher.phase = "done"
            l2.set(self.key(namespace, fresher.session_id), fresher.to_json(), 60)

            progress = Progress()
            assert mirror.copy_to(l2, progress, namespace=namespace, now=now) == 3
            assert progress.done == 3
            assert l2.get(self.key(namespace, old.session_id)) is None
            kept = l2.get(self.key(namespace, fresher.session_id))
            assert kept is not None and Session.from_json(kept).phase == "done"
            for i, session in enumerate(recent[1:], start=2):
                raw = l2.get(self.key(namespace, session.session_id))
                assert raw is not None and Session.from_json(raw).to_json() == session.to_json()
                left = l2.remaining(self.key(namespace, session.session_id))
                assert left is not None and left <= SESSION_TTL - 3600 * i + 1
            # a rerun changes nothing
            assert mirror.copy_to(l2, namespace=namespace, now=now) == 3
            assert Session.from_json(
                l2.get(self.key(namespace, fresher.session_id)) or ""
            ).phase == ("done")
        finally:
            mirror.close()

    # -- MA5, MA7 --------------------------------------------------------------------------
    def test_table_is_exactly_ma7_in_wal_mode(self, open_store: Factory, db: Path) -> None:
        open_store()
        conn = sqlite3.connect(db)
        try:
            info = conn.execute("PRAGMA table_info(sessions)").fetchall()
            assert [(c[1], c[2], c[5]) for c in info] == MA7_COLUMNS
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert conn.execute("PRAGMA user_version").fetchone()[0] >= 1
        finally:
            conn.close()
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
        assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700

    # -- MA2 -------------------------------------------------------------------------------
    def test_save_writes_l2_with_a_day_ttl_and_sqlite(
        self, open_store: Factory, l2: TTLStore, namespace: str, db: Path
    ) -> None:
        store = open_store()
        session = Session.new("write a parser", model="scripted")
        session.data["plan"] = ["a", "b"]
        store.save(session)
        raw = l2.get(self.key(namespace, session.session_id))
        assert raw is not None and Session.from_json(raw).data["plan"] == ["a", "b"]
        left = l2.remaining(self.key(namespace, session.session_id))
        assert left is not None and SESSION_TTL - 600 < left <= SESSION_TTL
        conn = sqlite3.connect(db)
        row = conn.execute(
            "SELECT task, model, phase, data FROM sessions WHERE session_id = ?",
            (session.session_id,),
        ).fetchone()
        conn.close()
        assert row[:3] == ("write a parser", "scripted", "planning")
        assert json.loads(row[3]) == {"plan": ["a", "b"]}

    def test_get_returns_copies(self, open_store: Factory) -> None:
        store = open_store()
        session = store.save(Session.new("t"))
        got = store.get(session.session_id)
        assert got is not None
        got.data["changed"] = True
        again = store.get(session.session_id)
        assert again is not None and "changed" not in again.data

    # -- MA3 -------------------------------------------------------------------------------
    def test_read_miss_falls_back_to_sqlite_and_caches_in_l1(self, open_store: Factory) -> None:
        reader = open_store()
        writer = open_store()  # another process, say, after the reader started
        session = writer.save(Session.new("from elsewhere"))
        assert not reader.cached(session.session_id)
        got = reader.get(session.session_id)
        assert got is not None and got.task == "from elsewhere"
        assert reader.cached(session.session_id)

    def test_a_read_never_touches_l2(
        self, open_store: Factory, l2: TTLStore, namespace: str
    ) -> None:
        counting = CountingTTLStore(l2)
        store = open_store(counting)
        counting.calls.clear()
        # A session that exists only in L2 (written there after start-up) stays invisible.
        only_l2 = Session.new("only in L2")
        l2.set(self.key(namespace, only_l2.session_id), only_l2.to_json(), 60)
        assert store.get(only_l2.session_id) is None
        assert store.get("no-such-session") is None
        saved = store.save(Session.new("saved"))
        counting.calls.clear()
        assert store.get(saved.session_id) is not None
        store.list()
        assert counting.calls == []

    # -- MA4 -------------------------------------------------------------------------------
    def test_start_up_overlays_fresher_l2_copies_and_repairs_sqlite(
        self, open_store: Factory, l2: TTLStore, namespace: str, db: Path
    ) -> None:
        first = open_store()
        session = first.save(Session.new("task"))
        first.close()
        fresher = session.copy()
        fresher.phase = "reviewing"
        fresher.updated_at = session.updated_at + 10
        l2.set(self.key(namespace, session.session_id), fresher.to_json(), 60)

        restarted = open_store()
        got = restarted.get(session.session_id)
        assert got is not None and got.phase == "reviewing"
        repaired = SqliteSessionMirror(db).load(session.session_id)
        assert repaired is not None and repaired.phase == "reviewing"

    def test_a_stale_l2_copy_does_not_win(
        self, open_store: Factory, l2: TTLStore, namespace: str
    ) -> None:
        first = open_store()
        session = first.save(Session.new("task"))
        session.phase = "done"
        first.save(session)
        first.close()
        stale = session.copy()
        stale.phase = "planning"
        stale.updated_at = session.updated_at - 100
        l2.set(self.key(namespace, session.session_id), stale.to_json(), 60)
        got = open_store().get(session.session_id)
        assert got is not None and got.phase == "done"

    def test_start_up_loads_sqlite_into_l1(self, open_store: Factory) -> None:
        first = open_store()
        ids = [first.save(Session.new(f"task {i}")).session_id for i in range(3)]
        first.close()
        restarted = open_store(MemoryTTLStore())  # an empty L2: SQLite is the source
        assert all(restarted.cached(i) for i in ids)

    def test_a_session_only_in_l2_is_recovered_at_start_up(
        self, open_store: Factory, l2: TTLStore, namespace: str, db: Path
    ) -> None:
        lost = Session.new("SQLite never saw me")
        l2.set(self.key(namespace, lost.session_id), lost.to_json(), 60)
        store = open_store()
        assert store.get(lost.session_id) is not None
        assert SqliteSessionMirror(db).load(lost.session_id) is not None

    # -- listing (MA7 queryable columns) ---------------------------------------------------
    def test_list_newest_first_and_by_phase(self, open_store: Factory) -> None:
        store = open_store()
        now = time.time()
        for i, phase in enumerate(["done", "working", "done", "failed"]):
            store.save(Session(session_id=f"s{i}", task=f"t{i}", phase=phase, created_at=now + i))
        assert [s.session_id for s in store.list()] == ["s3", "s2", "s1", "s0"]
        assert [s.session_id for s in store.list(phase="done")] == ["s2", "s0"]
        assert [s.session_id for s in store.list(limit=2)] == ["s3", "s2"]

    def test_list_sees_other_writers(self, open_store: Factory) -> None:
        mine, theirs = open_store(), open_store()
        a = mine.save(Session.new("mine"))
        b = theirs.save(Session.new("theirs"))
        assert {s.session_id for s in mine.list()} >= {a.session_id, b.session_id}

    def test_mirror_filters_by_model_and_task(self, open_store: Factory, db: Path) -> None:
        store = open_store()
        store.save(Session.new("Parse CSV files", model="smollm2"))
        store.save(Session.new("Write docs", model="scripted"))
        mirror = SqliteSessionMirror(db)
        try:
            assert [s.task for s in mirror.list(model="smollm2")] == ["Parse CSV files"]
            assert [s.task for s in mirror.list(task_contains="csv")] == ["Parse CSV files"]
        finally:
            mirror.close()

    def test_survives_a_restart(self, open_store: Factory) -> None:
        first = open_store()
        session = Session.new("remember me")
        session.data["events"] = [{"seq": 1, "text": "héllo"}]
        first.save(session)
        first.close()
        got = open_store().get(session.session_id)
        assert got is not None and got.events == [{"seq": 1, "text": "héllo"}]

    def test_health_is_ok_when_everything_works(self, open_store: Factory) -> None:
        store = open_store()
        store.save(Session.new("t"))
        assert store.health() == {"l1": "ok", "l2": "ok", "sqlite": "ok"}

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_the_mirror_describes_and_measures_itself_read_only(
        self, db: Path, tmp_path: Path
    ) -> None:
        cfg = describing.config(tmp_path)
        sessions = [Session.new("first"), Session.new("second")]
        sessions[0].events.append({"type": "phase", "phase": "plan"})
        mirror = SqliteSessionMirror(db)
        cls = describing.check_description(mirror, cfg, path=db)
        try:
            for session in sessions:
                mirror.save(session)
            measured = describing.measure(mirror, cfg, path=db)
            events = cls.measure(cfg, path=db, count="events")
        finally:
            mirror.close()
        assert measured.items == 2 and measured.size_bytes and measured.size_bytes > 0
        assert events.items == sum(len(s.events) for s in sessions) == 1
        describing.check_probe(mirror, cfg, path=db)
        missing = tmp_path / "none" / "multiagent.sqlite3"
        assert cls.created(cfg, path=missing) is False and not missing.parent.exists()
