"""A large memory store searches int8 codes first, then scores the best exactly (issue 29).

The codes are derived: a snapshot beside the database, memory-mapped, replayed from the
change log, rebuilt when stale; the float32 vectors in the table stay the truth (PA1).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from backends.stores.memories import quantised, snapshot
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
    assert (snapshot.snapshot_dir(path) / "meta.json").is_file()
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
    # a few changes of this process are replayed from the log next time, not rewritten...
    store.add("added here", vectors[5])
    store.close()
    store = SQLiteMemoryStore(path, DIM, "m", quantise_above=1000)
    assert store.search(vectors[5], k=2)[0].text in {"added here", "memory 5"}
    assert store.loaded_rows == 1501 and store._codes is not None and store._codes.base == 1500
    # ...many go to the next snapshot when it closes
    store.SNAPSHOT_AFTER = 1
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
    folder = snapshot.snapshot_dir(path)
    (files,) = folder.glob("snapshot-*")  # one: the earlier ones are removed
    (files / "texts.bin").write_bytes(b"cut short")
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
    key = {"store_id": _store_id(path), "dimension": DIM}
    assert snapshot.load(folder, {**key, "model": "m"}) is not None
    assert snapshot.load(folder, {**key, "model": "other"}) is None


# -- the snapshot is bound to its database (issue 29) ---------------------------------------


def _store_id(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(
            conn.execute("SELECT value FROM memory_state WHERE key = 'store_id'").fetchone()[0]
        )
    finally:
        conn.close()


def _header(path: Path) -> dict:
    import json

    return json.loads((snapshot.snapshot_dir(path) / "meta.json").read_text())


def _open_quantised(path: Path) -> SQLiteMemoryStore:
    store = SQLiteMemoryStore(path, DIM, "m", quantise_above=1000)
    store.load()
    return store


def _all_found(store: SQLiteMemoryStore, vectors: np.ndarray, prefix: str = "memory") -> bool:
    rows = [0, 1, len(vectors) // 2, len(vectors) - 1]
    return all(f"{prefix} {i}" in {h.text for h in store.search(vectors[i], k=3)} for i in rows)


def test_each_database_has_its_own_identity(tmp_path: Path) -> None:
    SQLiteMemoryStore(tmp_path / "a.sqlite3", DIM, "m").close()
    SQLiteMemoryStore(tmp_path / "b.sqlite3", DIM, "m").close()
    first = _store_id(tmp_path / "a.sqlite3")
    assert first > 0 and first != _store_id(tmp_path / "b.sqlite3")
    SQLiteMemoryStore(tmp_path / "a.sqlite3", DIM, "m").close()
    assert _store_id(tmp_path / "a.sqlite3") == first  # kept, not drawn again


def test_a_snapshot_of_another_database_is_refused_and_rebuilt(tmp_path: Path) -> None:
    """Two databases of the same texts, another's vectors: a data dir put together by hand
    (the memory file of one, the snapshot folder of the other)."""
    import shutil

    vectors = _clustered(1200)
    ours, theirs = tmp_path / "ours" / "m.sqlite3", tmp_path / "theirs" / "m.sqlite3"
    _fill(ours, vectors)
    _fill(theirs, vectors[::-1].copy())
    _open_quantised(theirs).close()
    shutil.copytree(snapshot.snapshot_dir(theirs), snapshot.snapshot_dir(ours))
    store = _open_quantised(ours)
    assert store.incremental_syncs == 0  # built from the table, not their codes replayed
    assert _all_found(store, vectors)
    store.close()
    assert _header(ours)["store_id"] == _store_id(ours)
    store = _open_quantised(ours)  # the rebuilt snapshot is ours: used next time
    assert store.incremental_syncs == 1 and _all_found(store, vectors)
    store.close()


def test_a_restored_backup_written_since_refuses_the_newer_snapshot(tmp_path: Path) -> None:
    """Same identity, same log positions, another history: the snapshot saw rows the
    restored file never had, and not the rows written to it since."""
    vectors = _clustered(1300)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors[:1200])
    backup = tmp_path / "backup.sqlite3"
    with sqlite3.connect(path) as source, sqlite3.connect(backup) as target:
        source.backup(target)
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=None) as other:
        other.add_many((f"later {i}", vectors[1200 + i]) for i in range(5))
    store = _open_quantised(path)
    store.SNAPSHOT_AFTER = 1
    store.close()  # a snapshot that includes the "later" rows
    with sqlite3.connect(backup) as source, sqlite3.connect(path) as target:
        source.backup(target)  # the backup restored...
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=None) as other:  # ...and used
        other.add_many((f"other {i}", vectors[1250 + i]) for i in range(5))
    assert _header(path)["last_seq"] == other_max_seq(path)  # the same position
    store = _open_quantised(path)
    assert store.incremental_syncs == 0  # refused: rebuilt from the table
    assert store.loaded_rows == 1205
    assert store.search(vectors[1252], k=1)[0].text == "other 2"
    assert not any(h.text.startswith("later") for h in store.search(vectors[1202], k=20))
    store.close()


def other_max_seq(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT max(seq) FROM memory_log").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("damage", ["cut codes", "cut bits", "garbage header", "texts", "codes"])
def test_a_cut_short_or_overwritten_snapshot_is_rebuilt_losing_nothing(
    tmp_path: Path, damage: str
) -> None:
    vectors = _clustered(1200)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors)
    _open_quantised(path).close()
    folder = snapshot.snapshot_dir(path)
    (files,) = folder.glob("snapshot-*")
    if damage.startswith("cut"):
        target = files / ("codes.npy" if damage == "cut codes" else "bits.npy")
        target.write_bytes(target.read_bytes()[: target.stat().st_size // 2])
    elif damage == "garbage header":
        (folder / "meta.json").write_bytes(b"\x00{not json")
    else:  # the same size, other bytes: a row's text, or the codes of the sampled first row
        target = files / ("texts.bin" if damage == "texts" else "codes.npy")
        data = bytearray(target.read_bytes())
        at = 20 if damage == "texts" else len(data) - 1200 * DIM
        data[at] = (data[at] + 1) % 256
        target.write_bytes(bytes(data))
    store = _open_quantised(path)
    assert store.incremental_syncs == 0 and store.loaded_rows == 1200
    assert _all_found(store, vectors) and store.count() == 1200
    store.close()
    store = _open_quantised(path)  # and the new snapshot is whole
    assert store.incremental_syncs == 1 and _all_found(store, vectors)
    store.close()


def test_a_stale_snapshot_catches_up_with_other_connections_writes(tmp_path: Path) -> None:
    vectors = _clustered(1300)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors[:1200])
    store = _open_quantised(path)
    with SQLiteMemoryStore(path, DIM, "m", quantise_above=None) as other:
        other.add_many((f"memory {i}", vectors[i]) for i in range(1200, 1250))
    assert store.search(vectors[1210], k=1)[0].text == "memory 1210"  # seen while open
    store.close()  # 50 changes: left to the log
    # the original app (no Custodia code: raw SQL) writes while no Custodia has it open
    conn = sqlite3.connect(path)
    conn.executemany(
        "INSERT INTO vectores(texto, dimension, vector) VALUES (?, ?, ?)",
        [(f"memory {i}", DIM, vectors[i].astype("<f4").tobytes()) for i in range(1250, 1300)],
    )
    conn.execute("DELETE FROM vectores WHERE texto = 'memory 0'")
    conn.commit()
    conn.close()
    store = _open_quantised(path)
    assert store.full_loads == 1 and store.incremental_syncs == 1  # mapped, then caught up
    assert store._codes is not None and store._codes.base == 1200
    assert store.loaded_rows == 1299
    for i in (1201, 1249, 1250, 1299):
        assert store.search(vectors[i], k=1)[0].text == f"memory {i}"
    assert "memory 0" not in {h.text for h in store.search(vectors[0], k=10)}
    store.close()


def test_an_interrupted_write_leaves_the_previous_snapshot_usable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = _clustered(1300)
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors[:1200])
    _open_quantised(path).close()
    before = _header(path)
    store = _open_quantised(path)
    store.add_many((f"memory {i}", vectors[i]) for i in range(1200, 1300))
    real_replace = snapshot.os.replace

    def crash_at_the_header(source: str, target: str | Path) -> None:
        if Path(target).name == "meta.json":
            raise OSError("the disk is full")
        real_replace(source, target)

    monkeypatch.setattr(snapshot.os, "replace", crash_at_the_header)
    store.SNAPSHOT_AFTER = 1
    store.close()  # the write fails (logged): the table has every row
    monkeypatch.undo()
    assert _header(path) == before
    folder = snapshot.snapshot_dir(path)
    assert not list(folder.glob(".meta-*"))  # no temporary header left behind
    store = _open_quantised(path)
    assert store.incremental_syncs == 1 and store._codes is not None
    assert store._codes.base == 1200 and store.loaded_rows == 1300  # old one, log replayed
    assert store.search(vectors[1250], k=1)[0].text == "memory 1250"
    store.close()
    for child in folder.rglob("*"):
        if child.is_file():
            assert child.stat().st_mode & 0o077 == 0, child


# -- a mid-size store: int8 codes beside the float32 matrix (issue 29) -----------------------


def test_a_mid_size_store_scans_int8_codes_first_and_keeps_them_in_step(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    vectors = rng.standard_normal((3000, 384)).astype(np.float32)  # random: the hard case
    path = tmp_path / "m.sqlite3"
    _fill(path, vectors)
    exact = SQLiteMemoryStore(path, 384, "m", quantise_above=None, codes_first_above=None)
    fast = SQLiteMemoryStore(path, 384, "m", codes_first_above=1000, rescore=64)
    # edits of both kinds: this process's and another connection's
    fast.delete("memory 10")
    fast.update("memory 11", "memory 11, edited", vectors[12])
    fast.add("memory new", vectors[13])
    with SQLiteMemoryStore(path, 384, "m", quantise_above=None) as other:
        other.delete("memory 20")
        other.add("memory elsewhere", vectors[21])
    queries = rng.standard_normal((40, 384)).astype(np.float32)
    found = 0
    for query in [*queries, vectors[12], vectors[21]]:
        want = exact.search(query, k=10)
        got = fast.search(query, k=10)
        found += len({h.text for h in want} & {h.text for h in got})
        for hit in got:  # the similarities are the float32 matrix's, exactly
            assert abs(hit.similarity - exact.similarities(query, [hit.text])[hit.text]) < 1e-6
    assert found / (10 * (len(queries) + 2)) >= 0.99
    assert fast._fast is not None and fast._codes is None and exact._fast is None
    assert "memory 10" not in {h.text for h in fast.search(vectors[10], k=20)}
    assert fast.search(vectors[12], k=2)[0].text in {"memory 12", "memory 11, edited"}
    fast.close()
    exact.close()
