"""The Conversations tab (SPEC section 3): chat with a model picker, searchable history.

Object names (docs/TESTING.md): ``conversations`` (the tab), ``conversation_list``,
``new_conversation``, ``rename_conversation``, ``delete_conversation`` (asks
``confirm_delete``), ``chat_input``, ``send``, ``stop_chat``, ``transcript``, ``model_picker``,
``history_search``, ``search_results``, ``encryption_status``, ``set_key`` (opens
``key_dialog``: ``mode_passphrase``/``mode_key``, ``passphrase_input``, ``passphrase_confirm``,
``new_passphrase``, ``key_input``, ``generate_key``, ``copy_key``, ``key_notice``,
``key_error``, ``key_progress``), ``new_history`` (opens ``new_history_dialog``:
``new_history_encrypted``, ``new_history_clear``), ``import_conversations``,
``export_conversations``, ``rebuild_index``, ``index_progress``, ``tab_status``,
``tab_activity`` (what a wait longer than 200 ms is for).

The transcript is rendered as Markdown by the shared :mod:`desktop.markdown`; ``copy:<i>``
and ``copy:<i>:<k>`` links copy a message or one of its code blocks. Search hits are searched
again after a rename, delete, import or key change, and never name a conversation by its id.

Deleting the conversation being answered stops the answer first (after the usual
confirmation), then deletes it; deleting the open conversation always leaves a new one.
Dialogs made per use (key, file) delete themselves when closed.

Every backend call runs in the worker pool; results come back to ``_on_<signal>`` slots.
"""

from __future__ import annotations

import html
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QModelIndex, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QGuiApplication, QTextCursor, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QSplitter,
    QTextBrowser,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.answers import MODEL, Answer, Shown
from backends.conversations import (
    FERNET_SHAPE,
    MIN_PASSPHRASE,
    Conversation,
    ConversationAgent,
    ConversationError,
    ConversationNotFoundError,
    EmbedderMismatchError,
    EncryptionStatus,
    IndexRow,
    InvalidKeyError,
    KeyOutcome,
    ModelChoice,
    NewHistory,
    NoPassphraseError,
    SearchHit,
    TurnResult,
    WrongPassphraseError,
    export_conversations,
    generate_key,
    import_file,
    key_id,
    normalise_passphrase,
    validate_key,
    write_private,
)
from backends.errors import DimensionMismatchError
from backends.grounding import CheckedSentence
from backends.progress import Progress
from backends.services import Lazy, ModelChoices
from desktop import theme
from desktop.answer_html import answer_html, counts
from desktop.markdown import checked_html, checked_list_html, set_markdown, split_markdown
from desktop.workers import Emit, JobHandle, WorkerPool

log = logging.getLogger(__name__)

ID_ROLE = Qt.ItemDataRole.UserRole
INDEX_ROLE = Qt.ItemDataRole.UserRole + 1
#: column 0 of a locked conversation (an earlier history set aside): True
LOCKED_ROLE = Qt.ItemDataRole.UserRole + 2
#: a search hit's conversation name, for messages after it is gone
NAME_ROLE = Qt.ItemDataRole.UserRole + 3
WARNING_STYLE = "background:#fff3cd;color:#664d03;border:1px solid #ffe69c;padding:4px;"
OK_STYLE = "background:#d1e7dd;color:#0f5132;border:1px solid #a3cfbb;padding:4px;"
#: a job running longer than this shows what the tab is waiting for (``tab_activity``)
ACTIVITY_DELAY_MS = 200
HIGHLIGHT = "#fff3a0"
HIGHLIGHT_DARK = "#5a4a00"
#: who wrote a message, readable on the light and on the dark palette
_ROLE_COLOURS = {"user": "#0b5394", "assistant": "#38761d"}
_ROLE_COLOURS_DARK = {"user": "#8ab4f8", "assistant": "#81c784"}
#: the link of an answer's ✓ [n] mark: ``source:<message index>:<n>``
SOURCE_SCHEME = "source"
#: ``open:<conversation id>:<message index>``: a quoted past message, in its conversation
OPEN_SCHEME = "open"
#: ``rephrase:<answer index>``: ask that answer's question again, with the model's draft
REPHRASE_SCHEME = "rephrase"
#: a context passage as the agent gives it to the model: "[name, date] role: text"
_PASSAGE = re.compile(
    r"^\[(?P<name>.*), (?P<date>[^,\]]*)\] (?P<role>\w+): (?P<text>.*)$", re.DOTALL
)


@dataclass(frozen=True)
class _Started:
    rows: list[IndexRow]
    status: EncryptionStatus
    choices: list[ModelChoice]


@dataclass(frozen=True)
class _Listing:
    rows: list[IndexRow]
    status: EncryptionStatus
    note: str = ""
    #: the current conversation's name after a rename (tidied by the agent)
    title: str = ""


@dataclass(frozen=True)
class _Opened:
    serial: int
    #: None when the file is gone (deleted outside this tab): ``conversation_id`` says which
    conversation: Conversation | None
    highlight: int | None
    conversation_id: str
    #: why it cannot be opened now (damaged, wrong key since it was listed), else ""
    error: str = ""


@dataclass(frozen=True)
class _Found:
    serial: int
    hits: list[SearchHit]
    #: "3 wrong key"...: conversations that could not be read, so were not searched
    unsearched: str = ""
    #: a refresh of shown hits (after a rename...): the status line is left as it is
    quiet: bool = False


@dataclass(frozen=True)
class _Saved:
    """Streamed by a chat job once the user's message is on disk (its conversation id)."""

    conversation_id: str


def _own_policy(result: TurnResult) -> bool:
    """Whether an answer is drawn by its kinds (a history answer, or the model's with some
    sentence withheld); else the model's answer is marked as CT9 checked it."""
    shown = result.shown
    return shown is not None and (shown.mode != MODEL or bool(shown.withheld))


@dataclass(frozen=True)
class _Composed:
    """Streamed by a chat job for a history question: its answer from the past messages."""

    answer: Answer
    passages: tuple[str, ...]


@dataclass(frozen=True)
class _Indexed:
    note: str
    #: set when the index belongs to another embedder: the user is offered a rebuild
    mismatch: str = ""


def _listing(agent: ConversationAgent, note: str = "", title: str = "") -> _Listing:
    return _Listing(agent.conversations(), agent.encryption_status(), note, title)


@dataclass(frozen=True)
class _Refused:
    """A passphrase the store refused: what the dialog says, and the store's own words."""

    message: str
    details: str


