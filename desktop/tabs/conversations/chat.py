"""The conversations tab's chat panel: the model, the transcript, the message to send.

``model_picker`` (the agent lists and loads its own models), ``conversation_title``, the
``transcript`` (one ``QTextBrowser`` page drawn by :mod:`.transcript`: messages as Markdown,
``copy:`` links, an answer of this session marked as checked against past conversations)
and the shared :class:`~desktop.send_row.SendRow` (``chat_input``, ``send``, ``stop_chat``).
An answer streams in as plain text, then the saved conversation is drawn again; Stop ends it
and keeps what was said. A message that never reached the disk goes back into ``chat_input``.
"""

from __future__ import annotations

import html
import threading
from typing import Any

from PySide6.QtCore import QUrl, Signal
from PySide6.QtGui import QGuiApplication, QTextCursor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QTextBrowser, QVBoxLayout, QWidget

from backends.conversations import (
    Conversation,
    ConversationAgent,
    ConversationError,
    ConversationNotFoundError,
    ModelChoice,
    TurnResult,
)
from backends.models.manage import friendly_name
from backends.progress import Progress
from backends.services import Lazy
from desktop import i18n as window_i18n
from desktop.answer_html import WITHHELD_SCHEME, counts
from desktop.markdown import markdown_html
from desktop.send_row import SendRow
from desktop.status_bar import ElidedLabel
from desktop.tabs.conversations.jobs import TabJobs
from desktop.tabs.conversations.results import Composed, Opened, Saved, own_policy
from desktop.tabs.conversations.transcript import (
    COPY_SCHEME,
    OPEN_SCHEME,
    REPHRASE_SCHEME,
    SOURCE_SCHEME,
    checked_marks,
    message_html,
    source_name,
)
from desktop.tabs.conversations.words import counted, role_name, translate
from desktop.workers import Emit


def model_name(choice: ModelChoice) -> str:
    """A model as every place names it (:func:`friendly_name`); a key it does not know, as
    the agent labels it."""
    named = friendly_name(choice.key)
    return named if named != choice.key else choice.label


