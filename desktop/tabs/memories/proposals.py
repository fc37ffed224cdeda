"""Memories proposed from the conversation (or near duplicates) waiting for a yes: the box
the memories tab shows under its transcript, a row each with Remember / Update, Keep both and
Dismiss.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from backends.memories import Proposal
from desktop import i18n as window_i18n


class ProposalRow(QFrame):
    """A memory proposed from the conversation (or a near duplicate) waiting for the user."""

    def __init__(self, proposal: Proposal, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposal")
        self.proposal = proposal
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        if proposal.kind == "update":
            text = self.tr("Update “{0}” to “{1}”? (similarity {2})").format(
                proposal.existing, proposal.text, window_i18n.number(proposal.similarity, 2)
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


class ProposalsBox(QFrame):
    """The proposals waiting under the transcript (``proposals``; hidden when none). A yes
    (Remember / Update, or Keep both) is the tab's to carry out: :attr:`accept_requested`."""

    #: a proposal was answered yes: the :class:`Proposal`, and whether to keep both
    accept_requested = Signal(object, bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proposals")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.setVisible(False)

    def rows(self) -> list[ProposalRow]:
        return self.findChildren(ProposalRow)

    def add(self, proposal: Proposal) -> None:
        """Show ``proposal`` (once: the same one twice is one row)."""
        if any(row.proposal == proposal for row in self.rows()):
            return
        row = ProposalRow(proposal)
        row.accept_button.clicked.connect(self._on_accept_clicked)
        row.keep_both_button.clicked.connect(self._on_keep_both_clicked)
        row.dismiss_button.clicked.connect(self._on_dismiss_clicked)
        self._layout.addWidget(row)
        self.setVisible(True)

    def answered(self, text: str) -> None:
        """``text`` was remembered (or updated) another way: its proposals are answered."""
        for row in self.rows():
            if row.proposal.text == text:
                self._drop(row)

    def _drop(self, row: ProposalRow) -> None:
        row.setParent(None)
        row.deleteLater()
        self.setVisible(any(other is not row for other in self.rows()))

    def _clicked_row(self) -> ProposalRow | None:
        button = self.sender()
        row = button.parent() if button is not None else None
        return row if isinstance(row, ProposalRow) else None

    def _accept(self, keep_both: bool) -> None:
        row = self._clicked_row()
        if row is not None:
            self._drop(row)
            self.accept_requested.emit(row.proposal, keep_both)

    def _on_accept_clicked(self) -> None:
        self._accept(keep_both=False)

    def _on_keep_both_clicked(self) -> None:
        self._accept(keep_both=True)

    def _on_dismiss_clicked(self) -> None:
        row = self._clicked_row()
        if row is not None:
            self._drop(row)
