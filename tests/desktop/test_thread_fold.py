"""The tutor's thread list at a laptop's size and at the window's minimum (issue 30): open
in a 1366×768 window (it started folded under a 1000-px-wide *screen*, so a laptop's user did
not see their threads), folded to a strip with a visible toggle at 760×480, the user's own
choice kept across a restart."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QToolButton, QWidget

from backends.services import Services
from desktop.main_window import MainWindow
from desktop.thread_list import ThreadList


def _open(qtbot: Any, services: Services, settings: QSettings, width: int, height: int) -> Any:
    window = MainWindow(services, settings=settings)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    window.resize(width, height)
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    tab = window.findChild(QWidget, "tutor")
    window.tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: window.tutor_threads.sidebar.isVisible(), timeout=5_000)
    return window


def _sidebar(window: Any) -> ThreadList:
    sidebar = window.tutor_threads.sidebar
    assert isinstance(sidebar, ThreadList)
    return sidebar


@pytest.mark.parametrize("size", [(1366, 768), (1100, 720)])
def test_the_thread_list_is_open_in_a_laptops_window(
    qtbot: Any, custodia_services: Services, custodia_qsettings: QSettings, size: tuple[int, int]
) -> None:
    window = _open(qtbot, custodia_services, custodia_qsettings, *size)
    sidebar = _sidebar(window)
    assert not sidebar.folded and sidebar.list.isVisible()
    assert sidebar.list.width() >= 110  # titles readable, not a sliver
    tab = window.findChild(QWidget, "tutor")
    assert tab.minimumSizeHint().width() <= window.tabs.width()
    window.close_now()


def test_at_the_minimum_size_it_is_folded_to_a_visible_toggle(
    qtbot: Any, custodia_services: Services, custodia_qsettings: QSettings
) -> None:
    window = _open(qtbot, custodia_services, custodia_qsettings, 760, 480)
    assert window.width() == 760
    sidebar = _sidebar(window)
    toggle = sidebar.findChild(QToolButton, "thread_toggle")
    assert sidebar.folded and not sidebar.list.isVisible()
    assert toggle.isVisible() and toggle.width() > 0 and toggle.toolTip()
    tab = window.findChild(QWidget, "tutor")
    assert tab.minimumSizeHint().width() <= window.tabs.width()
    toggle.click()  # opened by the user: it fits still, the chat gets the rest
    qtbot.waitUntil(lambda: sidebar.list.isVisible(), timeout=5_000)
    assert not sidebar.folded and sidebar.list.width() >= 110
    assert tab.minimumSizeHint().width() <= window.tabs.width()
    splitter = sidebar.parentWidget()
    assert not splitter.isCollapsible(splitter.indexOf(sidebar))  # never dragged out of sight
    window.close_now()


def test_the_users_choice_is_kept_across_a_restart(
    qtbot: Any, custodia_services: Services, custodia_qsettings: QSettings
) -> None:
    window = _open(qtbot, custodia_services, custodia_qsettings, 1366, 768)
    _sidebar(window).findChild(QToolButton, "thread_toggle").click()
    assert _sidebar(window).folded
    window.close_now()
    window = _open(qtbot, custodia_services, custodia_qsettings, 1366, 768)
    assert _sidebar(window).folded  # as the user left it, though the window is wide
    window.close_now()
