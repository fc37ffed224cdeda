"""Issue 25, item 5: a damaged qdrant-edge segment is reported and rebuilt.

Garbage in a segment's ``payload_storage/tracker.dat`` made every multi-agent run end in
``pyo3_runtime.PanicException`` (a ``BaseException``), ``reindex multiagent`` panicked too,
and ``sessions --health`` said ok. Now the store turns an engine panic into a
:class:`StoreUnavailableError` naming the damage, the health check reads every collection
(``verify``), and ``reindex multiagent`` rebuilds the derived store from what can still be
read. Other damage (truncated mmaps, garbage ``segment.json``) runs in a child process: an
engine that trusted its files could kill the process that opens them.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends import cli
from backends.config import Config
from backends.errors import StoreUnavailableError
from backends.models.embedders import HashingEmbedder
from backends.stores.vectors import MemoryItem
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory
from tests.harness.damage import damage_file

ROOT = Path(__file__).resolve().parents[3]
#: the embedder CUSTODIA_EMBEDDER=hashing makes (its dimension must match the stored one)
EMBEDDER = HashingEmbedder()
POINTS = 8


def _config(home: Path) -> Config:
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


def build(home: Path) -> None:
    """A data dir whose semantic memory holds POINTS results in agent_results, added one at
    a time as a multi-agent run does (each flushed: the segment files hold them, not the WAL
    alone, which would repair the damage on replay)."""
    memory = EdgeSemanticMemory(EMBEDDER, path=_config(home).qdrant_edge_path, idle=0)
    try:
        for i in range(POINTS):
            memory.add(
                "agent_results", MemoryItem(text=f"result {i} about parsing CSV", session="s1")
            )
    finally:
        memory.close()


def _segment_files(home: Path, pattern: str) -> list[Path]:
    root = _config(home).qdrant_edge_path / "agent_results" / "shard" / "segments"
    return [Path(p) for p in glob.glob(str(root / "*" / pattern))]


def _env(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for var in list(os.environ):
        if var.startswith("CUSTODIA_") and var != "CUSTODIA_REQUIRE_SERVERS":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")


def test_a_panicking_segment_is_an_environment_error_reported_and_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    build(tmp_path)
    (tracker,) = _segment_files(tmp_path, "payload_storage/tracker.dat")
    with open(tracker, "r+b") as fh:  # every offset it holds now points past its pages
        fh.write(b"\xff" * 4096)

    memory = EdgeSemanticMemory(EMBEDDER, path=_config(tmp_path).qdrant_edge_path, idle=0)
    try:
        with pytest.raises(StoreUnavailableError, match="damaged") as caught:
            memory.search("agent_results", "parsing CSV")
        assert "reindex multiagent" in str(caught.value)
        with pytest.raises(StoreUnavailableError, match="agent_results"):
            memory.verify()
        assert memory.count("code_patterns") == 0  # the rest of the memory still works
    finally:
        memory.close()

    _env(monkeypatch, tmp_path)
    assert cli.main(["sessions", "--health"]) == 1  # it said ok
    out = capsys.readouterr().out
    assert "FAIL" in out and "damaged" in out
    assert cli.main(["reindex", "multiagent"]) == 0  # it panicked
    capsys.readouterr()
    assert cli.main(["sessions", "--health"]) == 0
    capsys.readouterr()

    memory = EdgeSemanticMemory(EMBEDDER, path=_config(tmp_path).qdrant_edge_path, idle=0)
    try:
        memory.verify()
        memory.add("agent_results", MemoryItem(text="a new result about CSV", session="s2"))
        assert memory.search("agent_results", "a new result about CSV")[0].score > 0.9
    finally:
        memory.close()


CHILD = """
import sys
from pathlib import Path
from tests.reliability.hostile.test_damaged_edge import in_child
sys.exit(in_child(Path(sys.argv[1])))
"""


def in_child(home: Path) -> int:
    """(In a child process) health, then reindex, then health: 0 when the health told the
    truth before and the memory is whole after; 2 when health said ok of an unreadable
    memory; 3 when the rebuilt memory does not work."""
    from backends.errors import CustodiaEnvironmentError

    path = _config(home).qdrant_edge_path
    readable = True
    try:
        memory = EdgeSemanticMemory(EMBEDDER, path=path, idle=0)
    except CustodiaEnvironmentError:
        readable = False
        healthy = False
    else:
        try:
            try:
                memory.verify()
                healthy = True
            except CustodiaEnvironmentError:
                healthy = False
            try:
                found = len(list(memory.points("agent_results")))
                memory.search("agent_results", "parsing CSV")
                readable = found == POINTS
            except CustodiaEnvironmentError:
                readable = False
        finally:
            memory.close()
    if healthy and not readable:
        return 2
    code = cli.main(["reindex", "multiagent"])  # this child's environment names the home
    try:
        memory = EdgeSemanticMemory(EMBEDDER, path=path, idle=0)
        try:
            memory.verify()
            memory.add("agent_results", MemoryItem(text="after the rebuild", session="s9"))
            return 0 if code == 0 else 3
        finally:
            memory.close()
    except CustodiaEnvironmentError:
        return 3


@pytest.mark.parametrize(
    ("pattern", "how"),
    [
        ("payload_storage/page_0.dat", "truncate"),
        ("vector_storage/vectors/chunk_0.mmap", "truncate"),
        ("segment.json", "garbage"),
        ("mutable_id_tracker.mappings", "garbage"),
    ],
)
def test_other_damage_is_told_truthfully_and_rebuilt(
    tmp_path: Path, pattern: str, how: str
) -> None:
    build(tmp_path)
    files = _segment_files(tmp_path, pattern)
    if not files:
        pytest.skip(f"this qdrant-edge version keeps no {pattern}")
    for file in files:
        damage_file(file, how)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")},
        "CUSTODIA_HOME": str(tmp_path),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
        "RUST_BACKTRACE": "0",
    }
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, f"{pattern} {how}: exit {done.returncode}\n{done.stderr[-3000:]}"
