"""Conversations (issue 5, CA3–CA5): start-up reconciliation and search over 10k messages.

Data: 500 conversations × 20 messages = 10,000 messages, history encrypted (Fernet), on the
local disk of the machine (each durable write costs an fsync). Embedder: the deterministic
``HashingEmbedder`` (384-d) — chosen for speed so the figures measure files, SQLite and
Chroma rather than the model; MiniLM adds ~3 ms per embedded message (≈300/s here).

* **start-up, nothing changed** — a fresh :class:`ConversationAgent` (SQLite index open,
  ``scandir`` + stamp check of 500 files); goal < 0.5 s. Baseline: what start-up would cost
  without the index: read and decrypt every file.
* **vector check, nothing changed** — :func:`sync` with nothing to do (list 10k ids from
  Chroma, compare with the index); reported apart because it runs in a background worker.
* **start-up, 1% changed** — 5 files each get 2 new messages from "another process": the
  reconciliation re-reads those 5, the vector sync embeds the 10 new messages.
* **search** — embed the query, top-10 pointers from Chroma, load + decrypt the hit files
  (warm: recently read files cached; cold: a fresh agent). Baseline: no index — decrypt every
  file and scan for the query words.

Medians over repeats; ratios from the same run. Run: ``python -m bench.bench_conversations``.
"""

from __future__ import annotations

import random
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
from backends.conversations.files import (  # noqa: E402
    Conversation,
    ConversationFiles,
    StoredMessage,
    new_id,
    now_iso,
)
from backends.conversations.keys import HistoryCipher, generate_key  # noqa: E402
from backends.conversations.service import ConversationAgent  # noqa: E402
from backends.models.chat import ScriptedChat  # noqa: E402
from backends.models.embedders import HashingEmbedder  # noqa: E402
from backends.models.registry import ChatChoice  # noqa: E402
from bench.common import table, write  # noqa: E402

CONVERSATIONS = 500
PER = 20
GOAL_SECONDS = 0.5
WORDS = tuple(
    [
        "river",
        "bread",
        "lantern",
        "harbour",
        "violin",
        "garden",
        "kestrel",
        "winter",
        "copper",
        "tram",
        "mountain",
        "letter",
        "window",
        "orchard",
        "candle",
        "market",
        "festival",
        "library",
        "ferry",
        "pepper",
        "compass",
        "island",
        "meadow",
        "thunder",
        "velvet",
        "marble",
        "signal",
        "canyon",
        "puzzle",
        "saffron",
        "glacier",
        "whistle",
        "anchor",
    ]
)


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))


def _seed(folder: Path, key: str, rng: random.Random) -> list[str]:
    files = ConversationFiles(folder, HistoryCipher([key]))
    roles = ("user", "assistant")
    ids = []
    for i in range(CONVERSATIONS):
        conversation = Conversation(
            id=new_id(),
            name=f"Conversation {i}",
            date=now_iso(),
            provider="scripted",
            model="scripted",
            history=[StoredMessage(roles[j % 2], _sentence(rng), now_iso()) for j in range(PER)],
        )
        files.write(conversation, create=True)
        ids.append(conversation.id)
    return ids


