"""CT1 on a real Postgres: the application role can only SELECT and INSERT on the log."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from backends.audit.checkpoints import Signer
from backends.errors import StoreUnavailableError
from backends.stores.audit_log import AuditLogError, AuditPermissionError
from backends.stores.audit_log.postgres import Bootstrapped, PostgresAuditLog, Roles, bootstrap
from backends.stores.audit_log.record import Draft

pytestmark = pytest.mark.server


@pytest.fixture
def roles(fresh_postgres_db: str) -> Bootstrapped:
    return bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"r{uuid.uuid4().hex[:10]}"))


@pytest.fixture
def app_log(roles: Bootstrapped) -> Iterator[PostgresAuditLog]:
    log = PostgresAuditLog(roles.app_dsn, schema=roles.schema)
    log.append_many([Draft("test.write", None, {"n": n}) for n in range(3)])
    yield log
    log.close()


def _as(dsn: str, query: str) -> Any:
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        return conn.execute(query).fetchall()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE {s}.audit_log SET record = record WHERE seq = 1",
        "DELETE FROM {s}.audit_log WHERE seq = 1",
        "TRUNCATE {s}.audit_log",
        "INSERT INTO {s}.audit_checkpoint (seq, key_id, body) VALUES (1, 'k', '{{}}')",
        "UPDATE {s}.audit_meta SET value = 'x'",
        "DROP TABLE {s}.audit_log",
        "ALTER TABLE {s}.audit_log DISABLE TRIGGER ALL",
        "CREATE TABLE {s}.sneaky (x int)",
        "UPDATE {s}.audit_tree SET hash = hash",
        "DELETE FROM {s}.audit_tree",
        "TRUNCATE {s}.audit_tree",
    ],
)
def test_application_role_is_denied(
    roles: Bootstrapped, app_log: PostgresAuditLog, statement: str
) -> None:
    import psycopg

    with pytest.raises(psycopg.Error) as caught:
        _as(roles.app_dsn, statement.format(s=roles.schema))
    assert isinstance(caught.value, psycopg.errors.InsufficientPrivilege), caught.value
    assert ("permission denied" in str(caught.value)) or ("must be owner" in str(caught.value))
    assert app_log.count() == 3


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO {s}.audit_log (seq, record, hash) VALUES (99, '{{}}', 'x')",
        "UPDATE {s}.audit_log SET record = record",
        "DELETE FROM {s}.audit_log",
        "UPDATE {s}.audit_checkpoint SET body = body",
        "DELETE FROM {s}.audit_checkpoint",
    ],
)
def test_maintenance_role_has_only_what_checkpoints_need(
    roles: Bootstrapped, app_log: PostgresAuditLog, statement: str
) -> None:
    import psycopg

    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        _as(roles.maintenance_dsn, statement.format(s=roles.schema))


def test_roles_can_do_their_own_jobs(
    roles: Bootstrapped, app_log: PostgresAuditLog, tmp_path: Any
) -> None:
    assert _as(roles.app_dsn, f"SELECT count(*) FROM {roles.schema}.audit_log") == [(3,)]
    assert not app_log.stores_checkpoints
    signer = Signer.load_or_create(tmp_path / "k")
    checkpoint = signer.sign(app_log.log_id, 3, app_log.head().hash)
    with pytest.raises(AuditPermissionError, match="permission denied"):
        app_log.add_checkpoint(checkpoint)
    maint = PostgresAuditLog(roles.maintenance_dsn, schema=roles.schema)
    try:
        assert maint.stores_checkpoints
        maint.add_checkpoint(checkpoint)
        with pytest.raises(AuditPermissionError):
            maint.append_many([Draft("test.write")])
    finally:
        maint.close()
    assert app_log.checkpoints() == [checkpoint]


def test_bootstrap_is_idempotent(fresh_postgres_db: str, roles: Bootstrapped) -> None:
    log = PostgresAuditLog(roles.app_dsn, schema=roles.schema)
    log_id = log.log_id
    log.append_many([Draft("test.write")])
    log.close()
    again = bootstrap(fresh_postgres_db, roles=roles.roles, schema=roles.schema)
    log = PostgresAuditLog(again.app_dsn, schema=roles.schema)
    try:
        assert (log.log_id, log.count()) == (log_id, 1)
    finally:
        log.close()


def test_missing_schema_is_an_environment_error(fresh_postgres_db: str) -> None:
    with pytest.raises(AuditLogError, match="bootstrap"):
        PostgresAuditLog(fresh_postgres_db, schema="nothing_here")


def test_server_down_is_an_environment_error(roles: Bootstrapped, postgres_server: Any) -> None:
    log = PostgresAuditLog(roles.app_dsn, schema=roles.schema, timeout=2)
    try:
        log.append_many([Draft("test.write")])
        postgres_server.stop()
        with pytest.raises(StoreUnavailableError):
            log.append_many([Draft("test.write")])
        with pytest.raises(StoreUnavailableError):
            log.head()
        postgres_server.start()
        log.append_many([Draft("test.write")])  # reconnects; nothing was lost
        assert log.head().seq == 2
    finally:
        postgres_server.ensure_running()
        log.close()


def test_the_server_builds_the_records_python_would(
    roles: Bootstrapped, app_log: PostgresAuditLog
) -> None:
    from backends.stores.audit_log.record import chain_hash

    drafts = [
        Draft("tutor.turn", "p-0123456789abcdef", {"q": '¿dosis? "x" \\ 😀', "n": [1, 2.5]}),
        Draft("tutor.source", None, {}, "v1.c2VhbGVk"),
    ]
    entries = app_log.append_many(drafts)
    stored = app_log.range(entries[0].seq, entries[-1].seq)
    built_here = [d.record(e.seq, e.time) for d, e in zip(drafts, entries, strict=True)]
    assert [e.record for e in stored] == built_here
    previous = app_log.get(entries[0].seq - 1)
    assert previous is not None
    assert stored[0].hash == chain_hash(previous.hash, stored[0].record)
    assert stored[0].time < stored[1].time and stored[0].time.endswith("Z")


def test_a_schema_from_before_the_append_function_still_appends(
    fresh_postgres_db: str, roles: Bootstrapped, app_log: PostgresAuditLog
) -> None:
    import psycopg

    from backends.audit.verify import verify_chain

    with psycopg.connect(fresh_postgres_db, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f"DROP FUNCTION {roles.schema}.append_records")
    app_log.append_many([Draft("test.write", None, {"n": n}) for n in range(3, 6)])
    assert app_log.head().seq == 6 and verify_chain(app_log).ok
    again = bootstrap(fresh_postgres_db, roles=roles.roles, schema=roles.schema)
    assert _as(
        again.app_dsn,
        f"SELECT count(*) FROM {roles.schema}.append_records("
        + "ARRAY['{}'], ARRAY['\"t.x\"'], ARRAY['null'], ARRAY['null'])",
    ) == [(1,)]


def test_the_tree_grows_on_the_server_and_from_the_client(
    fresh_postgres_db: str, roles: Bootstrapped, app_log: PostgresAuditLog
) -> None:
    """The server's function and the client's fallback add the same nodes (CT10)."""
    import psycopg

    from backends.stores.audit_log import merkle

    with psycopg.connect(fresh_postgres_db, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f"DROP FUNCTION {roles.schema}.append_records")
    app_log.append_many([Draft("test.write", None, {"n": n}) for n in range(3, 8)])
    records = [r for rows in app_log.chain(0) for _, r, _ in rows]
    assert app_log.tree_size() == 8
    assert merkle.root(8, app_log.tree_nodes) == merkle.reference_root(records)


def test_an_old_schema_gets_its_tree_when_bootstrapped_again(
    fresh_postgres_db: str, roles: Bootstrapped
) -> None:
    """A schema from before the tree: bootstrap adds the table, the next start builds the tree
    of the existing records as the application role (INSERT only), resumably."""
    import psycopg

    from backends.stores.audit_log import merkle

    log = PostgresAuditLog(roles.app_dsn, schema=roles.schema)
    log.append_many([Draft("test.write", None, {"n": n}) for n in range(5)])
    log.close()
    with psycopg.connect(fresh_postgres_db, autocommit=True, connect_timeout=5) as admin:
        admin.execute(f"DROP TABLE {roles.schema}.audit_tree")
        admin.execute(
            f"UPDATE {roles.schema}.audit_meta SET value = '1' WHERE key = 'schema_version'"
        )
    old = PostgresAuditLog(roles.app_dsn, schema=roles.schema)
    old.append_many([Draft("test.write", None, {"n": n}) for n in range(5, 9)])  # no tree yet
    assert old.tree_size() == 0
    old.close()
    bootstrap(fresh_postgres_db, roles=roles.roles, schema=roles.schema)
    log = PostgresAuditLog(roles.app_dsn, schema=roles.schema)
    assert log.tree_size() == 0
    assert log.build_tree(batch=4) == 9
    records = [r for rows in log.chain(0) for _, r, _ in rows]
    assert merkle.root(9, log.tree_nodes) == merkle.reference_root(records)
    log.append_many([Draft("test.write", None, {"n": 9})])
    assert log.tree_size() == 10
    log.close()
