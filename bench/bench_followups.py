"""Follow-up questions in a thread ("and in children?", "what are its side effects?").

``bench/data/followup_eval.json`` holds threads over the shipped notes: one or two earlier
questions, then a last question. *Covered* follow-ups name nothing of the notes and the
earlier question's subject's note answers them (each with its note and key fact); *uncovered*
ones the earlier note does not answer; *new-topic* questions come after a thread but are not
follow-ups (they name their own subject, or are self-contained), each with its note and key.
``bench/data/check_followup_eval.py`` validates it.

Each thread is asked as a user would: the earlier questions in order, each with the previous
turn's ``retrieval.understood`` as ``earlier``; then the last question twice in the same run —
**in the thread** (with ``earlier``) and **alone** (no ``earlier``: the tutor before the
feature, the baseline). Figures, per configuration (the extractive answer, and the default
model when it is installed):

* **key fact stated** — covered follow-ups whose shown answer holds the key fact (thread vs
  alone);
* **wrongly refused** — covered follow-ups answered "not covered";
* **wrong subject** — answers (not refusals) whose first cited passage is not from the
  thread's note: alone, "what are its side effects?" is answered about some other drug;
* **uncovered flagged** — uncovered follow-ups answered "not covered" (alone, the failure is
  an answer from another note: counted as wrong subject);
* **new topic read as a follow-up** — new-topic questions read with the earlier one
  (``retrieval.follows`` set), and of those the ones whose key fact is then missing;
* **unsupported shown as fact** — sentences of every shown answer (earlier turns included)
  that the passage they cite does not state, re-checked as in bench/bench_answers.py (must
  be 0);
* **median answer time** of the last question in the thread.

With the model, the earlier turns are answered extractively (how a turn is understood does not
depend on the model) and ``--every K`` asks every K-th thread of each set.

Run: ``python -m bench.bench_followups`` (``--quick``: the extractive answer only, no model;
``--every K``: a sample for the model).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.config import Config  # noqa: E402
from backends.models.chat import ChatModel, RetrievalOnlyChat  # noqa: E402
from backends.tutor import followup  # noqa: E402
from backends.tutor.service import NOT_COVERED, Turn, TutorService  # noqa: E402
from bench.bench_answers import _tutor, shown_unsupported, states  # noqa: E402
from bench.common import table, write  # noqa: E402

FOLLOWUPS = ROOT / "bench" / "data" / "followup_eval.json"
USER = "bench"
SETS = ("covered", "uncovered", "new_topic")


def first_cited(turn: Turn) -> str:
    """The note of the first passage the shown answer cites ("" when it cites none)."""
    by_number = {p.number: p.doc_id for p in turn.passages}
    return next((by_number[n] for n in turn.cited if n in by_number), "")


def judge(turn: Turn, item: dict[str, Any]) -> dict[str, Any]:
    g = turn.grounding
    assert g is not None
    refused = g.mode == NOT_COVERED
    cited = first_cited(turn)
    return {
        "refused": refused,
        "mode": g.mode,
        "key": states(turn.answer, item["key"]) if "key" in item else None,
        "first cited": cited,
        "wrong subject": not refused and bool(cited) and cited != item["note"],
        "follows": turn.retrieval.follows,
        "carried": turn.retrieval.carried,
        "answer": turn.answer,
        "generated": g.generated,
    }


@contextlib.contextmanager
def extractive(tutor: TutorService, when: bool) -> Iterator[None]:
    """The earlier turns of a model run answered without the model (``when``): how a turn is
    understood (what the next one follows) is decided before the model is asked, and those
    questions' answers are bench_answers' to measure; on two shared cores a model turn takes
    ~20 s, and the earlier turns would double the run."""
    if not when:
        yield
        return
    chat = tutor._chat  # a bench-only swap of the service's model provider
    tutor._chat = RetrievalOnlyChat
    try:
        yield
    finally:
        tutor._chat = chat


def run_threads(
    tutor: TutorService, label: str, *, every: int = 1, earlier_extractive: bool = False
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    data = json.loads(FOLLOWUPS.read_text("utf-8"))
    rows: list[dict[str, Any]] = []
    for name in SETS:
        for item in data[name][::every]:
            unsupported = 0
            understood = ""
            with extractive(tutor, earlier_extractive):
                for question in item["earlier"]:
                    turn = tutor.ask(question, USER, earlier=understood)
                    unsupported += shown_unsupported(turn)
                    understood = turn.retrieval.understood
            started = time.perf_counter()
            in_thread = tutor.ask(item["question"], USER, earlier=understood)
            seconds = time.perf_counter() - started
            alone = tutor.ask(item["question"], USER)
            unsupported += shown_unsupported(in_thread) + shown_unsupported(alone)
            kind = followup.kind(item["question"], names_entity=bool(alone.retrieval.graph.seeds))
            rows.append(
                {
                    "id": item["id"],
                    "set": name,
                    "lang": item["lang"],
                    "turns": len(item["earlier"]) + 1,
                    "kind": kind or "none",
                    "earlier understood": understood,
                    "thread": judge(in_thread, item),
                    "alone": judge(alone, item),
                    "shown_unsupported": unsupported,
                    "seconds": seconds,
                }
            )
    return summarise(rows, label), rows


def _share(rows: list[dict[str, Any]], how: str, key: str) -> float | None:
    return sum(bool(r[how][key]) for r in rows) / len(rows) if rows else None


def summarise(rows: list[dict[str, Any]], label: str) -> dict[str, Any]:
    covered = [r for r in rows if r["set"] == "covered"]
    uncovered = [r for r in rows if r["set"] == "uncovered"]
    new = [r for r in rows if r["set"] == "new_topic"]
    carried = [r for r in new if r["thread"]["follows"]]
    summary: dict[str, Any] = {"configuration": label, "covered": len(covered)}
    for how in ("thread", "alone"):
        summary[f"key fact ({how})"] = _share(covered, how, "key")
    for lang in ("en", "es"):
        summary[f"key fact {lang} (thread)"] = _share(
            [r for r in covered if r["lang"] == lang], "thread", "key"
        )
    summary["key fact 3-turn (thread)"] = _share(
        [r for r in covered if r["turns"] > 2], "thread", "key"
    )
    for how in ("thread", "alone"):
        summary[f"wrongly refused ({how})"] = _share(covered, how, "refused")
    for how in ("thread", "alone"):
        summary[f"wrong subject ({how})"] = sum(r[how]["wrong subject"] for r in covered)
    summary["uncovered"] = len(uncovered)
    for how in ("thread", "alone"):
        summary[f"uncovered flagged ({how})"] = _share(uncovered, how, "refused")
    for how in ("thread", "alone"):
        summary[f"uncovered wrong subject ({how})"] = sum(
            r[how]["wrong subject"] for r in uncovered
        )
    summary["new topic"] = len(new)
    summary["new topic key (thread)"] = _share(new, "thread", "key")
    summary["new topic read as follow-up"] = len(carried)
    summary["... and key missing"] = sum(not r["thread"]["key"] for r in carried)
    summary["unsupported shown as fact"] = sum(r["shown_unsupported"] for r in rows)
    summary["median answer s"] = statistics.median(r["seconds"] for r in rows)
    return summary


def by_kind(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Covered follow-ups by how the rules read them (marked, short, none)."""
    out = []
    covered = [r for r in rows if r["set"] == "covered"]
    for kind in ("marked", "short", "none"):
        some = [r for r in covered if r["kind"] == kind]
        if some:
            out.append(
                {
                    "kind": kind,
                    "n": len(some),
                    "read as follow-up": sum(bool(r["thread"]["follows"]) for r in some),
                    "key (thread)": _share(some, "thread", "key"),
                    "key (alone)": _share(some, "alone", "key"),
                    "refused (thread)": _share(some, "thread", "refused"),
                }
            )
    return out


