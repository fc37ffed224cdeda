"""``custodia migrate --to server``: migrate, then verify against the real servers.

Embedded data is made by the scripted user journey (tests/journeys/script.py) plus a bulk of
audit records; the servers are the harness's real Redis, Postgres (a fresh database per test)
and, for the vectors, a ``chroma run`` server.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.errors import CancelledError
from backends.migrate import (
    COPY,
    JOURNAL_FILE,
    STAYS,
    AuditMergeRefused,
    BrokenChainError,
    MigrateOptions,
    MigrationError,
    migrate,
    plan_migration,
)
from backends.models.embedders import HashingEmbedder
from backends.multiagent.migration import copy_semantic_memory
from backends.progress import Progress
from backends.services import Services
from backends.storage_map import storage_map
from backends.stores.audit_log.postgres import PostgresAuditLog, Roles, bootstrap
from backends.stores.audit_log.record import Draft
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.vectors import MemoryItem
from backends.stores.vectors.qdrant import QdrantSemanticMemory
from tests.harness.chroma import ChromaServer, chroma_server  # noqa: F401
from tests.journeys.script import run_journey

BULK = 600  # audit records beyond the journey's


def _config(home: Path) -> Config:
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir made by the journey (+ BULK audit records), copied by each test."""
    home = tmp_path_factory.mktemp("template") / "home"
    home.mkdir(mode=0o700)
    _populate(_config(home))
    return home


@pytest.fixture
def config(tmp_path: Path, template: Path) -> Config:
    home = tmp_path / "home"
    shutil.copytree(template, home)
    return _config(home)


@pytest.fixture
def empty_config(tmp_path: Path) -> Config:
    home = tmp_path / "empty"
    home.mkdir(mode=0o700)
    return _config(home)


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[str]:
    """A Redis database of its own (other tests share db 0), emptied before and after."""
    import redis

    url = redis_url.rsplit("/", 1)[0] + "/7"
    client = redis.Redis.from_url(url, socket_timeout=5)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


@pytest.fixture
def options() -> MigrateOptions:
    return MigrateOptions(roles=Roles.with_prefix(f"m{uuid.uuid4().hex[:10]}"), audit_batch=100)


@pytest.fixture
def servers(config: Config, redis_db: str, fresh_postgres_db: str) -> Config:
    """Servers configured, profile still embedded: the user's state before migrating."""
    return replace(config, redis_url=redis_db, postgres_dsn=fresh_postgres_db).validated()


def _populate(cfg: Config, bulk: int = BULK) -> dict[str, Any]:
    services = Services(cfg)
    try:
        outcome = run_journey(services)
        log = services.get("audit", AuditService).log
        for start in range(0, bulk, 200):
            log.append_many(
                [Draft("bulk.record", None, {"i": i}, None) for i in range(start, start + 200)]
            )
        return outcome
    finally:
        services.close()


def _sqlite_rows(cfg: Config) -> list[tuple[int, str, str]]:
    with contextlib.closing(sqlite3.connect(cfg.path("audit.sqlite3"))) as conn:
        return [
            (int(s), str(r), str(h))
            for s, r, h in conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq")
        ]


def _postgres_rows(dsn: str) -> list[tuple[int, str, str]]:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        rows = conn.execute("SELECT seq, record, hash FROM custodia_audit.audit_log ORDER BY seq")
        return [(int(s), str(r), str(h)) for s, r, h in rows]


def _postgres_count(dsn: str) -> int:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        exists = conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = 'custodia_audit'"
        ).fetchone()
        if not exists:
            return -1
        row = conn.execute("SELECT count(*) FROM custodia_audit.audit_log").fetchone()
        return int(row[0]) if row else 0


def _files(home: Path) -> set[str]:
    return {
        str(p.relative_to(home)) for p in home.rglob("*") if not p.name.endswith(("-shm", "-wal"))
    }


