"""The thread sidebar (issue 30): lists the threads newest first, reopens one, renames,
deletes with Undo."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDateTime, QLocale, Qt
from PySide6.QtWidgets import QPushButton

from backends.threads import ThreadIndex
from desktop import i18n as window_i18n
from desktop.thread_list import ThreadList, when


def titles(widget: ThreadList) -> list[str]:
    return [widget.list.item(i).text() for i in range(widget.list.count())]


def test_the_sidebar_lists_reopens_renames_and_undoes_a_delete(qtbot: Any, tmp_path: Path) -> None:
    index = ThreadIndex.in_home(tmp_path)
    older = index.create("memories", "me")
    index.add_turn(older.id, "user", "I moved to Porto last year.")
    newer = index.create("memories", "me")
    index.add_turn(newer.id, "user", "My cat is called Miso.")
    index.create("memories", "someone else", "Not mine")
    widget = ThreadList(index, "memories", "me")
    qtbot.addWidget(widget)
    assert titles(widget) == ["My cat is called Miso.", "I moved to Porto last year."]
    with qtbot.waitSignal(widget.thread_chosen) as chosen:
        widget.list.itemClicked.emit(widget.list.item(1))
    assert chosen.args == [older.id]
    assert widget.rename(newer.id, "Miso")
    assert titles(widget)[0] == "Miso"
    widget.list.setCurrentRow(0)
    widget.delete_button.click()
    assert titles(widget) == ["I moved to Porto last year."]
    assert not widget.undo_bar.isHidden() and "Miso" in widget.undo_label.text()
    widget.undo_button.click()
    assert titles(widget) == ["Miso", "I moved to Porto last year."]
    assert widget.list.currentItem().data(Qt.ItemDataRole.UserRole) == newer.id
    with qtbot.waitSignal(widget.new_requested):
        widget.new_button.click()
    index.close()


def test_a_memory_chat_is_where_it_was_left_after_a_restart(
    qtbot: Any, custodia_config: Any, custodia_qsettings: Any
) -> None:
    """Quit and reopen: the chat is shown again and listed in the sidebar; New starts
    another; the first is reopened with a click."""
    from PySide6.QtWidgets import QTabWidget, QWidget

    from backends.services import Services
    from desktop.main_window import MainWindow
    from tests.desktop.tabs.test_memories import messages, say

    def open_window() -> Any:
        window = MainWindow(Services(custodia_config), settings=custodia_qsettings)
        qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
        with qtbot.waitSignal(window.checks_ready, timeout=60_000):
            window.show()
        tab = window.findChild(QWidget, "memories")
        window.findChild(QTabWidget, "assistants").setCurrentWidget(tab)
        qtbot.waitUntil(lambda: tab.findChild(QPushButton, "send").isEnabled(), timeout=30_000)
        qtbot.waitUntil(lambda: window.memory_threads.index is not None, timeout=30_000)
        return window, tab

    first, tab = open_window()
    say(qtbot, tab, "My favourite colour is green.")
    sidebar = first.memory_threads.sidebar
    assert titles(sidebar) == ["My favourite colour is green."]
    first.services.close()
    first.close_now()

    second, tab = open_window()
    assert tab.history[0].content == "My favourite colour is green."
    assert len(messages(tab)) == 2
    sidebar = second.memory_threads.sidebar
    kept = sidebar.list.item(0).data(Qt.ItemDataRole.UserRole)
    sidebar.new_button.click()
    assert messages(tab) == [] and tab.history == []
    say(qtbot, tab, "I play the cello.")
    assert titles(sidebar) == ["I play the cello.", "My favourite colour is green."]
    second.memory_threads.open(kept)
    assert tab.history[0].content == "My favourite colour is green."
    second.close_now()


def test_a_tutor_thread_is_read_back_from_the_audit_log_after_a_restart(
    qtbot: Any, custodia_config: Any, custodia_qsettings: Any, tmp_path: Path
) -> None:
    """The index keeps record numbers only; reopening reads the sealed question and answer."""
    from PySide6.QtWidgets import QTextBrowser, QWidget

    from backends.services import Services
    from desktop.main_window import MainWindow
    from tests.backends.tutor.conftest import make_small_kb
    from tests.desktop.tabs.test_tutor import ask, register_tutor

    kb = make_small_kb(tmp_path)

    def open_window() -> Any:
        services = Services(custodia_config)
        register_tutor(services, kb)
        window = MainWindow(services, settings=custodia_qsettings)
        qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
        with qtbot.waitSignal(window.checks_ready, timeout=60_000):
            window.show()
        tab = window.findChild(QWidget, "tutor")
        window.tabs.setCurrentWidget(tab)  # the last tab may be it already: no `ready` wait
        ask_button = tab.findChild(QPushButton, "ask")
        qtbot.waitUntil(ask_button.isEnabled, timeout=60_000)
        qtbot.waitUntil(lambda: window.tutor_threads.index is not None, timeout=30_000)
        return window, tab

    first, tab = open_window()
    turn = ask(qtbot, tab, "Which blood test monitors warfarin?")
    index = first.tutor_threads.index
    kept = index.listed("tutor")
    assert [t.title for t in kept] == ["Which blood test monitors warfarin?"]
    assert [(t.text, t.audit_seq) for t in index.turns(kept[0].id)] == [("", turn.audit_seq)]
    first.services.close()
    first.close_now()

    second, tab = open_window()
    sidebar = second.tutor_threads.sidebar
    assert titles(sidebar) == ["Which blood test monitors warfarin?"]
    answer = tab.findChild(QTextBrowser, "answer")
    with qtbot.waitSignal(second.tutor_threads.turns_read, timeout=30_000):
        sidebar.list.itemClicked.emit(sidebar.list.item(0))
    shown = answer.toPlainText()
    assert "Which blood test monitors warfarin?" in shown and "INR" in shown
    second.close_now()


def test_forgetting_a_person_removes_their_tutor_threads(
    qtbot: Any, custodia_window: Any, tmp_path: Path
) -> None:
    from tests.backends.tutor.conftest import make_small_kb
    from tests.desktop.tabs.test_tutor import ask, register_tutor, show_tutor
    from tests.parts import audit_service

    register_tutor(custodia_window.services, make_small_kb(tmp_path))
    tab = show_tutor(qtbot, custodia_window)
    qtbot.waitUntil(lambda: custodia_window.tutor_threads.index is not None, timeout=30_000)
    index = custodia_window.tutor_threads.index
    ask(qtbot, tab, "Which blood test monitors warfarin?")  # as "student"
    index.create("tutor", "ana", "Ana's thread")
    audit_service(custodia_window.services).pseudonym_of("ana")  # never asked: no key
    audit_service(custodia_window.services).forget("student")
    handle = custodia_window.sweep_erased_threads()
    with qtbot.waitSignal(handle.signals.finished, timeout=30_000):
        pass
    assert index.people("tutor") == []  # student erased; ana has no key (never recorded)
    assert titles(custodia_window.tutor_threads.sidebar) == []


def test_a_turn_ending_after_the_window_closed_keeps_nothing_and_raises_nothing(
    qtbot: Any, custodia_window: Any
) -> None:
    """The window closes the thread index with its services; a memory turn whose outcome was
    already queued then changes the transcript. It wrote to the closed database ("Cannot
    operate on a closed database", seen as a flaky tab test); now the threads are detached
    first and nothing is written."""
    from PySide6.QtWidgets import QWidget

    from backends.models.chat import Message

    qtbot.waitUntil(lambda: custodia_window.memory_threads.index is not None, timeout=30_000)
    index = custodia_window.memory_threads.index
    tab = custodia_window.findChild(QWidget, "memories")
    custodia_window.close_now()
    tab.history.append(Message("user", "A turn that ended after the window closed."))
    tab.transcript_changed.emit()  # raised sqlite3.ProgrammingError in the slot before
    assert custodia_window.memory_threads.index is None
    assert custodia_window.memory_threads.sidebar.threads() == []
    assert index is not None


def test_a_locked_thread_index_is_said_in_the_sidebar_and_the_chat_goes_on(
    qtbot: Any, tmp_path: Path
) -> None:
    """Another Custodia holds the index's write lock: the slot that keeps the chat raised
    sqlite3.OperationalError into Qt's event loop; now the sidebar says it and nothing
    escapes."""
    import sqlite3

    from PySide6.QtCore import QObject, Signal

    from backends.models.chat import Message
    from backends.threads import DB_FILE
    from desktop.thread_list import MemoryChatThreads

    class Tab(QObject):
        transcript_changed = Signal()

        def __init__(self) -> None:
            super().__init__()
            self.history: list[Message] = []

        def show_conversation(self, messages: list[Message]) -> None:
            self.history = list(messages)

    tab = Tab()
    index = ThreadIndex.in_home(tmp_path)
    threads = MemoryChatThreads(tab, index)  # type: ignore[arg-type]
    qtbot.addWidget(threads.sidebar)
    other = sqlite3.connect(tmp_path / DB_FILE, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        tab.history.append(Message("user", "My sister lives in Valencia."))
        tab.transcript_changed.emit()  # waits for the lock, then says so
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert not threads.sidebar.problem_label.isHidden()
    assert "cannot be saved" in threads.sidebar.problem_label.text()
    index.close()


def test_threads_deleted_in_a_session_are_deleted_for_good_when_the_window_closes(
    qtbot: Any, custodia_window: Any
) -> None:
    """The index documented it ("the window purges when it closes") but nothing called
    purge(): a deleted chat stayed in threads.sqlite3 for ever."""
    qtbot.waitUntil(lambda: custodia_window.memory_threads.index is not None, timeout=30_000)
    index = custodia_window.memory_threads.index
    thread = index.create("memories", "me", "A chat to delete")
    sidebar = custodia_window.memory_threads.sidebar
    sidebar.refresh()
    sidebar.delete(thread.id)
    assert [t.id for t in index.listed("memories")] == []
    home = custodia_window.services.config.home
    custodia_window.close_now()
    import sqlite3

    from backends.threads import DB_FILE

    with sqlite3.connect(home / DB_FILE) as db:  # hidden before; gone from the file now
        assert (
            db.execute("SELECT COUNT(*) FROM threads WHERE id = ?", (thread.id,)).fetchone()[0] == 0
        )


@pytest.fixture
def spanish() -> Iterator[None]:
    """The window's language set to Spanish (as at start-up), English again afterwards."""
    window_i18n.install("es")
    yield
    window_i18n.uninstall()


def test_a_threads_date_is_written_as_spanish_writes_it(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spanish: None
) -> None:
    """Issue 27: "last used" was ISO (``2026-11-20``) in every language."""
    used = time.time() - 12 * 86400
    index = ThreadIndex.in_home(tmp_path)
    with monkeypatch.context() as patched:
        patched.setattr(time, "time", lambda: used)
        thread = index.create("memories", "me", "Porto")
    widget = ThreadList(index, "memories", "me")
    qtbot.addWidget(widget)
    day = QDateTime.fromSecsSinceEpoch(int(used)).date()
    shown = QLocale(QLocale.Language.Spanish).toString(day, QLocale.FormatType.ShortFormat)
    tip = widget.list.item(0).toolTip()
    assert widget.list.item(0).data(Qt.ItemDataRole.UserRole) == thread.id
    assert shown in tip and day.toString(Qt.DateFormat.ISODate) not in tip
    assert when(used) == shown
    index.close()


def test_a_threads_date_stays_iso_in_english(tmp_path: Path) -> None:
    used = time.time() - 12 * 86400
    assert when(used) == time.strftime("%Y-%m-%d", time.localtime(used))
