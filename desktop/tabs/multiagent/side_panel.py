"""The right column of the multi-agent tab: the session's tickets with their countdowns, and
the semantic memory — its search, its status, and "Re-embed all" when the embedder changed.

One widget for both (as the column always was: the tickets and the memory results share its
height two to three); each draws what the state says.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.multiagent import LiveTicket
from desktop import i18n
from desktop.tabs.multiagent.state import MemorySearch, MemoryStatus, MultiAgentState
from desktop.tabs.multiagent.words import expert_name, translate


class SidePanel(QWidget):
    """Tickets (kept only until they expire) and the semantic memory."""

    #: Enter in the memory search: the query ("" clears the results)
    search_requested = Signal(str)
    #: "Re-embed all" (or "Cancel re-embedding") pressed
    reembed_requested = Signal()

    def __init__(
        self, state: MultiAgentState, colors: dict[str, str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.colors = colors
        #: the window closed: a listing that arrives after that starts no countdown
        self.shut_down = False
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(
            QLabel(translate("MultiAgentTab", "<b>Tickets</b> (kept only until they expire)"))
        )
        self.tickets = QTreeWidget()
        self.tickets.setObjectName("tickets")
        self.tickets.setHeaderLabels(
            [
                translate("MultiAgentTab", "Step"),
                translate("MultiAgentTab", "Held by"),
                translate("MultiAgentTab", "Status"),
                translate("MultiAgentTab", "Expires in"),
            ]
        )
        self.tickets.setRootIsDecorated(False)
        self.tickets.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.tickets.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.tickets, 2)

        layout.addWidget(QLabel(translate("MultiAgentTab", "<b>Semantic memory</b>")))
        self.memory_search = QLineEdit()
        self.memory_search.setObjectName("memory_search")
        self.memory_search.setPlaceholderText(
            translate("MultiAgentTab", "Search past results, code, sessions…")
        )
        self.memory_search.setClearButtonEnabled(True)
        layout.addWidget(self.memory_search)
        self.memory_status = QLabel("")
        self.memory_status.setObjectName("memory_status")
        self.memory_status.setWordWrap(True)
        layout.addWidget(self.memory_status)
        self.reembed_button = QPushButton(translate("MultiAgentTab", "Re-embed all"))
        self.reembed_button.setObjectName("reembed_memory")
        self.reembed_button.setToolTip(
            translate("MultiAgentTab", "Rebuild the semantic memory with the configured embedder")
        )
        self.reembed_button.setVisible(False)
        layout.addWidget(self.reembed_button)
        self.memory_results = QListWidget()
        self.memory_results.setObjectName("memory_results")
        self.memory_results.setWordWrap(True)
        layout.addWidget(self.memory_results, 3)

        self.countdown = QTimer(self)
        self.countdown.setObjectName("ticket_countdown")
        self.countdown.setInterval(1000)

    def _connect_signals(self) -> None:
        self.memory_search.returnPressed.connect(self._on_return_pressed)
        self.reembed_button.clicked.connect(self.reembed_requested)
        self.countdown.timeout.connect(self._on_countdown_timeout)
        self.state.tickets_changed.connect(self._on_tickets_changed)
        self.state.memory_status_changed.connect(self._on_memory_status_changed)
        self.state.memory_search_changed.connect(self._on_memory_search_changed)

    def shutdown(self) -> None:
        self.shut_down = True
        self.countdown.stop()

    # -- tickets --------------------------------------------------------------------------
    def _on_tickets_changed(self, tickets: list[LiveTicket]) -> None:
        self.tickets.clear()
        statuses = {
            "open": translate("MultiAgentTab", "open"),
            "working": translate("MultiAgentTab", "working"),
            "review": translate("MultiAgentTab", "in review"),
            "closed": translate("MultiAgentTab", "closed"),
        }
        for live in tickets:
            t = live.ticket
            item = QTreeWidgetItem(
                [
                    f"{t.step}. {t.title}",
                    expert_name(t.expert),
                    statuses.get(t.status, t.status),
                    "",
                ]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, t.ticket_id)
            item.setToolTip(
                0,
                translate("MultiAgentTab", "Ticket {0}, handed by {1}").format(
                    t.ticket_id, expert_name(t.from_expert)
                ),
            )
            self.tickets.addTopLevelItem(item)
        self._on_countdown_timeout()
        if tickets and not self.shut_down and not self.countdown.isActive():
            self.countdown.start()

    def _on_countdown_timeout(self) -> None:
        now = time.time()
        live = 0
        for index, ticket in enumerate(self.state.tickets):
            item = self.tickets.topLevelItem(index)
            if item is None:
                continue
            left = ticket.remaining(now)
            if left > 0:
                live += 1
                minutes, seconds = divmod(int(left), 60)
                hours, minutes = divmod(minutes, 60)
                text = (
                    f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
                )
                item.setForeground(3, QBrush())
            else:
                text = translate("MultiAgentTab", "expired")
                item.setForeground(3, QBrush(QColor(self.colors["error"])))
            item.setText(3, text)
            item.setData(3, Qt.ItemDataRole.UserRole, left)
        if not live:
            self.countdown.stop()

    # -- the semantic memory --------------------------------------------------------------
    def _on_return_pressed(self) -> None:
        self.search_requested.emit(self.memory_search.text().strip())

    def _on_memory_status_changed(self, status: MemoryStatus) -> None:
        self.memory_status.setText(status.text)
        if self.memory_status.property("problem") != status.problem:
            self.memory_status.setProperty("problem", status.problem)
            self.memory_status.style().unpolish(self.memory_status)
            self.memory_status.style().polish(self.memory_status)
        self.reembed_button.setVisible(status.offer_reembed or self.state.reembedding)
        self.reembed_button.setText(
            translate("MultiAgentTab", "Cancel re-embedding")
            if self.state.reembedding
            else translate("MultiAgentTab", "Re-embed all")
        )

    def _on_memory_search_changed(self, search: MemorySearch | None) -> None:
        self.memory_results.clear()
        if search is None:
            return
        if search.searching:  # the first search also opens the memory
            self._add_note(translate("MultiAgentTab", "Searching the semantic memory…"))
            return
        for hit in search.shown:
            text = hit.text.replace("\n", " ")
            score = i18n.number(hit.score, 2)
            who = expert_name(hit.expert)
            item = QListWidgetItem(f"{score} · {hit.collection} · {who}: {text}")
            item.setToolTip(hit.text)
            item.setData(Qt.ItemDataRole.UserRole, hit.id)
            self.memory_results.addItem(item)
        if not search.hits:
            self._add_note(translate("MultiAgentTab", "Nothing related is remembered yet."))
        elif not search.shown:
            self._add_note(
                translate(
                    "MultiAgentTab",
                    "Nothing similar (similarity ≥ {0}); {1} weaker match(es) hidden.",
                ).format(i18n.number(search.floor, 2), search.hidden)
            )
        elif search.hidden:
            self._add_note(
                translate(
                    "MultiAgentTab", "{0} weaker match(es) below similarity {1} hidden."
                ).format(search.hidden, i18n.number(search.floor, 2))
            )

    def _add_note(self, text: str) -> None:
        item = QListWidgetItem(text)
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        item.setData(Qt.ItemDataRole.UserRole, None)
        self.memory_results.addItem(item)
