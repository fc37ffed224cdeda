"""The window and ``custodia ask multiagent`` at once on one data dir (issue 19): both use the
semantic memory (qdrant-edge allows one opener at a time; the memory is leased per operation),
neither runs without it, and each finds what the other stored."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from backends.config import Config
from backends.models.embedders import HashingEmbedder
from backends.multiagent.service import MultiAgentService
from backends.services import Services
from backends.stores.vectors import MemoryItem

ROOT = Path(__file__).resolve().parents[3]
CLI = "import sys; from desktop.cli import main; sys.exit(main(sys.argv[1:]))"


def test_the_window_and_the_cli_share_the_semantic_memory(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = Config(home=home, embedder="hashing", chat_model="scripted").validated()
    services = Services(config, embedder=HashingEmbedder(384))
    env = dict(
        os.environ,
        CUSTODIA_HOME=str(home),
        CUSTODIA_EMBEDDER="hashing",
        CUSTODIA_CHAT_MODEL="scripted",
        PYTHONPATH=str(ROOT),
    )
    for var in ("CUSTODIA_PROFILE", "CUSTODIA_REDIS_URL", "CUSTODIA_QDRANT_URL"):
        env.pop(var, None)
    try:
        window = services.get("multiagent", MultiAgentService)
        memory = window.memory()  # open, as the tab has it after a run
        memory.add("agent_results", MemoryItem("the window's csv result", "w", "coder", "t0"))
        tasks = [f"Parse CSV files number {i}" for i in range(2)]
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", CLI, "ask", "multiagent", task],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for task in tasks
        ]
        rounds = 0
        while any(p.poll() is None for p in procs):  # the window keeps using it meanwhile
            memory.add("agent_results", MemoryItem(f"window result {rounds}", "w", "coder"))
            assert window.search_memory("csv result", limit=3)
            rounds += 1
            time.sleep(0.05)
        outputs = [p.communicate(timeout=120) for p in procs]
        for proc, (out, err) in zip(procs, outputs, strict=True):
            assert proc.returncode == 0, err
            assert out.splitlines()[-1].endswith(" unverified draft"), out
            assert "Semantic memory" not in out, out  # no "unavailable, going on without it"
        assert rounds > 0
        for task in tasks:
            hits = memory.search("session_memory", task, limit=1)
            assert hits and task in hits[0].text
        assert memory.count("agent_results") >= rounds + 1
    finally:
        services.close()
