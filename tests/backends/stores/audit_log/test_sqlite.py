"""The audit-log role's suite on SQLite."""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from backends.errors import CancelledError
from backends.progress import Progress
from backends.stores.audit_log import merkle
from backends.stores.audit_log.record import Draft
from backends.stores.audit_log.sqlite import SQLiteAuditLog
from tests.contract.audit_log import AuditLogContract, Row, Tamper


class SQLiteTamper(Tamper):
    """The file opened directly, triggers dropped: what anyone with write access can do."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _conn(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None)
        for verb in ("update", "delete"):
            conn.execute(f"DROP TRIGGER IF EXISTS audit_log_no_{verb}")
        return conn

    def rows(self) -> list[Row]:
        with sqlite3.connect(self.path) as conn:
            return list(conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq"))

    def wipe_tree(self) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None)
        conn.execute("DROP TRIGGER IF EXISTS audit_tree_no_delete")
        conn.execute("DELETE FROM audit_tree")
        conn.close()

    def delete(self, seq: int) -> None:
        conn = self._conn()
        conn.execute("DELETE FROM audit_log WHERE seq = ?", (seq,))
        conn.close()

    def insert(self, seq: int, record: str, hash_: str) -> None:
        conn = self._conn()
        conn.execute(
            "INSERT INTO audit_log(seq, record, hash) VALUES (?, ?, ?)", (seq, record, hash_)
        )
        conn.close()


class TestSQLiteAuditLog(AuditLogContract):
    @pytest.fixture
    def log_spec(self, tmp_path: Path) -> tuple[str, str, str]:
        return ("sqlite", str(tmp_path / "audit.sqlite3"), "")

    @pytest.fixture
    def tamper(self, log_spec: tuple[str, str, str]) -> Tamper:
        return SQLiteTamper(Path(log_spec[1]))


# -- the Merkle tree beside the chain (CT10) -------------------------------------------------
def _old_log(path: Path, n: int) -> list[bytes]:
    """A log as the release before the tree wrote it (migrations 1–2), with ``n`` records."""
    from backends.stores.audit_log.record import chain_drafts
    from backends.stores.audit_log.sqlite import MIGRATIONS
    from backends.stores.engines.sqlite import connect, migrate

    conn = connect(path, synchronous="OFF")
    migrate(conn, MIGRATIONS[:2])
    entries = chain_drafts([Draft("test.write", None, {"n": i}) for i in range(n)], None)
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO audit_log(seq, record, hash) VALUES (?, ?, ?)",
        [(e.seq, e.record, e.hash) for e in entries],
    )
    conn.execute("COMMIT")
    conn.close()
    return [e.record.encode("utf-8") for e in entries]


def test_the_tree_is_append_only(tmp_path: Path) -> None:
    log = SQLiteAuditLog(tmp_path / "audit.sqlite3")
    log.append_many([Draft("test.write", None, {"n": i}) for i in range(3)])
    log.close()
    conn = sqlite3.connect(tmp_path / "audit.sqlite3", isolation_level=None)
    for statement in ("UPDATE audit_tree SET hash = x'00'", "DELETE FROM audit_tree"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(statement)
    conn.close()


def test_an_old_log_gets_its_tree_on_first_start_resumably(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(SQLiteAuditLog, "TREE_BATCH", 1000)
    path = tmp_path / "audit.sqlite3"
    records = _old_log(path, 2_345)
    seen: list[int] = []

    class StopAfterTwoBatches(Progress):
        def advance(self, steps: int = 1, message: str = "") -> None:
            super().advance(steps, message)
            seen.append(steps)
            if len(seen) == 2:
                self.cancel()

    log = SQLiteAuditLog.__new__(SQLiteAuditLog)
    with pytest.raises(CancelledError):
        SQLiteAuditLog.__init__(log, path, build=StopAfterTwoBatches())
    # as after kill -9 mid-build: whole batches committed, the rest not
    probe = SQLiteAuditLog(path, read_only=True)
    assert probe.tree_size() == 2_000
    probe.close()
    log = SQLiteAuditLog(path)  # the next start resumes and finishes
    assert log.tree_size() == 2_345 == log.head().seq
    assert merkle.root(2_345, log.tree_nodes) == merkle.reference_root(records)
    log.append_many([Draft("test.write", None, {"after": True})])
    assert log.tree_size() == 2_346
    log.close()


def test_the_release_fixture_upgrades_and_gets_its_tree(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[3] / "fixtures" / "datadir-0.1" / "audit.sqlite3"
    path = tmp_path / "audit.sqlite3"
    path.write_bytes(fixture.read_bytes())
    log = SQLiteAuditLog(path)
    records = [r for rows in log.chain(0) for _, r, _ in rows]
    assert records and log.tree_size() == len(records)
    assert merkle.root(len(records), log.tree_nodes) == merkle.reference_root(records)
    log.close()


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("clean_close", [True, False])
def test_a_read_only_copy_is_read_without_writing_a_byte(tmp_path: Path, clean_close: bool) -> None:
    live = tmp_path / "live"
    log = SQLiteAuditLog(live / "audit.sqlite3")
    entries = log.append_many([Draft("test.write", None, {"n": i}) for i in range(50)])
    if clean_close:
        log.close()
    copy = tmp_path / "copy"
    shutil.copytree(live, copy)  # without a clean close: the -wal holds the commits
    if not clean_close:
        log.close()
    for p in copy.rglob("*"):
        p.chmod(0o444)
    copy.chmod(0o555)
    before = _digests(copy)
    names = sorted(os.listdir(copy))
    ro = SQLiteAuditLog(copy / "audit.sqlite3", read_only=True)
    assert ro.head().seq == 50 and ro.count() == 50
    assert [r for rows in ro.chain(0) for r in rows][-1][0] == 50
    records = [e.record.encode("utf-8") for e in entries]
    assert merkle.root(50, ro.tree_nodes) == merkle.reference_root(records)
    ro.close()
    assert sorted(os.listdir(copy)) == names
    assert _digests(copy) == before
