"""The conversations tab: its panels composed, and what passes between them.

Each panel owns its widgets, its jobs and its slots: :class:`~.encryption.EncryptionPanel`
(top), :class:`~.history.HistoryPanel` and :class:`~.transfer.TransferPanel` (left),
:class:`~.chat.ChatPanel` (right), :class:`~.jobs.TabJobs` (the status line, the activity
line, the index progress bar). The tab lays them out, reads the history at start, shows
every listing, and in :meth:`ConversationsTab._connect_signals` wires one panel's request to
another's answer: a conversation picked in the list opens in the chat, a deleted one leaves
a new conversation, an answer saved reads the list again.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox, QSplitter, QVBoxLayout, QWidget

from backends.conversations import ConversationAgent
from backends.progress import Progress
from backends.services import Lazy
from desktop.tabs.conversations.chat import ChatPanel
from desktop.tabs.conversations.encryption import EncryptionPanel
from desktop.tabs.conversations.history import HistoryPanel
from desktop.tabs.conversations.jobs import TabJobs
from desktop.tabs.conversations.results import Listing, Started, listing
from desktop.tabs.conversations.state import TabState
from desktop.tabs.conversations.transfer import TransferPanel
from desktop.workers import Emit, WorkerPool


class ConversationsTab(QWidget):
    """The tab (``conversations``): properties ``ready``, ``busy``, ``current_id``; signal
    ``copied(str)`` after a Copy link in the transcript."""

    #: a message or code block was copied from the transcript (its text)
    copied = Signal(str)

    def __init__(
        self, service: Lazy[ConversationAgent], workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("conversations")
        #: this tab's service, built on first use (only ever inside a worker job)
        self.service = service
        self.workers = workers
        self.state = TabState()
        self.jobs = TabJobs(workers, self.state, self)
        self.encryption = EncryptionPanel(service, self.jobs)
        self.history = HistoryPanel(service, self.jobs)
        self.transfer = TransferPanel(service, self.jobs)
        self.chat = ChatPanel(service, self.jobs)
        self._build()
        self._connect_signals()
        self._start()

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.addWidget(self.encryption)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        outer.addWidget(splitter, 1)
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.history, 1)
        left_layout.addWidget(self.transfer)
        left_layout.addWidget(self.jobs.index_progress)
        splitter.addWidget(left)
        splitter.addWidget(self.chat)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([460, 690])
        outer.addWidget(self.jobs.tab_status)
        outer.addWidget(self.jobs.tab_activity)

    def _connect_signals(self) -> None:
        for panel in (self.encryption, self.history, self.transfer):
            panel.listing_arrived.connect(self._on_listing_arrived)
        self.encryption.key_used.connect(self._on_hits_stale)
        self.transfer.imported.connect(self._on_hits_stale)
        self.history.conversation_chosen.connect(self._on_history_conversation_chosen)
        self.history.hit_chosen.connect(self._on_history_hit_chosen)
        self.history.new_requested.connect(self._on_history_new_requested)
        self.history.current_deleted.connect(self._on_history_current_deleted)
        self.history.stop_requested.connect(self._on_history_stop_requested)
        self.history.refresh_requested.connect(self._on_refresh_requested)
        self.chat.refresh_requested.connect(self._on_refresh_requested)
        self.chat.opened.connect(self._on_chat_opened)
        self.chat.conversation_gone.connect(self._on_chat_conversation_gone)
        self.chat.open_failed.connect(self._on_chat_open_failed)
        self.chat.answer_finished.connect(self._on_chat_answer_finished)
        self.chat.copied.connect(self.copied)

    # -- what tests and the window read ----------------------------------------------------
    @property
    def ready(self) -> bool:
        """The first listing arrived."""
        return self.state.ready

    @property
    def busy(self) -> bool:
        """True while a job this tab started has not delivered its result yet."""
        return self.jobs.busy

    @property
    def current_id(self) -> str | None:
        """The conversation open in the chat (None for a new one)."""
        return self.state.current_id

    @property
    def export_all(self) -> QAction:
        return self.transfer.export_all

    @property
    def new_history_dialog(self) -> QMessageBox:
        return self.encryption.new_history_dialog

    def _on_new_history_clicked(self) -> None:
        """What ``new_history`` does (the dialogs' fit test opens the question this way)."""
        self.encryption._on_new_history_clicked()

    # -- reading the history ---------------------------------------------------------------
    def _start(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> Started:
            agent = service.get()
            agent.start(progress)
            return Started(agent.conversations(), agent.encryption_status(), agent.model_choices())

        self.jobs.say(self.tr("Reading conversations…"))
        self.jobs.run(
            "conversations: start",
            job,
            {"succeeded": self._on_started},
            doing=self.tr("Reading conversations…"),
        )

    def _on_started(self, started: Any) -> None:
        assert isinstance(started, Started)
        self.state.ready = True
        self.chat.set_choices(started.choices)
        self._show_listing(Listing(started.rows, started.status))
        self.jobs.say(self.tr("%n conversation(s)", "", len(started.rows)))
        self.chat.set_busy(False)
        self.transfer.sync_index()
        self.chat.discover_models()

    def refresh(self, note: str = "") -> None:
        """Read the list again (files changed outside the tab are reconciled); ``note``
        goes to the status line."""
        service = self.service

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            agent.reconcile()
            return listing(agent, note)

        self.jobs.run(
            "conversations: list",
            job,
            {"succeeded": self._on_listing_arrived},
            doing=self.tr("Reading the list…"),
        )

    def reload_models(self) -> None:
        """The models were added, removed or chosen elsewhere (Tools ▸ Models, the welcome's
        "Use it"): list them again, the newly configured one first and selected."""
        if not self.state.ready:
            return  # the start-up listing is still to come, and reads them then
        self.chat.reload_models()

    def _on_listing_arrived(self, result: Any) -> None:
        assert isinstance(result, Listing)
        self._show_listing(result)
        if result.note:
            self.jobs.say(result.note)
        if result.title:
            self.chat.set_title(result.title)

    def _show_listing(self, shown: Listing) -> None:
        self.encryption.show_status(shown.status)
        self.history.show_rows(shown)

    # -- between the panels ----------------------------------------------------------------
    def _on_refresh_requested(self, note: str) -> None:
        self.refresh(note)

    def _on_hits_stale(self) -> None:
        self.history.rerun_search()

    def _on_history_conversation_chosen(self, conversation_id: str) -> None:
        if conversation_id != self.state.current_id or not self.chat.is_shown(conversation_id):
            self.chat.open(conversation_id, None)

    def _on_history_hit_chosen(self, conversation_id: str, index: int) -> None:
        self.chat.open(conversation_id, index)

    def _on_history_new_requested(self) -> None:
        if self.state.chatting:
            return
        self._show_new_conversation()
        self.chat.focus_input()

    def _on_history_current_deleted(self) -> None:
        self._show_new_conversation()

    def _on_history_stop_requested(self) -> None:
        self.chat.stop()

    def _show_new_conversation(self) -> None:
        """A clean new conversation: no current id, empty transcript, nothing selected."""
        self.chat.show_new()
        self.history.clear_selection()

    def _on_chat_opened(self, conversation_id: str) -> None:
        self.history.select(conversation_id)

    def _on_chat_conversation_gone(self, conversation_id: str) -> None:
        """The file of a conversation being opened no longer exists (deleted elsewhere)."""
        current = conversation_id == self.state.current_id
        name = self.chat.title_text() if current else self.history.name(conversation_id)
        text = self.tr("“{0}” no longer exists (deleted outside this tab?).").format(name)
        if current and not self.state.chatting:
            self._show_new_conversation()
            text += " " + self.tr("Your next message starts a new conversation.")
        self.jobs.say(text)
        self.refresh()  # drop it from the list
        self.history.rerun_search(drop=conversation_id)  # and from the hits

    def _on_chat_open_failed(self, conversation_id: str, error: str) -> None:
        # named as listed or as the hit showed it, never by its id (the error's file name)
        self.jobs.say(
            self.tr("“{0}” cannot be opened: {1}").format(self.history.name(conversation_id), error)
        )
        self.refresh(self.jobs.said())  # the list marks it ⚠
        self.history.rerun_search(drop=conversation_id)

    def _on_chat_answer_finished(self) -> None:
        doomed, self.state.delete_after_chat = self.state.delete_after_chat, None
        if doomed is not None:
            self.history.delete(doomed)

    # -- theme -----------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.theme_changed()

    def theme_changed(self) -> None:
        """A theme switch (the window calls it too): names and highlights stay readable."""
        self.jobs.theme_changed()
        self.chat.redraw()

    # -- shutdown --------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Called after the window cancelled and waited for every job."""
        self.state.chatting = False
        self.state.delete_after_chat = None  # no new job while the window closes
