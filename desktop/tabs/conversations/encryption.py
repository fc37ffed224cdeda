"""The conversations tab's encryption panel: how the history is kept, and its key.

The headline says in plain words whether the history is encrypted, locked or in clear text
(``encryption_status``; the cipher, key ids and variables under ``encryption_details``).
``set_key`` opens the :class:`~.key_dialog.KeyDialog`; the panel derives a passphrase's key
and re-encrypts the history in the worker pool. When the key of an encrypted history is
lost, ``new_history`` offers to set it aside, locked, and go on with a new one.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from backends.conversations import (
    ConversationAgent,
    EncryptionStatus,
    KeyOutcome,
    NewHistory,
    NoPassphraseError,
    WrongPassphraseError,
)
from backends.progress import Progress
from backends.services import Lazy
from desktop.tabs.conversations.jobs import TabJobs
from desktop.tabs.conversations.key_dialog import OK_STYLE, WARNING_STYLE, KeyDialog, key_details
from desktop.tabs.conversations.results import Listing, Refused, listing
from desktop.tabs.conversations.words import counted, translate
from desktop.workers import Emit


class EncryptionPanel(QWidget):
    """The encryption headline, its Details, ``set_key`` and ``new_history`` (see the
    module doc). Its jobs end in a listing for the tab to show."""

    #: a key or a new history changed the list and the status: the tab shows them
    listing_arrived = Signal(object)
    #: a key was used: locked search hits may be readable now, or the reverse
    key_used = Signal()

    def __init__(
        self, service: Lazy[ConversationAgent], jobs: TabJobs, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.jobs = jobs
        self.state = jobs.state
        self.key_dialog: KeyDialog | None = None
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.encryption_status = QLabel(translate("ConversationsTab", "Checking encryption…"))
        self.encryption_status.setObjectName("encryption_status")
        self.encryption_status.setWordWrap(True)
        self.encryption_status.setTextFormat(Qt.TextFormat.RichText)
        top.addWidget(self.encryption_status, 1)
        #: the cipher, key ids, the variables: for whoever needs them, out of the sentences
        self.encryption_details_button = QToolButton()
        self.encryption_details_button.setObjectName("encryption_details_button")
        self.encryption_details_button.setText(translate("ConversationsTab", "Details"))
        self.encryption_details_button.setCheckable(True)
        self.encryption_details_button.setAutoRaise(True)
        top.addWidget(self.encryption_details_button)
        self.set_key = QPushButton(translate("ConversationsTab", "Set key…"))
        self.set_key.setObjectName("set_key")
        top.addWidget(self.set_key)
        self.new_history = QPushButton(translate("ConversationsTab", "Start a new history…"))
        self.new_history.setObjectName("new_history")
        self.new_history.setToolTip(
            translate(
                "ConversationsTab",
                "The key is lost? Keep the encrypted conversations as they are (locked) and "
                "go on with a new history",
            )
        )
        self.new_history.setVisible(False)
        top.addWidget(self.new_history)
        layout.addLayout(top)
        self.encryption_details = QLabel("")
        self.encryption_details.setObjectName("encryption_details")
        self.encryption_details.setWordWrap(True)
        self.encryption_details.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        self.encryption_details.setVisible(False)
        layout.addWidget(self.encryption_details)

        self.new_history_dialog = QMessageBox(self)
        self.new_history_dialog.setObjectName("new_history_dialog")
        self.new_history_dialog.setIcon(QMessageBox.Icon.Question)
        self.new_history_dialog.setWindowTitle(translate("ConversationsTab", "Start a new history"))
        self.new_history_encrypted = self.new_history_dialog.addButton(
            translate("ConversationsTab", "New encrypted history…"),
            QMessageBox.ButtonRole.AcceptRole,
        )
        self.new_history_encrypted.setObjectName("new_history_encrypted")
        self.new_history_clear = self.new_history_dialog.addButton(
            translate("ConversationsTab", "Continue unencrypted"),
            QMessageBox.ButtonRole.DestructiveRole,
        )
        self.new_history_clear.setObjectName("new_history_clear")
        self.new_history_dialog.addButton(QMessageBox.StandardButton.Cancel)

    def _connect_signals(self) -> None:
        self.encryption_details_button.toggled.connect(self._on_encryption_details_button_toggled)
        self.set_key.clicked.connect(self._on_set_key_clicked)
        self.new_history.clicked.connect(self._on_new_history_clicked)
        self.new_history_dialog.finished.connect(self._on_new_history_dialog_finished)

    def _on_encryption_details_button_toggled(self, shown: bool) -> None:
        self.encryption_details.setVisible(shown)

    # -- the status ------------------------------------------------------------------------
    def show_status(self, status: EncryptionStatus) -> None:
        """The headline, its notes and Details for ``status``; ``new_history`` is offered
        while the history is locked (and no key change is unfinished)."""
        self.state.status = status
        self.encryption_status.setText(self._headline(status) + self._notes(status))
        self.encryption_details.setText(key_details(status))
        warn = status.warning or status.source == "session"
        self.encryption_status.setStyleSheet(WARNING_STYLE if warn else OK_STYLE)
        self.encryption_status.setProperty("warning", warn)
        self.encryption_status.setProperty("locked", status.locked)
        self.new_history.setVisible(bool(status.key_problem) and not status.rotation_pending)

    def _headline(self, status: EncryptionStatus) -> str:
        """Whether the history is locked, in clear text or encrypted, and where its key is."""
        if not status.encrypted and status.key_problem and status.passphrase_needed:
            text = translate(
                "ConversationsTab",
                "⚠ <b>History is encrypted with a passphrase and locked.</b> Enter the "
                "passphrase in “Set key…” to read it and add to it — or “Start a new "
                "history…” and keep it as it is.",
            )
        elif not status.encrypted and status.key_problem:
            # encrypted history, no key here: the headline is the lock, not "clear text"
            text = translate(
                "ConversationsTab",
                "⚠ <b>History is encrypted and locked.</b> Give its key in “Set key…” to "
                "read it and add to it — or, if the key is lost, “Start a new history…” and "
                "keep it as it is.",
            )
        elif not status.encrypted:
            text = translate(
                "ConversationsTab",
                "⚠ <b>History is stored in clear text.</b> Anyone who can read your files can "
                "read your conversations. Set a key to encrypt it.",
            )
        elif status.source == "environment":
            text = translate(
                "ConversationsTab", "✓ History encrypted (the key is given when Custodia starts)."
            )
        elif status.source == "keyring":
            text = translate(
                "ConversationsTab",
                "✓ History encrypted (the key is kept in this computer's keyring).",
            )
        elif status.source in ("passphrase", "environment_passphrase"):
            text = translate(
                "ConversationsTab",
                "✓ History encrypted with a key derived from your passphrase; the key is never "
                "stored: the passphrase is asked at each start.",
            )
            if status.source == "environment_passphrase":
                text = translate(
                    "ConversationsTab",
                    "✓ History encrypted with a key derived from your passphrase (given when "
                    "Custodia starts).",
                )
        else:
            text = translate(
                "ConversationsTab",
                "⚠ History encrypted, but the key is kept <b>for this session only</b> (this "
                "computer has no keyring to keep it in): after a restart the history is "
                "locked until you give the key again. A passphrase in “Set key…” needs no "
                "keyring.",
            )
        return text

    def _notes(self, status: EncryptionStatus) -> str:
        """What else needs the user: files still in clear, an unfinished key change,
        unreadable or locked conversations, refused writes."""
        text = ""
        if status.encrypted and status.clear_files:
            text += " " + translate(
                "ConversationsTab",
                "⚠ {0} conversation(s) still stored in clear: “Set key…” encrypts them.",
            ).format(status.clear_files)
        if status.rotation_pending:
            text += " " + translate(
                "ConversationsTab",
                "⚠ A key change is unfinished: give its new key in “Set key…” to finish it.",
            )
        if status.unreadable:
            text += " " + counted(
                status.unreadable,
                translate("ConversationsTab", "1 conversation cannot be read (marked ⚠)."),
                translate("ConversationsTab", "{0} conversations cannot be read (marked ⚠)."),
            )
        if status.locked:
            text += " " + translate(
                "ConversationsTab",
                "{0} conversation(s) of an earlier history are locked, kept untouched: give "
                "their key or passphrase in “Set key…” to read them again.",
            ).format(status.locked)
        if status.key_problem:  # the store's own words (variables, key ids) go to Details
            text += (
                "<br>⚠ <b>"
                + translate("ConversationsTab", "New messages are refused until then.")
                + "</b>"
            )
        return text

    # -- the key ---------------------------------------------------------------------------
    def _on_set_key_clicked(self) -> None:
        self.open_key_dialog(new_history=False)

    def open_key_dialog(self, *, new_history: bool) -> None:
        if self.key_dialog is not None:  # already open: bring it back
            self.key_dialog.raise_()
            self.key_dialog.activateWindow()
            return
        # deletes itself when closed
        dialog = KeyDialog(self.state.status, self, new_history=new_history)
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

        def job(progress: Progress, emit: Emit) -> str | Refused:
            try:
                return service.get().key_from_passphrase(passphrase, new=new)
            except WrongPassphraseError as err:
                return Refused(
                    translate(
                        "ConversationsTab",
                        "This passphrase does not open your history. Check it for a typo "
                        "(letter case, keyboard layout).",
                    ),
                    str(err),
                )
            except NoPassphraseError as err:
                return Refused(
                    translate(
                        "ConversationsTab",
                        "No passphrase has been set for this history yet: set one first.",
                    ),
                    str(err),
                )

        def derived(key: Any) -> None:
            if dialog is None or dialog is not self.key_dialog:
                return
            if isinstance(key, Refused):
                dialog.passphrase_failed(key.message, key.details)
            else:
                dialog.passphrase_derived(str(key))

        def failed(message: str, environment: bool) -> None:
            if dialog is not None and dialog is self.key_dialog:
                dialog.passphrase_failed(message)

        self.jobs.run(
            "conversations: passphrase",
            job,
            {"succeeded": derived, "failed": failed},
            doing=translate("ConversationsTab", "Deriving the key from the passphrase…"),
        )

    def _on_key_dialog_key_chosen(self, key: str, generated: bool, passphrase: bool) -> None:
        service = self.service
        dialog = self.key_dialog
        if dialog is not None and dialog.new_history:
            self._start_new_history(key, passphrase)
            return

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            # a generated key is saved (keyring, else conversations/.rotation.key) before
            # the first file is rewritten: an interrupted change is recoverable
            outcome: KeyOutcome = agent.use_key(
                key, progress, generated=generated, passphrase=passphrase
            )
            report = outcome.rotation
            if report is None:
                note = counted(
                    outcome.unlocked,
                    translate("ConversationsTab", "1 locked conversation readable again."),
                    translate("ConversationsTab", "{0} locked conversations readable again."),
                )
            elif report.rotated:
                note = counted(
                    report.rotated,
                    translate("ConversationsTab", "1 conversation encrypted with the new key."),
                    translate("ConversationsTab", "{0} conversations encrypted with the new key."),
                )
            else:
                note = translate(
                    "ConversationsTab",
                    "The new key is set; there were no conversations to encrypt.",
                )
            if report is not None and report.failed:
                note += " " + counted(
                    len(report.failed),
                    translate(
                        "ConversationsTab",
                        "1 conversation could not be read and was left as it was.",
                    ),
                    translate(
                        "ConversationsTab",
                        "{0} conversations could not be read and were left as they were.",
                    ),
                )
            return listing(agent, note)

        self.jobs.run(
            "conversations: key",
            job,
            {"succeeded": [self.listing_arrived, self._on_key_used]},
            progress=True,
            doing=translate("ConversationsTab", "Re-encrypting conversations…"),
        )

    def _on_key_used(self, result: Any) -> None:
        self.key_used.emit()

    # -- a new history beside a locked one -------------------------------------------------
    def _on_new_history_clicked(self) -> None:
        status = self.state.status
        count = status.needed_files if status is not None else 0
        self.new_history_dialog.setText(
            translate(
                "ConversationsTab",
                "Your {0} encrypted conversation(s) cannot be opened without their key. Start "
                "a new history? They are kept exactly as they are, listed as locked, and "
                "readable again whenever you give their key or passphrase.",
            ).format(count)
        )
        self.new_history_dialog.setInformativeText(
            translate(
                "ConversationsTab",
                "“Continue unencrypted” stores new conversations in clear text: anyone who "
                "can read your files can read them.",
            )
        )
        self.new_history_dialog.open()

    def _on_new_history_dialog_finished(self, result: int) -> None:
        clicked = self.new_history_dialog.clickedButton()
        if clicked is self.new_history_encrypted:
            self.open_key_dialog(new_history=True)
        elif clicked is self.new_history_clear:
            self._start_new_history(None, False)

    def _start_new_history(self, key: str | None, passphrase: bool) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            made: NewHistory = agent.start_new_history(key, passphrase=passphrase)
            note = (
                translate("ConversationsTab", "A new encrypted history is started.")
                if made.encrypted
                else translate(
                    "ConversationsTab", "A new history is started, stored in clear text."
                )
            )
            note += " " + counted(
                made.locked,
                translate("ConversationsTab", "1 earlier conversation kept untouched, locked."),
                translate("ConversationsTab", "{0} earlier conversations kept untouched, locked."),
            )
            return listing(agent, note)

        self.jobs.run(
            "conversations: new history",
            job,
            {"succeeded": self.listing_arrived},
            doing=translate("ConversationsTab", "Starting a new history…"),
        )
