"""Multi-agent check (issue 24, AL3): does "verified" mean the code passes its tests?

``bench/data/coding_tasks.json``: small coding tasks, each with hidden tests (never shown to
the model), a reference solution and a wrong one. Each task runs through the whole team
(:class:`~backends.multiagent.service.MultiAgentService`: plan, code, check, retry, review),
then its final code is run against the hidden tests by the bench itself, in a fresh sandbox.

Configurations:

* **scripted, good / wrong / wrong then fixed / tricky** — the scripted model answers with the
  reference, the wrong solution (twice: the retry too), the wrong one then the reference, or
  the reference plus a trick that would fool a check reading only the exit status
  (``os._exit(0)``/``sys.exit(0)`` at load, an endless loop, a network call): the hidden tests
  are attached as the user's tests;
* **default model, tests attached** — the same, with the configured default model;
* **default model, no tests given** — the team's own tests (the coder's, else the tester's)
  decide; the hidden tests then say whether that "verified" was right.

Figures: tasks, verified / failed / unverified, the rate of verified results, how many results
marked verified fail their hidden tests (must be 0 whenever the hidden tests are the ones the
check ran), the hidden-test pass rate of the final code, median seconds per task.

Run: ``python -m bench.bench_multiagent_verify`` (``--quick``: scripted only; ``--tasks N``:
the default model on the first N tasks; ``--untested``: only the default model with no tests
given, where the team writes its own — results in ``multiagent_verify_untested.json``).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.config import Config  # noqa: E402
from backends.models.chat import ChatModel, ScriptedChat  # noqa: E402
from backends.models.embedders import HashingEmbedder  # noqa: E402
from backends.multiagent.sandbox import namespace_available, run_tests  # noqa: E402
from backends.multiagent.service import MultiAgentService  # noqa: E402
from backends.multiagent.verify import python_source, split_tests  # noqa: E402
from bench.common import table, write  # noqa: E402

DATA = ROOT / "bench" / "data" / "coding_tasks.json"
#: what the tricky scripted answers add to the reference solution
TRICKS = (
    "import os\nos._exit(0)\n",
    "import sys\nsys.exit(0)\n",
    "while True:\n    pass\n",
    "import urllib.request\nurllib.request.urlopen('http://example.com', timeout=2)\n",
)


def load_tasks() -> list[dict[str, str]]:
    tasks: list[dict[str, str]] = json.loads(DATA.read_text(encoding="utf-8"))["tasks"]
    return tasks


def fenced(code: str) -> str:
    return f"Here is the code:\n```python\n{code.rstrip()}\n```\n"


def scripted(kind: str, task: dict[str, str], index: int) -> ChatModel:
    plan = f"1. coder: {task['task']}"
    good, bad = fenced(task["good"]), fenced(task["bad"])
    tricky = fenced(task["good"] + TRICKS[index % len(TRICKS)])
    replies = {
        "good": [plan, good, "The code is right."],
        "wrong": [plan, bad, bad, "The code looks right."],
        "wrong then fixed": [plan, bad, good, "Fixed on the retry."],
        "tricky": [plan, tricky, tricky, "Done."],
    }[kind]
    return ScriptedChat(replies=list(replies))


def final_code(session_data: dict[str, Any]) -> str:
    """The code the session ends with (its last step that wrote Python)."""
    code = ""
    for step in session_data.get("steps") or []:
        source, _why = python_source(str(step.get("result") or ""))
        if source:
            code = split_tests(source)[0]
    return code


def run_configuration(
    label: str,
    chat_for: Callable[[dict[str, str], int], ChatModel],
    tasks: list[dict[str, str]],
    attach: bool,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    holder: list[ChatModel] = []
    with tempfile.TemporaryDirectory() as home:
        config = Config(home=Path(home), embedder="hashing", chat_model="scripted").validated()
        embedder = HashingEmbedder(384)
        service = MultiAgentService(
            config, embedder=lambda: embedder, chat=lambda: holder[-1], retry_after=0
        )
        try:
            for index, task in enumerate(tasks):
                holder.append(chat_for(task, index))
                started = time.perf_counter()
                session = service.ask(task["task"], tests=task["tests"] if attach else "")
                seconds = time.perf_counter() - started
                record = session.data.get("verification") or {}
                status = str(record.get("status"))
                code = final_code(session.data)
                hidden = run_tests(code, task["tests"]) if code.strip() else None
                steps = [s for s in session.data.get("steps") or [] if s.get("verification")]
                attempts = sum(len(s["verification"].get("attempts") or []) for s in steps)
                sources = sorted({str(s["verification"].get("tests_from") or "-") for s in steps})
                rows.append(
                    {
                        "task": task["id"],
                        "status": status,
                        "tests from": ", ".join(x for x in sources if x) or "-",
                        "checks": attempts,
                        "hidden tests pass": bool(hidden is not None and hidden.ok),
                        "seconds": round(seconds, 2),
                        "summary": str(record.get("summary") or ""),
                    }
                )
                print(f"  {label} · {task['id']}: {status} ({seconds:.1f} s)", flush=True)
        finally:
            service.close()
    verified = [r for r in rows if r["status"] == "verified"]
    summary = {
        "configuration": label,
        "tasks": len(rows),
        "verified": len(verified),
        "failed verification": sum(r["status"] == "failed" for r in rows),
        "unverified draft": sum(r["status"] == "unverified" for r in rows),
        "verified rate": round(len(verified) / len(rows), 3) if rows else 0.0,
        "verified but hidden tests fail": sum(not r["hidden tests pass"] for r in verified),
        "hidden tests pass": round(sum(r["hidden tests pass"] for r in rows) / len(rows), 3)
        if rows
        else 0.0,
        "median s": round(statistics.median(r["seconds"] for r in rows), 2) if rows else 0.0,
    }
    return summary, rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    #: only the default model with no tests given (the team writes its own): the tester's part
    untested = "--untested" in argv
    count = int(argv[argv.index("--tasks") + 1]) if "--tasks" in argv else None
    tasks = load_tasks()
    print(
        f"{len(tasks)} tasks; network isolation: "
        f"{'namespace + audit hook' if namespace_available() else 'audit hook only'}"
    )
    summaries: list[dict[str, Any]] = []
    details: dict[str, list[dict[str, Any]]] = {}
    for kind in () if untested else ("good", "wrong", "wrong then fixed", "tricky"):
        label = f"scripted, {kind}"
        summary, rows = run_configuration(label, partial(scripted, kind), tasks, attach=True)
        summaries.append(summary)
        details[label] = rows
    if not quick:
        from backends.models.registry import create_chat_model

        choice = create_chat_model(Config(home=Path(tempfile.mkdtemp())), "multiagent")
        model = choice.model
        sample = tasks[:count] if count else tasks
        for attach in (False,) if untested else (True, False):
            label = f"default model ({model.name}), " + (
                "tests attached" if attach else "no tests given"
            )
            summary, rows = run_configuration(label, lambda task, i: model, sample, attach)
            summaries.append(summary)
            details[label] = rows
    print(table(summaries))
    for label, rows in details.items():
        if label.startswith("default"):
            print(f"\n{label}")
            print(table([{k: v for k, v in r.items() if k != "summary"} for r in rows]))
    payload = {"summaries": summaries, "details": details}
    write("multiagent_verify_untested" if untested else "multiagent_verify", payload)
    return payload


if __name__ == "__main__":
    main()
