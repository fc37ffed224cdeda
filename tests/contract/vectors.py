"""Contract of the vector-index role (CA4–CA6): the abstract suite only.

Each implementation runs it from a small fixtures class in ``tests/backends/stores/vectors/``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from backends.errors import DimensionMismatchError, EmbedderMismatchError
from backends.stores.vectors import VectorIndex

DIM = 8
NAME = "hashing-8"
OpenIndex = Callable[..., Any]


def unit(*weights: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(weights)] = weights
    return vector / np.linalg.norm(vector)


def rows(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    matrix = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def pointers(ids: list[str]) -> list[dict[str, str | int]]:
    out: list[dict[str, str | int]] = []
    for value in ids:
        file, _, index = value.rpartition(":")
        out.append({"file": file, "index": int(index)})
    return out


class VectorIndexContract:
    """Every derived vector index passes these tests."""

    @pytest.fixture
    def open_index(self) -> OpenIndex:
        raise NotImplementedError("an implementation provides open_index(name, dim, fresh)")

    @pytest.fixture
    def index(self, open_index: OpenIndex) -> Any:
        return open_index(NAME, DIM)

    def _fill(self, index: Any, ids: list[str], seed: int = 0) -> np.ndarray:
        vectors = rows(len(ids), seed)
        index.upsert(ids, vectors, pointers(ids))
        return vectors

    def test_is_a_vector_index(self, index: Any) -> None:
        assert isinstance(index, VectorIndex)
        assert (index.embedder_name, index.dimension) == (NAME, DIM)
        assert index.kind and index.generation

    def test_starts_empty(self, index: Any) -> None:
        assert index.count() == 0 and index.ids() == set()
        assert index.query(unit(1), 5) == []

    def test_upsert_is_idempotent(self, index: Any) -> None:
        ids = [f"a.json:{i}" for i in range(5)]
        self._fill(index, ids, seed=1)
        self._fill(index, ids, seed=2)  # same ids, new vectors: replaced, not duplicated
        assert index.count() == 5 and index.ids() == set(ids)
        target = rows(5, seed=2)[3]
        assert index.query(target, 1)[0].id == "a.json:3"

    def test_query_ranks_by_cosine_and_returns_pointers(self, index: Any) -> None:
        index.upsert(
            ["x.json:0", "x.json:1", "y.json:0"],
            np.stack([unit(1, 0), unit(0, 1), unit(1, 1)]),
            [
                {"file": "x.json", "index": 0},
                {"file": "x.json", "index": 1},
                {"file": "y.json", "index": 0},
            ],
        )
        hits = index.query(unit(0, 1), 2)
        assert [h.id for h in hits] == ["x.json:1", "y.json:0"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert hits[1].score == pytest.approx(np.sqrt(0.5), abs=1e-3)
        assert hits[0].pointer == {"file": "x.json", "index": 1}
        assert len(index.query(unit(0, 1), 10)) == 3

    def test_delete(self, index: Any) -> None:
        ids = [f"d.json:{i}" for i in range(5)]
        self._fill(index, ids)
        index.delete(["d.json:1", "d.json:3", "never.json:0"])
        assert index.ids() == {"d.json:0", "d.json:2", "d.json:4"} and index.count() == 3
        index.delete([])

    def test_ids_lists_more_than_one_page(self, index: Any) -> None:
        ids = [f"p{i // 50}.json:{i % 50}" for i in range(1100)]
        self._fill(index, ids)
        assert index.ids() == set(ids) and index.count() == 1100

    def test_pointers_never_carry_text(self, index: Any) -> None:
        vector = rows(1)
        for bad in (
            {"file": "a sentence with spaces in it"},
            {"text": "x"},
            {"document": "x"},
            {"index": 1.5},
        ):
            with pytest.raises(ValueError):
                index.upsert(["t.json:0"], vector, [bad])
        assert index.count() == 0

    def test_wrong_dimension_is_an_explicit_error(self, index: Any) -> None:
        self._fill(index, ["w.json:0"])
        with pytest.raises(DimensionMismatchError):
            index.upsert(["w.json:1"], rows(1, dim=DIM * 2), pointers(["w.json:1"]))
        with pytest.raises(DimensionMismatchError):
            index.query(np.ones(DIM - 2, dtype=np.float32), 3)
        assert index.count() == 1

    def test_reopening_with_another_embedder_is_refused_and_loses_nothing(
        self, open_index: OpenIndex
    ) -> None:
        first = open_index(NAME, DIM)
        self._fill(first, ["r.json:0", "r.json:1"])
        generation = first.generation
        first.close()
        with pytest.raises(DimensionMismatchError):
            open_index(NAME, DIM * 2)
        with pytest.raises(EmbedderMismatchError):
            open_index("another-model-8", DIM)
        again = open_index(NAME, DIM)
        assert again.count() == 2 and again.generation == generation

    def test_reset_and_fresh_start_empty_with_a_new_generation(self, open_index: OpenIndex) -> None:
        index = open_index(NAME, DIM)
        self._fill(index, ["z.json:0", "z.json:1"])
        old = index.generation
        index.reset()
        assert index.count() == 0 and index.generation != old
        self._fill(index, ["z.json:0"])
        index.close()
        other = open_index("another-model-16", DIM * 2, fresh=True)  # a rebuild for a new model
        assert other.count() == 0 and other.dimension == DIM * 2
        other.upsert(["z.json:0"], rows(1, dim=DIM * 2), pointers(["z.json:0"]))
        assert other.query(rows(1, dim=DIM * 2)[0], 1)[0].id == "z.json:0"


# -- implementations --------------------------------------------------------------------------
