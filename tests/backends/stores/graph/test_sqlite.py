"""The graph role's suite on the embedded SQLite graph, plus its query-only read connection."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.stores.graph import (
    Graph,
)
from backends.stores.graph.sqlite import SqliteGraph
from tests.contract.graph import GraphContract, MakeGraph


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
