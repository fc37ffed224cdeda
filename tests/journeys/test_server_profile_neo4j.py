"""The scripted journey on the whole server profile with a real Neo4j 5 (issue 18).

Redis (session L2, tickets, feed), Postgres (the audit log through the application role of a
fresh bootstrap), a ``chroma run`` server (conversation and knowledge-base vectors) and Neo4j
5.26 Community (the tutor's graph): what the user sees is what the embedded profile shows, and
the storage map counts the same items on the servers. (The FalkorDB variant, without the
Chroma server, is tests/journeys/test_dual_profile.py.)
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
from backends.stores.graph.bolt import NEO4J_5, BoltGraph
from tests.harness.chroma import ChromaServer, chroma_server  # noqa: F401
from tests.harness.servers import Neo4jServer
from tests.journeys.script import run_journey
from tests.parts import audit_service


@pytest.fixture
def redis_db(redis_url: str) -> Iterator[str]:
    import redis

    url = redis_url.rsplit("/", 1)[0] + "/5"
    client = redis.Redis.from_url(url, socket_timeout=5)
    client.flushdb()
    yield url
    client.flushdb()
    client.close()


def _journey(
    cfg: Config, graph: BoltGraph | None = None
) -> tuple[dict[str, Any], dict[str, StorageRow]]:
    services = Services(cfg)
    try:
        if graph is not None:  # the tutor in this test's own namespace on Neo4j
            from backends.tutor.service import TutorService

            services.service(
                "tutor",
                lambda: TutorService(
                    cfg,
                    embedder=lambda: services.embedder,
                    chat=lambda: services.chat,
                    audit=lambda: audit_service(services),
                    graph=graph,
                    namespace=graph.namespace,
                ),
                TutorService.close,
            )
        outcome = run_journey(services)
        return outcome, {r.kind: r for r in storage_map(cfg, services)}
    finally:
        services.close()


@pytest.mark.server
def test_the_journey_on_neo4j_redis_postgres_and_a_chroma_server(
    tmp_path: Path,
    redis_db: str,
    fresh_postgres_db: str,
    neo4j_server: Neo4jServer,
    chroma_server: ChromaServer,  # noqa: F811
) -> None:
    embedded = Config(home=tmp_path / "embedded", embedder="hashing", chat_model="scripted")
    made = bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"n{uuid.uuid4().hex[:10]}"))
    user, password = neo4j_server.auth
    server = Config(
        home=tmp_path / "server",
        profile="server",
        redis_url=redis_db,
        postgres_dsn=dsn_url(made.app_dsn),
        neo4j_uri=neo4j_server.uri,
        neo4j_user=user,
        neo4j_password=password,
        chroma_url=chroma_server.url,
        embedder="hashing",
        chat_model="scripted",
    ).validated()
    assert (server.cache, server.audit, server.graph) == ("redis", "postgres", "neo4j")

    mine, embedded_map = _journey(embedded.validated())
    graph = BoltGraph(
        neo4j_server.uri,
        user=user,
        password=password,
        namespace=f"journey-{uuid.uuid4().hex[:8]}",
        timeout=20,
    )
    try:
        theirs, server_map = _journey(server, graph)
        assert graph.dialect is NEO4J_5
        relations = sum(graph.counts().relations.values())
    finally:
        graph.clear()
        graph.close()

    assert theirs == mine
    assert mine["tutor"]["cited"] and "graph" in mine["tutor"]["methods"]
    assert not theirs["tutor"]["degraded"]
    for kind, row in embedded_map.items():
        other = server_map[kind]
        assert row.ok and other.ok, (kind, row.health, other.health)
        assert other.items == row.items, kind
    assert server_map["graph"].engine == f"Bolt server (Neo4j {neo4j_server.version} community)"
    assert server_map["graph"].items
    assert relations == server_map["graph"].items
    assert server_map["audit log"].engine.startswith("Postgres")
