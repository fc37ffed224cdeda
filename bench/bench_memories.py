"""Memories (issue 4, PA4): top-10 search over 1k–100k memories, ours against two baselines.

* **ours** — :class:`SQLiteMemoryStore.search`: the ``PRAGMA data_version`` check, one GEMV
  over the in-memory normalised matrix, ``argpartition``, texts of the hits.
* **(a) original** — what agente-telegram did on every search: SELECT every row of the
  dimension, ``np.frombuffer`` each blob, stack, normalise, GEMV, top 10.
* **(b) bare numpy** — GEMV + ``argpartition`` on an already normalised matrix in memory: the
  floor any in-memory approach can reach (pure GEMV is reported too).

Also: adding one memory and seeing it in a search at 100k, picking up a write made by another
connection, start-up (open + load) time and resident memory at 100k (in a fresh process).
Synthetic random vectors, no model. Medians; ratios are from the same run.

Run: ``python -m bench.bench_memories`` (``--quick`` for 1k and 10k only; ``--store`` for the
store's and the embedders' figures alone: 100k × 768, a question's path at 100k × 512, 1M;
``--recall`` for recall's alone: quality on every set, the whole recall at 100k).
"""

from __future__ import annotations

import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.memories.recall import BARE, Recall, RecallSettings  # noqa: E402
from backends.stores.memories.sqlite import SQLiteMemoryStore  # noqa: E402
from bench.common import RESULTS as RESULTS_DIR  # noqa: E402
from bench.common import machine  # noqa: E402

RESULTS = RESULTS_DIR / "memories.json"
SIZES = (1_000, 10_000, 100_000)
DIMENSIONS = (384, 768)
K = 10


