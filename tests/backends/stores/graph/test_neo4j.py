"""The graph role's suite on a real Neo4j 5.26 Community (the harness's launcher), plus what only
Neo4j does: READ sessions that refuse writes, the schema bootstrap, large batches, typed errors
for a wrong password or database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from backends.stores.graph import (
    CYPHER,
    MAX_CALL_ROWS,
    OPERATIONS,
    Graph,
)
from backends.stores.graph.bolt import (
    NEO4J_5,
    NEO4J_5_BOOTSTRAP,
    NEO4J_5_CYPHER,
    BoltGraph,
    GraphAuthError,
    GraphDatabaseError,
)
from tests.backends.stores.graph.test_bolt import RecordingDriver
from tests.contract.graph import GraphContract, MakeGraph, S, rel
from tests.harness.servers import Neo4jServer


@pytest.mark.server
class TestNeo4jGraph(GraphContract):
    @pytest.fixture
    def make_graph(self, neo4j_server: Neo4jServer) -> Iterator[MakeGraph]:
        made: list[BoltGraph] = []

        def make(namespace: str) -> Graph:
            user, password = neo4j_server.auth
            graph = BoltGraph(
                neo4j_server.uri, user=user, password=password, namespace=namespace, timeout=20
            )
            made.append(graph)
            return graph

        yield make
        for graph in made:
            graph.close()

    def test_it_is_neo4j_with_its_own_dialect(self, graph: Graph) -> None:
        assert isinstance(graph, BoltGraph)
        graph.counts()
        assert graph.server_agent.startswith("Neo4j/5.26.")
        assert graph.dialect is NEO4J_5 and graph.splices_parameters is False
        assert graph.batch_limits()[0] == MAX_CALL_ROWS

    def test_a_write_through_the_read_path_is_refused_by_neo4j(self, graph: Graph) -> None:
        """Our reads can never write: even a write text sent down the read path (below the
        allow-list, which would refuse it first) is refused by Neo4j's READ session."""
        import neo4j

        assert isinstance(graph, BoltGraph)
        graph.replace_scope(S, [rel("a", "b")], "1" * 64)
        write = CYPHER["merge_entities"]
        for name, op in OPERATIONS.items():
            if op.access != "read":
                continue
            with pytest.raises(neo4j.exceptions.ClientError) as refused:
                graph._send(op, write, {"ns": graph.namespace, "names": [f"sneaked-{name}"]})
            assert refused.value.code == "Neo.ClientError.Statement.AccessMode", name
        assert graph.counts().entities == 2  # nothing was written

    def test_reads_are_read_sessions_and_writes_write_sessions(self, graph: Graph) -> None:
        import neo4j

        assert isinstance(graph, BoltGraph)
        spy = RecordingDriver(graph._get_driver())
        graph._driver = spy
        graph.replace_scope(S, [rel("a", "b"), rel("b", "c")], "1" * 64)
        graph.neighbours(["a"], [S])
        graph.two_hop("a", [S])
        graph.path("a", "c", [S])
        graph.counts()
        by_text = {text: op for op, text in NEO4J_5_CYPHER.items()}
        sent = {by_text[t] for t, _ in spy.calls if t in by_text}
        assert sent >= {"neighbours", "two_hop", "path", "merge_relations", "count_entities"}
        for text, routing in spy.calls:
            name = by_text.get(text)
            if name is None:
                assert text in NEO4J_5_BOOTSTRAP and routing == neo4j.RoutingControl.WRITE
                continue
            read = OPERATIONS[name].access == "read"
            assert routing == (neo4j.RoutingControl.READ if read else neo4j.RoutingControl.WRITE)
        graph._driver = spy.driver

    def test_the_bootstrap_is_idempotent_and_the_name_is_unique(
        self, graph: Graph, neo4j_driver: Any
    ) -> None:
        import neo4j

        assert isinstance(graph, BoltGraph)
        graph.merge_entities(["warfarin"])  # the first write bootstraps
        graph.bootstrap()
        again = BoltGraph(
            graph.uri, user=graph._user, password=graph._password, namespace=graph.namespace
        )
        try:
            again.bootstrap()  # a second adapter, the schema already there: no error
        finally:
            again.close()
        records, _, _ = neo4j_driver.execute_query(
            "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties"
        )
        constraints = {r["name"]: (r["type"], r["labelsOrTypes"], r["properties"]) for r in records}
        assert constraints["custodia_entity_key"] == ("UNIQUENESS", ["Entity"], ["ns", "name"])
        assert constraints["custodia_meta_key"] == ("UNIQUENESS", ["GraphMeta"], ["ns", "scope"])
        records, _, _ = neo4j_driver.execute_query(
            "SHOW INDEXES YIELD name, labelsOrTypes, properties, state"
        )
        indexes = {r["name"]: (r["labelsOrTypes"], r["properties"], r["state"]) for r in records}
        assert indexes["custodia_entity_name"] == (["Entity"], ["name"], "ONLINE")
        assert indexes["custodia_related_scope"] == (["RELATED"], ["scope"], "ONLINE")
        with pytest.raises(neo4j.exceptions.ClientError, match="already exists"):
            neo4j_driver.execute_query(
                "CREATE (:Entity {ns: $ns, name: 'warfarin'})", ns=graph.namespace
            )
        assert graph.counts().entities == 1

    def test_batches_are_sized_for_neo4j(self, graph: Graph) -> None:
        assert isinstance(graph, BoltGraph)
        spy = RecordingDriver(graph._get_driver())
        graph._driver = spy
        relations = [rel(f"n{i:04d}", f"n{i + 1:04d}", i + 1) for i in range(1_500)]
        graph.replace_scope(S, relations, "5" * 64)
        graph._driver = spy.driver
        writes = [
            t for t, _ in spy.calls if t in (CYPHER["merge_entities"], CYPHER["merge_relations"])
        ]
        assert len(writes) == 4  # 1,501 entities and 1,500 relations, 1,000 rows a request
        assert graph.counts().relations == {S: 1_500}
        path = graph.path("n0000", "n0003", [S])
        assert path is not None and path.names == ("n0000", "n0001", "n0002", "n0003")

    def test_a_wrong_password_is_a_typed_error(self, neo4j_server: Neo4jServer) -> None:
        graph = BoltGraph(neo4j_server.uri, user="neo4j", password="not-the-password", timeout=10)
        try:
            with pytest.raises(GraphAuthError, match="refused user 'neo4j'"):
                graph.counts()
        finally:
            graph.close()

    def test_a_wrong_database_is_a_typed_error(self, neo4j_server: Neo4jServer) -> None:
        user, password = neo4j_server.auth
        graph = BoltGraph(
            neo4j_server.uri, user=user, password=password, database="nosuchdb", timeout=10
        )
        try:
            with pytest.raises(GraphDatabaseError, match="no database 'nosuchdb'"):
                graph.counts()
        finally:
            graph.close()
        graph = BoltGraph(neo4j_server.uri, user=user, password=password, database="neo4j")
        try:
            assert graph.counts().entities >= 0  # the default database by its name
        finally:
            graph.close()
