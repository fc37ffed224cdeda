"""The bottom of the multi-agent tab: what went wrong (``multiagent_error``), a note about a
session that is not shown (``multiagent_notice``, its link shows it), and the health of every
store layer in the user's words (``layer_health``; the engine names stay in the tooltip)."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from desktop.tabs.multiagent.state import MultiAgentState, Notice
from desktop.tabs.multiagent.words import layer_name, translate


class StatusPanel(QWidget):
    """The error line, the notice and the stores' health."""

    #: the notice's "Show it" link: the session it talks about
    show_requested = Signal(str)

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
        self.error_label = QLabel("")
        self.error_label.setObjectName("multiagent_error")
        self.error_label.setWordWrap(True)
        self.error_label.setVisible(False)
        layout.addWidget(self.error_label)
        self.notice_label = QLabel("")
        self.notice_label.setObjectName("multiagent_notice")
        self.notice_label.setTextFormat(Qt.TextFormat.RichText)
        self.notice_label.setWordWrap(True)
        self.notice_label.setVisible(False)
        layout.addWidget(self.notice_label)
        self.health_label = QLabel(translate("MultiAgentTab", "Opening the session store…"))
        self.health_label.setObjectName("layer_health")
        self.health_label.setTextFormat(Qt.TextFormat.RichText)
        self.health_label.setWordWrap(True)
        layout.addWidget(self.health_label)

    def _connect_signals(self) -> None:
        self.notice_label.linkActivated.connect(self._on_link_activated)
        self.state.error_changed.connect(self._on_error_changed)
        self.state.notice_changed.connect(self._on_notice_changed)
        self.state.health_changed.connect(self._on_health_changed)

    def _on_error_changed(self, message: str) -> None:
        self.error_label.setText(message)
        self.error_label.setVisible(bool(message))

    def _on_notice_changed(self, notice: Notice) -> None:
        self.notice_label.setProperty("session", notice.session_id)
        self.notice_label.setText(
            f"{notice.text} <a href='show'>{translate('MultiAgentTab', 'Show it')}</a>"
            if notice.session_id
            else notice.text
        )
        self.notice_label.setVisible(bool(notice.text))

    def _on_link_activated(self, link: str) -> None:
        if self.state.notice.session_id:
            self.show_requested.emit(self.state.notice.session_id)

    def _on_health_changed(self, health: dict[str, str]) -> None:
        parts = []
        problems = []
        details = []
        c = self.colors
        for layer, status in health.items():
            name = layer_name(layer)
            details.append(f"{name}: {layer} — {status}")
            if status == "ok":
                parts.append(f"<span style='color:{c['ok']}'>✓ {name}</span>")
            elif status.startswith("degraded"):
                parts.append(f"<b style='color:{c['error']}'>✗ {name}</b>")
                problems.append(f"{name} ({layer}): {status}")
            else:
                parts.append(f"<span style='color:{c['faint']}'>○ {name}</span>")
        self.health_label.setText(
            translate("MultiAgentTab", "Stores: {0}").format(" · ".join(parts))
        )
        tip = "\n".join(problems) if problems else translate("MultiAgentTab", "Every layer works.")
        self.health_label.setToolTip(tip + "\n\n" + "\n".join(details))
        self.health_label.setProperty("degraded", bool(problems))
