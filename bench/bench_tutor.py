"""Clinical tutor (issue 7, CT5–CT7): retrieval quality over the shipped corpus, and its cost.

For every question of ``bench/tutor_eval.json`` (written for the shipped notes; each names the
note(s) that answer it and a piece of text the answering chunk contains), the tutor retrieves
from the shared corpus and we score each method's ranked list:

* **recall@5** — the share of questions with at least one answering chunk in the top 5;
* **MRR** — the mean of 1/rank of the first answering chunk (0 when none of the method's 20
  candidates answers);
* **note recall@5** — the same as recall@5 with any chunk of an answering note counted.

Questions are "textbook" (the notes' clinical words) or "lay" (everyday words); figures are
given for all and per kind. "fused" is the tutor's fusion (K and weights in
``backends/tutor/service.py``); "fused k=60 equal" is plain RRF for comparison. The fusion
parameters were chosen by two-fold cross-validation over this set, reproduced here: each fold
picks (K, graph weight) from a small grid on half the questions and is measured on the other.

Methods: vector only (Chroma, MiniLM — the product default — and the hashing test embedder
for contrast), keyword only (FTS5 bm25), graph only (entities of the question and their
relations) and fused (reciprocal rank fusion of the three, what the tutor uses). Also: the
time to index the corpus on first use — with the precomputed vectors shipped in
``resources/kb/vectors.npz`` (used only when the running embedder reproduces them) and with
every chunk embedded — and the median / p95 latency of one fused retrieval.

Run: ``python -m bench.bench_tutor`` (``--quick``: the hashing embedder only; ``--spanish``:
Spanish questions over the English notes, MiniLM + glossary against the multilingual USE, and
the MiniLM tutor with and without USE as its second vector for Spanish questions).
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.config import Config  # noqa: E402
from backends.models.chat import RetrievalOnlyChat  # noqa: E402
from backends.models.embedders import Embedder, HashingEmbedder  # noqa: E402
from backends.tutor.fusion import Hit, rrf  # noqa: E402
from backends.tutor.kb import SHARED, shipped_kb_dir  # noqa: E402
from backends.tutor.service import FUSION_K, FUSION_WEIGHTS, TutorService  # noqa: E402
from bench.common import table, write  # noqa: E402

EVAL = ROOT / "bench" / "tutor_eval.json"
K = 5
CANDIDATES = 20
SINGLE = ("vector", "keyword", "graph")
METHODS = (*SINGLE, "fused", "fused k=60 equal")
#: the fusion parameters the cross-validation chooses among
GRID = [(k, w) for k in (5, 10, 20, 30, 60) for w in (1.0, 0.7, 0.5, 0.3, 0.0)]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _no_audit() -> Any:
    raise RuntimeError("the retrieval benchmark never appends to the audit log")


def load_eval() -> list[dict[str, Any]]:
    return list(json.loads(EVAL.read_text(encoding="utf-8"))["questions"])


def relevant_chunks(service: TutorService, question: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(answering chunk ids, answering note ids) of one evaluation question."""
    notes = {a["note"] for a in question["answers"]}
    chunks: set[str] = set()
    for chunk in service.kb.all_chunks(SHARED):
        text = _norm(chunk.title + " " + chunk.text)
        for answer in question["answers"]:
            if chunk.doc_id == answer["note"] and _norm(answer["evidence"]) in text:
                chunks.add(chunk.chunk_id)
    return chunks, notes


def fuse(lists: dict[str, list[str]], k: int, graph_weight: float) -> list[str]:
    hits = {m: [Hit(c, 0.0) for c in ids] for m, ids in lists.items() if m in SINGLE}
    weights = {"vector": 1.0, "keyword": 1.0, "graph": graph_weight}
    return [f.chunk_id for f in rrf(hits, k=k, weights=weights)]


def score(ranked: list[str], relevant: set[str]) -> tuple[float, float]:
    """(hit in the top K, reciprocal rank of the first answering chunk)."""
    first = next((i for i, c in enumerate(ranked, 1) if c in relevant), 0)
    return (1.0 if 0 < first <= K else 0.0), (1.0 / first if first else 0.0)


