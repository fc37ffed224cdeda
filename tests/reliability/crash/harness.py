"""The parent side of the kill -9 loops: drive the zygote, fold acks, count kills.

:func:`crash_loop` runs one scenario ``kills`` times: each iteration forks a child (through
the zygote, so no interpreter start-up), lets it check the data dir against every write
acknowledged so far, kills it with SIGKILL at a random moment while it writes (or, one time
in ten, while it is still starting up and recovering), and folds the child's ``intent`` and
``ack`` lines into the :class:`~.ledger.Ledger`. A last run only checks. Any violation or
error a child reports fails the loop with the child's own message.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.reliability.crash.ledger import Ledger
from tests.reliability.crash.scenarios import BROKEN, SCENARIOS, SERVER_SCENARIOS

ROOT = Path(__file__).resolve().parents[3]
LINE_TIMEOUT = 90.0
#: share of kills that land before the child said ``ready`` (start-up, recovery, checks)
EARLY_KILLS = 0.1


class HarnessError(AssertionError):
    """The child reported a violation or an error, or the zygote stopped answering."""


@dataclass
class CrashFigures:
    scenario: str
    kills: int = 0
    kills_during_startup: int = 0
    checks_passed: int = 0
    acknowledged_writes: int = 0
    writes_in_flight_at_kill: int = 0
    seconds: float = 0.0
    iteration_seconds: list[float] = field(default_factory=list)
    #: per iteration, the ``info`` values its child reported (merged), for the tests to read
    infos: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("infos")
        times = sorted(out.pop("iteration_seconds"))
        out["median_iteration_seconds"] = round(times[len(times) // 2], 3) if times else 0.0
        out["seconds"] = round(self.seconds, 1)
        return out


class Zygote:
    """``python -m tests.reliability.crash.zygote``: one per loop, its stderr in a log file."""

    def __init__(self, workdir: Path) -> None:
        self.log_path = workdir / "zygote.log"
        env = dict(os.environ)
        env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1")
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.crash.zygote"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self._buffer = b""
        hello = self.read()
        if "zygote" not in hello:
            raise HarnessError(f"zygote did not start: {hello}\n{self.log_tail()}")
        self.import_seconds = float(hello["import_seconds"])

    def log_tail(self, lines: int = 30) -> str:
        self._log.flush()
        text = self.log_path.read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def read(self) -> dict[str, Any]:
        """The next protocol line (JSON), waiting at most ``LINE_TIMEOUT`` seconds."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + LINE_TIMEOUT
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            readable, _, _ = select.select([fd], [], [], max(0.0, left))
            if not readable:
                raise HarnessError(f"no answer from the zygote for {LINE_TIMEOUT:.0f} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise HarnessError(f"the zygote died:\n{self.log_tail()}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        result: dict[str, Any] = json.loads(line)
        return result

    def run(self, command: dict[str, Any]) -> list[dict[str, Any]]:
        """Send one command; return every line up to and including ``exited``."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode("utf-8"))
        self.proc.stdin.flush()
        lines = []
        while True:
            line = self.read()
            lines.append(line)
            if "exited" in line:
                return lines

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


def crash_loop(
    scenario: str,
    workdir: Path,
    kills: int,
    seed: int = 0,
    zygote: Zygote | None = None,
    extra: dict[str, Any] | None = None,
) -> CrashFigures:
    """Kill ``scenario`` ``kills`` times, then check once more; return the figures.

    ``zygote``: a running one to reuse (its imports are paid once for several loops);
    ``extra``: more fields for the scenario (server URLs), in every command.
    """
    spec = SCENARIOS.get(scenario) or SERVER_SCENARIOS.get(scenario) or BROKEN[scenario]
    home = workdir / "home"
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    spec.prepare(home, **(extra or {}))
    ledger_path = workdir / "ledger.json"
    ledger = Ledger()
    ledger.save(ledger_path)
    rng = random.Random(seed)
    figures = CrashFigures(scenario)
    startup = 0.1  # seconds a child takes to open and check; measured as the loop runs
    started = time.monotonic()
    own = zygote is None
    if zygote is None:
        zygote = Zygote(workdir)
    try:
        for iteration in range(kills + 1):
            last = iteration == kills
            early = not last and rng.random() < EARLY_KILLS
            if last:
                kill_after = 0.0
            elif early:
                kill_after = rng.uniform(0.0, startup)
            else:
                kill_after = rng.uniform(*spec.kill_window)
            command = {
                "scenario": scenario,
                "home": str(home),
                "ledger": str(ledger_path),
                "seed": rng.randrange(2**31),
                "base": (iteration + 1) * 10**9,
                "kill_after": kill_after,
                "before_ready": early,
                **(extra or {}),
            }
            lines = zygote.run(command)
            exited = lines[-1]
            if exited.get("ready_seconds"):
                startup = float(exited["ready_seconds"])
            for line in lines:
                if "violation" in line:
                    raise HarnessError(
                        f"{scenario}: after {figures.kills} kills: {line['violation']}"
                    )
                if "error" in line:
                    raise HarnessError(
                        f"{scenario}: the child failed after {figures.kills} kills:\n"
                        f"{line['error']}\n{zygote.log_tail()}"
                    )
                if "intent" in line:
                    ledger.intent(line["intent"], line["state"])
                elif "ack" in line:
                    ledger.ack(line["ack"], line["state"])
            info: dict[str, Any] = {"early": early, "last": last}
            for line in lines:
                info.update(line.get("info") or {})
            figures.infos.append(info)
            ready = any(line.get("ready") for line in lines)
            if ready:
                figures.checks_passed += 1
            if last:
                if not ready:
                    raise HarnessError(f"{scenario}: the final check did not finish: {lines}")
                break
            if exited.get("signal") not in (None, signal.SIGKILL):
                raise HarnessError(
                    f"{scenario}: after {figures.kills} kills the restarted child died of "
                    f"signal {exited['signal']} (a crash, not our kill): {exited}\n"
                    f"{zygote.log_tail()}"
                )
            if not exited["killed"]:
                raise HarnessError(f"{scenario}: the child was not killed: {exited}")
            if not early and not ready:
                raise HarnessError(f"{scenario}: the child never got ready: {lines}")
            figures.kills += 1
            figures.kills_during_startup += not ready
            figures.writes_in_flight_at_kill += _in_flight(lines)
            figures.iteration_seconds.append(float(exited["seconds"]))
            ledger.save(ledger_path)
    finally:
        if own:
            zygote.close()
    figures.acknowledged_writes = ledger.acks
    figures.seconds = time.monotonic() - started
    return figures


def _in_flight(lines: list[dict[str, Any]]) -> int:
    """1 when the child died between an intent and its ack (a write in flight), else 0."""
    last = None
    for line in lines:
        if "intent" in line or "ack" in line:
            last = line
    return int(last is not None and "intent" in last)
