"""The personal memory assistant's tab (PA1–PA5): a chat beside the memories it keeps.

Left: the conversation (``transcript``, ``chat_input``, ``send``), a "Remember" button on
every message, and the facts proposed from the conversation waiting for a yes. Right: the
memories used by the last answer with their similarity (``memories_used``), and the memory
panel: search, add, edit, delete with undo, and — when the embedder changed — why recall is
limited and a cancellable "Re-embed all".

Every store and model call runs through the worker pool; this module only draws.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import (
    QAbstractItemModel,
    QEvent,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStyledItemDelegate,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.answers import MODEL, Answer, Shown
from backends.grounding import CheckedSentence
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
from desktop import theme
from desktop.answer_html import answer_html, counts
from desktop.markdown import MessageView
from desktop.model_picker import ModelPicker
from desktop.send_row import SendRow
from desktop.workers import Emit, JobHandle, WorkerPool

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


#: where a memory's own text is kept on its list item (the shown text may add a similarity)
MEMORY_TEXT_ROLE = Qt.ItemDataRole.UserRole


class _MemoryTextDelegate(QStyledItemDelegate):
    """Edits a memory's own text, never the similarity shown beside a search hit."""

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        if isinstance(editor, QLineEdit):
            editor.setText(str(index.data(MEMORY_TEXT_ROLE) or ""))
        else:
            super().setEditorData(editor, index)

    def setModelData(
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        if not isinstance(editor, QLineEdit):
            super().setModelData(editor, model, index)
            return
        new = editor.text().strip()
        if new and new != str(index.data(MEMORY_TEXT_ROLE) or ""):
            model.setData(index, new, Qt.ItemDataRole.EditRole)  # itemChanged: a real edit


#: the link of a ✓ [n] mark: memory n of the memories used (1-based)
CITE_SCHEME = "memory"


class MessageBubble(MessageView):
    """One message of the transcript (Markdown, copy, edit / regenerate) with "Remember".

    An answer is shown as :mod:`backends.answers` made it (``message_checked``, properties
    ``checked``, ``mode``, ``from_memories``, ``own``, ``withheld``): what a memory states
    with ✓ and its ``[n]`` (a ``memory:n`` link, ``cite_activated``), the model's own words
    muted, the draft's withheld sentences struck out with why; the legend
    (``message_checked_legend``) says how the answer was made. The answer composed from the
    memories shows at once (:meth:`show_answer`); the model's draft streams below it
    (``message_draft``) and replaces it only when it passes. When the model's drafts rarely
    pass none is asked for: "Ask the model to rephrase" (``rephrase_answer``) asks.
    """

    #: a ✓ [n] mark was clicked: memory n (1-based) of this answer's memories used
    cite_activated = Signal(int)
    #: "Ask the model to rephrase" was clicked
    rephrase_requested = Signal()

    def __init__(self, role: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(role, text, parent)
        self.hits: tuple[Hit, ...] = ()
        self.checked: tuple[CheckedSentence, ...] = ()
        self.shown: Answer | None = None
        self._draft = ""
        self._marker = ""
        self._message: str | None = None  # set by finish(); until then the streamed text
        self.remember_button = QToolButton()
        self.remember_button.setObjectName("remember_message")
        self.remember_button.setText(self.tr("Remember"))
        self.remember_button.setToolTip(self.tr("Store this message as a memory"))
        self.remember_button.setAutoRaise(True)
        self.remember_button.setEnabled(False)
        self.add_header_button(self.remember_button)
        self.memories_label = QLabel("")
        self.memories_label.setObjectName("message_memories")
        self.memories_label.setWordWrap(True)
        self.memories_label.setVisible(False)
        self.checked_label = QLabel("")
        self.checked_label.setObjectName("message_checked")
        self.checked_label.setTextFormat(Qt.TextFormat.RichText)
        self.checked_label.setWordWrap(True)
        self.checked_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.checked_label.setProperty("checked", False)
        self.checked_label.setVisible(False)
        self.draft_label = QLabel("")
        self.draft_label.setObjectName("message_draft")
        self.draft_label.setWordWrap(True)
        self.draft_label.setVisible(False)
        self.checked_legend = QLabel("")
        self.checked_legend.setObjectName("message_checked_legend")
        self.checked_legend.setWordWrap(True)
        self.checked_legend.setVisible(False)
        self.rephrase_button = QPushButton(self.tr("Ask the model to rephrase"))
        self.rephrase_button.setObjectName("rephrase_answer")
        self.rephrase_button.setVisible(False)
        layout = self.layout()
        assert layout is not None
        layout.addWidget(self.checked_label)  # just after the body (hidden when it shows)
        layout.addWidget(self.draft_label)
        layout.addWidget(self.checked_legend)
        layout.addWidget(self.memories_label)
        self.rephrase_button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.rephrase_button)
        self.checked_label.linkActivated.connect(self._on_checked_link_activated)
        self.rephrase_button.clicked.connect(self.rephrase_requested)

    @property
    def text(self) -> str:
        """The message itself (what "Remember" stores), without display marks."""
        if self._message is not None:
            return self._message
        if self.shown is not None and self.shown.sentences:
            return self.shown.text
        return self.markdown()

    def copy_text(self) -> str:
        return self.text

    def show_answer(self, answer: Answer, hits: tuple[Hit, ...]) -> None:
        """The answer composed from the memories, shown at once (before any draft)."""
        self.shown = answer
        self.hits = hits
        if answer.sentences:
            self.set_status("")
            self.show_checked()

    def append_draft(self, piece: str) -> None:
        """A piece of the model's draft: below a composed answer, muted, as a draft; as the
        answer itself for a question not about the user (labelled when finished)."""
        if self.shown is None or not self.shown.sentences:
            self.append(piece)
            return
        self._draft += piece
        self.draft_label.setText(
            self.tr(
                "The model is rephrasing (shown only if every sentence checks out): {0}"
            ).format(self._draft.strip())
        )
        self.draft_label.setVisible(True)

    def finish(
        self,
        text: str,
        hits: tuple[Hit, ...],
        note: str = "",
        marker: str = "",
        checked: tuple[CheckedSentence, ...] = (),
        shown: Answer | None = None,
        skipped: bool = False,
    ) -> None:
        """Show the final ``text``; ``marker`` (e.g. "[stopped]") is shown after it only;
        ``shown``: how it was made (its sentences' kinds); ``skipped``: no draft was asked of
        the model (offer "Ask the model to rephrase")."""
        self._message = text
        self.set_status("")
        self.set_text(f"{text} {marker}".strip() if marker else text)
        self.hits = hits
        self.checked = checked
        self.shown = shown
        self._marker = marker
        self._draft = ""
        self.draft_label.setVisible(False)
        self.rephrase_button.setVisible(skipped)
        self.remember_button.setEnabled(bool(text.strip()))
        if hits:
            lines = [f"[{n}] {h.similarity:.2f}  {h.text}" for n, h in enumerate(hits, 1)]
            self.memories_label.setText(self.tr("Memories used:") + "\n" + "\n".join(lines))
            self.memories_label.setVisible(True)
        elif note:
            self.memories_label.setText(note)
            self.memories_label.setVisible(True)
        self.show_checked()

    def show_checked(self) -> None:
        """Draw the answer's sentences by kind (again, in the theme's colours); the plain
        Markdown when there is no answer to mark (a failed turn, "remember that", an answer
        of the model's own with code in it)."""
        shown = self.shown
        cited, own, withheld = counts(shown) if shown is not None else (0, 0, 0)
        label = self.checked_label
        label.setProperty("mode", shown.mode if shown is not None else "")
        label.setProperty("from_memories", cited)
        label.setProperty("own", own)
        label.setProperty("withheld", withheld)
        markdown = (
            shown is not None and shown.mode == MODEL and not withheld and _has_code(self.text)
        )
        if shown is None or not (shown.sentences or withheld) or markdown:
            label.setProperty("checked", False)
            label.setVisible(False)
            self.body.setVisible(True)
            self.checked_legend.setVisible(markdown)
            if markdown and shown is not None:
                self.checked_legend.setText(shown.heading)
            return
        colours = theme.colors()

        def cite(sentence: Shown) -> str:
            hit = self.hits[sentence.number - 1] if 0 < sentence.number <= len(self.hits) else None
            title = html.escape(hit.text if hit is not None else "", quote=True)
            return (
                f'<a href="{CITE_SCHEME}:{sentence.number}" title="{title}" '
                f'style="color:{colours["ok"]}; text-decoration:none">'
                f"<small>✓&nbsp;[{sentence.number}]</small></a>"
            )

        marked = answer_html(
            shown,
            cite,
            colours["muted"],
            withheld_title=self.tr("Withheld from the model's draft (not an answer):"),
        )
        if self._marker:
            marked += f'<p style="color:{colours["muted"]}">{html.escape(self._marker)}</p>'
        label.setProperty("checked", True)
        label.setText(marked)
        label.setToolTip(
            self.tr("✓ [n]: stated by memory n of the memories used (click to select it)")
        )
        label.setVisible(True)
        self.body.setVisible(False)
        parts = [shown.heading] if shown.heading else []
        if cited:
            parts.append(self.tr("✓ [n]: a memory you told me says it (click to see which)"))
        if own:
            parts.append(self.tr("in grey italics: the model's own words, not from your memories"))
        if withheld:
            parts.append(self.tr("struck out: the model's draft, withheld as unsupported"))
        self.checked_legend.setText(" · ".join(parts))
        self.checked_legend.setVisible(bool(parts))

    def _on_checked_link_activated(self, link: str) -> None:
        scheme, _, number = link.partition(":")
        if scheme == CITE_SCHEME and number.isdigit():
            self.cite_activated.emit(int(number))


def _has_code(text: str) -> bool:
    """Code blocks or headings: the model's Markdown is shown as it is, not re-flowed."""
    return "```" in text or any(line.lstrip().startswith("#") for line in text.splitlines())


@dataclass
class _Exchange:
    """A question, its answer, and what they add to the conversation (once answered)."""

    user: MessageBubble
    answer: MessageBubble
    messages: list[Message] = field(default_factory=list)
    #: the model's draft for it, shown or not (a later draft repeating it is withheld)
    draft: str = ""


class ProposalRow(QFrame):
    """A memory proposed from the conversation (or a near duplicate) waiting for the user."""

    def __init__(self, proposal: Proposal, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposal")
        self.proposal = proposal
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        if proposal.kind == "update":
            text = self.tr("Update “{0}” to “{1}”? (similarity {2:.2f})").format(
                proposal.existing, proposal.text, proposal.similarity
            )
        else:
            text = self.tr("Remember “{0}”?").format(proposal.text)
        self.label = QLabel(text)
        self.label.setObjectName("proposal_text")
        self.label.setWordWrap(True)
        layout.addWidget(self.label, 1)
        self.accept_button = QPushButton(
            self.tr("Update") if proposal.kind == "update" else self.tr("Remember")
        )
        self.accept_button.setObjectName("proposal_accept")
        layout.addWidget(self.accept_button)
        self.keep_both_button = QPushButton(self.tr("Keep both"))
        self.keep_both_button.setObjectName("proposal_keep_both")
        self.keep_both_button.setVisible(proposal.kind == "update")
        layout.addWidget(self.keep_both_button)
        self.dismiss_button = QPushButton(self.tr("Dismiss"))
        self.dismiss_button.setObjectName("proposal_dismiss")
        layout.addWidget(self.dismiss_button)


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

        self.proposals = QFrame()
        self.proposals.setObjectName("proposals")
        self.proposals_layout = QVBoxLayout(self.proposals)
        self.proposals_layout.setContentsMargins(0, 0, 0, 0)
        self.proposals.setVisible(False)
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
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 0, 0)

        self.memories_used_title = QLabel(self.tr("<b>Memories used by the last answer</b>"))
        self.memories_used_title.setObjectName("memories_used_title")
        self.memories_used_title.setWordWrap(True)
        layout.addWidget(self.memories_used_title)
        self.memories_used = QTreeWidget()
        self.memories_used.setObjectName("memories_used")
        self.memories_used.setHeaderLabels(
            [self.tr("Similarity"), self.tr("Memory"), self.tr("Why it was recalled")]
        )
        self.memories_used.setRootIsDecorated(False)
        self.memories_used.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.memories_used.setMaximumHeight(140)
        layout.addWidget(self.memories_used)

        title = QLabel(self.tr("<b>Memories</b>"))
        layout.addWidget(title)
        self.memory_status = QLabel(self.tr("Loading memories…"))
        self.memory_status.setObjectName("memory_status")
        self.memory_status.setWordWrap(True)
        layout.addWidget(self.memory_status)
        reembed_row = QHBoxLayout()
        self.reembed_all = QPushButton(self.tr("Re-embed all"))
        self.reembed_all.setObjectName("reembed_all")
        self.reembed_all.setToolTip(
            self.tr("Give every memory a vector of the current embedder so all are searched")
        )
        self.reembed_all.setVisible(False)
        reembed_row.addWidget(self.reembed_all)
        self.reembed_progress = QProgressBar()
        self.reembed_progress.setObjectName("reembed_progress")
        self.reembed_progress.setVisible(False)
        reembed_row.addWidget(self.reembed_progress, 1)
        self.reembed_cancel = QPushButton(self.tr("Cancel"))
        self.reembed_cancel.setObjectName("reembed_cancel")
        self.reembed_cancel.setVisible(False)
        reembed_row.addWidget(self.reembed_cancel)
        layout.addLayout(reembed_row)

        self.memory_search_box = QLineEdit()
        self.memory_search_box.setObjectName("memory_search_box")
        self.memory_search_box.setPlaceholderText(self.tr("Search memories…"))
        self.memory_search_box.setClearButtonEnabled(True)
        layout.addWidget(self.memory_search_box)

        self.memory_list = QListWidget()
        self.memory_list.setItemDelegate(_MemoryTextDelegate(self.memory_list))
        self.memory_list.setObjectName("memory_list")
        self.memory_list.setWordWrap(True)
        self.memory_list.setSpacing(2)
        self.memory_list.setAlternatingRowColors(True)
        self.memory_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.memory_list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        layout.addWidget(self.memory_list, 1)

        add_row = QHBoxLayout()
        self.memory_new = QLineEdit()
        self.memory_new.setObjectName("memory_new")
        self.memory_new.setPlaceholderText(self.tr("New memory…"))
        add_row.addWidget(self.memory_new, 1)
        self.memory_add = QPushButton(self.tr("Add"))
        self.memory_add.setObjectName("memory_add")
        add_row.addWidget(self.memory_add)
        layout.addLayout(add_row)

        buttons = QHBoxLayout()
        self.memory_edit = QPushButton(self.tr("Edit"))
        self.memory_edit.setObjectName("memory_edit")
        self.memory_delete = QPushButton(self.tr("Delete"))
        self.memory_delete.setObjectName("memory_delete")
        for button in (self.memory_edit, self.memory_delete):
            button.setEnabled(False)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)

        notice_row = QHBoxLayout()
        self.memory_notice = QLabel("")
        self.memory_notice.setObjectName("memory_notice")
        self.memory_notice.setWordWrap(True)
        self.memory_notice.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        notice_row.addWidget(self.memory_notice, 1)
        self.memory_undo = QPushButton(self.tr("Undo"))
        self.memory_undo.setObjectName("memory_undo")
        self.memory_undo.setToolTip(self.tr("Undo the last change to the memories (Ctrl+Z)"))
        self.memory_undo.setEnabled(False)
        notice_row.addWidget(self.memory_undo)
        layout.addLayout(notice_row)
        return panel

    def _connect_signals(self) -> None:
        self.send_row.send_requested.connect(self._on_send_requested)
        self.send_row.stop_requested.connect(self._on_stop_requested)
        self.cancel_edit.clicked.connect(self._on_cancel_edit_clicked)
        self.memory_search_box.textChanged.connect(self._on_search_text_changed)
        self.search_timer.timeout.connect(self.refresh)
        self.memory_list.currentItemChanged.connect(self._on_current_item_changed)
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
    def _start(self, name: str, job: Any, on_success: Any) -> JobHandle:
        handle = self.workers.start(name, job)
        handle.signals.succeeded.connect(on_success)
        handle.signals.failed.connect(self._on_job_failed)
        return handle

    def _open(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> MemoryStatus:
            return service.get().open()

        handle = self._start("memories: open", job, self._on_open_succeeded)
        handle.signals.failed.connect(self._on_open_failed)

    def _on_open_succeeded(self, status: MemoryStatus) -> None:
        self._ready = True
        self.send_row.set_ready(True)
        self._show_status(status)
        self.refresh()

    def _on_open_failed(self, message: str, environment: bool) -> None:
        self.memory_status.setText(self.tr("The memories cannot be opened: {0}").format(message))
        self.memory_status.setProperty("limited", "true")
        self.memory_status.style().unpolish(self.memory_status)
        self.memory_status.style().polish(self.memory_status)

    def refresh(self) -> None:
        """Reload the memory list (and status) for the current search text."""
        service = self.service
        query = self.memory_search_box.text()
        self._refresh_serial += 1
        serial = self._refresh_serial

        def job(progress: Progress, emit: Emit) -> tuple[int, str, list[FoundMemory], MemoryStatus]:
            assistant = service.get()
            return serial, query, assistant.find(query, limit=LIST_LIMIT), assistant.status()

        self._start("memories: list", job, self._on_refresh_succeeded)

    def _on_refresh_succeeded(
        self, result: tuple[int, str, list[FoundMemory], MemoryStatus]
    ) -> None:
        serial, _query, found, status = result
        if serial != self._refresh_serial:
            return  # an older refresh finishing late
        self._show_status(status)
        current = self.memory_list.currentItem()
        selected = current.data(Qt.ItemDataRole.UserRole) if current else None
        self.memory_list.blockSignals(True)
        self.memory_list.clear()
        for entry in found:
            memory = entry.memory
            item = QListWidgetItem(memory.text)
            item.setData(Qt.ItemDataRole.UserRole, memory.text)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(memory.updated_at))
            tip = self.tr("Source: {0} · updated {1} · {2}").format(
                memory.source, when, memory.embedder or self.tr("unknown model")
            )
            if entry.similarity is not None:
                item.setText(f"{memory.text}    ({entry.similarity:.2f})")
                item.setData(Qt.ItemDataRole.UserRole + 1, entry.similarity)
            if not memory.searchable:
                item.setForeground(Qt.GlobalColor.gray)
                tip += "\n" + self.tr("Not searched until re-embedded ({0}-d, {1})").format(
                    memory.dimension, memory.embedder or self.tr("unknown model")
                )
            item.setToolTip(tip)
            self.memory_list.addItem(item)
            if memory.text == selected:
                self.memory_list.setCurrentItem(item)
        self.memory_list.blockSignals(False)
        self._on_current_item_changed(self.memory_list.currentItem(), None)

    def _show_status(self, status: MemoryStatus) -> None:
        self.status = status
        stats = status.stats
        if status.recall_limited:
            text = status.limited_recall_message()
            self.memory_status.setProperty("limited", "true")
        else:
            count = (
                self.tr("1 memory")
                if stats.total == 1
                else self.tr("{0} memories").format(stats.total)
            )
            text = self.tr("{0} · recall at similarity ≥ {1:.2f} ({2})").format(
                count, status.recall_threshold, status.embedder
            )
            self.memory_status.setProperty("limited", "false")
        self.memory_status.setText(text)
        self.memory_status.style().unpolish(self.memory_status)
        self.memory_status.style().polish(self.memory_status)
        running = self._reembed is not None
        self.reembed_all.setVisible(status.recall_limited and not running)
        if status.reembed_now and not running and not getattr(self, "_reembedded", False):
            self._reembedded = True  # memories of the previous default model: once, unasked
            self._on_reembed_all_clicked()

    def _on_job_failed(self, message: str, environment: bool) -> None:
        if environment:
            self._notice(message, error=True)
        else:
            self._notice(self.tr("Something went wrong (see the log): {0}").format(message), True)

    def _notice(self, text: str, error: bool = False) -> None:
        self.memory_notice.setText(text)
        self.memory_notice.setProperty("error", "true" if error else "false")
        self.memory_notice.style().unpolish(self.memory_notice)
        self.memory_notice.style().polish(self.memory_notice)

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

        handle = self._start("memories: turn", job, self._on_turn_succeeded)
        handle.signals.item.connect(self._on_turn_item)
        handle.signals.finished.connect(self._on_turn_finished)
        handle.signals.cancelled.connect(self._on_turn_cancelled)
        handle.signals.failed.connect(self._on_turn_failed)
        self._turn = handle
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
            note = self.tr("No memory reached similarity {0:.2f}").format(result.threshold)
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
            self._add_proposal(proposal)

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
        short = question if len(question) <= 60 else question[:57] + "…"
        self.memories_used_title.setText(
            self.tr("<b>Memories used to answer</b> “{0}”").format(short.replace("<", "&lt;"))
        )
        self.memories_used.clear()
        for number, hit in enumerate(hits, 1):
            item = QTreeWidgetItem([f"{hit.similarity:.2f}", hit.text, hit.why])
            item.setData(0, Qt.ItemDataRole.UserRole, hit.similarity)
            item.setToolTip(0, f"[{number}]")
            item.setToolTip(1, f"[{number}] {hit.text}")
            self.memories_used.addTopLevelItem(item)

    def _on_cite_activated(self, number: int) -> None:
        """A ✓ [n] of an answer: its memories used are listed, memory n selected."""
        bubble = self.sender()
        index = self._exchange_of(bubble)
        if index is None or not isinstance(bubble, MessageBubble):
            return
        self._show_used(self._exchanges[index].user.text, bubble.hits)
        item = self.memories_used.topLevelItem(number - 1)
        if item is not None:
            self.memories_used.setCurrentItem(item)
            self.memories_used.scrollToItem(item)

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

        self._start("memories: remember", job, self._on_outcome)

    def _on_memory_add_clicked(self) -> None:
        text = self.memory_new.text().strip()
        if text:
            self.memory_new.clear()
            self._remember(text, "user")

    def _on_outcome(self, outcome: RememberOutcome) -> None:
        self._after_outcome(outcome)

    def _after_outcome(self, outcome: RememberOutcome) -> None:
        if outcome.status != "near_duplicate":  # proposals of this text are answered now
            for row in self.proposals.findChildren(ProposalRow):
                if row.proposal.text == outcome.text:
                    self._drop_proposal(row)
        if outcome.status == "near_duplicate":
            proposal = outcome.proposal
            if proposal is not None:
                self._add_proposal(proposal)
            self._notice(
                self.tr(
                    "A very similar memory exists: “{0}” ({1:.2f}). Update it or keep both?"
                ).format(outcome.existing, outcome.similarity)
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

    def _add_proposal(self, proposal: Proposal) -> None:
        for row in self.proposals.findChildren(ProposalRow):
            if row.proposal == proposal:
                return
        row = ProposalRow(proposal)
        row.accept_button.clicked.connect(self._on_proposal_accept_clicked)
        row.keep_both_button.clicked.connect(self._on_proposal_keep_both_clicked)
        row.dismiss_button.clicked.connect(self._on_proposal_dismiss_clicked)
        self.proposals_layout.addWidget(row)
        self.proposals.setVisible(True)

    def _proposal_row(self) -> ProposalRow | None:
        button = self.sender()
        row = button.parent() if button is not None else None
        return row if isinstance(row, ProposalRow) else None

    def _drop_proposal(self, row: ProposalRow) -> None:
        row.setParent(None)
        row.deleteLater()
        remaining = [r for r in self.proposals.findChildren(ProposalRow) if r is not row]
        self.proposals.setVisible(bool(remaining))

    def _accept(self, keep_both: bool) -> None:
        row = self._proposal_row()
        if row is None:
            return
        proposal = row.proposal
        self._drop_proposal(row)
        service = self.service

        def job(progress: Progress, emit: Emit) -> RememberOutcome:
            return service.get().accept(proposal, keep_both=keep_both)

        self._start("memories: accept proposal", job, self._on_outcome)

    def _on_proposal_accept_clicked(self) -> None:
        self._accept(keep_both=False)

    def _on_proposal_keep_both_clicked(self) -> None:
        self._accept(keep_both=True)

    def _on_proposal_dismiss_clicked(self) -> None:
        row = self._proposal_row()
        if row is not None:
            self._drop_proposal(row)

    def _on_current_item_changed(self, current: Any, previous: Any) -> None:
        has = current is not None
        self.memory_edit.setEnabled(has)
        self.memory_delete.setEnabled(has)

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

        handle = self._start("memories: edit", job, self._on_outcome)
        handle.signals.failed.connect(self._on_edit_failed)

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

        handle = self._start("memories: delete", job, self._on_delete_succeeded)
        handle.signals.failed.connect(self._on_edit_failed)

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
        self.memory_undo.setEnabled(True)
        self.memory_undo.setToolTip(self.tr("Undo {0} (Ctrl+Z)").format(undo.description))

    def _on_undo_triggered(self) -> None:
        if not self.undo_stack:
            return
        undo = self.undo_stack.pop()
        self.memory_undo.setEnabled(bool(self.undo_stack))
        service = self.service

        def job(progress: Progress, emit: Emit) -> Undo:
            service.get().undo(undo)
            return undo

        self._start("memories: undo", job, self._on_undo_succeeded)

    def _on_undo_succeeded(self, undo: Undo) -> None:
        self._notice(self.tr("Undone: {0}").format(undo.description))
        self.refresh()

    def _on_search_text_changed(self, text: str) -> None:
        self.search_timer.start()

    # -- re-embedding ----------------------------------------------------------------------
    def _on_reembed_all_clicked(self) -> None:
        if self._reembed is not None:
            return
        service = self.service

        def job(progress: Progress, emit: Emit) -> int:
            return service.get().reembed(progress)

        handle = self._start("memories: re-embed", job, self._on_reembed_succeeded)
        handle.signals.progress.connect(self._on_reembed_progress)
        handle.signals.cancelled.connect(self._on_reembed_cancelled)
        handle.signals.finished.connect(self._on_reembed_finished)
        self._reembed = handle
        self.reembed_all.setVisible(False)
        self.reembed_progress.setRange(0, 0)
        self.reembed_progress.setVisible(True)
        self.reembed_cancel.setVisible(True)

    def _on_reembed_progress(self, done: int, total: int, message: str) -> None:
        self.reembed_progress.setRange(0, max(total, 1))
        self.reembed_progress.setValue(done)
        self.reembed_progress.setFormat(self.tr("{0} of {1} re-embedded").format(done, total))

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
        self.reembed_progress.setVisible(False)
        self.reembed_cancel.setVisible(False)
        self.refresh()

    def shutdown(self) -> None:
        """Called on window close, after the workers stopped."""
        self.search_timer.stop()


def create(
    service: Lazy[MemoryAssistant], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    return MemoriesTab(service, models, workers, parent)