class ChatPanel(QWidget):
    """The model picker, the transcript and the input row (see the module doc)."""

    #: a message or code block was copied from the transcript (its text)
    copied = Signal(str)
    #: the list is to be read again, the status saying this (an answer was saved...)
    refresh_requested = Signal(str)
    #: a conversation was drawn: the list makes it current
    opened = Signal(str)
    #: the file of a conversation being opened no longer exists (deleted elsewhere)
    conversation_gone = Signal(str)
    #: a conversation could not be opened (its id, why)
    open_failed = Signal(str, str)
    #: an answer ended, however (a conversation confirmed for deletion may go now)
    answer_finished = Signal()

    def __init__(
        self, service: Lazy[ConversationAgent], jobs: TabJobs, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.jobs = jobs
        self.state = jobs.state
        self._open_serial = 0
        #: set by Stop: the answer ends, what was said is saved (marked stopped)
        self._stop_chat = threading.Event()
        #: the message being sent until it is on disk (given back if the turn fails before)
        self._unsaved = ""
        self._message_count = 0
        self._streamed = ""
        #: the turn running answered from the history first (its draft streams after)
        self._composed = False
        #: the messages shown in the transcript (index → text), for their Copy links
        self._shown: dict[int, str] = {}
        #: the conversation on screen, drawn again when the theme changes
        self._last_opened: Opened | None = None
        #: the model key the last message was sent to
        self._asked_key = ""
        #: (conversation, message) whose withheld draft the user opened (folded otherwise)
        self._withheld_shown: set[tuple[str, int]] = set()
        #: answers of this session checked against past conversations (CT9), by
        #: (conversation id, message index): their sentences are shown marked
        self._checks: dict[tuple[str, int], TurnResult] = {}
        self._build()
        self._connect_signals()
        self.set_busy(False)

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        picker_row = QHBoxLayout()
        picker_label = QLabel(translate("ConversationsTab", "Model:"))
        picker_row.addWidget(picker_label)
        self.model_picker = QComboBox()
        self.model_picker.setObjectName("model_picker")
        self.model_picker.setMinimumContentsLength(24)
        # the model's whole name where there is room (it was cut at every window size: the
        # title beside it took two thirds of the row); the title gives way first
        self.model_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        picker_label.setBuddy(self.model_picker)
        picker_row.addWidget(self.model_picker)
        # a long title ends in "…", the whole of it in the tooltip (it was cut at 760 px)
        self.title = ElidedLabel(translate("ConversationsTab", "New conversation"))
        self.title.setObjectName("conversation_title")
        self.title.setMinimumWidth(40)
        picker_row.addWidget(self.title, 1)
        layout.addLayout(picker_row)
        self.transcript = QTextBrowser()
        self.transcript.setObjectName("transcript")
        self.transcript.setOpenLinks(False)
        self.transcript.setProperty("conversation_id", "")
        self.transcript.setProperty("highlighted_message", -1)
        self.transcript.setProperty("checked_messages", "")
        layout.addWidget(self.transcript, 1)
        self.send_row = SendRow(
            input_name="chat_input",
            send_name="send",
            stop_name="stop_chat",
            send_text=translate("ConversationsTab", "Send"),
            stop_text=translate("ConversationsTab", "Stop"),
            placeholder=translate("ConversationsTab", "Write a message and press Enter…"),
            lock_input_while_busy=True,
            default=True,
        )
        #: the row's input box (what is sent, and what a failed turn gives back)
        self.chat_input = self.send_row.input
        layout.addWidget(self.send_row)

    def _connect_signals(self) -> None:
        self.send_row.send_requested.connect(self._on_send_row_send_requested)
        self.send_row.stop_requested.connect(self._on_send_row_stop_requested)
        self.transcript.anchorClicked.connect(self._on_transcript_anchor_clicked)

    # -- the models ------------------------------------------------------------------------
    def set_choices(self, choices: list[ModelChoice]) -> None:
        """The models to offer, the configured one first and selected."""
        self.model_picker.clear()
        for choice in choices:
            self.model_picker.addItem(model_name(choice), choice.key)
        self.model_picker.setCurrentIndex(0)

    def reload_models(self) -> None:
        """List the models again (they were added, removed or chosen elsewhere)."""
        service = self.service

        def job(progress: Progress, emit: Emit) -> list[ModelChoice]:
            return service.get().model_choices()

        self.jobs.run("conversations: models", job, {"succeeded": self._on_models_reloaded})

    def _on_models_reloaded(self, choices: Any) -> None:
        self.set_choices(list(choices))
        self.discover_models()

    def discover_models(self) -> None:
        """Add the models found on this computer and its servers (slow: after the list)."""
        service = self.service

        def job(progress: Progress, emit: Emit) -> list[ModelChoice]:
            return service.get().discover_models()

        self.jobs.run("conversations: models", job, {"succeeded": self._on_models_discovered})

    def _on_models_discovered(self, choices: Any) -> None:
        for choice in choices:
            if self.model_picker.findData(choice.key) < 0:
                self.model_picker.addItem(model_name(choice), choice.key)

    # -- sending ---------------------------------------------------------------------------
    def set_busy(self, busy: bool) -> None:
        """While an answer is written: no new message, Stop shown."""
        self.send_row.set_ready(self.state.ready)
        self.send_row.set_busy(busy)

    def focus_input(self) -> None:
        self.chat_input.setFocus()

    def stop(self) -> None:
        """End the answer being written; what was said is saved (marked stopped)."""
        if self.state.chatting:
            self._stop_chat.set()

    def _on_send_row_send_requested(self, text: str) -> None:
        self._send()  # reads the input itself, as the rephrase link's send does

    def _on_send_row_stop_requested(self) -> None:
        self.stop()

    def _send(self, draft: bool | None = None) -> None:
        """Send the input; ``draft``: True asks the model for a draft of a history answer
        whatever its pass rate ("Ask the model to rephrase")."""
        text = self.chat_input.text().strip()
        if not text or self.state.chatting or not self.state.ready:
            return
        service = self.service
        conversation_id = self.state.current_id
        model_key = self.model_picker.currentData()
        self._asked_key = str(model_key or "")
        stop = self._stop_chat
        stop.clear()
        self.state.answering = conversation_id

        def job(progress: Progress, emit: Emit) -> TurnResult:
            agent = service.get()
            return agent.ask(
                text,
                conversation_id,
                model_key,
                on_token=emit,
                # Stop ends the answer and keeps it; closing the window cancels the job
                should_stop=lambda: stop.is_set() or progress.cancelled,
                on_saved=lambda saved_id: emit(Saved(saved_id)),
                on_answer=lambda answer, passages: emit(Composed(answer, passages)),
                draft=draft,
            )

        self.chat_input.clear()
        self._unsaved = text
        self._append_message(self._message_count, "user", text, "")
        self._append_header("assistant", self.model_picker.currentText())
        self._streamed = ""
        self._composed = False
        self.jobs.run(
            "conversations: chat",
            job,
            {
                "succeeded": self._on_chat_succeeded,
                "item": self._on_chat_item,
                "failed": self._on_chat_failed,
                "finished": self._on_chat_finished,
            },
            doing=translate("ConversationsTab", "Answering…"),
        )
        self.state.chatting = True
        self.set_busy(True)
        self.jobs.say(translate("ConversationsTab", "Thinking…"))

    def _on_chat_item(self, piece: Any) -> None:
        if isinstance(piece, Saved):  # the message is on disk: a new conversation has its id
            self._unsaved = ""
            self.state.answering = piece.conversation_id
            self.state.current_id = piece.conversation_id
            self.transcript.setProperty("conversation_id", piece.conversation_id)
            return
        text = str(piece)
        if isinstance(piece, Composed):  # the answer from the history, at once
            text = piece.answer.text + "\n"
            self._composed = True
            self.jobs.say(translate("ConversationsTab", "Answered from your conversations."))
        elif self._composed and not self._streamed:
            text = translate(
                "ConversationsTab",
                "(The model is rephrasing; shown only if every sentence checks out.) ",
            )
            text += str(piece)
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        if not isinstance(piece, Composed):
            self._streamed += str(piece)
        self.transcript.setTextCursor(cursor)
        self.transcript.ensureCursorVisible()

    def _on_chat_succeeded(self, result: Any) -> None:
        assert isinstance(result, TurnResult)
        if result.conversation_id == self.state.delete_after_chat:
            return  # stopped to be deleted: deleted once the answer has finished
        self.state.current_id = result.conversation_id
        self.transcript.setProperty("conversation_id", result.conversation_id)
        if result.checked or own_policy(result):  # marked when drawn again (``_on_opened``)
            self._checks[(result.conversation_id, result.answer_index)] = result
        self.refresh_requested.emit(self._answered_note(result))
        self.open(result.conversation_id, None)

    def _answered_note(self, result: TurnResult) -> str:
        """The status line after an answer: who answered (or that it stopped, or that no
        model wrote it), and what of the past conversations it was given."""
        asked = self._asked_key
        # the model as every place names it (its provider:model was a name of its own)
        named = friendly_name(asked) if asked else f"{result.provider}:{result.model}"
        note = translate("ConversationsTab", "Answered by {0}").format(named)
        if result.stopped:
            note = translate("ConversationsTab", "Stopped: what was said is kept (marked stopped).")
        if result.retrieval_only:
            note = translate(
                "ConversationsTab",
                "Retrieval-only mode: showing what was found, no generated text.",
            )
        if result.context:
            note += " " + counted(
                result.context,
                translate("ConversationsTab", "(1 passage from past conversations)"),
                translate("ConversationsTab", "({0} passages from past conversations)"),
            )
        if result.context_error:
            note += " " + translate(
                "ConversationsTab", "Past conversations not searched: {0}"
            ).format(result.context_error)
        return note

    def _on_chat_failed(self, message: str, environment: bool) -> None:
        """The status says why (the tab's jobs). A message that never reached the disk goes
        back into the input, nothing lost; the transcript shows what is stored."""
        if self._unsaved:
            if not self.chat_input.text():
                self.chat_input.setText(self._unsaved)
            self._unsaved = ""
        current = self.state.current_id
        if current is not None and current == self.state.delete_after_chat:
            return  # it is deleted next (once the answer has finished)
        if current is not None:
            self.refresh_requested.emit("")  # the status keeps saying why
            self.open(current, None)  # gone (deleted elsewhere)? a new one then
        else:
            self.transcript.clear()
            self._message_count = 0

    def _on_chat_finished(self) -> None:
        self.state.chatting = False
        self.state.answering = None
        self._stop_chat.clear()
        self.set_busy(False)
        self.chat_input.setFocus()
        self.answer_finished.emit()

    def _append_header(self, role: str, meta: str) -> None:
        self.transcript.append(
            f"<p style='margin-top:8px'><b>{html.escape(role_name(role))}</b> "
            f"<span style='color:gray'>{html.escape(meta)}</span></p>"
        )
        self.transcript.append("")

    def _append_message(self, index: int, role: str, content: str, meta: str) -> None:
        self._shown[index] = content
        self.transcript.append(
            message_html(index, role, content, meta, False, translate("ConversationsTab", "Copy"))
        )

    # -- the transcript's links ------------------------------------------------------------
    def _on_transcript_anchor_clicked(self, url: QUrl) -> None:
        """``copy:<i>`` copies message *i*, ``copy:<i>:<k>`` its code block *k*;
        ``source:<i>:<n>`` says which past message answer *i*'s sentence came from;
        ``open:<id>:<i>`` opens a quoted message; ``rephrase:<i>`` asks again for a draft."""
        scheme = url.scheme()
        if scheme == SOURCE_SCHEME:
            self._show_source(url.path())
        elif scheme == OPEN_SCHEME:  # a quoted message, in its conversation
            cid, _, position = url.path().rpartition(":")
            if cid and position.isdigit():
                self.open(cid, int(position))
        elif scheme == REPHRASE_SCHEME:
            question = self._shown.get(int(url.path()) - 1, "") if url.path().isdigit() else ""
            if question and not self.state.chatting:
                self.chat_input.setText(question)
                self._send(draft=True)
        elif scheme == COPY_SCHEME:
            self._copy(url.path())
        elif scheme == WITHHELD_SCHEME and url.path().isdigit():
            self._toggle_withheld(int(url.path()))

    def _toggle_withheld(self, index: int) -> None:
        """Open or fold again what was withheld from answer *index*'s draft, where the
        reader is (drawn again, unless an answer is being written)."""
        opened = self._last_opened
        if opened is None or opened.conversation is None or self.state.chatting:
            return
        key = (opened.conversation.id, index)
        self._withheld_shown ^= {key}
        bar = self.transcript.verticalScrollBar()
        where = bar.value()
        self._draw(opened.conversation, None)
        bar.setValue(where)

    def _copy(self, path: str) -> None:
        parts = path.split(":")
        try:
            index = int(parts[0])
            text = self._shown[index]
            if len(parts) > 1:
                text = markdown_html(text)[1][int(parts[1])]
        except (ValueError, KeyError, IndexError):
            return
        QGuiApplication.clipboard().setText(text)
        self.jobs.say(translate("ConversationsTab", "Copied to the clipboard."))
        self.copied.emit(text)

    def _show_source(self, path: str) -> None:
        index, _, number = path.partition(":")
        key = (self.state.current_id or "", int(index)) if index.isdigit() else None
        result = self._checks.get(key) if key is not None else None
        if result is None or not number.isdigit():
            return
        n = int(number)
        if 0 < n <= len(result.context_passages):
            self.jobs.say(f"[{n}] " + source_name(result.context_passages[n - 1], full=True))

    # -- opening conversations -------------------------------------------------------------
    def is_shown(self, conversation_id: str) -> bool:
        """Whether the transcript shows ``conversation_id`` now."""
        return bool(self.transcript.property("conversation_id") == conversation_id)

    def title_text(self) -> str:
        return str(self.title.text())

    def set_title(self, title: str) -> None:
        self.title.setText(title)

    def open(self, conversation_id: str, highlight: int | None) -> None:
        """Read ``conversation_id`` and draw it, scrolled to message ``highlight``."""
        service = self.service
        self._open_serial += 1
        serial = self._open_serial

        def job(progress: Progress, emit: Emit) -> Opened:
            try:
                conversation = service.get().load(conversation_id)
            except ConversationNotFoundError:  # deleted elsewhere (the CLI, another window)
                return Opened(serial, None, highlight, conversation_id)
            except ConversationError as err:  # unreadable since it was listed or found
                return Opened(
                    serial, None, highlight, conversation_id, f"{err.reason}: {err.detail}"
                )
            return Opened(serial, conversation, highlight, conversation_id)

        self.jobs.run(
            "conversations: open",
            job,
            {"succeeded": self._on_opened},
            doing=translate("ConversationsTab", "Opening the conversation…"),
        )

    def _on_opened(self, opened: Any) -> None:
        assert isinstance(opened, Opened)
        if opened.serial != self._open_serial:
            return  # the user opened another one meanwhile
        conversation = opened.conversation
        if conversation is None and opened.error:
            self.open_failed.emit(opened.conversation_id, opened.error)
            return
        if conversation is None:
            self.conversation_gone.emit(opened.conversation_id)
            return
        self._last_opened = opened
        self.state.current_id = conversation.id
        self.title.setText(conversation.display_name)
        self._draw(conversation, opened.highlight)
        index = self.model_picker.findData(f"{conversation.provider}:{conversation.model}")
        if index >= 0:
            self.model_picker.setCurrentIndex(index)
        self.opened.emit(conversation.id)

    def _draw(self, conversation: Conversation, highlight: int | None) -> None:
        """The whole conversation, its checked answers marked, scrolled to ``highlight``
        (else to the end)."""
        stopped = translate("ConversationsTab", "stopped")
        self._shown = {i: m.content for i, m in enumerate(conversation.history)}
        checks = {
            i: checked_marks(i, result, (conversation.id, i) in self._withheld_shown)
            for i, m in enumerate(conversation.history)
            if (result := self._checks.get((conversation.id, i))) is not None
            and result.answer == m.content
        }
        parts = [
            message_html(
                i,
                m.role,
                m.content,
                " · ".join(
                    x
                    for x in (window_i18n.iso_when(m.time), m.model, stopped if m.stopped else "")
                    if x
                ),
                i == highlight,
                translate("ConversationsTab", "Copy"),
                checks.get(i),
            )
            for i, m in enumerate(conversation.history)
        ]
        self.transcript.setHtml("".join(parts))
        self._mark_properties(conversation.id, sorted(checks))
        self._message_count = len(conversation.history)
        self.transcript.setProperty("conversation_id", conversation.id)
        self.transcript.setProperty("highlighted_message", -1 if highlight is None else highlight)
        if highlight is not None:
            self.transcript.scrollToAnchor(f"msg-{highlight}")
        else:
            self.transcript.moveCursor(QTextCursor.MoveOperation.End)
            self.transcript.ensureCursorVisible()

    def _mark_properties(self, conversation_id: str, checked: list[int]) -> None:
        """For testers: which answers are marked; the last one's sentences by kind."""
        marked = [self._checks[(conversation_id, i)] for i in checked]
        last = marked[-1].checked if marked else ()
        shown = marked[-1].shown if marked and own_policy(marked[-1]) else None
        self.transcript.setProperty("checked_messages", ",".join(map(str, checked)))
        if shown is not None:
            cited, own, withheld = counts(shown)
            self.transcript.setProperty("from_past", cited)
            self.transcript.setProperty("own", own)
            self.transcript.setProperty("withheld", withheld)
            self.transcript.setProperty("answer_mode", shown.mode)
        else:
            self.transcript.setProperty("from_past", sum(c.supported for c in last))
            self.transcript.setProperty("own", sum(not c.supported for c in last))
            self.transcript.setProperty("withheld", 0)
            self.transcript.setProperty("answer_mode", "")

    def show_new(self) -> None:
        """A clean new conversation: no current id, empty transcript, the title says so."""
        self.state.current_id = None
        self._open_serial += 1  # an open still on its way is not shown
        self._message_count = 0
        self._streamed = ""
        self._shown = {}
        self.transcript.clear()
        self.transcript.setProperty("conversation_id", "")
        self.transcript.setProperty("highlighted_message", -1)
        self.transcript.setProperty("checked_messages", "")
        self.title.setText(translate("ConversationsTab", "New conversation"))

    def redraw(self) -> None:
        """The theme changed: draw the conversation on screen again (names and highlights
        stay readable), unless an answer is being written into it."""
        opened = self._last_opened
        if (
            opened is not None
            and opened.conversation is not None
            and opened.serial == self._open_serial
            and not self.state.chatting
            and self.is_shown(opened.conversation.id)
        ):
            self._on_opened(opened)
