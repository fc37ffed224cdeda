"""The Qt binding itself: defects of a PySide6 release that would crash the app."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    ping = Signal(str, object)
    bare = Signal()


def test_emitting_a_signal_takes_no_reference_from_true() -> None:
    """PySide6 6.12.0's ``emit()`` returned ``True`` without a reference: each emit (every
    streamed token, every progress step) took one from ``True`` until the interpreter aborted
    with "bool_dealloc: deallocating True" — after a few thousand emits in a small process,
    at exit in the test suite. The pinned release must not."""
    emitter = _Emitter()
    before = sys.getrefcount(True)
    for n in range(200):
        emitter.ping.emit("item", n)
        emitter.bare.emit()
    # 400 emits: a reference taken by each shows as -400 (a few may come and go elsewhere)
    assert sys.getrefcount(True) - before > -10
