"""The conversations key dialog: a key or a passphrase for the history, checked before use.

It asks for the conversations key or a passphrase (or generates a key) and explains a refusal
inside itself, staying open; the encryption panel (:mod:`.encryption`) does the work with
what it gives. :func:`key_details` is what both show under Details: the cipher, key ids, the
variables and the store's own words, kept out of the sentences.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from backends.conversations import (
    FERNET_SHAPE,
    MIN_PASSPHRASE,
    EncryptionStatus,
    InvalidKeyError,
    generate_key,
    key_id,
    normalise_passphrase,
    validate_key,
)
from desktop import theme

WARNING_STYLE = "background:#fff3cd;color:#664d03;border:1px solid #ffe69c;padding:4px;"
OK_STYLE = "background:#d1e7dd;color:#0f5132;border:1px solid #a3cfbb;padding:4px;"


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
