"""The same scripted user journey on the embedded profile and on the server profile.

Embedded: SQLite, in-process TTL store and bus, local Chroma, Qdrant local mode.
Server: Redis (session L2, tickets, pub/sub feed), Postgres (audit log, application role of a
fresh bootstrap), the Bolt server (graph); Chroma and Qdrant stay local (DESIGN.md: no Qdrant
server on these machines). What the user sees must be identical, and the storage maps of the
two data dirs must count the same items — on different engines.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.migrate import dsn_url
from backends.services import Services
from backends.storage_map import StorageRow, storage_map
from backends.stores.audit_log.postgres import Roles, bootstrap
from tests.journeys.script import run_journey, tutor_available
from tests.parts import audit_service


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[str]:
    import redis

    url = redis_url.rsplit("/", 1)[0] + "/6"
    client = redis.Redis.from_url(url, socket_timeout=5)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


def _use_bolt_graph(services: Services, driver: Any, namespace: str) -> None:
    """The tutor of these services on the harness's one long-lived Bolt driver (DESIGN.md:
    a second driver makes FalkorDB hang), in a namespace of this test's own."""
    from backends.stores.graph.bolt import BoltGraph
    from backends.tutor.service import TutorService

    cfg = services.config
    graph = BoltGraph(cfg.neo4j_uri, namespace=namespace, driver=driver, timeout=10.0)
    services.service(
        "tutor",
        lambda: TutorService(
            cfg,
            embedder=lambda: services.embedder,
            chat=lambda: services.chat,
            audit=lambda: audit_service(services),
            graph=graph,
            namespace=namespace,
        ),
        TutorService.close,
    )


def _journey(
    cfg: Config, driver: Any = None, namespace: str = ""
) -> tuple[dict[str, Any], dict[str, StorageRow]]:
    services = Services(cfg)
    try:
        if driver is not None and tutor_available():
            _use_bolt_graph(services, driver, namespace)
        outcome = run_journey(services)
        rows = {r.kind: r for r in storage_map(cfg, services)}
        return outcome, rows
    finally:
        services.close()


@pytest.mark.server
def test_the_same_journey_on_both_profiles(
    tmp_path: Path, redis_db: str, fresh_postgres_db: str, bolt_uri: str, bolt_driver: Any
) -> None:
    embedded = Config(home=tmp_path / "embedded", embedder="hashing", chat_model="scripted")
    made = bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"j{uuid.uuid4().hex[:10]}"))
    server = Config(
        home=tmp_path / "server",
        profile="server",
        redis_url=redis_db,
        postgres_dsn=dsn_url(made.app_dsn),
        neo4j_uri=bolt_uri,
        embedder="hashing",
        chat_model="scripted",
    ).validated()
    assert (server.cache, server.audit, server.graph) == ("redis", "postgres", "neo4j")

    mine, embedded_map = _journey(embedded.validated())
    theirs, server_map = _journey(server, bolt_driver, f"journey-{uuid.uuid4().hex[:8]}")

    # What the user saw is the same, step by step.
    assert theirs["task"] == mine["task"]
    assert theirs["memory"] == mine["memory"]
    assert theirs["conversations"] == mine["conversations"]
    assert theirs.get("tutor") == mine.get("tutor")
    assert theirs["audit"] == mine["audit"]
    assert theirs == mine
    assert mine["task"]["phase"] == "done" and mine["task"]["events"][-1] == "session_finished"
    assert mine["memory"]["used"] and mine["conversations"]["search"]
    assert mine["audit"]["ok"] and mine["audit"]["readable"][-1] == "sealed"
    if tutor_available():
        assert mine["tutor"]["cited"] and "graph" in mine["tutor"]["methods"]
        assert not mine["tutor"]["degraded"]

    # Every store holds the same items; the server ones really are on the servers.
    for kind, row in embedded_map.items():
        other = server_map[kind]
        assert row.ok and other.ok, (kind, row.health, other.health)
        assert other.items == row.items, kind
    assert server_map["sessions"].engine == "SQLite (WAL) + Redis L2"
    assert "1 in Redis L2" in server_map["sessions"].note
    assert server_map["tickets"].engine.startswith("Redis")
    assert server_map["tickets"].items and server_map["tickets"].items > 0
    assert server_map["audit log"].engine.startswith("Postgres")
    assert server_map["audit log"].where.startswith("postgresql://")
    assert server_map["graph"].engine.startswith("Bolt") and server_map["graph"].items
    assert embedded_map["graph"].engine.startswith("SQLite")
