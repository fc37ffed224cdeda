"""The SQLite memory store beyond the contract: the exact table, other processes, bad files."""

from __future__ import annotations

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.stores.memories import MemoryStoreError
from backends.stores.memories import sqlite as store_module
from backends.stores.memories.sqlite import SQLiteMemoryStore, to_blob

DIM = 16
ROOT = Path(__file__).resolve().parents[3]


def unit(seed: int, dim: int = DIM) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memories.sqlite3"


def brute_force(vectors: dict[str, np.ndarray], query: np.ndarray, k: int) -> list[str]:
    texts = list(vectors)
    matrix = np.stack([vectors[t] / np.linalg.norm(vectors[t]) for t in texts])
    scores = matrix @ (query / np.linalg.norm(query))
    return [texts[i] for i in np.argsort(-scores, kind="stable")[:k]]


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


# -- the table (PA1) -----------------------------------------------------------------------
def test_the_table_is_exactly_the_originals(path: Path) -> None:
    SQLiteMemoryStore(path, DIM, "m").close()
    with sqlite3.connect(path) as conn:
        columns = [(r[1], r[2], r[3], r[5]) for r in conn.execute("PRAGMA table_info(vectores)")]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert columns == [
        ("texto", "TEXT", 0, 1),
        ("dimension", "INTEGER", 1, 0),
        ("vector", "BLOB", 1, 0),
    ]
    assert version == len(store_module.MIGRATIONS)
    assert mode == "wal"


def test_files_are_private(path: Path) -> None:
    SQLiteMemoryStore(path, DIM, "m").close()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_vectors_are_stored_as_float32_blobs(path: Path) -> None:
    with SQLiteMemoryStore(path, DIM, "m") as store:
        store.add("a fact", 2 * unit(1))
    with sqlite3.connect(path) as conn:
        dimension, blob = conn.execute("SELECT dimension, vector FROM vectores").fetchone()
    assert dimension == DIM and len(blob) == DIM * 4
    np.testing.assert_allclose(np.frombuffer(blob, dtype="<f4"), unit(1), rtol=1e-6)


def test_an_original_database_is_adopted(path: Path) -> None:
    """A file written by the original app (only ``vectores``) opens with its rows."""
    path.parent.mkdir(mode=0o700)
    with sqlite3.connect(path) as conn:
        conn.execute(store_module.VECTORES_DDL)
        conn.execute("INSERT INTO vectores VALUES (?, ?, ?)", ("old fact", DIM, to_blob(unit(3))))
        conn.execute(
            "INSERT INTO vectores VALUES (?, ?, ?)", ("nomic fact", 768, to_blob(unit(4, 768)))
        )
    with SQLiteMemoryStore(path, DIM, "m") as store:
        assert store.search(unit(3), k=5)[0].text == "old fact"
        stats = store.stats()
        assert (stats.total, stats.searchable, stats.other_dimensions) == (2, 1, {768: 1})
        memory = store.get("old fact")
        assert memory is not None and memory.source == "imported" and memory.embedder == ""


def test_a_table_of_another_shape_is_a_typed_error(path: Path) -> None:
    path.parent.mkdir(mode=0o700)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE vectores (texto TEXT, embedding BLOB)")
    with pytest.raises(MemoryStoreError, match="not the memory table"):
        SQLiteMemoryStore(path, DIM, "m")


# -- bad files and crashes -----------------------------------------------------------------
def test_a_file_that_is_not_a_database_is_a_typed_error(path: Path) -> None:
    path.parent.mkdir(mode=0o700)
    path.write_bytes(b"this is not SQLite at all, just some text " * 200)
    with pytest.raises(StoreUnavailableError) as info:
        SQLiteMemoryStore(path, DIM, "m")
    assert str(path) in str(info.value)
    assert path.read_bytes().startswith(b"this is not SQLite")  # nothing overwritten


def test_a_corrupted_page_is_a_typed_error_not_a_crash(path: Path) -> None:
    with SQLiteMemoryStore(path, DIM, "m") as store:
        store.add_many([(f"fact number {i} " + "x" * 200, unit(i)) for i in range(300)])
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * 4096
    data[4096 * 3 : 4096 * 8] = os.urandom(4096 * 5)  # wreck pages past the header
    path.write_bytes(bytes(data))
    with pytest.raises(CustodiaEnvironmentError):
        store = SQLiteMemoryStore(path, DIM, "m")
        try:
            store.search(unit(1), k=3)
            store.list()
            store.stats()
        finally:
            store.close()


