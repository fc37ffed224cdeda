"""Issue 2: start-up time to window shown, embedder throughput, chat tokens/s.

Baselines in the same run: the start-up of a bare PySide6 window (what we cannot beat), and
chromadb's default embedding padding to 256 tokens vs our dynamic padding (same model).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.common import median_seconds, table, write

SYMPTOMS = ["headache", "fever", "chest pain", "fatigue"]
SENTENCES = [f"Patient {i} reports {SYMPTOMS[i % 4]} for {i % 9 + 1} days." for i in range(400)]


def _bare_window_seconds(repeats: int = 3) -> float:
    """Baseline: exec to a bare PySide6 window shown (interpreter + Qt, nothing of ours)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    code = (
        "from PySide6.QtWidgets import QApplication, QMainWindow;"
        "a=QApplication([]); w=QMainWindow(); w.show(); print('shown', flush=True)"
    )
    samples = []
    for _ in range(repeats):
        proc = subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True
        )
        start = time.perf_counter()
        assert proc.stdout is not None
        proc.stdout.readline()
        samples.append(time.perf_counter() - start)
        proc.wait(timeout=60)
    return statistics.median(samples)


def _process_to_window(repeats: int = 5) -> float:
    """Wall time from exec to 'window-shown' printed (includes interpreter start)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(QT_QPA_PLATFORM="offscreen", CUSTODIA_STARTUP_PROBE="1")
    samples = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as home:
            env["CUSTODIA_HOME"] = home
            proc = subprocess.Popen(
                [sys.executable, "-m", "desktop.cli"], env=env, stdout=subprocess.PIPE, text=True
            )
            start = time.perf_counter()
            assert proc.stdout is not None
            line = proc.stdout.readline()
            samples.append(time.perf_counter() - start)
            proc.wait(timeout=120)
            assert line.startswith("window-shown"), line
    return statistics.median(samples)


def main() -> dict[str, Any]:
    from backends.models.embedders import MiniLMEmbedder

    rows: list[dict[str, Any]] = []
    to_window = _process_to_window()
    bare = _bare_window_seconds()
    rows.append(
        {
            "measure": "start to window shown (s)",
            "value": to_window,
            "baseline": bare,
            "ratio": to_window / bare,
            "baseline is": "bare PySide6 window",
        }
    )

    load = median_seconds(lambda: MiniLMEmbedder(), repeats=3)
    emb = MiniLMEmbedder()
    dynamic = median_seconds(lambda: emb.embed_many(SENTENCES), repeats=3)
    # baseline: the same model, every text padded to 256 tokens (chromadb's default behaviour)
    emb._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=256)
    fixed = median_seconds(lambda: emb.embed_many(SENTENCES), repeats=1)
    emb._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    rows.append(
        {
            "measure": "embedder load (s)",
            "value": load,
            "baseline": "",
            "ratio": "",
            "baseline is": "",
        }
    )
    rows.append(
        {
            "measure": "embedder sentences/s",
            "value": len(SENTENCES) / dynamic,
            "baseline": len(SENTENCES) / fixed,
            "ratio": fixed / dynamic,
            "baseline is": "same model padded to 256",
        }
    )

    try:
        from backends.config import Config
        from backends.models.chat import Prompt
        from backends.models.registry import create_chat_model

        with tempfile.TemporaryDirectory() as home:
            model = create_chat_model(Config(home=home)).model
            prompt = Prompt("Explain what a blood pressure reading means.", max_tokens=128)
            counts = []
            for _ in range(3):
                start = time.perf_counter()
                n = sum(1 for _ in model.stream(prompt))
                counts.append(n / (time.perf_counter() - start))
            rows.append(
                {
                    "measure": f"chat tokens/s ({model.name})",
                    "value": statistics.median(counts),
                    "baseline": "",
                    "ratio": "",
                    "baseline is": "",
                }
            )
    except Exception as err:  # llama.cpp missing: report, do not fail the other figures
        rows.append(
            {
                "measure": "chat tokens/s",
                "value": f"unavailable: {err}",
                "baseline": "",
                "ratio": "",
                "baseline is": "",
            }
        )
    print(table(rows))
    write("foundation", {"rows": rows})
    return {"rows": rows}


if __name__ == "__main__":
    main()
