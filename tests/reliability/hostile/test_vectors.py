"""Hostile vectors: NaN, inf, huge, tiny, zero, wrong dimension, wrong shape, not numbers.

Into the memory store (PA3), the multi-agent semantic memory in Qdrant (MA11) and the
conversations' Chroma index (CA4). Each is refused with a typed error
(``DimensionMismatchError`` for a wrong dimension, another ``CustodiaEnvironmentError``
subclass for the rest) and the stored data does not change; a finite, non-zero vector of the
right dimension is accepted and found again as its own nearest neighbour.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from backends.errors import CustodiaEnvironmentError, DimensionMismatchError
from backends.models.embedders import HashingEmbedder
from backends.stores.memories.sqlite import SQLiteMemoryStore
from tests.reliability.conftest import Figures
from tests.reliability.hostile import BUDGET, hostile_settings, refused_cleanly

DIM = 8
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e38, 3.5e38, -1e38, 1e-45, 5e-324, 1e300]


def _vectors() -> st.SearchStrategy[Any]:
    element = st.one_of(st.floats(width=64), st.sampled_from(SPECIAL))
    right = st.lists(element, min_size=DIM, max_size=DIM)
    return st.one_of(
        right,
        st.lists(element, min_size=0, max_size=DIM * 2),  # any dimension
        st.lists(right, min_size=1, max_size=3),  # a matrix
        st.just([]),
        st.just([[]]),
        st.just([0.0] * DIM),
        st.just(["a"] * DIM),
        st.just([[1.0, 2.0], [3.0]]),  # ragged
        st.just(None),
        st.just("not a vector"),
    )


def _expect_finite_unit(vector: Any) -> bool:
    """True when ``vector`` is one finite, non-zero vector of DIM after float32 conversion."""
    try:
        with np.errstate(all="ignore"):
            array = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError):
        return False
    if array.ndim == 2 and array.shape[0] == 1:
        array = array[0]
    if array.shape != (DIM,) or not np.isfinite(array).all():
        return False
    return bool(np.linalg.norm(array.astype(np.float64)) > 0)


@pytest.fixture
def store(home: Path) -> Iterator[SQLiteMemoryStore]:
    store = SQLiteMemoryStore(home / "memories.sqlite3", DIM, "hashing-8")
    store.add("a kept memory", np.arange(1, DIM + 1, dtype=np.float32))
    yield store
    store.close()


@pytest.mark.parametrize("budget", BUDGET)
def test_memory_store_refuses_hostile_vectors(
    budget: str, store: SQLiteMemoryStore, home: Path, figures: Figures
) -> None:
    counter = iter(range(10**9))

    @hostile_settings(budget, 150)
    @given(vector=_vectors())
    @example(vector=[1e38] * DIM)
    @example(vector=[1e-45] * DIM)
    @example(vector=[np.nan] * DIM)
    @example(vector=[0.0] * DIM)
    def check(vector: Any) -> None:
        figures.add("hostile", "vectors (memories)", "inputs")
        text = f"memory {next(counter)}"
        good = _expect_finite_unit(vector)
        with np.errstate(all="ignore"):
            refused, _ = refused_cleanly(lambda: store.add(text, vector), home)
        assert refused != good, f"{vector!r}: refused={refused}"
        if refused:
            figures.add("hostile", "vectors (memories)", "refused")
            assert store.get(text) is None
        else:
            hit = store.search(vector, k=1)[0]
            assert hit.text == text and abs(hit.similarity - 1.0) < 1e-3, hit
            store.delete(text)
        with np.errstate(all="ignore"):
            searched, result = refused_cleanly(lambda: store.search(vector, k=3), home)
        zero = not searched and result == []
        assert searched != (good or zero), f"search of {vector!r}"
        update, _ = refused_cleanly(lambda: store.update("a kept memory", "renamed", vector), home)
        if update:
            assert store.get("a kept memory") is not None
        else:
            store.update("renamed", "a kept memory", np.arange(1, DIM + 1, dtype=np.float32))
        assert store.stats().unreadable == 0

    check()


@pytest.fixture(params=["qdrant-edge", "qdrant-local"])
def memory(home: Path, request: pytest.FixtureRequest) -> Iterator[Any]:
    from backends.stores.vectors import MemoryItem
    from backends.stores.vectors.qdrant import QdrantSemanticMemory
    from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory

    memory: Any
    if request.param == "qdrant-edge":
        # idle=0: every operation flushed and closed before it returns (no flush in the
        # background, which would show as a change under a later refused operation)
        memory = EdgeSemanticMemory(HashingEmbedder(DIM), path=home / "qdrant-edge", idle=0)
    else:
        memory = QdrantSemanticMemory(HashingEmbedder(DIM), path=home / "qdrant")
    memory.add("agent_results", MemoryItem("kept result", session="s1"))
    yield memory
    memory.close()


@pytest.mark.parametrize("budget", BUDGET)
def test_semantic_memory_refuses_hostile_vectors(
    budget: str, memory: Any, home: Path, figures: Figures
) -> None:
    from backends.stores.vectors import MemoryItem

    counter = iter(range(10**9))

    @hostile_settings(budget, 40)
    @given(vector=_vectors())
    @example(vector=[np.nan] * DIM)
    @example(vector=[0.0] * DIM)
    @example(vector=[1e38] * DIM)
    def check(vector: Any) -> None:
        figures.add("hostile", "vectors (semantic memory)", "inputs")
        good = _expect_finite_unit(vector)
        item = MemoryItem(f"hostile {next(counter)}", session="s2")
        try:
            with np.errstate(all="ignore"):
                array = np.asarray(vector, dtype=np.float32)
        except (TypeError, ValueError):
            array = np.asarray([[np.nan]], dtype=np.float32)
        matrix = array.reshape(1, -1) if array.ndim <= 1 else array
        items = [item] * (matrix.shape[0] if matrix.ndim == 2 else 1)
        before = memory.count("agent_results")
        ids = [item.point_id("agent_results")] * len(items)
        with np.errstate(all="ignore"):
            refused, _ = refused_cleanly(
                lambda: memory.upsert_vectors("agent_results", ids, matrix, items),
                home,
                allowed=(),
            )
        if refused:
            figures.add("hostile", "vectors (semantic memory)", "refused")
            assert memory.count("agent_results") == before
        else:
            assert good and matrix.shape == (1, DIM)
            assert memory.count("agent_results") == before + 1
        query = array.reshape(-1) if array.ndim <= 1 else array[0]
        with np.errstate(all="ignore"):
            searched, hits = refused_cleanly(
                lambda: memory.search_vector("agent_results", query), home
            )
        if not searched:
            assert all(np.isfinite(h.score) for h in hits), hits
        kept = memory.search("agent_results", "kept result", session="s1")
        assert kept and kept[0].text == "kept result"

    check()


@pytest.fixture
def chroma(home: Path) -> Iterator[Any]:
    from backends.stores.vectors.chroma import ChromaVectorIndex

    index = ChromaVectorIndex.local(home / "chroma", embedder_name="hashing-8", dimension=DIM)
    index.upsert(["kept.json:0"], np.ones((1, DIM), dtype=np.float32), [{"file": "kept.json"}])
    yield index
    index.close()


@pytest.mark.parametrize("budget", BUDGET)
def test_chroma_index_refuses_hostile_vectors(
    budget: str, chroma: Any, home: Path, figures: Figures
) -> None:
    counter = iter(range(10**9))

    @hostile_settings(budget, 30)
    @given(vector=_vectors())
    @example(vector=[np.nan] * DIM)
    @example(vector=[0.0] * DIM)
    def check(vector: Any) -> None:
        figures.add("hostile", "vectors (conversation index)", "inputs")
        good = _expect_finite_unit(vector)
        pid = f"h{next(counter)}.json:0"
        try:
            with np.errstate(all="ignore"):
                matrix = np.asarray(vector, dtype=np.float32)
        except (TypeError, ValueError):
            matrix = np.asarray([[np.nan]], dtype=np.float32)
        if matrix.ndim <= 1:
            matrix = matrix.reshape(1, -1)
        before = chroma.count()
        with np.errstate(all="ignore"):
            rows = max(1, matrix.shape[0])
            refused, _ = refused_cleanly(
                lambda: chroma.upsert(
                    [f"{pid}{i}" for i in range(rows)],
                    matrix,
                    [{"file": pid.split(":")[0]}] * rows,
                ),
                home,
            )
        if refused:
            figures.add("hostile", "vectors (conversation index)", "refused")
            assert chroma.count() == before
        else:
            assert good or all(_expect_finite_unit(row) for row in matrix), f"{vector!r} stored"
            chroma.delete([f"{pid}{i}" for i in range(rows)])
        with np.errstate(all="ignore"):
            searched, hits = refused_cleanly(lambda: chroma.query(matrix[0], 3), home)
        if not searched:
            assert all(np.isfinite(h.score) for h in hits), hits
        assert "kept.json:0" in chroma.ids()

    check()


def test_a_wrong_dimension_is_a_dimension_error_everywhere(
    store: SQLiteMemoryStore, memory: Any, chroma: Any
) -> None:
    wrong = np.ones(DIM + 1, dtype=np.float32)
    for action in (
        lambda: store.add("x", wrong),
        lambda: store.search(wrong),
        lambda: memory.search_vector("agent_results", wrong),
        lambda: chroma.query(wrong, 1),
    ):
        with pytest.raises(DimensionMismatchError):
            action()
    assert issubclass(DimensionMismatchError, CustodiaEnvironmentError)