class KeyDialog(QDialog):
    """Asks for the conversations key or a passphrase (or generates a key); what the tab
    then does with it: re-encrypt every conversation, unlock an earlier history, or — in
    ``new_history`` mode — start a new history beside a locked one.

    A key is checked before the dialog accepts: a key that is not a Fernet key, or not the
    key an unfinished key change waits for, is explained inside the dialog, which stays open
    with the focus back in the field. A passphrase is derived in the tab's worker pool
    (Scrypt, ~0.4 s): the dialog says so while it waits (``passphrase_submitted``), and
    shows a wrong passphrase inside the dialog too (:meth:`passphrase_failed`).
    ``key_chosen(key, generated, passphrase)`` is emitted for a key that passed. The dialog
    deletes itself when closed, accepted or not.
    """

    key_chosen = Signal(str, bool, bool)  # key, made by Generate, derived from a passphrase
    passphrase_submitted = Signal(str, bool)  # passphrase, new (a fresh salt)

    def __init__(
        self,
        status: EncryptionStatus | None,
        parent: QWidget | None = None,
        *,
        new_history: bool = False,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("key_dialog")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.new_history = new_history
        self.setWindowTitle(
            self.tr("Start a new encrypted history")
            if new_history
            else self.tr("Conversations key")
        )
        self.setMinimumWidth(520)
        self._status = status
        self._generated = ""  # the key Generate put in the field (unchanged since)
        no_keyring = status is not None and not status.keyring.usable
        has_passphrase = bool(status is not None and status.passphrase_key_ids)
        layout = QVBoxLayout(self)
        if new_history:
            locked = status.needed_files if status is not None else 0
            text = self.tr(
                "Your {0} encrypted conversation(s) are kept exactly as they are, listed as "
                "<b>locked</b>; give their key or passphrase here later to read them again. "
                "New conversations go to a new history under the key or passphrase you set "
                "now."
            ).format(locked)
        else:
            text = self.tr(
                "Every conversation will be encrypted again with this key, or with a key made "
                "from a passphrase. Keep a copy: without it the history cannot be read. An "
                "interrupted change goes on when you give the same key again."
            )
        if no_keyring:
            assert status is not None
            text += "<br><br>" + self.tr(
                "<b>This computer has no keyring to keep the key in</b>: a key typed or "
                "generated here is kept <b>for this session only</b> — after a restart your "
                "conversations are locked until you give it again. <b>A passphrase needs no "
                "keyring</b>: you type it again at each start."
            )
        intro = QLabel(text)
        intro.setObjectName("key_intro")
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(intro)
        self.intro = intro
        modes = QHBoxLayout()
        self.mode_passphrase = QRadioButton(self.tr("Passphrase"))
        self.mode_passphrase.setObjectName("mode_passphrase")
        self.mode_key = QRadioButton(self.tr("Key"))
        self.mode_key.setObjectName("mode_key")
        modes.addWidget(self.mode_passphrase)
        modes.addWidget(self.mode_key)
        modes.addStretch(1)
        layout.addLayout(modes)

        self.passphrase_box = QWidget()
        passphrase_layout = QFormLayout(self.passphrase_box)
        passphrase_layout.setContentsMargins(0, 0, 0, 0)
        self.passphrase_input = QLineEdit()
        self.passphrase_input.setObjectName("passphrase_input")
        self.passphrase_input.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_input.setPlaceholderText(self.tr("a few words you will remember"))
        passphrase_layout.addRow(self.tr("&Passphrase:"), self.passphrase_input)
        self.new_passphrase = QCheckBox(
            self.tr("Set a new passphrase (re-encrypts every conversation)")
        )
        self.new_passphrase.setObjectName("new_passphrase")
        self.new_passphrase.setChecked(new_history or not has_passphrase)
        self.new_passphrase.setVisible(has_passphrase and not new_history)
        passphrase_layout.addRow("", self.new_passphrase)
        self.passphrase_confirm = QLineEdit()
        self.passphrase_confirm.setObjectName("passphrase_confirm")
        self.passphrase_confirm.setEchoMode(QLineEdit.EchoMode.Password)
        self.passphrase_confirm.setPlaceholderText(self.tr("the same passphrase again"))
        passphrase_layout.addRow(self.tr("&Again:"), self.passphrase_confirm)
        self._passphrase_form = passphrase_layout
        layout.addWidget(self.passphrase_box)

        self.key_box = QWidget()
        key_layout = QVBoxLayout(self.key_box)
        key_layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.key_input = QLineEdit()
        self.key_input.setObjectName("key_input")
        self.key_input.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_input.setPlaceholderText(self.tr("the key (44 characters)"))
        row.addWidget(self.key_input, 1)
        self.generate = QPushButton(self.tr("Generate"))
        self.generate.setObjectName("generate_key")
        row.addWidget(self.generate)
        self.copy_key = QPushButton(self.tr("Copy"))
        self.copy_key.setObjectName("copy_key")
        self.copy_key.setToolTip(self.tr("Copy the key to the clipboard (keep it somewhere safe)"))
        row.addWidget(self.copy_key)
        key_layout.addLayout(row)
        self.show_key = QCheckBox(self.tr("Show the key"))
        self.show_key.setObjectName("show_key")
        key_layout.addWidget(self.show_key)
        #: a generated key without a keyring: copy it now (session only otherwise)
        self.key_notice = QLabel("")
        self.key_notice.setObjectName("key_notice")
        self.key_notice.setWordWrap(True)
        self.key_notice.setStyleSheet(WARNING_STYLE)
        self.key_notice.setVisible(False)
        key_layout.addWidget(self.key_notice)
        layout.addWidget(self.key_box)

        self.key_error = QLabel("")
        self.key_error.setObjectName("key_error")
        self.key_error.setWordWrap(True)
        self.key_error.setStyleSheet(f"color:{theme.colors()['error']};")
        self.key_error.setProperty("error", False)
        self.key_error.setVisible(False)
        layout.addWidget(self.key_error)
        self.key_progress = QLabel("")
        self.key_progress.setObjectName("key_progress")
        self.key_progress.setWordWrap(True)
        self.key_progress.setVisible(False)
        layout.addWidget(self.key_progress)
        #: for whoever needs them: the cipher, key ids, the keyring's reason, the variables
        self.details_button = QToolButton()
        self.details_button.setObjectName("key_details_button")
        self.details_button.setText(self.tr("Details"))
        self.details_button.setCheckable(True)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setAutoRaise(True)
        layout.addWidget(self.details_button)
        self.details = QLabel("")
        self.details.setObjectName("key_details")
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setVisible(False)
        layout.addWidget(self.details)
        self._detail_error = ""  # the last refusal as the store said it
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        layout.addWidget(self.buttons)
        self._show_details()
        # without a keyring a key would last one session: a passphrase first; an unfinished
        # key change waits for its key
        pending = bool(status is not None and status.rotation_pending)
        from_passphrase = bool(
            status is not None
            and (
                status.passphrase_needed
                or status.source in ("passphrase", "environment_passphrase")
            )
        )
        passphrase_first = not pending and (no_keyring or new_history or from_passphrase)
        (self.mode_passphrase if passphrase_first else self.mode_key).setChecked(True)
        self._connect_signals()
        self._on_mode_toggled()

    def _connect_signals(self) -> None:
        self.generate.clicked.connect(self._on_generate_clicked)
        self.copy_key.clicked.connect(self._on_copy_key_clicked)
        self.show_key.toggled.connect(self._on_show_key_toggled)
        self.key_input.textEdited.connect(self._on_key_input_text_edited)
        self.passphrase_input.textEdited.connect(self._on_key_input_text_edited)
        self.passphrase_confirm.textEdited.connect(self._on_key_input_text_edited)
        self.mode_passphrase.toggled.connect(self._on_mode_toggled)
        self.new_passphrase.toggled.connect(self._on_mode_toggled)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        self.details_button.toggled.connect(self._on_details_button_toggled)

    def _on_details_button_toggled(self, shown: bool) -> None:
        self.details_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        self.details.setVisible(shown)
        self._fit()

    def _show_details(self) -> None:
        """The technical facts, kept out of the sentences above."""
        self.details.setText(key_details(self._status, self._detail_error))

    def _fit(self) -> None:
        """Grow to show every wrapped line (a longer error must not squeeze the intro)."""
        layout = self.layout()
        if layout is None:
            return
        layout.activate()
        needed = layout.totalHeightForWidth(self.width())
        if needed > self.height():
            self.resize(self.width(), needed)

    def _on_mode_toggled(self, *args: object) -> None:
        passphrase = self.mode_passphrase.isChecked()
        self.passphrase_box.setVisible(passphrase)
        self.key_box.setVisible(not passphrase)
        self._passphrase_form.setRowVisible(
            self.passphrase_confirm, self.new_passphrase.isChecked()
        )
        self._show_error("")
        (self.passphrase_input if passphrase else self.key_input).setFocus()

    def _on_generate_clicked(self) -> None:
        self._generated = generate_key()
        self.key_input.setText(self._generated)
        self.show_key.setChecked(True)
        self._show_error("")
        if self._status is not None and not self._status.keyring.usable:
            self.key_notice.setText(
                self.tr(
                    "Copy this key now and keep it safe: without a keyring it is kept for "
                    "this session only. Or choose Passphrase instead."
                )
            )
            self.key_notice.setVisible(True)
            self._fit()

    def _on_copy_key_clicked(self) -> None:
        key = self.key()
        if key:
            QGuiApplication.clipboard().setText(key)
            self.copy_key.setText(self.tr("Copied"))

    def _on_show_key_toggled(self, shown: bool) -> None:
        mode = QLineEdit.EchoMode.Normal if shown else QLineEdit.EchoMode.Password
        self.key_input.setEchoMode(mode)

    def _on_key_input_text_edited(self, text: str) -> None:
        self._show_error("")  # the user is fixing it
        self.copy_key.setText(self.tr("Copy"))

    def key(self) -> str:
        return self.key_input.text().strip()

    def generated(self) -> bool:
        """The key in the field is the one Generate made (the user has no copy yet)."""
        return bool(self._generated) and self.key() == self._generated

    def problem(self) -> str:
        """Why the key in the field cannot be used, or ``""``. Cheap (no file is read)."""
        key = self.key()
        status = self._status
        pending = status.rotation_pending if status is not None else ""
        locked = bool(status is not None and status.key_problem) and not self.new_history
        if pending:
            advice = self.tr(
                "check it for a typo: an unfinished key change waits for the key it started with"
            )
        elif locked:
            advice = self.tr(
                "check it for a typo: it must be the key your conversations are encrypted "
                "with (a new key from Generate would not open them)"
            )
        else:
            advice = self.tr("check it for a typo, or press Generate to make a new one")
        if not key and pending:
            return self.tr("Enter the key of the unfinished key change.")
        if not key and locked:
            return self.tr("Enter the key your conversations are encrypted with.")
        if not key:
            return self.tr("Enter a key, or press Generate to make a new one.")
        try:
            key = validate_key(key)
        except InvalidKeyError:
            return self.tr("This is not a key of the right form: {0}.").format(advice)
        if pending and key_id(key) != pending:
            return self.tr(
                "A key change is unfinished and this is not its key: give the key it started "
                "with to finish it. Another key can be set once it is done."
            )
        return ""

    def passphrase_problem(self) -> str:
        """Why the passphrase fields cannot be used yet, or ``""`` (checked without deriving)."""
        passphrase = self.passphrase_input.text()
        if not passphrase:
            return self.tr("Enter the passphrase.")
        if self.new_passphrase.isChecked():
            if len(normalise_passphrase(passphrase)) < MIN_PASSPHRASE:
                return self.tr(
                    "A passphrase needs at least {0} characters (a few words are easier to "
                    "remember and harder to guess)."
                ).format(MIN_PASSPHRASE)
            if self.passphrase_confirm.text() != passphrase:
                return self.tr("The two passphrases differ: type the same one twice.")
        return ""

    def accept(self) -> None:
        """Accept only a usable key; otherwise say why here and stay open. A passphrase is
        handed to the tab to derive (slow): the dialog waits, saying so."""
        if self.mode_passphrase.isChecked():
            problem = self.passphrase_problem()
            if problem:
                self._show_error(problem)
                self.passphrase_input.setFocus(Qt.FocusReason.OtherFocusReason)
                return
            self._set_waiting(True)
            self.passphrase_submitted.emit(
                self.passphrase_input.text(), self.new_passphrase.isChecked()
            )
            return
        problem = self.problem()
        if problem:
            self._show_error(problem)
            self.key_input.setFocus(Qt.FocusReason.OtherFocusReason)
            self.key_input.selectAll()
            return
        self.key_chosen.emit(self.key(), self.generated(), False)
        super().accept()

    def passphrase_derived(self, key: str) -> None:
        """The tab derived the passphrase's key: go on with it."""
        self._set_waiting(False)
        self.key_chosen.emit(key, False, True)
        super().accept()

    def passphrase_failed(self, message: str, details: str = "") -> None:
        """A wrong passphrase (or no passphrase set yet): said here; the dialog stays open.
        ``details``: the refusal as the store said it (under Details)."""
        self._set_waiting(False)
        self._detail_error = details
        self._show_details()
        if self.new_passphrase.isVisible() and not self.new_passphrase.isChecked():
            message += " " + self.tr("To set another passphrase, tick “{0}”.").format(
                self.new_passphrase.text()
            )
        self._show_error(message)
        self.passphrase_input.setFocus(Qt.FocusReason.OtherFocusReason)
        self.passphrase_input.selectAll()

    def _set_waiting(self, waiting: bool) -> None:
        self.key_progress.setText(
            self.tr("Deriving the key from the passphrase (about half a second)…")
        )
        self.key_progress.setVisible(waiting)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not waiting)
        self.passphrase_box.setEnabled(not waiting)
        self._show_error("")

    def _show_error(self, text: str) -> None:
        self.key_error.setText(text)
        self.key_error.setVisible(bool(text))
        self.key_error.setProperty("error", bool(text))
        if text:
            self._fit()


