"""Qt-free progress and cancellation for long work (the napari ``progress`` idea).

Backends take a :class:`Progress` and call :meth:`Progress.advance`; the desktop layer turns
the callback into a signal, the CLI prints it. :meth:`Progress.check` raises
:class:`~backends.errors.CancelledError` once the user cancelled.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from backends.errors import CancelledError
from backends.i18n import _

ProgressCallback = Callable[[int, int, str], None]


@dataclass
class Progress:
    """Reports ``done`` of ``total`` steps and carries a cancellation flag."""

    total: int = 0
    callback: ProgressCallback | None = None
    done: int = 0
    _cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    def start(self, total: int, message: str = "") -> None:
        self.total = total
        self.done = 0
        self._emit(message)

    def advance(self, steps: int = 1, message: str = "") -> None:
        self.check()
        self.done += steps
        self._emit(message)

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def check(self) -> None:
        if self._cancel.is_set():
            raise CancelledError(_("cancelled by the user"))

    def _emit(self, message: str) -> None:
        if self.callback is not None:
            self.callback(self.done, self.total, message)
