"""One run of a session at a time, across processes: an OS lock that dies with its process.

A run takes an exclusive ``flock`` on ``<data dir>/multiagent-locks/<session>.lock`` for its
whole length and writes its pid into the file. Another process (the window, a second
``custodia ask multiagent --resume``) that tries to run the same session gets
:class:`SessionRunningError` naming that pid, before it reads or writes anything of the
session: two runs of one session would number their events independently and the last
writer would drop the other's results.

The kernel releases the lock when the holder exits, however it exits (``kill -9``
included), so a session a crashed process left behind can be resumed at once: nothing stale
is left in a database, and the lock tells "running now" from "interrupted" exactly
(:meth:`RunLocks.holder`).

A released lock file is removed while still locked; an acquirer checks, once it holds the
lock, that the file it locked is still the one at the path (else it lost a race with a
release and tries again), so two processes can never both hold a session.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from backends import failures
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import _

log = logging.getLogger(__name__)

LOCKS_FOLDER = "multiagent-locks"
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")


class SessionBusyError(CustodiaEnvironmentError):
    """The session is already running in this process."""


class SessionRunningError(SessionBusyError):
    """The session is being run by another live process (``pid``; None when unknown)."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        who = _("pid {pid}").format(pid=pid) if pid is not None else _("pid unknown")
        super().__init__(
            _(
                "session {session_id} is running in another Custodia process ({who}); wait "
                "for it or stop it"
            ).format(session_id=session_id, who=who)
        )
        self.session_id = session_id
        self.pid = pid


@dataclass(frozen=True)
class Holder:
    """The live process holding a session's run lock (``pid`` None when it is unreadable)."""

    pid: int | None


class RunLock:
    """A held run lock; :meth:`release` (or the holder's death) frees it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        with self._lock:
            fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # Removed while still locked: whoever opened this file meanwhile notices (its
            # inode is no longer the path's) and retries on a new file.
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        except OSError as err:
            log.warning(_("multi-agent: could not remove the run lock %s: %s"), self.path, err)
        finally:
            os.close(fd)  # releases the flock

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class RunLocks:
    """Run locks of every session, as files in ``folder`` (0700; files 0600).

    ``wait`` is how long :meth:`acquire` retries a busy lock before refusing: a
    :meth:`holder` probe holds it (shared) for microseconds, and must never make a real run
    fail.
    """

    def __init__(self, folder: Path, *, wait: float = 1.0, poll: float = 0.02) -> None:
        self.folder = folder
        self.wait = wait
        self.poll = poll

    def path(self, session_id: str) -> Path:
        if _SAFE_NAME.fullmatch(session_id):
            name = session_id
        else:  # never a path built from arbitrary text ("../x", NUL, …)
            name = "h-" + hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()[:40]
        return self.folder / f"{name}.lock"

    def acquire(self, session_id: str) -> RunLock:
        """Hold the run lock of ``session_id``.

        Raises :class:`SessionRunningError` when another live process holds it (after
        ``wait`` seconds), :class:`StoreUnavailableError` when the lock file cannot be made.
        """
        path = self.path(session_id)
        deadline = time.monotonic() + self.wait
        while True:
            fd = self._try(path)
            if fd is not None:
                _write_pid(fd, path)
                return RunLock(path, fd)
            if time.monotonic() >= deadline:
                holder = self.holder(session_id)
                raise SessionRunningError(session_id, holder.pid if holder else None)
            time.sleep(self.poll)

    def _try(self, path: Path) -> int | None:
        """The locked file's descriptor, or None when another process holds it."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            said = _("{folder}: cannot create the run-lock folder").format(folder=self.folder)
            raise StoreUnavailableError(failures.failed(said, err)) from err
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as err:
                said = _("{path}: cannot create the run lock").format(path=path)
                raise StoreUnavailableError(failures.failed(said, err)) from err
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                os.close(fd)
                if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    return None
                said = _("{path}: cannot lock it").format(path=path)
                raise StoreUnavailableError(failures.failed(said, err)) from err
            try:
                mine = os.fstat(fd)
                current = os.stat(path)
                same = (mine.st_ino, mine.st_dev) == (current.st_ino, current.st_dev)
            except FileNotFoundError:
                same = False
            except OSError as err:
                os.close(fd)
                said = _("{path}: cannot check the run lock").format(path=path)
                raise StoreUnavailableError(failures.failed(said, err)) from err
            if same:
                return fd
            os.close(fd)  # released and removed by its holder meanwhile: lock the new file

    def holder(self, session_id: str) -> Holder | None:
        """The live process running ``session_id``, or None when no process is.

        Never raises: a lock that cannot even be looked at counts as not held.
        """
        path = self.path(session_id)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None  # no file: nobody holds it (or the folder is unusable: nobody can)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError as err:
                if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                    return Holder(_read_pid(fd))
                return None
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None  # a file left by a process that died: not held
        finally:
            os.close(fd)


def _write_pid(fd: int, path: Path) -> None:
    """Record the holder's pid (for the other process' message; the lock works without)."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    except OSError as err:
        log.warning(_("multi-agent: could not write the pid into %s: %s"), path, err)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