def key_details(status: EncryptionStatus | None, error: str = "") -> str:
    """What the conversations tab's Details show: the cipher, key ids, where the key comes
    from and the variables that set it at start (never in the sentences themselves); after a
    blank line, the store's own words (the keyring's reason, a refusal), as it said them."""
    lines = [
        QCoreApplication.translate(
            "KeyDialog", "Cipher: Fernet (AES-128 in CBC mode with an HMAC-SHA256 check)."
        )
    ]
    if status is not None:
        if status.key_id:
            lines.append(
                QCoreApplication.translate("KeyDialog", "Key id: {0}").format(status.key_id)
            )
        sources = {
            "environment": QCoreApplication.translate(
                "KeyDialog", "the CONVERSATIONS_KEY environment variable"
            ),
            "environment_passphrase": QCoreApplication.translate(
                "KeyDialog", "a passphrase in the CONVERSATIONS_PASSPHRASE environment variable"
            ),
            "keyring": QCoreApplication.translate("KeyDialog", "the OS keyring"),
            "passphrase": QCoreApplication.translate("KeyDialog", "a passphrase given in the app"),
            "session": QCoreApplication.translate("KeyDialog", "this session only"),
        }
        if status.encrypted and status.source in sources:
            lines.append(
                QCoreApplication.translate("KeyDialog", "Key from: {0}").format(
                    sources[status.source]
                )
            )
        if status.rotation_pending:
            lines.append(
                QCoreApplication.translate(
                    "KeyDialog", "Unfinished key change to key id {0}"
                ).format(status.rotation_pending)
            )
        if status.needed_key_ids:
            lines.append(
                QCoreApplication.translate("KeyDialog", "Key ids the history needs: {0}").format(
                    ", ".join(status.needed_key_ids)
                )
            )
        if status.locked_key_ids:
            lines.append(
                QCoreApplication.translate(
                    "KeyDialog", "Key ids of locked earlier histories: {0}"
                ).format(", ".join(status.locked_key_ids))
            )
    lines.append(
        QCoreApplication.translate(
            "KeyDialog",
            "At start, the CONVERSATIONS_KEY environment variable (a key) or "
            "CONVERSATIONS_PASSPHRASE (a passphrase) gives the key without asking.",
        )
    )
    said = [f"key: {FERNET_SHAPE}"]  # the store's words, untranslated, as logs have them
    if status is not None and not status.keyring.usable and status.keyring.reason:
        said.append(f"keyring: {status.keyring.reason}")
    if status is not None and status.key_problem:
        said.append(status.key_problem)
    if error:
        said.append(error)
    return "\n".join(lines) + "\n\n" + "\n".join(said)