def test_a_newer_schema_is_refused(path: Path) -> None:
    SQLiteMemoryStore(path, DIM, "m").close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA user_version={len(store_module.MIGRATIONS) + 1}")
    with pytest.raises(StoreUnavailableError, match="newer"):
        SQLiteMemoryStore(path, DIM, "m")


def test_unreadable_rows_are_skipped_counted_and_fixed_by_reembed(path: Path) -> None:
    with SQLiteMemoryStore(path, DIM, "m") as store:
        store.add("good", unit(1))
        store.add("truncated", unit(2))
        store.add("not a number", unit(3))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE vectores SET vector = ? WHERE texto = 'truncated'", (b"\x00" * 10,))
        nan = np.full(DIM, np.nan, dtype=np.float32).tobytes()
        conn.execute("UPDATE vectores SET vector = ? WHERE texto = 'not a number'", (nan,))
    with SQLiteMemoryStore(path, DIM, "m") as store:
        hits = store.search(unit(1), k=10)
        assert [h.text for h in hits] == ["good"]
        assert all(np.isfinite(h.similarity) for h in hits)
        stats = store.stats()
        assert (stats.total, stats.searchable, stats.unreadable) == (3, 1, 2)
        for text in ("truncated", "not a number"):
            memory = store.get(text)
            assert memory is not None and not memory.searchable
        assert store.reembed(lambda texts: np.stack([unit(9) for _ in texts])) == 2
        assert store.stats().searchable == 3
        assert {h.text for h in store.search(unit(9), k=2)} == {"truncated", "not a number"}


def test_a_writer_killed_mid_transaction_loses_only_its_uncommitted_work(path: Path) -> None:
    SQLiteMemoryStore(path, DIM, "m").close()
    result = run_python(
        f"""
        import os, signal, numpy as np
        from pathlib import Path
        from backends.stores.memories.sqlite import SQLiteMemoryStore, to_blob
        store = SQLiteMemoryStore(Path({str(path)!r}), {DIM}, "m")
        rng = np.random.default_rng(0)
        store.add_many([(f"committed {{i}}", rng.normal(size={DIM})) for i in range(10)])
        store.conn.execute("BEGIN IMMEDIATE")
        store.conn.execute(
            "INSERT INTO vectores VALUES ('never committed', {DIM}, ?)",
            (to_blob(rng.normal(size={DIM}).astype('float32')),),
        )
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    assert result.returncode == -signal.SIGKILL, result.stderr
    with SQLiteMemoryStore(path, DIM, "m") as store:
        assert store.count() == 10
        assert store.get("never committed") is None
        assert len(store.search(unit(1), k=20)) == 10
        store.add("after the crash", unit(1))  # and the file is writable again
        assert store.search(unit(1), k=1)[0].text == "after the crash"


# -- other processes and connections (PA4) -------------------------------------------------
def test_a_concurrent_writer_process_is_noticed_incrementally(path: Path) -> None:
    store = SQLiteMemoryStore(path, DIM, "m")
    store.add_many([(f"mine {i}", unit(i)) for i in range(20)])
    assert len(store.search(unit(0), k=100)) == 20  # loaded
    assert store.full_loads == 1
    result = run_python(
        f"""
        import numpy as np
        from pathlib import Path
        from backends.stores.memories.sqlite import SQLiteMemoryStore
        def unit(seed):
            v = np.random.default_rng(seed).normal(size={DIM}).astype(np.float32)
            return v / np.linalg.norm(v)
        store = SQLiteMemoryStore(Path({str(path)!r}), {DIM}, "m")
        for i in range(100, 130):
            store.add(f"theirs {{i}}", unit(i))
        store.delete("mine 3")
        store.update("mine 4", "mine 4, edited", unit(444))
        store.close()
        """
    )
    assert result.returncode == 0, result.stderr
    hits = store.search(unit(120), k=1)
    assert hits[0].text == "theirs 120"
    assert hits[0].similarity == pytest.approx(1.0, abs=1e-5)
    everything = {h.text for h in store.search(unit(0), k=1000)}
    assert len(everything) == 20 + 30 - 1
    assert "mine 3" not in everything and "mine 4" not in everything
    assert store.search(unit(444), k=1)[0].text == "mine 4, edited"
    assert store.full_loads == 1 and store.incremental_syncs >= 1  # no reload of everything
    store.close()


def test_searching_while_another_process_writes(path: Path) -> None:
    """A writer process adds while this one searches: every search is consistent, and the
    last one sees everything (compared with a brute-force scan of the file)."""
    store = SQLiteMemoryStore(path, DIM, "m")
    store.add("seed", unit(0))
    store.load()
    writer = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import numpy as np
                from pathlib import Path
                from backends.stores.memories.sqlite import SQLiteMemoryStore
                store = SQLiteMemoryStore(Path({str(path)!r}), {DIM}, "m")
                rng = np.random.default_rng(7)
                for i in range(300):
                    store.add(f"w{{i}}", rng.normal(size={DIM}))
                    if i % 10 == 9:
                        store.delete(f"w{{i - 5}}")
                store.close()
                """
            ),
        ],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        cwd=ROOT,
    )
    searches = 0
    while writer.poll() is None:
        hits = store.search(unit(searches), k=5)
        assert len({h.text for h in hits}) == len(hits)
        searches += 1
    assert writer.wait(timeout=60) == 0
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT texto, vector FROM vectores").fetchall()
    vectors = {text: np.frombuffer(blob, dtype="<f4") for text, blob in rows}
    assert len(vectors) == 1 + 300 - 30
    for seed in range(5):
        query = unit(1000 + seed)
        assert [h.text for h in store.search(query, k=7)] == brute_force(vectors, query, 7)
    assert store.loaded_rows == len(vectors)
    store.close()


