"""The inspector's "Record" tab: the selected record as a card, its stored JSON on demand,
and "Export proof…" for it.

The pane reads the record in a worker and hands it here to be shown. The words are the
pane's (translation context ``InspectorPane``): this tab was part of it, and its catalogue
entries stay where they are.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)


class RecordPanel(QWidget):
    """The record card (``audit_card``), the stored JSON (``audit_detail``, shown with
    ``show_json``) and ``export_proof``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        #: the record shown last (None: none yet)
        self.seq: int | None = None
        self.audit_card = QTextBrowser()
        self.audit_card.setObjectName("audit_card")
        self.audit_card.setOpenLinks(False)
        self.audit_card.setPlaceholderText(
            QCoreApplication.translate("InspectorPane", "Select a record to read it.")
        )
        self.audit_detail = QPlainTextEdit()
        self.audit_detail.setObjectName("audit_detail")
        self.audit_detail.setReadOnly(True)
        self.audit_detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.audit_detail.setPlaceholderText(
            QCoreApplication.translate("InspectorPane", "Select a record to see it in full.")
        )
        self.audit_detail.setVisible(False)
        self.show_json = QCheckBox(
            QCoreApplication.translate("InspectorPane", "Show the stored JSON")
        )
        self.show_json.setObjectName("show_json")
        self.export_proof = QPushButton(
            QCoreApplication.translate("InspectorPane", "Export proof…")
        )
        self.export_proof.setObjectName("export_proof")
        self.export_proof.setToolTip(
            QCoreApplication.translate(
                "InspectorPane",
                "Write a proof that this record is in the signed log (c2sp.org/tlog-proof), "
                "which anyone can check with the verifier key alone",
            )
        )
        self.export_proof.setEnabled(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.audit_card, 1)
        layout.addWidget(self.audit_detail, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.show_json)
        buttons.addStretch(1)
        buttons.addWidget(self.export_proof)
        layout.addLayout(buttons)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.show_json.toggled.connect(self._on_show_json_toggled)

    def clear(self) -> None:
        """No record shown (the view changed)."""
        self.audit_detail.clear()
        self.audit_card.clear()
        self.export_proof.setEnabled(False)

    def show_record(self, seq: int, text: str, card: str, broken: bool) -> None:
        """Record ``seq``: its card and JSON (``text``); empty ``text``: deleted from the log;
        ``broken``: the first broken link, said first."""
        found = bool(text)
        if not found:
            missing = QCoreApplication.translate(
                "InspectorPane",
                "Sequence number {0} is missing from the log: the record was deleted.",
            ).format(seq)
            text, card = missing, f"<p><b>{html.escape(missing)}</b></p>"
        elif broken:
            warning = QCoreApplication.translate("InspectorPane", "This is the first broken link.")
            text = warning + "\n\n" + text
            card = f"<p style='color:#b00020'><b>{html.escape(warning)}</b></p>" + card
        self.audit_detail.setPlainText(text)
        self.audit_card.setHtml(card)
        self.seq = seq
        self.export_proof.setEnabled(found)

    def _on_show_json_toggled(self, shown: bool) -> None:
        self.audit_detail.setVisible(shown)
