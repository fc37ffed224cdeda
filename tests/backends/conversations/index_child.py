"""Child process for the concurrency test of the SQLite index: in each round, opens a fresh
index file at the same instant as its sibling process and writes one row.

``python -m tests.backends.conversations.index_child FOLDER ROUNDS START WHO``; round ``r``
starts at wall-clock time ``START + r * STEP`` in ``FOLDER/round<r>/``. Prints a JSON list of
the rounds that failed (empty when every open and write succeeded).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from backends.conversations.files import FileStamp
from backends.conversations.index import ConversationIndex, IndexRow

STEP = 0.15


def _wait_until(moment: float) -> None:
    while (left := moment - time.time()) > 0.002:
        time.sleep(left - 0.002)
    while time.time() < moment:  # the last two milliseconds: spin, to start together
        pass


def main() -> None:
    folder, rounds, who = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[4]
    start = float(sys.argv[3])
    failures: list[str] = []
    for r in range(rounds):
        _wait_until(start + r * STEP)
        path = folder / f"round{r}" / "conversations.sqlite3"
        try:
            index = ConversationIndex(path)
            try:
                index.apply(
                    [
                        IndexRow(
                            f"{who}.json", who, "2025-01-01", "p", "m", str(path), 0, False,
                            "", None, FileStamp(r, r, r),
                        )
                    ]
                )  # fmt: skip
            finally:
                index.close()
        except Exception as err:  # reported to the parent, which fails the test
            failures.append(f"round {r}: {type(err).__name__}: {err}")
    print(json.dumps(failures))


if __name__ == "__main__":
    main()
