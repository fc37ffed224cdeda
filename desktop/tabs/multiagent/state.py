"""What the multi-agent tab knows, without Qt: the model its panels observe.

napari's ``ViewerModel`` / ``QtViewer`` split: :class:`MultiAgentState` holds the session
shown, the run going on, the list's filter and run states, the tickets, the stores' health,
the result, the memory's status and the last memory search — and the rules that follow from
them (one run at a time, which session a button acts on, an event drawn once). It tells what
changed through :class:`Event` callbacks; the Qt panels subscribe and draw. The tab's
controller (``tab.py``) runs the jobs and feeds their answers in.

Nothing here imports PySide6: the state is tested without a QApplication.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Generic, ParamSpec

from backends import i18n
from backends.multiagent import (
    SESSION_FINISHED,
    Hit,
    LiveTicket,
    RunState,
    Session,
    Tags,
    assemble_result,
)

P = ParamSpec("P")


class Event(Generic[P]):
    """A list of callbacks told, in order, whenever :meth:`emit` is called."""

    def __init__(self) -> None:
        self._callbacks: list[Callable[P, object]] = []

    def connect(self, callback: Callable[P, object]) -> None:
        self._callbacks.append(callback)

    def disconnect(self, callback: Callable[P, object]) -> None:
        self._callbacks.remove(callback)

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for callback in list(self._callbacks):
            callback(*args, **kwargs)


@dataclass(frozen=True)
class Bar:
    """The run's (or the re-embedding's) progress bar: ``maximum`` 0 is "busy"."""

    visible: bool = False
    maximum: int = 0
    value: int = 0
    tip: str = ""


@dataclass(frozen=True)
class MemoryStatus:
    """The line under the memory search, and whether it offers to re-embed."""

    text: str = ""
    problem: bool = False
    offer_reembed: bool = False


@dataclass(frozen=True)
class MemorySearch:
    """A memory search: on its way (``searching``), or its hits and the recall threshold."""

    query: str
    searching: bool = True
    floor: float = 0.0
    hits: tuple[Hit, ...] = ()

    @property
    def shown(self) -> tuple[Hit, ...]:
        """The hits the experts would use too (at or above their recall threshold)."""
        return tuple(hit for hit in self.hits if hit.score >= self.floor)

    @property
    def hidden(self) -> int:
        return len(self.hits) - len(self.shown)


@dataclass(frozen=True)
class Notice:
    """A note about a session that is not shown (``session_id`` "": a plain note)."""

    session_id: str = ""
    text: str = ""


def result_of(session: Session) -> str:
    """The result pane's Markdown: the stored result when it is in the language shown (the
    one the run spoke; English before there was a Spanish Custodia), else what is done
    assembled again ("" before any step has a result)."""
    data = session.data
    has_work = "review" in data or any(s.get("result") is not None for s in data.get("steps") or [])
    if not has_work:
        return ""
    stored = str(data.get("result") or "")
    if stored and data.get("result_language", i18n.DEFAULT) == i18n.current():
        return stored
    return assemble_result(session)


@dataclass(eq=False)
class MultiAgentState:
    """Everything the tab knows; each change is told through the events below."""

    #: the session list was read once: Run and Resume may act
    ready: bool = False
    #: the session shown
    current: Session | None = None
    #: the session the user asked to see last (shown, or being loaded)
    wanted: str = ""
    #: the highest event sequence number drawn in the feed
    seen_seq: int = 0
    #: the session the run job runs
    running_id: str | None = None
    #: the task of the session running (or about to run), for the Cancel tooltip
    running_task: str = ""
    #: a new session is being created (Run or Enter pressed, no session yet)
    starting: bool = False
    #: the session whose run starts once its feed is subscribed
    pending_run: str | None = None
    #: a run job is on, and whether it was asked to stop
    running: bool = False
    run_cancelled: bool = False
    #: the run job answered that another process runs the session
    refused: bool = False
    #: a re-embedding job is on
    reembedding: bool = False
    #: live events of the running session by seq, also while another session is shown
    live: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: sessions running here or elsewhere, or interrupted (from the backend)
    states: dict[str, RunState] = field(default_factory=dict)
    #: the list's filter, and the number of the latest listing asked for
    filter: Tags = field(default_factory=Tags)
    list_serial: int = 0
    health: dict[str, str] = field(default_factory=dict)
    tickets: list[LiveTicket] = field(default_factory=list)
    error: str = ""
    notice: Notice = field(default_factory=Notice)
    bar: Bar = field(default_factory=Bar)
    memory_status: MemoryStatus = field(default_factory=MemoryStatus)
    memory_search: MemorySearch | None = None
    #: the result pane's session and its Markdown (Copy and Export use it)
    result_markdown: str = ""
    result_session: str = ""

    def __post_init__(self) -> None:
        #: what Run, Cancel and Resume may do changed
        self.buttons_changed: Event[[]] = Event()
        #: the phase line: the session shown (None: none)
        self.phase_changed: Event[[Session | None]] = Event()
        #: a listing arrived: the rows, newest first
        self.sessions_listed: Event[[list[Session]]] = Event()
        #: a listed session's phase moved on (live): its id and tags
        self.listed_tags_changed: Event[[str, Tags]] = Event()
        #: another session is about to be drawn: the feed starts again
        self.feed_reset: Event[[Session]] = Event()
        #: a session is being loaded (True) or could not be (False)
        self.loading_changed: Event[[bool]] = Event()
        #: a feed event, new to the feed
        self.event_drawn: Event[[dict[str, Any]]] = Event()
        #: the session shown was drawn (its result and what was verified)
        self.session_shown: Event[[Session]] = Event()
        self.tickets_changed: Event[[list[LiveTicket]]] = Event()
        self.health_changed: Event[[dict[str, str]]] = Event()
        self.error_changed: Event[[str]] = Event()
        self.notice_changed: Event[[Notice]] = Event()
        self.bar_changed: Event[[Bar]] = Event()
        self.memory_status_changed: Event[[MemoryStatus]] = Event()
        self.memory_search_changed: Event[[MemorySearch | None]] = Event()

    # -- what follows from the state ------------------------------------------------------
    def busy(self) -> bool:
        """A run is being started (session created, feed subscribing) or running."""
        return self.starting or self.pending_run is not None or self.running

    def is_ours(self, session_id: str) -> bool:
        """This tab runs ``session_id`` or is about to."""
        return session_id in (self.running_id, self.pending_run)

    def run_is_shown(self) -> bool:
        return self.current is not None and self.current.session_id == self.running_id

    def is_shown(self, session_id: str) -> bool:
        return self.current is not None and self.current.session_id == session_id

    def tags_of(self, session: Session) -> Tags:
        """``session``'s tags as listed: a run of ours is neither interrupted nor elsewhere."""
        if self.is_ours(session.session_id):
            return Tags.of(session)
        return Tags.of(session, self.states.get(session.session_id))

    def can_resume(self) -> bool:
        """Resume acts on the session shown: unfinished, and nobody runs it."""
        current = self.current
        if not self.ready or self.busy() or current is None or not current.resumable:
            return False
        state = self.states.get(current.session_id)
        return state is None or state.kind == "interrupted"

    # -- the list -------------------------------------------------------------------------
    def next_listing(self) -> int:
        """A listing is asked for: listings asked earlier are stale from now on."""
        self.list_serial += 1
        return self.list_serial

    def opened(self, sessions: list[Session], states: dict[str, RunState]) -> None:
        self.ready = True
        self.show_listing(sessions, states)
        self.buttons_changed.emit()

    def listed(self, serial: int, sessions: list[Session], states: dict[str, RunState]) -> bool:
        """A listing arrived; False (and nothing changed) when a newer one was asked for."""
        if serial != self.list_serial:
            return False
        self.show_listing(sessions, states)
        return True

    def show_listing(self, sessions: list[Session], states: dict[str, RunState]) -> None:
        """The list as read, with the run states read with it."""
        self.states = dict(states)
        self.sessions_listed.emit(sessions)

    def merge_states(self, session: Session, states: dict[str, RunState]) -> None:
        """``session``'s run state as just read (absent: it has none)."""
        self.states.pop(session.session_id, None)
        if session.session_id in states:
            self.states[session.session_id] = states[session.session_id]

    # -- the session shown ----------------------------------------------------------------
    def load(self, session_id: str) -> None:
        """The user asked for ``session_id``; its reading is on its way."""
        self.wanted = session_id
        if not self.is_shown(session_id):
            self.loading_changed.emit(True)

    def show_session(self, session: Session) -> bool:
        """Draw ``session``; the feed is drawn again only when another session is shown.
        True when an event drawn live since it was read was a ticket (read them again)."""
        if not self.is_shown(session.session_id):
            self.seen_seq = 0
            self.feed_reset.emit(session)
        self.current = session
        self.wanted = session.session_id
        for event in session.events:
            self.draw(event)
        tickets = False
        if session.session_id == self.running_id:
            # Back to the running session: what arrived live after it was read, in order.
            for seq in sorted(self.live):
                tickets = self.apply_event(session, self.live[seq]) or tickets
        if self.notice.session_id == session.session_id:
            self.set_notice(Notice())
        self.phase_changed.emit(session)
        self.result_session = session.session_id
        self.result_markdown = result_of(session)
        self.session_shown.emit(session)
        return tickets

    def draw(self, event: dict[str, Any]) -> bool:
        """Tell the feed about ``event`` unless it was drawn already; True when it was new."""
        seq = int(event.get("seq", 0))
        if seq <= self.seen_seq:
            return False  # already drawn (live, then again in the final session)
        self.seen_seq = seq
        self.event_drawn.emit(event)
        return True

    def live_event(self, event: dict[str, Any]) -> bool:
        """An event of a running session arrived; True when the tickets must be read again."""
        seq = int(event.get("seq", 0))
        if seq and event.get("session") == self.running_id:
            self.live[seq] = event  # kept while another session is shown
        if event.get("kind") in ("phase", SESSION_FINISHED):
            phase = str(event.get("outcome") or event.get("text") or "")
            status = str(event.get("verification") or "")
            self.listed_tags_changed.emit(str(event.get("session", "")), Tags(phase, status))
        current = self.current
        if current is None or event.get("session") != current.session_id:
            return False
        return self.apply_event(current, event)

    def apply_event(self, session: Session, event: dict[str, Any]) -> bool:
        """Draw a live event of the session shown and follow its phase; True for a ticket."""
        if not self.draw(event):
            return False
        session.events.append(event)
        kind = event.get("kind")
        if kind == SESSION_FINISHED and event.get("verification"):
            # the final record comes with the final session; the badge is right already
            session.data["verification"] = {"status": event["verification"]}
        if kind == "phase" or kind == SESSION_FINISHED:
            session.phase = str(event.get("outcome") or event.get("text") or session.phase)
            self.phase_changed.emit(session)
        return kind == "ticket"

    # -- the run --------------------------------------------------------------------------
    def run_started(self, session_id: str) -> None:
        self.pending_run = None
        self.running_id = session_id
        self.live = {}
        self.running = True
        self.run_cancelled = False
        self.refused = False

    def run_ended(self) -> str | None:
        """The run job ended: the session it ran (None: it never had one)."""
        session_id = self.running_id
        self.running = False
        self.run_cancelled = False
        self.running_id = None
        self.live = {}
        return session_id

    # -- what the panels show -------------------------------------------------------------
    def set_error(self, message: str) -> None:
        self.error = message
        self.error_changed.emit(message)

    def set_notice(self, notice: Notice) -> None:
        self.notice = notice
        self.notice_changed.emit(notice)

    def set_health(self, health: dict[str, str]) -> None:
        self.health = dict(health)
        self.health_changed.emit(self.health)

    def set_tickets(self, tickets: list[LiveTicket]) -> None:
        self.tickets = list(tickets)
        self.tickets_changed.emit(self.tickets)

    def set_bar(self, **changes: Any) -> None:
        """Change the progress bar (``visible``, ``maximum``, ``value``, ``tip``)."""
        self.bar = replace(self.bar, **changes)
        self.bar_changed.emit(self.bar)

    def set_memory_status(self, status: MemoryStatus) -> None:
        self.memory_status = status
        self.memory_status_changed.emit(status)

    def set_reembedding(self, on: bool) -> None:
        """A re-embedding started or ended (the memory's status offers to cancel it)."""
        self.reembedding = on
        self.memory_status_changed.emit(self.memory_status)

    def set_memory_search(self, search: MemorySearch | None) -> None:
        self.memory_search = search
        self.memory_search_changed.emit(search)
