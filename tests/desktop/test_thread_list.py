"""The thread sidebar (issue 30): lists the threads newest first, reopens one, renames,
deletes with Undo."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QDateTime, QLocale, QObject, Qt, Signal
from PySide6.QtWidgets import QPushButton

from backends.models.chat import Message
from backends.threads import ThreadIndex
from desktop import i18n as window_i18n
from desktop.thread_list import MemoryChatThreads, ThreadList, when


def titles(widget: ThreadList) -> list[str]:
    return [widget.list.item(i).text() for i in range(widget.list.count())]


def settled(qtbot: Any, widget: ThreadList) -> None:
    """Wait until the sidebar's index jobs (run in the worker pool) have all been shown."""
    qtbot.waitUntil(lambda: not widget.jobs.busy, timeout=30_000)


def test_the_sidebar_lists_reopens_renames_and_undoes_a_delete(qtbot: Any, tmp_path: Path) -> None:
    index = ThreadIndex.in_home(tmp_path)
    older = index.create("memories", "me")
    index.add_turn(older.id, "user", "I moved to Porto last year.")
    newer = index.create("memories", "me")
    index.add_turn(newer.id, "user", "My cat is called Miso.")
    index.create("memories", "someone else", "Not mine")
    widget = ThreadList(index, "memories", "me")
    qtbot.addWidget(widget)
    settled(qtbot, widget)
    assert titles(widget) == ["My cat is called Miso.", "I moved to Porto last year."]
    with qtbot.waitSignal(widget.thread_chosen) as chosen:
        widget.list.itemClicked.emit(widget.list.item(1))
    assert chosen.args == [older.id]
    assert widget.rename(newer.id, "Miso")
    assert not widget.rename(newer.id, "   ")  # an empty title is not asked for
    settled(qtbot, widget)
    assert titles(widget)[0] == "Miso"
    widget.list.setCurrentRow(0)
    widget.delete_button.click()
    settled(qtbot, widget)
    assert titles(widget) == ["I moved to Porto last year."]
    assert not widget.undo_bar.isHidden() and "Miso" in widget.undo_label.text()
    widget.undo_button.click()
    settled(qtbot, widget)
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
    qtbot.waitUntil(lambda: titles(sidebar) == ["My favourite colour is green."], timeout=30_000)
    first.services.close()
    first.close_now()

    second, tab = open_window()
    qtbot.waitUntil(lambda: bool(tab.history), timeout=30_000)  # reopened in a worker
    assert tab.history[0].content == "My favourite colour is green."
    assert len(messages(tab)) == 2
    sidebar = second.memory_threads.sidebar
    kept = sidebar.list.item(0).data(Qt.ItemDataRole.UserRole)
    sidebar.new_button.click()
    assert messages(tab) == [] and tab.history == []
    say(qtbot, tab, "I play the cello.")
    want = ["I play the cello.", "My favourite colour is green."]
    qtbot.waitUntil(lambda: titles(sidebar) == want, timeout=30_000)
    with qtbot.waitSignal(second.memory_threads.opened, timeout=30_000):
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
    settled(qtbot, first.tutor_threads.sidebar)  # the turn is kept in a worker
    kept = index.listed("tutor")
    assert [t.title for t in kept] == ["Which blood test monitors warfarin?"]
    assert [(t.text, t.audit_seq) for t in index.turns(kept[0].id)] == [("", turn.audit_seq)]
    first.services.close()
    first.close_now()

    second, tab = open_window()
    sidebar = second.tutor_threads.sidebar
    qtbot.waitUntil(
        lambda: titles(sidebar) == ["Which blood test monitors warfarin?"], timeout=30_000
    )
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
    assert custodia_window.sweep_erased_threads()  # after the turn's own job (it was a race)
    settled(qtbot, custodia_window.tutor_threads.sidebar)
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


class _Tab(QObject):
    """The memories tab as :class:`MemoryChatThreads` sees it."""

    transcript_changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.history: list[Message] = []

    def show_conversation(self, messages: list[Message]) -> None:
        self.history = list(messages)