def test_a_plain_sqlite_writer_is_noticed(path: Path) -> None:
    """The original app (or the sqlite3 shell) writes only ``vectores``: still seen."""
    store = SQLiteMemoryStore(path, DIM, "m")
    store.load()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO vectores VALUES ('raw', ?, ?)", (DIM, to_blob(unit(5))))
    assert store.search(unit(5), k=1)[0].text == "raw"
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM vectores")
    assert store.search(unit(5), k=1) == []
    store.close()


def test_a_reader_behind_the_pruned_log_reloads_everything(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "LOG_KEEP", 10)
    monkeypatch.setattr(store_module, "LOG_PRUNE_EVERY", 5)
    reader = SQLiteMemoryStore(path, DIM, "m")
    reader.load()
    writer = SQLiteMemoryStore(path, DIM, "m")
    for i in range(60):
        writer.add(f"m{i}", unit(i))
    with sqlite3.connect(path) as conn:
        (kept,) = conn.execute("SELECT count(*) FROM memory_log").fetchone()
    assert kept <= 10 + 5 * 2
    assert reader.search(unit(42), k=1)[0].text == "m42"
    assert reader.loaded_rows == 60
    assert reader.full_loads == 2  # the gap forced one reload
    writer.close()
    reader.close()


# -- the in-memory matrix ------------------------------------------------------------------
def test_the_matrix_grows_and_matches_brute_force_under_random_edits(path: Path) -> None:
    rng = np.random.default_rng(3)
    store = SQLiteMemoryStore(path, DIM, "m")
    store.load()
    vectors: dict[str, np.ndarray] = {}
    counter = 0
    for step in range(2500):
        choice = rng.random()
        if choice < 0.7 or len(vectors) < 5:
            text = f"m{counter}"
            counter += 1
            vectors[text] = rng.normal(size=DIM).astype(np.float32)
            store.add(text, vectors[text])
        elif choice < 0.85:
            text = list(vectors)[rng.integers(len(vectors))]
            store.delete(text)
            del vectors[text]
        else:
            text = list(vectors)[rng.integers(len(vectors))]
            new = f"m{counter}"
            counter += 1
            vectors[new] = rng.normal(size=DIM).astype(np.float32)
            store.update(text, new, vectors.pop(text) * 0 + vectors[new])
        if step % 500 == 0:
            query = rng.normal(size=DIM).astype(np.float32)
            assert [h.text for h in store.search(query, k=10)] == brute_force(vectors, query, 10)
    assert store.loaded_rows == len(vectors) > 1024  # past the first capacity
    query = rng.normal(size=DIM).astype(np.float32)
    assert [h.text for h in store.search(query, k=25)] == brute_force(vectors, query, 25)
    assert store.full_loads == 1
    store.close()


def test_threads_share_one_store(path: Path) -> None:
    store = SQLiteMemoryStore(path, DIM, "m")
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(50):
                store.add(f"t{offset}-{i}", unit(offset * 100 + i))
                store.search(unit(i), k=3)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert store.count() == 200 and store.loaded_rows == 200
    store.close()


def test_closed_store_is_a_typed_error(path: Path) -> None:
    store = SQLiteMemoryStore(path, DIM, "m")
    store.close()
    with pytest.raises(StoreUnavailableError, match="closed"):
        store.count()