@pytest.mark.server
def test_migrate_then_verify(servers: Config, options: MigrateOptions) -> None:
    embedded_rows = _sqlite_rows(servers)
    mirror = SqliteSessionMirror(servers.path("multiagent.sqlite3"), read_only=True)
    sessions = mirror.list()
    mirror.close()

    services = Services(servers)
    try:
        plan = plan_migration(services, options)
        assert not plan.problems
        assert plan.step("audit log").action == COPY
        assert plan.step("audit log").items == len(embedded_rows) == BULK + 1
        assert plan.step("sessions").items == len(sessions) == 1
        assert plan.step("memories").action == STAYS
        report = migrate(services, options)
    finally:
        services.close()
    assert report.step("audit log").state == "done"
    assert any("bootstrapped the audit schema" in note for note in report.notes)

    # Audit: the very same rows, and both chains verify.
    assert _postgres_rows(servers.postgres_dsn) == embedded_rows == _sqlite_rows(servers)
    server_profile = replace(servers, profile="server").validated()
    audit = AuditService.open(server_profile)
    try:
        assert audit.log.kind == "postgres"
        result = audit.verify()
        assert result.ok and result.records == len(embedded_rows)
        latest = audit.trust.latest(audit.log.log_id)
        assert latest is not None and latest.seq == len(embedded_rows)
        assert latest.head == embedded_rows[-1][2]
        # the checkpoint is stored in the server's table too (the configured role may)
        assert [c.seq for c in audit.log.checkpoints()] == [latest.seq]
    finally:
        audit.close()

    # Sessions: in the Redis L2, same JSON, with the TTL they have left.
    import redis

    client = redis.Redis.from_url(servers.redis_url, socket_timeout=5)
    try:
        for session in sessions:
            raw = client.get(f"custodia:session:{session.session_id}")
            assert raw is not None
            assert Session.from_json(raw.decode()).to_json() == session.to_json()
            assert 0 < client.ttl(f"custodia:session:{session.session_id}") <= 86_400
    finally:
        client.close()

    # The storage map of the server profile counts the same records, now in Postgres.
    services = Services(server_profile)
    try:
        rows = {r.kind: r for r in storage_map(server_profile, services)}
    finally:
        services.close()
    assert rows["audit log"].engine.startswith("Postgres")
    assert rows["audit log"].items == len(embedded_rows) and rows["audit log"].ok
    assert rows["sessions"].items == len(sessions)
    assert "1 in Redis L2" in rows["sessions"].note

    # A second run copies nothing new and still verifies (idempotent).
    services = Services(servers)
    try:
        again = migrate(services, options)
    finally:
        services.close()
    assert again.step("audit log").done == 0
    assert _postgres_rows(servers.postgres_dsn) == embedded_rows


@pytest.mark.server
def test_dry_run_changes_nothing(servers: Config, options: MigrateOptions) -> None:
    before = _files(servers.home)
    services = Services(servers)
    try:
        plan = plan_migration(services, options)
    finally:
        services.close()
    assert plan.dry_run and not plan.problems
    audit_step = plan.step("audit log")
    assert audit_step.items == BULK + 1 and "(bootstrap)" in audit_step.detail
    assert plan.step("sessions").items == 1
    assert _files(servers.home) == before  # no journal, no key, nothing new
    assert not servers.path(JOURNAL_FILE).exists()
    assert _postgres_count(servers.postgres_dsn) == -1  # not even bootstrapped
    import redis

    client = redis.Redis.from_url(servers.redis_url, socket_timeout=5)
    try:
        assert client.dbsize() == 0
    finally:
        client.close()


@pytest.mark.server
def test_cancelled_migration_resumes(servers: Config, options: MigrateOptions) -> None:
    embedded_rows = _sqlite_rows(servers)

    def cancel_midway(done: int, total: int, message: str) -> None:
        if message.startswith("audit log") and done > total // 2:
            progress.cancel()

    progress = Progress(callback=cancel_midway)
    services = Services(servers)
    try:
        with pytest.raises(CancelledError):
            migrate(services, options, progress)
    finally:
        services.close()
    copied = _postgres_rows(servers.postgres_dsn)
    assert 0 < len(copied) < len(embedded_rows)
    assert copied == embedded_rows[: len(copied)]  # a clean prefix, never half a batch
    assert servers.path(JOURNAL_FILE).exists()

    services = Services(servers)
    try:
        plan = plan_migration(services, options)
        assert plan.resumed and not plan.problems
        assert plan.step("audit log").items == len(embedded_rows) - len(copied)
        report = migrate(services, options, Progress())
    finally:
        services.close()
    assert report.resumed
    assert report.step("audit log").done == len(embedded_rows) - len(copied)
    assert report.step("sessions").state == "done earlier"
    assert _postgres_rows(servers.postgres_dsn) == embedded_rows
    audit = AuditService.open(replace(servers, profile="server"))
    try:
        assert audit.verify().ok
    finally:
        audit.close()


