"""One Send/Stop row for the chat tabs: the input box, Send, and Stop while an answer runs.

The memories, tutor and conversations tabs each built the same row by hand — a line edit, a
Send button, a Stop button shown only while an answer runs — and each kept its enabling in
its own words. This widget holds that once; the tab says what it knows (ready? busy?) and
reacts to what the user asked (send this text, stop).

API::

    row = SendRow(
        input_name="chat_input",        # objectNames (tests find the widgets by them)
        send_name="send",
        stop_name="stop",
        send_text=send_words,           # the buttons' words, translated by the tab (in
        stop_text=stop_words,           #   its own catalogue context): "Ask" in the tutor
        placeholder="Message (Enter to send)…",
        lock_input_while_busy=False,    # True: the input is disabled while an answer runs
        default=False,                  # True: Send is the dialog-default button
    )
    row.send_requested.connect(slot)    # slot(text: str): Enter or Send, text stripped,
                                        # only when ready, not busy and not empty
    row.stop_requested.connect(slot)    # slot(): Stop was clicked
    row.set_ready(True)                 # the service is open: Send may be used
    row.set_busy(True)                  # an answer runs: Send off, Stop shown (reset)
    row.show_stopping("Cancelling…")    # Stop says so and is disabled until set_busy(False)
    row.add_widget(button)              # a tab's own button after Stop (Cancel edit, …)
    row.input, row.send_button, row.stop_button   # the widgets themselves
    row.text(), row.ready, row.busy

The row never clears the input: the tab clears it when it accepts the text (a message that
could not be sent stays where it was typed). It has no words of its own: the tab gives them,
so they stay in the tab's translation context (resources/i18n).
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QWidget


class SendRow(QWidget):
    """The input, Send and Stop of a chat tab, enabled by two facts: ready and busy."""

    #: Enter or Send with text to send (stripped, never empty), while ready and not busy
    send_requested = Signal(str)
    #: Stop was clicked while an answer runs
    stop_requested = Signal()

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        input_name: str = "chat_input",
        send_name: str = "send",
        stop_name: str = "stop",
        send_text: str,
        stop_text: str,
        placeholder: str = "",
        lock_input_while_busy: bool = False,
        default: bool = False,
    ) -> None:
        super().__init__(parent)
        self._ready = False
        self._busy = False
        self._lock_input = lock_input_while_busy
        self._stop_text = stop_text
        self.input = QLineEdit()
        self.input.setObjectName(input_name)
        self.input.setPlaceholderText(placeholder)
        self.send_button = QPushButton(send_text)
        self.send_button.setObjectName(send_name)
        self.send_button.setDefault(default)
        self.stop_button = QPushButton(stop_text)
        self.stop_button.setObjectName(stop_name)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(self.input, 1)
        self._layout.addWidget(self.send_button)
        self._layout.addWidget(self.stop_button)
        self._update()
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.send_button.clicked.connect(self._on_send_clicked)
        self.input.returnPressed.connect(self._on_send_clicked)
        self.stop_button.clicked.connect(self._on_stop_clicked)

    # -- what the tab tells the row ----------------------------------------------------------
    @property
    def ready(self) -> bool:
        """The tab can take a message (its service opened)."""
        return self._ready

    @property
    def busy(self) -> bool:
        """An answer is running."""
        return self._busy

    def set_ready(self, ready: bool) -> None:
        self._ready = ready
        self._update()

    def set_busy(self, busy: bool) -> None:
        """An answer started or ended: Send off and Stop shown while it runs (Stop as new)."""
        self._busy = busy
        self.stop_button.setText(self._stop_text)
        self.stop_button.setEnabled(True)
        self._update()

    def show_stopping(self, text: str) -> None:
        """Stop was honoured: it says ``text`` and waits, disabled, for the answer's end."""
        self.stop_button.setText(text)
        self.stop_button.setEnabled(False)

    def add_widget(self, widget: QWidget) -> None:
        """A tab's own control at the end of the row."""
        self._layout.addWidget(widget)

    def text(self) -> str:
        """What is typed, stripped."""
        return self.input.text().strip()

    def _update(self) -> None:
        can_send = self._ready and not self._busy
        self.send_button.setEnabled(can_send)
        if self._lock_input:
            self.input.setEnabled(can_send)
        self.stop_button.setVisible(self._busy)

    # -- what the user asks ------------------------------------------------------------------
    def _on_send_clicked(self) -> None:
        text = self.text()
        if text and self._ready and not self._busy:
            self.send_requested.emit(text)

    def _on_stop_clicked(self) -> None:
        if self._busy:
            self.stop_requested.emit()
