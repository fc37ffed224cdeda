"""The first-run welcome: a banner above the tabs saying what each tab is for.

Shown once (QSettings ``welcome/shown``), dismissed with *Got it*; a banner and not a modal
dialog, so it never blocks the window (nor a test driving it).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

SETTINGS_KEY = "welcome/shown"

#: tab objectName -> what it is for (shown in the welcome and the user guide)
TAB_PURPOSES: dict[str, str] = {
    "multiagent": "a team of AI experts plans, does and reviews a task for you",
    "memories": "a chat that remembers what you tell it, across sessions",
    "conversations": "your chat history, searchable, encrypted if you want",
    "tutor": "questions on clinical study notes, answered with their sources",
}


class WelcomeBanner(QFrame):
    dismissed = Signal()

    def __init__(self, titles: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcome")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 10, 6)
        rows = "".join(
            f"<li><b>{titles.get(name, name)}</b> — {self.tr(purpose)}</li>"
            for name, purpose in TAB_PURPOSES.items()
        )
        self.text = QLabel(
            self.tr(
                "<b>Welcome to Custodia.</b> Four assistants that run on this computer; nothing "
                "leaves it.<ul style='margin:2px 0'>{0}</ul>Help ▸ User guide explains more; "
                "Help ▸ Keyboard shortcuts lists the keys."
            ).format(rows)
        )
        self.text.setObjectName("welcome_text")
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.text.setWordWrap(True)
        layout.addWidget(self.text, 1)
        self.dismiss_button = QPushButton(self.tr("Got it"))
        self.dismiss_button.setObjectName("welcome_dismiss")
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self.dismiss_button.clicked.connect(self._on_dismiss_clicked)

    def _on_dismiss_clicked(self) -> None:
        self.setVisible(False)
        self.dismissed.emit()