def summary(rows: list[dict[str, Any]], method: str) -> dict[str, float]:
    n = len(rows) or 1
    return {
        "recall_at_5": round(sum(r["scores"][method][0] for r in rows) / n, 3),
        "mrr": round(sum(r["scores"][method][1] for r in rows) / n, 3),
        "note_recall_at_5": round(sum(r["note_hits"][method] for r in rows) / n, 3),
    }


def cross_validate(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Two folds (odd/even questions): pick (K, graph weight) on one, measure on the other."""

    def mean(subset: list[dict[str, Any]], k: int, w: float) -> tuple[float, float]:
        pairs = [score(fuse(r["lists"], k, w), r["relevant"]) for r in subset]
        return (
            sum(p[0] for p in pairs) / len(pairs),
            sum(p[1] for p in pairs) / len(pairs),
        )

    folds = []
    for fold in (0, 1):
        train = [r for i, r in enumerate(rows) if i % 2 == fold]
        test = [r for i, r in enumerate(rows) if i % 2 != fold]
        best = max(GRID, key=lambda g: tuple(reversed(mean(train, *g))))
        held = mean(test, *best)
        folds.append(
            {
                "chosen_k": best[0],
                "chosen_graph_weight": best[1],
                "held_out_recall_at_5": round(held[0], 3),
                "held_out_mrr": round(held[1], 3),
            }
        )
    return folds


def index_without_shipped_vectors(embedder: Embedder) -> float:
    """First-use indexing when every chunk must be embedded (no ``vectors.npz`` match)."""
    with tempfile.TemporaryDirectory(prefix="custodia-bench-tutor-cold-") as tmp:
        kb = Path(tmp) / "kb"
        shutil.copytree(shipped_kb_dir(), kb, ignore=shutil.ignore_patterns("vectors.npz"))
        config = Config(home=Path(tmp) / "home", embedder="hashing", chat_model="retrieval-only")
        service = TutorService(
            config, embedder=embedder, chat=RetrievalOnlyChat(), audit=_no_audit, kb_dir=kb
        )
        try:
            started = time.perf_counter()
            service.prepare()
            return time.perf_counter() - started
        finally:
            service.close()


def evaluate(embedder: Embedder, questions: list[dict[str, Any]]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-tutor-") as tmp:
        config = Config(home=Path(tmp), embedder="hashing", chat_model="retrieval-only")
        service = TutorService(config, embedder=embedder, chat=RetrievalOnlyChat(), audit=_no_audit)
        try:
            started = time.perf_counter()
            status = service.prepare()
            index_seconds = time.perf_counter() - started
            rows: list[dict[str, Any]] = []
            latencies: list[float] = []
            for q in questions:
                relevant, notes = relevant_chunks(service, q)
                if not relevant:
                    raise SystemExit(f"{q['id']}: no chunk contains its evidence")
                started = time.perf_counter()
                retrieval = service.retrieve(q["question"], None, k=K, candidates=CANDIDATES)
                latencies.append(time.perf_counter() - started)
                lists = {m: list(ids) for m, ids in retrieval.methods.items()}
                lists["fused"] = fuse(lists, FUSION_K, FUSION_WEIGHTS["graph"])
                assert lists["fused"][:K] == [p.chunk_id for p in retrieval.passages]
                lists["fused k=60 equal"] = fuse(lists, 60, 1.0)
                rows.append(
                    {
                        "id": q["id"],
                        "wording": q.get("wording", ""),
                        "relevant": relevant,
                        "lists": lists,
                        "scores": {m: score(lists[m], relevant) for m in METHODS},
                        "note_hits": {
                            m: 1.0 if {c.split("#", 1)[0] for c in lists[m][:K]} & notes else 0.0
                            for m in METHODS
                        },
                    }
                )
            n = len(rows)
            cold_seconds = index_without_shipped_vectors(embedder)
            subsets = {"all": rows}
            for wording in sorted({r["wording"] for r in rows if r["wording"]}):
                subsets[wording] = [r for r in rows if r["wording"] == wording]
            return {
                "embedder": embedder.name,
                "questions": n,
                "chunks": status.chunks,
                "documents": status.documents,
                "relations": status.graph_relations,
                "index_seconds": round(index_seconds, 2),
                "index_seconds_embedding_everything": round(cold_seconds, 2),
                "retrieval_ms_median": round(statistics.median(latencies) * 1000, 1),
                "retrieval_ms_p95": round(sorted(latencies)[int(0.95 * (n - 1))] * 1000, 1),
                "results": {
                    name: {m: summary(subset, m) for m in METHODS} | {"questions": len(subset)}
                    for name, subset in subsets.items()
                },
                "cross_validation": cross_validate(rows),
                "fused_misses": [r["id"] for r in rows if not r["scores"]["fused"][0]],
            }
        finally:
            service.close()


def summary_rows(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The headline figures, shaped ``measure, value, baseline, baseline is`` for the report."""
    rows: list[dict[str, Any]] = []
    name = run["embedder"]
    for subset, results in run["results"].items():
        n = results["questions"]
        for metric, label in (("recall_at_5", "recall@5"), ("mrr", "MRR")):
            best = max(SINGLE, key=lambda m: results[m][metric])
            rows.append(
                {
                    "measure": f"{label}, fused, {subset} questions ({n}), {name}",
                    "value": results["fused"][metric],
                    "baseline": results[best][metric],
                    "baseline is": f"best single method ({best})",
                }
            )
        if subset == "all":
            for method in SINGLE:
                rows.append(
                    {
                        "measure": f"recall@5, {method} only, all questions ({n}), {name}",
                        "value": results[method]["recall_at_5"],
                    }
                )
    rows.append(
        {
            "measure": f"first-use indexing, shipped corpus, {name} (s)",
            "value": run["index_seconds"],
            "baseline": run["index_seconds_embedding_everything"],
            "baseline is": "embedding every chunk (no precomputed vectors)",
        }
    )
    rows.append({"measure": "fused retrieval, median (ms)", "value": run["retrieval_ms_median"]})
    return rows


SPANISH = ROOT / "bench" / "data" / "tutor_es_eval.json"
ANSWERS = ROOT / "bench" / "data" / "answer_eval.json"


def _note_ranks(ids: list[str], note: str) -> int:
    """1-based rank of the first chunk of ``note`` in ``ids`` (0: absent)."""
    for i, chunk in enumerate(ids, 1):
        if chunk.split("#", 1)[0] == note:
            return i
    return 0


def spanish_embedders() -> list[dict[str, Any]]:
    """Issue 27: Spanish questions over the English notes — the multilingual Universal
    Sentence Encoder against MiniLM + the glossary. For each covered Spanish question, the
    rank of its note among the vector search's chunks (the tutor's search text: the question
    and its glossary English words; and for USE also the Spanish question alone) and among
    the fused passages. The set written before tuning (tutor_es_eval.json) and the one the
    glossary was built from (answer_eval.json's Spanish) are reported apart."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    sets = {
        "tutor_es_eval (written before tuning)": [
            q for q in json.loads(SPANISH.read_text("utf-8"))["covered"]
        ],
        "answer_eval es (glossary built on it)": [
            q for q in json.loads(ANSWERS.read_text("utf-8"))["covered"] if q.get("lang") == "es"
        ],
    }
    rows: list[dict[str, Any]] = []
    use = UniversalSentenceEncoder()
    for embedder in (MiniLMEmbedder(), use):
        with tempfile.TemporaryDirectory() as home:
            config = Config(home=Path(home), embedder=embedder.name)
            # the product: MiniLM with USE as the second vector of Spanish questions
            second = use if embedder is not use else None
            tutor = TutorService(
                config,
                embedder=embedder,
                chat=RetrievalOnlyChat(),
                audit=_no_audit,
                spanish_embedder=second,
            )
            started = time.perf_counter()
            tutor.prepare()
            indexing = time.perf_counter() - started
            try:
                for label, items in sets.items():
                    ranks: dict[str, list[int]] = {"vector": [], "vector, Spanish alone": []}
                    ranks["fused"] = []
                    if second is not None:
                        ranks["second vector (multilingual)"] = []
                        ranks["fused without the second vector"] = []
                    for item in items:
                        retrieval = tutor.retrieve(item["question"], None, k=K)
                        ranks["vector"].append(
                            _note_ranks(retrieval.methods["vector"], item["note"])
                        )
                        alone = tutor.search_vectors(
                            tutor.embedder.embed(item["question"]), [SHARED], CANDIDATES
                        )
                        ranks["vector, Spanish alone"].append(
                            _note_ranks([h.id for h in alone], item["note"])
                        )
                        ranks["fused"].append(
                            _note_ranks([p.chunk_id for p in retrieval.passages], item["note"])
                        )
                        if second is not None:
                            methods = dict(retrieval.methods)
                            ranks["second vector (multilingual)"].append(
                                _note_ranks(methods.pop("multilingual", []), item["note"])
                            )
                            hits = {m: [Hit(c, 0.0, "") for c in ids] for m, ids in methods.items()}
                            fused = rrf(hits, k=FUSION_K, weights=FUSION_WEIGHTS, limit=K)
                            ranks["fused without the second vector"].append(
                                _note_ranks([f.chunk_id for f in fused], item["note"])
                            )
                    for method, found in ranks.items():
                        rows.append(
                            {
                                "embedder": embedder.name
                                + (f" + {second.name}" if second is not None else ""),
                                "set": f"{label} ({len(items)})",
                                "method": method,
                                **{
                                    f"note recall@{n}": round(
                                        sum(0 < r <= n for r in found) / len(found), 3
                                    )
                                    for n in (1, 3, 5)
                                },
                                "indexing s": round(indexing, 1),
                            }
                        )
            finally:
                tutor.close()
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    if "--spanish" in argv:
        rows = spanish_embedders()
        print(table(rows))
        write("tutor_spanish", {"rows": rows})
        return {"rows": rows}
    questions = load_eval()
    embedders: list[Embedder] = [HashingEmbedder(384)]
    if "--quick" not in argv:
        from backends.models.embedders import MiniLMEmbedder

        embedders.insert(0, MiniLMEmbedder())
    runs = [evaluate(e, questions) for e in embedders]
    for run in runs:
        rows = []
        for subset, results in run["results"].items():
            for method in METHODS:
                figures = results[method]
                rows.append(
                    {
                        "questions": f"{subset} ({results['questions']})",
                        "method": method,
                        "recall@5": figures["recall_at_5"],
                        "MRR": figures["mrr"],
                        "note recall@5": figures["note_recall_at_5"],
                    }
                )
        print(f"\n--- embedder {run['embedder']}")
        print(table(rows))
        print(
            f"{run['documents']} notes, {run['chunks']} chunks, {run['relations']} relations; "
            f"first-use indexing {run['index_seconds']} s (embedding every chunk: "
            f"{run['index_seconds_embedding_everything']} s); fused retrieval median "
            f"{run['retrieval_ms_median']} ms, p95 {run['retrieval_ms_p95']} ms"
        )
        for i, fold in enumerate(run["cross_validation"]):
            print(
                f"fold {i}: chose K={fold['chosen_k']}, graph weight {fold['chosen_graph_weight']};"
                f" held out: recall@5 {fold['held_out_recall_at_5']}, MRR {fold['held_out_mrr']}"
            )
        print(f"fused misses: {', '.join(run['fused_misses']) or 'none'}")
    payload = {
        "rows": summary_rows(runs[0]),
        "k": K,
        "candidates_per_method": CANDIDATES,
        "fusion": {"K": FUSION_K, "weights": FUSION_WEIGHTS},
        "runs": runs,
    }
    path = write("tutor", payload)
    print(f"wrote {path}")
    return payload


if __name__ == "__main__":
    main()
