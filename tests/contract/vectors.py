"""Contract of the vector role: the abstract suite only.

Every :class:`~backends.stores.vectors.VectorIndex` passes it — Chroma (a local folder, a
server; the conversations' collection and the tutor's) and each collection of the Qdrant
semantic memories (qdrant-edge, Qdrant) — from a small fixtures class in
``tests/backends/stores/vectors/`` that provides ``open_index(embedder_name, dimension,
fresh=False)``: the same index every time in one test. Ids are UUIDs (every engine takes
them); payloads are pointers (every index takes them, the conversations' only those).
:class:`PointerIndexContract` adds the conversations' own rule (CA6).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backends.errors import DimensionMismatchError, EmbedderMismatchError, InvalidVectorError
from backends.stores.vectors import VectorHit, VectorIndex
from tests.contract import describing

DIM = 8
NAME = "hashing-8"
OpenIndex = Callable[..., Any]


def uid(label: str) -> str:
    """A stable UUID id for ``label``."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, label))


def unit(*weights: float, dim: int = DIM) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    vector[: len(weights)] = weights
    return vector / np.linalg.norm(vector)


def rows(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    matrix = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def pointers(labels: list[str]) -> list[dict[str, str | int]]:
    """``"file:index"`` labels as pointer payloads."""
    out: list[dict[str, str | int]] = []
    for value in labels:
        file, _, index = value.rpartition(":")
        out.append({"file": file, "index": int(index)})
    return out


class VectorIndexContract:
    """Every vector index passes these tests."""

    @pytest.fixture
    def open_index(self) -> OpenIndex:
        raise NotImplementedError("an implementation provides open_index(name, dim, fresh)")

    @pytest.fixture
    def index(self, open_index: OpenIndex) -> Any:
        return open_index(NAME, DIM)

    def _fill(self, index: Any, labels: list[str], seed: int = 0) -> np.ndarray:
        vectors = rows(len(labels), seed)
        index.upsert([uid(x) for x in labels], vectors, pointers(labels))
        return vectors

    def _files(self, index: Any) -> None:
        """x.json:0 → (1,0), x.json:1 → (0,1), y.json:0 → (1,1), z.json:0 → (0,0,1)."""
        labels = ["x.json:0", "x.json:1", "y.json:0", "z.json:0"]
        index.upsert(
            [uid(x) for x in labels],
            np.stack([unit(1, 0), unit(0, 1), unit(1, 1), unit(0, 0, 1)]),
            pointers(labels),
        )

    def test_is_a_vector_index(self, index: Any) -> None:
        assert isinstance(index, VectorIndex)
        assert (index.embedder_name, index.dimension) == (NAME, DIM)
        assert index.kind and index.generation and index.where
        assert index.persistent

    def test_starts_empty(self, index: Any) -> None:
        assert index.count() == 0 and index.ids() == set()
        assert index.query(unit(1), 5) == []

    def test_upsert_is_idempotent(self, index: Any) -> None:
        labels = [f"a.json:{i}" for i in range(5)]
        self._fill(index, labels, seed=1)
        self._fill(index, labels, seed=2)  # same ids, new vectors: replaced, not duplicated
        assert index.count() == 5 and index.ids() == {uid(x) for x in labels}
        target = rows(5, seed=2)[3]
        assert index.query(target, 1)[0].id == uid("a.json:3")

    def test_query_ranks_by_cosine_and_returns_payloads(self, index: Any) -> None:
        self._files(index)
        hits = index.query(unit(0, 1), 2)
        assert all(isinstance(h, VectorHit) for h in hits)
        assert [h.id for h in hits] == [uid("x.json:1"), uid("y.json:0")]
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
        assert hits[1].score == pytest.approx(np.sqrt(0.5), abs=1e-3)
        assert hits[0].payload == {"file": "x.json", "index": 1}
        assert len(index.query(unit(0, 1), 10)) == 4
        assert index.query(unit(0, 1), 0) == []

    @pytest.mark.parametrize(
        ("where", "expected"),
        [
            ({"file": "x.json"}, ["x.json:1", "x.json:0"]),
            ({"file": {"$eq": "y.json"}}, ["y.json:0"]),
            ({"file": {"$in": ["y.json", "z.json"]}}, ["y.json:0", "z.json:0"]),
            ({"file": {"$ne": "x.json"}}, ["y.json:0", "z.json:0"]),
            ({"file": "x.json", "index": 0}, ["x.json:0"]),
            ({"file": {"$in": []}}, []),
            ({"file": "nowhere.json"}, []),
        ],
    )
    def test_the_filter_goes_inside_the_query(
        self, index: Any, where: dict[str, Any], expected: list[str]
    ) -> None:
        self._files(index)
        hits = index.query(unit(0, 1), 10, where=where)
        assert {h.id for h in hits} == {uid(x) for x in expected}
        if len(expected) == 2 and expected[0].startswith("x"):
            assert [h.id for h in hits] == [uid(x) for x in expected]  # still ranked
        # the filter, not the number asked for, keeps the others out
        assert len(index.query(unit(0, 1), 1, where=where)) == min(1, len(expected))

    def test_an_unknown_operator_is_a_bug(self, index: Any) -> None:
        self._files(index)
        with pytest.raises(ValueError):
            index.query(unit(1), 3, where={"file": {"$like": "x%"}})

    def test_delete_by_id(self, index: Any) -> None:
        labels = [f"d.json:{i}" for i in range(5)]
        self._fill(index, labels)
        index.delete([uid("d.json:1"), uid("d.json:3"), uid("never.json:0")])
        assert index.ids() == {uid(f"d.json:{i}") for i in (0, 2, 4)} and index.count() == 3
        index.delete([])
        assert index.count() == 3

    def test_delete_by_filter(self, index: Any) -> None:
        self._files(index)
        index.delete(where={"file": {"$in": ["x.json"]}})
        assert index.ids() == {uid("y.json:0"), uid("z.json:0")}
        index.delete(where={"file": {"$in": []}})  # matches nothing
        index.delete([uid("z.json:0")], where={"file": "nowhere.json"})
        assert index.ids() == {uid("y.json:0")}

    def test_ids_lists_more_than_one_page(self, index: Any) -> None:
        labels = [f"p{i // 50}.json:{i % 50}" for i in range(1100)]
        self._fill(index, labels)
        assert index.ids() == {uid(x) for x in labels} and index.count() == 1100

    def test_wrong_dimension_is_an_explicit_error(self, index: Any) -> None:
        self._fill(index, ["w.json:0"])
        with pytest.raises(DimensionMismatchError):
            index.upsert([uid("w.json:1")], rows(1, dim=DIM * 2), pointers(["w.json:1"]))
        with pytest.raises(DimensionMismatchError):
            index.query(np.ones(DIM - 2, dtype=np.float32), 3)
        assert index.count() == 1

    def test_invalid_vectors_are_refused_and_a_zero_query_finds_nothing(self, index: Any) -> None:
        self._fill(index, ["v.json:0"])
        for bad in (np.full((1, DIM), np.nan), np.zeros((1, DIM)), np.full((1, DIM), np.inf)):
            with pytest.raises(InvalidVectorError):
                index.upsert([uid("v.json:1")], bad.astype(np.float32), pointers(["v.json:1"]))
        with pytest.raises(ValueError):
            index.upsert([uid("v.json:1"), uid("v.json:2")], rows(1), pointers(["v.json:1"]))
        assert index.count() == 1
        assert index.query(np.zeros(DIM, dtype=np.float32), 3) == []

    def test_reopening_with_another_embedder_is_refused_and_loses_nothing(
        self, open_index: OpenIndex
    ) -> None:
        first = open_index(NAME, DIM)
        self._fill(first, ["r.json:0", "r.json:1"])
        generation = first.generation
        first.close()
        with pytest.raises(DimensionMismatchError):
            open_index(NAME, DIM * 2)
        with pytest.raises(EmbedderMismatchError, match="another-model-8"):
            open_index("another-model-8", DIM)
        again = open_index(NAME, DIM)
        assert again.count() == 2 and again.generation == generation
        assert again.query(rows(2)[1], 1)[0].id == uid("r.json:1")

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
        other.upsert([uid("z.json:0")], rows(1, dim=DIM * 2), pointers(["z.json:0"]))
        assert other.query(rows(1, dim=DIM * 2)[0], 1)[0].id == uid("z.json:0")
        other.close()
        assert open_index("another-model-16", DIM * 2).count() == 1

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself(self, index: Any, tmp_path: Path) -> None:
        if not describing.registered(index):
            pytest.skip("a view over a registry store (its store describes itself)")
        cfg = describing.config(tmp_path)
        self._files(index)
        measured = describing.measure(index, cfg)
        assert measured.items == index.count() == 4
        describing.check_probe(index, cfg)


class PointerIndexContract:
    """The conversations' index (CA6): a payload is a pointer, never text."""

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
        index.upsert(["t.json:0"], vector, [{"file": "t.json", "index": 0}])
        assert index.query(vector[0], 1)[0].payload == {"file": "t.json", "index": 0}
