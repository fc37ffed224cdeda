"""The vector role's suite on Chroma, a local folder and a ``chroma run`` server started here:
the conversations' collection (with its pointer rule) and the tutor's."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.errors import EmbedderMismatchError
from backends.stores.vectors.chroma import CHUNKS, ChromaChunkIndex, ChromaVectorIndex
from tests.contract.vectors import (
    DIM,
    NAME,
    OpenIndex,
    PointerIndexContract,
    VectorIndexContract,
)
from tests.harness.chroma import ChromaServer, chroma_server  # noqa: F401 (a fixture)


class LocalChroma:
    cls: type[ChromaVectorIndex] = ChromaVectorIndex

    @pytest.fixture
    def open_index(self, tmp_path: Path) -> Iterator[OpenIndex]:
        opened: list[ChromaVectorIndex] = []

        def factory(name: str, dim: int, fresh: bool = False) -> ChromaVectorIndex:
            index = self.cls.local(
                tmp_path / "chroma", embedder_name=name, dimension=dim, fresh=fresh
            )
            opened.append(index)
            return index

        yield factory
        for index in opened:
            index.close()


class ServerChroma:
    cls: type[ChromaVectorIndex] = ChromaVectorIndex

    @pytest.fixture
    def open_index(self, chroma_server: ChromaServer) -> Iterator[OpenIndex]:  # noqa: F811
        collection = f"contract-{uuid.uuid4().hex[:12]}"
        opened: list[ChromaVectorIndex] = []

        def factory(name: str, dim: int, fresh: bool = False) -> ChromaVectorIndex:
            index = self.cls.server(
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


class TestLocalChroma(LocalChroma, VectorIndexContract, PointerIndexContract):
    pass


@pytest.mark.server
class TestChromaServer(ServerChroma, VectorIndexContract, PointerIndexContract):
    pass


class TestLocalChromaChunks(LocalChroma, VectorIndexContract):
    cls = ChromaChunkIndex

    def test_the_tutors_own_collection_and_advice(self, open_index: OpenIndex) -> None:
        index = open_index(NAME, DIM)
        assert index.collection_name == CHUNKS
        index.close()
        with pytest.raises(EmbedderMismatchError, match="rebuilt from the knowledge base"):
            open_index("another-model-8", DIM)


@pytest.mark.server
class TestChromaServerChunks(ServerChroma, VectorIndexContract):
    cls = ChromaChunkIndex
