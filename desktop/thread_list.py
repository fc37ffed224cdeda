"""A sidebar of threads (the tutor's threads, the memory chats), as GPT4All, Jan and LM Studio
keep every chat: listed newest first with titles from their content, reopened with a click,
renamed, deleted with Undo (issue 30).

The widget is given a :class:`~backends.threads.ThreadIndex` (from the services), the
assistant and the person; it never opens the index itself, and never calls it on the GUI
thread: listing, renaming, deleting, undoing and saving run in the worker pool, one at a time
(:class:`~desktop.thread_jobs.IndexQueue`); ``listed`` says when a listing is shown. Object
names: ``thread_list`` (the ``QListWidget``), ``thread_new``, ``thread_rename``,
``thread_delete``, ``thread_undo``, ``thread_toggle``, ``thread_problem``. Each item's
``UserRole`` is the thread's id.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from PySide6.QtCore import QCoreApplication, QObject, QSize, Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from backends.models.chat import Message
from backends.threads import Thread, ThreadIndex, Turn
from desktop import i18n as window_i18n
from desktop.thread_jobs import IndexQueue
from desktop.workers import WorkerPool

log = logging.getLogger(__name__)

#: Qt's QWIDGETSIZE_MAX (no maximum width)
QWIDGETSIZE_MAX = (1 << 24) - 1


def when(timestamp: float, now: float | None = None) -> str:
    """ "14:05" (today), "yesterday", or the date as the language writes it (``2026-11-30``,
    ``30/11/26``): when a thread was last used."""
    now = time.time() if now is None else now
    local, today = time.localtime(timestamp), time.localtime(now)
    if local[:3] == today[:3]:
        return time.strftime("%H:%M", local)
    if now - timestamp < 2 * 86400 and today.tm_yday - local.tm_yday == 1:
        return QCoreApplication.translate("ThreadList", "yesterday")
    return window_i18n.when(timestamp, "%Y-%m-%d")


class ThreadList(QWidget):
    """The threads of one assistant and person: choose, start, rename, delete (undoable)."""

    #: a thread was chosen: its id
    thread_chosen = Signal(str)
    #: "New" was clicked: the tab starts an empty thread (created on its first message)
    new_requested = Signal()
    #: the list was folded to a strip (True) or opened (False), by its toggle or from code
    folded_changed = Signal(bool)
    #: a listing read in the worker pool is shown
    listed = Signal()

    #: the width the open list starts with (its titles end in "…")
    OPEN_WIDTH = 170

    def __init__(
        self,
        index: ThreadIndex | None,
        assistant: str,
        person: str,
        parent: QWidget | None = None,
        workers: WorkerPool | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName(f"{assistant}_threads")
        self.index = index
        self.assistant = assistant
        self.person = person
        #: the index's work, off the GUI thread and in order (shared with the keeper)
        self.jobs = IndexQueue(workers, self)
        #: the threads shown, as the last listing read them
        self._listed: list[Thread] = []
        #: deleted while this list is shown, newest last: Undo restores them
        self.deleted: list[str] = []
        #: folded to a strip holding only the toggle (see :meth:`set_folded`)
        self.folded = False
        #: folded or opened by the user's own click (None: as the window chose; kept)
        self.folded_by_user: bool | None = None
        self._open_width = self.OPEN_WIDTH
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.toggle_button = QToolButton()
        self.toggle_button.setObjectName("thread_toggle")
        self.toggle_button.setAutoRaise(True)
        top.addWidget(self.toggle_button)
        self.title = QLabel(self.tr("<b>Threads</b>"))
        top.addWidget(self.title, 1)
        self.new_button = QPushButton(self.tr("New"))
        self.new_button.setObjectName("thread_new")
        self.new_button.setToolTip(self.tr("Start a new thread"))
        top.addWidget(self.new_button)
        layout.addLayout(top)
        self.list = QListWidget()
        self.list.setObjectName("thread_list")
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setUniformItemSizes(True)  # long titles end in "…" (whole in the tooltip)
        self.list.setMinimumWidth(110)
        layout.addWidget(self.list, 1)
        row = QHBoxLayout()
        self.rename_button = QPushButton(self.tr("Rename…"))
        self.rename_button.setObjectName("thread_rename")
        row.addWidget(self.rename_button)
        self.delete_button = QPushButton(self.tr("Delete"))
        self.delete_button.setObjectName("thread_delete")
        row.addWidget(self.delete_button)
        layout.addLayout(row)
        self.undo_bar = QWidget()
        undo_row = QHBoxLayout(self.undo_bar)
        undo_row.setContentsMargins(0, 0, 0, 0)
        self.undo_label = QLabel("")
        self.undo_label.setWordWrap(True)
        undo_row.addWidget(self.undo_label, 1)
        self.undo_button = QPushButton(self.tr("Undo"))
        self.undo_button.setObjectName("thread_undo")
        undo_row.addWidget(self.undo_button)
        self.undo_bar.setVisible(False)
        layout.addWidget(self.undo_bar)
        self.problem_label = QLabel("")
        self.problem_label.setObjectName("thread_problem")
        self.problem_label.setWordWrap(True)
        self.problem_label.setVisible(False)
        layout.addWidget(self.problem_label)
        layout.addStretch(0)  # folded, the toggle stays at the top
        #: what folding hides (the toggle stays)
        self._unfolded = [self.title, self.new_button, self.list, self.rename_button]
        self._unfolded += [self.delete_button]
        self._show_toggle()

        self.toggle_button.clicked.connect(self._on_toggle_clicked)
        self.new_button.clicked.connect(self.new_requested)
        self.rename_button.clicked.connect(self._on_rename_clicked)
        self.delete_button.clicked.connect(self._on_delete_clicked)
        self.undo_button.clicked.connect(self.undo)
        self.list.itemActivated.connect(self._on_item_activated)
        self.list.itemClicked.connect(self._on_item_activated)
        self.list.currentRowChanged.connect(self._on_current_row_changed)
        self.jobs.failed.connect(self._on_job_failed)
        self.refresh()

    def sizeHint(self) -> QSize:
        """Narrow beside a chat: titles end in "…" (a list's own hint is 256 px); a strip
        when folded."""
        width = self._strip_width() if self.folded else self.OPEN_WIDTH
        return QSize(width, super().sizeHint().height())

    # -- folding -----------------------------------------------------------------------------
    def _strip_width(self) -> int:
        return self.toggle_button.sizeHint().width() + 2

    def _show_toggle(self) -> None:
        """The toggle says what it does: « hides the list, » shows it again."""
        if self.folded:
            self.toggle_button.setText("»")
            self.toggle_button.setToolTip(self.tr("Show the list of threads"))
        else:
            self.toggle_button.setText("«")
            self.toggle_button.setToolTip(self.tr("Hide the list of threads"))
        self.toggle_button.setAccessibleName(self.toggle_button.toolTip())

    def _on_toggle_clicked(self) -> None:
        self.set_folded(not self.folded)
        self.folded_by_user = self.folded

    def set_folded(self, folded: bool) -> None:
        """Fold the list to a strip holding only its toggle (the room goes to the chat), or
        open it again at the width it had. The strip is never folded away: the toggle stays
        in sight (dragging a splitter's handle to the edge hid the whole list)."""
        if folded == self.folded:
            return
        splitter = self.parentWidget()
        if folded and self.width() > self._strip_width():
            self._open_width = max(self.width(), self.list.minimumWidth())
        self.folded = folded
        for widget in self._unfolded:
            widget.setVisible(not folded)
        self.undo_bar.setVisible(not folded and bool(self.deleted))
        if folded:
            self.problem_label.setVisible(False)
        self.setMaximumWidth(self._strip_width() if folded else QWIDGETSIZE_MAX)
        self._show_toggle()
        if isinstance(splitter, QSplitter):
            self._resize_in(splitter)
        self.folded_changed.emit(folded)

    def _resize_in(self, splitter: QSplitter) -> None:
        """Give the room back to the widest neighbour when folding, take it from it when
        opening."""
        index = splitter.indexOf(self)
        sizes = splitter.sizes()
        if index < 0 or not any(sizes):
            return
        wanted = self._strip_width() if self.folded else self._open_width
        widest = max((i for i in range(len(sizes)) if i != index), key=lambda i: sizes[i])
        change = wanted - sizes[index]
        sizes[index] += change
        sizes[widest] = max(sizes[widest] - change, 0)
        splitter.setSizes(sizes)

    # -- the list --------------------------------------------------------------------------
    def threads(self) -> list[Thread]:
        """The threads shown (as the last listing read them; nothing is read here)."""
        return list(self._listed)

    def set_index(self, index: ThreadIndex) -> None:
        """The index, once open (the sidebar is shown before: the window does not wait)."""
        self.index = index
        self.refresh()

    def detach(self) -> None:
        """Forget the index (the window closes it next): a turn that ends after that keeps
        nothing, instead of writing to a closed database."""
        self.index = None

    def show_problem(self) -> None:
        """The index could not be used: say so under the list (the details are in the log)."""
        self.problem_label.setText(
            self.tr("The list of threads cannot be saved right now; the chat goes on.")
        )
        self.problem_label.setVisible(not self.folded)

    def _on_job_failed(self, message: str, environment: bool) -> None:
        """A locked, full or damaged index (an environment error) is said under the list;
        a bug was logged with its trace by the worker layer."""
        if environment:
            log.warning("thread list: %s", message)
            self.show_problem()

    def listing(self) -> Callable[[], list[Thread]] | None:
        """The work that reads this list (None without an index): for a job's end."""
        index, assistant, person = self.index, self.assistant, self.person
        if index is None:
            return None
        return lambda: index.listed(assistant, person)

    def refresh(self, current: str = "") -> None:
        """Read the list again in the worker pool (keeping ``current``, or the selection,
        selected)."""
        keep = current or self.current_id()
        self.jobs.run("list", self.listing, lambda threads: self.show_threads(threads, keep))

    def show_threads(self, threads: list[Thread], current: str = "") -> None:
        """Show a listing read in the worker pool."""
        self._listed = list(threads)
        keep = current or self.current_id()
        self.list.blockSignals(True)
        try:
            self.list.clear()
            for thread in self._listed:
                item = QListWidgetItem(f"{thread.title or self.tr('New thread')}")
                item.setData(Qt.ItemDataRole.UserRole, thread.id)
                item.setToolTip(
                    self.tr("{0}\nlast used {1}; {2} turn(s)").format(
                        thread.title, when(thread.updated), thread.turns
                    )
                )
                self.list.addItem(item)
                if thread.id == keep:
                    self.list.setCurrentItem(item)
        finally:
            self.list.blockSignals(False)
        self._on_current_row_changed(self.list.currentRow())
        self.listed.emit()

    def select(self, thread_id: str) -> None:
        """Make ``thread_id`` the current item, if listed (nothing is read)."""
        self.list.blockSignals(True)
        try:
            for row in range(self.list.count()):
                item = self.list.item(row)
                if item is not None and item.data(Qt.ItemDataRole.UserRole) == thread_id:
                    self.list.setCurrentItem(item)
                    break
        finally:
            self.list.blockSignals(False)
        self._on_current_row_changed(self.list.currentRow())

    def current_id(self) -> str:
        item = self.list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else ""

    def set_person(self, person: str) -> None:
        """Another person's threads (the tutor's scope changed)."""
        if person != self.person:
            self.person = person
            self.refresh()

    def _on_current_row_changed(self, row: int) -> None:
        chosen = row >= 0
        self.rename_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)

    def _on_item_activated(self, item: QListWidgetItem) -> None:
        self.thread_chosen.emit(str(item.data(Qt.ItemDataRole.UserRole)))

    # -- rename, delete, undo --------------------------------------------------------------
    def _on_rename_clicked(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        title, ok = QInputDialog.getText(
            self, self.tr("Rename thread"), self.tr("Title:"), text=item.text()
        )
        if ok:
            self.rename(str(item.data(Qt.ItemDataRole.UserRole)), title)

    def _then_listing(self, write: Callable[[ThreadIndex], Any]) -> Callable[[], Any] | None:
        """A job's work: ``write`` on the index, then the list read again (both in the worker,
        in that order): (what ``write`` returned, the listing)."""
        index, listing = self.index, self.listing()
        if index is None or listing is None:
            return None
        return lambda: (write(index), listing())

    def rename(self, thread_id: str, title: str) -> bool:
        """Rename in the worker pool; False (nothing asked) for an empty title."""
        if not " ".join(title.split()):
            return False
        self.jobs.run(
            "rename",
            lambda: self._then_listing(lambda index: index.rename(thread_id, title)),
            lambda result: self.show_threads(result[1], thread_id),
        )
        return True

    def _on_delete_clicked(self) -> None:
        thread_id = self.current_id()
        if thread_id:
            self.delete(thread_id)

    def delete(self, thread_id: str) -> None:
        """Hide the thread (in the worker pool); Undo brings it back while this list is
        shown."""

        def write(index: ThreadIndex) -> Thread | None:
            thread = index.get(thread_id)
            index.delete(thread_id)
            return thread

        self.jobs.run(
            "delete",
            lambda: self._then_listing(write),
            lambda result: self._on_deleted(thread_id, *result),
        )

    def _on_deleted(self, thread_id: str, thread: Thread | None, threads: list[Thread]) -> None:
        self.deleted.append(thread_id)
        title = thread.title if thread is not None and thread.title else self.tr("a thread")
        self.undo_label.setText(self.tr("Deleted “{0}”.").format(title))
        self.undo_bar.setVisible(not self.folded)
        self.show_threads(threads)

    def undo(self) -> None:
        """Restore the thread deleted last (in the worker pool)."""

        def make() -> Callable[[], Any] | None:
            if not self.deleted:
                return None
            thread_id = self.deleted[-1]
            return self._then_listing(lambda index: (index.restore(thread_id), thread_id)[1])

        self.jobs.run("undo", make, self._on_restored)

    def _on_restored(self, result: tuple[str, list[Thread]]) -> None:
        thread_id, threads = result
        if thread_id in self.deleted:
            self.deleted.remove(thread_id)
        self.undo_bar.setVisible(bool(self.deleted) and not self.folded)
        self.show_threads(threads, thread_id)


#: a thread of this session not saved yet: its first save creates it (``pending:<n>``)
_PENDING = "pending:"
_pending_numbers = itertools.count(1)


def _pending() -> str:
    return f"{_PENDING}{next(_pending_numbers)}"


class _Keeper(QObject):
    """What the two keepers share: the sidebar and its job queue, the thread shown, and the
    saving of a turn in the worker pool (a thread of this session is created by its first
    save; a second save queued meanwhile goes to the same thread)."""

    #: a turn was saved in the worker pool (the thread's id)
    saved = Signal(str)

    def __init__(self, sidebar: ThreadList) -> None:
        super().__init__()
        self.sidebar = sidebar
        self.jobs = sidebar.jobs
        self.index: ThreadIndex | None = None
        #: the thread shown ("": a new one, created by its first turn; ``pending:<n>``
        #: while its first save waits in the queue)
        self.current = ""
        #: pending:<n> -> the id its first save created
        self._created: dict[str, str] = {}

    def detach(self) -> None:
        """Forget the index before the window closes it."""
        self.index = None
        self.sidebar.detach()

    def _save(self, assistant: str, person: str, write: Callable[[ThreadIndex, str], None]) -> None:
        """``write(index, thread_id)`` the turn into the thread shown (created first when it
        is new or was deleted meanwhile), then list ``person``'s threads: in the worker
        pool, after every job asked before."""
        if self.index is None:
            return
        if not self.current:
            self.current = _pending()
        target = self.current

        def make() -> Callable[[], tuple[str, list[Thread]]] | None:
            index = self.index
            if index is None:
                return None
            known = self._created.get(target, target)

            def work() -> tuple[str, list[Thread]]:
                thread_id = known
                if thread_id.startswith(_PENDING) or index.get(thread_id) is None:
                    thread_id = index.create(assistant, person).id
                write(index, thread_id)
                return thread_id, index.listed(assistant, person)

            return work

        self.jobs.run("save", make, lambda result: self._on_saved(target, person, *result))

    def _on_saved(self, target: str, person: str, thread_id: str, threads: list[Thread]) -> None:
        self._created[target] = thread_id
        if self.current == target:
            self.current = thread_id
        if person != self.sidebar.person:
            self.sidebar.person = person
        self.sidebar.show_threads(
            threads, "" if self.current.startswith(_PENDING) else self.current
        )
        self.saved.emit(thread_id)


class ChatTab(Protocol):
    """What :class:`MemoryChatThreads` needs of the memories tab."""

    transcript_changed: SignalInstance

    @property
    def history(self) -> list[Message]: ...

    def show_conversation(self, messages: list[Message]) -> None: ...


class MemoryChatThreads(_Keeper):
    """Keeps the memories tab's chats as threads: each turn saves the conversation shown;
    choosing a thread shows it again; the newest is reopened at start (after a restart the
    chat is where it was left). ``sidebar`` goes beside the transcript. Every read and write
    of the index runs in the worker pool."""

    #: a thread's messages were read and shown (its id)
    opened = Signal(str)

    def __init__(
        self,
        tab: ChatTab,
        index: ThreadIndex | None = None,
        person: str = "me",
        workers: WorkerPool | None = None,
    ) -> None:
        super().__init__(ThreadList(None, "memories", person, workers=workers))
        self.tab = tab
        tab.transcript_changed.connect(self._on_transcript_changed)
        self.sidebar.thread_chosen.connect(self.open)
        self.sidebar.new_requested.connect(self._on_new_requested)
        if index is not None:
            self.attach(index)

    def attach(self, index: ThreadIndex) -> None:
        """Use ``index`` (open now): list its threads and reopen the newest."""
        self.index = index
        self.sidebar.index = index
        person = self.sidebar.person

        def work() -> tuple[list[Thread], str, list[Turn]]:
            threads = index.listed("memories", person)
            newest = threads[0].id if threads else ""
            return threads, newest, index.turns(newest) if newest else []

        self.jobs.run("open newest", lambda: work if self.index is index else None, self._on_newest)

    def _on_newest(self, result: tuple[list[Thread], str, list[Turn]]) -> None:
        threads, newest, turns = result
        self.sidebar.show_threads(threads)
        if newest and not self.tab.history and not self.current:
            self._show(newest, turns)

    def open(self, thread_id: str) -> None:
        """Show the thread ``thread_id`` (its messages read in the worker pool)."""

        def make() -> Callable[[], list[Turn]] | None:
            index = self.index
            return None if index is None else lambda: index.turns(thread_id)

        self.jobs.run("open", make, lambda turns: self._show(thread_id, turns))

    def _show(self, thread_id: str, turns: list[Turn]) -> None:
        self.current = thread_id
        self.tab.show_conversation([Message(t.role, t.text) for t in turns])
        self.sidebar.select(thread_id)
        self.opened.emit(thread_id)

    def _on_new_requested(self) -> None:
        self.current = ""
        self.tab.show_conversation([])
        self.sidebar.list.clearSelection()
        self.sidebar.list.setCurrentRow(-1)

    def _on_transcript_changed(self) -> None:
        history = [(m.role, m.content) for m in self.tab.history]
        if history:
            self._save(
                "memories",
                self.sidebar.person,
                lambda index, thread_id: index.replace_turns(thread_id, history),
            )


class TutorTab(Protocol):
    """What :class:`TutorThreads` needs of the tutor tab."""

    answered: SignalInstance

    def current_user(self) -> str: ...

    def show_thread(self, turns: list[tuple[str, str]]) -> None: ...


class TutorThreads(_Keeper):
    """Keeps the tutor's threads: each answered turn adds its audit record's number to the
    thread shown; choosing a thread reads its turns back from the person's sealed records
    (``read``, in a worker) and shows them; "New thread" and another person start anew."""

    #: a thread's turns were read back (for the tab, on the GUI thread)
    turns_read = Signal(object)

    def __init__(
        self,
        tab: TutorTab,
        read: Callable[[str], None],
        new_thread: SignalInstance,
        scope_changed: SignalInstance,
        workers: WorkerPool | None = None,
    ) -> None:
        super().__init__(ThreadList(None, "tutor", tab.current_user(), workers=workers))
        self.tab = tab
        #: asks for a thread's turns to be read (the window runs it in a worker)
        self.read = read
        tab.answered.connect(self._on_answered)
        new_thread.connect(self._on_new_thread)
        scope_changed.connect(self._on_scope_changed)
        self.sidebar.thread_chosen.connect(self.open)
        self.sidebar.new_requested.connect(self._on_new_thread)
        self.turns_read.connect(self._on_turns_read)

    def attach(self, index: ThreadIndex) -> None:
        self.index = index
        self.sidebar.set_index(index)

    def open(self, thread_id: str) -> None:
        """Show the thread ``thread_id``: its turns are read back in a worker (nothing is
        shown when it is gone)."""
        if self.index is not None:
            self.current = thread_id
            self.read(thread_id)

    def _on_turns_read(self, turns: object) -> None:
        if isinstance(turns, list):
            self.tab.show_thread(turns)
            self.sidebar.select(self.current)

    def _on_new_thread(self) -> None:
        self.current = ""
        self.sidebar.list.setCurrentRow(-1)

    def _on_scope_changed(self, person: str) -> None:
        self.current = ""
        self.sidebar.set_person(self.tab.current_user())

    def _on_answered(self, turn: object) -> None:
        seq = getattr(turn, "audit_seq", None)
        question = str(getattr(turn, "question", ""))
        if not isinstance(seq, int):
            return
        rephrased = getattr(turn, "rephrases", 0)

        def write(index: ThreadIndex, thread_id: str) -> None:
            kept = index.turns(thread_id)
            if rephrased and kept and kept[-1].audit_seq == rephrased:
                index.drop_last_turn(thread_id)  # the reworded answer replaces it
            index.add_turn(thread_id, "user", question, audit_seq=seq)

        self._save("tutor", self.tab.current_user(), write)
