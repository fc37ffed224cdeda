"""Contract suite of the graph role (CT5): the abstract suite only.

Every implementation runs only its constant operations: foreign texts are refused before
anything is sent, parameters are typed and travel as parameters (a name made of Cypher and SQL
punctuation is stored and read back verbatim), relations and their reads are scoped, and each
test works in its own namespace, cleared afterwards with the constant ``clear`` operation.
Each implementation runs it from a fixtures class in ``tests/backends/stores/graph/``: SQLite,
FalkorDB's Bolt endpoint and a real Neo4j 5.26 (both marked ``server``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.stores.graph import (
    CYPHER,
    MAX_CALL_ROWS,
    SQL,
    Graph,
    GraphParameterError,
    GraphQueryRefused,
    Relation,
)
from tests.contract import describing

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

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself(
        self, graph: Graph, namespace: str, tmp_path: Path
    ) -> None:
        cfg = describing.config(tmp_path)
        graph.replace_scope(S, [rel("a", "b", 2), rel("b", "c")], "1" * 64)
        where = Path(graph.where)
        measured = describing.measure(graph, cfg, path=where, namespace=namespace)
        assert measured.items == sum(graph.counts().relations.values()) == 2
        assert measured.note == f"{graph.counts().entities} entities"
        describing.check_probe(graph, cfg, path=where)
