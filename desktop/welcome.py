"""The first-run welcome: a banner above the tabs saying what each tab is for.

Shown once (QSettings ``welcome/shown``), dismissed with *Got it*; a banner and not a modal
dialog, so it never blocks the window (nor a test driving it).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.i18n import QT_TRANSLATE_NOOP

SETTINGS_KEY = "welcome/shown"

#: tab objectName -> what it is for (shown in the welcome and the user guide)
TAB_PURPOSES: dict[str, str] = {
    "multiagent": QT_TRANSLATE_NOOP(
        "WelcomeBanner", "a team of AI experts plans, does and reviews a task for you"
    ),
    "memories": QT_TRANSLATE_NOOP(
        "WelcomeBanner", "a chat that remembers what you tell it, across sessions"
    ),
    "conversations": QT_TRANSLATE_NOOP(
        "WelcomeBanner", "your chat history, searchable, encrypted if you want"
    ),
    "tutor": QT_TRANSLATE_NOOP(
        "WelcomeBanner", "questions on clinical study notes, answered with their sources"
    ),
}


class WelcomeBanner(QFrame):
    """The welcome; below it, once found, a better model the user already has (the bundled
    one is the smallest there is) with a button to use it."""

    dismissed = Signal()
    #: the user asked to use the model :meth:`offer_model` offered
    use_offered = Signal()

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
        self.text.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        column = QVBoxLayout()
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.text)
        offer = QHBoxLayout()
        self.offer_text = QLabel("")
        self.offer_text.setObjectName("welcome_model_offer")
        self.offer_text.setWordWrap(True)
        self.offer_text.setVisible(False)
        offer.addWidget(self.offer_text, 1)
        self.use_button = QPushButton(self.tr("Use it"))
        self.use_button.setObjectName("welcome_use_model")
        self.use_button.setVisible(False)
        offer.addWidget(self.use_button, 0, Qt.AlignmentFlag.AlignTop)
        column.addLayout(offer)
        layout.addLayout(column, 1)
        self.dismiss_button = QPushButton(self.tr("Got it"))
        self.dismiss_button.setObjectName("welcome_dismiss")
        # its own width, never more: the box layout gave the button the room the wrapped
        # text needed (a 600-px "Got it" beside a 135-px column of text at 760 px)
        self.dismiss_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.use_button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.dismiss_button, 0, Qt.AlignmentFlag.AlignTop)
        self.dismiss_button.clicked.connect(self._on_dismiss_clicked)
        self.use_button.clicked.connect(self._on_use_clicked)

    def offer_model(self, name: str, app: str, needs: str) -> None:
        """Offer ``name``, found in ``app``'s folder, instead of the bundled model."""
        self.offer_text.setText(
            self.tr(
                "<b>A better model is already on this computer:</b> {0} (from {1}; needs about "
                "{2} of memory). Custodia can use it where it is — nothing is copied."
            ).format(name, app, needs)
        )
        self.offer_text.setVisible(True)
        self.use_button.setVisible(True)
        self.use_button.setEnabled(True)

    def model_used(self, text: str) -> None:
        """Say what became of the offer (used, or why not)."""
        self.offer_text.setText(text)
        self.use_button.setVisible(False)

    def _on_use_clicked(self) -> None:
        self.use_button.setEnabled(False)
        self.use_offered.emit()

    def _on_dismiss_clicked(self) -> None:
        self.setVisible(False)
        self.dismissed.emit()