class _Recording(ThreadIndex):
    """A real thread index that notes which thread called each of its methods."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.callers: list[tuple[str, int]] = []

    def __getattribute__(self, name: str) -> Any:
        attribute = super().__getattribute__(name)
        if callable(attribute) and not name.startswith("_") and name in _INDEX_CALLS:
            callers = super().__getattribute__("callers")

            def noted(*args: Any, **kwargs: Any) -> Any:
                callers.append((name, threading.get_ident()))
                return attribute(*args, **kwargs)

            return noted
        return attribute


_INDEX_CALLS = frozenset(
    [
        "create",
        "listed",
        "get",
        "rename",
        "delete",
        "restore",
        "purge",
        "forget_person",
        "people",
        "add_turn",
        "replace_turns",
        "drop_last_turn",
        "turns",
    ]
)


def test_a_locked_thread_index_is_said_in_the_sidebar_and_the_chat_goes_on(
    qtbot: Any, tmp_path: Path
) -> None:
    """Another Custodia holds the index's write lock: the slot that keeps the chat raised
    sqlite3.OperationalError into Qt's event loop; now the sidebar says it and nothing
    escapes."""
    tab = _Tab()
    index = ThreadIndex.in_home(tmp_path)
    threads = MemoryChatThreads(tab, index)
    qtbot.addWidget(threads.sidebar)
    settled(qtbot, threads.sidebar)
    with _locked(tmp_path):
        tab.history.append(Message("user", "My sister lives in Valencia."))
        tab.transcript_changed.emit()  # queued for the worker pool: returns at once
        settled(qtbot, threads.sidebar)  # the worker waited for the lock, then failed
    assert not threads.sidebar.problem_label.isHidden()
    assert "cannot be saved" in threads.sidebar.problem_label.text()
    index.close()


@contextmanager
def _locked(home: Path) -> Iterator[None]:
    """Another process's write lock on the thread index, held while inside."""
    import sqlite3

    from backends.threads import DB_FILE

    other = sqlite3.connect(home / DB_FILE, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_the_gui_thread_never_calls_a_locked_index(qtbot: Any, tmp_path: Path) -> None:
    """Issue 30: the sidebar's list, rename, delete and undo called SQLite on the GUI
    thread, which waited for another process's lock (up to the busy timeout) with the window
    frozen. Now each runs in the worker pool: every call of the index is made by a worker
    thread, each action returns before its job ran, and a locked index comes back as the
    typed error the sidebar says."""
    index = _Recording(tmp_path / "threads.sqlite3")
    first = index.create("memories", "me", "First")
    second = index.create("memories", "me", "Second")
    index.callers.clear()
    tab = _Tab()
    threads = MemoryChatThreads(tab, index)
    sidebar = threads.sidebar
    qtbot.addWidget(sidebar)
    settled(qtbot, sidebar)
    sidebar.delete(first.id)
    settled(qtbot, sidebar)
    assert titles(sidebar) == ["Second"] and sidebar.deleted == [first.id]
    with _locked(tmp_path):
        before = len(sidebar.jobs.started)
        assert sidebar.rename(second.id, "Renamed")
        sidebar.undo()
        tab.history.append(Message("user", "My sister lives in Valencia."))
        tab.transcript_changed.emit()
        sidebar.refresh()
        assert sidebar.jobs.busy and sidebar.problem_label.isHidden()  # asked, not done
        settled(qtbot, sidebar)
        names = [handle.name for handle in list(sidebar.jobs.started)[before:]]
        assert names == ["threads: rename", "threads: undo", "threads: save", "threads: list"]
        assert not sidebar.problem_label.isHidden()  # the locked index, said
    assert titles(sidebar) == ["Second"] and sidebar.deleted == [first.id]  # nothing changed
    sidebar.undo()
    settled(qtbot, sidebar)
    assert sorted(titles(sidebar)) == ["First", "Second"]
    gui = threading.get_ident()
    assert index.callers and all(caller != gui for _name, caller in index.callers)
    assert {"listed", "rename", "get", "delete", "restore", "replace_turns"} <= {
        name for name, _caller in index.callers
    }
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
    settled(qtbot, sidebar)
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
    settled(qtbot, widget)
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
