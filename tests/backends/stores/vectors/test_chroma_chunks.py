"""The tutor's chunk-vector role's suite on Chroma: a local folder and a ``chroma run`` server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.stores.vectors.chroma import ChromaChunkIndex
from tests.contract.chunks import ChunkIndexContract, OpenChunks
from tests.harness.chroma import ChromaServer, chroma_server  # noqa: F401 (a fixture)


class TestLocalChromaChunks(ChunkIndexContract):
    @pytest.fixture
    def open_chunks(self, tmp_path: Path) -> Iterator[OpenChunks]:
        opened: list[ChromaChunkIndex] = []

        def factory(name: str, dim: int) -> ChromaChunkIndex:
            index = ChromaChunkIndex.local(tmp_path / "chroma", embedder_name=name, dimension=dim)
            opened.append(index)
            return index

        yield factory
        for index in opened:
            index.close()


@pytest.mark.server
class TestChromaServerChunks(ChunkIndexContract):
    @pytest.fixture
    def open_chunks(self, chroma_server: ChromaServer) -> Iterator[OpenChunks]:  # noqa: F811
        collection = f"chunks-{uuid.uuid4().hex[:12]}"
        opened: list[ChromaChunkIndex] = []

        def factory(name: str, dim: int) -> ChromaChunkIndex:
            index = ChromaChunkIndex.server(
                chroma_server.url,
                timeout=10.0,
                embedder_name=name,
                dimension=dim,
                collection=collection,
            )
            opened.append(index)
            return index

        yield factory
        for index in opened:
            index.close()
