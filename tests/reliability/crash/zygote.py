"""Fork server for the kill -9 loops: pay interpreter and import start-up once, not 200 times.

``python -m tests.reliability.crash.zygote`` imports every backend a scenario uses (chromadb
and qdrant-client included), then reads one JSON command per line on stdin::

    {"scenario": "memories", "home": "...", "ledger": ".../ledger.json", "seed": 7,
     "base": 3000000, "kill_after": 0.083, "before_ready": false}

For each command it forks a child that runs the scenario (open the stores as the CLI does,
check them against the ledger of acknowledged writes, say ``ready``, then write in a loop,
printing an ``ack`` line after each durable write). The zygote — the child's parent, so no
pid can be reused under it — waits for ``ready`` (or not, with ``before_ready``: the kill
then lands during start-up and recovery), sleeps ``kill_after`` seconds, sends SIGKILL,
reaps the child and prints ``{"exited": ...}``. The child's lines and the zygote's share one
pipe; the zygote writes only after the child is dead, so ``exited`` is always last.

The zygote never opens a store itself: a forked child starts from a clean slate, as a
restarted process would (no threads, no open files, no caches).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
import traceback

# Before numpy is imported: no BLAS thread pool to inherit through fork().
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

READY_TIMEOUT = 60.0


def _write(fd: int, obj: object) -> None:
    os.write(fd, (json.dumps(obj) + "\n").encode("utf-8"))


def _child(command: dict[str, object], proto: int, ready_w: int) -> None:
    """Runs in the forked child; never returns."""
    from tests.reliability.crash import scenarios

    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        name = str(command["scenario"])
        scenario = (
            scenarios.SCENARIOS.get(name)
            or scenarios.SERVER_SCENARIOS.get(name)
            or scenarios.BROKEN[name]
        )

        def ready() -> None:
            _write(proto, {"ready": True})
            os.write(ready_w, b"r")

        channel = scenarios.Channel(proto, ready)
        scenario.child(command, channel)
        _write(proto, {"finished": True})
    except scenarios.Violation as err:
        _write(proto, {"violation": str(err)})
        code = 3
    except BaseException:
        _write(proto, {"error": traceback.format_exc()})
        code = 2
    os._exit(code)


def _call(command: dict[str, object]) -> dict[str, object]:
    """Fork a child that runs ``module:function(**kwargs)`` and exits with its result (an
    int); report how it ended — its exit code, or the signal that killed it (a crash)."""
    import importlib

    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            module, _, function = str(command["call"]).partition(":")
            code = int(getattr(importlib.import_module(module), function)(**command["kwargs"]))
        except BaseException:
            traceback.print_exc()
        os._exit(code)
    deadline = started + float(command.get("timeout", 60))  # type: ignore[arg-type]
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            return {"exited": pid, "hung": True, "code": None, "signal": None}
        time.sleep(0.01)
    return {
        "exited": pid,
        "hung": False,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "seconds": round(time.monotonic() - started, 4),
    }


def _run(command: dict[str, object], proto: int) -> dict[str, object]:
    if "call" in command:
        return _call(command)
    ready_r, ready_w = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(ready_r)
        _child(command, proto, ready_w)
    os.close(ready_w)
    ready = False
    ready_seconds = None
    if command.get("before_ready"):
        time.sleep(float(command["kill_after"]))  # type: ignore[arg-type]
    else:
        readable, _, _ = select.select([ready_r], [], [], READY_TIMEOUT)
        if readable and os.read(ready_r, 1) == b"r":
            ready = True
            ready_seconds = time.monotonic() - started
            time.sleep(float(command["kill_after"]))  # type: ignore[arg-type]
    os.close(ready_r)
    killed = True
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:  # pragma: no cover - the child is our zombie until reaped
        killed = False
    _, status = os.waitpid(pid, 0)
    signalled = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    return {
        "exited": pid,
        "killed": killed and signalled,
        "code": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "ready": ready,
        "ready_seconds": None if ready_seconds is None else round(ready_seconds, 4),
        "seconds": round(time.monotonic() - started, 4),
    }


def main() -> None:
    # The protocol gets its own descriptor; anything a library prints goes to stderr.
    proto = os.dup(1)
    os.dup2(2, 1)
    import logging

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    started = time.monotonic()
    from tests.reliability.crash import scenarios

    scenarios.preload()
    _write(proto, {"zygote": os.getpid(), "import_seconds": round(time.monotonic() - started, 3)})
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        _write(proto, _run(command, proto))


if __name__ == "__main__":
    main()
