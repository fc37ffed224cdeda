"""The one worker layer: backend work off the GUI thread, results and progress back as signals.

A job is a plain function ``fn(progress, emit) -> result`` from the backends' world: it calls
``progress.advance`` (and ``progress.check`` to honour cancellation) and ``emit(item)`` for
streamed items (tokens, feed events). Cancelling ends in ``cancelled`` when the job raises
``CancelledError``; a job that returns anyway (a stopped answer keeps what was said) ends in
``succeeded`` with what it returned. The GUI thread never waits on it; the window cancels
and waits for every job when it closes.
"""

from __future__ import annotations

import logging
import threading
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, SignalInstance

from backends.errors import CancelledError, CustodiaEnvironmentError
from backends.progress import Progress

log = logging.getLogger(__name__)

Emit = Callable[[object], None]
Job = Callable[[Progress, Emit], Any]
#: what ``connect=`` gives one signal: a slot (or a signal to re-emit on), or several
Slot = Callable[..., Any] | SignalInstance
Slots = Slot | list[Slot] | tuple[Slot, ...]


#: the signals a job's ``connect=`` may name (see :meth:`WorkerPool.start`)
JOB_SIGNALS = ("progress", "item", "succeeded", "failed", "cancelled", "finished")


class JobSignals(QObject):
    """Lives on the GUI thread and emits every public signal there.

    The worker only ever emits the private ``_relay`` signal; a queued connection brings it
    to :meth:`_on_relay` on the GUI thread, which re-emits the public signal. So whatever a
    caller connects (bound slot, lambda, qtbot) runs on the GUI thread, in emission order.
    """

    progress = Signal(int, int, str)  # done, total, message
    item = Signal(object)  # a streamed piece (token, event)
    succeeded = Signal(object)  # the job's return value
    failed = Signal(str, bool)  # message, True when it is an environment error (not a bug)
    cancelled = Signal()
    finished = Signal()  # always last, whatever happened
    _relay = Signal(str, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._relay.connect(self._on_relay, Qt.ConnectionType.QueuedConnection)

    def _on_relay(self, kind: str, payload: Any) -> None:
        if kind == "progress":
            done, total, text = payload
            self.progress.emit(done, total, text)
        elif kind == "item":
            self.item.emit(payload)
        elif kind == "succeeded":
            self.succeeded.emit(payload)
        elif kind == "failed":
            reason, environment = payload
            self.failed.emit(reason, environment)
        elif kind == "cancelled":
            self.cancelled.emit()
        elif kind == "finished":
            self.finished.emit()
            self.deleteLater()

    # called from the worker thread
    def send(self, kind: str, payload: object = None) -> None:
        self._relay.emit(kind, payload)


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
        outcome: tuple[str, object] | None = None  # None: a BaseException is on its way
        try:
            handle.progress.check()  # cancelled before it even started
            result = self._job(handle.progress, lambda item: signals.send("item", item))
        except CancelledError:
            outcome = ("cancelled", None)
        except CustodiaEnvironmentError as err:
            log.warning("%s: %s", handle.name, err)
            outcome = ("failed", (str(err), True))
        except Exception as err:  # a bug: log with trace, tell the user something went wrong
            log.error("%s failed:\n%s", handle.name, traceback.format_exc())
            outcome = ("failed", (f"{type(err).__name__}: {err}", False))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as err:
            # a native engine's panic (pyo3's PanicException is a BaseException): the job
            # failed, the worker thread and the window go on
            log.error("%s failed:\n%s", handle.name, traceback.format_exc())
            outcome = ("failed", (f"{type(err).__name__}: {err}", False))
        else:
            # A job that returns has a result, even when cancelled on the way: a chat turn
            # stopped by the user returns what was said (and was audited); work that must not
            # count as done raises CancelledError through ``progress.check()`` instead.
            outcome = ("succeeded", result)
        finally:
            # done before its outcome is told: a slot of "succeeded" that starts the next job
            # (the migration dialog's Start after its dry run) must not find this one running
            # the job has ended: it is not running nor active when its outcome arrives (the
            # pool is never asked about it after the window reacted to the outcome, when the
            # window may be gone: only then is "finished" sent)
            handle.done.set()
            self._on_done(handle)
            if outcome is not None:
                signals.send(*outcome)
            signals.send("finished")


class WorkerPool(QObject):
    """Runs jobs on a private QThreadPool and remembers them until they finish."""

    active_changed = Signal(int)

    def __init__(self, parent: QObject | None = None, max_threads: int = 4) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._lock = threading.Lock()
        self._active: list[JobHandle] = []
        self._pending: list[_Runnable] = []

    def start(self, name: str, job: Job, connect: Mapping[str, Slots] | None = None) -> JobHandle:
        """Queue ``job``; it starts when control returns to the event loop.

        ``connect`` wires the job declaratively (napari's ``create_worker(_connect=…)``):
        ``{"succeeded": slot, "failed": slot, "finished": slot, ...}``, one slot or a list of
        slots per signal of :class:`JobSignals`; an unknown signal name is a bug (ValueError).
        Every connection — these, and those the caller makes to ``handle.signals`` right after
        this call — is in place before the job can emit anything, however fast the job is.
        """
        unknown = [signal_name for signal_name in connect or {} if signal_name not in JOB_SIGNALS]
        if unknown:
            raise ValueError(f"a job has no signal {unknown[0]!r} (one of {JOB_SIGNALS})")
        signals = JobSignals(self)  # parented: lives until the pool does, on the GUI thread
        for signal_name, slots in (connect or {}).items():
            for slot in slots if isinstance(slots, list | tuple) else [slots]:
                getattr(signals, signal_name).connect(slot)
        handle = JobHandle(name, signals, Progress())
        handle.progress.callback = lambda done, total, message: signals.send(
            "progress", (done, total, message)
        )
        with self._lock:
            self._active.append(handle)
            count = len(self._active)
        self.active_changed.emit(count)
        self._pending.append(_Runnable(job, handle, self._forget))
        QTimer.singleShot(0, self, self._launch_pending)
        return handle

    def _launch_pending(self) -> None:
        pending, self._pending = self._pending, []
        for runnable in pending:
            self._pool.start(runnable)

    def _forget(self, handle: JobHandle) -> None:
        with self._lock:
            if handle in self._active:
                self._active.remove(handle)
            count = len(self._active)
        try:
            self.active_changed.emit(count)
        except RuntimeError:  # the pool was deleted (its window closed) as the job ended
            log.debug("worker pool gone before %s was forgotten", handle.name)

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
        self._launch_pending()  # they start, see the cancellation and finish at once
        return bool(self._pool.waitForDone(timeout_ms))
