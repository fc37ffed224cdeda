"""The audit-log role's suite on SQLite."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

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
