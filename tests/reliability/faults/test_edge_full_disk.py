"""Issue 25, item 4: a full disk under qdrant-edge is a message, never SIGBUS.

qdrant-edge maps its files and writes into them; a write into a mapped page the disk cannot
back is SIGBUS, which took the whole process (the window) with it: seen with < ~50 MB free.
The memory now checks the free space before it creates, opens (its WAL is written) or writes
a shard and fails the one operation with a message; once there is room, it all works again.
On a real small tmpfs (root and ``mount``), in a child process (before the fix, SIGBUS
killed it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.reliability.faults.filesystems import tmpfs

ROOT = Path(__file__).resolve().parents[3]

CHILD = r"""
import contextlib, os, sys
from pathlib import Path
from backends.errors import StoreUnavailableError
from backends.models.embedders import HashingEmbedder
from backends.stores.vectors import MemoryItem
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory

disk, case = Path(sys.argv[1]), sys.argv[2]
embedder = HashingEmbedder()

def fill(leave):
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(disk / "filler.bin", "wb") as fh, contextlib.suppress(OSError):
        fh.write(b"\0" * max(0, free - leave))

if case == "create":  # a 20 MB disk: the three collections cannot even be created
    try:
        EdgeSemanticMemory(embedder, path=disk / "edge", idle=0)
    except StoreUnavailableError as err:
        print(err)
        sys.exit(0 if "MB free" in str(err) else 4)
    sys.exit(5)

memory = EdgeSemanticMemory(embedder, path=disk / "edge", idle=0)  # room enough
memory.add("agent_results", MemoryItem(text="an early result", session="s1"))
fill(leave=30 * 1024 * 1024)  # then the disk fills up: 30 MB left
try:
    for i in range(200):
        memory.add("code_patterns", MemoryItem(text=f"pattern {i} " * 40, session="s1"))
except StoreUnavailableError as err:
    print(err)
    try:  # opening a shard writes (its WAL): refused too, with the same message
        memory.search("agent_results", "an early result")
    except StoreUnavailableError as again:
        if "MB free" not in str(again):
            sys.exit(6)
    (disk / "filler.bin").unlink()  # room again: it all works again
    memory.add("code_patterns", MemoryItem(text="after the disk was freed", session="s1"))
    hits = memory.search("agent_results", "an early result")
    memory.close()
    sys.exit(0 if "MB free" in str(err) and hits else 4)
sys.exit(5)
"""


@pytest.mark.parametrize(("case", "size"), [("create", "20m"), ("write", "160m")])
def test_a_full_disk_fails_the_one_operation_with_a_message(
    tmp_path: Path, case: str, size: str
) -> None:
    disk = tmp_path / "disk"
    with tmpfs(disk, size=size) as mounted:
        if not mounted:
            pytest.skip("a really full disk needs a small tmpfs (root and mount)")
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(disk), case],
            cwd=ROOT,
            env={**os.environ, "RUST_BACKTRACE": "0"},
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode != -signal.SIGBUS, "the engine's mapped write killed the process"
    assert done.returncode == 0, f"exit {done.returncode}: {done.stdout}{done.stderr[-2000:]}"
    assert "nothing was written" in done.stdout
