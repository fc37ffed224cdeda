"""``custodia migrate --to server`` with a real Neo4j 5 as the graph server (issue 18).

The tutor's graph is *derived*: entities are the curated terms and relations their
co-occurrence in the knowledge base's chunks, so a move to Neo4j — from the embedded SQLite graph
or from another Bolt server — rebuilds it from the knowledge base (which stays in the data dir)
rather than copying graph rows. These tests show the rebuilt graph on Neo4j holds exactly what
the embedded one held, and that the tutor on the server profile answers from it.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.migrate import MigrateOptions, migrate, plan_migration
from backends.services import Services
from backends.stores.graph.bolt import NEO4J_5, BoltGraph
from backends.stores.graph.sqlite import SqliteGraph
from tests.harness.servers import Neo4jServer
from tests.journeys.script import TUTOR_QUESTION, TUTOR_USER, run_journey

pytestmark = pytest.mark.server


def _config(home: Path) -> Config:
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir made by the scripted journey on the embedded profile (SQLite graph)."""
    home = tmp_path_factory.mktemp("template-neo4j") / "home"
    home.mkdir(mode=0o700)
    services = Services(_config(home))
    try:
        run_journey(services)
    finally:
        services.close()
    return home


@pytest.fixture
def config(tmp_path: Path, template: Path) -> Config:
    home = tmp_path / "home"
    shutil.copytree(template, home)
    return _config(home)


def _neo4j(config: Config, server: Neo4jServer) -> Config:
    user, password = server.auth
    return replace(config, neo4j_uri=server.uri, neo4j_user=user, neo4j_password=password)


def test_the_graph_is_rebuilt_on_neo4j_and_the_tutor_answers_from_it(
    config: Config, neo4j_server: Neo4jServer
) -> None:
    from backends.tutor.service import TutorService

    namespace = f"migrate-{uuid.uuid4().hex[:8]}"
    embedded = SqliteGraph(config.path("tutor-graph.sqlite3"))
    try:
        expected = embedded.counts()
        expected_neighbours = embedded.neighbours(["pneumonia"], ["shared"], limit=20)
    finally:
        embedded.close()
    assert expected.entities and sum(expected.relations.values())

    target = _neo4j(config, neo4j_server)
    options = MigrateOptions(graph_namespace=namespace)
    services = Services(target)
    try:
        plan = plan_migration(services, options)
        step = plan.step("graph")
        assert step.action == "rebuild" and not step.problem
        report = migrate(services, options)
    finally:
        services.close()
    assert report.step("graph").done == sum(expected.relations.values())

    user, password = neo4j_server.auth
    graph = BoltGraph(neo4j_server.uri, user=user, password=password, namespace=namespace)
    try:
        assert graph.counts() == expected
        assert graph.neighbours(["pneumonia"], ["shared"], limit=20) == expected_neighbours
        assert graph.dialect is NEO4J_5
        # the tutor on the server profile answers from Neo4j, without rebuilding it again
        server = replace(target, profile="server").validated()
        assert server.graph == "neo4j"
        services = Services(server)
        try:
            tutor = TutorService(
                server,
                embedder=lambda: services.embedder,
                chat=lambda: services.chat,
                audit=lambda: services.get("audit", AuditService),
                graph=graph,
                namespace=namespace,
            )
            try:
                tutor.prepare()
                turn = tutor.ask(TUTOR_QUESTION, user=TUTOR_USER)
            finally:
                tutor.close()
        finally:
            services.close()
        assert not turn.retrieval.degraded
        assert turn.retrieval.methods["graph"], "the graph method found nothing on Neo4j"
        assert any("graph" in p.methods for p in turn.passages)
        assert graph.counts() == expected
    finally:
        graph.clear()
        graph.close()


def test_a_wrong_neo4j_password_is_named_in_the_plan(
    config: Config, neo4j_server: Neo4jServer
) -> None:
    target = replace(_neo4j(config, neo4j_server), neo4j_password="not-the-password")
    options = MigrateOptions(graph_namespace=f"migrate-{uuid.uuid4().hex[:8]}")
    services = Services(target)
    try:
        plan = plan_migration(services, options)
    finally:
        services.close()
    step = plan.step("graph")
    assert step.problem and "refused user" in step.problem, step
