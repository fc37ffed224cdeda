"""The graph role's suite on FalkorDB's Bolt endpoint (the session's one driver), and what the
Bolt adapter does before any server answers."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from backends.stores.graph import (
    CYPHER,
    OPERATIONS,
    Graph,
    GraphQueryRefused,
    GraphUnavailableError,
)
from backends.stores.graph.bolt import (
    NEO4J_5,
    NEO4J_5_BOOTSTRAP,
    PORTABLE,
    BoltGraph,
    dialect_for,
)
from tests.contract.graph import GraphContract, MakeGraph, S, rel
from tests.harness.servers import free_port


class RecordingDriver:
    """The session's real driver, noting the routing of each call (a spy, not a mock)."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.calls: list[tuple[str, Any]] = []

    def execute_query(self, query: Any, **kwargs: Any) -> Any:
        self.calls.append((str(getattr(query, "text", query)), kwargs.get("routing_")))
        return self.driver.execute_query(query, **kwargs)

    def close(self) -> None:  # the session owns the real driver
        pass


@pytest.mark.server
class TestBoltGraph(GraphContract):
    @pytest.fixture
    def make_graph(self, bolt_uri: str, bolt_driver: Any) -> MakeGraph:
        def make(namespace: str) -> Graph:
            return BoltGraph(bolt_uri, namespace=namespace, timeout=10, driver=bolt_driver)

        return make

    def test_reads_are_routed_read_and_writes_write(
        self, bolt_uri: str, bolt_driver: Any, namespace: str
    ) -> None:
        spy = RecordingDriver(bolt_driver)
        graph = BoltGraph(bolt_uri, namespace=namespace, timeout=10, driver=spy)
        try:
            graph.replace_scope(S, [rel("a", "b")], "1" * 64)
            graph.neighbours(["a"], [S])
            graph.path("a", "b", [S])
            graph.counts()
        finally:
            graph.clear()
        import neo4j

        by_text = {text: op for op, text in CYPHER.items()}
        assert {by_text[text] for text, _ in spy.calls} >= {"neighbours", "merge_relations"}
        for text, routing in spy.calls:
            read = OPERATIONS[by_text[text]].access == "read"
            expected = neo4j.RoutingControl.READ if read else neo4j.RoutingControl.WRITE
            assert routing == expected, (by_text[text], routing)

    def test_the_probe_knows_whether_the_server_splices_parameters(self, graph: Graph) -> None:
        assert isinstance(graph, BoltGraph)
        graph.counts()
        assert graph.splices_parameters in (True, False)  # FalkorDB: True, Neo4j: False


def test_dialects_are_chosen_by_the_server_agent_and_every_text_is_a_constant() -> None:
    assert dialect_for("Neo4j/5.26.30", "neo4j") is NEO4J_5
    assert dialect_for("Neo4j/5.13.0") is PORTABLE  # FalkorDB's agent: no database named
    assert dialect_for("Neo4j/5.13.0", "neo4j", splices_parameters=True) is PORTABLE
    assert dialect_for("Neo4j/4.4.1", "neo4j") is PORTABLE and dialect_for("") is PORTABLE
    for dialect in (PORTABLE, NEO4J_5):
        assert set(dialect.queries) == set(OPERATIONS)
        for name, text in dialect.queries.items():
            assert set(re.findall(r"\$(\w+)", text)) == set(OPERATIONS[name].params), name
    graph = BoltGraph("bolt://127.0.0.1:1", namespace="t", timeout=0.2)
    try:
        for text in NEO4J_5_BOOTSTRAP:  # the bootstrap is not callable from outside
            with pytest.raises(GraphQueryRefused):
                graph.execute(text, {})
    finally:
        graph.close()


def test_a_bolt_graph_refuses_foreign_text_without_connecting_and_fails_typed_when_down() -> None:
    port = free_port()
    graph = BoltGraph(f"bolt://127.0.0.1:{port}", namespace="down", timeout=0.5)
    try:
        with pytest.raises(GraphQueryRefused):
            graph.execute("MATCH (n) DETACH DELETE n", {})
        assert graph._driver is None  # nothing was even connected
        started = time.perf_counter()
        with pytest.raises(GraphUnavailableError, match="not reachable"):
            graph.neighbours(["a"], [S])
        assert time.perf_counter() - started < 10
    finally:
        graph.close()
