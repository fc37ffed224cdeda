"""Headless multi-agent commands.

* ``custodia ask multiagent "TASK"`` — runs a session to its end, printing each feed event as
  a line and the session id (``--resume ID`` continues an unfinished session);
* ``custodia sessions [--phase P]`` — lists sessions, newest first (``--health`` adds the
  state of every layer).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from backends.errors import CancelledError
from backends.multiagent.service import get_service, healthy
from backends.multiagent.sessions import PHASES
from backends.progress import Progress
from backends.services import Services


def format_event(event: dict[str, Any]) -> str:
    """One feed event as one terminal line (newlines in the text folded)."""
    stamp = time.strftime("%H:%M:%S", time.localtime(float(event.get("ts", 0.0))))
    who = f" {event['expert']}" if event.get("expert") else ""
    text = " ⏎ ".join(line for line in str(event.get("text", "")).splitlines() if line.strip())
    seq, phase, kind = event.get("seq", 0), event.get("phase", ""), event.get("kind", "")
    return f"{stamp} #{seq:<3} [{phase}]{who} {kind}: {text}"


def _cmd_ask(args: argparse.Namespace, services: Services) -> int:
    service = get_service(services)
    if args.resume:
        session = service.session(args.resume)
        if session is None:
            print(f"custodia: no session {args.resume}", file=sys.stderr)
            return 1
    else:
        task = " ".join(args.task).strip()
        if not task:
            print("custodia: give a task, or --resume SESSION_ID", file=sys.stderr)
            return 2
        session = service.start(task)
    print(f"session: {session.session_id}", flush=True)
    progress = Progress()

    def show(event: dict[str, Any]) -> None:
        print(format_event(event), flush=True)

    try:
        final = service.run(session.session_id, progress, on_event=show)
    except KeyboardInterrupt:
        # Ctrl-C while the model streams: record the cancel so the session can be resumed.
        progress.cancel()
        stopped = service.session(session.session_id)
        if stopped is not None and stopped.phase not in ("done", "failed", "cancelled"):
            stopped.phase = "cancelled"
            service.sessions.save(stopped)
        print(f"session: {session.session_id} cancelled (resume with --resume)", file=sys.stderr)
        return 130
    except CancelledError:
        return 130
    finally:
        _warn_degraded(service.health())
    print(f"session: {final.session_id} {final.phase}", flush=True)
    return 0 if final.phase == "done" else 1


def _warn_degraded(health: dict[str, str]) -> None:
    for layer, status in health.items():
        if status.startswith("degraded"):
            print(f"custodia: warning: {layer} {status}", file=sys.stderr)


def _cmd_sessions(args: argparse.Namespace, services: Services) -> int:
    service = get_service(services)
    sessions = service.list_sessions(phase=args.phase, limit=args.limit)
    if args.json:
        rows = [
            {
                "session_id": s.session_id,
                "created_at": s.created_at,
                "updated_at": s.updated_at,
                "phase": s.phase,
                "model": s.model,
                "task": s.task,
            }
            for s in sessions
        ]
        out: dict[str, Any] = {"sessions": rows}
        if args.health:
            out["health"] = service.probe()
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for s in sessions:
            created = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.created_at))
            task = s.task.replace("\n", " ")
            task = task if len(task) <= 60 else task[:59] + "…"
            print(f"{s.session_id}  {created}  {s.phase:<9}  {s.model or '-':<22}  {task}")
        if not sessions:
            print("no sessions" + (f" in phase {args.phase}" if args.phase else ""))
        if args.health:
            for layer, status in service.probe().items():
                print(f"[{'ok' if status == 'ok' else 'FAIL':>4}] {layer}: {status}")
    if args.health and not healthy(service.health()):
        return 1
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from backends.cli import ask_subparsers

    p = ask_subparsers(sub).add_parser(
        "multiagent", help="run a task through the multi-agent team, printing the live feed"
    )
    p.add_argument("task", nargs="*", help="what the team should do")
    p.add_argument("--resume", metavar="SESSION_ID", help="continue an unfinished session")
    p.set_defaults(handler=_cmd_ask)

    p = sub.add_parser("sessions", help="list multi-agent sessions, newest first")
    p.add_argument("--phase", choices=PHASES, help="only sessions in this phase")
    p.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--health", action="store_true", help="also check every layer (exit 1 when degraded)"
    )
    p.set_defaults(handler=_cmd_sessions)
