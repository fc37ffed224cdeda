"""Multi-agent (issue 3): session save/load through the three layers; Qdrant filtered search.

* **session save** — :meth:`SessionStore.save` (L1 + L2 + SQLite WAL write-through, MA2) on a
  realistic session (30 feed events, ≈ 8 KB of JSON), against the SQLite mirror's own save
  (the durable write alone) measured in the same run; with the in-process L2, and with a real
  Redis when a ``redis-server`` binary is found (a private one is started).
* **session load** — :meth:`SessionStore.get` on an L1 hit against an L1 miss served by
  SQLite (MA3; each miss is a distinct session written by another store after start-up).
* **semantic search** — Qdrant local mode (``QdrantClient(path=...)``), 10,000 points of 384-d
  synthetic unit vectors tagged with 100 sessions and 4 experts: top-10 with a ``session``
  filter, with ``session`` + ``expert``, and unfiltered — against numpy on the same matrix
  (boolean mask + GEMV + ``argpartition``). Upserts are batched (256 per call) and timed.

Medians over repeats; ratios from the same run. Run: ``python -m bench.bench_multiagent``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.models.embedders import HashingEmbedder  # noqa: E402
from backends.multiagent.sessions import SessionStore  # noqa: E402
from backends.stores.sessions import Session  # noqa: E402
from backends.stores.sessions.sqlite import SqliteSessionMirror  # noqa: E402
from backends.stores.ttl import TTLStore  # noqa: E402
from backends.stores.ttl.memory import MemoryTTLStore  # noqa: E402
from backends.stores.ttl.redis import RedisTTLStore  # noqa: E402
from backends.stores.vectors import MemoryItem  # noqa: E402
from backends.stores.vectors.qdrant import QdrantSemanticMemory  # noqa: E402
from bench.common import table, write  # noqa: E402

POINTS = 10_000
DIMENSION = 384
SESSIONS = 100
EXPERTS = ("planner", "coder", "researcher", "reviewer")
K = 10
SAVES = 300
LOADS = 500
QUERIES = 25


def realistic_session(index: int) -> Session:
    session = Session.new(f"Task {index}: write a CSV parser with tests", model="SmolLM2")
    session.phase = "working"
    session.data["plan"] = "1. Research dialects\n2. Write the parser\n3. Test it"
    session.data["steps"] = [
        {
            "index": i,
            "title": f"step {i}",
            "expert": "coder",
            "ticket": f"t{i}",
            "result": "x" * 400,
        }
        for i in range(3)
    ]
    session.data["events"] = [
        {
            "session": session.session_id,
            "seq": seq,
            "ts": time.time(),
            "kind": "expert_result",
            "phase": "working",
            "expert": "coder",
            "text": "def parse(text): return list(csv.reader(io.StringIO(text)))",
        }
        for seq in range(1, 31)
    ]
    return session


def _median_query_ms(run: Callable[[np.ndarray], object], queries: np.ndarray, n: int) -> float:
    """Median time (ms) of ``run(query)``, cycling through the queries, after one warm-up."""
    run(queries[0])
    samples = []
    for i in range(n):
        query = queries[i % len(queries)]
        start = time.perf_counter()
        run(query)
        samples.append(time.perf_counter() - start)
    return float(np.median(samples)) * 1000


def _per_call_ms(fn: Callable[[int], object], count: int) -> float:
    """Median per-call time (ms) over 5 rounds of ``count`` calls."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for i in range(count):
            fn(i)
        rounds.append((time.perf_counter() - start) / count * 1000)
    return sorted(rounds)[2]


@contextmanager
def private_redis() -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        store = RedisTTLStore.from_url(url, 2.0)
        for _ in range(100):
            try:
                store.ping()
                break
            except Exception:
                time.sleep(0.05)
        store.close()
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def bench_sessions(folder: Path, l2_name: str, l2: TTLStore) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    db = folder / f"sessions-{l2_name}.sqlite3"
    sessions = [realistic_session(i) for i in range(SAVES)]
    store = SessionStore(l2, lambda: SqliteSessionMirror(db), namespace=f"bench{os.getpid()}")
    mirror = SqliteSessionMirror(db)
    save_ms = _per_call_ms(lambda i: store.save(sessions[i]), SAVES)
    mirror_ms = _per_call_ms(lambda i: mirror.save(sessions[i]), SAVES)
    assert store.health() == {"l1": "ok", "l2": "ok", "sqlite": "ok"}, store.health()
    rows.append(
        {
            "measure": f"save, L1+L2({l2_name})+SQLite",
            "ms": save_ms,
            "baseline": "SQLite mirror save alone",
            "baseline ms": mirror_ms,
            "ratio": save_ms / mirror_ms,
        }
    )
    if l2_name == "memory":
        # Reads never touch L2, so they are measured once.
        reader = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(db))
        writer = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(db))
        fresh = [writer.save(realistic_session(i)).session_id for i in range(LOADS)]
        start = time.perf_counter()
        for session_id in fresh:  # each a miss: served by SQLite, then cached in L1
            assert reader.get(session_id) is not None
        miss_ms = (time.perf_counter() - start) / LOADS * 1000
        hit_ms = _per_call_ms(lambda i: reader.get(fresh[i]), LOADS)
        rows.append(
            {
                "measure": "load, L1 hit",
                "ms": hit_ms,
                "baseline": "load, L1 miss -> SQLite",
                "baseline ms": miss_ms,
                "ratio": hit_ms / miss_ms,
            }
        )
        reader.close()
        writer.close()
    mirror.close()
    store.close()
    return rows


