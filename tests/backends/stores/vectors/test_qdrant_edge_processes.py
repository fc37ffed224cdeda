"""Two real processes on one qdrant-edge memory (the window and ``custodia ask multiagent``):
each operation leases the memory, so both work; a long holder makes the other wait, then fail
with a message naming it; a killed holder frees it at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.errors import StoreUnavailableError
from backends.models.embedders import HashingEmbedder
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory

ROOT = Path(__file__).resolve().parents[4]

WRITER = """
import sys
from pathlib import Path
from backends.models.embedders import HashingEmbedder
from backends.stores.vectors import MemoryItem
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory
path, tag, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
memory = EdgeSemanticMemory(HashingEmbedder(64), path=path, wait=60.0, idle=0.02)
for i in range(rounds):
    memory.add("agent_results", MemoryItem(f"{tag} result {i}", session=tag))
    hits = memory.search("agent_results", f"{tag} result {i}", limit=1, session=tag)
    assert hits and hits[0].text == f"{tag} result {i}", hits
memory.close()
print("ok", tag)
"""

HOLDER = """
import sys, time
from pathlib import Path
from backends.models.embedders import HashingEmbedder
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory
memory = EdgeSemanticMemory(HashingEmbedder(64), path=Path(sys.argv[1]), wait=60.0)
with memory._lease():  # what a long re-embedding does
    memory.count("agent_results")
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
memory.close()
"""


def _python(code: str, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )


def _holding(tmp_path: Path, seconds: float) -> subprocess.Popen[str]:
    holder = _python(HOLDER, str(tmp_path / "edge"), str(seconds))
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "holding", holder.stderr
    return holder


def test_two_processes_write_and_search_at_once(tmp_path: Path) -> None:
    EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge").close()
    procs = [_python(WRITER, str(tmp_path / "edge"), tag, "25") for tag in ("window", "cli")]
    outs = [p.communicate(timeout=240) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert out.startswith("ok")
    memory = EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge")
    try:
        assert memory.count("agent_results") == 50
        for tag in ("window", "cli"):
            assert len(memory.search("agent_results", "result", limit=100, session=tag)) == 25
    finally:
        memory.close()


def test_a_long_holder_makes_the_other_wait_then_say_who(tmp_path: Path) -> None:
    EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge").close()
    holder = _holding(tmp_path, 30)
    try:
        with pytest.raises(StoreUnavailableError, match=f"pid {holder.pid}"):
            EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge", wait=0.5)
    finally:
        holder.kill()
        holder.communicate()


def test_a_killed_holder_frees_the_memory_at_once(tmp_path: Path) -> None:
    EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge").close()
    holder = _holding(tmp_path, 120)
    os.kill(holder.pid, signal.SIGKILL)
    holder.communicate()
    start = time.monotonic()
    memory = EdgeSemanticMemory(HashingEmbedder(64), path=tmp_path / "edge", wait=5.0)
    try:
        assert memory.count("agent_results") == 0
        assert time.monotonic() - start < 5.0
    finally:
        memory.close()
