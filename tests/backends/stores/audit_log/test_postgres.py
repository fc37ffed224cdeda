"""The audit-log role's suite on a real Postgres (the harness starts it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from backends.stores.audit_log import AuditLog
from tests.backends.audit.writers import open_log
from tests.contract.audit_log import AuditLogContract, Row, Tamper


class PostgresTamper(Tamper):
    """The superuser (who owns everything) editing the table directly."""

    def __init__(self, admin_dsn: str, schema: str) -> None:
        self.admin_dsn = admin_dsn
        self.table = f"{schema}.audit_log"

    def _run(self, query: str, params: tuple[Any, ...] = ()) -> list[Any]:
        import psycopg

        with psycopg.connect(self.admin_dsn, autocommit=True, connect_timeout=5) as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []

    def rows(self) -> list[Row]:
        return [
            tuple(r) for r in self._run(f"SELECT seq, record, hash FROM {self.table} ORDER BY seq")
        ]  # type: ignore[misc]

    def delete(self, seq: int) -> None:
        self._run(f"DELETE FROM {self.table} WHERE seq = %s", (seq,))

    def wipe_tree(self) -> None:
        self._run(f"DELETE FROM {self.table.rsplit('.', 1)[0]}.audit_tree")

    def insert(self, seq: int, record: str, hash_: str) -> None:
        self._run(
            f"INSERT INTO {self.table} (seq, record, hash) VALUES (%s, %s, %s)",
            (seq, record, hash_),
        )


@pytest.mark.server
class TestPostgresAuditLog(AuditLogContract):
    @pytest.fixture
    def bootstrapped(self, fresh_postgres_db: str) -> Any:
        from backends.stores.audit_log.postgres import Roles, bootstrap

        return bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"r{uuid.uuid4().hex[:10]}"))

    @pytest.fixture
    def log_spec(self, bootstrapped: Any) -> tuple[str, str, str]:
        return ("postgres", bootstrapped.app_dsn, bootstrapped.schema)

    @pytest.fixture
    def checkpoint_writer(self, bootstrapped: Any) -> Iterator[AuditLog]:
        log = open_log(("postgres", bootstrapped.maintenance_dsn, bootstrapped.schema))
        yield log
        log.close()

    @pytest.fixture
    def tamper(self, log_spec: tuple[str, str, str], fresh_postgres_db: str) -> Tamper:
        return PostgresTamper(fresh_postgres_db, log_spec[2])
