"""The memories tab itself: the chat (transcript, proposals, the Send/Stop row) beside the
memory panel (:mod:`~desktop.tabs.memories.panel`), and every job the two start.

Every store and model call runs through the worker pool; this module only draws and wires.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QLabel,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from backends.memories import (
    FoundMemory,
    Hit,
    MemoryAssistant,
    MemoryStatus,
    Proposal,
    RememberOutcome,
    TurnResult,
    Undo,
)
from backends.models.chat import Message
from backends.progress import Progress
from backends.services import Lazy, ModelChoices
from desktop import i18n as window_i18n
from desktop import theme
from desktop.model_picker import ModelPicker
from desktop.send_row import SendRow
from desktop.tabs.memories.bubble import MessageBubble
from desktop.tabs.memories.panel import MEMORY_TEXT_ROLE, MemoryPanel
from desktop.tabs.memories.proposals import ProposalsBox
from desktop.workers import Emit, Job, JobHandle, Slots, WorkerPool

#: a theme switch reaches a widget as one of these
_PALETTE_EVENTS = (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
#: memories shown in the list without a search (the rest are one search away)
LIST_LIMIT = 500
SEARCH_DELAY_MS = 250

_STYLE = """
QFrame#transcript_message {{ border-radius: 8px; padding: 4px; }}
QFrame#transcript_message[role="user"] {{ background: {user_bubble}; margin-left: 48px; }}
QFrame#transcript_message[role="assistant"] {{
    background: {assistant_bubble}; margin-right: 48px; }}
QLabel#message_memories, QLabel#message_status, QLabel#transcript_intro,
QLabel#message_checked_legend, QLabel#message_draft {{ color: {muted}; }}
QLabel#message_memories, QLabel#message_checked_legend {{ font-size: 11px; }}
QLabel#message_draft {{ font-style: italic; }}
QLabel#message_status {{ font-style: italic; }}
QFrame#code_block {{ background: {code}; border-radius: 4px; }}
QFrame#proposal {{ background: {proposal}; border: 1px solid {proposal_border};
    border-radius: 6px; }}
