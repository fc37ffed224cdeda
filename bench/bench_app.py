"""The whole app (issue 10): start-up to window, resident memory, GUI-thread stalls; the bundle.

* **start to window** — wall time from ``exec`` to the window shown (``CUSTODIA_STARTUP_PROBE``),
  from the source tree and from the PyInstaller bundle (``env -i``, as ``make package-test``
  runs it); baseline: a bare PySide6 window in the same run. The first run of each series is
  reported apart (the nearest to a cold start these machines allow: page cache not dropped).
* **resident memory** — RSS of the app with the product defaults (MiniLM + SmolLM2, both loaded
  by the start-up checks) after every tab was opened and its start-up work finished; baseline:
  the RSS of a bare PySide6 window.
* **longest GUI-thread stall** — a 5 ms heartbeat ``QTimer`` on the GUI thread (as in
  tests/desktop/test_workers.py) records every gap while the real app works, driven through its
  widgets: start-up (models loading, 600 conversation messages embedded by MiniLM in the
  background), "Rebuild index" in the conversations tab (the same 600 messages re-embedded),
  one chat turn with SmolLM2 in the conversations tab and one in the memories tab. Goal: every
  gap < 50 ms. Baseline: the same heartbeat with the app idle.
* **why** — chromadb's Rust bindings keep the GIL for a whole ``upsert``: the longest gap of a
  1 ms loop while another thread upserts 32 / 64 / 256 vectors, against the call's duration.
* **bundle** — ``du`` of ``dist/custodia``, its size as ``tar.zst`` (zstd default level), and the
  wall time of ``custodia --self-test`` (when ``make package`` was run; otherwise said so).

Run: ``python -m bench.bench_app``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import machine, table, write  # noqa: E402

BUNDLE = ROOT / "dist" / "custodia"
EXECUTABLE = BUNDLE / "custodia"
STALL_GOAL_MS = 50.0
HEARTBEAT_MS = 5
CONVERSATIONS = 60
MESSAGES_EACH = 10
REPEATS = 5


# -- start to window ---------------------------------------------------------------------------
def _time_to_line(command: list[str], env: dict[str, str], prefix: str) -> float:
    """Seconds from exec to the first stdout line starting with ``prefix``."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT
    )
    assert proc.stdout is not None
    try:
        for line in proc.stdout:
            if line.startswith(prefix):
                return time.perf_counter() - started
        raise RuntimeError(f"{command[0]}: no {prefix!r} line (exit {proc.wait()})")
    finally:
        proc.stdout.close()
        if proc.wait(timeout=180) != 0:
            raise RuntimeError(f"{' '.join(command)} exited {proc.returncode}")


def _series(run: Callable[[], float], repeats: int = REPEATS) -> dict[str, Any]:
    samples = [run() for _ in range(repeats)]
    return {"first_s": samples[0], "median_s": statistics.median(samples[1:]), "n": repeats}


