"""The multi-agent tab's work off the GUI thread: what each job reads, and what it answers.

Each ``*_job`` returns a plain ``job(progress, emit)`` for :meth:`WorkerPool.start`; its answer
is a small value the controller (``tab.py``) hands to the state. No Qt here: a job only ever
touches the service (built on first use, inside the job) and the files it was given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.multiagent import (
    SESSION_FINISHED,
    CollectionStatus,
    Hit,
    LiveTicket,
    MultiAgentService,
    RunState,
    Session,
    SessionBusyError,
    Tags,
)
from backends.progress import Progress
from backends.services import Lazy

Emit = Callable[[object], None]
Job = Callable[[Progress, Emit], Any]

SESSION_LIMIT = 200
#: memory hits fetched per search (those under the recall threshold are then hidden)
MEMORY_SEARCH_LIMIT = 8
#: how long the feed worker waits per poll: it notices cancellation within this time
FEED_POLL_SECONDS = 0.2
#: the feed job's first item: it is subscribed (a run may start)
SUBSCRIBED = "_subscribed"


@dataclass(frozen=True)
class Refused:
    """A run job's answer when the session was already running (here or elsewhere)."""

    message: str


@dataclass(frozen=True)
class Listing:
    """A listing of the sessions, numbered (a late one of another filter is dropped)."""

    serial: int
    sessions: list[Session]
    health: dict[str, str]
    states: dict[str, RunState]


@dataclass(frozen=True)
class Loaded:
    """One session as read (None: in no reachable store), its tickets and run state."""

    session: Session | None
    tickets: list[LiveTicket]
    health: dict[str, str]
    states: dict[str, RunState]


@dataclass(frozen=True)
class FinalState:
    """What the tab needs once a run ended: the session, and the list as it is now."""

    session: Session | None
    tickets: list[LiveTicket]
    health: dict[str, str]
    #: the list, read after the run ended, with the filter it was read with
    serial: int
    filter: Tags
    sessions: list[Session]
    states: dict[str, RunState]


@dataclass(frozen=True)
class MemoryAnswer:
    """The memory's collections (or why it cannot be read), and the stores' health."""

    status: list[CollectionStatus] | str
    health: dict[str, str]


def list_job(service: Lazy[MultiAgentService], serial: int, tags: Tags) -> Job:
    def job(progress: Progress, emit: Emit) -> Listing:
        ma = service.get()
        sessions = ma.list_sessions(tags.phase_or_none, SESSION_LIMIT)
        return Listing(serial, sessions, ma.health(), ma.run_states(sessions))

    return job


def load_job(service: Lazy[MultiAgentService], session_id: str) -> Job:
    def job(progress: Progress, emit: Emit) -> Loaded:
        ma = service.get()
        session = ma.session(session_id)
        return Loaded(
            session,
            ma.live_tickets(session_id),
            ma.health(),
            ma.run_states([session] if session is not None else []),
        )

    return job


def final_job(service: Lazy[MultiAgentService], session_id: str, serial: int, tags: Tags) -> Job:
    """The session a run ended, read with the list (so both show its final phase)."""

    def job(progress: Progress, emit: Emit) -> FinalState:
        ma = service.get()
        session = ma.session(session_id)
        sessions = ma.list_sessions(tags.phase_or_none, SESSION_LIMIT)
        listed = {s.session_id for s in sessions}
        extra = [session] if session is not None and session_id not in listed else []
        return FinalState(
            session=session,
            tickets=ma.live_tickets(session_id),
            health=ma.health(),
            serial=serial,
            filter=tags,
            sessions=sessions,
            states=ma.run_states(sessions + extra),
        )

    return job


def tickets_job(service: Lazy[MultiAgentService], session_id: str) -> Job:
    def job(progress: Progress, emit: Emit) -> tuple[str, list[LiveTicket]]:
        return session_id, service.get().live_tickets(session_id)

    return job


def memory_status_job(service: Lazy[MultiAgentService]) -> Job:
    def job(progress: Progress, emit: Emit) -> MemoryAnswer:
        ma = service.get()
        try:
            return MemoryAnswer(ma.memory_status(), ma.health())
        except StoreUnavailableError as err:
            ma.memory_failed(err)
            return MemoryAnswer(str(err), ma.health())

    return job


def index_job(service: Lazy[MultiAgentService]) -> Job:
    """Build the memory's search index (HNSW) when it is big enough; how many were built."""

    def job(progress: Progress, emit: Emit) -> int:
        ma = service.get()
        if not ma.memory_needs_index():
            return 0
        return int(ma.index_memory(progress))

    return job


def search_job(service: Lazy[MultiAgentService], query: str) -> Job:
    def job(progress: Progress, emit: Emit) -> tuple[float, list[Hit]]:
        ma = service.get()
        # The experts' own recall threshold: what they would not use is not shown either.
        return ma.recall_floor, ma.search_memory(query, limit=MEMORY_SEARCH_LIMIT)

    return job


def reembed_job(service: Lazy[MultiAgentService]) -> Job:
    def job(progress: Progress, emit: Emit) -> Any:
        return service.get().reembed(progress)

    return job


def start_job(service: Lazy[MultiAgentService], task: str) -> Job:
    def job(progress: Progress, emit: Emit) -> Session:
        return service.get().start(task)

    return job


def feed_job(service: Lazy[MultiAgentService], session_id: str) -> Job:
    """Subscribe to the session's feed, say so (:data:`SUBSCRIBED`), then pass each event
    on until the session finishes or the job is cancelled."""

    def job(progress: Progress, emit: Emit) -> None:
        subscription = service.get().subscribe(session_id)
        try:
            emit({"kind": SUBSCRIBED, "session": session_id})
            while not progress.cancelled:
                event = subscription.get(timeout=FEED_POLL_SECONDS)
                if event is None:
                    continue
                emit(event)
                if event.get("kind") == SESSION_FINISHED:
                    return
        finally:
            subscription.close()

    return job


def run_job(service: Lazy[MultiAgentService], session_id: str) -> Job:
    """Run (or resume) the session; its events come through the job when the bus failed."""

    def job(progress: Progress, emit: Emit) -> Any:
        ma = service.get()

        def fallback(event: dict[str, Any]) -> None:
            if not ma.feed_ok():  # the bus failed: deliver through the job instead
                emit(event)

        try:
            return ma.run(session_id, progress, on_event=fallback)
        except SessionBusyError as err:  # another process (or run) has it: untouched
            return Refused(str(err))

    return job


def export_job(target: Path, text: str) -> Job:
    def job(progress: Progress, emit: Emit) -> str:
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as err:
            raise CustodiaEnvironmentError(f"could not write {target}: {err}") from err
        return str(target)

    return job
