"""A large memory store searches int8 codes first, then scores the best exactly (issue 29).

The codes are derived: a snapshot beside the database, memory-mapped, replayed from the
change log, rebuilt when stale; the float32 vectors in the table stay the truth (PA1).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from backends.stores.memories import quantised
from backends.stores.memories.sqlite import SQLiteMemoryStore

DIM = 64


def _clustered(n: int, seed: int = 7, dim: int = DIM) -> np.ndarray:
    """Not centred, in clusters: like sentence embeddings, unlike random vectors."""
    rng = np.random.default_rng(seed)
    common = 3.0 * rng.standard_normal(dim).astype(np.float32)
    centres = rng.standard_normal((max(1, n // 20), dim)).astype(np.float32) + common
    vectors = centres[rng.integers(0, len(centres), n)]
    vectors = vectors + 0.6 * rng.standard_normal((n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _fill(path: Path, vectors: np.ndarray) -> None:
    store = SQLiteMemoryStore(path, vectors.shape[1], "m", quantise_above=None)
    store.add_many((f"memory {i}", v) for i, v in enumerate(vectors))
    store.close()


def test_the_int8_pass_finds_what_the_exact_search_finds(tmp_path: Path) -> None:
    vectors = _clustered(3000)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors)
    exact = SQLiteMemoryStore(path, DIM, "m", quantise_above=None)
    fast = SQLiteMemoryStore(path, DIM, "m", quantise_above=1000, rescore=64)
    queries = _clustered(50, seed=8)
    found = 0
    for query in queries:
        want = exact.search(query, k=10)
        got = fast.search(query, k=10)
        found += len({h.text for h in want} & {h.text for h in got})
        # the scores shown are the exact cosines, from the table's float32 vectors
        for hit in got:
            assert abs(hit.similarity - exact.similarities(query, [hit.text])[hit.text]) < 1e-5
    assert found / (10 * len(queries)) >= 0.99
    assert fast._codes is not None and exact._codes is None
    fast.close()
    exact.close()


def test_the_sign_bits_choose_the_candidates_of_a_large_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(quantised.Int8Rows, "BITS_ABOVE", 500)
    monkeypatch.setattr(quantised.Int8Rows, "BITS_CANDIDATES", 600)
    vectors = _clustered(3000, seed=9, dim=384)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors)
    exact = SQLiteMemoryStore(path, 384, "m", quantise_above=None)
    fast = SQLiteMemoryStore(path, 384, "m", quantise_above=1000, rescore=64)
    found = 0
    queries = _clustered(30, seed=10, dim=384)
    for query in queries:
        want = {h.text for h in exact.search(query, k=10)}
        found += len(want & {h.text for h in fast.search(query, k=10)})
    assert found / (10 * len(queries)) >= 0.99
    fast.add("one more", queries[0])  # a row beyond the mapped snapshot is scanned too
    assert fast.search(queries[0], k=1)[0].text == "one more"
    fast.close()
    exact.close()


def test_the_snapshot_is_mapped_next_time_and_the_log_replayed(tmp_path: Path) -> None:
    vectors = _clustered(1500)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors)
    store = SQLiteMemoryStore(path, DIM, "m", quantise_above=1000)
    store.load()
    assert (quantised.snapshot_dir(path) / "meta.json").is_file()
    store.close()
    # another writer while no Custodia had it open (the original app, the sqlite3 shell)
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=None) as other:
        other.delete("memory 3")
        other.add("a new memory", vectors[3])
    store = SQLiteMemoryStore(path, DIM, "m", quantise_above=1000)
    store.load()
    assert store._codes is not None and store._codes.base == 1500  # the snapshot, mapped
    assert store.incremental_syncs == 1  # ...and the two changes replayed, not a rebuild
    assert store.search(vectors[3], k=1)[0].text == "a new memory"
    assert "memory 3" not in {h.text for h in store.search(vectors[3], k=20)}
    # changes of this process go to the next snapshot when it closes
    store.add("added here", vectors[5])
    store.close()
    store = SQLiteMemoryStore(path, DIM, "m", quantise_above=1000)
    assert store.search(vectors[5], k=2)[0].text in {"added here", "memory 5"}
    assert store.loaded_rows == 1501 and store._codes is not None and store._codes.base == 1501
    store.close()


def test_a_stale_or_broken_snapshot_is_rebuilt_from_the_table(tmp_path: Path) -> None:
    vectors = _clustered(1200)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors)
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=1000) as store:
        store.load()
    folder = quantised.snapshot_dir(path)
    (snapshot,) = folder.glob("snapshot-*")  # one: the earlier ones are removed
    (snapshot / "texts.bin").write_bytes(b"cut short")
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=1000) as store:
        assert store.search(vectors[7], k=1)[0].text == "memory 7"
    # the log pruned past the snapshot: the snapshot cannot be brought up to date
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=None) as other:
        other.add("written meanwhile", vectors[11])
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE memory_state SET value = (SELECT max(seq) FROM memory_log) WHERE key = 'log_floor'"
    )
    conn.commit()
    conn.close()
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=1000) as store:
        assert store.search(vectors[9], k=1)[0].text == "memory 9"
        assert store.search(vectors[11], k=2)[0].text in {"memory 11", "written meanwhile"}
        assert store.loaded_rows == 1201
    # a snapshot of another model is not used for this one
    assert quantised.load(folder, {"dimension": DIM, "model": "other"}) is None
