"""The one worker layer: backend work off the GUI thread, results and progress back as signals.

A job is a plain function ``fn(progress, emit) -> result`` from the backends' world: it calls
``progress.advance`` (and ``progress.check`` to honour cancellation) and ``emit(item)`` for
streamed items (tokens, feed events). The GUI thread never waits on it; the window cancels
and waits for every job when it closes.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from backends.errors import CancelledError, CustodiaEnvironmentError
from backends.progress import Progress

log = logging.getLogger(__name__)

Emit = Callable[[object], None]
Job = Callable[[Progress, Emit], Any]


class JobSignals(QObject):
    """Lives on the GUI thread; emitted from the worker, delivered queued."""

    progress = Signal(int, int, str)  # done, total, message
    item = Signal(object)  # a streamed piece (token, event)
    succeeded = Signal(object)  # the job's return value
    failed = Signal(str, bool)  # message, True when it is an environment error (not a bug)
    cancelled = Signal()
    finished = Signal()  # always last, whatever happened


class JobHandle:
    """What the caller keeps: signals to connect, and :meth:`cancel`."""

    def __init__(self, name: str, signals: JobSignals, progress: Progress) -> None:
        self.name = name
        self.signals = signals
        self.progress = progress
        self.done = threading.Event()

    def cancel(self) -> None:
        self.progress.cancel()

    @property
    def running(self) -> bool:
        return not self.done.is_set()


class _Runnable(QRunnable):
    def __init__(self, job: Job, handle: JobHandle, on_done: Callable[[JobHandle], None]) -> None:
        super().__init__()
        self.setAutoDelete(True)
        self._job = job
        self._handle = handle
        self._on_done = on_done

    def run(self) -> None:
        handle = self._handle
        signals = handle.signals
        try:
            result = self._job(handle.progress, signals.item.emit)
        except CancelledError:
            signals.cancelled.emit()
        except CustodiaEnvironmentError as err:
            log.warning("%s: %s", handle.name, err)
            signals.failed.emit(str(err), True)
        except Exception as err:  # a bug: log with trace, tell the user something went wrong
            log.error("%s failed:\n%s", handle.name, traceback.format_exc())
            signals.failed.emit(f"{type(err).__name__}: {err}", False)
        else:
            if handle.progress.cancelled:
                signals.cancelled.emit()
            else:
                signals.succeeded.emit(result)
        finally:
            handle.done.set()
            self._on_done(handle)
            signals.finished.emit()


class WorkerPool(QObject):
    """Runs jobs on a private QThreadPool and remembers them until they finish."""

    active_changed = Signal(int)

    def __init__(self, parent: QObject | None = None, max_threads: int = 4) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._lock = threading.Lock()
        self._active: list[JobHandle] = []

    def start(self, name: str, job: Job) -> JobHandle:
        """Start ``job``; connect to the handle's signals right away (they are queued)."""
        signals = JobSignals(self)  # parented: lives until the pool does, on the GUI thread
        handle = JobHandle(name, signals, Progress())
        handle.progress.callback = lambda done, total, message: signals.progress.emit(
            done, total, message
        )
        signals.finished.connect(signals.deleteLater)
        with self._lock:
            self._active.append(handle)
            count = len(self._active)
        self.active_changed.emit(count)
        self._pool.start(_Runnable(job, handle, self._forget))
        return handle

    def _forget(self, handle: JobHandle) -> None:
        with self._lock:
            if handle in self._active:
                self._active.remove(handle)
            count = len(self._active)
        self.active_changed.emit(count)

    @property
    def active(self) -> list[JobHandle]:
        with self._lock:
            return list(self._active)

    def cancel_all(self) -> None:
        for handle in self.active:
            handle.cancel()

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancel everything and wait; True when every job ended in time."""
        self.cancel_all()
        return bool(self._pool.waitForDone(timeout_ms))