def _median_ms(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _populate(path: Path, n: int, d: int, rng: np.random.Generator) -> float:
    """Write ``n`` random memories through the store (batches of 5,000); seconds taken."""
    started = time.perf_counter()
    store = SQLiteMemoryStore(path, d, "bench")
    for start in range(0, n, 5_000):
        count = min(5_000, n - start)
        block = rng.standard_normal((count, d), dtype=np.float32)
        store.add_many((f"memory {start + i}", block[i]) for i in range(count))
    store.close()
    return time.perf_counter() - started


def original_search(conn: sqlite3.Connection, query: np.ndarray, d: int) -> list[str]:
    """(a) The original: read every row of this dimension on every search."""
    rows = conn.execute("SELECT texto, vector FROM vectores WHERE dimension = ?", (d,)).fetchall()
    texts = [row[0] for row in rows]
    matrix = np.stack([np.frombuffer(row[1], dtype=np.float32) for row in rows])
    matrix = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    scores = matrix @ (query / np.linalg.norm(query))
    top = np.argpartition(scores, len(scores) - K)[-K:]
    return [texts[i] for i in top[np.argsort(-scores[top])]]


def bare_topk(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """(b) GEMV + argpartition on a normalised matrix already in memory."""
    scores = matrix @ query
    top = np.argpartition(scores, len(scores) - K)[-K:]
    return top[np.argsort(-scores[top])]


def _load_probe(path: str, d: int) -> dict[str, float]:
    """Run in a fresh process: open + load time and resident memory."""

    def rss_mb(field: str = "VmRSS") -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return float("nan")

    before = rss_mb()
    started = time.perf_counter()
    store = SQLiteMemoryStore(Path(path), d, "bench")
    store.load()
    seconds = time.perf_counter() - started
    after = rss_mb()
    store.search(np.ones(d, dtype=np.float32), k=K)  # the int8 codes of a mid-size store too
    searched = rss_mb()
    peak = rss_mb("VmHWM")  # not ru_maxrss: that one inherits the parent's peak on Linux
    rows = store.loaded_rows
    store.close()
    return {
        "load_s": seconds,
        "rss_before_mb": before,
        "rss_after_mb": after,
        "rss_after_search_mb": searched,
        "rss_peak_mb": peak,
        "matrix_mb": rows * d * 4 / 2**20,
        "rows": rows,
    }


def _probe_in_subprocess(path: Path, d: int) -> dict[str, float]:
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from bench.bench_memories import _load_probe; "
        f"print(json.dumps(_load_probe({str(path)!r}, {d})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _blas() -> str:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas['name']} {blas['version']}"
    except Exception:  # informative only
        return "unknown"


def bench_case(n: int, d: int, workdir: Path, rng: np.random.Generator) -> dict[str, Any]:
    path = workdir / f"memories-{n}-{d}.sqlite3"
    populate_s = _populate(path, n, d, rng)
    queries = rng.standard_normal((64, d), dtype=np.float32)
    big = n >= 100_000
    repeats = 15 if big else 40
    original_repeats = 3 if big else (5 if n >= 10_000 else 15)

    store = SQLiteMemoryStore(path, d, "bench")
    started = time.perf_counter()
    store.load()
    load_s = time.perf_counter() - started
    matrix = np.ascontiguousarray(store._matrix[: store.loaded_rows])  # (b) gets its own copy
    normalised_queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)

    # warm up, and check all three agree on the answer (from 50,000 memories on ours scans
    # int8 codes first: then it is the share of the exact top 10 it finds)
    conn = sqlite3.connect(path)
    texts = store._texts
    ours_top = [h.text for h in store.search(queries[0], k=K)]
    if store._fast is None:
        assert ours_top == original_search(conn, queries[0], d)
        assert ours_top == [texts[i] for i in bare_topk(matrix, normalised_queries[0])]
    found = 0
    for q, nq in zip(queries, normalised_queries, strict=True):
        exact = {texts[i] for i in bare_topk(matrix, nq)}
        found += len(exact & {h.text for h in store.search(q, k=K)})

    counter = iter(range(10**9))
    ours_times: list[float] = []
    bare_times: list[float] = []
    gemv_times: list[float] = []
    for _ in range(repeats):  # interleaved, so drift hits both alike
        q = next(counter) % len(queries)
        t0 = time.perf_counter()
        store.search(queries[q], k=K)
        t1 = time.perf_counter()
        bare_topk(matrix, normalised_queries[q])
        t2 = time.perf_counter()
        matrix @ normalised_queries[q]
        t3 = time.perf_counter()
        ours_times.append((t1 - t0) * 1000)
        bare_times.append((t2 - t1) * 1000)
        gemv_times.append((t3 - t2) * 1000)
    original_ms = _median_ms(
        lambda: original_search(conn, queries[next(counter) % len(queries)], d), original_repeats
    )
    ours_ms = statistics.median(ours_times)
    bare_ms = statistics.median(bare_times)
    result: dict[str, Any] = {
        "n": n,
        "dimension": d,
        "populate_s": round(populate_s, 2),
        "load_s": round(load_s, 3),
        "ours_ms": round(ours_ms, 3),
        "original_ms": round(original_ms, 2),
        "bare_ms": round(bare_ms, 3),
        "gemv_only_ms": round(statistics.median(gemv_times), 3),
        "speedup_vs_original": round(original_ms / ours_ms, 1),
        "ratio_vs_bare": round(ours_ms / bare_ms, 3),
        "codes_first": store._fast is not None,
        "recall_at_10": round(found / (K * len(queries)), 4),
        "repeats": repeats,
        "original_repeats": original_repeats,
    }

    if big:
        # add one memory, then see it in a search (the first search after the add)
        add_times, visible_times = [], []
        for i in range(30):
            vector = rng.standard_normal(d, dtype=np.float32)
            started = time.perf_counter()
            store.add(f"fresh {i}", vector)
            added = time.perf_counter()
            hit = store.search(vector, k=1)[0]
            seen = time.perf_counter()
            assert hit.text == f"fresh {i}"
            add_times.append((added - started) * 1000)
            visible_times.append((seen - started) * 1000)
        result["add_one_ms"] = round(statistics.median(add_times), 3)
        result["add_then_found_ms"] = round(statistics.median(visible_times), 2)

        # another connection (as another process would) adds one: our next search syncs it
        other = SQLiteMemoryStore(path, d, "bench")
        sync_times = []
        for i in range(10):
            vector = rng.standard_normal(d, dtype=np.float32)
            other.add(f"elsewhere {i}", vector)
            started = time.perf_counter()
            hit = store.search(vector, k=1)[0]
            sync_times.append((time.perf_counter() - started) * 1000)
            assert hit.text == f"elsewhere {i}"
        other.close()
        result["search_after_foreign_write_ms"] = round(statistics.median(sync_times), 2)
        result["full_loads"] = store.full_loads
        result.update(
            {f"startup_{k}": round(v, 3) for k, v in _probe_in_subprocess(path, d).items()}
        )
    conn.close()
    store.close()
    path.unlink()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    return result


# -- recall quality (issue 29) ---------------------------------------------------------------

DATA = Path(__file__).parent / "data"


#: the evaluation sets (bench/data/memory_recall_<name>.json) and their labels: the tuning
#: sets of the first session, then the held-out sets written before any further tuning
RECALL_SETS = (
    ("en", "en"),
    ("es", "es"),
    ("heldout_en", "held-out en"),
    ("heldout_es", "held-out es"),
)


def _recall_variants() -> list[tuple[str, str, bool, RecallSettings]]:
    """(label, primary embedder, with the second embedder, settings): each part added in turn,
    then the final pipeline without each part, and the first session's pipeline."""
    final = RecallSettings()
    kind_1 = replace(final, kind_weight=1.0)  # the answer kind's weight before its re-choice
    return [
        ("bare cosine, MiniLM", "minilm", False, BARE),
        ("bare cosine, USE", "use", False, BARE),
        ("USE + MiniLM, standardised", "use", True, replace(BARE, second=True)),
        ("+ query expansion by entities", "use", True, replace(BARE, second=True, expand=True)),
        ("+ name matching", "use", True, final.without("answer_kind", "topics", "self_subject")),
        ("+ answer kind (weight 1)", "use", True, kind_1.without("topics", "self_subject")),
        ("+ relations asked about", "use", True, kind_1.without("self_subject")),
        ("+ the user as subject", "use", True, kind_1),
        ("+ answer kind weight 1.5 = final", "use", True, final),
        ("final without MiniLM", "use", False, final),
        ("final without expansion", "use", True, final.without("expand")),
        ("final without names", "use", True, final.without("entities")),
        ("final without relations asked about", "use", True, final.without("topics")),
        ("final without the user as subject", "use", True, final.without("self_subject")),
        (
            "session 1 (rank fusion)",
            "use",
            True,
            replace(final, fusion="rank", kind_weight=0.5, topics=False, self_subject=False),
        ),
        ("MiniLM first, + all re-ranking", "minilm", False, final),
    ]


def _rank_metrics(ranks: list[int]) -> dict[str, float]:
    """recall@1, recall@3 and MRR@10 (a rank of 0: not in the top 10)."""
    n = len(ranks)
    return {
        "recall@1": round(sum(r == 1 for r in ranks) / n, 3),
        "recall@3": round(sum(1 <= r <= 3 for r in ranks) / n, 3),
        "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
    }


def recall_quality(workdir: Path, embedders: dict[str, Any] | None = None) -> dict[str, Any]:
    """Recall@1, recall@3 and MRR of each variant on the evaluation sets of bench/data."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    models = embedders or {"minilm": MiniLMEmbedder(), "use": UniversalSentenceEncoder()}
    out: dict[str, Any] = {}
    sets: list[tuple[str, list[dict[str, str]], list[str]]] = []
    for name, label in RECALL_SETS:
        data = json.loads((DATA / f"memory_recall_{name}.json").read_text(encoding="utf-8"))
        items = data["items"]
        sets.append((label, items, [i["fact"] for i in items] + [i["distractor"] for i in items]))
    # held out: the memory answer set (issue 24), written by others, never tuned on here
    answers = DATA / "memory_answer_eval.json"
    if answers.is_file():
        data = json.loads(answers.read_text(encoding="utf-8"))
        facts = data.get("facts", []) + data.get("heldout_facts", [])
        items = [{"fact": f["memory"], "question": f["question"]} for f in facts]
        sets.append(("held-out answer set", items, list(dict.fromkeys(i["fact"] for i in items))))
    for index, (lang, items, pool) in enumerate(sets):
        stores = {}
        for key, model in models.items():
            path = workdir / f"recall-{index}-{key}.sqlite3"
            store = SQLiteMemoryStore(path, model.dimension, model.name)
            store.add_many(zip(pool, model.embed_many(pool), strict=True))
            stores[key] = store
        questions = {"question": [i["question"] for i in items]}
        if "question_en" in items[0]:
            questions["question_en"] = [i["question_en"] for i in items]
        for qkey, asked in questions.items():
            label = lang if qkey == "question" else f"{lang} facts, English questions"
            rows: dict[str, Any] = {}
            for name, primary, with_second, settings in _recall_variants():
                recall = Recall(
                    stores[primary],
                    models[primary],
                    models["minilm"] if with_second else None,
                    settings,
                )
                ranks = []
                for item, question in zip(items, asked, strict=True):
                    texts = [h.text for h in recall.search(question, k=10)]
                    ranks.append(texts.index(item["fact"]) + 1 if item["fact"] in texts else 0)
                rows[name] = _rank_metrics(ranks)
            out[label] = {"facts": len(items), "pool": len(pool), "variants": rows}
        for store in stores.values():
            store.close()
    return out


def print_recall_quality(quality: dict[str, Any]) -> None:
    for label, block in quality.items():
        print(f"recall on {label} ({block['facts']} questions, {block['pool']} memories)")
        print(f"  {'variant':<38} {'r@1':>6} {'r@3':>6} {'MRR':>6}")
        for name, m in block["variants"].items():
            print(f"  {name:<38} {m['recall@1']:>6.3f} {m['recall@3']:>6.3f} {m['mrr']:>6.3f}")


# -- a million memories (issue 29) -------------------------------------------------------------

_NAMES = "Lucía Tomás Emma Daniel Marco Carmen Priya Javier Elena Greta Leo Rosa Sami Ana Julia"
_RELATIONS = "sister brother daughter husband friend mother boss cousin neighbour son grandmother"
_PREDICATES = [
    "lives in Valencia",
    "works as a nurse",
    "is allergic to peanuts",
    "plays the drums on Fridays",
    "was born in March",
    "loves mushroom risotto",
    "is learning to swim",
    "moved to Berlin last year",
    "drives a blue car",
    "hates the smell of cigarettes",
    "runs a marathon every October",
    "speaks French and a little Japanese",
    "has a dog called Rex",
    "studied chemistry in Leeds",
    "is getting married next summer",
    "vive en Sevilla",
    "trabaja de profesora",
    "tiene dos gatos",
]


def _sentences(n: int, rng: np.random.Generator) -> list[str]:
    names, relations = _NAMES.split(), _RELATIONS.split()
    out = []
    for i in range(n):
        name = names[rng.integers(len(names))]
        relation = relations[rng.integers(len(relations))]
        predicate = _PREDICATES[rng.integers(len(_PREDICATES))]
        out.append(f"My {relation} {name} {predicate} ({i})")
    return out


def _real_768(texts: list[str]) -> np.ndarray:
    """768-d vectors with real embeddings' structure (not centred, clustered): USE's 512
    dimensions beside MiniLM's first 256, of the same sentence."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    use = UniversalSentenceEncoder().embed_many(texts)
    mini = MiniLMEmbedder().embed_many(texts)[:, :256]
    both = np.hstack([use, mini]).astype(np.float32)
    return both / np.linalg.norm(both, axis=1, keepdims=True)


def _million(base: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` vectors mixed from real ones (two each, with a little noise), normalised."""
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    for start in range(0, n, 100_000):
        stop = min(n, start + 100_000)
        a = base[rng.integers(len(base), size=stop - start)]
        b = base[rng.integers(len(base), size=stop - start)]
        w = rng.uniform(0.5, 1.0, size=(stop - start, 1)).astype(np.float32)
        block = w * a + (1 - w) * b
        block += 0.02 * rng.standard_normal(block.shape, dtype=np.float32)
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def _open_probe(path: str, d: int) -> dict[str, float]:
    """In a fresh process: open a large store (its int8 snapshot) and search once."""

    def rss_mb(field: str = "VmRSS") -> float:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
        return float("nan")

    before = rss_mb()
    started = time.perf_counter()
    store = SQLiteMemoryStore(Path(path), d, "bench")
    store.load()
    opened = time.perf_counter() - started
    query = np.random.default_rng(1).standard_normal(d).astype(np.float32)
    store.search(query, k=K)
    first = time.perf_counter() - started - opened
    times = []
    for i in range(10):
        q = np.random.default_rng(i + 2).standard_normal(d).astype(np.float32)
        t0 = time.perf_counter()
        store.search(q, k=K)
        times.append(time.perf_counter() - t0)
    result = {
        "open_s": opened,
        "first_search_s": first,
        "search_ms": statistics.median(times) * 1000,
        "rss_before_mb": before,
        "rss_after_mb": rss_mb(),
        # of which: pages of the mapped snapshot (the page cache's, given back under
        # pressure) and the process's own
        "rss_file_mb": rss_mb("RssFile"),
        "rss_anon_mb": rss_mb("RssAnon"),
        "rss_peak_mb": rss_mb("VmHWM"),
        "quantised": float(store._codes is not None),
    }
    store.close()
    return result


def bench_million(workdir: Path, n: int = 1_000_000, d: int = 768) -> dict[str, Any]:
    """1M × 768: the int8 first pass against the float32 GEMV over the same matrix."""
    rng = np.random.default_rng(29)
    started = time.perf_counter()
    base_texts = _sentences(3000, rng)
    base = _real_768(base_texts)
    matrix = _million(base, n, rng)
    made_s = time.perf_counter() - started
    path = workdir / f"memories-{n}-{d}.sqlite3"
    started = time.perf_counter()
    store = SQLiteMemoryStore(path, d, "bench", quantise_above=None)
    for start in range(0, n, 5_000):
        store.add_many((f"memory {i}", matrix[i]) for i in range(start, min(n, start + 5_000)))
    store.close()
    populate_s = time.perf_counter() - started
    # queries: real sentences asked differently, as 768-d vectors of the same kind
    questions = [f"Where does my {r} live?" for r in _RELATIONS.split()]
    questions += [f"What does {name} do?" for name in _NAMES.split()]
    queries = _real_768(questions)
    store = SQLiteMemoryStore(path, d, "bench")
    started = time.perf_counter()
    store.load()  # no snapshot yet: codes built from the table and written
    build_s = time.perf_counter() - started
    assert store._codes is not None
    recall_hits = 0
    ours, gemv, topk = [], [], []
    for i, q in enumerate(np.vstack([queries, queries])):
        t0 = time.perf_counter()
        hits = store.search(q, k=K)
        t1 = time.perf_counter()
        scores = matrix @ q
        t2 = time.perf_counter()
        exact = np.argpartition(scores, n - K)[n - K :]
        t3 = time.perf_counter()
        if i < len(queries):
            recall_hits += len({h.text for h in hits} & {f"memory {j}" for j in exact})
        ours.append((t1 - t0) * 1000)
        gemv.append((t2 - t1) * 1000)
        topk.append((t3 - t1) * 1000)
    store.close()
    del matrix
    probe = _probe_million(path, d)
    result = {
        "n": n,
        "dimension": d,
        "vectors_made_s": round(made_s, 1),
        "populate_s": round(populate_s, 1),
        "codes_built_s": round(build_s, 2),
        "int8_top10_ms": round(statistics.median(ours), 1),
        "gemv_ms": round(statistics.median(gemv), 1),
        "gemv_top10_ms": round(statistics.median(topk), 1),
        "ratio_vs_gemv": round(statistics.median(ours) / statistics.median(gemv), 3),
        "recall_at_10": round(recall_hits / (K * len(queries)), 4),
        "queries": len(queries),
        "rescore": SQLiteMemoryStore.RESCORE,
        **{f"fresh_{k}": round(v, 3) for k, v in probe.items()},
    }
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    import shutil

    shutil.rmtree(Path(str(path) + ".q8"), ignore_errors=True)
    return result


def _probe_million(path: Path, d: int) -> dict[str, float]:
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from bench.bench_memories import _open_probe; "
        f"print(json.dumps(_open_probe({str(path)!r}, {d})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=900
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _percentiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 2),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 2),
    }


def bench_query_path(workdir: Path, n: int = 100_000, rounds: int = 60) -> dict[str, Any]:
    """What a question costs before any re-ranking, at ``n`` memories of USE's 512 dimensions:
    USE embedding one question and a batch of two (the question and its expansion), MiniLM
    embedding one, the store's search against the bare GEMV (+ ``argpartition``) over the same
    matrix, and a bare USE search (embed + search). Interleaved; p50 and p95."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder, normalise

    rng = np.random.default_rng(33)
    use, mini = UniversalSentenceEncoder(), MiniLMEmbedder()
    questions = [f"Where does my {r} live?" for r in _RELATIONS.split()]
    questions += [f"What does {name} do for a living?" for name in _NAMES.split()]
    questions += ["¿Dónde vive mi hermana?", "¿A qué se dedica mi primo?"]
    # the user as subject, a relation asked about, the answer kinds (a name, a date)
    questions += ["What am I called?", "Who is my cousin married to?", "When did I move?"]
    base = use.embed_many(_sentences(2000, rng))
    mixed = base[rng.integers(len(base), size=n)]
    mixed = normalise(mixed + 0.02 * rng.standard_normal(mixed.shape, dtype=np.float32))
    path = workdir / f"query-path-{n}.sqlite3"
    store = SQLiteMemoryStore(path, use.dimension, use.name)
    for start in range(0, n, 5_000):
        stop = min(n, start + 5_000)
        store.add_many((f"memory {i}", mixed[i]) for i in range(start, stop))
    store.load()
    matrix = np.ascontiguousarray(store._matrix[: store.loaded_rows])
    for q in questions[:3]:  # warm up every path
        use.embed(q), use.embed_batch([q, q + " Valencia"]), mini.embed(q)
        store.search(use.embed(q), k=K)
    found = 0  # the store's top 10 against the exact top 10
    for vector in use.embed_batch(questions):
        exact = {f"memory {i}" for i in bare_topk(matrix, vector)}
        found += len(exact & {h.text for h in store.search(vector, k=K)})
    times: dict[str, list[float]] = {
        k: [] for k in ("use_one", "use_two", "minilm_one", "search", "bare", "use_search")
    }
    for i in range(rounds):
        q = questions[i % len(questions)]
        t0 = time.perf_counter()
        vector = use.embed(q)
        t1 = time.perf_counter()
        use.embed_batch([q, q + " Lucía Valencia"])
        t2 = time.perf_counter()
        mini.embed(q)
        t3 = time.perf_counter()
        store.search(vector, k=K)
        t4 = time.perf_counter()
        bare_topk(matrix, vector)
        t5 = time.perf_counter()
        store.search(use.embed(q), k=K)
        t6 = time.perf_counter()
        for key, (a, b) in zip(
            times, ((t0, t1), (t1, t2), (t2, t3), (t3, t4), (t4, t5), (t5, t6)), strict=True
        ):
            times[key].append((b - a) * 1000)
    codes_first = store._fast is not None
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    out: dict[str, Any] = {"n": n, "dimension": use.dimension, "rounds": rounds}
    out["codes_first"] = codes_first
    out["recall_at_10"] = round(found / (K * len(questions)), 4)
    for key, values in times.items():
        out[key] = _percentiles(values)
    out["search_vs_bare"] = round(
        statistics.median(times["search"]) / statistics.median(times["bare"]), 3
    )
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def store_main() -> dict[str, Any]:
    """``--store``: the store's and the embedders' figures only (100k × 768 against the bare
    GEMV, the question's path at 100k × 512, 1M × 768), into ``memories_store.json``."""
    rng = np.random.default_rng(2024)
    started = time.perf_counter()
    result: dict[str, Any] = {
        "topic": "memories (store)",
        "machine": {**machine(), "numpy": np.__version__, "blas": _blas()},
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    with tempfile.TemporaryDirectory(prefix="bench-memories-store-") as tmp:
        case = bench_case(100_000, 768, Path(tmp), rng)
        print(f"100k × 768: {json.dumps(case)}", flush=True)
        result["case_100k_768"] = case
        path = bench_query_path(Path(tmp))
        print(f"question path at 100k × 512: {json.dumps(path)}", flush=True)
        result["query_path"] = path
        million = bench_million(Path(tmp))
        print(f"1M × 768: {json.dumps(million)}", flush=True)
        result["million"] = million
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = RESULTS_DIR / "memories_store.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def _p50_p95(times: list[float]) -> dict[str, float]:
    """The median and the 95th percentile of ``times`` (ms), rounded."""
    ordered = sorted(times)
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
    }


def bench_recall_latency(workdir: Path, n: int = 100_000) -> dict[str, Any]:
    """The whole recall (both real models for the query, expansion, re-ranking) over ``n``
    memories against a bare USE search of the same question, interleaved: p50 and p95
    (memory vectors mixed from real ones; MiniLM's vectors of the memories stored, as the
    pipeline keeps them). Also: building the entity index (aside, once), and a search just
    after an add (the index reads the one new memory)."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    rng = np.random.default_rng(31)
    use, mini = UniversalSentenceEncoder(), MiniLMEmbedder()
    texts = _sentences(n, rng)
    base_texts = texts[:2000]
    base_use, base_mini = use.embed_many(base_texts), mini.embed_many(base_texts)
    pick = rng.integers(len(base_texts), size=n)
    path = workdir / f"recall-{n}.sqlite3"
    store = SQLiteMemoryStore(path, use.dimension, use.name)
    for start in range(0, n, 5_000):
        rows = range(start, min(n, start + 5_000))
        store.add_many((texts[i], base_use[pick[i]]) for i in rows)
        store.put_signal_vectors(mini.name, [(texts[i], base_mini[pick[i]]) for i in rows])
    store.close()
    store = SQLiteMemoryStore(path, use.dimension, use.name)
    recall = Recall(store, use, mini)
    questions = [f"Where does my {r} live?" for r in _RELATIONS.split()]
    questions += [f"What does {name} do for a living?" for name in _NAMES.split()]
    questions += ["¿Dónde vive mi hermana?", "¿A qué se dedica mi primo?"]
    # the user as subject, a relation asked about, the answer kinds (a name, a date)
    questions += ["What am I called?", "Who is my cousin married to?", "When did I move?"]
    started = time.perf_counter()
    store.load()
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    store.search(base_use[0], k=K)  # the store's own first search (whatever it derives)
    store_first_s = time.perf_counter() - started
    started = time.perf_counter()
    recall.search(questions[0], k=5)  # recall's first search: the entity index starts aside
    first_s = time.perf_counter() - started
    started = time.perf_counter()
    recall.entities.wait()
    index_s = first_s + time.perf_counter() - started
    for question in questions[:3]:  # warm up every path
        recall.search(question, k=5)
        recall.search(question, k=5, settings=BARE)
    times: list[float] = []
    bare: list[float] = []
    for _ in range(3):  # interleaved: the whole recall, then a bare cosine search (USE)
        for question in questions:
            recall.forget_queries()  # every search embeds its question afresh
            t0 = time.perf_counter()
            recall.search(question, k=5)
            t1 = time.perf_counter()
            recall.forget_queries()
            recall.search(question, k=5, settings=BARE)
            t2 = time.perf_counter()
            times.append((t1 - t0) * 1000)
            bare.append((t2 - t1) * 1000)
    after_add: list[float] = []
    for i in range(10):  # each add moves the store's generation: the index reads one memory
        store.add(f"My neighbour Greta{i} lives in Cork", base_use[i])
        recall.forget_queries()
        t0 = time.perf_counter()
        recall.search(questions[i], k=5)
        after_add.append((time.perf_counter() - t0) * 1000)
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    whole, plain = _p50_p95(times), _p50_p95(bare)
    return {
        "n": n,
        "searches": len(times),
        "load_s": round(load_s, 2),
        "store_first_search_s": round(store_first_s, 3),
        "first_search_s": round(first_s, 3),
        "entity_index_s": round(index_s, 2),
        "p50_ms": whole["p50_ms"],
        "p95_ms": whole["p95_ms"],
        "bare_p50_ms": plain["p50_ms"],
        "bare_p95_ms": plain["p95_ms"],
        "ratio_p50": round(whole["p50_ms"] / plain["p50_ms"], 2),
        "ratio_p95": round(whole["p95_ms"] / plain["p95_ms"], 2),
        "after_add_p50_ms": _p50_p95(after_add)["p50_ms"],
        "load_average": round(os.getloadavg()[0], 1),
    }


def recall_main() -> dict[str, Any]:
    """``--recall``: recall's figures only (quality on every evaluation set, the whole recall
    at 100k against a bare search), into ``memories_recall.json``."""
    started = time.perf_counter()
    result: dict[str, Any] = {
        "topic": "memories (recall)",
        "machine": {**machine(), "numpy": np.__version__, "blas": _blas()},
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        quality = recall_quality(Path(tmp))
        print_recall_quality(quality)
        result["recall_quality"] = quality
        latency = bench_recall_latency(Path(tmp))
        print(f"recall over {latency['n']} memories: {json.dumps(latency)}", flush=True)
        result["recall_latency"] = latency
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - started, 1)
    out = RESULTS_DIR / "memories_recall.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def main(quick: bool = False) -> dict[str, Any]:
    sizes = SIZES[:2] if quick else SIZES
    rng = np.random.default_rng(2024)
    cases = []
    started = time.perf_counter()
    print(
        f"{'n':>7} {'dim':>4} | {'ours ms':>8} {'(a) orig ms':>11} {'(b) bare ms':>11} "
        f"{'gemv ms':>8} | {'× vs (a)':>8} {'vs (b)':>6}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-memories-") as tmp:
        for n in sizes:
            for d in DIMENSIONS:
                case = bench_case(n, d, Path(tmp), rng)
                cases.append(case)
                print(
                    f"{n:>7} {d:>4} | {case['ours_ms']:>8.2f} {case['original_ms']:>11.1f} "
                    f"{case['bare_ms']:>11.2f} {case['gemv_only_ms']:>8.2f} | "
                    f"{case['speedup_vs_original']:>7.1f}× {case['ratio_vs_bare']:>5.2f}×",
                    flush=True,
                )
    for case in cases:
        if "add_one_ms" in case:
            print(
                f"{case['n']}×{case['dimension']}: add one {case['add_one_ms']:.2f} ms, "
                f"add + search that finds it {case['add_then_found_ms']:.1f} ms, "
                f"search after another connection wrote {case['search_after_foreign_write_ms']:.1f}"
                f" ms; start-up load {case['startup_load_s']:.2f} s, "
                f"RSS {case['startup_rss_after_mb']:.0f} MB "
                f"(matrix {case['startup_matrix_mb']:.0f} MB, "
                f"peak {case['startup_rss_peak_mb']:.0f})"
            )
    goal = next((c for c in cases if c["n"] == 100_000 and c["dimension"] == 768), None)
    result: dict[str, Any] = {
        "topic": "memories",
        "machine": {
            **machine(),
            "numpy": np.__version__,
            "blas": _blas(),
            "sqlite": sqlite3.sqlite_version,
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", ""),
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "k": K,
        "cases": cases,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if goal is not None:
        result["goals"] = {
            "speedup_vs_original_at_100k_768": goal["speedup_vs_original"],
            "speedup_goal": 25,
            "ratio_vs_bare_at_100k_768": goal["ratio_vs_bare"],
            "ratio_goal": 1.3,
            "add_one_ms_at_100k_768": goal["add_one_ms"],
            "add_goal_ms": 5,
            "met": goal["speedup_vs_original"] >= 25
            and goal["ratio_vs_bare"] <= 1.3
            and goal["add_one_ms"] < 5,
        }
        print(f"goals at 100k × 768: {json.dumps(result['goals'])}")
    with tempfile.TemporaryDirectory(prefix="bench-recall-") as tmp:
        quality = recall_quality(Path(tmp))
        print_recall_quality(quality)
        result["recall_quality"] = quality
        if not quick:
            latency = bench_recall_latency(Path(tmp))
            print(f"recall over {latency['n']} memories: {json.dumps(latency)}")
            result["recall_latency"] = latency
            path = bench_query_path(Path(tmp))
            print(f"question path at 100k × 512: {json.dumps(path)}")
            result["query_path"] = path
            million = bench_million(Path(tmp))
            print(f"1M × 768: {json.dumps(million)}")
            result["million"] = million
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"total {result['seconds']} s")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    if "--store" in sys.argv[1:]:
        store_main()
    elif "--recall" in sys.argv[1:]:
        recall_main()
    else:
        main(quick="--quick" in sys.argv[1:])
