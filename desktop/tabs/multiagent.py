"""The multi-agent tab (MA1–MA11): a task, a team of experts, a live feed.

Top: the task (``task_input``), ``run_task``, ``cancel_task``, ``resume_task``, the phase
indicator (``phase``) and the progress bar. Left: the sessions (``sessions``, newest first,
``phase_filter``). Middle: the live feed (``feed``). Right: the tickets with their countdowns
(``tickets``) and the semantic memory search (``memory_search``, results in
``memory_results``; ``reembed_memory`` when the embedder changed). Bottom: the health of
every layer (``layer_health``) and errors (``multiagent_error``). Above the result: what was
verified (AL3) — ``verification_badge`` (verified / failed verification / unverified draft)
and ``verification_tests`` (each checked step, its tests passed or failed, a failure's output
folded under it). A finished session is listed by that status, never as just "done".

Every store and model call runs through the worker pool. A run is two jobs: one subscribes
to the session's feed and renders each event as it arrives; once it is subscribed, the other
runs the coordinator. Events carry a sequence number, so whatever reaches the tab twice
(the feed, then the final session) is drawn once and in order.

A session another Custodia process is running (its run lock, see
``backends/multiagent/runlock.py``) is listed as such and cannot be resumed here; if the
other process takes it between the listing and a click, the run is refused untouched and
``run_refused`` says why. Sessions a dead process left behind are listed "(interrupted)";
the backend decides which is which (``MultiAgentService.run_states``), for the CLI too.

One run at a time: from the first Enter (or click) until the run ends, another start is
refused. The buttons act on the session shown: ``cancel_task`` is enabled only while the
session shown is the one running. When a run ends while another session is shown, the view
stays where the user put it; the list row shows the final phase and ``multiagent_notice``
says which session ended (its link shows it).
"""

from __future__ import annotations

import contextlib
import html
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.multiagent import (
    PHASES,
    RETRY,
    SESSION_FINISHED,
    VERIFICATION,
    VERIFYING,
    CollectionStatus,
    Hit,
    LiveTicket,
    MultiAgentService,
    RunState,
    Session,
    SessionBusyError,
    assemble_result,
    status_of,
)
from backends.progress import Progress
from backends.services import Lazy, ModelChoices
from desktop import i18n, theme
from desktop.i18n import QT_TRANSLATE_NOOP
from desktop.markdown import fences_on_own_lines, set_markdown
from desktop.model_picker import ModelPicker
from desktop.workers import Emit, JobHandle, WorkerPool

#: a theme switch reaches a widget as one of these
_PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
#: how long the feed worker waits per poll: it notices cancellation within this time
FEED_POLL_SECONDS = 0.2
SESSION_LIMIT = 200
#: memory hits fetched per search (those under the recall threshold are then hidden)
MEMORY_SEARCH_LIMIT = 8
_SUBSCRIBED = "_subscribed"
_STEPS = ("planning", "working", "reviewing", "done")

_STYLE = """
QLabel#phase {{ font-size: 13px; padding: 2px 4px; }}
QLabel#multiagent_error {{ color: {error}; }}
QLabel#memory_status[problem="true"] {{ color: {warning}; font-weight: bold; }}
QLabel#verification_badge {{ padding: 4px 6px; border: 1px solid {faint}; border-radius: 3px; }}
"""

#: the health layers in the user's words (the service's keys name the engine layers, which
#: stay in the tooltip and the CLI)
_LAYER_WORDS = (
    ("sessions L1", QT_TRANSLATE_NOOP("MultiAgentTab", "open sessions")),
    ("sessions L2", QT_TRANSLATE_NOOP("MultiAgentTab", "recent sessions")),
    ("sessions SQLite", QT_TRANSLATE_NOOP("MultiAgentTab", "saved sessions")),
    ("tickets", QT_TRANSLATE_NOOP("MultiAgentTab", "tickets")),
    ("live feed", QT_TRANSLATE_NOOP("MultiAgentTab", "live feed")),
    ("semantic memory", QT_TRANSLATE_NOOP("MultiAgentTab", "semantic memory")),
)
_SERVERS = ("redis", "postgres", "qdrant")


def _milliseconds(seconds: float) -> str:
    return "< 1 ms" if seconds < 0.001 else f"{seconds * 1000:.0f} ms"


class _Refused:
    """A run job's answer when the session was already running (here or elsewhere)."""

    def __init__(self, message: str) -> None:
        self.message = message


