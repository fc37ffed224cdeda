"""The multi-agent tab's list of sessions: newest first, filtered by phase, each row saying
what the session is — its phase or its status, and whether it was left interrupted or another
process runs it (the backend's :class:`~backends.multiagent.tags.Tags`)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.multiagent import PHASES, Session, Tags
from desktop import i18n
from desktop.tabs.multiagent.state import MultiAgentState
from desktop.tabs.multiagent.words import phase_name, tags_text, tags_word, translate


class SessionsPanel(QWidget):
    """The sessions, Refresh and the phase filter."""

    #: the filter changed, or Refresh was pressed: list again
    refresh_requested = Signal()
    #: the user picked a session in the list: its id
    session_picked = Signal(str)
    #: the list was (re)loaded: number of rows
    sessions_loaded = Signal(int)

    def __init__(self, state: MultiAgentState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        title = QLabel(translate("MultiAgentTab", "<b>Sessions</b>"))
        row.addWidget(title)
        row.addStretch(1)
        self.refresh_button = QToolButton()
        self.refresh_button.setObjectName("refresh_sessions")
        self.refresh_button.setText(translate("MultiAgentTab", "Refresh"))
        self.refresh_button.setToolTip(
            translate(
                "MultiAgentTab", "Reload the list (sessions run elsewhere, e.g. from a terminal)"
            )
        )
        row.addWidget(self.refresh_button)
        self.phase_filter = QComboBox()
        self.phase_filter.setObjectName("phase_filter")
        for tags in Tags.choices():
            text = (
                phase_name(tags.phase) if tags.phase else translate("MultiAgentTab", "All phases")
            )
            self.phase_filter.addItem(text, tags.phase)
        row.addWidget(self.phase_filter)
        layout.addLayout(row)
        self.sessions = QTreeWidget()
        self.sessions.setObjectName("sessions")
        self.sessions.setHeaderLabels(
            [
                translate("MultiAgentTab", "Started"),
                translate("MultiAgentTab", "Phase"),
                translate("MultiAgentTab", "Task"),
            ]
        )
        self.sessions.setRootIsDecorated(False)
        self.sessions.setUniformRowHeights(True)
        self.sessions.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.sessions.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        layout.addWidget(self.sessions, 1)

    def _connect_signals(self) -> None:
        self.phase_filter.currentIndexChanged.connect(self._on_phase_filter_changed)
        self.refresh_button.clicked.connect(self.refresh_requested)
        self.sessions.currentItemChanged.connect(self._on_current_item_changed)
        self.state.sessions_listed.connect(self._on_sessions_listed)
        self.state.listed_tags_changed.connect(self._on_listed_tags_changed)

    def filter(self) -> Tags:
        """The filter chosen (its phase; none: every session)."""
        return Tags.parse(str(self.phase_filter.currentData() or ""))

    def _on_phase_filter_changed(self, index: int) -> None:
        self.state.filter = self.filter()
        self.refresh_requested.emit()

    def _on_current_item_changed(self, item: QTreeWidgetItem | None, previous: Any) -> None:
        if item is not None:
            self.session_picked.emit(str(item.data(0, Qt.ItemDataRole.UserRole)))

    def _on_sessions_listed(self, sessions: list[Session]) -> None:
        state = self.state
        selected = state.wanted or (state.current.session_id if state.current else None)
        self.sessions.blockSignals(True)
        self.sessions.clear()
        for session in sessions:
            started = i18n.when(session.created_at)
            item = QTreeWidgetItem(
                [started, tags_text(state.tags_of(session)), session.task.replace("\n", " ")]
            )
            item.setData(0, Qt.ItemDataRole.UserRole, session.session_id)
            item.setData(1, Qt.ItemDataRole.UserRole, session.phase)
            item.setToolTip(2, session.task)
            self.sessions.addTopLevelItem(item)
            if session.session_id == selected:
                self.sessions.setCurrentItem(item)
        self.sessions.blockSignals(False)
        self.sessions_loaded.emit(len(sessions))

    def _on_listed_tags_changed(self, session_id: str, tags: Tags) -> None:
        """The list follows a running session's phase (its status once finished)."""
        if tags.phase not in PHASES:
            return
        item = self.item_of(session_id)
        if item is not None:
            item.setText(1, tags_word(tags))
            item.setData(1, Qt.ItemDataRole.UserRole, tags.phase)

    def item_of(self, session_id: str) -> QTreeWidgetItem | None:
        """``session_id``'s row (None: not listed, e.g. filtered out)."""
        for index in range(self.sessions.topLevelItemCount()):
            item = self.sessions.topLevelItem(index)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == session_id:
                return item
        return None
