"""A lease on a folder two processes share: one operation at a time, across processes.

An embedded engine whose files one process at a time may open (qdrant-edge: a second opener
gets ``Can't init WAL: Kind(WouldBlock)``) is shared by running every operation under a
*lease*: an ``flock`` on ``<root>/.lock`` taken for the operation, and given back once the
store has been idle for ``idle`` seconds. A second process waits for the lease up to ``wait``
seconds, then gets a :class:`~backends.errors.StoreUnavailableError` naming the holder's pid.
A waiter announces itself with an flock on ``<root>/.want``; a holder that sees it gives the
lease up after its current operation (a busy process cannot starve the other). Both flocks
die with their holder (kill -9 included).

The store says what the lease guards through three hooks: what to do once it is taken
(re-read what the other process may have changed), before it is given back (flush and close
the engine's files), and how a failure inside an operation is reported.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import _, number

log = logging.getLogger(__name__)


class FolderLease:
    """The lease on :attr:`root` (mixed into the store that shares the folder); the store
    sets the attributes below in its constructor (:meth:`_start_lease`)."""

    root: Path
    where: str
    wait: float
    idle: float

    def _start_lease(self, root: Path, wait: float, idle: float) -> None:
        """No lease held yet; ``wait`` and ``idle`` as in the module's docstring."""
        self.root = root
        self.where = str(root)
        self.wait = wait
        self.idle = idle
        self._rlock = threading.RLock()
        self._depth = 0
        self._last = 0.0
        self._fd: int | None = None
        #: a thread will give the lease back once idle (set and reset under ``_rlock``)
        self._releasing = False
        self._closed = False

    # -- what the store supplies -----------------------------------------------------------
    def _lease_taken(self) -> None:
        """Just taken: what the other process may have changed is read again."""

    def _lease_ending(self) -> None:
        """About to be given back: what the store holds open is flushed and closed."""

    def _failed_inside(self, err: BaseException) -> BaseException | None:
        """The error to raise instead of ``err`` (raised inside an operation), or None."""
        return None

    # -- the lease -------------------------------------------------------------------------
    @contextmanager
    def _lease(self) -> Iterator[None]:
        """Hold the memory for one operation (see the module docstring)."""
        if self._closed:
            raise StoreUnavailableError(
                _("the semantic memory at {where} is closed").format(where=self.where)
            )
        if not self._rlock.acquire(timeout=self.wait):
            raise StoreUnavailableError(
                _(
                    "the semantic memory at {where} is busy in this process (being indexed "
                    "or re-embedded) for more than {seconds} s; try again later"
                ).format(where=self.where, seconds=number(self.wait, None))
            )
        try:
            self._depth += 1
            if self._fd is None:
                self._take_lock()
                self._lease_taken()
            try:
                yield
            except BaseException as err:
                failure = self._failed_inside(err)
                if failure is None:
                    raise
                raise failure from err
        finally:
            self._depth -= 1
            self._last = time.monotonic()
            if self._depth == 0:
                if self._fd is not None and self._someone_waits():
                    self._release()  # its turn: between two operations, never inside one
                else:
                    self._schedule_release()
            self._rlock.release()

    def _take_lock(self) -> None:
        """Take the lease: at once when it is free, else as *the* waiter (``.want``, which a
        holder checks after each operation and then gives the lease up) for ``wait`` s."""
        fd = self._open_lock(".lock")
        if not self._try_flock(fd):
            want = self._open_lock(".want")
            deadline = time.monotonic() + self.wait
            try:
                while not self._try_flock(want):  # several waiters: one at a time
                    self._wait_or_fail(fd, deadline)
                while not self._try_flock(fd):
                    self._wait_or_fail(fd, deadline)
            except BaseException:
                os.close(fd)
                raise
            finally:
                os.close(want)  # unlocks it: the next waiter's turn
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def _open_lock(self, name: str) -> int:
        try:
            return os.open(self.root / name, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            raise StoreUnavailableError(
                failed(_("{path}: cannot open a lock").format(path=self.root / name), err)
            ) from err

    @staticmethod
    def _try_flock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _wait_or_fail(self, fd: int, deadline: float) -> None:
        if time.monotonic() < deadline:
            time.sleep(0.02)
            return
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
        raise StoreUnavailableError(
            _(
                "the semantic memory at {where} has been in use by another Custodia process "
                "(pid {pid}) for more than {seconds} s (a re-embedding or an index build); "
                "try again when it has finished"
            ).format(where=self.where, pid=holder, seconds=number(self.wait, None))
        )

    def _someone_waits(self) -> bool:
        """Another process waits for the lease (it holds ``.want``)."""
        try:
            want = os.open(self.root / ".want", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return False
        try:
            return not self._try_flock(want)
        finally:
            os.close(want)

    def _schedule_release(self) -> None:
        if self.idle <= 0:
            self._release()
            return
        if self._releasing:  # under _rlock, like the flag's reset: no lost wake-up
            return
        self._releasing = True
        threading.Thread(
            target=self._release_when_idle, name="qdrant-edge-lease", daemon=True
        ).start()

    def _release_when_idle(self) -> None:
        while True:
            time.sleep(max(0.01, self._last + self.idle - time.monotonic()))
            with self._rlock:
                if self._fd is not None and (
                    self._depth > 0 or time.monotonic() - self._last < self.idle
                ):
                    continue
                try:
                    self._release()
                except Exception:
                    log.exception(_("semantic memory: giving the lease back failed"))
                finally:
                    self._releasing = False
                return

    def _release(self) -> None:
        """Put what the lease guards away, then unlock (the caller holds ``_rlock``)."""
        self._lease_ending()
        if self._fd is not None:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            finally:
                os.close(self._fd)
                self._fd = None

    def release(self) -> None:
        """Give the memory to other processes now (rather than after ``idle`` seconds)."""
        with self._rlock:
            if self._depth == 0:
                self._release()

    @property
    def held(self) -> bool:
        """This process holds the lease (for tests and the doctor)."""
        return self._fd is not None