def _agent(config: Config, embedder: HashingEmbedder) -> ConversationAgent:
    chat = ChatChoice(ScriptedChat())
    return ConversationAgent(
        config, embedder=lambda: embedder, chat=lambda: chat, use_keyring=False
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def main() -> dict[str, Any]:
    rng = random.Random(7)
    embedder = HashingEmbedder(384)
    with tempfile.TemporaryDirectory(prefix="custodia-bench-conv-") as tmp:
        home = Path(tmp)
        key = generate_key()
        config = Config(home=home, embedder="hashing", chat_model="scripted", conversations_key=key)
        started = time.perf_counter()
        ids = _seed(config.path("conversations"), key, rng)
        seed_s = time.perf_counter() - started

        # First start: empty index, every file read; then every message embedded.
        agent = _agent(config, embedder)
        first = agent.start()
        started = time.perf_counter()
        full = agent.sync_vectors()
        first_sync_s = time.perf_counter() - started
        agent.close()

        # Start-up with nothing changed.
        startup, check, opened = [], [], []
        for _ in range(7):
            t0 = time.perf_counter()
            agent = _agent(config, embedder)
            report = agent.start()
            t1 = time.perf_counter()
            agent.vectors()
            t2 = time.perf_counter()
            sync = agent.sync_vectors()
            t3 = time.perf_counter()
            assert report.reread == 0 and sync.added == 0 and sync.dropped == 0
            startup.append(t1 - t0)
            opened.append(t2 - t1)
            check.append(t3 - t2)
            agent.close()

        # Baseline: no index — read and decrypt every file at start.
        files = ConversationFiles(config.path("conversations"), HistoryCipher([key]))
        baseline = []
        for _ in range(3):
            t0 = time.perf_counter()
            for name in files.scan():
                files.read(name)
            baseline.append(time.perf_counter() - t0)

        # 1% changed: 5 files get 2 messages each from another process.
        changed_reconcile, changed_sync, changed_total = [], [], []
        for _ in range(5):
            for cid in rng.sample(ids, CONVERSATIONS // 100):
                conversation, _ = files.read(f"{cid}.json")
                conversation.history += [
                    StoredMessage("user", _sentence(rng), now_iso()),
                    StoredMessage("assistant", _sentence(rng), now_iso()),
                ]
                files.write(conversation)
            t0 = time.perf_counter()
            agent = _agent(config, embedder)
            report = agent.start()
            t1 = time.perf_counter()
            sync = agent.sync_vectors()
            t2 = time.perf_counter()
            assert report.reread == CONVERSATIONS // 100 and sync.added == 2 * report.reread
            changed_reconcile.append(t1 - t0)
            changed_sync.append(t2 - t1)
            changed_total.append(t2 - t0)
            agent.close()

        # Search.
        queries = [" ".join(rng.sample(WORDS, 3)) for _ in range(40)]
        agent = _agent(config, embedder)
        agent.start()
        t0 = time.perf_counter()
        agent.search(queries[0], 10)
        cold_s = time.perf_counter() - t0
        warm = []
        for query in queries:
            t0 = time.perf_counter()
            hits = agent.search(query, 10)
            warm.append(time.perf_counter() - t0)
            assert len(hits) == 10
        agent.close()
        scan = []
        for query in queries[:5]:
            words = query.split()
            t0 = time.perf_counter()
            found = [
                m
                for name in files.scan()
                for m in files.read(name)[0].history
                if all(w in m.content for w in words)
            ]
            scan.append(time.perf_counter() - t0)
            del found
        messages = CONVERSATIONS * PER + 5 * 2 * CONVERSATIONS // 100

    startup_s = statistics.median(startup)
    baseline_s = statistics.median(baseline)
    rows = [
        {"measure": "seed 500 files (fsync each)", "ms": _ms(seed_s), "vs baseline": ""},
        {
            "measure": "first start: index 500 files",
            "ms": _ms(first.seconds),
            "vs baseline": "",
        },
        {"measure": "first vector sync: 10k messages", "ms": _ms(first_sync_s), "vs baseline": ""},
        {
            "measure": "start-up, nothing changed",
            "ms": _ms(startup_s),
            "vs baseline": f"{baseline_s / startup_s:.0f}× faster",
        },
        {
            "measure": "  baseline: read+decrypt all files",
            "ms": _ms(baseline_s),
            "vs baseline": "1×",
        },
        {"measure": "open Chroma (local)", "ms": _ms(statistics.median(opened)), "vs baseline": ""},
        {
            "measure": "vector check, nothing changed",
            "ms": _ms(statistics.median(check)),
            "vs baseline": "",
        },
        {
            "measure": "start-up, 1% changed: reconcile",
            "ms": _ms(statistics.median(changed_reconcile)),
            "vs baseline": "",
        },
        {
            "measure": "start-up, 1% changed: vector sync",
            "ms": _ms(statistics.median(changed_sync)),
            "vs baseline": "",
        },
        {
            "measure": "search top-10, warm (median)",
            "ms": _ms(statistics.median(warm)),
            "vs baseline": f"{statistics.median(scan) / statistics.median(warm):.0f}× faster",
        },
        {
            "measure": "search top-10, warm (p95)",
            "ms": _ms(sorted(warm)[int(len(warm) * 0.95) - 1]),
            "vs baseline": "",
        },
        {"measure": "search top-10, cold (first)", "ms": _ms(cold_s), "vs baseline": ""},
        {
            "measure": "  baseline: decrypt all + scan",
            "ms": _ms(statistics.median(scan)),
            "vs baseline": "1×",
        },
    ]
    print(f"{CONVERSATIONS} conversations × {PER} messages, encrypted; HashingEmbedder 384-d")
    print(table(rows))
    goal_met = startup_s < GOAL_SECONDS
    print(
        f"goal: start-up with nothing changed < {GOAL_SECONDS} s: "
        + ("met" if goal_met else "MISSED")
    )
    result = {
        "conversations": CONVERSATIONS,
        "messages": messages,
        "embedder": "hashing-384",
        "rows": rows,
        "goal": {
            "startup_unchanged_s": round(startup_s, 4),
            "limit_s": GOAL_SECONDS,
            "met": goal_met,
        },
        "full_sync": {"added": full.added, "seconds": round(first_sync_s, 3)},
    }
    write("conversations", result)
    return result


if __name__ == "__main__":
    main()