@pytest.mark.server
def test_refuses_to_merge_into_a_non_empty_audit_log(
    servers: Config, options: MigrateOptions
) -> None:
    assert options.roles is not None
    made = bootstrap(servers.postgres_dsn, roles=options.roles)
    other = PostgresAuditLog(made.app_dsn)
    try:
        other.append_many([Draft("elsewhere", None, {"n": 1}, None)])
    finally:
        other.close()

    services = Services(servers)
    try:
        plan = plan_migration(services, options)
        assert any("refusing to merge" in p for p in plan.problems)
        with pytest.raises(AuditMergeRefused, match="already holds 1 records"):
            migrate(services, options)
    finally:
        services.close()
    rows = _postgres_rows(servers.postgres_dsn)
    assert len(rows) == 1 and '"elsewhere"' in rows[0][1]
    assert len(_sqlite_rows(servers)) == BULK + 1  # the embedded copy is untouched


def test_refuses_to_copy_a_broken_embedded_chain(config: Config) -> None:
    with contextlib.closing(sqlite3.connect(config.path("audit.sqlite3"))) as conn:
        conn.execute("DROP TRIGGER audit_log_no_update")
        conn.execute(
            "UPDATE audit_log SET record = replace(record, '\"i\":2', '\"i\":9') WHERE seq = 4"
        )
        conn.commit()
    # A Postgres DSN nobody listens on: the chain is checked before any connection.
    target = replace(config, postgres_dsn="postgresql://nobody@127.0.0.1:9/none")
    services = Services(target)
    try:
        plan = plan_migration(services)
        assert any("seq 4" in p for p in plan.problems)
        with pytest.raises(BrokenChainError, match="seq 4"):
            migrate(services)
    finally:
        services.close()


def test_nothing_to_migrate_to_without_servers(config: Config) -> None:
    services = Services(config)
    try:
        with pytest.raises(MigrationError, match="no server is configured"):
            plan_migration(services)
    finally:
        services.close()


def test_semantic_memory_points_copy_with_ids_vectors_and_payloads(tmp_path: Path) -> None:
    """The Qdrant step, local to local: no Qdrant server ships for these machines."""
    embedder = HashingEmbedder(64)
    source = QdrantSemanticMemory(embedder, path=tmp_path / "a")
    target = QdrantSemanticMemory(embedder, path=tmp_path / "b")
    try:
        items = [
            MemoryItem(f"result {i} about csv", session=f"s{i % 3}", expert="coder")
            for i in range(40)
        ]
        source.add_many("agent_results", items)
        source.add(
            "session_memory",
            MemoryItem("Task: csv. Outcome: done", session="s1", extra={"phase": "done"}),
        )
        progress = Progress()
        assert copy_semantic_memory(source, target, progress) == 41
        assert progress.done == 41
        for name in source.collections:
            a, b = sorted(source.points(name)), sorted(target.points(name))
            assert [(i, p) for i, _, p in a] == [(i, p) for i, _, p in b]
            for (_, va, _), (_, vb, _) in zip(a, b, strict=True):
                assert np.allclose(va, vb, atol=1e-6)
        hits_a = source.search("agent_results", "result 7 about csv", limit=5, session="s1")
        hits_b = target.search("agent_results", "result 7 about csv", limit=5, session="s1")
        assert hits_a[0].text == hits_b[0].text == "result 7 about csv"  # filter inside too
        assert [round(h.score, 5) for h in hits_a] == [round(h.score, 5) for h in hits_b]
    finally:
        source.close()
        target.close()