def _bare_window() -> float:
    code = (
        "from PySide6.QtWidgets import QApplication, QMainWindow\n"
        "app = QApplication([]); w = QMainWindow(); w.show(); print('shown', flush=True)\n"
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return _time_to_line([sys.executable, "-c", code], env, "shown")


def _source_window() -> float:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-app-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
        env.update(QT_QPA_PLATFORM="offscreen", CUSTODIA_STARTUP_PROBE="1", CUSTODIA_HOME=home)
        return _time_to_line([sys.executable, "-m", "desktop.cli"], env, "window-shown")


def _clean_env(home: str, **extra: str) -> dict[str, str]:
    """What ``make package-test`` gives the bundle: nothing inherited."""
    return {
        "HOME": home,
        "CUSTODIA_HOME": str(Path(home) / "data"),
        "QT_QPA_PLATFORM": "offscreen",
        "LANG": "C.UTF-8",
        **extra,
    }


def _bundle_window() -> float:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-bundle-") as home:
        env = _clean_env(home, CUSTODIA_STARTUP_PROBE="1")
        return _time_to_line([str(EXECUTABLE)], env, "window-shown")


def _bundle_self_test() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-bundle-") as home:
        started = time.perf_counter()
        proc = subprocess.run(
            [str(EXECUTABLE), "--self-test"],
            env=_clean_env(home),
            capture_output=True,
            text=True,
            timeout=600,
        )
        seconds = time.perf_counter() - started
    lines = proc.stdout.splitlines()
    window = next((ln for ln in lines if "] main window" in ln), "")
    return {
        "seconds": seconds,
        "exit": proc.returncode,
        "summary": lines[-1] if lines else proc.stderr[-300:],
        "window_line": window.split("  ", 1)[-1].strip(),
    }


def _bundle_sizes() -> dict[str, Any]:
    out: dict[str, Any] = {}
    du = subprocess.run(["du", "-sb", str(BUNDLE)], capture_output=True, text=True, check=True)
    out["bytes"] = int(du.stdout.split()[0])
    models = BUNDLE / "_internal" / "models"
    if models.is_dir():
        du = subprocess.run(["du", "-sb", str(models)], capture_output=True, text=True, check=True)
        out["models_bytes"] = int(du.stdout.split()[0])
    if shutil.which("zstd"):
        started = time.perf_counter()
        tar = subprocess.Popen(
            ["tar", "-C", str(BUNDLE.parent), "-cf", "-", BUNDLE.name], stdout=subprocess.PIPE
        )
        zstd = subprocess.run(
            ["zstd", "-T0", "-q", "-c"], stdin=tar.stdout, capture_output=True, check=True
        )
        assert tar.stdout is not None
        tar.stdout.close()
        tar.wait()
        out["tar_zst_bytes"] = len(zstd.stdout)
        out["tar_zst_seconds"] = time.perf_counter() - started
    else:
        out["tar_zst_bytes"] = None
    return out


# -- memory and stalls: a child process driving the real window --------------------------------
def _child_rss_bare() -> dict[str, Any]:
    from PySide6.QtWidgets import QApplication, QMainWindow

    from bench.common import rss_mb

    app = QApplication([])
    window = QMainWindow()
    window.show()
    app.processEvents()
    return {"rss_mb": rss_mb()}


def _seed_conversations(home: Path, key: str) -> int:
    from backends.conversations.files import (
        Conversation,
        ConversationFiles,
        StoredMessage,
        new_id,
        now_iso,
    )
    from backends.conversations.keys import HistoryCipher

    topics = ("blood pressure", "kidney function", "asthma inhalers", "diabetes diet", "fever")
    files = ConversationFiles(home / "conversations", HistoryCipher([key]))
    for i in range(CONVERSATIONS):
        topic = topics[i % len(topics)]
        history = [
            StoredMessage(
                "user" if j % 2 == 0 else "assistant",
                f"Message {j} of conversation {i}: a question or an answer about {topic}, "
                f"with enough words to make a realistic sentence for the embedder ({j}).",
                now_iso(),
            )
            for j in range(MESSAGES_EACH)
        ]
        name = f"About {topic} {i}"
        conversation = Conversation(new_id(), name, now_iso(), "scripted", "scripted", history)
        files.write(conversation, create=True)
    return CONVERSATIONS * MESSAGES_EACH


def _child_window(home: Path) -> dict[str, Any]:
    """Open the real app (product defaults) and drive it; heartbeat gaps per phase."""
    from PySide6.QtCore import QElapsedTimer, QEventLoop, QObject, Qt, QTimer, Slot
    from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton, QWidget

    from backends.config import Config
    from backends.conversations.keys import generate_key
    from backends.conversations.service import ConversationAgent
    from backends.services import Services
    from bench.common import rss_mb
    from desktop.main_window import MainWindow

    key = generate_key()
    messages = _seed_conversations(home, key)
    app = QApplication([])
    tracer = None
    if os.environ.get("CUSTODIA_STALL_TRACE"):
        from bench.stall_trace import StallTracer

        tracer = StallTracer()
        tracer.start()

    class Heartbeat(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.clock = QElapsedTimer()
            self.timer = QTimer(self)
            self.timer.setTimerType(Qt.TimerType.PreciseTimer)
            self.timer.setInterval(HEARTBEAT_MS)
            self.timer.timeout.connect(self._on_timeout)
            self.gaps: list[int] = []

        def start(self) -> None:
            self.clock.start()
            self.timer.start()

        @Slot()
        def _on_timeout(self) -> None:
            self.gaps.append(self.clock.restart())
            if tracer is not None:
                tracer.beat()

        def phase(self) -> list[int]:
            gaps, self.gaps = self.gaps[1:], []
            self.clock.restart()
            return gaps

    def wait(done: Callable[[], bool], timeout_s: float = 300) -> None:
        loop = QEventLoop()
        deadline = time.monotonic() + timeout_s

        def check() -> None:
            if done() or time.monotonic() > deadline:
                loop.quit()

        poll = QTimer()
        poll.setInterval(20)
        poll.timeout.connect(check)
        poll.start()
        loop.exec()
        poll.stop()
        if not done():
            raise TimeoutError("the app did not finish in time")

    def pause(seconds: float) -> None:
        end = time.monotonic() + seconds
        wait(lambda: time.monotonic() >= end)

    config = Config(home=home, conversations_key=key).validated()  # MiniLM + SmolLM2
    services = Services(config)
    services.service(  # no OS keyring in a benchmark
        "conversations",
        lambda: ConversationAgent(
            config,
            embedder=lambda: services.embedder,
            chat=lambda: services.chat_choice,
            use_keyring=False,
        ),
        ConversationAgent.close,
    )
    beat = Heartbeat()
    started = time.perf_counter()
    window = MainWindow(services)
    window.show()
    shown = time.perf_counter() - started
    beat.start()
    checks: list[Any] = []
    window.checks_ready.connect(checks.append)
    phases: dict[str, list[int]] = {}
    wait(lambda: bool(checks) and not window.workers.active)
    tabs = window.tabs
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        pause(0.3)
    wait(lambda: not window.workers.active)
    phases["start-up: models load, 600 messages indexed"] = beat.phase()
    rss_tabs = rss_mb()

    def tab(name: str) -> QWidget:
        widget = window.findChild(QWidget, name)
        assert widget is not None, name
        tabs.setCurrentWidget(widget)
        return widget

    def button(parent: QWidget, name: str) -> QPushButton:
        found = parent.findChild(QPushButton, name)
        assert found is not None, name
        return found

    def chat(parent: QWidget, text: str) -> None:
        box = parent.findChild(QLineEdit, "chat_input")
        assert box is not None
        wait(lambda: button(parent, "send").isEnabled())
        beat.phase()
        box.setText(text)
        button(parent, "send").click()
        wait(lambda: not window.workers.active)

    conversations = tab("conversations")
    pause(0.2)
    beat.phase()
    button(conversations, "rebuild_index").click()
    wait(lambda: not window.workers.active)
    phases["indexing: rebuild 600 messages (MiniLM)"] = beat.phase()

    chat(conversations, "How is high blood pressure treated?")
    phases["chat: conversations turn (SmolLM2)"] = beat.phase()
    chat(tab("memories"), "What do I usually eat for breakfast?")
    phases["chat: memories turn (SmolLM2)"] = beat.phase()

    pause(2.0)
    phases["idle (baseline)"] = beat.phase()
    rss_end = rss_mb()
    window.close()
    app.processEvents()
    if tracer is not None:
        tracer.report(STALL_GOAL_MS * 0.6)
    return {
        "shown_s": shown,
        "messages": messages,
        "rss_all_tabs_mb": rss_tabs,
        "rss_end_mb": rss_end,
        "checks": [c.line() for c in checks[0]] if checks else [],
        "stalls": {
            name: {
                "max_ms": max(gaps) if gaps else None,
                "p99_ms": sorted(gaps)[int(0.99 * (len(gaps) - 1))] if gaps else None,
                "beats": len(gaps),
                "over_goal": sum(1 for g in gaps if g >= STALL_GOAL_MS),
            }
            for name, gaps in phases.items()
        },
    }


def _run_child(mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-app-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
        env.update(QT_QPA_PLATFORM="offscreen", CUSTODIA_HOME=home)
        proc = subprocess.run(
            [sys.executable, "-m", "bench.bench_app", "--child", mode, home],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"child {mode} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- why the GUI thread stalls: Chroma's upsert holds the GIL -----------------------------------
def chroma_gil_hold(sizes: tuple[int, ...] = (32, 64, 256)) -> list[dict[str, Any]]:
    """Longest gap of a 1 ms loop on this thread while another thread upserts ``n`` vectors
    into a local Chroma collection, against the upsert's own duration (ratio ≈ 1: the GIL is
    held for the whole call, so a GUI thread would freeze as long)."""
    import threading

    import chromadb
    import numpy as np
    from chromadb.config import Settings

    rows = []
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="custodia-bench-chroma-") as path:
        client = chromadb.PersistentClient(path=path, settings=Settings(anonymized_telemetry=False))
        collection = client.get_or_create_collection("gil_probe", metadata={"hnsw:space": "cosine"})
        for n in sizes:
            gaps, calls = [], []
            for repeat in range(3):
                vectors = rng.standard_normal((n, 384)).astype(np.float32)
                ids = [f"{n}-{repeat}-{i}" for i in range(n)]
                done = threading.Event()
                took: list[float] = []

                def upsert(
                    ids: list[str] = ids,
                    vectors: Any = vectors,
                    took: list[float] = took,
                    done: threading.Event = done,
                ) -> None:
                    t0 = time.perf_counter()
                    collection.upsert(ids=ids, embeddings=vectors)
                    took.append(time.perf_counter() - t0)
                    done.set()

                worker = threading.Thread(target=upsert)
                longest, last = 0.0, time.perf_counter()
                worker.start()
                while not done.is_set():
                    time.sleep(0.001)
                    now = time.perf_counter()
                    longest, last = max(longest, now - last), now
                worker.join()
                gaps.append(longest * 1000)
                calls.append(took[0] * 1000)
            rows.append(
                {
                    "vectors": n,
                    "gap_ms": statistics.median(gaps),
                    "upsert_ms": statistics.median(calls),
                }
            )
    return rows


# -- main --------------------------------------------------------------------------------------
def main() -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    bare = _series(_bare_window)
    source = _series(_source_window)
    rows.append(
        {
            "measure": "start to window, source tree (s)",
            "value": source["median_s"],
            "first run": source["first_s"],
            "baseline": bare["median_s"],
            "ratio": source["median_s"] / bare["median_s"],
            "baseline is": "bare PySide6 window",
        }
    )
    bundle: dict[str, Any] = {"built": EXECUTABLE.is_file()}
    if bundle["built"]:
        packaged = _series(_bundle_window)
        rows.append(
            {
                "measure": "start to window, bundle, env -i (s)",
                "value": packaged["median_s"],
                "first run": packaged["first_s"],
                "baseline": bare["median_s"],
                "ratio": packaged["median_s"] / bare["median_s"],
                "baseline is": "bare PySide6 window",
            }
        )
        bundle.update(_bundle_sizes())
        bundle["self_test"] = _bundle_self_test()
        bundle["window"] = packaged
    window = _run_child("window")
    bare_rss = _run_child("rss-bare")["rss_mb"]
    rows.append(
        {
            "measure": "RSS after opening every tab (MB)",
            "value": window["rss_all_tabs_mb"],
            "first run": "",
            "baseline": bare_rss,
            "ratio": window["rss_all_tabs_mb"] / bare_rss,
            "baseline is": "bare PySide6 window",
        }
    )
    idle = window["stalls"]["idle (baseline)"]["max_ms"]
    for name, stall in window["stalls"].items():
        if name.startswith("idle"):
            continue
        rows.append(
            {
                "measure": f"longest GUI stall, {name} (ms)",
                "value": stall["max_ms"],
                "first run": "",
                "baseline": idle,
                "ratio": (stall["max_ms"] / idle) if idle else "",
                "baseline is": f"idle heartbeat ({HEARTBEAT_MS} ms timer)",
            }
        )
    gil = chroma_gil_hold()
    for probe in gil:
        rows.append(
            {
                "measure": f"thread blocked by one Chroma upsert of {probe['vectors']} (ms)",
                "value": probe["gap_ms"],
                "first run": "",
                "baseline": probe["upsert_ms"],
                "ratio": probe["gap_ms"] / probe["upsert_ms"],
                "baseline is": "the upsert's own duration (1 = GIL held throughout)",
            }
        )
    print(table(rows))
    if bundle["built"]:
        mb = 1024 * 1024
        print(
            f"bundle: {bundle['bytes'] / mb:.0f} MiB"
            + (
                f", tar.zst {bundle['tar_zst_bytes'] / mb:.0f} MiB"
                if bundle.get("tar_zst_bytes")
                else ""
            )
            + f"; self-test {bundle['self_test']['seconds']:.1f} s, "
            f"exit {bundle['self_test']['exit']}: {bundle['self_test']['summary']}"
        )
    else:
        print("bundle: not built (run make package first)")
    stalls_ok = all(
        s["max_ms"] is not None and s["max_ms"] < STALL_GOAL_MS for s in window["stalls"].values()
    )
    payload = {
        "rows": rows,
        "window": window,
        "chroma_gil": gil,
        "bundle": bundle,
        "goal": {"stall_ms": STALL_GOAL_MS, "met": stalls_ok},
        "machine": machine(),
    }
    write("app", payload)
    return payload


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        mode = sys.argv[2]
        result = _child_rss_bare() if mode == "rss-bare" else _child_window(Path(sys.argv[3]))
        print(json.dumps(result), flush=True)
        os._exit(0)  # the child's work is done; skip interpreter teardown of Qt and models
    main()
