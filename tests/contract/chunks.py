"""Contract of the tutor's chunk-vector role (CT6): the abstract suite only.

A chunk index holds a vector, a ``scope`` and a ``doc`` per chunk (never its text); every search
carries the user's scopes inside the query, so another user's chunk is never returned; another
embedder is a typed mismatch (the tutor answers it by rebuilding). Each implementation runs it
from a small fixtures class in ``tests/backends/stores/vectors/``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from backends.errors import DimensionMismatchError, EmbedderMismatchError
from backends.stores.vectors import ChunkIndex

DIM = 8
NAME = "hashing-8"
#: ``open_chunks(embedder_name, dimension)``: the same collection every time in one test
OpenChunks = Callable[[str, int], ChunkIndex]


def unit(*weights: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(weights)] = weights
    return v / np.linalg.norm(v)


class ChunkIndexContract:
    @pytest.fixture
    def open_chunks(self) -> OpenChunks:
        raise NotImplementedError

    @pytest.fixture
    def chunks(self, open_chunks: OpenChunks) -> ChunkIndex:
        index = open_chunks(NAME, DIM)
        index.open()
        return index

    def fill(self, index: ChunkIndex) -> None:
        vectors = np.stack([unit(1), unit(1, 0.1), unit(0, 1), unit(0, 0, 1)])
        index.upsert(
            ["s:1", "s:2", "a:1", "b:1"],
            vectors,
            ["shared", "shared", "user:ana", "user:bob"],
            ["d1", "d1", "d2", "d3"],
        )

    def test_is_a_chunk_index(self, chunks: ChunkIndex) -> None:
        assert isinstance(chunks, ChunkIndex)
        assert chunks.count() == 0
        assert chunks.ids() == set()

    def test_upsert_count_ids_and_upsert_again_is_a_replace(self, chunks: ChunkIndex) -> None:
        self.fill(chunks)
        assert chunks.count() == 4
        assert chunks.ids() == {"s:1", "s:2", "a:1", "b:1"}
        chunks.upsert(["s:1"], np.stack([unit(0, 1)]), ["shared"], ["d1"])
        assert chunks.count() == 4

    def test_a_search_returns_only_the_scopes_asked_for(self, chunks: ChunkIndex) -> None:
        self.fill(chunks)
        hits = chunks.search(unit(0, 1), ["shared", "user:ana"], 10)
        assert {h.scope for h in hits} <= {"shared", "user:ana"}
        assert hits[0].chunk_id == "a:1"
        assert "b:1" not in {h.chunk_id for h in hits}
        assert chunks.last_where == {"scope": {"$in": ["shared", "user:ana"]}}
        assert chunks.search(unit(0, 0, 1), ["user:carol"], 10) == []
        assert chunks.search(unit(1), [], 10) == []

    def test_scores_are_cosine_best_first(self, chunks: ChunkIndex) -> None:
        self.fill(chunks)
        hits = chunks.search(unit(1), ["shared"], 2)
        assert [h.chunk_id for h in hits] == ["s:1", "s:2"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert hits[0].score >= hits[1].score

    def test_delete_scope_and_delete_ids(self, chunks: ChunkIndex) -> None:
        self.fill(chunks)
        chunks.delete_scope("user:ana")
        assert chunks.ids() == {"s:1", "s:2", "b:1"}
        chunks.delete(["b:1"])
        assert chunks.ids() == {"s:1", "s:2"}

    def test_a_vector_of_another_size_is_a_typed_error(self, chunks: ChunkIndex) -> None:
        with pytest.raises(DimensionMismatchError):
            chunks.upsert(["x"], np.ones((1, DIM + 1), dtype=np.float32), ["shared"], ["d"])
        with pytest.raises(DimensionMismatchError):
            chunks.search(np.ones(DIM + 1, dtype=np.float32), ["shared"], 3)

    def test_survives_reopening(self, chunks: ChunkIndex, open_chunks: OpenChunks) -> None:
        self.fill(chunks)
        chunks.close()
        again = open_chunks(NAME, DIM)
        again.open()
        assert again.count() == 4

    def test_another_embedder_is_a_typed_mismatch_and_reset_rebuilds(
        self, chunks: ChunkIndex, open_chunks: OpenChunks
    ) -> None:
        self.fill(chunks)
        chunks.close()
        other = open_chunks("another-model-8", DIM)
        with pytest.raises(EmbedderMismatchError, match="another-model-8"):
            other.open()
        wider = open_chunks(NAME, DIM * 2)
        with pytest.raises(DimensionMismatchError):
            wider.open()
        other.reset()
        other.open()
        assert other.count() == 0
