"""Contract of the memory-store role (PA1–PA5): the abstract suite only.

Each implementation runs it from a small fixtures class in ``tests/backends/stores/memories/``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backends.errors import CustodiaEnvironmentError, DimensionMismatchError
from backends.progress import Progress
from backends.stores.memories import MemoryExistsError, MemoryNotFoundError, MemoryStore
from tests.contract import describing

DIM = 16
OpenStore = Callable[..., Any]


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def towards(base: np.ndarray, seed: int, weight: float) -> np.ndarray:
    """A vector whose cosine with ``base`` falls as ``weight`` grows."""
    return base + weight * unit(seed, base.shape[0])


class MemoryStoreContract:
    """Every memory store passes these tests."""

    @pytest.fixture
    def open_store(self) -> OpenStore:
        raise NotImplementedError("an implementation provides open_store(dimension, model)")

    @pytest.fixture
    def store(self, open_store: OpenStore) -> Any:
        return open_store(DIM, "model-a")

    # -- the role --------------------------------------------------------------------------
    def test_is_a_memory_store(self, store: Any) -> None:
        assert isinstance(store, MemoryStore)
        assert store.dimension == DIM
        assert store.model == "model-a"

    def test_empty_store_finds_nothing(self, store: Any) -> None:
        assert store.search(unit(1), k=5) == []
        assert store.count() == 0
        assert store.list() == []

    def test_add_then_search_ranks_by_cosine(self, store: Any) -> None:
        base = unit(0)
        for i, weight in enumerate([0.1, 0.5, 1.0, 3.0]):
            store.add(f"memory {i}", towards(base, 100 + i, weight))
        hits = store.search(base, k=3)
        assert [h.text for h in hits] == ["memory 0", "memory 1", "memory 2"]
        similarities = [h.similarity for h in hits]
        assert similarities == sorted(similarities, reverse=True)
        assert all(-1.0 <= s <= 1.0001 for s in similarities)

    def test_similarity_is_the_cosine_of_unnormalised_vectors(self, store: Any) -> None:
        a, b = unit(1), unit(2)
        store.add("a", 7.5 * a)  # stored normalised: the scale never matters (PA2)
        (hit,) = store.search(3.0 * b, k=1)
        assert hit.similarity == pytest.approx(float(a @ b), abs=1e-5)

    def test_k_larger_than_the_store_returns_everything(self, store: Any) -> None:
        for i in range(3):
            store.add(f"m{i}", unit(i))
        assert len(store.search(unit(0), k=50)) == 3
        assert store.search(unit(0), k=0) == []

    def test_threshold_filters_hits(self, store: Any) -> None:
        base = unit(0)
        store.add("close", towards(base, 1, 0.1))
        store.add("far", unit(99))
        hits = store.search(base, k=10, threshold=0.9)
        assert [h.text for h in hits] == ["close"]

    def test_exact_duplicate_is_skipped(self, store: Any) -> None:
        assert store.add("I live in Valencia", unit(1)).status == "created"
        assert store.add("I live in Valencia", unit(2)).status == "duplicate"
        assert store.count() == 1
        (hit,) = store.search(unit(1), k=1)
        assert hit.similarity == pytest.approx(1.0, abs=1e-5)  # the first vector stayed

    def test_add_many_is_one_batch(self, store: Any) -> None:
        results = store.add_many([(f"m{i}", unit(i)) for i in range(20)] + [("m3", unit(3))])
        assert [r.status for r in results].count("created") == 20
        assert results[-1].status == "duplicate"
        assert store.count() == 20

    def test_get_and_list_carry_metadata(self, store: Any) -> None:
        store.add("older", unit(1), source="cli")
        store.add("newer", unit(2), source="remember")
        memory = store.get("older")
        assert memory is not None
        assert (memory.source, memory.dimension, memory.embedder) == ("cli", DIM, "model-a")
        assert memory.searchable and memory.created_at > 0
        assert [m.text for m in store.list()] == ["newer", "older"]
        assert [m.text for m in store.list(limit=1)] == ["newer"]
        assert store.get("missing") is None

    def test_update_changes_text_and_vector(self, store: Any) -> None:
        store.add("My favourite colour is green", unit(1), source="cli")
        before = store.update(
            "My favourite colour is green", "My favourite colour is blue", unit(2)
        )
        assert before.memory.text == "My favourite colour is green"
        assert store.get("My favourite colour is green") is None
        after = store.get("My favourite colour is blue")
        assert after is not None and after.source == "cli"
        assert after.created_at == pytest.approx(before.memory.created_at)
        assert store.search(unit(2), k=1)[0].text == "My favourite colour is blue"
        assert store.count() == 1

    def test_update_onto_an_existing_text_is_refused(self, store: Any) -> None:
        store.add("a", unit(1))
        store.add("b", unit(2))
        with pytest.raises(MemoryExistsError):
            store.update("a", "b", unit(3))
        with pytest.raises(MemoryNotFoundError):
            store.update("zzz", "c", unit(3))
        assert {m.text for m in store.list()} == {"a", "b"}
        assert store.search(unit(1), k=1)[0].text == "a"

    def test_delete_and_restore_is_exact_undo(self, store: Any) -> None:
        for i in range(5):
            store.add(f"m{i}", unit(i))
        original = store.get("m2")
        removed = store.delete("m2")
        assert removed is not None and store.get("m2") is None
        assert all(h.text != "m2" for h in store.search(unit(2), k=10))
        assert store.delete("m2") is None
        store.restore(removed)
        assert store.get("m2") == original
        assert store.search(unit(2), k=1)[0].text == "m2"

    def test_deletes_keep_the_index_consistent(self, store: Any) -> None:
        vectors = {f"m{i}": unit(i) for i in range(40)}
        for text, vector in vectors.items():
            store.add(text, vector)
        store.search(unit(0), k=1)  # index loaded: deletes now patch it in place
        for i in range(0, 40, 3):
            store.delete(f"m{i}")
            del vectors[f"m{i}"]
        for i in range(1, 40, 7):  # and every survivor is still found as itself
            if f"m{i}" in vectors:
                assert store.search(vectors[f"m{i}"], k=1)[0].text == f"m{i}"
        assert len(store.search(unit(0), k=100)) == len(vectors)

    # -- dimensions (PA3) ------------------------------------------------------------------
    def test_insert_of_wrong_dimension_is_rejected(self, store: Any) -> None:
        with pytest.raises(DimensionMismatchError) as info:
            store.add("too short", unit(1, DIM - 1))
        assert (info.value.expected, info.value.got) == (DIM, DIM - 1)
        assert isinstance(info.value, CustodiaEnvironmentError)
        with pytest.raises(DimensionMismatchError):
            store.add_many([("ok", unit(1)), ("bad", unit(2, DIM * 2))])
        assert store.count() == 0  # all or nothing

    def test_search_of_wrong_dimension_is_rejected_not_empty(self, store: Any) -> None:
        store.add("a", unit(1))
        with pytest.raises(DimensionMismatchError) as info:
            store.search(unit(1, 2 * DIM))
        assert "dimension mismatch" in str(info.value)

    def test_rows_of_another_dimension_are_never_compared(self, open_store: OpenStore) -> None:
        small = open_store(8, "small-model")
        small.add("eight dimensions", unit(1, 8))
        big = open_store(DIM, "model-a")
        big.add("sixteen dimensions", unit(1))
        assert [h.text for h in big.search(unit(1), k=10)] == ["sixteen dimensions"]
        assert [h.text for h in small.search(unit(1, 8), k=10)] == ["eight dimensions"]
        stats = big.stats()
        assert (stats.total, stats.searchable, stats.other_dimensions) == (2, 1, {8: 1})
        memory = big.get("eight dimensions")
        assert memory is not None and not memory.searchable

    def test_rows_of_another_model_with_the_same_dimension_are_not_compared(
        self, open_store: OpenStore
    ) -> None:
        open_store(DIM, "model-a").add("from model a", unit(1))
        other = open_store(DIM, "model-b")
        assert other.search(unit(1), k=10) == []
        assert other.stats().other_models == {"model-a": 1}

    def test_reembed_makes_every_memory_searchable(self, open_store: OpenStore) -> None:
        old = open_store(8, "old")
        old.add_many([(f"fact {i}", unit(i, 8)) for i in range(10)])
        new = open_store(DIM, "new")
        assert new.stats().needs_reembed == 10
        seen: list[tuple[int, int]] = []
        progress = Progress(callback=lambda done, total, msg: seen.append((done, total)))
        count = new.reembed(lambda texts: np.stack([unit(len(t), DIM) for t in texts]), progress)
        assert count == 10
        assert seen[0] == (0, 10) and seen[-1] == (10, 10)
        assert new.stats().needs_reembed == 0
        assert len(new.search(unit(6), k=20)) == 10
        assert new.reembed(lambda texts: np.zeros((len(texts), DIM))) == 0  # nothing left

    def test_reembed_is_cancellable_and_resumable(self, open_store: OpenStore) -> None:
        open_store(8, "old").add_many([(f"fact {i}", unit(i, 8)) for i in range(10)])
        new = open_store(DIM, "new")
        progress = Progress()
        calls = 0

        def embed(texts: list[str]) -> np.ndarray:
            nonlocal calls
            calls += 1
            progress.cancel()  # the user cancels during the first batch
            return np.stack([unit(i) for i in range(len(texts))])

        with pytest.raises(CustodiaEnvironmentError):  # CancelledError
            new.reembed(embed, progress, batch_size=4)
        assert new.stats().searchable == 4  # the finished batch is kept
        assert new.reembed(lambda texts: np.stack([unit(1) for _ in texts])) == 6

    # -- persistence and other sessions ----------------------------------------------------
    def test_memories_survive_reopening(self, open_store: OpenStore) -> None:
        first = open_store(DIM, "model-a")
        first.add("I am allergic to penicillin", unit(5))
        first.close()
        second = open_store(DIM, "model-a")
        assert second.search(unit(5), k=1)[0].text == "I am allergic to penicillin"

    def test_a_second_instance_sees_writes_without_reopening(self, open_store: OpenStore) -> None:
        reader = open_store(DIM, "model-a")
        writer = open_store(DIM, "model-a")
        assert reader.search(unit(1), k=5) == []  # index loaded, empty
        writer.add("written elsewhere", unit(1))
        assert reader.search(unit(1), k=1)[0].text == "written elsewhere"
        writer.update("written elsewhere", "edited elsewhere", unit(2))
        assert [h.text for h in reader.search(unit(2), k=5)] == ["edited elsewhere"]
        writer.delete("edited elsewhere")
        assert reader.search(unit(2), k=5) == []

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself_read_only(self, store: Any, tmp_path: Path) -> None:
        cfg = describing.config(tmp_path)
        store.add("first", unit(1))
        store.add("second", unit(2))
        measured = describing.measure(store, cfg, path=store.path)
        assert measured.items == store.count() == 2
        assert measured.size_bytes and measured.size_bytes > 0
        describing.check_probe(store, cfg, path=store.path)