QLabel#memory_status[limited="true"] {{ color: {warning}; font-weight: bold; }}
QLabel#memory_notice[error="true"] {{ color: {error}; }}
"""


@dataclass
class _Exchange:
    """A question, its answer, and what they add to the conversation (once answered)."""

    user: MessageBubble
    answer: MessageBubble
    messages: list[Message] = field(default_factory=list)
    #: the model's draft for it, shown or not (a later draft repeating it is withheld)
    draft: str = ""


class MemoriesTab(QWidget):
    """The memory assistant: chat, memories used, memory panel."""

    #: a turn ended: the conversation (:attr:`history`) may be kept (desktop/thread_list.py)
    transcript_changed = Signal()

    def __init__(
        self,
        service: Lazy[MemoryAssistant],
        models: ModelChoices | None,
        workers: WorkerPool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("memories")
        #: this tab's service, built on first use (only ever inside a worker job)
        self.service = service
        #: which model it answers with (none: no picker; it keeps the model it was built with)
        self.models = models
        self.workers = workers
        self._exchanges: list[_Exchange] = []
        #: the exchange whose question is being edited (it and what follows are greyed)
        self._editing: int | None = None
        self.undo_stack: list[Undo] = []
        self.status: MemoryStatus | None = None
        self._turn: JobHandle | None = None
        self._answer: MessageBubble | None = None
        self._reembed: JobHandle | None = None
        self._refresh_serial = 0
        #: the memories of the previous default model were re-embedded unasked (once)
        self._reembedded = False
        self._ready = False
        self._colors = theme.colors()
        self.setStyleSheet(_STYLE.format(**self._colors))
        self._build()
        self._connect_signals()
        self._open()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setObjectName("memories_splitter")
        splitter.addWidget(self._build_chat())
        splitter.addWidget(self._build_panel())
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(splitter)
        self.undo_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Undo), self)
        self.undo_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.undo_shortcut.setWhatsThis(self.tr("Memories: undo the last change"))
        self.delete_shortcut = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self)
        self.delete_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.delete_shortcut.setWhatsThis(self.tr("Memories: delete the selected memory"))
        self.search_timer = QTimer(self)
        self.search_timer.setObjectName("memory_search_timer")
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(SEARCH_DELAY_MS)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc in the input while a question is being edited keeps the conversation."""
        if (
            watched is self.chat_input
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Escape
            and self._editing is not None
        ):
            self._on_cancel_edit_clicked()
            return True
        return super().eventFilter(watched, event)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in _PALETTE_EVENTS:
            self.theme_changed()

    def theme_changed(self) -> None:
        """A theme switch (the window calls it too): the bubbles' colours follow."""
        if theme.colors() != self._colors:
            self._colors = theme.colors()
            self.setStyleSheet(_STYLE.format(**self._colors))
            for bubble in self.messages():
                bubble.show_checked()

    def _build_chat(self) -> QWidget:
        chat = QWidget()
        layout = QVBoxLayout(chat)
        layout.setContentsMargins(0, 0, 0, 0)
        self.model_picker: ModelPicker | None = None
        if self.models is not None:
            self.model_picker = ModelPicker(self.models, self.workers, self)
            layout.addWidget(self.model_picker, 0, Qt.AlignmentFlag.AlignRight)
        self.transcript = QScrollArea()
        self.transcript.setObjectName("transcript")
        self.transcript.setWidgetResizable(True)
        self.transcript.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        body = QWidget()
        body.setObjectName("transcript_body")
        self.transcript_body = body
        self.messages_layout = QVBoxLayout(body)
        self.messages_layout.setSpacing(8)
        self.intro = QLabel(
            self.tr(
                "Tell me about yourself and ask me anything: I recall what you told me before, "
                "even in another session. “Remember that …” stores a fact; every message has a "
                "Remember button."
            )
        )
        self.intro.setObjectName("transcript_intro")
        self.intro.setWordWrap(True)
        self.messages_layout.addWidget(self.intro)
        self.messages_layout.addStretch(1)
        self.transcript.setWidget(body)
        layout.addWidget(self.transcript, 1)

        self.proposals = ProposalsBox()
        layout.addWidget(self.proposals)

        self.send_row = SendRow(
            send_text=self.tr("Send"),
            stop_text=self.tr("Stop"),
            placeholder=self.tr("Message (Enter to send)…"),
        )
        self.chat_input = self.send_row.input
        self.send = self.send_row.send_button
        self.stop = self.send_row.stop_button
        self.cancel_edit = QPushButton(self.tr("Cancel edit"))
        self.cancel_edit.setObjectName("cancel_edit")
        self.cancel_edit.setToolTip(self.tr("Keep the conversation as it was (Esc)"))
        self.cancel_edit.setVisible(False)
        self.send_row.add_widget(self.cancel_edit)
        self.chat_input.installEventFilter(self)  # Esc cancels an edit
        layout.addWidget(self.send_row)
        return chat

    def _build_panel(self) -> QWidget:
        self.panel = MemoryPanel()
        panel = self.panel
        self.memories_used_title = panel.memories_used_title
        self.memories_used = panel.memories_used
        self.memory_status = panel.memory_status
        self.reembed_all = panel.reembed_all
        self.reembed_progress = panel.reembed_progress
        self.reembed_cancel = panel.reembed_cancel
        self.memory_search_box = panel.memory_search_box
        self.memory_list = panel.memory_list
        self.memory_new = panel.memory_new
        self.memory_add = panel.memory_add
        self.memory_edit = panel.memory_edit
        self.memory_delete = panel.memory_delete
        self.memory_notice = panel.memory_notice
        self.memory_undo = panel.memory_undo
        return panel

    def _connect_signals(self) -> None:
        self.send_row.send_requested.connect(self._on_send_requested)
        self.send_row.stop_requested.connect(self._on_stop_requested)
        self.cancel_edit.clicked.connect(self._on_cancel_edit_clicked)
        self.proposals.accept_requested.connect(self._on_accept_requested)
        self.memory_search_box.textChanged.connect(self._on_search_text_changed)
        self.search_timer.timeout.connect(self._on_search_timer_timeout)
        self.memory_list.itemChanged.connect(self._on_item_changed)
        self.memory_new.returnPressed.connect(self._on_memory_add_clicked)
        self.memory_add.clicked.connect(self._on_memory_add_clicked)
        self.memory_edit.clicked.connect(self._on_memory_edit_clicked)
        self.memory_delete.clicked.connect(self._on_memory_delete_clicked)
        self.memory_undo.clicked.connect(self._on_undo_triggered)
        self.undo_shortcut.activated.connect(self._on_undo_triggered)
        self.delete_shortcut.activated.connect(self._on_delete_shortcut_activated)
        self.reembed_all.clicked.connect(self._on_reembed_all_clicked)
        self.reembed_cancel.clicked.connect(self._on_reembed_cancel_clicked)
        bar = self.transcript.verticalScrollBar()
        bar.rangeChanged.connect(self._on_transcript_range_changed)

    # -- jobs ------------------------------------------------------------------------------
    def _start(self, name: str, job: Job, connect: Mapping[str, Slots]) -> JobHandle:
        """Start ``job`` wired by ``connect``; whatever fails is said in the notice first."""
        wiring = dict(connect)
        failed = wiring.get("failed", [])
        wiring["failed"] = [
            self._on_job_failed,
            *(failed if isinstance(failed, list | tuple) else [failed]),
        ]
        return self.workers.start(name, job, connect=wiring)

    def _open(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> MemoryStatus:
            return service.get().open()

        self._start(
            "memories: open",
            job,
            {"succeeded": self._on_open_succeeded, "failed": self._on_open_failed},
        )

    def _on_open_succeeded(self, status: MemoryStatus) -> None:
        self._ready = True
        self.send_row.set_ready(True)
        self._show_status(status)
        self.refresh()

    def _on_open_failed(self, message: str, environment: bool) -> None:
        self.panel.show_open_failed(message)

    def refresh(self) -> None:
        """Reload the memory list (and status) for the current search text."""
        service = self.service
        query = self.memory_search_box.text()
        self._refresh_serial += 1
        serial = self._refresh_serial

        def job(progress: Progress, emit: Emit) -> tuple[int, str, list[FoundMemory], MemoryStatus]:
            assistant = service.get()
            return serial, query, assistant.find(query, limit=LIST_LIMIT), assistant.status()

        self._start("memories: list", job, {"succeeded": self._on_refresh_succeeded})

    def _on_refresh_succeeded(
        self, result: tuple[int, str, list[FoundMemory], MemoryStatus]
    ) -> None:
        serial, _query, found, status = result
        if serial != self._refresh_serial:
            return  # an older refresh finishing late
        self._show_status(status)
        self.panel.show_found(found)

    def _show_status(self, status: MemoryStatus) -> None:
        self.status = status
        running = self._reembed is not None
        self.panel.show_status(status, reembedding=running)
        if status.reembed_now and not running and not self._reembedded:
            self._reembedded = True  # memories of the previous default model: once, unasked
            self._on_reembed_all_clicked()

    def _on_job_failed(self, message: str, environment: bool) -> None:
        if environment:
            self._notice(message, error=True)
        else:
            self._notice(self.tr("Something went wrong (see the log): {0}").format(message), True)

    def _notice(self, text: str, error: bool = False) -> None:
        self.panel.notice(text, error)

    # -- chat ------------------------------------------------------------------------------
    def _add_bubble(self, role: str, text: str) -> MessageBubble:
        bubble = MessageBubble(role, text)
        bubble.remember_button.clicked.connect(self._on_remember_message_clicked)
        bubble.edit_requested.connect(self._on_edit_message_requested)
        bubble.regenerate_requested.connect(self._on_regenerate_requested)
        bubble.copied.connect(self._on_message_copied)
        bubble.cite_activated.connect(self._on_cite_activated)
        bubble.rephrase_requested.connect(self._on_rephrase_requested)
        self.messages_layout.insertWidget(self.messages_layout.count() - 1, bubble)
        return bubble

    def messages(self) -> list[MessageBubble]:
        return [w for w in self.transcript_body.findChildren(MessageBubble)]

    @property
    def history(self) -> list[Message]:
        """The conversation so far, as the model gets it (a stopped answer is part of it)."""
        return [m for exchange in self._exchanges for m in exchange.messages]

    def _on_send_requested(self, message: str) -> None:
        if self._turn is not None or not self._ready:
            return
        self.chat_input.clear()
        if self._editing is not None:  # the edited question replaces it and what followed
            self._drop_exchanges(self._editing)
            self._editing = None
            self.cancel_edit.setVisible(False)
            self._notice("")
        user = self._add_bubble("user", message)
        user.remember_button.setEnabled(True)
        self._ask(message, user)

    def _ask(self, message: str, user: MessageBubble, draft: bool | None = None) -> None:
        """Ask ``message`` (shown in ``user``) after the exchanges kept so far; ``draft``:
        True asks the model for a draft whatever its pass rate."""
        self._answer = self._add_bubble("assistant", "")
        self._answer.set_status(self.tr("Thinking…"))
        drafts = [e.draft for e in self._exchanges if e.draft]
        self._exchanges.append(_Exchange(user, self._answer))
        history = self.history
        service = self.service

        def job(progress: Progress, emit: Emit) -> TurnResult:
            return service.get().turn(
                message,
                history,
                on_token=emit,
                should_stop=lambda: progress.cancelled,
                on_answer=lambda answer, used: emit((answer, used)),
                draft=draft,
                earlier_drafts=drafts,
            )

        self._turn = self._start(
            "memories: turn",
            job,
            {
                "succeeded": self._on_turn_succeeded,
                "item": self._on_turn_item,
                "finished": self._on_turn_finished,
                "cancelled": self._on_turn_cancelled,
                "failed": self._on_turn_failed,
            },
        )
        self.send_row.set_busy(True)
        self._update_message_actions()

    def _on_turn_item(self, piece: object) -> None:
        if self._answer is None:
            return
        if isinstance(piece, tuple):  # the composed answer and the memories it cites
            answer, used = piece
            self._answer.show_answer(answer, used)
            if answer.sentences:
                self._show_used(self._exchanges[-1].user.text, used)
        else:
            self._answer.append_draft(str(piece))

    def _on_turn_succeeded(self, result: TurnResult) -> None:
        bubble = self._answer
        note = ""
        if result.remembered is None and not result.used:
            note = self.tr("No memory reached similarity {0}").format(
                window_i18n.number(result.threshold, 2)
            )
            if self.status is not None and self.status.recall_limited:
                note += " — " + self.tr("recall is limited until the memories are re-embedded")
        marker = self.tr("[stopped]") if result.stopped else ""
        if bubble is not None:
            bubble.finish(
                result.answer,
                result.used,
                note,
                marker,
                result.checked,
                shown=result.shown,
                skipped=result.draft_skipped,
            )
        # a stopped answer stays part of the conversation: the next question may refer to it
        for exchange in self._exchanges:
            if exchange.answer is bubble:
                exchange.messages = [
                    Message("user", result.message),
                    Message("assistant", result.answer),
                ]
                exchange.draft = result.shown.draft if result.shown is not None else ""
        if result.remembered is None:  # a "remember that" turn recalls nothing
            self._show_used(result.message, result.used)
        if result.remembered is not None:
            self._after_outcome(result.remembered)
        for proposal in result.proposals:
            self.proposals.add(proposal)

    def _on_turn_failed(self, message: str, environment: bool) -> None:
        if self._answer is not None:
            self._answer.finish(self.tr("[No answer: {0}]").format(message), ())

    def _on_turn_cancelled(self) -> None:
        bubble = self._answer
        if bubble is None:
            return
        shown = bubble.shown if bubble.shown is not None and bubble.shown.sentences else None
        hits = bubble.hits if shown is not None else ()
        bubble.finish(bubble.text, hits, marker=self.tr("[stopped]"), shown=shown)

    def _on_turn_finished(self) -> None:
        self._turn = None
        self._answer = None
        self.send_row.set_busy(False)
        self._update_message_actions()
        self.transcript_changed.emit()

    def show_conversation(self, messages: list[Message]) -> None:
        """Show a kept thread's messages, or none (a new thread); nothing is asked."""
        if self._turn is not None:
            return
        self._drop_exchanges(0)
        self._editing = None
        self.cancel_edit.setVisible(False)
        for asked, answer in zip(messages[::2], messages[1::2], strict=False):
            user = self._add_bubble("user", asked.content)
            user.remember_button.setEnabled(True)
            reply = self._add_bubble("assistant", "")
            reply.finish(answer.content, ())
            self._exchanges.append(_Exchange(user, reply, [asked, answer]))
        self._update_message_actions()

    def _on_stop_requested(self) -> None:
        if self._turn is not None:
            self._turn.cancel()
            self.send_row.show_stopping(self.tr("Cancelling…"))
            if self._answer is not None:
                self._answer.set_status(self.tr("Cancelling…"))

    def _update_message_actions(self) -> None:
        """Edit on every question and Regenerate on the last answer, while nothing runs."""
        idle = self._turn is None
        for index, exchange in enumerate(self._exchanges):
            exchange.user.set_actions(edit=idle)
            last = index == len(self._exchanges) - 1
            exchange.answer.set_actions(regenerate=idle and last)

    def _drop_exchanges(self, start: int, keep_user: bool = False) -> None:
        """Forget the exchanges from ``start`` on (bubbles and history)."""
        for index, exchange in enumerate(self._exchanges[start:]):
            bubbles = (
                [exchange.answer]
                if keep_user and index == 0
                else [
                    exchange.user,
                    exchange.answer,
                ]
            )
            for bubble in bubbles:
                bubble.setParent(None)
                bubble.deleteLater()
        del self._exchanges[start:]

    def _exchange_of(self, bubble: object) -> int | None:
        for index, exchange in enumerate(self._exchanges):
            if bubble is exchange.user or bubble is exchange.answer:
                return index
        return None

    def _on_regenerate_requested(self) -> None:
        """Ask the last question again: its answer is replaced."""
        index = self._exchange_of(self.sender())
        if index is None or index != len(self._exchanges) - 1 or self._turn is not None:
            return
        if not self._ready:
            return
        exchange = self._exchanges[index]
        message = exchange.user.text
        self._drop_exchanges(index, keep_user=True)
        self._ask(message, exchange.user)

    def _on_rephrase_requested(self) -> None:
        """ "Ask the model to rephrase": the last question again, with a draft asked of the
        model whatever its pass rate (shown only if it passes)."""
        bubble = self.sender()
        index = self._exchange_of(bubble)
        if index is None or index != len(self._exchanges) - 1 or self._turn is not None:
            return
        if not self._ready:
            return
        exchange = self._exchanges[index]
        message = exchange.user.text
        self._drop_exchanges(index, keep_user=True)
        self._ask(message, exchange.user, draft=True)

    def _on_edit_message_requested(self) -> None:
        """Edit a question and send it again. The text waits in the input, selected; the
        question and what followed are greyed and leave the conversation only when the new
        one is sent — Esc or "Cancel edit" keeps them."""
        index = self._exchange_of(self.sender())
        if index is None or self._turn is not None:
            return
        self._on_cancel_edit_clicked()
        self._editing = index
        for exchange in self._exchanges[index:]:
            exchange.user.setEnabled(False)
            exchange.answer.setEnabled(False)
        self.chat_input.setText(self._exchanges[index].user.text)
        self.chat_input.selectAll()
        self.chat_input.setFocus()
        self.cancel_edit.setVisible(True)
        self._notice(
            self.tr(
                "Editing a question: Enter sends it in place of the greyed messages; Esc keeps "
                "them."
            )
        )

    def _on_cancel_edit_clicked(self) -> None:
        if self._editing is None:
            return
        for exchange in self._exchanges[self._editing :]:
            exchange.user.setEnabled(True)
            exchange.answer.setEnabled(True)
        self._editing = None
        self.cancel_edit.setVisible(False)
        self.chat_input.clear()
        self._notice("")

    def _on_message_copied(self, text: str) -> None:
        self._notice(self.tr("Copied to the clipboard."))

    def _show_used(self, question: str, hits: tuple[Hit, ...]) -> None:
        self.panel.show_used(question, hits)

    def _on_cite_activated(self, number: int) -> None:
        """A ✓ [n] of an answer: its memories used are listed, memory n selected."""
        bubble = self.sender()
        index = self._exchange_of(bubble)
        if index is None or not isinstance(bubble, MessageBubble):
            return
        self._show_used(self._exchanges[index].user.text, bubble.hits)
        self.panel.select_used(number)

    def _on_transcript_range_changed(self, minimum: int, maximum: int) -> None:
        self.transcript.verticalScrollBar().setValue(maximum)

    def _on_remember_message_clicked(self) -> None:
        button = self.sender()
        bubble = button.parent() if button is not None else None
        if not isinstance(bubble, MessageBubble) or not bubble.text.strip():
            return
        self._remember(bubble.text, "message")

    # -- creating, editing, deleting memories ----------------------------------------------
    def _remember(self, text: str, source: str) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> RememberOutcome:
            return service.get().remember(text, source=source)

        self._start("memories: remember", job, {"succeeded": self._on_outcome})

    def _on_memory_add_clicked(self) -> None:
        text = self.memory_new.text().strip()
        if text:
            self.memory_new.clear()
            self._remember(text, "user")

    def _on_outcome(self, outcome: RememberOutcome) -> None:
        self._after_outcome(outcome)

    def _after_outcome(self, outcome: RememberOutcome) -> None:
        if outcome.status != "near_duplicate":  # proposals of this text are answered now
            self.proposals.answered(outcome.text)
        if outcome.status == "near_duplicate":
            proposal = outcome.proposal
            if proposal is not None:
                self.proposals.add(proposal)
            self._notice(
                self.tr(
                    "A very similar memory exists: “{0}” ({1}). Update it or keep both?"
                ).format(outcome.existing, window_i18n.number(outcome.similarity, 2))
            )
            return
        if outcome.status == "duplicate":
            self._notice(self.tr("Already remembered: “{0}”").format(outcome.text))
            return
        if outcome.status == "updated":
            self._notice(self.tr("Updated: “{0}” → “{1}”").format(outcome.existing, outcome.text))
        else:
            self._notice(self.tr("Remembered: “{0}”").format(outcome.text))
        if outcome.undo is not None:
            self._push_undo(outcome.undo)
        self.refresh()

    def _on_accept_requested(self, proposal: Proposal, keep_both: bool) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> RememberOutcome:
            return service.get().accept(proposal, keep_both=keep_both)

        self._start("memories: accept proposal", job, {"succeeded": self._on_outcome})

    def _on_memory_edit_clicked(self) -> None:
        item = self.memory_list.currentItem()
        if item is not None:
            self.memory_list.editItem(item)  # the delegate edits the text without similarity

    def _on_item_changed(self, item: QListWidgetItem) -> None:
        """Only a real edit gets here: the list is filled with signals blocked, and the
        delegate writes back only a changed text."""
        old = str(item.data(MEMORY_TEXT_ROLE))
        new = item.text().strip()
        if not new or new == old:
            return
        service = self.service

        def job(progress: Progress, emit: Emit) -> RememberOutcome:
            return service.get().update(old, new, source="edit")

        self._start(
            "memories: edit", job, {"succeeded": self._on_outcome, "failed": self._on_edit_failed}
        )

    def _on_edit_failed(self, message: str, environment: bool) -> None:
        self.refresh()  # put the list back as it is stored

    def _on_memory_delete_clicked(self) -> None:
        item = self.memory_list.currentItem()
        if item is None:
            return
        text = str(item.data(Qt.ItemDataRole.UserRole))
        row = self.memory_list.row(item)
        self.memory_list.takeItem(row)  # at once; the store follows in the worker
        service = self.service

        def job(progress: Progress, emit: Emit) -> Undo:
            return service.get().delete(text)

        self._start(
            "memories: delete",
            job,
            {"succeeded": self._on_delete_succeeded, "failed": self._on_edit_failed},
        )

    def _on_delete_shortcut_activated(self) -> None:
        if self.memory_list.hasFocus():
            self._on_memory_delete_clicked()

    def _on_delete_succeeded(self, undo: Undo) -> None:
        self._push_undo(undo)
        text = undo.restore[0].memory.text if undo.restore else ""
        self._notice(self.tr("Deleted “{0}”. Undo brings it back (Ctrl+Z).").format(text))
        self.refresh()

    def _push_undo(self, undo: Undo) -> None:
        self.undo_stack.append(undo)
        self.panel.show_undo(undo.description)

    def _on_undo_triggered(self) -> None:
        if not self.undo_stack:
            return
        undo = self.undo_stack.pop()
        self.memory_undo.setEnabled(bool(self.undo_stack))  # its tooltip says the one before
        service = self.service

        def job(progress: Progress, emit: Emit) -> Undo:
            service.get().undo(undo)
            return undo

        self._start("memories: undo", job, {"succeeded": self._on_undo_succeeded})

    def _on_undo_succeeded(self, undo: Undo) -> None:
        self._notice(self.tr("Undone: {0}").format(undo.description))
        self.refresh()

    def _on_search_text_changed(self, text: str) -> None:
        self.search_timer.start()

    def _on_search_timer_timeout(self) -> None:
        """Typing paused: the list shows what the search box says."""
        self.refresh()

    # -- re-embedding ----------------------------------------------------------------------
    def _on_reembed_all_clicked(self) -> None:
        if self._reembed is not None:
            return
        service = self.service

        def job(progress: Progress, emit: Emit) -> int:
            return service.get().reembed(progress)

        self._reembed = self._start(
            "memories: re-embed",
            job,
            {
                "succeeded": self._on_reembed_succeeded,
                "progress": self._on_reembed_progress,
                "cancelled": self._on_reembed_cancelled,
                "finished": self._on_reembed_finished,
            },
        )
        self.panel.show_reembedding()

    def _on_reembed_progress(self, done: int, total: int, message: str) -> None:
        self.panel.show_reembed_progress(done, total)

    def _on_reembed_cancel_clicked(self) -> None:
        if self._reembed is not None:
            self._reembed.cancel()

    def _on_reembed_succeeded(self, count: int) -> None:
        self._notice(self.tr("Re-embedded {0} memories: all are searched again.").format(count))

    def _on_reembed_cancelled(self) -> None:
        self._notice(
            self.tr(
                "Re-embedding stopped; what was done is kept. Recall stays limited until it "
                "finishes."
            )
        )

    def _on_reembed_finished(self) -> None:
        self._reembed = None
        self.panel.hide_reembedding()
        self.refresh()

    def shutdown(self) -> None:
        """Called on window close, after the workers stopped."""
        self.search_timer.stop()
