"""Headless multi-agent commands.

* ``custodia ask multiagent "TASK"`` — runs a session to its end, printing each feed event as
  a line and the session id (``--resume ID`` continues an unfinished session; a session
  another live process is running is refused, exit 1). At the end it prints what was
  verified — each checked step's tests, passed or failed — and the session's status
  (``verified``, ``failed verification`` — exit 1 — or ``unverified draft``; never just
  "done"); ``--tests FILE`` attaches the user's own tests. The first Ctrl-C cancels cleanly
  (the session is saved ``cancelled``, resumable), a second one stops at once;
* ``custodia sessions [--phase P] [--limit N]`` — lists sessions, newest first, marking
  those running in another process and those a dead process left ``(interrupted)``
  (``--health`` adds the state of every layer); an unreadable sessions database is an
  error (exit 1), never an empty list;
* ``custodia reindex multiagent`` — re-embeds the semantic memory with the configured
  embedder (after a model change), with progress; Ctrl-C leaves it as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from backends.assistants import Context
from backends.commands import SubParsers, ask_subparsers, positive_int, reindex_subparsers
from backends.errors import CancelledError
from backends.i18n import _
from backends.multiagent.coordinator import RunState
from backends.multiagent.health import layer_text
from backends.multiagent.service import MultiAgentService, healthy
from backends.multiagent.summaries import translate as summary_text
from backends.multiagent.verify import FAILED, LABELS, label, session_summary, status_of
from backends.multiagent.words import (
    event_line_parts,
    expert_name,
    limit_text,
    network_name,
    outcome_name,
    run_state_text,
    state_label,
    status_label,
)
from backends.progress import Progress
from backends.stores.sessions import PHASES, Session


def format_event(event: dict[str, Any]) -> str:
    """One feed event as one terminal line (newlines in the text folded), its phase, expert
    and kind in the user's words (the stored event keeps its own)."""
    stamp = time.strftime("%H:%M:%S", time.localtime(float(event.get("ts", 0.0))))
    phase, expert, kind, text = event_line_parts(event)
    who = f" {expert}" if expert else ""
    text = " ⏎ ".join(line for line in text.splitlines() if line.strip())
    seq = event.get("seq", 0)
    return f"{stamp} #{seq:<3} [{phase}]{who} {kind}: {text}"


_MARKS = {"passed": "✓", "failed": "✗", "error": "⚠", "skipped": "-"}


def verification_lines(session: Session) -> list[str]:
    """What was verified, as the terminal shows it: each checked step, its tests and their
    outcome, the first lines of each failure."""
    record = session.data.get("verification")
    if session.phase != "done" or not isinstance(record, dict):
        return []
    lines = [
        _("verification: {label} — {summary}").format(
            label=_(LABELS[status_of(session.data)]), summary=session_summary(session.data)
        )
    ]
    for step in session.data.get("steps") or []:
        check = step.get("verification")
        if not isinstance(check, dict) or check.get("status") not in LABELS:
            continue
        attempts = check.get("attempts") or []
        if step.get("expert") != "coder" and not any(a.get("code_lines") for a in attempts):
            continue  # prose: nothing to check, the status line says so
        said = _("step {index} ({expert}): {label} — {summary}").format(
            index=step.get("index"),
            expert=expert_name(str(step.get("expert") or "")),
            label=status_label(str(check["status"])),
            summary=summary_text(str(check.get("summary", ""))),
        )
        if len(attempts) > 1:
            said = _("{line}, {count} attempts").format(line=said, count=len(attempts))
        lines.append("  " + said)
        last = attempts[-1] if attempts else {}
        if last.get("tests_from"):
            limits = last.get("limits") or {}
            ran = _("tests: {source}; sandbox: no network ({network}), {seconds} s, {mb} MB")
            lines.append(
                "    "
                + ran.format(
                    source=summary_text(str(last["tests_from"])),
                    network=network_name(str(last.get("network"))),
                    seconds=limit_text(limits.get("wall_seconds")),
                    mb=limit_text(limits.get("memory_mb")),
                )
            )
        for test in last.get("tests") or []:
            outcome = str(test.get("outcome"))
            mark = _MARKS.get(outcome, "?")
            word = outcome_name(outcome)
            lines.append(f"    {mark} {test.get('name')}  {word}")
            if test.get("outcome") != "passed":
                out = [x for x in str(test.get("output") or "").splitlines() if x.strip()]
                lines += [f"        {x}" for x in out[-4:]]
    return lines


