"""Suite-wide fixtures: real servers (tests.harness), the network block, the leak guards.

Tests mirror the source tree: tests/backends/..., tests/desktop/...; tests/contract holds
one abstract suite per store role, subclassed per implementation.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest_plugins = ["tests.harness.servers", "tests.harness.netblock"]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests using Qt fixtures are marked ``gui``; ``slow`` ones run when CUSTODIA_SLOW=1."""
    run_slow = os.environ.get("CUSTODIA_SLOW") == "1"
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if {"qtbot", "qapp", "custodia_window"} & set(fixtures):
            item.add_marker(pytest.mark.gui)
        if item.get_closest_marker("slow") and not run_slow:
            item.add_marker(pytest.mark.skip(reason="long loop: set CUSTODIA_SLOW=1 (CI does)"))


@pytest.fixture(autouse=True)
def _no_leftover_threads() -> Iterator[None]:
    """Fail a test that leaves Python threads running (napari's idea)."""
    before = set(threading.enumerate())
    yield
    deadline = 5.0
    leftovers: list[threading.Thread] = []
    for thread in set(threading.enumerate()) - before:
        if thread.daemon and thread.name.startswith(("pytest_timeout", "Dummy")):
            continue
        thread.join(timeout=deadline)
        if thread.is_alive() and not thread.daemon:
            leftovers.append(thread)
    assert not leftovers, f"test left threads running: {leftovers}"


@pytest.fixture(autouse=True)
def _no_leftover_qt_work(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a GUI test that leaves QThreadPool tasks, QThreads or active QTimers behind."""
    if "gui" not in {m.name for m in request.node.iter_markers()}:
        yield
        return
    from PySide6.QtCore import QThreadPool, QTimer

    started: list[Any] = []
    original = QTimer.start

    def tracking_start(self: QTimer, *args: Any) -> None:
        started.append(self)
        original(self, *args)

    QTimer.start = tracking_start  # type: ignore[method-assign]
    threads_before = set(_qthreads())
    try:
        yield
    finally:
        QTimer.start = original  # type: ignore[method-assign]
    assert QThreadPool.globalInstance().waitForDone(5000), "global QThreadPool still busy"
    running = [t for t in _qthreads() if t not in threads_before and t.isRunning()]
    assert not running, f"test left QThreads running: {running}"
    active = []
    for timer in started:
        try:
            if timer.isActive() and not timer.isSingleShot():
                active.append(timer)
        except RuntimeError:  # already deleted: fine
            pass
    assert not active, f"test left {len(active)} repeating QTimer(s) active"


def _qthreads() -> list[Any]:
    import gc

    from PySide6.QtCore import QThread

    return [o for o in gc.get_objects() if isinstance(o, QThread)]
