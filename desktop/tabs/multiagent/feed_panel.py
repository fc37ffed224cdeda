"""The multi-agent tab's live feed: each event of the session shown, once and in order.

The state decides what is new (events carry a sequence number); this panel only draws an
event as a line — its time, number, expert, kind and text — coloured by what it says.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.multiagent import RETRY, SESSION_FINISHED, VERIFICATION, VERIFYING, Session
from desktop import i18n
from desktop.tabs.multiagent.state import MultiAgentState
from desktop.tabs.multiagent.words import expert_name, phase_name, status_color, translate


class FeedPanel(QWidget):
    """The feed's title (the session's task) and its lines."""

    def __init__(
        self, state: MultiAgentState, colors: dict[str, str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.colors = colors
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.feed_title = QLabel(translate("MultiAgentTab", "<b>Live feed</b>"))
        self.feed_title.setObjectName("feed_title")
        layout.addWidget(self.feed_title)
        self.feed = QListWidget()
        self.feed.setObjectName("feed")
        self.feed.setWordWrap(True)
        self.feed.setAlternatingRowColors(True)
        self.feed.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        layout.addWidget(self.feed, 1)

    def _connect_signals(self) -> None:
        self.state.feed_reset.connect(self._on_feed_reset)
        self.state.loading_changed.connect(self._on_loading_changed)
        self.state.event_drawn.connect(self._on_event_drawn)

    def _show_title(self, session: Session) -> None:
        self.feed_title.setText(
            translate("MultiAgentTab", "<b>Live feed</b> — {0}").format(session.task[:80])
        )

    def _on_feed_reset(self, session: Session) -> None:
        self.feed.clear()
        self._show_title(session)

    def _on_loading_changed(self, loading: bool) -> None:
        if loading:
            self.feed_title.setText(
                translate("MultiAgentTab", "<b>Live feed</b> — loading the session…")
            )
        elif self.state.current is not None:
            self._show_title(self.state.current)

    def _on_event_drawn(self, event: dict[str, Any]) -> None:
        seq = int(event.get("seq", 0))
        stamp = i18n.when(float(event.get("ts", 0.0)), "%H:%M:%S")
        expert = expert_name(str(event.get("expert") or ""))
        kind = str(event.get("kind", ""))
        who = f" {expert}" if expert else ""
        text = str(event.get("text", "")).strip()
        if kind == "phase":  # its text is the phase it starts, as stored
            text = phase_name(text)
        item = QListWidgetItem(f"{stamp}  #{seq}{who} · {_kind_name(kind)}: {text}")
        item.setData(Qt.ItemDataRole.UserRole, event)
        item.setToolTip(text)
        self._style(item, event)
        self.feed.addItem(item)
        self.feed.scrollToBottom()

    def _style(self, item: QListWidgetItem, event: dict[str, Any]) -> None:
        """Warnings and failures in red, checks in their status's colour, phases bold."""
        kind = str(event.get("kind", ""))
        checked = event.get("verification")
        status = str(checked.get("status")) if isinstance(checked, dict) else str(checked or "")
        bold = False
        if kind == "warning" or (kind == SESSION_FINISHED and event.get("outcome") != "done"):
            item.setForeground(QBrush(QColor(self.colors["error"])))
        elif kind in (VERIFICATION, SESSION_FINISHED, RETRY) and status in ("verified", "failed"):
            item.setForeground(QBrush(QColor(status_color(self.colors, status))))
            bold = True
        elif kind == RETRY:
            item.setForeground(QBrush(QColor(self.colors["warning"])))
        elif kind in ("phase", SESSION_FINISHED):
            bold = True
        if bold:
            font = item.font()
            font.setBold(True)
            item.setFont(font)


def _kind_name(kind: str) -> str:
    labels = {
        "session_started": translate("MultiAgentTab", "session started"),
        "phase": translate("MultiAgentTab", "phase"),
        "retrieved": translate("MultiAgentTab", "memory"),
        "expert_started": translate("MultiAgentTab", "working"),
        "expert_result": translate("MultiAgentTab", "result"),
        "ticket": translate("MultiAgentTab", "ticket"),
        "warning": translate("MultiAgentTab", "warning"),
        VERIFYING: translate("MultiAgentTab", "checking"),
        VERIFICATION: translate("MultiAgentTab", "check"),
        RETRY: translate("MultiAgentTab", "retry"),
        SESSION_FINISHED: translate("MultiAgentTab", "finished"),
    }
    return labels.get(kind, kind)
