"""Run locks: one run of a session at a time across processes; a dead holder frees it."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from backends.errors import StoreUnavailableError
from backends.multiagent.runlock import Holder, RunLocks, SessionRunningError

ROOT = Path(__file__).resolve().parents[3]

HOLD = """
import sys, time
from pathlib import Path
from backends.multiagent.runlock import RunLocks
lock = RunLocks(Path(sys.argv[1])).acquire(sys.argv[2])
print("held", flush=True)
time.sleep(300)
"""


@pytest.fixture
def locks(tmp_path: Path) -> RunLocks:
    return RunLocks(tmp_path / "locks", wait=0.2)


def hold_in_child(folder: Path, session_id: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder), session_id],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_lock_held_by_a_live_process_refuses_others_with_its_pid(locks: RunLocks) -> None:
    proc = hold_in_child(locks.folder, "s1")
    try:
        assert locks.holder("s1") == Holder(proc.pid)
        with pytest.raises(SessionRunningError) as refused:
            locks.acquire("s1")
        assert refused.value.pid == proc.pid
        assert str(refused.value) == (
            f"session s1 is running in another Custodia process (pid {proc.pid}); "
            "wait for it or stop it"
        )
        assert locks.holder("s2") is None  # other sessions are free
        locks.acquire("s2").release()
    finally:
        proc.kill()
        proc.wait()
    # kill -9: the kernel released the lock; the file it left behind is not a holder.
    assert locks.path("s1").exists()
    assert locks.holder("s1") is None
    with locks.acquire("s1") as lock:
        assert lock.held
        assert locks.holder("s1") == Holder(os.getpid())
        assert locks.path("s1").read_text().strip() == str(os.getpid())
    assert not locks.path("s1").exists()  # removed on release
    assert locks.holder("s1") is None


def test_within_one_process_a_second_acquire_is_refused_until_release(locks: RunLocks) -> None:
    lock = locks.acquire("s1")
    with pytest.raises(SessionRunningError):
        RunLocks(locks.folder, wait=0.1).acquire("s1")
    lock.release()
    lock.release()  # twice is harmless
    RunLocks(locks.folder, wait=0.1).acquire("s1").release()


def test_a_probe_never_makes_a_run_fail(locks: RunLocks) -> None:
    """A probe (``holder``) holds the lock shared for an instant: an acquirer waits it out."""
    locks.acquire("s1").release()
    path = locks.path("s1")
    path.parent.mkdir(exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a probe, caught mid-look
    threading.Timer(0.1, os.close, (fd,)).start()
    started = time.monotonic()
    RunLocks(locks.folder, wait=5).acquire("s1").release()
    assert 0.05 < time.monotonic() - started < 5


def test_a_release_racing_an_acquire_never_gives_two_holders(
    locks: RunLocks, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The acquirer opened the file just as its holder released (removed) it: it must not
    keep a lock on the removed file, or a third process would get the session too."""
    first = locks.acquire("s1")
    real_open = os.open
    opened: list[str] = []

    def open_then_race(path: str | os.PathLike[str], flags: int, mode: int = 0o777) -> int:
        fd = real_open(path, flags, mode)
        opened.append(str(path))
        if len(opened) == 1:
            first.release()  # the holder finishes between our open and our flock
        return fd

    monkeypatch.setattr(os, "open", open_then_race)
    second = locks.acquire("s1")
    monkeypatch.setattr(os, "open", real_open)
    try:
        assert len(opened) == 2  # the removed file was noticed, and the new one locked
        assert locks.holder("s1") == Holder(os.getpid())
        with pytest.raises(SessionRunningError):
            RunLocks(locks.folder, wait=0.1).acquire("s1")
    finally:
        second.release()


@pytest.mark.parametrize("session_id", ["../../escape", "a/b", "x" * 300, "", "\x00"])
def test_lock_files_stay_in_their_folder(locks: RunLocks, session_id: str) -> None:
    path = locks.path(session_id)
    assert path.parent == locks.folder and path.name.endswith(".lock")
    with locks.acquire(session_id):
        assert locks.holder(session_id) is not None
    assert list(locks.folder.iterdir()) == []


def test_lock_files_are_private(locks: RunLocks) -> None:
    with locks.acquire("s1"):
        assert locks.folder.stat().st_mode & 0o777 == 0o700
        assert locks.path("s1").stat().st_mode & 0o777 == 0o600


def test_an_unusable_lock_folder_is_a_typed_error(tmp_path: Path) -> None:
    blocker = tmp_path / "locks"
    blocker.write_text("a file where the folder should be")
    locks = RunLocks(blocker)
    with pytest.raises(StoreUnavailableError, match="run-lock folder"):
        locks.acquire("s1")
    assert locks.holder("s1") is None
