"""qdrant-edge: each collection passes the vector role's suite, the memory the semantic-memory
suite, plus what only this engine has (its payload indexes, the background HNSW pass, the lease
shared by two processes)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from backends.errors import CancelledError
from backends.models.embedders import Embedder, HashingEmbedder
from backends.progress import Progress
from backends.stores.vectors import COLLECTIONS, INDEXED_FIELDS, MemoryItem, SemanticMemory
from backends.stores.vectors.qdrant_edge import (
    OLD_SUFFIX,
    STAGING_SUFFIX,
    EdgeSemanticMemory,
    shard_dimension,
)
from tests.backends.stores.vectors.semantic_fixtures import CollectionIndex
from tests.contract.semantic import SemanticMemoryContract
from tests.contract.vectors import VectorIndexContract

Open = Callable[[Embedder], SemanticMemory]


class TestQdrantEdgeCollection(CollectionIndex, VectorIndexContract):
    def open_store(self, embedder: Embedder, path: Path) -> EdgeSemanticMemory:
        return EdgeSemanticMemory(embedder, path=path, wait=2.0, idle=0.2)


class TestQdrantEdge(SemanticMemoryContract):
    @pytest.fixture
    def open_memory(self, tmp_path: Path) -> Iterator[Open]:
        opened: list[EdgeSemanticMemory] = []

        def factory(embedder: Embedder) -> SemanticMemory:
            for old in opened:
                old.close()
            memory = EdgeSemanticMemory(embedder, path=tmp_path / "edge", wait=2.0, idle=0.2)
            opened.append(memory)
            return memory

        yield factory
        for memory in opened:
            memory.close()

    # the two suite tests that look inside the engine, in this engine's terms
    def test_collections_cosine_and_recorded_embedder(self, memory: SemanticMemory) -> None:
        assert isinstance(memory, EdgeSemanticMemory)
        assert memory.collections == COLLECTIONS
        for status in memory.status():
            assert (status.embedder, status.dimension, status.points) == ("hashing-64", 64, 0)
            assert status.problem == ""
        for name in COLLECTIONS:
            folder = memory.root / name
            config = json.loads((folder / "shard" / "edge_config.json").read_text())
            assert config["vectors"][""] == {"size": 64, "distance": "Cosine"}
            meta = json.loads((folder / "meta.json").read_text())
            assert meta["indexes"] == list(INDEXED_FIELDS)

    def stored_names(self, memory: SemanticMemory) -> set[str]:
        assert isinstance(memory, EdgeSemanticMemory)
        return {p.name for p in memory.root.iterdir()}

    def test_payload_indexes_cover_every_point(self, memory: SemanticMemory) -> None:
        assert isinstance(memory, EdgeSemanticMemory)
        self.fill(memory)
        assert memory.payload_indexes("agent_results") == {f: 4 for f in INDEXED_FIELDS}

    @pytest.mark.parametrize("complete", [True, False])
    def test_an_interrupted_swap_is_finished_or_undone(
        self, open_memory: Open, memory: SemanticMemory, complete: bool
    ) -> None:
        assert isinstance(memory, EdgeSemanticMemory)
        self.fill(memory)
        memory.close()
        root = memory.root
        if complete:
            # killed between "original aside" and "staging in place": the staging is complete
            (root / "agent_results").rename(root / ("agent_results" + STAGING_SUFFIX))
            (root / ("agent_results" + OLD_SUFFIX)).mkdir()
        else:
            # killed while the staging was filling: the original was only moved aside
            (root / "agent_results").rename(root / ("agent_results" + OLD_SUFFIX))
            (root / ("agent_results" + STAGING_SUFFIX)).mkdir()
        recovered = open_memory(HashingEmbedder(64))
        assert recovered.count("agent_results") == 4
        assert recovered.search("agent_results", "json", limit=1)[0].ticket == "t3"
        assert sorted(p.name for p in root.iterdir() if p.is_dir()) == sorted(COLLECTIONS)

    def test_the_lease_is_given_back_when_idle(self, memory: SemanticMemory) -> None:
        assert isinstance(memory, EdgeSemanticMemory)
        memory.count("agent_results")
        assert memory.held
        memory.release()
        assert not memory.held
        assert memory.count("agent_results") == 0  # taken again on demand

    def test_hnsw_pass_in_a_child_with_progress(self, tmp_path: Path) -> None:
        memory = EdgeSemanticMemory(HashingEmbedder(16), path=tmp_path / "e", hnsw_threshold=300)
        try:
            rng = np.random.default_rng(0)
            vectors = rng.standard_normal((400, 16)).astype(np.float32)
            items = [MemoryItem(f"item {i}", f"s{i % 4}") for i in range(400)]
            ids = [item.point_id("code_patterns") for item in items]
            memory.upsert_vectors("code_patterns", ids, vectors, items)
            before = memory.search_vector("code_patterns", vectors[3], limit=5, session="s3")
            assert memory.needs_optimise() == ["code_patterns"]
            seen: list[tuple[int, int]] = []
            progress = Progress(callback=lambda done, total, msg: seen.append((done, total)))
            assert memory.optimise(progress) == 1
            assert seen[-1] == (1, 1)
            assert memory.indexed("code_patterns") == (400, 400)
            assert memory.needs_optimise() == []
            after = memory.search_vector("code_patterns", vectors[3], limit=5, session="s3")
            assert [h.id for h in after] == [h.id for h in before]
        finally:
            memory.close()

    def test_a_cancelled_hnsw_pass_leaves_the_collection_as_it_was(self, tmp_path: Path) -> None:
        memory = EdgeSemanticMemory(HashingEmbedder(16), path=tmp_path / "e", hnsw_threshold=300)
        try:
            vectors = np.random.default_rng(1).standard_normal((400, 16)).astype(np.float32)
            items = [MemoryItem(f"item {i}") for i in range(400)]
            memory.upsert_vectors(
                "agent_results", [i.point_id("agent_results") for i in items], vectors, items
            )
            progress = Progress()
            progress.cancel()
            with pytest.raises(CancelledError):
                memory.optimise(progress)
            assert memory.indexed("agent_results") == (400, 0)
            assert memory.search_vector("agent_results", vectors[9], limit=1)[0].text == "item 9"
        finally:
            memory.close()

    def test_dimension_read_from_the_shard_itself(self, memory: SemanticMemory) -> None:
        assert isinstance(memory, EdgeSemanticMemory)
        assert shard_dimension(memory.root / "agent_results" / "shard") == 64


# -- moving a qdrant-client local-mode folder over -------------------------------------------


def _legacy(path: Path, embedder: Embedder | None = None) -> dict[str, list[tuple[str, dict]]]:
    """A local-mode folder as today's main writes it; returns each collection's points."""
    from backends.stores.vectors.qdrant import QdrantSemanticMemory

    old = QdrantSemanticMemory(embedder or HashingEmbedder(64), path=path)
    try:
        old.add_many(
            "agent_results",
            [MemoryItem(f"result {i}", f"s{i % 3}", "coder", f"t{i}") for i in range(40)],
        )
        old.add("session_memory", MemoryItem("Task: csv\nOutcome: done", "s1", "reviewer"))
        return {
            name: sorted((pid, payload) for pid, _, payload in old.points(name))
            for name in COLLECTIONS
        }
    finally:
        old.close()


def _edge_points(memory: EdgeSemanticMemory) -> dict[str, list[tuple[str, dict]]]:
    return {
        name: sorted((pid, payload) for pid, _, payload in memory.points(name))
        for name in COLLECTIONS
    }


def test_a_local_mode_folder_moves_over_by_itself(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    legacy = tmp_path / "qdrant"
    before = _legacy(legacy)
    with caplog.at_level("WARNING"):
        memory = EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge", legacy_path=legacy)
    try:
        assert _edge_points(memory) == before
        assert memory.search("agent_results", "result 7", limit=1)[0].ticket == "t7"
        assert not memory.needs_reembed
        assert not legacy.exists()
        assert json.loads((memory.root / "migrated.json").read_text())["points"] == {
            "agent_results": 40,
            "session_memory": 1,
        }
        assert any("moved 41 points from Qdrant local mode" in r.message for r in caplog.records)
    finally:
        memory.close()


def test_a_moved_collection_keeps_its_embedder_and_asks_for_a_reembed(tmp_path: Path) -> None:
    legacy = tmp_path / "qdrant"
    _legacy(legacy, HashingEmbedder(32))
    memory = EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge", legacy_path=legacy)
    try:
        assert memory.problem("agent_results") is not None  # 32-d: a typed error, not a loss
        assert memory.count("agent_results") == 40
        assert memory.reembed() == 41
        assert memory.search("agent_results", "result 7", limit=1)[0].ticket == "t7"
    finally:
        memory.close()


def test_an_interrupted_move_resumes_and_loses_nothing(tmp_path: Path) -> None:
    legacy = tmp_path / "qdrant"
    before = _legacy(legacy)
    edge = tmp_path / "edge"
    # killed after part of the copy: the target holds some points, no marker, the old folder
    first = EdgeSemanticMemory(HashingEmbedder(64), path=edge)
    first.add_many(
        "agent_results",
        [MemoryItem(f"result {i}", f"s{i % 3}", "coder", f"t{i}") for i in range(10)],
    )
    first.close()
    again = EdgeSemanticMemory(HashingEmbedder(64), path=edge, legacy_path=legacy)
    try:
        assert _edge_points(again) == before
        assert not legacy.exists()
    finally:
        again.close()


def test_a_move_killed_while_removing_the_old_folder_finishes_it(tmp_path: Path) -> None:
    legacy = tmp_path / "qdrant"
    before = _legacy(legacy)
    edge = tmp_path / "edge"
    EdgeSemanticMemory(HashingEmbedder(64), path=edge, legacy_path=legacy).close()
    # as if the kill landed inside the removal: a marker, and what is left of the old folder
    (legacy / "collection" / "agent_results").mkdir(parents=True)
    again = EdgeSemanticMemory(HashingEmbedder(64), path=edge, legacy_path=legacy)
    try:
        assert not legacy.exists()
        assert _edge_points(again) == before
    finally:
        again.close()


def test_a_shard_killed_while_being_created_is_made_again(tmp_path: Path) -> None:
    edge = tmp_path / "edge"
    EdgeSemanticMemory(HashingEmbedder(64), path=edge).close()
    meta = edge / "code_patterns" / "meta.json"
    meta.write_text(json.dumps(dict(json.loads(meta.read_text()), state="creating")))
    for leftover in (edge / "code_patterns" / "shard" / "segments").iterdir():
        import shutil

        shutil.rmtree(leftover)
    memory = EdgeSemanticMemory(HashingEmbedder(64), path=edge)
    try:
        memory.add("code_patterns", MemoryItem("x"))
        assert memory.count("code_patterns") == 1
    finally:
        memory.close()