def numpy_topk(matrix: np.ndarray, query: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    if mask is not None:
        index = np.flatnonzero(mask)
        scores = matrix[index] @ query
    else:
        index = None
        scores = matrix @ query
    k = min(K, len(scores))
    top = np.argpartition(scores, len(scores) - k)[-k:]
    top = top[np.argsort(-scores[top])]
    return top if index is None else index[top]


def _search(memory: QdrantSemanticMemory, filters: dict[str, str], query: np.ndarray) -> object:
    return memory.search_vector("agent_results", query, limit=K, **filters)


def bench_qdrant(folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rng = np.random.default_rng(7)
    matrix = rng.standard_normal((POINTS, DIMENSION), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    session_of = np.array([f"s{i % SESSIONS}" for i in range(POINTS)])
    expert_of = np.array([EXPERTS[i % len(EXPERTS)] for i in range(POINTS)])
    items = [
        MemoryItem(
            f"result {i}", session=str(session_of[i]), expert=str(expert_of[i]), ticket=f"t{i}"
        )
        for i in range(POINTS)
    ]
    ids = [item.point_id("agent_results") for item in items]

    memory = QdrantSemanticMemory(HashingEmbedder(DIMENSION), path=folder / "qdrant")
    start = time.perf_counter()
    for lo in range(0, POINTS, 256):
        memory.upsert_vectors(
            "agent_results", ids[lo : lo + 256], matrix[lo : lo + 256], items[lo : lo + 256]
        )
    upsert_s = time.perf_counter() - start
    assert memory.count("agent_results") == POINTS

    queries = rng.standard_normal((QUERIES, DIMENSION), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    cases: list[tuple[str, dict[str, str], np.ndarray | None]] = [
        ("top-10, filter session (100 of 10k)", {"session": "s42"}, session_of == "s42"),
        (
            "top-10, filter session+expert (25 of 10k)",
            {"session": "s42", "expert": "coder"},
            (session_of == "s42") & (expert_of == "coder"),
        ),
        ("top-10, no filter", {}, None),
    ]
    rows = []
    for label, filters, mask in cases:
        # Same answers first: the baseline computes what Qdrant returns.
        hits = memory.search_vector("agent_results", queries[0], limit=K, **filters)
        expected = numpy_topk(matrix, queries[0], mask)
        assert [h.ticket for h in hits] == [f"t{i}" for i in expected], label
        search = partial(_search, memory, filters)
        qdrant_ms = _median_query_ms(search, queries, QUERIES)
        numpy_ms = _median_query_ms(partial(numpy_topk, matrix, mask=mask), queries, QUERIES * 4)
        rows.append(
            {
                "measure": f"Qdrant local {label}",
                "ms": qdrant_ms,
                "baseline": "numpy mask + GEMV + argpartition",
                "baseline ms": numpy_ms,
                "ratio": qdrant_ms / numpy_ms,
            }
        )
    memory.close()
    extra = {"upsert_10k_seconds": upsert_s, "upsert_points_per_second": POINTS / upsert_s}
    return rows, extra


def main() -> dict[str, Any]:
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="custodia-bench-multiagent-") as tmp:
        folder = Path(tmp)
        rows += bench_sessions(folder, "memory", MemoryTTLStore())
        with private_redis() as url:
            if url is not None:
                redis_store = RedisTTLStore.from_url(url, 2.0)
                rows += bench_sessions(folder, "redis", redis_store)
                redis_store.close()
            else:
                print("(no redis-server binary: the Redis L2 row is skipped)")
        qdrant_rows, extra = bench_qdrant(folder)
        rows += qdrant_rows
    print(table(rows))
    print(
        f"Qdrant local upsert of {POINTS:,} points in batches of 256: "
        f"{extra['upsert_10k_seconds']:.1f} s ({extra['upsert_points_per_second']:.0f} points/s)"
    )
    total = time.perf_counter() - started
    payload = {"rows": rows, **extra, "seconds": total}
    path = write("multiagent", payload)
    print(f"written {path} ({total:.0f} s)")
    return payload


if __name__ == "__main__":
    main()
