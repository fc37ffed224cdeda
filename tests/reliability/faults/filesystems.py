"""Real filesystem faults for the fault tests: a read-only data dir and a full disk.

The tests run as root in the sandbox and in CI, so ``chmod`` stops nobody. In order of
preference:

* **read-only**: a private tmpfs mounted on the data dir, remounted ``ro`` (``mount -o
  remount,ro``) and back ``rw``; as a non-root user, ``chmod a-w`` on every directory and
  file; as root without ``mount``, ``chattr +i`` (immutable) where the filesystem supports it.
* **full disk**: the same tmpfs with ``size=`` small, filled up by a filler file (deleted to
  clear the fault); without ``mount``, ``RLIMIT_FSIZE`` lowered to the size of the largest
  file (with SIGXFSZ ignored, a write past it fails with EFBIG, as a full disk would).

Which one ran is returned, so the figures say exactly what was tested.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path


def _run(*cmd: str) -> bool:
    try:
        return subprocess.run(cmd, capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def can_mount() -> bool:
    """Root with ``mount`` (``CUSTODIA_FAULTS_NO_MOUNT=1`` forces the fallbacks)."""
    if os.environ.get("CUSTODIA_FAULTS_NO_MOUNT") == "1":
        return False
    return os.geteuid() == 0 and shutil.which("mount") is not None


@contextlib.contextmanager
def tmpfs(path: Path, size: str = "64m") -> Iterator[bool]:
    """Mount a private tmpfs on ``path`` (empty dir); yields False when mounting failed."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    mounted = can_mount() and _run(
        "mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)
    )
    try:
        yield mounted
    finally:
        if mounted:
            _run("mount", "-o", "remount,rw", str(path))
            if not _run("umount", str(path)):
                _run("umount", "-l", str(path))


class ReadOnly:
    """Make the data dir read-only and writable again; ``how`` says by which means."""

    def __init__(self, home: Path, mounted: bool) -> None:
        self.home = home
        self.mounted = mounted
        if mounted:
            self.how = "tmpfs remounted read-only"
        elif os.geteuid() != 0:
            self.how = "chmod a-w (non-root user)"
        else:
            probe = home / ".chattr-probe"
            probe.write_text("x")
            ok = _run("chattr", "+i", str(probe))
            if ok:
                _run("chattr", "-i", str(probe))
            probe.unlink()
            self.how = "chattr +i" if ok else ""

    @property
    def available(self) -> bool:
        return bool(self.how)

    def _paths(self) -> list[Path]:
        return [self.home, *sorted(self.home.rglob("*"))]

    def on(self) -> None:
        if self.mounted:
            assert _run("mount", "-o", "remount,ro", str(self.home)), "remount ro failed"
        elif os.geteuid() != 0:
            for p in self._paths():
                p.chmod(p.stat().st_mode & ~0o222)
        else:
            for p in self._paths():
                _run("chattr", "+i", str(p))

    def off(self) -> None:
        if self.mounted:
            assert _run("mount", "-o", "remount,rw", str(self.home)), "remount rw failed"
        elif os.geteuid() != 0:
            for p in self._paths():
                p.chmod(p.stat().st_mode | 0o200)
        else:
            for p in reversed(self._paths()):
                _run("chattr", "-i", str(p))


class FullDisk:
    """Fill the data dir's filesystem (a small tmpfs) or cap file sizes; then free it."""

    def __init__(self, home: Path, mounted: bool) -> None:
        self.home = home
        self.mounted = mounted
        self.how = "small tmpfs filled up" if mounted else "RLIMIT_FSIZE at the largest file"
        self._filler = home / "filler.bin"
        self._saved: tuple[int, int] | None = None
        self._handler: object = None

    def on(self) -> None:
        if self.mounted:
            with open(self._filler, "wb") as fh:  # until ENOSPC
                block = b"\0" * 65536
                with contextlib.suppress(OSError):
                    while True:
                        fh.write(block)
                        fh.flush()
            with contextlib.suppress(OSError):
                os.sync()
        else:
            largest = max(
                (p.stat().st_size for p in self.home.rglob("*") if p.is_file()), default=0
            )
            self._saved = resource.getrlimit(resource.RLIMIT_FSIZE)
            self._handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (largest + 4096, self._saved[1]))

    def off(self) -> None:
        if self.mounted:
            self._filler.unlink(missing_ok=True)
        elif self._saved is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, self._saved)
            signal.signal(signal.SIGXFSZ, self._handler)  # type: ignore[arg-type]
            self._saved = None
