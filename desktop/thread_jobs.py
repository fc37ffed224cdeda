"""The thread index's work off the GUI thread (issue 30): every list, rename, delete, undo and
save of a thread runs in the worker pool, one at a time and in the order asked, so a write
and the listing after it never cross; the GUI thread never waits on SQLite (another process
holding the index's lock made it wait up to its busy timeout, the window frozen meanwhile).

A job is made when its turn comes (:meth:`IndexQueue.run` takes a *maker*, called on the GUI
thread then), so it reads the state the earlier jobs left — the thread a first message
created, say — and is dropped when the index is gone (the window closing). A
:class:`~backends.threads.ThreadsUnavailableError` comes back as ``failed`` with
``environment`` true, as every job's environment error does (:mod:`desktop.workers`).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from backends.progress import Progress
from desktop.workers import Emit, JobHandle, WorkerPool

log = logging.getLogger(__name__)

#: what runs in the worker: reads or writes the index, returns what the slot shows
Work = Callable[[], Any]
#: called on the GUI thread when the job's turn comes: its work, or None to skip it
Maker = Callable[[], Work | None]
#: called on the GUI thread with what the work returned
Done = Callable[[Any], None]


class IndexQueue(QObject):
    """Runs the thread index's jobs in ``workers``, one at a time, in the order asked."""

    #: a job failed: (message, True for an environment error such as a locked index)
    failed = Signal(str, bool)
    #: nothing is running or waiting (after the last job's outcome was shown)
    idle = Signal()

    def __init__(self, workers: WorkerPool | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        #: the window's pool (it waits for these jobs when it closes), else one of its own
        self.workers = workers if workers is not None else WorkerPool(self)
        self._waiting: deque[tuple[str, Maker, Done | None]] = deque()
        self._running: JobHandle | None = None
        #: what shows the running job's result: kept here, not in the job's connections (a
        #: closure over a keeper, released in the job's signals' destructor, was the last
        #: reference to it: the keeper was deleted inside another object's destructor)
        self._done: Done | None = None
        #: every job started, newest last (what a test looks at: the worker path)
        self.started: deque[JobHandle] = deque(maxlen=64)

    @property
    def busy(self) -> bool:
        return self._running is not None or bool(self._waiting)

    def run(self, name: str, make: Maker, done: Done | None = None) -> None:
        """Queue a job: ``make()`` gives its work when its turn comes; ``done(result)`` shows
        what it returned."""
        self._waiting.append((name, make, done))
        self._next()

    def _next(self) -> None:
        while self._running is None and self._waiting:
            name, make, done = self._waiting.popleft()
            work = make()
            if work is None:
                continue

            def job(progress: Progress, emit: Emit, work: Work = work) -> Any:
                return work()

            self._done = done
            self._running = self.workers.start(
                f"threads: {name}",
                job,
                connect={
                    "succeeded": self._on_succeeded,
                    "failed": self._on_failed,
                    "finished": self._on_finished,
                },
            )
            self.started.append(self._running)
        if self._running is None:
            self.idle.emit()

    def _on_succeeded(self, result: Any) -> None:
        done = self._done
        if done is not None:
            done(result)

    def _on_failed(self, message: str, environment: bool) -> None:
        self.failed.emit(message, environment)

    def _on_finished(self) -> None:
        self._running = None
        self._done = None
        self._next()