class ConversationsTab(QWidget):
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
        self.current_id: str | None = None
        self.ready = False
        self._status: EncryptionStatus | None = None
        self._rows: dict[str, IndexRow] = {}
        self._open_serial = 0
        self._search_serial = 0
        self._chat: JobHandle | None = None
        #: the conversation being answered (None until a new one's first message is saved)
        self._answering: str | None = None
        #: confirmed for deletion while its answer streamed: deleted once the answer stopped
        self._delete_after_chat: str | None = None
        #: set by Stop: the answer ends, what was said is saved (marked stopped)
        self._stop_chat = threading.Event()
        #: the message being sent until it is on disk (given back if the turn fails before)
        self._unsaved = ""
        self._populating = False
        self._pending_delete: str | None = None
        self._export_all = True
        self._message_count = 0
        self._streamed = ""
        #: the turn running answered from the history first (its draft streams after)
        self._composed = False
        self._jobs = 0
        #: what each running job is doing, for ``tab_activity`` (id of its handle → text)
        self._doing: dict[int, str] = {}
        #: the last search, re-run when a rename, delete or import may have changed its hits
        self._last_query = ""
        #: names of conversations opened from a search hit (said if the file is gone)
        self._hit_names: dict[str, str] = {}
        #: the messages shown in the transcript (index → text), for their Copy links
        self._shown: dict[int, str] = {}
        #: the conversation on screen, drawn again when the theme changes
        self._last_opened: _Opened | None = None
        #: answers of this session checked against past conversations (CT9), by
        #: (conversation id, message index): their sentences are shown marked
        self._checks: dict[tuple[str, int], TurnResult] = {}
        self._build()
        self._connect_signals()
        self._set_busy_chat(False)
        self._start()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        outer = QVBoxLayout(self)
        top = QHBoxLayout()
        self.encryption_status = QLabel(self.tr("Checking encryption…"))
        self.encryption_status.setObjectName("encryption_status")
        self.encryption_status.setWordWrap(True)
        self.encryption_status.setTextFormat(Qt.TextFormat.RichText)
        top.addWidget(self.encryption_status, 1)
        #: the cipher, key ids, the variables: for whoever needs them, out of the sentences
        self.encryption_details_button = QToolButton()
        self.encryption_details_button.setObjectName("encryption_details_button")
        self.encryption_details_button.setText(self.tr("Details"))
        self.encryption_details_button.setCheckable(True)
        self.encryption_details_button.setAutoRaise(True)
        top.addWidget(self.encryption_details_button)
        self.set_key = QPushButton(self.tr("Set key…"))
        self.set_key.setObjectName("set_key")
        top.addWidget(self.set_key)
        self.new_history = QPushButton(self.tr("Start a new history…"))
        self.new_history.setObjectName("new_history")
        self.new_history.setToolTip(
            self.tr(
                "The key is lost? Keep the encrypted conversations as they are (locked) and "
                "go on with a new history"
            )
        )
        self.new_history.setVisible(False)
        top.addWidget(self.new_history)
        outer.addLayout(top)
        self.encryption_details = QLabel("")
        self.encryption_details.setObjectName("encryption_details")
        self.encryption_details.setWordWrap(True)
        self.encryption_details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.encryption_details.setVisible(False)
        self.encryption_details_button.toggled.connect(self.encryption_details.setVisible)
        outer.addWidget(self.encryption_details)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        outer.addWidget(splitter, 1)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        buttons = QHBoxLayout()
        self.new_conversation = QPushButton(self.tr("New"))
        self.new_conversation.setObjectName("new_conversation")
        self.rename_conversation = QPushButton(self.tr("Rename"))
        self.rename_conversation.setObjectName("rename_conversation")
        self.delete_conversation = QPushButton(self.tr("Delete…"))
        self.delete_conversation.setObjectName("delete_conversation")
        for button in (self.new_conversation, self.rename_conversation, self.delete_conversation):
            buttons.addWidget(button)
        left_layout.addLayout(buttons)
        self.conversation_list = QTreeWidget()
        self.conversation_list.setObjectName("conversation_list")
        self.conversation_list.setHeaderLabels(
            [self.tr("Name"), self.tr("Date"), self.tr("Model"), self.tr("Messages")]
        )
        self.conversation_list.setRootIsDecorated(False)
        self.conversation_list.setUniformRowHeights(True)
        self.conversation_list.setEditTriggers(
            QTreeWidget.EditTrigger.DoubleClicked | QTreeWidget.EditTrigger.EditKeyPressed
        )
        header = self.conversation_list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        left_layout.addWidget(self.conversation_list, 3)
        self.history_search = QLineEdit()
        self.history_search.setObjectName("history_search")
        self.history_search.setPlaceholderText(self.tr("Search past conversations…"))
        self.history_search.setClearButtonEnabled(True)
        left_layout.addWidget(self.history_search)
        self.search_results = QListWidget()
        self.search_results.setObjectName("search_results")
        self.search_results.setWordWrap(True)
        left_layout.addWidget(self.search_results, 2)
        tools = QHBoxLayout()
        self.import_conversations = QPushButton(self.tr("Import…"))
        self.import_conversations.setObjectName("import_conversations")
        self.export_conversations = QToolButton()
        self.export_conversations.setObjectName("export_conversations")
        self.export_conversations.setText(self.tr("Export"))
        self.export_conversations.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_conversations)
        self.export_current = QAction(self.tr("This conversation…"), self)
        self.export_current.setObjectName("export_current")
        self.export_all = QAction(self.tr("All conversations…"), self)
        self.export_all.setObjectName("export_all")
        menu.addAction(self.export_current)
        menu.addAction(self.export_all)
        self.export_conversations.setMenu(menu)
        self.rebuild_index = QPushButton(self.tr("Rebuild index"))
        self.rebuild_index.setObjectName("rebuild_index")
        self.rebuild_index.setToolTip(
            self.tr("Delete the search index and rebuild it from the conversation files")
        )
        for widget in (self.import_conversations, self.export_conversations, self.rebuild_index):
            tools.addWidget(widget)
        left_layout.addLayout(tools)
        self.index_progress = QProgressBar()
        self.index_progress.setObjectName("index_progress")
        self.index_progress.setVisible(False)
        left_layout.addWidget(self.index_progress)
        splitter.addWidget(left)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        picker_row = QHBoxLayout()
        picker_label = QLabel(self.tr("Model:"))
        picker_row.addWidget(picker_label)
        self.model_picker = QComboBox()
        self.model_picker.setObjectName("model_picker")
        self.model_picker.setMinimumContentsLength(24)
        # the model's whole name where there is room (it was cut at every window size: the
        # title beside it took two thirds of the row); the title gives way first
        self.model_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        picker_label.setBuddy(self.model_picker)
        picker_row.addWidget(self.model_picker)
        self.title = QLabel(self.tr("New conversation"))
        self.title.setObjectName("conversation_title")
        self.title.setMinimumWidth(40)
        picker_row.addWidget(self.title, 1)
        right_layout.addLayout(picker_row)
        self.transcript = QTextBrowser()
        self.transcript.setObjectName("transcript")
        self.transcript.setOpenLinks(False)
        self.transcript.setProperty("conversation_id", "")
        self.transcript.setProperty("highlighted_message", -1)
        self.transcript.setProperty("checked_messages", "")
        right_layout.addWidget(self.transcript, 1)
        chat_row = QHBoxLayout()
        self.chat_input = QLineEdit()
        self.chat_input.setObjectName("chat_input")
        self.chat_input.setPlaceholderText(self.tr("Write a message and press Enter…"))
        chat_row.addWidget(self.chat_input, 1)
        self.send = QPushButton(self.tr("Send"))
        self.send.setObjectName("send")
        self.send.setDefault(True)
        chat_row.addWidget(self.send)
        self.stop_chat = QPushButton(self.tr("Stop"))
        self.stop_chat.setObjectName("stop_chat")
        chat_row.addWidget(self.stop_chat)
        right_layout.addLayout(chat_row)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        splitter.setSizes([460, 690])

        self.tab_status = QLabel("")
        self.tab_status.setObjectName("tab_status")
        self.tab_status.setWordWrap(True)
        outer.addWidget(self.tab_status)
        #: what the tab is waiting for, shown once a job has run for ACTIVITY_DELAY_MS
        self.tab_activity = QLabel("")
        self.tab_activity.setObjectName("tab_activity")
        self.tab_activity.setStyleSheet(f"color:{theme.colors()['muted']};")
        self.tab_activity.setVisible(False)
        outer.addWidget(self.tab_activity)
        self._activity_timer = QTimer(self)
        self._activity_timer.setSingleShot(True)
        self._activity_timer.setInterval(ACTIVITY_DELAY_MS)
        self._activity_timer.timeout.connect(self._show_activity)

        self.new_history_dialog = QMessageBox(self)
        self.new_history_dialog.setObjectName("new_history_dialog")
        self.new_history_dialog.setIcon(QMessageBox.Icon.Question)
        self.new_history_dialog.setWindowTitle(self.tr("Start a new history"))
        self.new_history_encrypted = self.new_history_dialog.addButton(
            self.tr("New encrypted history…"), QMessageBox.ButtonRole.AcceptRole
        )
        self.new_history_encrypted.setObjectName("new_history_encrypted")
        self.new_history_clear = self.new_history_dialog.addButton(
            self.tr("Continue unencrypted"), QMessageBox.ButtonRole.DestructiveRole
        )
        self.new_history_clear.setObjectName("new_history_clear")
        self.new_history_dialog.addButton(QMessageBox.StandardButton.Cancel)

        self.confirm_delete = QMessageBox(self)
        self.confirm_delete.setObjectName("confirm_delete")
        self.confirm_delete.setIcon(QMessageBox.Icon.Warning)
        self.confirm_delete.setWindowTitle(self.tr("Delete conversation"))
        self.confirm_delete.setStandardButtons(
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        )
        self.confirm_delete.setDefaultButton(QMessageBox.StandardButton.No)
        self.key_dialog: KeyDialog | None = None
        self.file_dialog: QFileDialog | None = None

    def _connect_signals(self) -> None:
        self.send.clicked.connect(self._on_send_clicked)
        self.chat_input.returnPressed.connect(self._on_send_clicked)
        self.stop_chat.clicked.connect(self._on_stop_chat_clicked)
        self.new_conversation.clicked.connect(self._on_new_conversation_clicked)
        self.rename_conversation.clicked.connect(self._on_rename_conversation_clicked)
        self.delete_conversation.clicked.connect(self._on_delete_conversation_clicked)
        self.confirm_delete.finished.connect(self._on_confirm_delete_finished)
        self.conversation_list.itemClicked.connect(self._on_conversation_list_item_clicked)
        self.conversation_list.itemActivated.connect(self._on_conversation_list_item_clicked)
        self.conversation_list.itemChanged.connect(self._on_conversation_list_item_changed)
        self.history_search.returnPressed.connect(self._on_history_search_return_pressed)
        self.search_results.itemClicked.connect(self._on_search_results_item_clicked)
        self.search_results.itemActivated.connect(self._on_search_results_item_clicked)
        self.transcript.anchorClicked.connect(self._on_transcript_anchor_clicked)
        self.rebuild_index.clicked.connect(self._on_rebuild_index_clicked)
        self.set_key.clicked.connect(self._on_set_key_clicked)
        self.new_history.clicked.connect(self._on_new_history_clicked)
        self.new_history_dialog.finished.connect(self._on_new_history_dialog_finished)
        self.import_conversations.clicked.connect(self._on_import_clicked)
        self.export_current.triggered.connect(self._on_export_current_triggered)
        self.export_all.triggered.connect(self._on_export_all_triggered)

    # -- jobs ------------------------------------------------------------------------------
    def _run(
        self, name: str, job: Any, on_success: Any, *, progress: bool = False, doing: str = ""
    ) -> JobHandle:
        """Start ``job``; ``doing`` (“Searching…”) is shown in ``tab_activity`` if it is
        still running after ACTIVITY_DELAY_MS, so no wait goes unexplained."""
        handle = self.workers.start(name, job)
        self._jobs += 1
        handle.signals.succeeded.connect(on_success)
        handle.signals.failed.connect(self._on_job_failed)
        handle.signals.finished.connect(self._on_job_finished)
        if doing:
            key = id(handle)
            self._doing[key] = doing
            handle.signals.finished.connect(lambda: self._done_doing(key))
            if not self._activity_timer.isActive() and not self.tab_activity.isVisible():
                self._activity_timer.start()
            elif self.tab_activity.isVisible():
                self._show_activity()
        if progress:
            handle.signals.progress.connect(self._on_index_progress)
            handle.signals.finished.connect(self._on_index_finished)
            self.index_progress.setRange(0, 0)
            self.index_progress.setVisible(True)
        return handle

    def _start(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Started:
            agent = service.get()
            agent.start(progress)
            return _Started(agent.conversations(), agent.encryption_status(), agent.model_choices())

        self.tab_status.setText(self.tr("Reading conversations…"))
        self._run(
            "conversations: start", job, self._on_started, doing=self.tr("Reading conversations…")
        )

    def _on_started(self, started: Any) -> None:
        assert isinstance(started, _Started)
        self.ready = True
        self._set_choices(started.choices)
        self._show_listing(_Listing(started.rows, started.status))
        self.tab_status.setText(self.tr("%n conversation(s)", "", len(started.rows)))
        self._set_busy_chat(False)
        self._sync_index()
        self._discover_models()

    def _sync_index(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Indexed:
            agent = service.get()
            try:
                report = agent.sync_vectors(progress)
            except (DimensionMismatchError, EmbedderMismatchError) as err:
                return _Indexed("", str(err))
            return _Indexed(self.tr("{0} new, {1} dropped").format(report.added, report.dropped))

        self._run(
            "conversations: index",
            job,
            self._on_index_succeeded,
            progress=True,
            doing=self.tr("Updating the search index…"),
        )

    def reload_models(self) -> None:
        """The models were added, removed or chosen elsewhere (Tools ▸ Models, the welcome's
        "Use it"): list them again, the newly configured one first and selected."""
        if not self.ready:
            return  # the start-up listing is still to come, and reads them then
        service = self.service

        def job(progress: Progress, emit: Emit) -> list[ModelChoice]:
            return service.get().model_choices()

        self._run("conversations: models", job, self._on_models_reloaded)

    def _on_models_reloaded(self, choices: Any) -> None:
        self._set_choices(list(choices))
        self._discover_models()

    def _discover_models(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> list[ModelChoice]:
            return service.get().discover_models()

        self._run("conversations: models", job, self._on_models_discovered)

    def _refresh(self, note: str = "") -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            agent.reconcile()
            return _listing(agent, note)

        self._run("conversations: list", job, self._on_listing, doing=self.tr("Reading the list…"))

    @property
    def busy(self) -> bool:
        """True while a job this tab started has not delivered its result yet."""
        return self._jobs > 0

    def _on_job_finished(self) -> None:
        self._jobs -= 1

    def _show_activity(self) -> None:
        doing = list(dict.fromkeys(self._doing.values()))
        self.tab_activity.setText(" · ".join(doing))
        self.tab_activity.setVisible(bool(doing))

    def _done_doing(self, key: int) -> None:
        self._doing.pop(key, None)
        if not self._doing:
            self._activity_timer.stop()
            self.tab_activity.setVisible(False)
            self.tab_activity.setText("")
        elif self.tab_activity.isVisible():
            self._show_activity()

    # -- slots: results --------------------------------------------------------------------
    def _on_job_failed(self, message: str, environment: bool) -> None:
        status = self._status
        if (
            environment
            and status is not None
            and status.key_problem
            and status.key_problem in message
        ):
            # the store's refusal names variables and key ids: they are under Details
            self.tab_status.setText(
                self.tr(
                    "Nothing was written: your history is locked. Give its key or passphrase "
                    "in “Set key…”, or start a new history."
                )
            )
            return
        prefix = "" if environment else self.tr("Unexpected error (see the log): ")
        self.tab_status.setText(prefix + message)

    def _on_index_progress(self, done: int, total: int, message: str) -> None:
        if total:
            self.index_progress.setRange(0, total)
            self.index_progress.setValue(done)
        self.index_progress.setFormat(f"%v/%m {message}")

    def _on_index_finished(self) -> None:
        self.index_progress.setVisible(False)

    def _on_index_succeeded(self, result: Any) -> None:
        assert isinstance(result, _Indexed)
        if result.mismatch:
            self.tab_status.setText(
                self.tr(
                    "Search is off: {0} Use “Rebuild index” to re-embed with the current model."
                ).format(result.mismatch)
            )
            self.rebuild_index.setStyleSheet("font-weight:bold;")
        else:
            self.rebuild_index.setStyleSheet("")
            self.index_progress.setToolTip(result.note)

    def _on_models_discovered(self, choices: Any) -> None:
        for choice in choices:
            if self.model_picker.findData(choice.key) < 0:
                self.model_picker.addItem(choice.label, choice.key)

    def _on_listing(self, listing: Any) -> None:
        assert isinstance(listing, _Listing)
        self._show_listing(listing)
        if listing.note:
            self.tab_status.setText(listing.note)
        if listing.title:
            self.title.setText(listing.title)

    def _set_choices(self, choices: list[ModelChoice]) -> None:
        self.model_picker.clear()
        for choice in choices:
            self.model_picker.addItem(choice.label, choice.key)
        self.model_picker.setCurrentIndex(0)

    def _show_listing(self, listing: _Listing) -> None:
        self._status = listing.status
        self._show_status(listing.status)
        self._rows = {r.id: r for r in listing.rows}
        locked_ids = set(listing.status.locked_key_ids)
        self._populating = True
        try:
            self.conversation_list.clear()
            for row in listing.rows:
                count = "?" if row.messages is None else str(row.messages)
                item = QTreeWidgetItem(
                    [row.name, row.date[:16].replace("T", " "), row.model, count]
                )
                item.setData(0, ID_ROLE, row.id)
                item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight)
                if row.error and row.encrypted and row.key_id in locked_ids:
                    # an earlier history set aside: kept untouched until its key is given
                    item.setToolTip(
                        0,
                        self.tr(
                            "Locked: part of an earlier history, kept untouched. Give its key "
                            "or passphrase in “Set key…” to read it again."
                        ),
                    )
                    item.setText(0, self.tr("{0} (locked)").format(row.name))
                    item.setForeground(0, Qt.GlobalColor.gray)
                    item.setData(0, LOCKED_ROLE, True)
                elif row.error:
                    item.setToolTip(0, self.tr("Cannot be read: {0}").format(row.error))
                    item.setText(0, "⚠ " + row.name)
                    item.setForeground(0, Qt.GlobalColor.darkRed)
                else:
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                    item.setToolTip(0, row.path)
                self.conversation_list.addTopLevelItem(item)
                if row.id == self.current_id:
                    self.conversation_list.setCurrentItem(item)
        finally:
            self._populating = False

    def _show_status(self, status: EncryptionStatus) -> None:
        if not status.encrypted and status.key_problem and status.passphrase_needed:
            text = self.tr(
                "⚠ <b>History is encrypted with a passphrase and locked.</b> Enter the "
                "passphrase in “Set key…” to read it and add to it — or “Start a new "
                "history…” and keep it as it is."
            )
        elif not status.encrypted and status.key_problem:
            # encrypted history, no key here: the headline is the lock, not "clear text"
            text = self.tr(
                "⚠ <b>History is encrypted and locked.</b> Give its key in “Set key…” to "
                "read it and add to it — or, if the key is lost, “Start a new history…” and "
                "keep it as it is."
            )
        elif not status.encrypted:
            text = self.tr(
                "⚠ <b>History is stored in clear text.</b> Anyone who can read your files can "
                "read your conversations. Set a key to encrypt it."
            )
        elif status.source == "environment":
            text = self.tr("✓ History encrypted (the key is given when Custodia starts).")
        elif status.source == "keyring":
            text = self.tr("✓ History encrypted (the key is kept in this computer's keyring).")
        elif status.source in ("passphrase", "environment_passphrase"):
            text = self.tr(
                "✓ History encrypted with a key derived from your passphrase; the key is never "
                "stored: the passphrase is asked at each start."
            )
            if status.source == "environment_passphrase":
                text = self.tr(
                    "✓ History encrypted with a key derived from your passphrase (given when "
                    "Custodia starts)."
                )
        else:
            text = self.tr(
                "⚠ History encrypted, but the key is kept <b>for this session only</b> (this "
                "computer has no keyring to keep it in): after a restart the history is "
                "locked until you give the key again. A passphrase in “Set key…” needs no "
                "keyring."
            )
        if status.encrypted and status.clear_files:
            text += " " + self.tr(
                "⚠ {0} conversation(s) still stored in clear: “Set key…” encrypts them."
            ).format(status.clear_files)
        if status.rotation_pending:
            text += " " + self.tr(
                "⚠ A key change is unfinished: give its new key in “Set key…” to finish it."
            )
        if status.unreadable:
            text += " " + self.tr(
                "%n conversation(s) cannot be read (marked ⚠).", "", status.unreadable
            )
        if status.locked:
            text += " " + self.tr(
                "{0} conversation(s) of an earlier history are locked, kept untouched: give "
                "their key or passphrase in “Set key…” to read them again."
            ).format(status.locked)
        if status.key_problem:  # the store's own words (variables, key ids) go to Details
            text += "<br>⚠ <b>" + self.tr("New messages are refused until then.") + "</b>"
        self.encryption_status.setText(text)
        self.encryption_details.setText(key_details(status))
        warn = status.warning or status.source == "session"
        self.encryption_status.setStyleSheet(WARNING_STYLE if warn else OK_STYLE)
        self.encryption_status.setProperty("warning", warn)
        self.encryption_status.setProperty("locked", status.locked)
        self.new_history.setVisible(bool(status.key_problem) and not status.rotation_pending)

    # -- chat ------------------------------------------------------------------------------
    def _set_busy_chat(self, busy: bool) -> None:
        self.send.setEnabled(self.ready and not busy)
        self.chat_input.setEnabled(self.ready and not busy)
        self.stop_chat.setVisible(busy)

    def _on_send_clicked(self) -> None:
        self._send()

    def _send(self, draft: bool | None = None) -> None:
        """Send the input; ``draft``: True asks the model for a draft of a history answer
        whatever its pass rate ("Ask the model to rephrase")."""
        text = self.chat_input.text().strip()
        if not text or self._chat is not None or not self.ready:
            return
        service = self.service
        conversation_id = self.current_id
        model_key = self.model_picker.currentData()
        stop = self._stop_chat
        stop.clear()
        self._answering = conversation_id

        def job(progress: Progress, emit: Emit) -> TurnResult:
            agent = service.get()
            return agent.ask(
                text,
                conversation_id,
                model_key,
                on_token=emit,
                # Stop ends the answer and keeps it; closing the window cancels the job
                should_stop=lambda: stop.is_set() or progress.cancelled,
                on_saved=lambda saved_id: emit(_Saved(saved_id)),
                on_answer=lambda answer, passages: emit(_Composed(answer, passages)),
                draft=draft,
            )

        self.chat_input.clear()
        self._unsaved = text
        self._append_message(self._message_count, "user", text, "")
        self._append_header("assistant", self.model_picker.currentText())
        self._streamed = ""
        self._composed = False
        handle = self._run(
            "conversations: chat", job, self._on_chat_succeeded, doing=self.tr("Answering…")
        )
        handle.signals.item.connect(self._on_chat_item)
        handle.signals.failed.connect(self._on_chat_failed)
        handle.signals.finished.connect(self._on_chat_finished)
        self._chat = handle
        self._set_busy_chat(True)
        self.tab_status.setText(self.tr("Thinking…"))

    def _on_stop_chat_clicked(self) -> None:
        if self._chat is not None:
            self._stop_chat.set()  # the turn ends normally: what was said is saved

    def _on_chat_item(self, piece: Any) -> None:
        if isinstance(piece, _Saved):  # the message is on disk: a new conversation has its id
            self._unsaved = ""
            self._answering = piece.conversation_id
            self.current_id = piece.conversation_id
            self.transcript.setProperty("conversation_id", piece.conversation_id)
            return
        text = str(piece)
        if isinstance(piece, _Composed):  # the answer from the history, at once
            text = piece.answer.text + "\n"
            self._composed = True
            self.tab_status.setText(self.tr("Answered from your conversations."))
        elif self._composed and not self._streamed:
            text = self.tr("(The model is rephrasing; shown only if every sentence checks out.) ")
            text += str(piece)
        cursor = self.transcript.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        if not isinstance(piece, _Composed):
            self._streamed += str(piece)
        self.transcript.setTextCursor(cursor)
        self.transcript.ensureCursorVisible()

    def _on_chat_succeeded(self, result: Any) -> None:
        assert isinstance(result, TurnResult)
        if result.conversation_id == self._delete_after_chat:
            return  # stopped to be deleted: ``_on_chat_finished`` deletes it
        self.current_id = result.conversation_id
        self.transcript.setProperty("conversation_id", result.conversation_id)
        if result.checked or _own_policy(result):  # marked when drawn again (``_on_opened``)
            self._checks[(result.conversation_id, result.answer_index)] = result
        note = self.tr("Answered by {0}:{1}").format(result.provider, result.model)
        if result.stopped:
            note = self.tr("Stopped: what was said is kept (marked stopped).")
        if result.retrieval_only:
            note = self.tr("Retrieval-only mode: showing what was found, no generated text.")
        if result.context:
            note += " " + self.tr("(%n passage(s) from past conversations)", "", result.context)
        if result.context_error:
            note += " " + self.tr("Past conversations not searched: {0}").format(
                result.context_error
            )
        self._refresh(note)
        self._open(result.conversation_id, None)

    def _on_chat_failed(self, message: str, environment: bool) -> None:
        """The status says why (``_on_job_failed``). A message that never reached the disk
        goes back into the input, nothing lost; the transcript shows what is stored."""
        if self._unsaved:
            if not self.chat_input.text():
                self.chat_input.setText(self._unsaved)
            self._unsaved = ""
        if self.current_id is not None and self.current_id == self._delete_after_chat:
            return  # it is deleted next (``_on_chat_finished``)
        if self.current_id is not None:
            self._refresh()  # the status keeps saying why
            self._open(self.current_id, None)  # gone (deleted elsewhere)? a new one then
        else:
            self.transcript.clear()
            self._message_count = 0

    def _on_chat_finished(self) -> None:
        self._chat = None
        self._answering = None
        self._stop_chat.clear()
        self._set_busy_chat(False)
        self.chat_input.setFocus()
        doomed, self._delete_after_chat = self._delete_after_chat, None
        if doomed is not None:
            self._delete(doomed)

    def _append_header(self, role: str, meta: str) -> None:
        who = self.tr("You") if role == "user" else self.tr("Assistant")
        self.transcript.append(
            f"<p style='margin-top:8px'><b>{html.escape(who)}</b> "
            f"<span style='color:gray'>{html.escape(meta)}</span></p>"
        )
        self.transcript.append("")

    def _append_message(self, index: int, role: str, content: str, meta: str) -> None:
        self._shown[index] = content
        self.transcript.append(
            _message_html(index, role, content, meta, False, self._who(role), self.tr("Copy"))
        )

    def _on_transcript_anchor_clicked(self, url: QUrl) -> None:
        """``copy:<i>`` copies message *i*, ``copy:<i>:<k>`` its code block *k*;
        ``source:<i>:<n>`` says which past message answer *i*'s sentence came from."""
        if url.scheme() == SOURCE_SCHEME:
            self._show_source(url.path())
            return
        if url.scheme() == OPEN_SCHEME:  # a quoted message, in its conversation
            cid, _, position = url.path().rpartition(":")
            if cid and position.isdigit():
                self._open(cid, int(position))
            return
        if url.scheme() == REPHRASE_SCHEME:
            question = self._shown.get(int(url.path()) - 1, "") if url.path().isdigit() else ""
            if question and self._chat is None:
                self.chat_input.setText(question)
                self._send(draft=True)
            return
        if url.scheme() != "copy":
            return
        parts = url.path().split(":")
        try:
            index = int(parts[0])
            text = self._shown[index]
            if len(parts) > 1:
                text = markdown_body(text)[1][int(parts[1])]
        except (ValueError, KeyError, IndexError):
            return
        QGuiApplication.clipboard().setText(text)
        self.tab_status.setText(self.tr("Copied to the clipboard."))
        self.copied.emit(text)

    def _shown_html(self, index: int, result: TurnResult, ok: str, muted: str) -> tuple[str, str]:
        """An answer as :mod:`backends.answers` made it (AL1): a quote of a past message
        with ✓ [n] (the sources under it open their conversation), the model's own words in
        grey italics, its withheld sentences struck out with why."""
        shown = result.shown
        assert shown is not None

        def cite(sentence: Shown) -> str:
            return (
                f"<a href='{SOURCE_SCHEME}:{index}:{sentence.number}' "
                f"style='color:{ok}; text-decoration:none'>"
                f"<small>✓&nbsp;[{sentence.number}]</small></a>"
            )

        code = shown.mode == MODEL and not shown.withheld and "```" in result.answer
        body = (
            ""
            if code
            else answer_html(
                shown,
                cite,
                muted,
                withheld_title=self.tr("Withheld from the model's draft (not an answer):"),
            )
        )
        after = ""
        sources = [
            f"<a href='{OPEN_SCHEME}:{cid}:{i}'>[{n}] "
            f"{html.escape(self._source_name(result.context_passages[n - 1]))}</a>"
            for n, (cid, i) in enumerate(result.quoted, 1)
            if n <= len(result.context_passages)
        ]
        if sources:
            after += f"<p style='color:{muted}'><small>" + "<br>".join(sources) + "</small></p>"
        parts = [shown.heading] if shown.heading else []
        if shown.cited:
            parts.append(self.tr("✓ [n]: quoted from past message n (click a source to open it)"))
        if any(s.kind == "own" for s in shown.sentences):
            parts.append(self.tr("in grey italics: the model's own words"))
        if shown.withheld:
            parts.append(self.tr("struck out: the model's draft, withheld as unsupported"))
        after += f"<p style='color:{muted}'><small>{html.escape(' · '.join(parts))}</small></p>"
        if result.draft_skipped:
            after += (
                f"<p><small><a href='{REPHRASE_SCHEME}:{index}'>"
                + html.escape(self.tr("Ask the model to rephrase"))
                + "</a></small></p>"
            )
        return body, after

    def _show_source(self, path: str) -> None:
        index, _, number = path.partition(":")
        result = self._checks.get((self.current_id or "", int(index))) if index.isdigit() else None
        if result is None or not number.isdigit():
            return
        n = int(number)
        if 0 < n <= len(result.context_passages):
            self.tab_status.setText(
                f"[{n}] " + self._source_name(result.context_passages[n - 1], full=True)
            )

    def _source_name(self, passage: str, *, full: bool = False) -> str:
        """A past message given as context, named as the user knows it: its conversation,
        date and who wrote it (its text, shortened unless ``full``)."""
        match = _PASSAGE.match(passage)
        if match is None:
            return passage
        text = " ".join(match["text"].split())
        if not full and len(text) > 80:
            text = text[:77] + "…"
        return self.tr("from “{0}” ({1}), {2}: {3}").format(
            match["name"], match["date"], self._who(match["role"]), text
        )

    def _checked(self, index: int, result: TurnResult) -> tuple[str, str]:
        """Answer *index* marked (CT9): the body to show in place of its Markdown ("" to
        keep it) and what follows it — the past messages it cites, named, and the legend."""
        colours = theme.colors()
        ok, muted = colours["ok"], colours["muted"]
        if _own_policy(result):
            return self._shown_html(index, result, ok, muted)

        def cite(sentence: CheckedSentence) -> str:
            return (
                f"<a href='{SOURCE_SCHEME}:{index}:{sentence.number}' "
                f"style='color:{ok}; text-decoration:none'>"
                f"<small>✓&nbsp;[{sentence.number}]</small></a>"
            )

        own = self.tr("not from your past conversations")
        body = checked_html(result.answer, result.checked, cite, muted)
        after = checked_list_html(result.checked, cite, muted, own) if body is None else ""
        cited = sorted({c.number for c in result.checked if c.supported})
        sources = [
            f"[{n}] {html.escape(self._source_name(result.context_passages[n - 1]))}"
            for n in cited
            if 0 < n <= len(result.context_passages)
        ]
        if sources:
            after += f"<p style='color:{muted}'><small>" + "<br>".join(sources) + "</small></p>"
        legend = self.tr(
            "✓ [n]: past message n says it (named under the answer; click ✓ to see it whole) "
            "· in grey italics: the assistant's own words, {0}"
        ).format(own)
        after += f"<p style='color:{muted}'><small>{html.escape(legend)}</small></p>"
        return body or "", after

    def _who(self, role: str) -> str:
        names = {
            "user": self.tr("You"),
            "assistant": self.tr("Assistant"),
            "system": self.tr("System"),
            "tool": self.tr("Tool"),
        }
        return names.get(role, role)

    # -- opening conversations -------------------------------------------------------------
    def _open(self, conversation_id: str, highlight: int | None) -> None:
        service = self.service
        self._open_serial += 1
        serial = self._open_serial

        def job(progress: Progress, emit: Emit) -> _Opened:
            try:
                conversation = service.get().load(conversation_id)
            except ConversationNotFoundError:  # deleted elsewhere (the CLI, another window)
                return _Opened(serial, None, highlight, conversation_id)
            except ConversationError as err:  # unreadable since it was listed or found
                return _Opened(
                    serial, None, highlight, conversation_id, f"{err.reason}: {err.detail}"
                )
            return _Opened(serial, conversation, highlight, conversation_id)

        self._run(
            "conversations: open", job, self._on_opened, doing=self.tr("Opening the conversation…")
        )

    def _on_opened(self, opened: Any) -> None:
        assert isinstance(opened, _Opened)
        if opened.serial != self._open_serial:
            return  # the user opened another one meanwhile
        conversation = opened.conversation
        if conversation is None and opened.error:
            # named as listed or as the hit showed it, never by its id (the error's file name)
            self.tab_status.setText(
                self.tr("“{0}” cannot be opened: {1}").format(
                    self._name(opened.conversation_id), opened.error
                )
            )
            self._refresh(self.tab_status.text())  # the list marks it ⚠
            self._rerun_search(drop=opened.conversation_id)
            return
        if conversation is None:
            self._on_conversation_gone(opened.conversation_id)
            return
        self._last_opened = opened
        self.current_id = conversation.id
        self.title.setText(conversation.display_name)
        stopped = self.tr("stopped")
        self._shown = {i: m.content for i, m in enumerate(conversation.history)}
        checks = {
            i: self._checked(i, result)
            for i, m in enumerate(conversation.history)
            if (result := self._checks.get((conversation.id, i))) is not None
            and result.answer == m.content
        }
        parts = [
            _message_html(
                i,
                m.role,
                m.content,
                " · ".join(
                    x
                    for x in (m.time[:16].replace("T", " "), m.model, stopped if m.stopped else "")
                    if x
                ),
                i == opened.highlight,
                self._who(m.role),
                self.tr("Copy"),
                checks.get(i),
            )
            for i, m in enumerate(conversation.history)
        ]
        self.transcript.setHtml("".join(parts))
        marked = [self._checks[(conversation.id, i)] for i in sorted(checks)]
        last = marked[-1].checked if marked else ()
        shown = marked[-1].shown if marked and _own_policy(marked[-1]) else None
        # for testers: which answers are marked; the last one's sentences by kind
        self.transcript.setProperty("checked_messages", ",".join(map(str, sorted(checks))))
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
        self._message_count = len(conversation.history)
        self.transcript.setProperty("conversation_id", conversation.id)
        self.transcript.setProperty(
            "highlighted_message", -1 if opened.highlight is None else opened.highlight
        )
        if opened.highlight is not None:
            self.transcript.scrollToAnchor(f"msg-{opened.highlight}")
        else:
            self.transcript.moveCursor(QTextCursor.MoveOperation.End)
            self.transcript.ensureCursorVisible()
        index = self.model_picker.findData(f"{conversation.provider}:{conversation.model}")
        if index >= 0:
            self.model_picker.setCurrentIndex(index)
        for row in range(self.conversation_list.topLevelItemCount()):
            item = self.conversation_list.topLevelItem(row)
            if item is not None and item.data(0, ID_ROLE) == conversation.id:
                self.conversation_list.setCurrentItem(item)

    def _on_conversation_list_item_clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        conversation_id = item.data(0, ID_ROLE)
        if not conversation_id or self._chat is not None:
            return
        row = self._rows.get(conversation_id)
        if row is not None and row.error:
            self.tab_status.setText(
                self.tr("“{0}” cannot be read: {1}").format(row.name, row.error)
            )
            return
        if (
            conversation_id != self.current_id
            or self.transcript.property("conversation_id") != conversation_id
        ):
            self._open(conversation_id, None)

    def _on_conversation_gone(self, conversation_id: str) -> None:
        """The file of a conversation being opened no longer exists (deleted elsewhere)."""
        current = conversation_id == self.current_id
        name = self.title.text() if current else self._name(conversation_id)
        text = self.tr("“{0}” no longer exists (deleted outside this tab?).").format(name)
        if current and self._chat is None:
            self._show_new_conversation()
            text += " " + self.tr("Your next message starts a new conversation.")
        self.tab_status.setText(text)
        self._refresh()  # drop it from the list
        self._rerun_search(drop=conversation_id)  # and from the hits

    def _on_new_conversation_clicked(self) -> None:
        if self._chat is not None:
            return
        self._show_new_conversation()
        self.chat_input.setFocus()

    def _show_new_conversation(self) -> None:
        """A clean new conversation: no current id, empty transcript, nothing selected."""
        self.current_id = None
        self._open_serial += 1  # an open still on its way is not shown
        self._message_count = 0
        self._streamed = ""
        self._shown = {}
        self.transcript.clear()
        self.transcript.setProperty("conversation_id", "")
        self.transcript.setProperty("highlighted_message", -1)
        self.transcript.setProperty("checked_messages", "")
        self.title.setText(self.tr("New conversation"))
        self.conversation_list.clearSelection()
        self.conversation_list.setCurrentIndex(QModelIndex())  # Delete acts on nothing now

    # -- rename and delete -----------------------------------------------------------------
    def _selected_id(self) -> str | None:
        item = self.conversation_list.currentItem()
        value = item.data(0, ID_ROLE) if item is not None else None
        return str(value) if value else None

    def _on_rename_conversation_clicked(self) -> None:
        item = self.conversation_list.currentItem()
        if item is not None and item.flags() & Qt.ItemFlag.ItemIsEditable:
            self.conversation_list.editItem(item, 0)

    def _on_conversation_list_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._populating or column != 0:
            return
        conversation_id = str(item.data(0, ID_ROLE))
        row = self._rows.get(conversation_id)
        name = item.text(0).strip()
        if row is None or not name or name == row.name:
            return
        service = self.service
        is_current = conversation_id == self.current_id

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            renamed = agent.rename(conversation_id, name)  # tidied, or InvalidNameError
            return _listing(agent, "", title=renamed.name if is_current else "")

        handle = self._run(
            "conversations: rename", job, self._on_listing, doing=self.tr("Renaming…")
        )
        handle.signals.failed.connect(self._on_rename_failed)
        handle.signals.succeeded.connect(self._on_renamed)

    def _on_renamed(self, listing: Any) -> None:
        self._rerun_search()  # the hits show the new name

    def _on_rename_failed(self, message: str, environment: bool) -> None:
        """The edited name was refused (the status says why): show the stored names again."""
        self._refresh(self.tab_status.text())

    def _on_delete_conversation_clicked(self) -> None:
        conversation_id = self._selected_id()
        if conversation_id is None:
            self.tab_status.setText(self.tr("Select a conversation to delete."))
            return
        if conversation_id == self._delete_after_chat:  # already confirmed
            self.tab_status.setText(
                self.tr("“{0}” is deleted as soon as its answer has stopped.").format(
                    self._name(conversation_id)
                )
            )
            return
        self._pending_delete = conversation_id
        text = self.tr("Delete “{0}”? Its file is removed; this cannot be undone.").format(
            self._name(conversation_id)
        )
        if self._is_answering(conversation_id):
            text += "\n\n" + self.tr("Its answer is still being written: it is stopped first.")
        self.confirm_delete.setText(text)
        self.confirm_delete.open()

    def _on_confirm_delete_finished(self, result: int) -> None:
        conversation_id, self._pending_delete = self._pending_delete, None
        clicked = self.confirm_delete.clickedButton()
        if conversation_id is None or clicked != self.confirm_delete.button(
            QMessageBox.StandardButton.Yes
        ):
            return
        if self._is_answering(conversation_id):
            # deleting the file under a streaming answer broke the turn and left the tab on
            # a conversation that no longer exists: stop (Stop's path), delete when it ended
            self._delete_after_chat = conversation_id
            self._stop_chat.set()
            self.tab_status.setText(
                self.tr("Stopping the answer, then deleting “{0}”…").format(
                    self._name(conversation_id)
                )
            )
            return
        self._delete(conversation_id)

    def _is_answering(self, conversation_id: str) -> bool:
        return self._chat is not None and conversation_id in (self._answering, self.current_id)

    def _name(self, conversation_id: str) -> str:
        """The conversation's name as listed; never its raw id (a search hit of one that is
        gone names it as the hit did, else “this conversation”)."""
        row = self._rows.get(conversation_id)
        if row is not None:
            return row.name
        return self._hit_names.get(conversation_id) or self.tr("this conversation")

    def _delete(self, conversation_id: str) -> None:
        service = self.service
        note = self.tr("Deleted “{0}”.").format(self._name(conversation_id))

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            agent.delete(conversation_id)
            return _listing(agent, note)

        if conversation_id == self.current_id:
            self._show_new_conversation()
        had_hits = self._drop_hits(conversation_id)  # at once; searched again once it is gone
        handle = self._run(
            "conversations: delete", job, self._on_listing, doing=self.tr("Deleting…")
        )
        handle.signals.failed.connect(self._on_delete_failed)
        if had_hits:
            handle.signals.succeeded.connect(self._on_deleted)

    def _on_deleted(self, listing: Any) -> None:
        self._rerun_search()

    def _on_delete_failed(self, message: str, environment: bool) -> None:
        """The status says why; the list shows what is really there (gone already?)."""
        self._refresh(self.tab_status.text())

    # -- search ----------------------------------------------------------------------------
    def _on_history_search_return_pressed(self) -> None:
        query = self.history_search.text().strip()
        self.search_results.clear()
        self._last_query = query
        self._search(query)

    def _drop_hits(self, conversation_id: str) -> bool:
        """Remove the hits of ``conversation_id`` (deleted); whether there were any."""
        dropped = False
        for row in reversed(range(self.search_results.count())):
            item = self.search_results.item(row)
            if item is not None and item.data(ID_ROLE) == conversation_id:
                self.search_results.takeItem(row)
                dropped = True
        return dropped

    def _rerun_search(self, drop: str | None = None) -> None:
        """Hits may be stale after a rename, delete, import or key change (call it once
        that is done): drop those of ``drop`` (gone) at once, then search again for the
        shown query."""
        dropped = self._drop_hits(drop) if drop is not None else False
        if self._last_query and (self.search_results.count() > 0 or dropped):
            self._search(self._last_query, quiet=True)

    def _search(self, query: str, *, quiet: bool = False) -> None:
        if not query:
            return
        service = self.service
        self._search_serial += 1
        serial = self._search_serial

        def job(progress: Progress, emit: Emit) -> _Found:
            agent = service.get()
            hits = agent.search(query, 20)
            reasons = agent.unreadable_reasons()
            unsearched = ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
            return _Found(serial, hits, unsearched, quiet)

        self._run(
            "conversations: search",
            job,
            self._on_search_succeeded,
            doing=self.tr("Searching past conversations…"),
        )

    def _on_search_succeeded(self, found: Any) -> None:
        assert isinstance(found, _Found)
        if found.serial != self._search_serial:
            return
        self.search_results.clear()
        for hit in found.hits:
            text = " ".join(hit.text.split())
            if len(text) > 140:
                text = text[:139] + "…"
            item = QListWidgetItem(f"{hit.name} · {self._who(hit.role)}: {text}")
            item.setToolTip(f"{hit.date} · {hit.score:.2f}")
            item.setData(ID_ROLE, hit.conversation_id)
            item.setData(INDEX_ROLE, hit.index)
            item.setData(NAME_ROLE, hit.name)
            self.search_results.addItem(item)
        if found.quiet:
            return
        if not found.hits:
            text = self.tr("Nothing found.")
        else:
            text = self.tr("%n message(s) found", "", len(found.hits))
        if found.unsearched:
            text += " " + self.tr(
                "Not searched: conversations that cannot be read ({0}; marked ⚠)."
            ).format(found.unsearched)
        self.tab_status.setText(text)

    def _on_search_results_item_clicked(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(ID_ROLE)
        index = item.data(INDEX_ROLE)
        if conversation_id and self._chat is None:
            self._hit_names[str(conversation_id)] = str(item.data(NAME_ROLE) or "")
            self._open(str(conversation_id), int(index))

    # -- index, key, import, export --------------------------------------------------------
    def _on_rebuild_index_clicked(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Indexed:
            report = service.get().rebuild_vectors(progress)
            return _Indexed(self.tr("%n message(s) indexed", "", report.added))

        self.rebuild_index.setEnabled(False)
        handle = self._run(
            "conversations: rebuild",
            job,
            self._on_rebuild_succeeded,
            progress=True,
            doing=self.tr("Rebuilding the search index…"),
        )
        handle.signals.finished.connect(self._on_rebuild_finished)

    def _on_rebuild_succeeded(self, result: Any) -> None:
        assert isinstance(result, _Indexed)
        self.rebuild_index.setStyleSheet("")
        self.tab_status.setText(self.tr("Search index rebuilt: {0}").format(result.note))

    def _on_rebuild_finished(self) -> None:
        self.rebuild_index.setEnabled(True)

    def _on_set_key_clicked(self) -> None:
        self._open_key_dialog(new_history=False)

    def _open_key_dialog(self, *, new_history: bool) -> None:
        if self.key_dialog is not None:  # already open: bring it back
            self.key_dialog.raise_()
            self.key_dialog.activateWindow()
            return
        # deletes itself when closed
        dialog = KeyDialog(self._status, self, new_history=new_history)
        dialog.key_chosen.connect(self._on_key_dialog_key_chosen)
        dialog.passphrase_submitted.connect(self._on_key_dialog_passphrase_submitted)
        dialog.finished.connect(self._on_key_dialog_finished)
        self.key_dialog = dialog
        dialog.open()

    def _on_key_dialog_finished(self, result: int) -> None:
        self.key_dialog = None

    def _on_key_dialog_passphrase_submitted(self, passphrase: str, new: bool) -> None:
        """Derive the passphrase's key off the GUI thread (Scrypt: ~0.4 s, 128 MiB); the
        dialog waits, saying so, and shows a wrong passphrase itself."""
        service = self.service
        dialog = self.key_dialog

        def job(progress: Progress, emit: Emit) -> str | _Refused:
            try:
                return service.get().key_from_passphrase(passphrase, new=new)
            except WrongPassphraseError as err:
                return _Refused(
                    self.tr(
                        "This passphrase does not open your history. Check it for a typo "
                        "(letter case, keyboard layout)."
                    ),
                    str(err),
                )
            except NoPassphraseError as err:
                return _Refused(
                    self.tr("No passphrase has been set for this history yet: set one first."),
                    str(err),
                )

        def derived(key: Any) -> None:
            if dialog is None or dialog is not self.key_dialog:
                return
            if isinstance(key, _Refused):
                dialog.passphrase_failed(key.message, key.details)
            else:
                dialog.passphrase_derived(str(key))

        def failed(message: str, environment: bool) -> None:
            if dialog is not None and dialog is self.key_dialog:
                dialog.passphrase_failed(message)

        handle = self._run(
            "conversations: passphrase",
            job,
            derived,
            doing=self.tr("Deriving the key from the passphrase…"),
        )
        handle.signals.failed.connect(failed)

    def _on_key_dialog_key_chosen(self, key: str, generated: bool, passphrase: bool) -> None:
        service = self.service
        dialog = self.key_dialog
        if dialog is not None and dialog.new_history:
            self._start_new_history(key, passphrase)
            return

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            # a generated key is saved (keyring, else conversations/.rotation.key) before
            # the first file is rewritten: an interrupted change is recoverable
            outcome: KeyOutcome = agent.use_key(
                key, progress, generated=generated, passphrase=passphrase
            )
            report = outcome.rotation
            if report is None:
                note = self.tr("%n locked conversation(s) readable again.", "", outcome.unlocked)
            elif report.rotated:
                note = self.tr("%n conversation(s) encrypted with the new key.", "", report.rotated)
            else:
                note = self.tr("The new key is set; there were no conversations to encrypt.")
            if report is not None and report.failed:
                note += " " + self.tr(
                    "%n conversation(s) could not be read and were left as they were.",
                    "",
                    len(report.failed),
                )
            return _listing(agent, note)

        handle = self._run(
            "conversations: key",
            job,
            self._on_listing,
            progress=True,
            doing=self.tr("Re-encrypting conversations…"),
        )
        handle.signals.succeeded.connect(self._on_key_used)

    def _on_key_used(self, listing: Any) -> None:
        self._rerun_search()  # locked hits may be readable now, or the reverse

    # -- a new history beside a locked one -------------------------------------------------
    def _on_new_history_clicked(self) -> None:
        status = self._status
        count = status.needed_files if status is not None else 0
        self.new_history_dialog.setText(
            self.tr(
                "Your {0} encrypted conversation(s) cannot be opened without their key. Start "
                "a new history? They are kept exactly as they are, listed as locked, and "
                "readable again whenever you give their key or passphrase."
            ).format(count)
        )
        self.new_history_dialog.setInformativeText(
            self.tr(
                "“Continue unencrypted” stores new conversations in clear text: anyone who "
                "can read your files can read them."
            )
        )
        self.new_history_dialog.open()

    def _on_new_history_dialog_finished(self, result: int) -> None:
        clicked = self.new_history_dialog.clickedButton()
        if clicked is self.new_history_encrypted:
            self._open_key_dialog(new_history=True)
        elif clicked is self.new_history_clear:
            self._start_new_history(None, False)

    def _start_new_history(self, key: str | None, passphrase: bool) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            made: NewHistory = agent.start_new_history(key, passphrase=passphrase)
            note = (
                self.tr("A new encrypted history is started.")
                if made.encrypted
                else self.tr("A new history is started, stored in clear text.")
            )
            note += " " + self.tr(
                "%n earlier conversation(s) kept untouched, locked.", "", made.locked
            )
            return _listing(agent, note)

        self._run(
            "conversations: new history",
            job,
            self._on_listing,
            doing=self.tr("Starting a new history…"),
        )

    def _choose_file(self, name: str, save: bool, filters: list[str], slot: Any) -> None:
        dialog = QFileDialog(self)
        dialog.setObjectName(name)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAcceptMode(
            QFileDialog.AcceptMode.AcceptSave if save else QFileDialog.AcceptMode.AcceptOpen
        )
        dialog.setFileMode(
            QFileDialog.FileMode.AnyFile if save else QFileDialog.FileMode.ExistingFile
        )
        dialog.setNameFilters(filters)
        dialog.fileSelected.connect(slot)  # emitted before finished: the dialog is still there
        dialog.finished.connect(self._on_file_dialog_finished)
        self.file_dialog = dialog
        dialog.open()

    def _on_file_dialog_finished(self, result: int) -> None:
        self.file_dialog = None

    def _on_import_clicked(self) -> None:
        self._choose_file(
            "import_dialog",
            False,
            [self.tr("Conversations (*.json *.zip)"), self.tr("All files (*)")],
            self._on_import_file_selected,
        )

    def _on_import_file_selected(self, path: str) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            result = import_file(agent, Path(path), progress)
            note = f"Imported {len(result.imported)} conversation(s), named “… (imported)”"
            if result.renamed:
                note += f" ({result.renamed} under a new id)"
            if result.duplicates:
                shown = ", ".join(f"“{n}”" for n in result.duplicates[:3])
                more = len(result.duplicates) - 3
                note += f"; {len(result.duplicates)} already here, skipped: {shown}"
                if more > 0:
                    note += f" and {more} more"
            # what was not imported, and what was repaired, is said (never a silent part)
            if result.failed:
                note += f"; {len(result.failed)} not imported: " + "; ".join(result.failed[:3])
                if len(result.failed) > 3:
                    note += f"; and {len(result.failed) - 3} more"
            if result.notices:
                note += "; " + "; ".join(result.notices[:3])
            return _listing(agent, note)

        handle = self._run(
            "conversations: import",
            job,
            self._on_listing,
            progress=True,
            doing=self.tr("Importing…"),
        )
        handle.signals.succeeded.connect(self._on_import_succeeded)

    def _on_import_succeeded(self, result: Any) -> None:
        self._sync_index()
        self._rerun_search()

    def _on_export_current_triggered(self) -> None:
        if self.current_id is None:
            self.tab_status.setText(self.tr("Open a conversation to export it."))
            return
        self._export_all = False
        self._choose_export()

    def _on_export_all_triggered(self) -> None:
        self._export_all = True
        self._choose_export()

    def _choose_export(self) -> None:
        self._choose_file(
            "export_dialog",
            True,
            [self.tr("JSON (*.json)"), self.tr("Markdown (*.md)")],
            self._on_export_file_selected,
        )

    def _on_export_file_selected(self, path: str) -> None:
        dialog = self.file_dialog
        chosen = dialog.selectedNameFilter() if dialog is not None else ""
        path, fmt = export_target(path, chosen)
        ids = None if self._export_all else [self.current_id or ""]
        service = self.service

        def job(progress: Progress, emit: Emit) -> _Listing:
            agent = service.get()
            text, problems = export_conversations(agent, ids, fmt, progress)
            write_private(Path(path), text)
            note = f"Exported to {path} (plaintext)"
            if problems:
                note += f"; {len(problems)} unreadable conversation(s) left out"
            return _listing(agent, note)

        self._run("conversations: export", job, self._on_listing, doing=self.tr("Exporting…"))

    # -- theme -----------------------------------------------------------------------------
    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange):
            self.theme_changed()

    def theme_changed(self) -> None:
        """A theme switch (the window calls it too): names and highlights stay readable."""
        colours = theme.colors()
        self.tab_activity.setStyleSheet(f"color:{colours['muted']};")
        opened = self._last_opened
        if (
            opened is not None
            and opened.conversation is not None
            and opened.serial == self._open_serial
            and self._chat is None
            and self.transcript.property("conversation_id") == opened.conversation.id
        ):
            self._on_opened(opened)

    # -- shutdown --------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Called after the window cancelled and waited for every job."""
        self._chat = None
        self._delete_after_chat = None  # no new job while the window closes


def export_target(path: str, chosen_filter: str) -> tuple[str, str]:
    """``(path, format)`` for an export: the format from the name's extension, else from the
    chosen filter; a name without an extension gets the filter's (``.md`` or ``.json``)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".md", ".markdown"):
        return path, "markdown"
    if suffix == ".json":
        return path, "json"
    fmt = "markdown" if "*.md" in chosen_filter else "json"
    if not suffix:
        path += ".md" if fmt == "markdown" else ".json"
    return path, fmt


_INLINE_CODE = re.compile(r"(`+)(?:.*?)\1", re.DOTALL)


def _escape_html(prose: str) -> str:
    """Markdown prose with ``<`` and ``&`` escaped outside inline code: Qt's importer takes
    raw HTML, so a message saying ``<a href=…>x</a>`` or ``<div>`` lost that text."""
    out: list[str] = []
    last = 0
    for match in _INLINE_CODE.finditer(prose):
        out.append(prose[last : match.start()].replace("&", "\\&").replace("<", "\\<"))
        out.append(match.group(0))
        last = match.end()
    out.append(prose[last:].replace("&", "\\&").replace("<", "\\<"))
    return "".join(out)


def markdown_body(content: str) -> tuple[str, list[str]]:
    """A message's HTML body, rendered as Markdown by the shared renderer
    (:func:`desktop.markdown.set_markdown`: code blocks fixed-pitch, indentation kept), and
    the text of its code blocks (for their Copy links)."""
    parts: list[str] = []
    codes: list[str] = []
    for segment in split_markdown(content):
        if segment.kind == "code":
            runs = [len(m) for m in re.findall(r"`+", segment.text)]
            fence = "`" * max(3, max(runs, default=0) + 1)
            parts.append(f"{fence}{segment.language}\n{segment.text}\n{fence}")
            codes.append(segment.text)
        else:
            parts.append(_escape_html(segment.text))
    if not parts:
        return "", codes
    document = QTextDocument()
    set_markdown(document, "\n\n".join(parts))
    text = document.toHtml()
    start = text.find("<body")
    start = text.find(">", start) + 1 if start >= 0 else 0
    end = text.rfind("</body>")
    return text[start : end if end >= 0 else len(text)], codes


def _message_html(
    index: int,
    role: str,
    content: str,
    meta: str,
    highlight: bool,
    who: str,
    copy: str = "Copy",
    checked: tuple[str, str] | None = None,
) -> str:
    """One message; ``checked``: its sentences marked (the body in place of its Markdown,
    or "" to keep it, and what follows it)."""
    body, codes = markdown_body(content)
    after = ""
    if checked is not None:
        body = checked[0] or body
        after = checked[1]
    links = "".join(
        f" <a href='copy:{index}:{k}' style='color:gray'>{html.escape(copy)} code {k + 1}</a>"
        for k in range(len(codes))
    )
    dark = theme.current_is_dark()
    background = f"background-color:{HIGHLIGHT_DARK if dark else HIGHLIGHT};" if highlight else ""
    colours = _ROLE_COLOURS_DARK if dark else _ROLE_COLOURS
    colour = colours.get(role, theme.colors()["muted"])
    return (
        f"<a name='msg-{index}'></a>"
        f"<table width='100%' cellpadding='4' style='{background}margin-top:6px'><tr><td>"
        f"<b style='color:{colour}'>{html.escape(who)}</b> "
        f"<span style='color:gray'>{html.escape(meta)}</span> "
        f"<a href='copy:{index}' style='color:gray'>{html.escape(copy)}</a>{links}"
        f"{body}{after}</td></tr></table>"
    )


def create(
    service: Lazy[ConversationAgent], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    """The tab; ``models`` is not used: the agent lists and loads its own models."""
    return ConversationsTab(service, workers, parent)
