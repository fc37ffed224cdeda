"""The window's kept threads (issue 30): the memory chats and the tutor's threads, each in a
sidebar beside its tab's transcript, listed from the thread index once it opens in a worker.

The tabs know nothing of it: it finds their splitters by objectName and asks the tutor's
thread's turns from the person's sealed audit records. A person forgotten (in the inspector,
or from the terminal before this start) loses their threads; threads deleted in this session
(Undo was offered while the window was open) are deleted for good when it closes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QComboBox, QPushButton, QSplitter, QTabWidget, QWidget

from backends.errors import CustodiaEnvironmentError
from backends.progress import Progress
from backends.services import Lazy, Services
from backends.threads import Thread, ThreadIndex
from desktop.thread_list import MemoryChatThreads, TutorThreads
from desktop.workers import Emit, WorkerPool

if TYPE_CHECKING:
    from backends.audit import AuditService

log = logging.getLogger(__name__)


#: from this window width the tutor's thread list starts open (a 1366×768 laptop's window
#: is 1100 px wide or more); below it, folded to its toggle: the tutor's row of buttons
#: needs the room (it started folded under a 1000-px-wide *screen*: on a laptop the user did
#: not see their threads)
OPEN_FROM_WIDTH = 1100


def starts_folded(window_width: int) -> bool:
    """Whether the tutor's thread list starts folded in a window this wide (the user's own
    choice, by the list's toggle, is remembered and wins)."""
    return window_width < OPEN_FROM_WIDTH


class WindowThreads(QObject):
    """The sidebars of kept threads, for the tabs that have them."""

    def __init__(
        self,
        tabs: QTabWidget,
        services: Services,
        workers: WorkerPool,
        audit: Lazy[AuditService],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.tabs = tabs
        self.services = services
        self.workers = workers
        self.audit = audit
        # the memory chats kept as threads (once the index is open)
        self.memory: MemoryChatThreads | None = None
        self.tutor: TutorThreads | None = None
        # the thread index, once opened (purged of deleted threads when the window closes)
        self.index: ThreadIndex | None = None
        self._keep_tutor_threads()
        self._keep_memory_chats()
        self._open()

    def _keep_memory_chats(self) -> None:
        """The memory chats in a sidebar beside the transcript; the index opens in a worker
        (:meth:`_open`), as every service does."""
        tab = self.tabs.findChild(QWidget, "memories")
        splitter = self.tabs.findChild(QSplitter, "memories_splitter")
        if tab is None or splitter is None or not hasattr(tab, "show_conversation"):
            return
        # in place now, so the splitter's remembered sizes count it; it lists once open
        self.memory = MemoryChatThreads(tab, workers=self.workers)  # type: ignore[arg-type]
        self.memory.setParent(self)
        splitter.insertWidget(0, self.memory.sidebar)
        splitter.setStretchFactor(0, 0)
        splitter.setCollapsible(0, False)  # folded, its toggle stays in sight

    def _keep_tutor_threads(self) -> None:
        """The tutor's threads in a sidebar; a thread's questions and answers are read back
        from the person's sealed audit records when it is opened."""
        tab = self.tabs.findChild(QWidget, "tutor")
        splitter = self.tabs.findChild(QSplitter, "tutor_splitter")
        new_thread = self.tabs.findChild(QPushButton, "new_thread")
        scope = self.tabs.findChild(QComboBox, "scope")
        if None in (tab, splitter, new_thread, scope) or not hasattr(tab, "show_thread"):
            return
        assert splitter is not None and new_thread is not None and scope is not None
        self.tutor = TutorThreads(
            tab,  # type: ignore[arg-type]
            self._read_tutor_thread,
            new_thread.clicked,
            scope.currentTextChanged,
            self.workers,
        )
        self.tutor.setParent(self)
        splitter.insertWidget(0, self.tutor.sidebar)
        splitter.setStretchFactor(0, 0)
        splitter.setCollapsible(0, False)  # folded, its toggle stays in sight

    def _open(self) -> None:
        if self.memory is None and self.tutor is None:
            return
        index = self.services.lazy_part("threads", ThreadIndex)

        def job(progress: Progress, emit: Emit) -> ThreadIndex:
            return index.get()

        self.workers.start(
            "threads: open",
            job,
            connect={"succeeded": self._on_opened, "failed": self._on_failed},
        )

    def _on_opened(self, index: ThreadIndex) -> None:
        self.index = index
        if self.memory is not None:
            self.memory.attach(index)
        if self.tutor is not None:
            self.tutor.attach(index)
            self.sweep_erased()  # someone may have been forgotten from the terminal

    def _on_failed(self, message: str, environment: bool) -> None:
        log.warning("memory chats not kept as threads: %s", message)
        for keeper in (self.memory, self.tutor):
            if keeper is not None:
                keeper.sidebar.setVisible(False)

    def sweep_erased(self) -> bool:
        """Delete the tutor threads of every person who was forgotten (their key is gone:
        their records cannot be read, and their threads' titles must not stay). Queued after
        the threads' own jobs, so a turn kept just before the erasure is erased too; False
        when there is no index to sweep."""
        keeper = self.tutor
        if keeper is None or keeper.index is None:
            return False
        audit = self.audit

        def make() -> Callable[[], list[Thread]] | None:
            index, listing = keeper.index, keeper.sidebar.listing()
            if index is None or listing is None:
                return None

            def work() -> list[Thread]:
                service = audit.get()
                gone = [p for p in index.people("tutor") if service.pseudonym_of(p) is None]
                for person in gone:
                    index.forget_person(person)
                return listing()

            return work

        keeper.jobs.run("erased people", make, keeper.sidebar.show_threads)
        return True

    def _read_tutor_thread(self, thread_id: str) -> None:
        """A tutor thread's questions and answers, read back in a worker: the thread's
        record numbers from the index, then each record from the audit log (None when the
        thread is gone)."""
        keeper = self.tutor
        if keeper is None or keeper.index is None:
            return
        index, audit = keeper.index, self.audit
        erased = self.tr("(erased: this person's records can no longer be read)")

        def job(progress: Progress, emit: Emit) -> list[tuple[str, str]] | None:
            if index.get(thread_id) is None:
                return None
            seqs = [t.audit_seq for t in index.turns(thread_id) if t.audit_seq is not None]
            service = audit.get()
            out: list[tuple[str, str]] = []
            for seq in seqs:
                entry = service.entry(seq)
                if entry is None:
                    continue
                personal = service.reveal(entry).personal or {}
                out.append((str(personal.get("question", "")), str(personal.get("answer", erased))))
            return out

        self.workers.start("threads: read", job, connect={"succeeded": keeper.turns_read})

    def close(self) -> None:
        """At the window's close: a turn that ends after this (its outcome already queued)
        keeps nothing in a closed thread index; threads deleted in this session go for good."""
        for keeper in (self.memory, self.tutor):
            if keeper is not None:
                keeper.detach()
        if self.index is None:
            return
        try:
            self.index.purge()
        except CustodiaEnvironmentError as err:
            log.warning("threads: not purged at close: %s", err)