def failures(rows: list[dict[str, Any]]) -> list[str]:
    """One line per thread the tutor got wrong in the thread (for reading, not for figures)."""
    lines = []
    for r in rows:
        t = r["thread"]
        wrong = (
            (r["set"] != "uncovered" and not t["key"])
            or (r["set"] == "uncovered" and not t["refused"])
            or (r["set"] == "new_topic" and bool(t["follows"]))
        )
        if wrong:
            lines.append(
                f"  {r['id']} [{r['set']}, {r['kind']}] mode={t['mode']} follows="
                f"{bool(t['follows'])} cited={t['first cited'] or '-'}: {t['answer'][:110]!r}"
            )
    return lines


def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    # --every K: the model run asks every K-th thread of each set (the extractive run, all)
    every = int(argv[argv.index("--every") + 1]) if "--every" in argv else 1
    from backends.models.embedders import MiniLMEmbedder
    from backends.models.registry import create_chat_model

    embedder = MiniLMEmbedder()
    configurations: list[tuple[str, ChatModel]] = [("extractive (no model)", RetrievalOnlyChat())]
    skipped = ""
    if not quick:
        choice = create_chat_model(Config(home=Path(tempfile.mkdtemp())))
        if choice.model.retrieval_only:  # the default model is not installed: say so, go on
            skipped = f"default model skipped: {choice.fallback_reason or 'not installed'}"
            print(skipped)
        else:
            configurations.insert(0, (f"default model ({choice.model.name})", choice.model))
    summaries = []
    kinds: dict[str, list[dict[str, Any]]] = {}
    details: dict[str, list[dict[str, Any]]] = {}
    for label, chat in configurations:
        with tempfile.TemporaryDirectory() as home:
            tutor = _tutor(Path(home), embedder, chat)
            try:
                model = not chat.retrieval_only
                summary, rows = run_threads(
                    tutor, label, every=every if model else 1, earlier_extractive=model
                )
                summary["threads asked"] = len(rows)
            finally:
                tutor.close()
        summaries.append(summary)
        details[label] = rows
        kinds[label] = by_kind(rows)
        print(f"-- {label}: covered follow-ups by kind")
        print(table(kinds[label]))
        print(f"-- {label}: wrong in the thread")
        print("\n".join(failures(rows)) or "  (none)")
    columns = [{k: v for k, v in s.items()} for s in summaries]
    for s in columns:
        print(table([{"measure": k, "value": v} for k, v in s.items()]))
    payload = {"summaries": summaries, "by kind": kinds, "skipped": skipped, "details": details}
    write("followups", payload)
    return {"summaries": summaries, "by kind": kinds, "skipped": skipped}


if __name__ == "__main__":
    main()
