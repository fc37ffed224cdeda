"""The conversations' vector-index role's suite on Chroma: a local folder and a ``chroma run``
server started here."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.stores.vectors.chroma import ChromaVectorIndex
from tests.contract.vectors import OpenIndex, VectorIndexContract
from tests.harness.chroma import ChromaServer, chroma_server  # noqa: F401 (a fixture)


class TestLocalChroma(VectorIndexContract):
    @pytest.fixture
    def open_index(self, tmp_path: Path) -> Iterator[OpenIndex]:
        opened: list[ChromaVectorIndex] = []

        def factory(name: str, dim: int, fresh: bool = False) -> ChromaVectorIndex:
            index = ChromaVectorIndex.local(
                tmp_path / "chroma", embedder_name=name, dimension=dim, fresh=fresh
            )
            opened.append(index)
            return index

        yield factory
        for index in opened:
            index.close()


@pytest.mark.server
class TestChromaServer(VectorIndexContract):
    @pytest.fixture
    def open_index(self, chroma_server: ChromaServer) -> Iterator[OpenIndex]:  # noqa: F811
        collection = f"contract-{uuid.uuid4().hex[:12]}"
        opened: list[ChromaVectorIndex] = []

        def factory(name: str, dim: int, fresh: bool = False) -> ChromaVectorIndex:
            index = ChromaVectorIndex.server(
                chroma_server.url,
                timeout=10.0,
                embedder_name=name,
                dimension=dim,
                collection=collection,
                fresh=fresh,
            )
            opened.append(index)
            return index

        yield factory
        for index in opened:
            index.close()
