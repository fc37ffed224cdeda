"""The multi-agent tab itself: it lays the panels out and runs the jobs.

The panels draw the state (:mod:`.state`); this controller turns what the user pressed into
jobs (:mod:`.jobs`, through the worker pool, each wired with ``connect=``) and hands their
answers to the state, which tells the panels. It alone holds the job handles (Qt objects):
Cancel stops the run, a run pauses the memory's index build, the window's close ends them.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QSplitter, QVBoxLayout, QWidget

from backends.errors import CustodiaEnvironmentError
from backends.multiagent import CollectionStatus, MultiAgentService, Session
from backends.services import Lazy, ModelChoices
from desktop import theme
from desktop.tabs.multiagent import jobs
from desktop.tabs.multiagent.feed_panel import FeedPanel
from desktop.tabs.multiagent.result_panel import ResultPanel
from desktop.tabs.multiagent.sessions_panel import SessionsPanel
from desktop.tabs.multiagent.side_panel import SidePanel
from desktop.tabs.multiagent.state import MemorySearch, MemoryStatus, MultiAgentState, Notice
from desktop.tabs.multiagent.status_panel import StatusPanel
from desktop.tabs.multiagent.task_bar import TaskBar
from desktop.tabs.multiagent.words import STYLE, short, state_name
from desktop.workers import JobHandle, WorkerPool

#: a theme switch reaches a widget as one of these
_PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


class MultiAgentTab(QWidget):
    """Sessions, live feed, tickets and memory of the multi-agent assistant."""

    #: a run ended and its final state is drawn: session id, final phase (for testers)
    session_finished = Signal(str, str)
    #: the session list was (re)loaded: number of rows
    sessions_loaded = Signal(int)
    #: a run was refused, nothing touched (another process runs it): session id, message
    run_refused = Signal(str, str)
    #: the result was written to this file
    result_exported = Signal(str)
    #: the semantic memory's search index (HNSW) was built: how many collections
    memory_indexed = Signal(int)

    def __init__(
        self,
        service: Lazy[MultiAgentService],
        models: ModelChoices | None,
        workers: WorkerPool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("multiagent")
        #: this tab's service, built on first use (only ever inside a worker job)
        self.service = service
        #: which model it answers with (none: no picker; it keeps the model it was built with)
        self.models = models
        self.workers = workers
        #: what the tab knows; the panels draw it
        self.state = MultiAgentState()
        self._run: JobHandle | None = None
        self._feed_job: JobHandle | None = None
        self._reembed: JobHandle | None = None
        #: the semantic memory's HNSW build (a background job; yields to a run)
        self._index: JobHandle | None = None
        self._tickets_busy = False
        self._tickets_again = False
        #: the theme's colours, shared with the panels (refreshed in place)
        self._colors: dict[str, str] = {}
        self._apply_style()
        self._build()
        self._connect_signals()
        self._open()

    # -- what tests and the window read ---------------------------------------------------
    @property
    def current(self) -> Session | None:
        """The session shown."""
        return self.state.current

    @property
    def result_markdown(self) -> str:
        """The result pane's Markdown (Copy and Export use it)."""
        return self.state.result_markdown

    @property
    def export_dialog(self) -> QFileDialog | None:
        return self.result_panel.export_dialog

    # -- construction ---------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        self.task_bar = TaskBar(self.state, self._colors, self.models, self.workers)
        self.model_picker = self.task_bar.model_picker
        layout.addWidget(self.task_bar)

        self.sessions_panel = SessionsPanel(self.state)
        self.feed_panel = FeedPanel(self.state, self._colors)
        self.result_panel = ResultPanel(self.state, self._colors)
        self.side_panel = SidePanel(self.state, self._colors)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setObjectName("multiagent_splitter")
        splitter.addWidget(self.sessions_panel)
        middle = QSplitter(Qt.Orientation.Vertical)
        middle.setObjectName("multiagent_result_splitter")
        middle.addWidget(self.feed_panel)
        middle.addWidget(self.result_panel)
        middle.setStretchFactor(0, 3)
        middle.setStretchFactor(1, 2)
        splitter.addWidget(middle)
        splitter.addWidget(self.side_panel)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 4)
        splitter.setStretchFactor(2, 3)
        layout.addWidget(splitter, 1)

        self.status_panel = StatusPanel(self.state, self._colors)
        layout.addWidget(self.status_panel)

    def _connect_signals(self) -> None:
        self.task_bar.run_requested.connect(self._on_run_requested)
        self.task_bar.cancel_requested.connect(self._on_cancel_requested)
        self.task_bar.resume_requested.connect(self._on_resume_requested)
        self.sessions_panel.refresh_requested.connect(self._on_refresh_requested)
        self.sessions_panel.session_picked.connect(self._on_session_picked)
        self.sessions_panel.sessions_loaded.connect(self.sessions_loaded)
        self.result_panel.export_requested.connect(self._on_export_requested)
        self.side_panel.search_requested.connect(self._on_search_requested)
        self.side_panel.reembed_requested.connect(self._on_reembed_requested)
        self.status_panel.show_requested.connect(self._on_show_requested)

    # -- the theme ------------------------------------------------------------------------
    def _apply_style(self) -> None:
        self._colors.clear()
        self._colors.update(theme.colors())
        self.setStyleSheet(STYLE.format(**self._colors))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in _PALETTE_EVENTS and hasattr(self, "status_panel"):
            self.theme_changed()

    def theme_changed(self) -> None:
        """A theme switch (the window calls it too): style sheet and rich-text colours."""
        if theme.colors() != self._colors:
            self._apply_style()
            self.state.phase_changed.emit(self.state.current)
            if self.state.health:
                self.state.set_health(self.state.health)

    def _service(self) -> MultiAgentService:
        """Only ever called inside jobs (worker threads)."""
        return self.service.get()

    def _buttons(self) -> None:
        self.state.buttons_changed.emit()

    # -- opening --------------------------------------------------------------------------
    def _open(self) -> None:
        self.workers.start(
            "multi-agent: open sessions",
            jobs.list_job(self.service, 0, self.state.filter),
            connect={"succeeded": self._on_open_succeeded, "failed": self._on_job_failed},
        )

    def _on_open_succeeded(self, result: jobs.Listing) -> None:
        self.state.opened(result.sessions, result.states)
        self.state.set_health(result.health)
        self._check_memory()

    def _check_memory(self) -> None:
        self.workers.start(
            "multi-agent: memory status",
            jobs.memory_status_job(self.service),
            connect={"succeeded": self._on_memory_status_succeeded, "failed": self._on_job_failed},
        )

    def _on_memory_status_succeeded(self, answer: jobs.MemoryAnswer) -> None:
        self.state.set_health(answer.health)
        if isinstance(answer.status, str):
            self.state.set_memory_status(MemoryStatus(answer.status, problem=True))
            return
        statuses: list[CollectionStatus] = list(answer.status)
        problems = [s.problem for s in statuses if s.problem]
        if problems:
            text = self.tr(
                "The embedding model changed: the semantic memory must be re-embedded "
                "before it can be searched or used by the experts.\n{0}",
            ).format(problems[0])
            self.state.set_memory_status(MemoryStatus(text, problem=True, offer_reembed=True))
            return
        points = sum(s.points for s in statuses)
        first = statuses[0] if statuses else None
        model = f"{first.embedder}, {first.dimension}-d" if first else ""
        text = self.tr("%n item(s) remembered ({0}).", "", points).format(model)
        self.state.set_memory_status(MemoryStatus(text))
        self._start_index()

    def _start_index(self) -> None:
        """Build the memory's search index (HNSW) in the background once it is big enough;
        a run or a re-embedding started meanwhile cancels it (it starts again later)."""
        if self._index is not None or self._run is not None or self._reembed is not None:
            return
        self._index = self.workers.start(
            "multi-agent: index memory",
            jobs.index_job(self.service),
            connect={
                "progress": self._on_index_progress,
                "succeeded": self._on_index_succeeded,
                "failed": self._on_job_failed,
                "finished": self._on_index_finished,
            },
        )

    def _on_index_progress(self, done: int, total: int, message: str) -> None:
        if total:
            self._memory_text(
                self.tr("Building the search index of the semantic memory: {0} of {1}…").format(
                    done, total
                )
            )

    def _on_index_succeeded(self, built: int) -> None:
        if built:
            self.memory_indexed.emit(int(built))
            self._check_memory()  # the status again (then nothing is left to build)

    def _on_index_finished(self) -> None:
        self._index = None

    def _memory_text(self, text: str) -> None:
        """The memory's status line says ``text`` (what it offers stays)."""
        status = self.state.memory_status
        self.state.set_memory_status(MemoryStatus(text, status.problem, status.offer_reembed))

    # -- the sessions list ----------------------------------------------------------------
    def _on_refresh_requested(self) -> None:
        if self.state.ready:
            self._refresh_sessions()

    def _refresh_sessions(self) -> None:
        self.workers.start(
            "multi-agent: list sessions",
            jobs.list_job(self.service, self.state.next_listing(), self.state.filter),
            connect={"succeeded": self._on_list_succeeded, "failed": self._on_job_failed},
        )

    def _on_list_succeeded(self, listing: jobs.Listing) -> None:
        if not self.state.listed(listing.serial, listing.sessions, listing.states):
            return  # an older listing (another filter) finished late
        self.state.set_health(listing.health)
        if self.state.current is not None:
            self.state.phase_changed.emit(self.state.current)  # e.g. now "interrupted"
        self._buttons()

    def _on_session_picked(self, session_id: str) -> None:
        if self.state.is_shown(session_id):
            self.state.wanted = session_id  # back to the one shown: a load on its way is stale
            return
        self._load_session(session_id)

    def _on_show_requested(self, session_id: str) -> None:
        item = self.sessions_panel.item_of(session_id)
        if item is not None:
            self.sessions_panel.sessions.setCurrentItem(item)  # loads it (_on_session_picked)
        else:
            self._load_session(session_id)  # filtered out of the list: show it anyway

    def _load_session(self, session_id: str) -> None:
        self.state.load(session_id)
        self.workers.start(
            "multi-agent: load session",
            jobs.load_job(self.service, session_id),
            connect={"succeeded": self._on_load_succeeded, "failed": self._on_job_failed},
        )

    def _on_load_succeeded(self, loaded: jobs.Loaded) -> None:
        session = loaded.session
        if session is not None:
            self.state.states.pop(session.session_id, None)
            self.state.states.update(loaded.states)
        self.state.set_health(loaded.health)
        if session is None:
            self.state.set_error(self.tr("That session is not in any reachable store."))
            self.state.loading_changed.emit(False)
            return
        if session.session_id != self.state.wanted:
            return  # the user moved on to another session meanwhile
        self._show_session(session)
        self.state.set_tickets(loaded.tickets)
        self._buttons()

    def _show_session(self, session: Session) -> None:
        if self.state.show_session(session):
            self._refresh_tickets()

    # -- running --------------------------------------------------------------------------
    def _on_run_requested(self) -> None:
        # The Run button and Enter in the task field: one start at a time, from the first
        # press until the run ends (the session is created, then the feed subscribes).
        state = self.state
        if not state.ready or state.busy():
            return
        task = self.task_bar.task_input.text().strip()
        if not task:
            state.set_error(self.tr("Type a task first."))
            return
        state.set_error("")
        state.set_notice(Notice())
        if self._index is not None:
            self._index.cancel()  # the run comes first; the index is built again afterwards
        state.starting = True
        state.running_task = task
        self._buttons()
        self.workers.start(
            "multi-agent: new session",
            jobs.start_job(self.service, task),
            connect={"succeeded": self._on_start_succeeded, "failed": self._on_start_failed},
        )

    def _on_start_succeeded(self, session: Session) -> None:
        self.state.starting = False
        self.task_bar.task_input.clear()
        self._show_session(session)
        self.state.set_tickets([])
        self.state.running_task = session.task
        self._start_feed(session.session_id, run_after=True)
        self._buttons()
        self._refresh_sessions()

    def _on_start_failed(self, message: str, environment: bool) -> None:
        self.state.starting = False
        self.state.set_error(message)
        self._buttons()

    def _on_resume_requested(self) -> None:
        current = self.state.current
        if current is None or self.state.busy() or not current.resumable:
            return
        run_state = self.state.states.get(current.session_id)
        if run_state is not None and run_state.kind != "interrupted":
            return  # running (the button is disabled; a late click does nothing)
        self.state.set_error("")
        self.state.set_notice(Notice())
        self.state.running_task = current.task
        self._start_feed(current.session_id, run_after=True)
        self._buttons()

    def _on_cancel_requested(self) -> None:
        # Only the session shown (the button is disabled otherwise; a late click does nothing).
        if self._run is not None and self.state.run_is_shown():
            self._run.cancel()
            self.state.run_cancelled = True
            self._buttons()

    # -- the feed -------------------------------------------------------------------------
    def _start_feed(self, session_id: str, run_after: bool) -> None:
        """Subscribe to the session's feed; once subscribed, run it when ``run_after``."""
        if self._feed_job is not None:
            self._feed_job.cancel()
        self.state.pending_run = session_id if run_after else None
        self._feed_job = self.workers.start(
            f"multi-agent: feed {session_id[:8]}",
            jobs.feed_job(self.service, session_id),
            connect={
                "item": self._on_feed_item,
                "failed": self._on_feed_failed,
                "finished": self._on_feed_finished,
            },
        )

    def _on_feed_item(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        if event.get("kind") == jobs.SUBSCRIBED:
            if self.state.pending_run == event.get("session"):
                self._start_run(str(event["session"]))
            return
        self._follow_live_event(event)

    def _follow_live_event(self, event: dict[str, Any]) -> None:
        if self.state.live_event(event):
            self._refresh_tickets()

    def _on_feed_failed(self, message: str, environment: bool) -> None:
        # The bus is down: the run still goes on, its events come with the run job instead.
        self.state.set_error(self.tr("Live feed unavailable: {0}").format(message))
        pending = self.state.pending_run
        self.state.pending_run = None
        if pending is not None:
            self._start_run(pending)

    def _on_feed_finished(self) -> None:
        if self._feed_job is not None and self.sender() is self._feed_job.signals:
            self._feed_job = None
            if self.state.pending_run is not None:
                # Ended (cancelled) before it subscribed: the run never started.
                self.state.pending_run = None
                self._buttons()

    # -- the run job ----------------------------------------------------------------------
    def _start_run(self, session_id: str) -> None:
        self.state.run_started(session_id)
        self._run = self.workers.start(
            f"multi-agent: run {session_id[:8]}",
            jobs.run_job(self.service, session_id),
            connect={
                "succeeded": self._on_run_succeeded,
                "item": self._on_run_item,
                "progress": self._on_run_progress,
                "failed": self._on_run_failed,
                "cancelled": self._on_run_cancelled,
                "finished": self._on_run_finished,
            },
        )
        self.state.set_bar(
            visible=True,
            maximum=0,
            value=0,
            tip=self.tr("Running: {0}").format(short(self.state.running_task)),
        )
        if self.state.run_is_shown() and self.state.current is not None:
            self.state.phase_changed.emit(self.state.current)  # no longer "interrupted"
        self._buttons()

    def _on_run_succeeded(self, result: Any) -> None:
        if isinstance(result, jobs.Refused):
            self.state.refused = True
            self.state.set_error(result.message)
            if self.state.running_id is not None:
                self.run_refused.emit(self.state.running_id, result.message)

    def _on_run_item(self, event: Any) -> None:
        if isinstance(event, dict):
            self._follow_live_event(event)

    def _on_run_progress(self, done: int, total: int, message: str) -> None:
        self.state.set_bar(maximum=max(total, 1), value=done)

    def _run_name(self) -> str:
        """How messages name the run: "" when it is the session shown."""
        if self.state.run_is_shown():
            return ""
        return self.tr("“{0}”").format(short(self.state.running_task))

    def _on_run_failed(self, message: str, environment: bool) -> None:
        name = self._run_name()
        if name:
            text = self.tr("The session {0} stopped: {1}").format(name, message)
        else:
            text = self.tr("The session stopped: {0}").format(message)
        self.state.set_error(text)
        self._check_memory()  # a changed embedder shows the re-embed button

    def _on_run_cancelled(self) -> None:
        name = self._run_name()
        if name:
            text = self.tr(
                "The session {0} was cancelled. Resume continues where it stopped.",
            ).format(name)
        else:
            text = self.tr("Cancelled. Resume continues where it stopped.")
        self.state.set_error(text)

    def _on_run_finished(self) -> None:
        self._run = None
        session_id = self.state.run_ended()
        self.state.set_bar(visible=self._reembed is not None)
        if self._feed_job is not None:
            self._feed_job.cancel()
        self._buttons()
        if session_id is None:
            return
        if self.state.refused:
            # Not run: show the session as it is now (running elsewhere), no final state.
            self.state.refused = False
            if self.state.wanted == session_id:
                self._load_session(session_id)
            self._refresh_sessions()
            return
        # The list is read with the session, so it shows the final phase by the time
        # ``session_finished`` is emitted; listings started earlier are stale from now on.
        self.workers.start(
            "multi-agent: final state",
            jobs.final_job(self.service, session_id, self.state.next_listing(), self.state.filter),
            connect={"succeeded": self._on_final_succeeded, "failed": self._on_job_failed},
        )

    def _on_final_succeeded(self, final: jobs.FinalState) -> None:
        state = self.state
        session = final.session
        state.set_health(final.health)
        if final.serial == state.list_serial or final.filter == state.filter:
            state.show_listing(final.sessions, final.states)
        elif session is not None:  # the filter changed meanwhile: its own listing is coming
            state.merge_states(session, final.states)
        if session is None:
            state.set_error(self.tr("That session is not in any reachable store."))
            self._buttons()
            return
        if state.wanted == session.session_id:
            self._show_session(session)
            state.set_tickets(final.tickets)
        else:
            # The user is looking at another session: leave the view alone, say it ended.
            text = self.tr("The session “{0}” ended: {1}.").format(
                short(session.task), state_name(session)
            )
            state.set_notice(Notice(session.session_id, text))
        self._buttons()
        self._check_memory()  # the experts stored their results: new counts
        self.session_finished.emit(session.session_id, session.phase)

    # -- tickets --------------------------------------------------------------------------
    def _refresh_tickets(self) -> None:
        if self._tickets_busy:
            self._tickets_again = True
            return
        current = self.state.current
        if current is None:
            return
        self._tickets_busy = True
        self.workers.start(
            "multi-agent: tickets",
            jobs.tickets_job(self.service, current.session_id),
            connect={
                "succeeded": self._on_tickets_succeeded,
                "failed": self._on_job_failed,
                "finished": self._on_tickets_finished,
            },
        )

    def _on_tickets_succeeded(self, result: Any) -> None:
        session_id, tickets = result
        if self.state.is_shown(session_id):
            self.state.set_tickets(tickets)

    def _on_tickets_finished(self) -> None:
        self._tickets_busy = False
        if self._tickets_again:
            self._tickets_again = False
            self._refresh_tickets()

    # -- the semantic memory --------------------------------------------------------------
    def _on_search_requested(self, query: str) -> None:
        if not query:
            self.state.set_memory_search(None)
            return
        self.state.set_memory_search(MemorySearch(query))
        self.workers.start(
            "multi-agent: memory search",
            jobs.search_job(self.service, query),
            connect={"succeeded": self._on_search_succeeded, "failed": self._on_search_failed},
        )

    def _on_search_succeeded(self, result: Any) -> None:
        floor, hits = result
        query = self.state.memory_search.query if self.state.memory_search else ""
        self.state.set_memory_search(MemorySearch(query, False, floor, tuple(hits)))

    def _on_search_failed(self, message: str, environment: bool) -> None:
        self.state.set_memory_search(None)
        self.state.set_error(self.tr("Memory search failed: {0}").format(message))
        self._check_memory()

    def _on_reembed_requested(self) -> None:
        if self._reembed is not None:
            self._reembed.cancel()
            return
        self._reembed = self.workers.start(
            "multi-agent: re-embed memory",
            jobs.reembed_job(self.service),
            connect={
                "progress": self._on_reembed_progress,
                "succeeded": self._on_reembed_succeeded,
                "failed": self._on_job_failed,
                "cancelled": self._on_reembed_cancelled,
                "finished": self._on_reembed_finished,
            },
        )
        self.state.set_reembedding(True)
        self.state.set_bar(visible=True, maximum=0, value=0)

    def _on_reembed_progress(self, done: int, total: int, message: str) -> None:
        self.state.set_bar(maximum=max(total, 1), value=done)
        self._memory_text(self.tr("Re-embedding: {0} of {1}").format(done, total))

    def _on_reembed_succeeded(self, count: Any) -> None:
        self.state.set_error("")

    def _on_reembed_cancelled(self) -> None:
        self.state.set_error(self.tr("Re-embedding cancelled; the memory is as it was."))

    def _on_reembed_finished(self) -> None:
        self._reembed = None
        self.state.set_reembedding(False)
        if self._run is None:
            self.state.set_bar(visible=False)
        self._check_memory()

    # -- the result -----------------------------------------------------------------------
    def _on_export_requested(self, path: str) -> None:
        self.export_result_to(path)

    def export_result_to(self, path: str) -> str:
        """Write the result pane's Markdown to ``path`` in a worker (``.md`` added unless it
        ends so); returns the path it writes. A failure is shown in ``multiagent_error``."""
        target = Path(path)
        if target.suffix.lower() != ".md":
            target = target.with_name(target.name + ".md")
        self.workers.start(
            "multi-agent: export result",
            jobs.export_job(target, self.state.result_markdown),
            connect={"succeeded": self._on_export_succeeded, "failed": self._on_job_failed},
        )
        return str(target)

    def _on_export_succeeded(self, path: Any) -> None:
        self.result_panel.show_saved(str(path))
        self.result_exported.emit(str(path))

    # -- errors and life cycle ------------------------------------------------------------
    def _on_job_failed(self, message: str, environment: bool) -> None:
        self.state.set_error(message)

    def about_to_quit(self) -> None:
        """The window is quitting (the user confirmed): the run about to be stopped is left
        interrupted — resumable at the next start — not recorded as cancelled by the user."""
        if self._run is None:
            return
        with contextlib.suppress(CustodiaEnvironmentError):
            self._service().stop_for_shutdown()  # built already: a run uses it

    def shutdown(self) -> None:
        """Called by the window on close, after the workers were cancelled and waited for."""
        self.side_panel.shutdown()
        self._run = None
        self._feed_job = None
        self._reembed = None
        self._index = None
