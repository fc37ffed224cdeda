"""The inspector's "Checkpoints and proofs" tab: the verifier key, the signed checkpoints and
whether today's log is still consistent with each, and "Verify a proof file…".

The pane runs the check in a worker (it holds the service) and hands the outcome here to be
drawn. The words are the pane's (translation context ``InspectorPane``): this tab was part of
it, and its catalogue entries stay where they are.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from backends.audit import CheckpointStatus
from desktop.i18n import show_message
from desktop.inspector.table import BROKEN, ON_LIGHT

#: the checkpoint check's outcome, coloured
CONSISTENT_STYLE = "color: #1b5e20"
BROKEN_STYLE = "color: #b00020; font-weight: bold"


class CheckpointsPanel(QWidget):
    """The verifier key (with Copy), the checkpoints list, their status, and the buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.verifier_key = QLineEdit()
        self.verifier_key.setObjectName("verifier_key")
        self.verifier_key.setReadOnly(True)
        self.verifier_key.setToolTip(
            QCoreApplication.translate(
                "InspectorPane", "Give this key to whoever checks a proof or checkpoint of this log"
            )
        )
        self.copy_key = QPushButton(QCoreApplication.translate("InspectorPane", "Copy"))
        self.copy_key.setObjectName("copy_key")
        self.check_checkpoints = QPushButton(
            QCoreApplication.translate("InspectorPane", "Check the checkpoints")
        )
        self.check_checkpoints.setObjectName("check_checkpoints")
        self.check_checkpoints.setToolTip(
            QCoreApplication.translate(
                "InspectorPane", "Is today's log consistent with every checkpoint signed so far?"
            )
        )
        self.checkpoints_list = QListWidget()
        self.checkpoints_list.setObjectName("checkpoints_list")
        self.checkpoints_status = QLabel("")
        self.checkpoints_status.setObjectName("checkpoints_status")
        self.checkpoints_status.setWordWrap(True)
        self.verify_proof_file = QPushButton(
            QCoreApplication.translate("InspectorPane", "Verify a proof file…")
        )
        self.verify_proof_file.setObjectName("verify_proof_file")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        key_row = QHBoxLayout()
        key_row.addWidget(QLabel(QCoreApplication.translate("InspectorPane", "Verifier key")))
        key_row.addWidget(self.verifier_key, 1)
        key_row.addWidget(self.copy_key)
        layout.addLayout(key_row)
        layout.addWidget(self.checkpoints_list, 1)
        layout.addWidget(self.checkpoints_status)
        buttons = QHBoxLayout()
        buttons.addWidget(self.check_checkpoints)
        buttons.addStretch(1)
        buttons.addWidget(self.verify_proof_file)
        layout.addLayout(buttons)

    def show_key(self, key: str) -> None:
        self.verifier_key.setText(key)
        self.verifier_key.setCursorPosition(0)  # the log's name first

    def show_checking(self) -> None:
        show_message(
            self.checkpoints_status,
            QCoreApplication.translate("InspectorPane", "Checking the checkpoints…"),
        )

    def show_statuses(self, statuses: Sequence[CheckpointStatus]) -> None:
        """Each checkpoint, consistent or broken (the first one the log breaks said so), and
        one line about them all."""
        self.checkpoints_list.clear()
        first_broken: CheckpointStatus | None = None
        for status in statuses:
            if not status.ok and status.first_broken:
                first_broken = status
            self.checkpoints_list.addItem(self._item(status))
        if not statuses:
            text = QCoreApplication.translate(
                "InspectorPane", "No checkpoint yet: take one with `custodia audit checkpoint`."
            )
            self.checkpoints_status.setStyleSheet("")
        elif first_broken is None:
            text = QCoreApplication.translate(
                "InspectorPane", "Today's log is consistent with all {0} checkpoints."
            ).format(len(statuses))
            self.checkpoints_status.setStyleSheet(CONSISTENT_STYLE)
        else:
            text = QCoreApplication.translate(
                "InspectorPane",
                "The log no longer matches the checkpoint at seq {0} (signed {1}): {2}",
            ).format(first_broken.checkpoint.seq, first_broken.checkpoint.time, first_broken.detail)
            self.checkpoints_status.setStyleSheet(BROKEN_STYLE)
        show_message(self.checkpoints_status, text)

    @staticmethod
    def _item(status: CheckpointStatus) -> QListWidgetItem:
        checkpoint = status.checkpoint
        when = checkpoint.time[:19].replace("T", " ")
        if status.ok:
            mark = QCoreApplication.translate("InspectorPane", "consistent")
        elif status.first_broken:
            mark = QCoreApplication.translate(
                "InspectorPane", "BROKEN — the first one the log breaks"
            )
        else:
            mark = QCoreApplication.translate("InspectorPane", "broken")
        item = QListWidgetItem(
            QCoreApplication.translate("InspectorPane", "seq {0} · signed {1} UTC · {2}").format(
                checkpoint.seq, when, mark
            )
        )
        item.setToolTip(status.detail)
        item.setData(Qt.ItemDataRole.UserRole, checkpoint.seq)
        if not status.ok:
            item.setBackground(QBrush(BROKEN))
            item.setForeground(QBrush(ON_LIGHT))
        return item

    def show_failure(self, message: str) -> None:
        show_message(
            self.checkpoints_status,
            QCoreApplication.translate("InspectorPane", "Cannot check the checkpoints: {0}").format(
                message
            ),
        )
