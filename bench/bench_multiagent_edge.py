"""Multi-agent semantic memory (issue 19): qdrant-edge against qdrant-client's local mode and numpy.

Synthetic unit vectors tagged with 100 sessions and 4 experts, in the ``agent_results``
collection of :class:`~backends.stores.vectors.qdrant_edge.EdgeSemanticMemory` (the real
class: lease, checks and hits included), at 10k and 100k points × 384 and 768:

* **upsert** throughput (batches of 500, the memory's own batch);
* **top-10** with a ``session`` filter (1 % of the points), ``session`` + ``expert`` (0.25 %) and
  unfiltered, each query timed for qdrant-edge and then for the numpy floor on the same matrix
  and the same mask (``flatnonzero`` + GEMV + ``argpartition``), interleaved, with the answers
  checked equal first;
* **open** (a new memory object and its first search: the shard is loaded lazily), resident
  memory added and disk used (allocated blocks, not the sparse apparent size);
* **local mode** (``QdrantClient(path=...)``) at 10k × 384 only (its upsert takes minutes);
* **HNSW**: at 30k × 384, unfiltered and filtered top-10 before and after :meth:`optimise`, and
  the build's time — the figures behind ``HNSW_THRESHOLD``.

Medians; ratios from the same run. Run: ``python -m bench.bench_multiagent_edge`` (≈ 6 min).
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.models.embedders import HashingEmbedder  # noqa: E402
from backends.stores.vectors import MemoryItem, SemanticMemory  # noqa: E402
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory  # noqa: E402
from bench.common import rss_mb, table, write  # noqa: E402

SESSIONS = 100
EXPERTS = ("planner", "coder", "researcher", "reviewer")
K = 10
QUERIES = 40
BATCH = 500
COLLECTION = "agent_results"


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


def disk_mb(folder: Path) -> float:
    blocks = sum(p.stat().st_blocks for p in folder.rglob("*") if p.is_file())
    return blocks * 512 / 2**20


def data(points: int, dimension: int, seed: int = 7) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((points, dimension), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    session_of = np.array([f"s{i % SESSIONS}" for i in range(points)])
    expert_of = np.array([EXPERTS[(i // SESSIONS) % len(EXPERTS)] for i in range(points)])
    items = [
        MemoryItem(
            f"result {i}", session=str(session_of[i]), expert=str(expert_of[i]), ticket=f"t{i}"
        )
        for i in range(points)
    ]
    queries = rng.standard_normal((QUERIES, dimension), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    cases: list[tuple[str, dict[str, str], np.ndarray | None]] = [
        ("session", {"session": "s42"}, session_of == "s42"),
        (
            "session+expert",
            {"session": "s42", "expert": "coder"},
            (session_of == "s42") & (expert_of == "coder"),
        ),
        ("no filter", {}, None),
    ]
    return {
        "matrix": matrix,
        "items": items,
        "ids": [item.point_id(COLLECTION) for item in items],
        "queries": queries,
        "cases": cases,
    }


def fill(memory: SemanticMemory, d: dict[str, Any]) -> float:
    start = time.perf_counter()
    matrix, items, ids = d["matrix"], d["items"], d["ids"]
    for lo in range(0, len(items), BATCH):
        memory.upsert_vectors(
            COLLECTION, ids[lo : lo + BATCH], matrix[lo : lo + BATCH], items[lo : lo + BATCH]
        )
    return time.perf_counter() - start


def interleaved(
    memory: SemanticMemory, d: dict[str, Any], label: str, filters: dict[str, str], mask: Any
) -> tuple[float, float]:
    """Median ms of (memory, numpy) on the same queries, one after the other per query."""
    matrix, queries = d["matrix"], d["queries"]
    hits = memory.search_vector(COLLECTION, queries[0], limit=K, **filters)
    expected = numpy_topk(matrix, queries[0], mask)
    assert [h.ticket for h in hits] == [f"t{i}" for i in expected], label
    ours, floor = [], []
    for query in queries:
        start = time.perf_counter()
        memory.search_vector(COLLECTION, query, limit=K, **filters)
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        numpy_topk(matrix, query, mask)
        floor.append(time.perf_counter() - start)
    return float(np.median(ours)) * 1000, float(np.median(floor)) * 1000


def open_edge(path: Path, dimension: int, **kw: Any) -> EdgeSemanticMemory:
    return EdgeSemanticMemory(HashingEmbedder(dimension), path=path, idle=60.0, **kw)


def row(measure: str, value: float, baseline: float | str = "", what: str = "") -> dict[str, Any]:
    ratio = value / baseline if isinstance(baseline, float) and baseline else ""
    return {
        "measure": measure,
        "value": value,
        "baseline": baseline,
        "ratio": ratio,
        "baseline is": what,
    }


def bench_edge(folder: Path, points: int, dimension: int) -> list[dict[str, Any]]:
    tag = f"{points // 1000}k×{dimension}"
    d = data(points, dimension)
    gc.collect()
    rss0 = rss_mb()
    memory = open_edge(folder, dimension)
    upsert_s = fill(memory, d)
    rows = [row(f"edge upsert {tag} (points/s)", points / upsert_s)]
    rows.append(row(f"edge upsert {tag} (s)", upsert_s))
    for label, filters, mask in d["cases"]:
        ours, floor = interleaved(memory, d, label, filters, mask)
        rows.append(
            row(f"edge top-10 {label}, {tag} (ms)", ours, floor, "numpy flatnonzero+GEMV+top-k")
        )
    rows.append(row(f"edge resident memory added, {tag} (MB)", rss_mb() - rss0))
    memory.close()
    rows.append(row(f"edge disk, {tag} (MB)", disk_mb(folder)))
    start = time.perf_counter()
    again = open_edge(folder, dimension)
    again.search_vector(COLLECTION, d["queries"][1], limit=K, session="s1")
    rows.append(row(f"edge open + first search, {tag} (s)", time.perf_counter() - start))
    again.close()
    return rows


def bench_local(folder: Path) -> list[dict[str, Any]]:
    from backends.stores.vectors.qdrant import QdrantSemanticMemory

    d = data(10_000, 384)
    edge = open_edge(folder / "edge", 384)
    fill(edge, d)
    local = QdrantSemanticMemory(HashingEmbedder(384), path=folder / "local")
    upsert_s = fill(local, d)
    rows = [row("local mode upsert 10k×384 (s)", upsert_s)]
    for label, filters, mask in d["cases"]:
        local_ms, floor = interleaved(local, d, label, filters, mask)
        edge_ms, _ = interleaved(edge, d, label, filters, mask)
        rows.append(row(f"local mode top-10 {label}, 10k×384 (ms)", local_ms, floor, "numpy"))
        rows.append(
            row(f"local mode / edge, top-10 {label}, 10k×384 (×)", local_ms / edge_ms, "", "")
        )
    local.close()
    edge.close()
    start = time.perf_counter()
    local = QdrantSemanticMemory(HashingEmbedder(384), path=folder / "local")
    ms, _ = interleaved(local, d, "session", {"session": "s42"}, d["cases"][0][2])
    rows.append(row("local mode reopen (s)", time.perf_counter() - start))
    rows.append(row("local mode top-10 session after reopen, 10k×384 (ms)", ms))
    local.close()
    return rows


def bench_hnsw(folder: Path, points: int = 30_000) -> list[dict[str, Any]]:
    tag = f"{points // 1000}k×384"
    d = data(points, 384)
    memory = open_edge(folder, 384, hnsw_threshold=1000)
    fill(memory, d)
    rows = []
    before = {}
    for label, filters, mask in d["cases"]:
        before[label] = interleaved(memory, d, label, filters, mask)[0]
    start = time.perf_counter()
    memory.optimise()
    build = time.perf_counter() - start
    rows.append(row(f"HNSW build (child process), {tag} (s)", build))
    for label, filters, mask in d["cases"]:
        try:
            after, _ = interleaved(memory, d, label, filters, mask)
            recall = ""
        except AssertionError:  # approximate: measure, then say so
            after = interleaved_unchecked(memory, d, filters)
            recall = " (approximate)"
        rows.append(
            row(
                f"top-10 {label} with HNSW{recall}, {tag} (ms)",
                after,
                before[label],
                "same shard, exact scan",
            )
        )
    memory.close()
    return rows


def interleaved_unchecked(memory: SemanticMemory, d: dict[str, Any], filters: Any) -> float:
    samples = []
    for query in d["queries"]:
        start = time.perf_counter()
        memory.search_vector(COLLECTION, query, limit=K, **filters)
        samples.append(time.perf_counter() - start)
    return float(np.median(samples)) * 1000


def main(sizes: Callable[[], list[tuple[int, int]]] | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    rows: list[dict[str, Any]] = []
    plan = sizes() if sizes else [(10_000, 384), (10_000, 768), (100_000, 384), (100_000, 768)]
    with tempfile.TemporaryDirectory(prefix="custodia-bench-edge-") as tmp:
        folder = Path(tmp)
        for points, dimension in plan:
            rows += bench_edge(folder / f"e{points}-{dimension}", points, dimension)
            print(table(rows[-7:]), flush=True)
        if not os.environ.get("CUSTODIA_BENCH_QUICK"):
            rows += bench_hnsw(folder / "hnsw")
            print(table(rows[-4:]), flush=True)
            rows += bench_local(folder / "local")
    print(table(rows))
    total = time.perf_counter() - started
    payload = {"rows": rows, "seconds": total}
    path = write("multiagent_edge", payload)
    print(f"written {path} ({total:.0f} s)")
    return payload


if __name__ == "__main__":
    main()
