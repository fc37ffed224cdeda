"""GUI-thread stalls measured against the machine's own stalls in the same run.

A heartbeat ``QTimer`` on the GUI thread sees every gap in its event loop — including the
ones a loaded machine causes by not scheduling the process at all (74 ms on a 2-core box
running another test suite: issue 25, item 13). So beside it runs a *control*: a separate
process that wakes every few milliseconds and notes the time. A gap of the GUI heartbeat is
charged to the code under test only for the part the control did not lose at the same moment
(``CLOCK_MONOTONIC`` is one clock for every process). The absolute figures belong to the
benchmark (bench/bench_app.py); a test asserts the part the app itself caused.
"""

from __future__ import annotations

import subprocess
import sys
import time
from bisect import bisect_right

from PySide6.QtCore import QObject, QTimer

#: the heartbeat and the control wake at this interval (ms)
INTERVAL_MS = 5

_CONTROL = f"""
import select, sys, time
stamps = []
while True:
    ready, _, _ = select.select([sys.stdin], [], [], {INTERVAL_MS / 1000})
    stamps.append(time.monotonic())
    if ready:
        break
sys.stdout.write("\\n".join(repr(s) for s in stamps))
"""


class StallWitness(QObject):
    """``start()``, let the GUI work, ``stop()``; then ``worst_ms`` (the longest GUI gap) and
    ``own_worst_ms`` (the longest part of a GUI gap the control process did not share)."""

    def __init__(self, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__()
        self.interval = interval_ms / 1000
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._on_timeout)
        self.beats: list[float] = []
        self.control: list[float] = []
        self._process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-c", _CONTROL],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(0.2)  # the control is beating before the GUI's first gap
        self.beats = [time.monotonic()]
        self.timer.start()

    def stop(self) -> None:
        """Stop both heartbeats (idempotent)."""
        if self._process is None:
            return
        self.timer.stop()
        self.beats.append(time.monotonic())
        if self._process is not None:
            out, _ = self._process.communicate("x", timeout=30)
            self.control = [float(line) for line in out.split()]
            self._process = None

    def _on_timeout(self) -> None:
        self.beats.append(time.monotonic())

    @property
    def gaps_ms(self) -> list[float]:
        return [(b - a) * 1000 for a, b in zip(self.beats, self.beats[1:], strict=False)]

    @property
    def worst_ms(self) -> float:
        return max(self.gaps_ms, default=0.0)

    def _machine_lost(self, start: float, end: float) -> float:
        """Seconds of ``[start, end]`` the control lost too (beyond its own interval)."""
        stamps = self.control
        if len(stamps) < 2:
            return 0.0
        lost = 0.0
        first = max(0, bisect_right(stamps, start) - 1)
        for a, b in zip(stamps[first:], stamps[first + 1 :], strict=False):
            if a >= end:
                break
            overlap = min(b, end) - max(a, start)
            lost += max(0.0, min(overlap, (b - a) - self.interval))
        return lost

    @property
    def own_worst_ms(self) -> float:
        """The longest GUI gap less what the machine took from every process at that time."""
        worst = 0.0
        for a, b in zip(self.beats, self.beats[1:], strict=False):
            if (b - a) <= self.interval * 2:
                continue
            worst = max(worst, (b - a) - self._machine_lost(a, b))
        return worst * 1000
