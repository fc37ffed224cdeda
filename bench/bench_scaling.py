"""Latency against data size, for the plots of docs/BENCHMARKS.md (issue 10).

The assistant benchmarks measure one size each; the report plots how two operations grow:

* **audit verification** — a full :func:`verify_chain` of an SQLite log of 10k … 1M records
  (bulk-built with ``bench_audit.bulk_build``) against the plain Python walk (fetch, sha256,
  compare) in the same run;
* **start-up reconciliation** — a fresh :class:`ConversationAgent` ``start()`` with nothing
  changed, over 50 … 1,500 encrypted conversations of 20 messages, against reading and
  decrypting every file (what start-up costs without the SQLite index).

Memory search against size comes from ``bench_memories`` (1k … 100k memories). Medians over
repeats. Run: ``python -m bench.bench_scaling``.
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

from backends.audit.verify import verify_chain  # noqa: E402
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
from bench.bench_audit import bulk_build, plain_walk  # noqa: E402
from bench.common import table, write  # noqa: E402

AUDIT_SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000)
CONVERSATION_SIZES = (50, 150, 500, 1_500)
MESSAGES_EACH = 20
REPEATS = 5
WORDS = [
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
    "meadow",
]


def audit_verification(tmp: Path) -> list[dict[str, Any]]:
    rows = []
    for count in AUDIT_SIZES:
        path = tmp / f"audit-{count}.sqlite3"
        log = bulk_build(path, count)
        ours, plain = [], []
        for _ in range(3):
            result = verify_chain(log)
            if not result.ok or result.records != count:
                raise RuntimeError(f"verification failed: {result.line()}")
            ours.append(result.seconds)
            plain.append(plain_walk(path))
        log.close()
        path.unlink()
        row = {
            "records": count,
            "ours_ms": statistics.median(ours) * 1000,
            "baseline_ms": statistics.median(plain) * 1000,
        }
        row["ratio"] = row["ours_ms"] / row["baseline_ms"]
        rows.append(row)
        print(f"  audit {count:>9,}: {row['ours_ms']:8.1f} ms (plain {row['baseline_ms']:.1f})")
    return rows


def _seed(files: ConversationFiles, count: int, rng: random.Random) -> None:
    for i in range(count):
        history = [
            StoredMessage(
                "user" if j % 2 == 0 else "assistant",
                " ".join(rng.choice(WORDS) for _ in range(12)),
                now_iso(),
            )
            for j in range(MESSAGES_EACH)
        ]
        conversation = Conversation(new_id(), f"C{i}", now_iso(), "scripted", "scripted", history)
        files.write(conversation, create=True)


def reconciliation(tmp: Path) -> list[dict[str, Any]]:
    rng = random.Random(7)
    embedder = HashingEmbedder(384)
    chat = ChatChoice(ScriptedChat())
    rows = []
    for count in CONVERSATION_SIZES:
        home = tmp / f"conversations-{count}"
        key = generate_key()
        config = Config(home=home, embedder="hashing", chat_model="scripted", conversations_key=key)
        files = ConversationFiles(config.path("conversations"), HistoryCipher([key]))
        _seed(files, count, rng)

        def agent(config: Config = config) -> ConversationAgent:
            return ConversationAgent(
                config, embedder=lambda: embedder, chat=lambda: chat, use_keyring=False
            )

        first = agent()
        first.start()  # builds the index once
        first.close()
        ours = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            fresh = agent()
            report = fresh.start()
            ours.append(time.perf_counter() - started)
            fresh.close()
            assert report.reread == 0
        baseline = []
        for _ in range(3):
            started = time.perf_counter()
            for name in files.scan():
                files.read(name)
            baseline.append(time.perf_counter() - started)
        row = {
            "conversations": count,
            "messages": count * MESSAGES_EACH,
            "ours_ms": statistics.median(ours) * 1000,
            "baseline_ms": statistics.median(baseline) * 1000,
        }
        row["ratio"] = row["ours_ms"] / row["baseline_ms"]
        rows.append(row)
        print(
            f"  reconcile {count:>6,} conversations: {row['ours_ms']:7.1f} ms "
            f"(read+decrypt all {row['baseline_ms']:.1f})"
        )
    return rows


def main() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-scaling-") as tmp:
        audit = audit_verification(Path(tmp))
        reconcile = reconciliation(Path(tmp))
    print(table(audit))
    print(table(reconcile))
    payload = {"audit_verification": audit, "reconciliation": reconcile}
    write("scaling", payload)
    return payload


if __name__ == "__main__":
    main()