@pytest.mark.server
def test_conversation_vectors_are_rebuilt_on_a_chroma_server(
    config: Config,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    target = replace(config, chroma_url=chroma_server.url)
    services = Services(target)
    try:
        plan = plan_migration(services)
        step = plan.step("conversation vectors")
        assert step.items == 4 and not step.problem  # two conversations of two messages
        report = migrate(services)
        assert report.step("conversation vectors").done == 4
        again = migrate(services)  # deterministic ids: nothing added twice
        assert again.step("conversation vectors").done == 0
    finally:
        services.close()
    server = Services(replace(target, profile="server"))
    try:
        from backends.conversations import ConversationAgent

        agent = server.get("conversations", ConversationAgent)
        assert agent.vectors().kind == "chroma-server" and agent.vectors().count() == 4
        hits = agent.search("penicillin allergy", k=2)
        assert hits and "penicillin" in hits[0].text
    finally:
        server.close()


def test_cli_dry_run_and_storage(
    config: Config, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from backends.cli import main

    for key in ("CUSTODIA_PROFILE", "CUSTODIA_REDIS_URL", "CUSTODIA_POSTGRES_DSN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CUSTODIA_HOME", str(config.home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    assert main(["migrate", "--to", "server", "--dry-run"]) == 1  # no server configured
    assert "no server is configured" in capsys.readouterr().err
    monkeypatch.setenv("CUSTODIA_POSTGRES_DSN", "postgresql://nobody@127.0.0.1:9/none")
    assert main(["migrate", "--to", "server", "--dry-run"]) == 1  # unreachable: a problem
    out = capsys.readouterr().out
    assert "Dry run" in out and "audit log" in out and "problem: audit log" in out
    assert main(["storage"]) == 0
    out = capsys.readouterr().out
    assert main(["doctor", "--storage"]) in (0, 1)  # the unreachable DSN is a failed check
    doctor_out = capsys.readouterr().out
    assert "Storage map:" in doctor_out and "pseudonym keys" in doctor_out
    assert "audit log" in out and "provable" in out and f"{BULK + 1:,} records" in out


@pytest.mark.server
def test_graph_is_rebuilt_on_the_bolt_server(
    config: Config, bolt_uri: str, bolt_driver: Any
) -> None:
    from backends.stores.graph.bolt import BoltGraph
    from backends.stores.graph.sqlite import SqliteGraph

    namespace = f"migrate-{uuid.uuid4().hex[:8]}"
    options = MigrateOptions(bolt_driver=bolt_driver, graph_namespace=namespace)
    target = replace(config, neo4j_uri=bolt_uri)
    embedded = SqliteGraph(config.path("tutor-graph.sqlite3"))
    try:
        expected = embedded.counts()
    finally:
        embedded.close()
    assert expected.entities and sum(expected.relations.values())
    services = Services(target)
    try:
        plan = plan_migration(services, options)
        step = plan.step("graph")
        assert step.action == "rebuild" and not step.problem
        assert step.items == sum(expected.relations.values())
        report = migrate(services, options)
    finally:
        services.close()
    assert report.step("graph").done == sum(expected.relations.values())
    graph = BoltGraph(bolt_uri, namespace=namespace, driver=bolt_driver, timeout=10.0)
    try:
        assert graph.counts() == expected
    finally:
        graph.clear()
        graph.close()


def test_a_journal_of_another_version_starts_over_and_an_unreadable_one_is_refused(
    config: Config,
) -> None:
    target = replace(config, postgres_dsn="postgresql://nobody@127.0.0.1:9/none")
    journal = config.path(JOURNAL_FILE)
    services = Services(target)
    try:
        journal.write_text(json.dumps({"version": 99, "steps": {"audit log": {"state": "done"}}}))
        assert not plan_migration(services).resumed  # not this format: nothing is resumed
        journal.write_text('{"version": 1, "steps": ')  # torn by hand
        with pytest.raises(MigrationError, match="unreadable migration journal"):
            plan_migration(services)
    finally:
        services.close()


@pytest.mark.server
def test_the_journal_keeps_the_first_release_format_and_resumes_from_it(
    servers: Config, options: MigrateOptions
) -> None:
    """The journal as the first release wrote it (its keys, the target's fingerprint, the
    audit link, ``copied_seq``) is what a cancelled migration leaves, and such a file resumes."""
    embedded_rows = _sqlite_rows(servers)

    def cancel_midway(done: int, total: int, message: str) -> None:
        if message.startswith("audit log") and done > total // 2:
            progress.cancel()

    progress = Progress(callback=cancel_midway)
    services = Services(servers)
    try:
        with pytest.raises(CancelledError):
            migrate(services, options, progress)
    finally:
        services.close()
    data = json.loads(servers.path(JOURNAL_FILE).read_text())
    assert set(data) == {"version", "started", "steps", "audit_link", "target", "finished"}
    assert data["version"] == 1 and data["finished"] is None
    assert set(data["target"]) == {
        "cache", "redis", "audit", "postgres", "graph", "neo4j", "qdrant", "chroma"
    }  # fmt: skip
    assert data["target"]["audit"] == "postgres" and data["target"]["cache"] == "redis"
    assert set(data["audit_link"]) == {"source_log_id", "target_log_id"}
    assert data["steps"]["sessions"]["state"] == "done"
    audit = data["steps"]["audit log"]
    assert audit["state"] == "running"
    copied = len(_postgres_rows(servers.postgres_dsn))
    assert audit["copied_seq"] == copied and 0 < copied < len(embedded_rows)

    # Written back as the first release would have (plain json.dump, no extra keys): resumes.
    servers.path(JOURNAL_FILE).write_text(json.dumps(data))
    services = Services(servers)
    try:
        report = migrate(services, options)
    finally:
        services.close()
    assert report.resumed and report.step("sessions").state == "done earlier"
    assert report.step("audit log").done == len(embedded_rows) - copied
    assert _postgres_rows(servers.postgres_dsn) == embedded_rows