@dataclass(frozen=True)
class _FinalState:
    """What the tab needs once a run ended: the session, and the list as it is now."""

    session: Session | None
    tickets: list[LiveTicket]
    health: dict[str, str]
    #: the list, read after the run ended, with the filter it was read with
    serial: int
    phase_filter: str
    sessions: list[Session]
    states: dict[str, RunState]


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
        self.current: Session | None = None
        self._seen_seq = 0
        self._running_id: str | None = None
        #: the task of the session running (or about to run), for the Cancel tooltip
        self._running_task = ""
        #: a new session is being created (Run or Enter pressed, no session yet)
        self._starting = False
        self._pending_run: str | None = None
        #: live events of the running session by seq, also while another session is shown
        self._live: dict[int, dict[str, Any]] = {}
        #: the session ``multiagent_notice`` talks about
        self._notice_session = ""
        #: the session the user asked to see last (shown, or being loaded)
        self._wanted = ""
        self._run: JobHandle | None = None
        self._feed_job: JobHandle | None = None
        self._reembed: JobHandle | None = None
        #: the semantic memory's HNSW build (a background job; yields to a run)
        self._index: JobHandle | None = None
        self._tickets: list[LiveTicket] = []
        self._tickets_busy = False
        self._tickets_again = False
        #: sessions running here or elsewhere, or interrupted (from the backend)
        self._states: dict[str, RunState] = {}
        self._refused = False
        self._list_serial = 0
        self._ready = False
        self._health: dict[str, str] = {}
        #: the result pane's session and its Markdown (Copy and Export use it)
        self.result_markdown = ""
        self._result_session = ""
        self.export_dialog: QFileDialog | None = None
        self._apply_style()
        self._build()
        self._connect_signals()
        self._open()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)

        top = QHBoxLayout()
        self.task_input = QLineEdit()
        self.task_input.setObjectName("task_input")
        self.task_input.setPlaceholderText(
            self.tr("Describe a task for the team (planner, coder, researcher, reviewer)…")
        )
        top.addWidget(self.task_input, 1)
        self.run_button = QPushButton(self.tr("Run"))
        self.run_button.setObjectName("run_task")
        self.run_button.setDefault(True)
        self.run_button.setEnabled(False)
        top.addWidget(self.run_button)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("cancel_task")
        self.cancel_button.setEnabled(False)
        top.addWidget(self.cancel_button)
        self.resume_button = QPushButton(self.tr("Resume"))
        self.resume_button.setObjectName("resume_task")
        self.resume_button.setToolTip(self.tr("Continue the selected unfinished session"))
        self.resume_button.setEnabled(False)
        top.addWidget(self.resume_button)
        self.model_picker: ModelPicker | None = None
        if self.models is not None:
            self.model_picker = ModelPicker(self.models, self.workers, self)
            top.addWidget(self.model_picker)
        layout.addLayout(top)

        status = QHBoxLayout()
        self.phase_label = QLabel()
        self.phase_label.setObjectName("phase")
        self.phase_label.setTextFormat(Qt.TextFormat.RichText)
        status.addWidget(self.phase_label, 1)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("task_progress")
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setVisible(False)
        status.addWidget(self.progress_bar)
        layout.addLayout(status)
        self._show_phase(None)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setObjectName("multiagent_splitter")
        splitter.addWidget(self._build_sessions())
        middle = QSplitter(Qt.Orientation.Vertical)
        middle.setObjectName("multiagent_result_splitter")
        middle.addWidget(self._build_feed())
        middle.addWidget(self._build_result())
        middle.setStretchFactor(0, 3)
        middle.setStretchFactor(1, 2)
        splitter.addWidget(middle)
        splitter.addWidget(self._build_side())
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 4)
        splitter.setStretchFactor(2, 3)
        layout.addWidget(splitter, 1)

        self.error_label = QLabel("")
        self.error_label.setObjectName("multiagent_error")
        self.error_label.setWordWrap(True)
        self.error_label.setVisible(False)
        layout.addWidget(self.error_label)
        self.notice_label = QLabel("")
        self.notice_label.setObjectName("multiagent_notice")
        self.notice_label.setTextFormat(Qt.TextFormat.RichText)
        self.notice_label.setWordWrap(True)
        self.notice_label.setVisible(False)
        layout.addWidget(self.notice_label)
        self.health_label = QLabel(self.tr("Opening the session store…"))
        self.health_label.setObjectName("layer_health")
        self.health_label.setTextFormat(Qt.TextFormat.RichText)
        self.health_label.setWordWrap(True)
        layout.addWidget(self.health_label)

        #: the window closed: a listing that arrives after that starts no countdown
        self._shut_down = False
        self.countdown = QTimer(self)
        self.countdown.setObjectName("ticket_countdown")
        self.countdown.setInterval(1000)

    def _build_sessions(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        title = QLabel(self.tr("<b>Sessions</b>"))
        row.addWidget(title)
        row.addStretch(1)
        self.refresh_button = QToolButton()
        self.refresh_button.setObjectName("refresh_sessions")
        self.refresh_button.setText(self.tr("Refresh"))
        self.refresh_button.setToolTip(
            self.tr("Reload the list (sessions run elsewhere, e.g. from a terminal)")
        )
        row.addWidget(self.refresh_button)
        self.phase_filter = QComboBox()
        self.phase_filter.setObjectName("phase_filter")
        self.phase_filter.addItem(self.tr("All phases"), "")
        for phase in PHASES:
            self.phase_filter.addItem(self._phase_name(phase), phase)
        row.addWidget(self.phase_filter)
        layout.addLayout(row)
        self.sessions = QTreeWidget()
        self.sessions.setObjectName("sessions")
        self.sessions.setHeaderLabels([self.tr("Started"), self.tr("Phase"), self.tr("Task")])
        self.sessions.setRootIsDecorated(False)
        self.sessions.setUniformRowHeights(True)
        self.sessions.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.sessions.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout.addWidget(self.sessions, 1)
        return box

    def _build_feed(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.feed_title = QLabel(self.tr("<b>Live feed</b>"))
        self.feed_title.setObjectName("feed_title")
        layout.addWidget(self.feed_title)
        self.feed = QListWidget()
        self.feed.setObjectName("feed")
        self.feed.setWordWrap(True)
        self.feed.setAlternatingRowColors(True)
        self.feed.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        layout.addWidget(self.feed, 1)
        return box

    def _build_result(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.result_title = QLabel(self.tr("<b>Result</b>"))
        self.result_title.setObjectName("multiagent_result_title")
        row.addWidget(self.result_title, 1)
        self.copy_result = QToolButton()
        self.copy_result.setObjectName("copy_result")
        self.copy_result.setText(self.tr("Copy"))
        self.copy_result.setToolTip(self.tr("Copy the result as Markdown"))
        self.copy_result.setEnabled(False)
        row.addWidget(self.copy_result)
        self.export_result = QToolButton()
        self.export_result.setObjectName("export_result")
        self.export_result.setText(self.tr("Export…"))
        self.export_result.setToolTip(self.tr("Save the result as a Markdown file"))
        self.export_result.setEnabled(False)
        row.addWidget(self.export_result)
        layout.addLayout(row)
        self.verification_badge = QLabel()
        self.verification_badge.setObjectName("verification_badge")
        self.verification_badge.setWordWrap(True)
        self.verification_badge.setTextFormat(Qt.TextFormat.RichText)
        self.verification_badge.setVisible(False)
        layout.addWidget(self.verification_badge)
        self.verification_tests = QTreeWidget()
        self.verification_tests.setObjectName("verification_tests")
        self.verification_tests.setHeaderLabels([self.tr("What ran"), self.tr("Outcome"), ""])
        self.verification_tests.setMaximumHeight(170)
        self.verification_tests.setVisible(False)
        header = self.verification_tests.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.verification_tests)
        self.result_view = QTextBrowser()
        self.result_view.setObjectName("multiagent_result")
        self.result_view.setOpenExternalLinks(False)
        self.result_view.setPlaceholderText(
            self.tr("The final answer, assembled from the steps, appears here when a run ends.")
        )
        layout.addWidget(self.result_view, 1)
        return box

    def _build_side(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(self.tr("<b>Tickets</b> (kept only until they expire)")))
        self.tickets = QTreeWidget()
        self.tickets.setObjectName("tickets")
        self.tickets.setHeaderLabels(
            [self.tr("Step"), self.tr("Held by"), self.tr("Status"), self.tr("Expires in")]
        )
        self.tickets.setRootIsDecorated(False)
        self.tickets.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.tickets.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.tickets, 2)

        layout.addWidget(QLabel(self.tr("<b>Semantic memory</b>")))
        self.memory_search = QLineEdit()
        self.memory_search.setObjectName("memory_search")
        self.memory_search.setPlaceholderText(self.tr("Search past results, code, sessions…"))
        self.memory_search.setClearButtonEnabled(True)
        layout.addWidget(self.memory_search)
        self.memory_status = QLabel("")
        self.memory_status.setObjectName("memory_status")
        self.memory_status.setWordWrap(True)
        layout.addWidget(self.memory_status)
        self.reembed_button = QPushButton(self.tr("Re-embed all"))
        self.reembed_button.setObjectName("reembed_memory")
        self.reembed_button.setToolTip(
            self.tr("Rebuild the semantic memory with the configured embedder")
        )
        self.reembed_button.setVisible(False)
        layout.addWidget(self.reembed_button)
        self.memory_results = QListWidget()
        self.memory_results.setObjectName("memory_results")
        self.memory_results.setWordWrap(True)
        layout.addWidget(self.memory_results, 3)
        return box

    def _connect_signals(self) -> None:
        self.run_button.clicked.connect(self._on_run_clicked)
        self.task_input.returnPressed.connect(self._on_run_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.notice_label.linkActivated.connect(self._on_notice_link_activated)
        self.resume_button.clicked.connect(self._on_resume_clicked)
        self.phase_filter.currentIndexChanged.connect(self._on_phase_filter_changed)
        self.refresh_button.clicked.connect(self._on_phase_filter_changed)
        self.sessions.currentItemChanged.connect(self._on_session_selected)
        self.memory_search.returnPressed.connect(self._on_memory_search)
        self.reembed_button.clicked.connect(self._on_reembed_clicked)
        self.countdown.timeout.connect(self._on_countdown_timeout)
        self.copy_result.clicked.connect(self._on_copy_result_clicked)
        self.export_result.clicked.connect(self._on_export_result_clicked)

    # -- helpers ---------------------------------------------------------------------------
    def _apply_style(self) -> None:
        self._colors = theme.colors()
        self.setStyleSheet(_STYLE.format(**self._colors))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in _PALETTE_EVENTS and hasattr(self, "phase_label"):
            self.theme_changed()

    def theme_changed(self) -> None:
        """A theme switch (the window calls it too): style sheet and rich-text colours."""
        if theme.colors() != self._colors:
            self._apply_style()
            self._show_phase(self.current)
            if self._health:
                self._show_health(self._health)

    def _layer_name(self, key: str) -> str:
        """A layer in the user's words; a server the user configured is named (Redis)."""
        for prefix, words in _LAYER_WORDS:
            if key.startswith(prefix):
                engine = key.rsplit("(", 1)[-1].rstrip(")") if key.endswith(")") else ""
                shown = self.tr(words)
                return f"{shown} ({engine})" if engine in _SERVERS else shown
        return key

    def _service(self) -> MultiAgentService:
        """Only ever called inside jobs (worker threads)."""
        return self.service.get()

    def _phase_name(self, phase: str) -> str:
        names = {
            "planning": self.tr("planning"),
            "working": self.tr("working"),
            "reviewing": self.tr("reviewing"),
            "done": self.tr("finished"),
            "failed": self.tr("failed"),
            "cancelled": self.tr("cancelled"),
        }
        return names.get(phase, phase)

    def _status_name(self, status: str) -> str:
        """A finished session's status in the user's words (never just "done")."""
        names = {
            "verified": self.tr("verified"),
            "failed": self.tr("failed verification"),
            "unverified": self.tr("unverified draft"),
        }
        return names.get(status, status)

    def _state_name(self, session: Session) -> str:
        """What a session is: its phase, or for a finished one its status."""
        if session.phase == "done":
            return self._status_name(status_of(session.data))
        return self._phase_name(session.phase)

    def _status_color(self, status: str) -> str:
        c = self._colors
        return {"verified": c["ok"], "failed": c["error"]}.get(status, c["warning"])

    def _show_phase(self, session: Session | None) -> None:
        if session is None:
            self.phase_label.setText(self.tr("Phase: no session selected"))
            self.phase_label.setProperty("phase", "")
            self.phase_label.setProperty("stopped_at", "")
            return
        phase = session.phase
        self.phase_label.setProperty("phase", phase)
        reached = _STEPS.index(phase) if phase in _STEPS else self._last_step(session)
        # Where it stopped, and why: cancelled / failed, or a dead process left it (interrupted).
        stopped = ""
        if phase in ("failed", "cancelled"):
            stopped = self._phase_name(phase)
        elif phase in _STEPS[:-1] and not self._is_ours(session.session_id):
            state = self._states.get(session.session_id)
            if state is not None and state.kind == "interrupted":
                stopped = self.tr("interrupted")
        self.phase_label.setProperty("stopped_at", _STEPS[reached] if stopped else "")
        parts = []
        for index, step in enumerate(_STEPS):
            name = self._phase_name(step)
            c = self._colors
            if stopped and index == reached:
                parts.append(f"<b style='color:{c['error']}'>✕ {name} ({stopped})</b>")
            elif step == phase == "done":
                status = status_of(session.data)
                name = self._status_name(status)
                parts.append(f"<b style='color:{self._status_color(status)}'>● {name}</b>")
            elif step == phase:
                parts.append(f"<b>● {name}</b>")
            elif index < reached:
                parts.append(f"<span style='color:{c['ok']}'>✓ {name}</span>")
            else:
                parts.append(f"<span style='color:{c['faint']}'>○ {name}</span>")
        text = self.tr("Phase: {0}").format(" → ".join(parts))
        state = self._states.get(session.session_id)
        if state is not None and state.kind == "running elsewhere" and not session.finished:
            who = self.tr("pid {0}").format(state.pid) if state.pid is not None else ""
            text += " " + self.tr("<i>(running in another Custodia process {0})</i>").format(who)
        self.phase_label.setText(text)

    @staticmethod
    def _last_step(session: Session) -> int:
        phases = [e.get("phase") for e in session.events if e.get("kind") == "phase"]
        last = next((p for p in reversed(phases) if p in _STEPS), "planning")
        return _STEPS.index(str(last))

    def _show_error(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def _show_notice(self, session_id: str, text: str) -> None:
        """A non-modal note about a session that is not shown; its link shows it."""
        self._notice_session = session_id
        self.notice_label.setProperty("session", session_id)
        self.notice_label.setText(
            f"{text} <a href='show'>{self.tr('Show it')}</a>" if session_id else text
        )
        self.notice_label.setVisible(bool(text))

    def _on_notice_link_activated(self, link: str) -> None:
        session_id = self._notice_session
        if not session_id:
            return
        for index in range(self.sessions.topLevelItemCount()):
            item = self.sessions.topLevelItem(index)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == session_id:
                self.sessions.setCurrentItem(item)  # loads it (_on_session_selected)
                return
        self._load_session(session_id)  # filtered out of the list: show it anyway

    def _busy(self) -> bool:
        """A run is being started (session created, feed subscribing) or running."""
        return self._starting or self._pending_run is not None or self._run is not None

    def _is_ours(self, session_id: str) -> bool:
        """This tab runs ``session_id`` or is about to."""
        return session_id in (self._running_id, self._pending_run)

    def _run_is_shown(self) -> bool:
        return self.current is not None and self.current.session_id == self._running_id

    @staticmethod
    def _short(task: str) -> str:
        task = " ".join(task.split())
        return task if len(task) <= 60 else task[:59] + "…"

    def _show_health(self, health: dict[str, str]) -> None:
        self._health = dict(health)
        parts = []
        problems = []
        details = []
        c = self._colors
        for layer, status in health.items():
            name = self._layer_name(layer)
            details.append(f"{name}: {layer} — {status}")
            if status == "ok":
                parts.append(f"<span style='color:{c['ok']}'>✓ {name}</span>")
            elif status.startswith("degraded"):
                parts.append(f"<b style='color:{c['error']}'>✗ {name}</b>")
                problems.append(f"{name} ({layer}): {status}")
            else:
                parts.append(f"<span style='color:{c['faint']}'>○ {name}</span>")
        self.health_label.setText(self.tr("Stores: {0}").format(" · ".join(parts)))
        tip = "\n".join(problems) if problems else self.tr("Every layer works.")
        self.health_label.setToolTip(tip + "\n\n" + "\n".join(details))
        self.health_label.setProperty("degraded", bool(problems))

    def _update_buttons(self) -> None:
        busy = self._busy()
        self.run_button.setEnabled(self._ready and not busy)
        # The text is being turned into a session: it must not change (or be lost) meanwhile.
        self.task_input.setReadOnly(self._starting)
        running = self._run is not None and not self._run.progress.cancelled
        # Cancel acts on the session shown, like every button here: a run going on behind
        # another session is cancelled by showing it first (the tooltip says which it is).
        self.cancel_button.setEnabled(running and self._run_is_shown())
        if not running:
            self.cancel_button.setToolTip(self.tr("Cancel the running session"))
        elif self._run_is_shown():
            self.cancel_button.setToolTip(
                self.tr("Cancel this session: {0}").format(self._short(self._running_task))
            )
        else:
            self.cancel_button.setToolTip(
                self.tr(
                    "Another session is running: {0}. Select it in the list to cancel it."
                ).format(self._short(self._running_task))
            )
        self.run_button.setToolTip(
            self.tr("A session is running: one at a time") if busy else self.tr("Run the task")
        )
        current = self.current
        state = self._states.get(current.session_id) if current is not None else None
        self.resume_button.setEnabled(
            self._ready
            and not busy
            and current is not None
            and current.resumable
            and (state is None or state.kind == "interrupted")
        )
        if state is not None and state.kind == "running elsewhere":
            self.resume_button.setToolTip(
                self.tr(
                    "Another Custodia process is running this session ({0}); wait for it "
                    "to finish, or stop it, then Refresh"
                ).format(self.tr("pid {0}").format(state.pid) if state.pid else "")
            )
        else:
            self.resume_button.setToolTip(self.tr("Continue the selected unfinished session"))

    # -- opening ---------------------------------------------------------------------------
    def _open(self) -> None:
        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            sessions = service.list_sessions(None, SESSION_LIMIT)
            return sessions, service.health(), service.run_states(sessions)

        handle = self.workers.start("multi-agent: open sessions", job)
        handle.signals.succeeded.connect(self._on_open_succeeded)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_open_succeeded(self, result: Any) -> None:
        sessions, health, states = result
        self._states = dict(states)
        self._ready = True
        self._fill_sessions(sessions)
        self._show_health(health)
        self._update_buttons()
        self._check_memory()

    def _check_memory(self) -> None:
        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            try:
                return service.memory_status(), service.health()
            except StoreUnavailableError as err:
                service.memory_failed(err)
                return str(err), service.health()

        handle = self.workers.start("multi-agent: memory status", job)
        handle.signals.succeeded.connect(self._on_memory_status)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_memory_status(self, result: Any) -> None:
        status, health = result
        self._show_health(health)
        if isinstance(status, str):
            self._set_memory_status(status, problem=True, offer_reembed=False)
            return
        statuses: list[CollectionStatus] = list(status)
        problems = [s.problem for s in statuses if s.problem]
        if problems:
            self._set_memory_status(
                self.tr(
                    "The embedding model changed: the semantic memory must be re-embedded "
                    "before it can be searched or used by the experts.\n{0}"
                ).format(problems[0]),
                problem=True,
                offer_reembed=True,
            )
        else:
            points = sum(s.points for s in statuses)
            first = statuses[0] if statuses else None
            model = f"{first.embedder}, {first.dimension}-d" if first else ""
            self._set_memory_status(
                self.tr("%n item(s) remembered ({0}).", "", points).format(model),
                problem=False,
                offer_reembed=False,
            )
            self._start_index()

    def _start_index(self) -> None:
        """Build the memory's search index (HNSW) in the background once it is big enough;
        a run or a re-embedding started meanwhile cancels it (it starts again later)."""
        if self._index is not None or self._run is not None or self._reembed is not None:
            return

        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            if not service.memory_needs_index():
                return 0
            return service.index_memory(progress)

        handle = self.workers.start("multi-agent: index memory", job)
        self._index = handle
        handle.signals.progress.connect(self._on_index_progress)
        handle.signals.succeeded.connect(self._on_index_succeeded)
        handle.signals.failed.connect(self._on_job_failed)
        handle.signals.finished.connect(self._on_index_finished)

    def _on_index_progress(self, done: int, total: int, message: str) -> None:
        if total:
            self.memory_status.setText(
                self.tr("Building the search index of the semantic memory: {0} of {1}…").format(
                    done, total
                )
            )

    def _on_index_succeeded(self, built: Any) -> None:
        if built:
            self.memory_indexed.emit(int(built))
            self._check_memory()  # the status again (then nothing is left to build)

    def _on_index_finished(self) -> None:
        self._index = None

    def _set_memory_status(self, text: str, *, problem: bool, offer_reembed: bool) -> None:
        self.memory_status.setText(text)
        self.memory_status.setProperty("problem", problem)
        self.memory_status.style().unpolish(self.memory_status)
        self.memory_status.style().polish(self.memory_status)
        self.reembed_button.setVisible(offer_reembed or self._reembed is not None)

    # -- sessions list ---------------------------------------------------------------------
    def _refresh_sessions(self) -> None:
        phase = str(self.phase_filter.currentData() or "")
        self._list_serial += 1
        serial = self._list_serial

        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            sessions = service.list_sessions(phase or None, SESSION_LIMIT)
            return serial, sessions, service.health(), service.run_states(sessions)

        handle = self.workers.start("multi-agent: list sessions", job)
        handle.signals.succeeded.connect(self._on_sessions_listed)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_sessions_listed(self, result: Any) -> None:
        serial, sessions, health, states = result
        if serial != self._list_serial:
            return  # an older listing (another filter) finished late
        self._states = dict(states)
        self._fill_sessions(sessions)
        self._show_health(health)
        if self.current is not None:
            self._show_phase(self.current)  # e.g. its run state is now "interrupted"
        self._update_buttons()

    def _fill_sessions(self, sessions: list[Session]) -> None:
        selected = self._wanted or (self.current.session_id if self.current else None)
        self.sessions.blockSignals(True)
        self.sessions.clear()
        for session in sessions:
            started = i18n.when(session.created_at)
            phase = self._state_name(session)
            state = self._states.get(session.session_id)
            if self._is_ours(session.session_id):
                state = None  # our run job is starting or running: not interrupted
            if state is not None and state.kind == "interrupted":
                phase = self.tr("{0} (interrupted)").format(phase)
            elif state is not None and state.kind == "running elsewhere":
                pid = str(state.pid) if state.pid is not None else "?"
                phase = self.tr("{0} (running in another process, pid {1})").format(phase, pid)
            item = QTreeWidgetItem([started, phase, session.task.replace("\n", " ")])
            item.setData(0, Qt.ItemDataRole.UserRole, session.session_id)
            item.setData(1, Qt.ItemDataRole.UserRole, session.phase)
            item.setToolTip(2, session.task)
            self.sessions.addTopLevelItem(item)
            if session.session_id == selected:
                self.sessions.setCurrentItem(item)
        self.sessions.blockSignals(False)
        self.sessions_loaded.emit(len(sessions))

    def _show_listed_phase(self, session_id: str, phase: str, status: str = "") -> None:
        """The sessions list follows a running session's phase (its status once finished)."""
        if phase not in PHASES:
            return
        name = self._status_name(status or "unverified") if phase == "done" else ""
        for index in range(self.sessions.topLevelItemCount()):
            item = self.sessions.topLevelItem(index)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == session_id:
                item.setText(1, name or self._phase_name(phase))
                item.setData(1, Qt.ItemDataRole.UserRole, phase)

    def _on_phase_filter_changed(self, *args: Any) -> None:
        if self._ready:
            self._refresh_sessions()

    def _on_session_selected(self, item: QTreeWidgetItem | None, previous: Any) -> None:
        if item is None:
            return
        session_id = str(item.data(0, Qt.ItemDataRole.UserRole))
        if self.current is not None and self.current.session_id == session_id:
            self._wanted = session_id  # back to the one shown: a load still on its way is stale
            return
        self._load_session(session_id)

    def _load_session(self, session_id: str) -> None:
        self._wanted = session_id
        if self.current is None or self.current.session_id != session_id:
            self.feed_title.setText(self.tr("<b>Live feed</b> — loading the session…"))

        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            session = service.session(session_id)
            return (
                session,
                service.live_tickets(session_id),
                service.health(),
                service.run_states([session] if session is not None else []),
            )

        handle = self.workers.start("multi-agent: load session", job)
        handle.signals.succeeded.connect(self._on_session_loaded)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_session_loaded(self, result: Any) -> None:
        session, tickets, health, states = result
        if session is not None:
            self._states.pop(session.session_id, None)
            self._states.update(states)
        self._show_health(health)
        if session is None:
            self._show_error(self.tr("That session is not in any reachable store."))
            if self.current is not None:
                self.feed_title.setText(
                    self.tr("<b>Live feed</b> — {0}").format(self.current.task[:80])
                )
            return
        if session.session_id != self._wanted:
            return  # the user moved on to another session meanwhile
        self._show_session(session)
        self._show_tickets(tickets)
        self._update_buttons()

    def _show_session(self, session: Session) -> None:
        """Draw ``session``; the feed is redrawn only when another session is shown."""
        if self.current is None or self.current.session_id != session.session_id:
            self.feed.clear()
            self._seen_seq = 0
            self.feed_title.setText(self.tr("<b>Live feed</b> — {0}").format(session.task[:80]))
        self.current = session
        self._wanted = session.session_id
        for event in session.events:
            self._add_event(event)
        if session.session_id == self._running_id:
            # Back to the running session: what arrived live after it was read, in order.
            for seq in sorted(self._live):
                self._apply_event(session, self._live[seq])
        if self._notice_session == session.session_id:
            self._show_notice("", "")
        self._show_phase(session)
        self._show_result(session)

    # -- the result ------------------------------------------------------------------------
    def _show_result(self, session: Session) -> None:
        """The session's result (its stored one, or assembled from what is done so far)."""
        data = session.data
        has_work = "review" in data or any(
            s.get("result") is not None for s in data.get("steps") or []
        )
        self._result_session = session.session_id
        if not has_work:
            self.result_markdown = ""
            self.result_view.clear()
            self.result_title.setText(self.tr("<b>Result</b>"))
        else:
            text = str(data.get("result") or "") or assemble_result(session)
            self.result_markdown = text
            # one heading level down on screen: a pane, not a page (the export keeps them)
            shown = _headings_down(text)
            set_markdown(self.result_view.document(), shown)
            if session.phase == "done":
                self.result_title.setText(self.tr("<b>Result</b>"))
            else:
                self.result_title.setText(
                    self.tr("<b>Result so far</b> ({0})").format(self._phase_name(session.phase))
                )
        self.copy_result.setEnabled(bool(self.result_markdown))
        self.export_result.setEnabled(bool(self.result_markdown))
        self._show_verification(session)

    def _show_verification(self, session: Session) -> None:
        """The badge (what the result is worth) and the tests that ran, step by step; a
        failure's output is folded under its test."""
        tree = self.verification_tests
        tree.clear()
        record = session.data.get("verification")
        if session.phase != "done":
            self.verification_badge.setVisible(False)
            self.verification_badge.setProperty("status", "")
            tree.setVisible(False)
            return
        if not isinstance(record, dict):  # finished before results were checked
            record = {
                "summary": self.tr("this session finished before results were checked"),
            }
        status = status_of(session.data)
        icon = {"verified": "✓", "failed": "✗"}.get(status, "○")
        text = (
            f"<b style='color:{self._status_color(status)}'>{icon} "
            f"{html.escape(self._status_name(status))}</b> — "
            f"{html.escape(str(record.get('summary') or ''))}."
        )
        if status == "unverified":
            text += " " + self.tr("Nothing here was run: read it as the model's draft.")
        self.verification_badge.setText(text)
        self.verification_badge.setProperty("status", status)
        self.verification_badge.setVisible(True)
        for step in session.data.get("steps") or []:
            check = step.get("verification")
            if not isinstance(check, dict) or check.get("status") not in (
                "verified",
                "failed",
                "unverified",
            ):
                continue
            attempts = list(check.get("attempts") or [])
            if step.get("expert") != "coder" and not any(a.get("code_lines") for a in attempts):
                continue  # prose: nothing was there to check
            item = QTreeWidgetItem(
                [
                    self.tr("Step {0} ({1}): {2}").format(
                        step.get("index"), step.get("expert"), check.get("summary", "")
                    ),
                    self._status_name(str(check["status"])),
                    "",
                ]
            )
            item.setForeground(1, QBrush(QColor(self._status_color(str(check["status"])))))
            tree.addTopLevelItem(item)
            for number, attempt in enumerate(attempts, start=1):
                parent = item
                if len(attempts) > 1:
                    parent = QTreeWidgetItem(
                        [
                            self.tr("Attempt {0}: {1}").format(
                                attempt.get("attempt", number), attempt.get("summary", "")
                            ),
                            self._status_name(str(attempt.get("status"))),
                            f"{float(attempt.get('seconds') or 0):.2f} s",
                        ]
                    )
                    item.addChild(parent)
                    parent.setExpanded(number == len(attempts))
                self._add_tests(parent, attempt)
            item.setExpanded(True)
        tree.setVisible(tree.topLevelItemCount() > 0)

    def _add_tests(self, parent: QTreeWidgetItem, attempt: dict[str, Any]) -> None:
        """One attempt's tests under ``parent``; where they came from and the sandbox in the
        tooltip; a failure's output as a folded child."""
        limits = attempt.get("limits") or {}
        where = self.tr("Tests: {0}. Sandbox: no network ({1}), {2} s, {3} MB.").format(
            attempt.get("tests_from") or self.tr("none"),
            attempt.get("network") or "-",
            limits.get("wall_seconds", "-"),
            limits.get("memory_mb", "-"),
        )
        parent.setToolTip(0, where)
        outcomes = {
            "passed": ("✓", self.tr("passed"), "ok"),
            "failed": ("✗", self.tr("failed"), "error"),
            "error": ("⚠", self.tr("could not run"), "warning"),
            "skipped": ("–", self.tr("skipped"), "faint"),
        }
        for test in attempt.get("tests") or []:
            mark, word, color = outcomes.get(str(test.get("outcome")), ("?", "?", "faint"))
            row = QTreeWidgetItem(
                [
                    f"{mark} {test.get('name')}",
                    word,
                    _milliseconds(float(test.get("seconds") or 0)),
                ]
            )
            row.setForeground(1, QBrush(QColor(self._colors[color])))
            row.setToolTip(0, where)
            parent.addChild(row)
            output = str(test.get("output") or "").strip()
            if output:
                detail = QTreeWidgetItem([output])
                detail.setToolTip(0, output)
                font = detail.font(0)
                font.setFamily("monospace")
                detail.setFont(0, font)
                row.addChild(detail)
                detail.setFirstColumnSpanned(True)
        if not attempt.get("tests") and attempt.get("output"):
            detail = QTreeWidgetItem([str(attempt["output"]).strip()])
            parent.addChild(detail)
            detail.setFirstColumnSpanned(True)

    def _on_copy_result_clicked(self) -> None:
        if self.result_markdown:
            QGuiApplication.clipboard().setText(self.result_markdown)
            self.result_title.setText(self.tr("<b>Result</b> — copied to the clipboard"))

    def _on_export_result_clicked(self) -> None:
        if not self.result_markdown:
            return
        dialog = QFileDialog(self, self.tr("Export the result as Markdown"))
        dialog.setObjectName("export_result_dialog")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters([self.tr("Markdown (*.md)"), self.tr("All files (*)")])
        dialog.setDefaultSuffix("md")
        task = self.current.task if self.current is not None else "result"
        stem = "".join(ch if ch.isalnum() else "-" for ch in task.lower())[:40].strip("-")
        dialog.selectFile(f"{stem or 'result'}.md")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self._on_export_file_selected)
        self.export_dialog = dialog
        dialog.open()

    def _on_export_file_selected(self, path: str) -> None:
        self.export_result_to(path)

    def export_result_to(self, path: str) -> str:
        """Write the result pane's Markdown to ``path`` in a worker (``.md`` added unless it
        ends so); returns the path it writes. A failure is shown in ``multiagent_error``."""
        target = Path(path)
        if target.suffix.lower() != ".md":
            target = target.with_name(target.name + ".md")
        text = self.result_markdown

        def job(progress: Progress, emit: Emit) -> str:
            try:
                target.write_text(text, encoding="utf-8")
            except OSError as err:
                raise CustodiaEnvironmentError(f"could not write {target}: {err}") from err
            return str(target)

        handle = self.workers.start("multi-agent: export result", job)
        handle.signals.succeeded.connect(self._on_result_exported)
        handle.signals.failed.connect(self._on_job_failed)
        return str(target)

    def _on_result_exported(self, path: Any) -> None:
        self.result_title.setText(self.tr("<b>Result</b> — saved to {0}").format(path))
        self.result_exported.emit(str(path))

    # -- the feed --------------------------------------------------------------------------
    def _add_event(self, event: dict[str, Any]) -> bool:
        """Draw ``event`` unless it was drawn already; True when it was new."""
        seq = int(event.get("seq", 0))
        if seq <= self._seen_seq:
            return False  # already drawn (live, then again in the final session)
        self._seen_seq = seq
        stamp = i18n.when(float(event.get("ts", 0.0)), "%H:%M:%S")
        expert = str(event.get("expert") or "")
        kind = str(event.get("kind", ""))
        labels = {
            "session_started": self.tr("session started"),
            "phase": self.tr("phase"),
            "retrieved": self.tr("memory"),
            "expert_started": self.tr("working"),
            "expert_result": self.tr("result"),
            "ticket": self.tr("ticket"),
            "warning": self.tr("warning"),
            VERIFYING: self.tr("checking"),
            VERIFICATION: self.tr("check"),
            RETRY: self.tr("retry"),
            SESSION_FINISHED: self.tr("finished"),
        }
        who = f" {expert}" if expert else ""
        text = str(event.get("text", "")).strip()
        item = QListWidgetItem(f"{stamp}  #{seq}{who} · {labels.get(kind, kind)}: {text}")
        item.setData(Qt.ItemDataRole.UserRole, event)
        item.setToolTip(text)
        checked = event.get("verification")
        status = str(checked.get("status")) if isinstance(checked, dict) else str(checked or "")
        if kind == "warning" or (kind == SESSION_FINISHED and event.get("outcome") != "done"):
            item.setForeground(QBrush(QColor(self._colors["error"])))
        elif kind in (VERIFICATION, SESSION_FINISHED, RETRY) and status in ("verified", "failed"):
            item.setForeground(QBrush(QColor(self._status_color(status))))
            font = item.font()
            font.setBold(True)
            item.setFont(font)
        elif kind == RETRY:
            item.setForeground(QBrush(QColor(self._colors["warning"])))
        elif kind in ("phase", SESSION_FINISHED):
            font = item.font()
            font.setBold(True)
            item.setFont(font)
        self.feed.addItem(item)
        self.feed.scrollToBottom()
        return True

    def _start_feed(self, session_id: str, run_after: bool) -> None:
        """Subscribe to the session's feed; once subscribed, run it when ``run_after``."""
        if self._feed_job is not None:
            self._feed_job.cancel()
        self._pending_run = session_id if run_after else None

        def job(progress: Progress, emit: Emit) -> None:
            subscription = self._service().subscribe(session_id)
            try:
                emit({"kind": _SUBSCRIBED, "session": session_id})
                while not progress.cancelled:
                    event = subscription.get(timeout=FEED_POLL_SECONDS)
                    if event is None:
                        continue
                    emit(event)
                    if event.get("kind") == SESSION_FINISHED:
                        return
            finally:
                subscription.close()

        handle = self.workers.start(f"multi-agent: feed {session_id[:8]}", job)
        self._feed_job = handle
        handle.signals.item.connect(self._on_feed_item)
        handle.signals.failed.connect(self._on_feed_failed)
        handle.signals.finished.connect(self._on_feed_finished)

    def _on_feed_item(self, event: Any) -> None:
        if not isinstance(event, dict):
            return
        if event.get("kind") == _SUBSCRIBED:
            if self._pending_run == event.get("session"):
                self._start_run(str(event["session"]))
            return
        self._on_live_event(event)

    def _on_live_event(self, event: dict[str, Any]) -> None:
        seq = int(event.get("seq", 0))
        if seq and event.get("session") == self._running_id:
            self._live[seq] = event  # kept while another session is shown
        if event.get("kind") in ("phase", SESSION_FINISHED):
            phase = str(event.get("outcome") or event.get("text") or "")
            status = str(event.get("verification") or "")
            self._show_listed_phase(str(event.get("session", "")), phase, status)
        current = self.current
        if current is None or event.get("session") != current.session_id:
            return
        self._apply_event(current, event)

    def _apply_event(self, session: Session, event: dict[str, Any]) -> None:
        """Draw a live event of the session shown and follow its phase."""
        if not self._add_event(event):
            return
        session.events.append(event)
        kind = event.get("kind")
        if kind == SESSION_FINISHED and event.get("verification"):
            # the final record comes with the final session; the badge is right already
            session.data["verification"] = {"status": event["verification"]}
        if kind == "phase" or kind == SESSION_FINISHED:
            session.phase = str(event.get("outcome") or event.get("text") or session.phase)
            self._show_phase(session)
        if kind == "ticket":
            self._refresh_tickets()

    def _on_feed_failed(self, message: str, environment: bool) -> None:
        # The bus is down: the run still goes on, its events come with the run job instead.
        self._show_error(self.tr("Live feed unavailable: {0}").format(message))
        pending = self._pending_run
        self._pending_run = None
        if pending is not None:
            self._start_run(pending)

    def _on_feed_finished(self) -> None:
        if self._feed_job is not None and self.sender() is self._feed_job.signals:
            self._feed_job = None
            if self._pending_run is not None:
                # Ended (cancelled) before it subscribed: the run never started.
                self._pending_run = None
                self._update_buttons()

    # -- running ---------------------------------------------------------------------------
    def _on_run_clicked(self) -> None:
        # The Run button and Enter in the task field: one start at a time, from the first
        # press until the run ends (the session is created, then the feed subscribes).
        if not self._ready or self._busy():
            return
        task = self.task_input.text().strip()
        if not task:
            self._show_error(self.tr("Type a task first."))
            return
        self._show_error("")
        self._show_notice("", "")
        if self._index is not None:
            self._index.cancel()  # the run comes first; the index is built again afterwards
        self._starting = True
        self._running_task = task
        self._update_buttons()

        def job(progress: Progress, emit: Emit) -> Any:
            return self._service().start(task)

        handle = self.workers.start("multi-agent: new session", job)
        handle.signals.succeeded.connect(self._on_session_started)
        handle.signals.failed.connect(self._on_start_failed)

    def _on_session_started(self, session: Any) -> None:
        self._starting = False
        self.task_input.clear()
        self._show_session(session)
        self._show_tickets([])
        self._running_task = session.task
        self._start_feed(session.session_id, run_after=True)
        self._update_buttons()
        self._refresh_sessions()

    def _on_start_failed(self, message: str, environment: bool) -> None:
        self._starting = False
        self._show_error(message)
        self._update_buttons()

    def _on_resume_clicked(self) -> None:
        current = self.current
        if current is None or self._busy() or not current.resumable:
            return
        state = self._states.get(current.session_id)
        if state is not None and state.kind != "interrupted":
            return  # running (the button is disabled; a late click does nothing)
        self._show_error("")
        self._show_notice("", "")
        self._running_task = current.task
        self._start_feed(current.session_id, run_after=True)
        self._update_buttons()

    def _start_run(self, session_id: str) -> None:
        self._pending_run = None
        self._running_id = session_id
        self._live = {}

        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()

            def fallback(event: dict[str, Any]) -> None:
                if not service.feed_ok():  # the bus failed: deliver through the job instead
                    emit(event)

            try:
                return service.run(session_id, progress, on_event=fallback)
            except SessionBusyError as err:  # another process (or run) has it: untouched
                return _Refused(str(err))

        handle = self.workers.start(f"multi-agent: run {session_id[:8]}", job)
        self._run = handle
        self._refused = False
        handle.signals.succeeded.connect(self._on_run_succeeded)
        handle.signals.item.connect(self._on_run_item)
        handle.signals.progress.connect(self._on_run_progress)
        handle.signals.failed.connect(self._on_run_failed)
        handle.signals.cancelled.connect(self._on_run_cancelled)
        handle.signals.finished.connect(self._on_run_finished)
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setVisible(True)
        self.progress_bar.setToolTip(
            self.tr("Running: {0}").format(self._short(self._running_task))
        )
        if self._run_is_shown() and self.current is not None:
            self._show_phase(self.current)  # running now, no longer "interrupted"
        self._update_buttons()

    def _on_run_succeeded(self, result: Any) -> None:
        if isinstance(result, _Refused):
            self._refused = True
            self._show_error(result.message)
            if self._running_id is not None:
                self.run_refused.emit(self._running_id, result.message)

    def _on_run_item(self, event: Any) -> None:
        if isinstance(event, dict):
            self._on_live_event(event)

    def _on_run_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)

    def _run_name(self) -> str:
        """How messages name the run: "" when it is the session shown."""
        if self._run_is_shown():
            return ""
        return self.tr("“{0}”").format(self._short(self._running_task))

    def _on_run_failed(self, message: str, environment: bool) -> None:
        name = self._run_name()
        if name:
            self._show_error(self.tr("The session {0} stopped: {1}").format(name, message))
        else:
            self._show_error(self.tr("The session stopped: {0}").format(message))
        self._check_memory()  # a changed embedder shows the re-embed button

    def _on_run_cancelled(self) -> None:
        name = self._run_name()
        if name:
            self._show_error(
                self.tr("The session {0} was cancelled. Resume continues where it stopped.").format(
                    name
                )
            )
        else:
            self._show_error(self.tr("Cancelled. Resume continues where it stopped."))

    def _on_run_finished(self) -> None:
        session_id = self._running_id
        self._run = None
        self._running_id = None
        self._live = {}
        self.progress_bar.setVisible(self._reembed is not None)
        if self._feed_job is not None:
            self._feed_job.cancel()
        self._update_buttons()
        if session_id is None:
            return
        if self._refused:
            # Not run: show the session as it is now (running elsewhere), no final state.
            self._refused = False
            if self._wanted == session_id:
                self._load_session(session_id)
            self._refresh_sessions()
            return

        # The list is read with the session, so it shows the final phase by the time
        # ``session_finished`` is emitted; listings started earlier are stale from now on.
        self._list_serial += 1
        serial = self._list_serial
        phase = str(self.phase_filter.currentData() or "")

        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            session = service.session(session_id)
            sessions = service.list_sessions(phase or None, SESSION_LIMIT)
            listed = {s.session_id for s in sessions}
            extra = [session] if session is not None and session_id not in listed else []
            return _FinalState(
                session=session,
                tickets=service.live_tickets(session_id),
                health=service.health(),
                serial=serial,
                phase_filter=phase,
                sessions=sessions,
                states=service.run_states(sessions + extra),
            )

        handle = self.workers.start("multi-agent: final state", job)
        handle.signals.succeeded.connect(self._on_final_state)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_final_state(self, result: Any) -> None:
        final: _FinalState = result
        session = final.session
        self._show_health(final.health)
        current_filter = str(self.phase_filter.currentData() or "")
        if final.serial == self._list_serial or final.phase_filter == current_filter:
            self._states = dict(final.states)
            self._fill_sessions(final.sessions)
        elif session is not None:  # the filter changed meanwhile: its own listing is coming
            self._states.pop(session.session_id, None)
            if session.session_id in final.states:
                self._states[session.session_id] = final.states[session.session_id]
        if session is None:
            self._show_error(self.tr("That session is not in any reachable store."))
            self._update_buttons()
            return
        if self._wanted == session.session_id:
            self._show_session(session)
            self._show_tickets(final.tickets)
        else:
            # The user is looking at another session: leave the view alone, say it ended.
            self._show_notice(
                session.session_id,
                self.tr("The session “{0}” ended: {1}.").format(
                    self._short(session.task), self._state_name(session)
                ),
            )
        self._update_buttons()
        self._check_memory()  # the experts stored their results: new counts
        self.session_finished.emit(session.session_id, session.phase)

    def _on_cancel_clicked(self) -> None:
        # Only the session shown (the button is disabled otherwise; a late click does nothing).
        if self._run is not None and self._run_is_shown():
            self._run.cancel()
            self.cancel_button.setEnabled(False)

    # -- tickets ---------------------------------------------------------------------------
    def _refresh_tickets(self) -> None:
        if self._tickets_busy:
            self._tickets_again = True
            return
        current = self.current
        if current is None:
            return
        session_id = current.session_id
        self._tickets_busy = True

        def job(progress: Progress, emit: Emit) -> Any:
            return session_id, self._service().live_tickets(session_id)

        handle = self.workers.start("multi-agent: tickets", job)
        handle.signals.succeeded.connect(self._on_tickets_listed)
        handle.signals.failed.connect(self._on_job_failed)
        handle.signals.finished.connect(self._on_tickets_finished)

    def _on_tickets_listed(self, result: Any) -> None:
        session_id, tickets = result
        if self.current is not None and self.current.session_id == session_id:
            self._show_tickets(tickets)

    def _on_tickets_finished(self) -> None:
        self._tickets_busy = False
        if self._tickets_again:
            self._tickets_again = False
            self._refresh_tickets()

    def _show_tickets(self, tickets: list[LiveTicket]) -> None:
        self._tickets = list(tickets)
        self.tickets.clear()
        statuses = {
            "open": self.tr("open"),
            "working": self.tr("working"),
            "review": self.tr("in review"),
            "closed": self.tr("closed"),
        }
        for live in self._tickets:
            t = live.ticket
            item = QTreeWidgetItem(
                [f"{t.step}. {t.title}", t.expert, statuses.get(t.status, t.status), ""]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, t.ticket_id)
            item.setToolTip(
                0,
                self.tr("Ticket {0}, handed by {1}").format(t.ticket_id, t.from_expert),
            )
            self.tickets.addTopLevelItem(item)
        self._on_countdown_timeout()
        if self._tickets and not self._shut_down and not self.countdown.isActive():
            self.countdown.start()

    def _on_countdown_timeout(self) -> None:
        now = time.time()
        live = 0
        for index, ticket in enumerate(self._tickets):
            item = self.tickets.topLevelItem(index)
            if item is None:
                continue
            left = ticket.remaining(now)
            if left > 0:
                live += 1
                minutes, seconds = divmod(int(left), 60)
                hours, minutes = divmod(minutes, 60)
                text = (
                    f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
                )
                item.setForeground(3, QBrush())
            else:
                text = self.tr("expired")
                item.setForeground(3, QBrush(QColor(self._colors["error"])))
            item.setText(3, text)
            item.setData(3, Qt.ItemDataRole.UserRole, left)
        if not live:
            self.countdown.stop()

    # -- semantic memory -------------------------------------------------------------------
    def _on_memory_search(self) -> None:
        query = self.memory_search.text().strip()
        if not query:
            self.memory_results.clear()
            return

        def job(progress: Progress, emit: Emit) -> Any:
            service = self._service()
            # The experts' own recall threshold: what they would not use is not shown either.
            floor = service.recall_floor
            return floor, service.search_memory(query, limit=MEMORY_SEARCH_LIMIT)

        self.memory_results.clear()
        waiting = QListWidgetItem(self.tr("Searching the semantic memory…"))
        waiting.setFlags(Qt.ItemFlag.NoItemFlags)
        waiting.setData(Qt.ItemDataRole.UserRole, None)
        self.memory_results.addItem(waiting)  # the first search also opens the memory
        handle = self.workers.start("multi-agent: memory search", job)
        handle.signals.succeeded.connect(self._on_memory_results)
        handle.signals.failed.connect(self._on_memory_failed)

    def _on_memory_results(self, result: Any) -> None:
        floor, hits = result
        self.memory_results.clear()
        found: list[Hit] = list(hits)
        shown = [hit for hit in found if hit.score >= floor]
        hidden = len(found) - len(shown)
        for hit in shown:
            text = hit.text.replace("\n", " ")
            score = i18n.number(hit.score, 2)
            item = QListWidgetItem(f"{score} · {hit.collection} · {hit.expert}: {text}")
            item.setToolTip(hit.text)
            item.setData(Qt.ItemDataRole.UserRole, hit.id)
            self.memory_results.addItem(item)
        if not found:
            note = self.tr("Nothing related is remembered yet.")
        elif not shown:
            note = self.tr(
                "Nothing similar (similarity ≥ {0:.2f}); {1} weaker match(es) hidden."
            ).format(floor, hidden)
        elif hidden:
            note = self.tr("{0} weaker match(es) below similarity {1:.2f} hidden.").format(
                hidden, floor
            )
        else:
            return
        item = QListWidgetItem(note)
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        item.setData(Qt.ItemDataRole.UserRole, None)
        self.memory_results.addItem(item)

    def _on_memory_failed(self, message: str, environment: bool) -> None:
        self.memory_results.clear()
        self._show_error(self.tr("Memory search failed: {0}").format(message))
        self._check_memory()

    def _on_reembed_clicked(self) -> None:
        if self._reembed is not None:
            self._reembed.cancel()
            return

        def job(progress: Progress, emit: Emit) -> Any:
            return self._service().reembed(progress)

        handle = self.workers.start("multi-agent: re-embed memory", job)
        self._reembed = handle
        handle.signals.progress.connect(self._on_reembed_progress)
        handle.signals.succeeded.connect(self._on_reembed_succeeded)
        handle.signals.failed.connect(self._on_job_failed)
        handle.signals.cancelled.connect(self._on_reembed_cancelled)
        handle.signals.finished.connect(self._on_reembed_finished)
        self.reembed_button.setText(self.tr("Cancel re-embedding"))
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setVisible(True)

    def _on_reembed_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)
        self.memory_status.setText(self.tr("Re-embedding: {0} of {1}").format(done, total))

    def _on_reembed_succeeded(self, count: Any) -> None:
        self._show_error("")

    def _on_reembed_cancelled(self) -> None:
        self._show_error(self.tr("Re-embedding cancelled; the memory is as it was."))

    def _on_reembed_finished(self) -> None:
        self._reembed = None
        self.reembed_button.setText(self.tr("Re-embed all"))
        if self._run is None:
            self.progress_bar.setVisible(False)
        self._check_memory()

    # -- errors and life cycle -------------------------------------------------------------
    def _on_job_failed(self, message: str, environment: bool) -> None:
        self._show_error(message)

    def about_to_quit(self) -> None:
        """The window is quitting (the user confirmed): the run about to be stopped is left
        interrupted — resumable at the next start — not recorded as cancelled by the user."""
        if self._run is None:
            return
        with contextlib.suppress(CustodiaEnvironmentError):
            self._service().stop_for_shutdown()  # built already: a run uses it

    def shutdown(self) -> None:
        """Called by the window on close, after the workers were cancelled and waited for."""
        self._shut_down = True
        self.countdown.stop()
        self._run = None
        self._feed_job = None
        self._reembed = None
        self._index = None


def create(
    service: Lazy[MultiAgentService], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    return MultiAgentTab(service, models, workers, parent)


_FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def _headings_down(text: str) -> str:
    """``text``'s Markdown headings one level down (a pane, not a page); lines inside code
    blocks are left as written — a Python comment is not a heading."""
    out: list[str] = []
    fence = ""
    for line in fences_on_own_lines(text).split("\n"):
        opened = _FENCE_LINE.match(line)
        if fence:
            if opened and line.strip().startswith(fence) and not line.strip()[len(fence) :].strip():
                fence = ""
        elif opened:
            fence = opened.group(1)
        elif re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out)