def _service(context: Context) -> MultiAgentService:
    return context.get("multiagent", MultiAgentService)


@contextlib.contextmanager
def _sigint_cancels(progress: Progress, what: str) -> Iterator[None]:
    """While inside: the first Ctrl-C cancels ``progress`` (the work stops at its next check
    and records it itself), a second one raises KeyboardInterrupt at once."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if progress.cancelled:
            raise KeyboardInterrupt
        progress.cancel()
        print(
            _("custodia: cancelling {what}… (Ctrl-C again to stop at once)").format(what=what),
            file=sys.stderr,
        )

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _cmd_ask(args: argparse.Namespace, context: Context) -> int:
    if args.resume and " ".join(args.task).strip():
        print(_("custodia: give a task or --resume SESSION_ID, not both"), file=sys.stderr)
        return 2
    service = _service(context)
    if args.resume:
        session = service.session(args.resume)
        if session is None:
            print(_("custodia: no session {resume}").format(resume=args.resume), file=sys.stderr)
            return 1
    else:
        task = " ".join(args.task).strip()
        if not task:
            print(_("custodia: give a task, or --resume SESSION_ID"), file=sys.stderr)
            return 2
        tests = ""
        if args.tests:
            try:
                tests = Path(args.tests).read_text(encoding="utf-8")
            except OSError as err:
                print(_("custodia: cannot read the tests: {err}").format(err=err), file=sys.stderr)
                return 2
        session = service.start(task, tests)
    session_id = session.session_id
    print(_("session: {session_id}").format(session_id=session_id), flush=True)
    progress = Progress()

    def show(event: dict[str, Any]) -> None:
        print(format_event(event), flush=True)

    try:
        # A session another live process runs raises SessionRunningError here, before the
        # session is touched; backends.cli prints it and exits 1.
        with _sigint_cancels(progress, "the session"):
            final = service.run(session_id, progress, on_event=show)
    except CancelledError:
        # Saved as "cancelled" by the run itself, under its run lock.
        print(
            _("session: {session_id} cancelled (resume with --resume)").format(
                session_id=session_id
            ),
            file=sys.stderr,
        )
        return 130
    except KeyboardInterrupt:
        # Stopped at once: left in its phase, listed as interrupted, resumable.
        print(
            _("session: {session_id} interrupted (resume with --resume)").format(
                session_id=session_id
            ),
            file=sys.stderr,
        )
        return 130
    finally:
        _warn_degraded(service.health())
    for line in verification_lines(final):
        print(line, flush=True)
    print(
        _("session: {session_id} {label}").format(
            session_id=final.session_id, label=state_label(final.phase, final.data)
        ),
        flush=True,
    )
    if final.phase != "done" or status_of(final.data) == FAILED:
        return 1
    return 0


def _warn_degraded(health: dict[str, str]) -> None:
    for layer, status in health.items():
        if status.startswith("degraded"):
            print(
                "custodia: " + _("warning: {0}").format(layer_text(layer, status)),
                file=sys.stderr,
            )


def _phase_text(session: Session, states: dict[str, RunState]) -> str:
    """The phase, with what the tab shows too: "(interrupted)", "(running in another …)"."""
    state = states.get(session.session_id)
    shown = state_label(session.phase, session.data)
    return f"{shown} ({run_state_text(state.kind, state.pid)})" if state is not None else shown


def _cmd_sessions(args: argparse.Namespace, context: Context) -> int:
    service = _service(context)
    # durable: an unreadable database raises (exit 1) instead of looking like no history.
    sessions = service.list_sessions(phase=args.phase, limit=args.limit, durable=True)
    states = service.run_states(sessions)
    if args.json:
        rows = []
        for s in sessions:
            state = states.get(s.session_id)
            rows.append(
                {
                    "session_id": s.session_id,
                    "created_at": s.created_at,
                    "updated_at": s.updated_at,
                    "phase": s.phase,
                    "status": label(s.phase, s.data),
                    "state": state.kind if state is not None else None,
                    "pid": state.pid if state is not None else None,
                    "model": s.model,
                    "task": s.task,
                }
            )
        out: dict[str, Any] = {"sessions": rows}
        if args.health:
            out["health"] = service.probe()
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        phases = {s.session_id: _phase_text(s, states) for s in sessions}
        width = max([9, *(len(p) for p in phases.values())])
        for s in sessions:
            created = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.created_at))
            task = s.task.replace("\n", " ")
            task = task if len(task) <= 60 else task[:59] + "…"
            phase = phases[s.session_id]
            print(f"{s.session_id}  {created}  {phase:<{width}}  {s.model or '-':<22}  {task}")
        if not sessions:
            if args.phase:
                print(_("no sessions in phase {phase}").format(phase=args.phase))
            else:
                print(_("no sessions"))
        if args.health:
            for layer, status in service.probe().items():
                mark = _("ok") if status == "ok" else _("FAIL")
                print(f"[{mark:>4}] {layer_text(layer, status)}")
    if args.health and not healthy(service.health()):
        return 1
    return 0


def _cmd_reindex(args: argparse.Namespace, context: Context) -> int:
    service = _service(context)
    before = service.memory_status()  # opens the memory: a locked folder fails here (exit 1)
    embedder = service.memory().embedder
    points = sum(s.points for s in before)
    stale = [s for s in before if s.problem]
    now = f"{embedder.name} ({embedder.dimension}-d)"
    if stale:
        was = f"{stale[0].embedder} ({stale[0].dimension}-d)"
        print(
            _("re-embedding {points} item(s) of semantic memory: {was} → {now}").format(
                points=points, was=was, now=now
            ),
            file=sys.stderr,
        )
    else:
        print(
            _("re-embedding {points} item(s) of semantic memory with {now}").format(
                points=points, now=now
            ),
            file=sys.stderr,
        )
    end = "\r" if sys.stderr.isatty() else "\n"

    def report(done: int, total: int, message: str) -> None:
        print(f"{done}/{total} {message}", end=end, file=sys.stderr, flush=True)

    progress = Progress(callback=report)
    try:
        with _sigint_cancels(progress, "the re-embedding"):
            count = service.reembed(progress)
    except CancelledError:
        print(file=sys.stderr)
        print(
            _("custodia: re-embedding cancelled; the semantic memory is as it was"), file=sys.stderr
        )
        return 130
    except KeyboardInterrupt:  # a second Ctrl-C: stopped wherever it was
        print(file=sys.stderr)
        print(
            _(
                "custodia: re-embedding interrupted; the next open of the semantic memory "
                "finishes or undoes it"
            ),
            file=sys.stderr,
        )
        return 130
    if end == "\r":
        print(file=sys.stderr)
    print(
        _("Re-embedded {count} item(s) of semantic memory with {now}.").format(count=count, now=now)
    )
    needs = service.memory_needs_index()
    if needs:
        print(
            _("building the search index (HNSW) of {join}").format(join=", ".join(needs)),
            file=sys.stderr,
        )
        progress = Progress(callback=report)
        try:
            with _sigint_cancels(progress, "the index build"):
                built = service.index_memory(progress)
        except CancelledError:
            print(file=sys.stderr)
            print(_("custodia: index build cancelled; searches stay exact"), file=sys.stderr)
            return 0
        print(_("Indexed {built} collection(s) of semantic memory.").format(built=built))
    return 0


def add_commands(sub: SubParsers) -> None:
    p = ask_subparsers(sub).add_parser(
        "multiagent", help=_("run a task through the multi-agent team, printing the live feed")
    )
    p.add_argument("task", nargs="*", help=_("what the team should do"))
    p.add_argument(
        "--resume",
        metavar="SESSION_ID",
        help=_("continue an unfinished session (refused while another process runs it)"),
    )
    p.add_argument(
        "--tests",
        metavar="FILE",
        help=_(
            "your own Python tests for the team's code (run in the sandbox, never shown to "
            "the model)"
        ),
    )
    p.set_defaults(handler=_cmd_ask)

    p = sub.add_parser("sessions", help=_("list multi-agent sessions, newest first"))
    p.add_argument("--phase", choices=PHASES, help=_("only sessions in this phase"))
    p.add_argument(
        "--limit", type=positive_int, default=50, help=_("at most this many, ≥ 1 (default 50)")
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable output"))
    p.add_argument(
        "--health", action="store_true", help=_("also check every layer (exit 1 when degraded)")
    )
    p.set_defaults(handler=_cmd_sessions)

    p = reindex_subparsers(sub).add_parser(
        "multiagent",
        help=_(
            "re-embed the multi-agent semantic memory with the configured embedder "
            "(after a model change)"
        ),
    )
    p.set_defaults(handler=_cmd_reindex)
