"""The semantic-memory role's suite on qdrant-client's local mode (a Qdrant server cannot run on
these machines: its half of the suite is not run here)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.errors import (
    StoreUnavailableError,
)
from backends.models.embedders import Embedder, HashingEmbedder
from backends.stores.vectors import COLLECTIONS, SemanticMemory
from backends.stores.vectors.qdrant import STAGING_SUFFIX, QdrantSemanticMemory
from tests.contract.semantic import Open, SemanticMemoryContract


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
