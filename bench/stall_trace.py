"""What the GUI thread was doing when it stalled: a sampling profiler for the app benchmark.

``CUSTODIA_STALL_TRACE=1 python -m bench.bench_app`` (or its window child) samples the GUI
thread's Python stack every 2 ms from a background thread and, at the end, prints to stderr
the stacks seen during every heartbeat gap over the goal. A gap with no samples at all means
the GIL was held by native code (in any thread) for that long: the sampler could not run
either, and the samples just before and after name the culprit.
"""

from __future__ import annotations

import collections
import gc
import sys
import threading
import time
import traceback
from types import FrameType
from typing import TextIO

INTERVAL_S = 0.002


def _summary(frame: FrameType | None, depth: int = 6) -> str:
    if frame is None:
        return "<no frame>"
    stack = traceback.extract_stack(frame)[-depth:]
    return " > ".join(f"{f.name}@{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in stack)


class StallTracer:
    """Samples the GUI thread's stack (and every other thread's top frame)."""

    def __init__(self) -> None:
        self._gui = threading.get_ident()
        self._samples: list[tuple[float, str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stall-tracer", daemon=True)
        self.beats: list[float] = []
        self._collections: list[tuple[float, float, int]] = []  # start, end, generation
        self._gc_started = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._on_gc)
        self._thread.start()

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        else:
            self._collections.append(
                (self._gc_started, time.perf_counter(), info.get("generation", -1))
            )

    def beat(self) -> None:
        self.beats.append(time.perf_counter())

    def _run(self) -> None:
        names = {}
        while not self._stop.wait(INTERVAL_S):
            frames = sys._current_frames()
            for thread in threading.enumerate():
                names[thread.ident] = thread.name
            others = "; ".join(
                f"{names.get(ident, ident)}: {_summary(frame, 2)}"
                for ident, frame in frames.items()
                if ident not in (self._gui, threading.get_ident())
            )
            self._samples.append((time.perf_counter(), _summary(frames.get(self._gui)), others))

    def report(self, goal_ms: float, out: TextIO | None = None) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)
        stream = out or sys.stderr
        for before, after in zip(self.beats, self.beats[1:], strict=False):
            gap_ms = (after - before) * 1000
            if gap_ms < goal_ms:
                continue
            inside = [s for s in self._samples if before <= s[0] <= after]
            print(f"\n== gap {gap_ms:.0f} ms, {len(inside)} samples", file=stream)
            for started, ended, generation in self._collections:
                if started < after and ended > before and (ended - started) > 0.005:
                    print(
                        f"  gc generation {generation}: {(ended - started) * 1000:.0f} ms",
                        file=stream,
                    )
            counts = collections.Counter(s[1] for s in inside)
            for stack, n in counts.most_common(4):
                print(f"  GUI x{n}: {stack}", file=stream)
            edge = [s for s in self._samples if before - 0.01 <= s[0] <= after + 0.01]
            for t, _stack, others in edge[:3] + edge[-3:]:
                print(f"  others @{(t - before) * 1000:+.0f} ms: {others[:600]}", file=stream)
