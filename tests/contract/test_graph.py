"""Contract suite of the graph role (CT5): one abstract class, one subclass per implementation.

Every implementation runs only its constant operations: foreign texts are refused before
anything is sent, parameters are typed and travel as parameters (a name made of Cypher and SQL
punctuation is stored and read back verbatim), relations and their reads are scoped, and each
test works in its own namespace, cleared afterwards with the constant ``clear`` operation.

The Bolt subclass runs twice: on a real Neo4j 5.26 Community (the harness's launcher) and on
FalkorDB's Bolt endpoint with the session's one driver (see DESIGN.md for FalkorDB's limits);
both are marked ``server``. The Neo4j class adds what only Neo4j does: READ sessions that refuse
writes, the schema bootstrap, large batches, and typed errors for a wrong password or database.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.stores.graph import (
    CYPHER,
    MAX_CALL_ROWS,
    OPERATIONS,
    SQL,
    Graph,
    GraphParameterError,
    GraphQueryRefused,
    GraphUnavailableError,
    Relation,
)
from backends.stores.graph.bolt import (
    NEO4J_5,
    NEO4J_5_BOOTSTRAP,
    NEO4J_5_CYPHER,
    PORTABLE,
    BoltGraph,
    GraphAuthError,
    GraphDatabaseError,
    dialect_for,
)
from backends.stores.graph.sqlite import SqliteGraph
from tests.harness.servers import Neo4jServer, free_port

MakeGraph = Callable[[str], Graph]
S = "shared"
A = "user:ana"
NASTY = [
    "x'}) DETACH DELETE n //",
    "'; DROP TABLE relations; --",
    'quote " and \\ backslash',
    "it's",
    "\\'",
    "a\\nb",
    "ünïcödé ✓",
]


def rel(a: str, b: str, weight: int = 1, scope: str = S, sources: tuple[str, ...] = ()) -> Relation:
    return Relation(a, b, scope, weight, sources or (f"c:{a}-{b}",))


class GraphContract:
    """The tests; subclasses provide ``make_graph`` (a graph in a given namespace)."""

    @pytest.fixture
    def make_graph(self) -> MakeGraph:
        raise NotImplementedError

    @pytest.fixture
    def namespace(self) -> str:
        return f"test-{uuid.uuid4().hex[:12]}"

    @pytest.fixture
    def graph(self, make_graph: MakeGraph, namespace: str) -> Iterator[Graph]:
        graph = make_graph(namespace)
        yield graph
        graph.clear()

    # -- writing and counting ----------------------------------------------------------------
    def test_merge_replace_and_count(self, graph: Graph) -> None:
        assert graph.counts().entities == 0
        graph.merge_entities(["a", "b", "a"])
        assert graph.counts().entities == 2
        graph.replace_scope(S, [rel("a", "b", 2), rel("b", "c")], "1" * 64)
        graph.replace_scope(A, [rel("a", "d", 5, A)], "2" * 64)
        counts = graph.counts()
        assert counts.entities == 4
        assert counts.relations == {S: 2, A: 1}
        assert graph.digest(S) == "1" * 64 and graph.digest("user:nobody") is None
        # replacing a scope makes it exactly the new set and leaves other scopes alone
        graph.replace_scope(S, [rel("c", "b", 7)], "3" * 64)
        assert graph.counts().relations == {S: 1, A: 1}
        assert [(n.target, n.weight) for n in graph.neighbours(["b"], [S])] == [("c", 7)]
        assert graph.digest(S) == "3" * 64

    def test_batches_above_fifty_rows(self, graph: Graph) -> None:
        relations = [rel(f"e{i:03d}", f"e{i + 1:03d}", i + 1) for i in range(120)]
        graph.replace_scope(S, relations, "4" * 64)
        assert graph.counts().relations == {S: 120}
        assert graph.counts().entities == 121
        top = graph.neighbours(["e060"], [S])
        assert [(n.target, n.weight) for n in top] == [("e061", 61), ("e059", 60)]

    # -- reading -----------------------------------------------------------------------------
    def test_neighbours_are_scoped_ordered_and_carry_their_sources(self, graph: Graph) -> None:
        graph.replace_scope(
            S,
            [rel("warfarin", "INR", 5, sources=("kb/inr#1", "kb/w#2")), rel("warfarin", "K", 2)],
            "1" * 64,
        )
        graph.replace_scope(A, [rel("warfarin", "zebra", 9, A)], "2" * 64)
        shared = graph.neighbours(["warfarin"], [S])
        assert [(n.source, n.target, n.scope, n.weight) for n in shared] == [
            ("warfarin", "INR", S, 5),
            ("warfarin", "K", S, 2),
        ]
        assert set(shared[0].sources) == {"kb/inr#1", "kb/w#2"}
        both = graph.neighbours(["warfarin"], [S, A])
        assert [n.target for n in both] == ["zebra", "INR", "K"]
        assert [n.target for n in graph.neighbours(["warfarin"], [S, A], limit=1)] == ["zebra"]
        assert graph.neighbours(["warfarin"], ["user:bob"]) == []
        assert graph.neighbours([], [S]) == []

    def test_between_returns_the_relations_among_names(self, graph: Graph) -> None:
        graph.replace_scope(S, [rel("a", "b", 2), rel("b", "c", 3), rel("c", "d")], "1" * 64)
        found = graph.between(["a", "b", "c"], [S])
        assert sorted((r.a, r.b, r.weight) for r in found) == [("a", "b", 2), ("b", "c", 3)]
        assert graph.between(["a"], [S]) == []

    def test_two_hop(self, graph: Graph) -> None:
        graph.replace_scope(S, [rel("a", "b", 2), rel("b", "c", 3), rel("x", "y")], "1" * 64)
        paths = graph.two_hop("a", [S])
        assert paths[0] == (("a", "b"), 2)
        assert (("a", "b", "c"), 5) in paths
        assert all(p[0][0] == "a" and "x" not in p[0] for p in paths)

    def test_shortest_path_is_scoped(self, graph: Graph) -> None:
        graph.replace_scope(
            S, [rel("a", "b"), rel("b", "c"), rel("c", "d"), rel("x", "y")], "1" * 64
        )
        graph.replace_scope(A, [rel("a", "d", 1, A)], "2" * 64)
        path = graph.path("a", "d", [S])
        assert path is not None and path.names == ("a", "b", "c", "d") and path.hops == 3
        assert path.sources[0] == ("c:a-b",)
        shortcut = graph.path("a", "d", [S, A])
        assert shortcut is not None and shortcut.names == ("a", "d")
        assert graph.path("a", "x", [S]) is None
        assert graph.path("a", "a", [S]) is None

    # -- safety ------------------------------------------------------------------------------
    def test_values_travel_as_parameters_and_come_back_verbatim(self, graph: Graph) -> None:
        relations = [rel(name, "anchor", i + 1, sources=(name,)) for i, name in enumerate(NASTY)]
        graph.replace_scope(S, relations, "1" * 64)
        graph.replace_scope(NASTY[0], [rel(NASTY[1], "anchor", 1, NASTY[0])], "2" * 64)
        counts = graph.counts()
        assert counts.entities == len(NASTY) + 1  # nothing was deleted or dropped
        assert counts.relations == {S: len(NASTY), NASTY[0]: 1}
        seen = graph.neighbours(["anchor"], [S])
        assert sorted(n.target for n in seen) == sorted(NASTY)
        assert all(n.sources == (n.target,) for n in seen)
        mine = graph.neighbours([NASTY[1]], [NASTY[0]])
        assert [(n.target, n.scope) for n in mine] == [("anchor", NASTY[0])]

    def test_foreign_texts_are_refused_before_anything_runs(self, graph: Graph) -> None:
        graph.replace_scope(S, [rel("a", "b")], "1" * 64)
        own = type(graph).QUERIES  # type: ignore[attr-defined]
        other = SQL if own is CYPHER else CYPHER
        foreign = [
            "MATCH (n) DETACH DELETE n",
            "DELETE FROM relations",
            own["clear"] + " ",
            own["clear"].lower(),
            other["count_entities"],
            "",
        ]
        for text in foreign:
            with pytest.raises(GraphQueryRefused):
                graph.execute(text, {"ns": graph.namespace})
        with pytest.raises(GraphQueryRefused):
            graph.execute(None, {})  # type: ignore[arg-type]
        assert graph.counts().relations == {S: 1}

    def test_parameters_are_typed(self, graph: Graph) -> None:
        own = type(graph).QUERIES  # type: ignore[attr-defined]
        ns = graph.namespace
        bad: list[tuple[str, dict[str, Any]]] = [
            ("count_entities", {}),  # missing
            ("count_entities", {"ns": ns, "extra": 1}),  # unknown
            ("count_entities", {"ns": "bad namespace!"}),  # pattern
            ("neighbours", {"ns": ns, "names": "a", "scopes": [S], "limit": 5}),  # not a list
            ("neighbours", {"ns": ns, "names": ["a"], "scopes": [S], "limit": True}),  # bool
            ("neighbours", {"ns": ns, "names": ["a"], "scopes": [S], "limit": 10**6}),  # range
            ("neighbours", {"ns": ns, "names": [1], "scopes": [S], "limit": 5}),  # item type
            ("merge_entities", {"ns": ns, "names": [f"n{i}" for i in range(MAX_CALL_ROWS + 1)]}),
            ("merge_relations", {"ns": ns, "rows": [{"a": "x", "b": "y"}]}),  # row fields
            ("set_digest", {"ns": ns, "scope": S, "digest": "not-a-digest"}),
        ]
        for name, params in bad:
            with pytest.raises(GraphParameterError):
                graph.execute(own[name], params)
        assert graph.counts().entities == 0

    def test_namespaces_are_isolated(self, graph: Graph, make_graph: MakeGraph) -> None:
        other = make_graph(f"other-{uuid.uuid4().hex[:8]}")
        try:
            graph.replace_scope(S, [rel("a", "b")], "1" * 64)
            other.replace_scope(S, [rel("a", "c")], "2" * 64)
            assert [n.target for n in graph.neighbours(["a"], [S])] == ["b"]
            graph.clear()
            assert graph.counts().entities == 0
            assert other.counts().entities == 2
            assert other.digest(S) == "2" * 64
        finally:
            other.clear()


def test_every_operation_is_a_constant_binding_exactly_its_typed_parameters() -> None:
    assert set(CYPHER) == set(SQL) == set(OPERATIONS)
    for name in ("neighbours", "between", "two_hop", "path", "count_entities", "get_digest"):
        assert OPERATIONS[name].access == "read"
    for name in ("merge_entities", "merge_relations", "delete_scope", "set_digest", "clear"):
        assert OPERATIONS[name].access == "write"
    for name, op in OPERATIONS.items():
        assert set(re.findall(r"\$(\w+)", CYPHER[name])) == set(op.params), name
        assert set(re.findall(r":(\w+)", SQL[name])) == set(op.params), name


class TestSqliteGraph(GraphContract):
    @pytest.fixture
    def make_graph(self, tmp_path: Path) -> Iterator[MakeGraph]:
        made: list[SqliteGraph] = []

        def make(namespace: str) -> Graph:
            graph = SqliteGraph(tmp_path / "graph.sqlite3", namespace)
            made.append(graph)
            return graph

        yield make
        for graph in made:
            graph.close()

    def test_reads_run_on_a_query_only_connection(self, graph: Graph) -> None:
        assert isinstance(graph, SqliteGraph)
        import sqlite3

        with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only|query_only"):
            graph._reader.execute("DELETE FROM entities")


class _RecordingDriver:
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
        spy = _RecordingDriver(bolt_driver)
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
        spy = _RecordingDriver(graph._get_driver())
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
        spy = _RecordingDriver(graph._get_driver())
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
