"""The Send/Stop row the chat tabs share (desktop/send_row.py), driven alone.

The memories tab was the first to use it; the tutor and conversations tabs use the same row,
each with its own objectNames.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLineEdit, QPushButton, QWidget

from desktop.send_row import SendRow

#: the rows' hosts, kept alive for the test (qtbot closes them, it does not keep them)
_HOSTS: list[QWidget] = []


def _row(qtbot: Any, **options: Any) -> SendRow:
    host = QWidget()
    qtbot.addWidget(host)
    _HOSTS.append(host)
    row = SendRow(host, **{"send_text": "Send", "stop_text": "Stop", **options})
    host.show()
    return row


def test_send_waits_until_ready_and_sends_the_stripped_text(qtbot: Any) -> None:
    row = _row(qtbot)
    sent: list[str] = []
    row.send_requested.connect(sent.append)
    assert not row.send_button.isEnabled() and not row.stop_button.isVisible()
    qtbot.keyClicks(row.input, "  hello  ")
    qtbot.keyClick(row.input, Qt.Key.Key_Return)
    assert sent == []  # not ready: nothing is sent
    row.set_ready(True)
    assert row.send_button.isEnabled()
    qtbot.keyClick(row.input, Qt.Key.Key_Return)
    row.send_button.click()
    assert sent == ["hello", "hello"]
    assert row.input.text() == "  hello  "  # the tab clears it when it takes it


def test_an_empty_box_sends_nothing(qtbot: Any) -> None:
    row = _row(qtbot)
    row.set_ready(True)
    sent: list[str] = []
    row.send_requested.connect(sent.append)
    qtbot.keyClicks(row.input, "   ")
    row.send_button.click()
    assert sent == []


def test_busy_shows_stop_and_holds_send(qtbot: Any) -> None:
    row = _row(qtbot)
    row.set_ready(True)
    sent: list[str] = []
    stops: list[bool] = []
    row.send_requested.connect(sent.append)
    row.stop_requested.connect(lambda: stops.append(True))
    row.set_busy(True)
    assert row.stop_button.isVisible() and not row.send_button.isEnabled()
    assert row.input.isEnabled()  # the next question may be typed meanwhile
    qtbot.keyClicks(row.input, "next")
    qtbot.keyClick(row.input, Qt.Key.Key_Return)
    assert sent == []
    row.stop_button.click()
    assert stops == [True]
    row.show_stopping("Cancelling…")
    assert row.stop_button.text() == "Cancelling…" and not row.stop_button.isEnabled()
    row.set_busy(False)
    assert not row.stop_button.isVisible() and row.send_button.isEnabled()
    row.set_busy(True)  # the next answer's Stop is a fresh one
    assert row.stop_button.text() == "Stop" and row.stop_button.isEnabled()


def test_names_label_and_a_locked_input(qtbot: Any) -> None:
    row = _row(
        qtbot,
        input_name="question",
        send_name="ask",
        stop_name="stop_answer",
        send_text="Ask",
        placeholder="Question…",
        lock_input_while_busy=True,
        default=True,
    )
    host = row.parentWidget()
    assert host is not None
    assert host.findChild(QLineEdit, "question") is row.input
    assert host.findChild(QPushButton, "ask") is row.send_button
    assert host.findChild(QPushButton, "stop_answer") is row.stop_button
    assert row.send_button.text() == "Ask" and row.send_button.isDefault()
    assert row.input.placeholderText() == "Question…"
    extra = QPushButton("New thread")
    row.add_widget(extra)
    assert extra.parentWidget() is row
    row.set_ready(True)
    row.set_busy(True)
    assert not row.input.isEnabled()
    row.set_busy(False)
    assert row.input.isEnabled()
