"""The "Verify a proof file…" dialog: check a proof with nothing but files and a key.

An inclusion proof (``.tlog-proof``, optionally with the record's text) or a consistency
proof between two checkpoints, checked offline (:mod:`backends.audit`'s proof checks) — what
a colleague who received a proof does, without the log.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from backends.audit import ProofFileError, check_consistency, check_inclusion
from backends.failures import failed
from desktop.i18n import show_message


class ProofDialog(QDialog):
    """Check a proof a colleague sent, with nothing but the files and the verifier key: an
    inclusion proof (``.tlog-proof``, optionally with the record's text), or a consistency
    proof between an older and a newer checkpoint."""

    #: the check's outcome: (ok, message)
    checked = Signal(bool, str)

    def __init__(self, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proof_dialog")
        self.setWindowTitle(self.tr("Verify a proof file"))
        self.setMinimumWidth(620)
        #: each "Browse…" button: the field it fills, and its label (the file dialog's title)
        self._browse: dict[QObject, tuple[QLineEdit, str]] = {}
        form = QFormLayout()
        self.proof_path = self._file_row(form, self.tr("Proof file"), "proof_path")
        self.key = QLineEdit(key)
        self.key.setObjectName("proof_key")
        self.key.setCursorPosition(0)
        form.addRow(self.tr("Verifier key"), self.key)
        self.entry_path = self._file_row(
            form, self.tr("Record text (optional)"), "proof_entry_path"
        )
        self.old_path = self._file_row(
            form, self.tr("Older checkpoint (consistency)"), "proof_old_path"
        )
        self.new_path = self._file_row(
            form, self.tr("Newer checkpoint (consistency)"), "proof_new_path"
        )
        self.outcome = QLabel(
            self.tr(
                "An inclusion proof needs the proof file; a consistency proof also both "
                "checkpoints."
            )
        )
        self.outcome.setObjectName("proof_result")
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.check_button = buttons.addButton(
            self.tr("Check"), QDialogButtonBox.ButtonRole.ActionRole
        )
        self.check_button.setObjectName("proof_check")
        self.buttons = buttons
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.outcome)
        layout.addWidget(buttons)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.check_button.clicked.connect(self._on_check_clicked)
        self.buttons.rejected.connect(self.reject)
        for browse in self._browse:
            if isinstance(browse, QPushButton):
                browse.clicked.connect(self._on_browse_clicked)

    def _file_row(self, form: QFormLayout, label: str, name: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        browse = QPushButton(self.tr("Browse…"))
        self._browse[browse] = (edit, label)
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(browse)
        form.addRow(label, row)
        return edit

    def _on_browse_clicked(self) -> None:
        """A "Browse…" button: its field gets the file picked."""
        edit, label = self._browse[self.sender()]
        path, _ = QFileDialog.getOpenFileName(self, label)
        if path:
            edit.setText(path)

    def _on_check_clicked(self) -> None:
        self.run_check()

    def run_check(self) -> bool:
        """Check what the fields name; show and return the outcome."""
        try:
            proof = _read_text(self.proof_path.text(), self.tr("proof"))
            key = self.key.text().strip()
            if self.old_path.text().strip() or self.new_path.text().strip():
                outcome = check_consistency(
                    _read_text(self.old_path.text(), self.tr("older checkpoint")),
                    _read_text(self.new_path.text(), self.tr("newer checkpoint")),
                    proof,
                    key,
                )
            else:
                entry = None
                if self.entry_path.text().strip():
                    try:
                        entry = Path(self.entry_path.text().strip()).read_bytes()
                    except OSError as err:
                        raise ProofFileError(
                            failed(self.tr("cannot read the record"), err)
                        ) from None
                    entry = entry.removesuffix(b"\n")
                outcome = check_inclusion(proof, key, entry)
        except ProofFileError as err:
            show_message(self.outcome, self.tr("Does NOT verify: {0}").format(err))
            self.outcome.setStyleSheet("color: #b00020; font-weight: bold")
            self.checked.emit(False, str(err))
            return False
        show_message(self.outcome, outcome.line)
        self.outcome.setStyleSheet("color: #1b5e20; font-weight: bold")
        self.checked.emit(True, outcome.line)
        return True


def _read_text(path: str, what: str) -> str:
    if not path.strip():
        raise ProofFileError(
            QCoreApplication.translate("ProofDialog", "choose the {0} file").format(what)
        )
    try:
        return Path(path.strip()).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ProofFileError(
            failed(
                QCoreApplication.translate("ProofDialog", "cannot read the {0}").format(what), err
            )
        ) from None
