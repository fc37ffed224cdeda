"""Contract of the semantic-memory role (MA10–MA11): the abstract suite only.

Each implementation runs it from a small fixtures class in ``tests/backends/stores/vectors/``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backends.errors import (
    CancelledError,
    DimensionMismatchError,
    EmbedderMismatchError,
)
from backends.models.embedders import Embedder, HashingEmbedder
from backends.progress import Progress
from backends.stores.vectors import COLLECTIONS, INDEXED_FIELDS, MemoryItem, SemanticMemory
from backends.stores.vectors.qdrant import STAGING_SUFFIX
from tests.contract import describing

Open = Callable[[Embedder], SemanticMemory]


class RenamedEmbedder(HashingEmbedder):
    """Same vectors and dimension as the hashing embedder, another model name."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.name = f"other-model-{dimension}"


class SemanticMemoryContract:
    def stored_names(self, memory: SemanticMemory) -> set[str]:
        """The collections (staging ones included) the engine holds: each engine says."""
        raise NotImplementedError

    @pytest.fixture
    def open_memory(self) -> Iterator[Open]:
        raise NotImplementedError

    @pytest.fixture
    def memory(self, open_memory: Open) -> SemanticMemory:
        return open_memory(HashingEmbedder(64))

    def fill(self, memory: SemanticMemory) -> None:
        memory.add_many(
            "agent_results",
            [
                MemoryItem("parse csv files with the csv module", "s1", "coder", "t1"),
                MemoryItem("csv files can hold quoted commas", "s1", "researcher", "t2"),
                MemoryItem("parse json with the json module", "s2", "coder", "t3"),
                MemoryItem("review: the csv parser handles quotes", "s2", "reviewer", ""),
            ],
        )

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself(self, memory: SemanticMemory, tmp_path: Path) -> None:
        cfg = describing.config(tmp_path)
        self.fill(memory)
        measured = describing.measure(memory, cfg)
        assert measured.items == sum(s.points for s in memory.status()) == 4
        assert measured.note.startswith("agent_results 4, ")
        describing.check_probe(memory, cfg)

    def test_collections_cosine_and_recorded_embedder(self, memory: SemanticMemory) -> None:
        assert memory.collections == COLLECTIONS
        statuses = {s.name: s for s in memory.status()}
        assert set(statuses) == set(COLLECTIONS)
        for status in statuses.values():
            assert (status.embedder, status.dimension, status.points) == ("hashing-64", 64, 0)
            assert status.problem == ""
        client = memory._client
        for name in COLLECTIONS:
            info = client.get_collection(name)
            vectors: Any = info.config.params.vectors
            assert vectors.distance.name == "COSINE"
            assert vectors.size == 64
            assert (info.config.metadata or {})["indexes"] == list(INDEXED_FIELDS)

    # -- copy_to: a migration's copy (same ids, vectors and payloads; idempotent) ----------
    def test_copy_to_copies_every_point_in_and_out(
        self, memory: SemanticMemory, tmp_path: Path
    ) -> None:
        from backends.stores.vectors.qdrant import QdrantSemanticMemory

        embedder = HashingEmbedder(64)
        source = QdrantSemanticMemory(embedder, path=tmp_path / "copy-source")
        back = QdrantSemanticMemory(embedder, path=tmp_path / "copy-back")
        try:
            self.fill(source)
            source.add(
                "session_memory",
                MemoryItem("Task: csv. Outcome: done", "s1", extra={"phase": "done"}),
            )
            progress = Progress()
            assert source.copy_to(memory, progress, batch=2) == 5  # into this engine
            assert progress.done == 5
            assert source.copy_to(memory) == 5  # again: upserts, nothing twice
            assert memory.count("agent_results") == 4 and memory.count("session_memory") == 1
            assert memory.copy_to(back) == 5  # and out of it
            for name in source.collections:
                a, b, c = (sorted(m.points(name)) for m in (source, memory, back))
                assert [(i, p) for i, _, p in a] == [(i, p) for i, _, p in b]
                assert [(i, p) for i, _, p in a] == [(i, p) for i, _, p in c]
                for (_, va, _), (_, vb, _) in zip(a, b, strict=True):
                    assert np.allclose(va, vb, atol=1e-6)
            hits = memory.search("agent_results", "parse csv files", limit=1, session="s1")
            assert hits[0].text == "parse csv files with the csv module"
        finally:
            source.close()
            back.close()

    def test_add_and_search_keep_text_and_tags(self, memory: SemanticMemory) -> None:
        self.fill(memory)
        hits = memory.search("agent_results", "parse csv files", limit=2)
        assert hits[0].text == "parse csv files with the csv module"
        assert (hits[0].session, hits[0].expert, hits[0].ticket) == ("s1", "coder", "t1")
        assert hits[0].score >= hits[1].score
        assert memory.count("agent_results") == 4

    @pytest.mark.parametrize(
        ("filters", "expected"),
        [
            ({"session": "s2"}, {"t3", ""}),
            ({"expert": "coder"}, {"t1", "t3"}),
            ({"ticket": "t2"}, {"t2"}),
            ({"session": "s1", "expert": "coder"}, {"t1"}),
            ({"exclude_session": "s1"}, {"t3", ""}),
            ({"session": "nobody"}, set()),
        ],
    )
    def test_filters_go_inside_the_query(
        self, memory: SemanticMemory, filters: dict[str, str], expected: set[str]
    ) -> None:
        self.fill(memory)
        hits = memory.search("agent_results", "csv", limit=10, **filters)
        assert {h.ticket for h in hits} == expected

    def test_same_item_twice_is_stored_once(self, memory: SemanticMemory) -> None:
        item = MemoryItem("idempotent", "s", "coder", "t")
        assert memory.add("code_patterns", item) == memory.add("code_patterns", item)
        assert memory.count("code_patterns") == 1

    def test_search_all_spans_collections(self, memory: SemanticMemory) -> None:
        memory.add("code_patterns", MemoryItem("a regex for dates", "s", "coder"))
        memory.add("session_memory", MemoryItem("Task: dates\nOutcome: regex", "s", "reviewer"))
        hits = memory.search_all("regex dates", limit=5)
        assert {h.collection for h in hits} == {"code_patterns", "session_memory"}

    def test_survives_reopening(self, open_memory: Open, memory: SemanticMemory) -> None:
        self.fill(memory)
        memory.close()
        again = open_memory(HashingEmbedder(64))
        assert again.count("agent_results") == 4
        assert again.search("agent_results", "json module", limit=1)[0].ticket == "t3"

    # -- MA11 ------------------------------------------------------------------------------
    def test_another_dimension_is_an_error_never_an_empty_result(
        self, open_memory: Open, memory: SemanticMemory
    ) -> None:
        self.fill(memory)
        memory.close()
        wrong = open_memory(HashingEmbedder(32))
        assert wrong.needs_reembed
        with pytest.raises(DimensionMismatchError) as err:
            wrong.search("agent_results", "csv")
        assert (err.value.expected, err.value.got) == (64, 32)
        with pytest.raises(DimensionMismatchError):
            wrong.add("agent_results", MemoryItem("new"))
        with pytest.raises(DimensionMismatchError):
            wrong.search_all("csv")
        assert all(s.problem for s in wrong.status())
        assert wrong.count("agent_results") == 4  # nothing lost

    def test_same_dimension_other_model_is_an_error_too(
        self, open_memory: Open, memory: SemanticMemory
    ) -> None:
        self.fill(memory)
        memory.close()
        other = open_memory(RenamedEmbedder(64))
        with pytest.raises(EmbedderMismatchError, match="hashing-64"):
            other.search("agent_results", "csv")

    def test_a_query_vector_of_another_size_is_an_error(self, memory: SemanticMemory) -> None:
        with pytest.raises(DimensionMismatchError):
            memory.search_vector("agent_results", np.ones(10, dtype=np.float32))

    def test_reembed_switches_model_with_progress_and_keeps_everything(
        self, open_memory: Open, memory: SemanticMemory
    ) -> None:
        self.fill(memory)
        memory.add("session_memory", MemoryItem("Task: csv\nOutcome: done", "s1", "reviewer"))
        memory.close()
        switched = open_memory(HashingEmbedder(32))
        seen: list[tuple[int, int]] = []
        progress = Progress(callback=lambda done, total, msg: seen.append((done, total)))
        assert switched.reembed(progress) == 5
        assert seen[-1] == (5, 5)
        assert not switched.needs_reembed
        assert switched.count("agent_results") == 4
        assert switched.count("session_memory") == 1
        hit = switched.search("agent_results", "json module", limit=1)[0]
        assert (hit.text, hit.ticket) == ("parse json with the json module", "t3")
        assert {s.dimension for s in switched.status()} == {32}
        switched.close()
        assert open_memory(HashingEmbedder(32)).count("agent_results") == 4

    def test_cancelled_reembed_changes_nothing(
        self, open_memory: Open, memory: SemanticMemory
    ) -> None:
        memory.add_many("agent_results", [MemoryItem(f"item {i}", "s") for i in range(100)])
        memory.close()
        small_batches = HashingEmbedder(32)
        small_batches.batch_size = 20
        switched = open_memory(small_batches)
        progress = Progress()

        def cancel_midway(done: int, total: int, message: str) -> None:
            if done >= 40:
                progress.cancel()

        progress.callback = cancel_midway
        with pytest.raises(CancelledError):
            switched.reembed(progress)
        assert switched.needs_reembed
        assert switched.count("agent_results") == 100
        assert not any(n.endswith(STAGING_SUFFIX) for n in self.stored_names(switched))
        switched.close()
        back = open_memory(HashingEmbedder(64))
        assert back.search("agent_results", "item 7", limit=1)[0].text == "item 7"
