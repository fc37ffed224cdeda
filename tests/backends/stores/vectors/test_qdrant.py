"""Qdrant through qdrant-client: each collection passes the vector role's suite, the memory the
semantic-memory suite, in local mode; a Qdrant server (``CUSTODIA_TEST_QDRANT_URL``) runs the
same classes when one is given (none can run on these machines: skipped otherwise)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.errors import (
    StoreUnavailableError,
)
from backends.models.embedders import Embedder, HashingEmbedder
from backends.stores.vectors import COLLECTIONS, SemanticMemory
from backends.stores.vectors.qdrant import STAGING_SUFFIX, QdrantSemanticMemory
from tests.backends.stores.vectors.semantic_fixtures import CollectionIndex
from tests.contract.semantic import Open, SemanticMemoryContract
from tests.contract.vectors import VectorIndexContract

SERVER_ENV = "CUSTODIA_TEST_QDRANT_URL"


def _server_url() -> str:
    url = os.environ.get(SERVER_ENV, "")
    if not url:
        pytest.skip(f"no Qdrant server ({SERVER_ENV} unset; none can run on these machines)")
    return url


class TestQdrantLocalCollection(CollectionIndex, VectorIndexContract):
    def open_store(self, embedder: Embedder, path: Path) -> Any:
        return QdrantSemanticMemory(embedder, path=path)


@pytest.mark.server
class TestQdrantServerCollection(CollectionIndex, VectorIndexContract):
    def open_store(self, embedder: Embedder, path: Path) -> Any:
        # one set of collections per test: the path's name keeps tests apart on one server
        tag = uuid.uuid5(uuid.NAMESPACE_URL, str(path)).hex[:8]
        names = tuple(f"{name}-{tag}" for name in COLLECTIONS)
        return QdrantSemanticMemory(embedder, url=_server_url(), collections=names)


class TestQdrantLocal(SemanticMemoryContract):
    def stored_names(self, memory: SemanticMemory) -> set[str]:
        return {c.name for c in memory._client.get_collections().collections}  # type: ignore[attr-defined]

    @pytest.fixture
    def open_memory(self, tmp_path: Path) -> Iterator[Open]:
        opened: list[SemanticMemory] = []

        def factory(embedder: Embedder) -> SemanticMemory:
            for old in opened:
                old.close()
            memory = QdrantSemanticMemory(embedder, path=tmp_path / "qdrant")
            opened.append(memory)
            return memory

        yield factory
        for memory in opened:
            memory.close()

    def test_local_mode_is_one_process_a_clear_error(self, memory: SemanticMemory) -> None:
        with pytest.raises(StoreUnavailableError, match="another Custodia process"):
            QdrantSemanticMemory(HashingEmbedder(64), path=Path(memory.where))

    def test_an_interrupted_swap_is_finished_at_the_next_open(
        self, open_memory: Open, memory: SemanticMemory
    ) -> None:
        from qdrant_client import QdrantClient, models

        self.fill(memory)
        memory.close()
        # What a crash between "drop the original" and "refill it" leaves behind.
        client = QdrantClient(path=memory.where)
        points, _ = client.scroll("agent_results", limit=100, with_vectors=True)
        client.create_collection(
            "agent_results" + STAGING_SUFFIX,
            vectors_config=models.VectorParams(size=64, distance=models.Distance.COSINE),
            metadata={"embedder": "hashing-64", "dimension": 64, "state": "complete"},
        )
        client.upsert(
            "agent_results" + STAGING_SUFFIX,
            [models.PointStruct(id=p.id, vector=p.vector, payload=p.payload) for p in points],  # type: ignore[arg-type]
        )
        client.delete_collection("agent_results")
        client.close()
        recovered = open_memory(HashingEmbedder(64))
        assert recovered.count("agent_results") == 4
        assert recovered.search("agent_results", "json", limit=1)[0].ticket == "t3"
        names = {c.name for c in recovered._client.get_collections().collections}
        assert names == set(COLLECTIONS)
