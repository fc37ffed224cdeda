"""Issue 26: the fake assistant of ``tests/fake_assistant``, registered with its tab through
the real registry paths, is a tab of the window (with its View menu entry and its model in
the status bar) — no list in the desktop edited."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtWidgets import QWidget

from backends import assistants
from backends.services import Services
from desktop import tabs


@pytest.fixture
def echo_registered() -> Iterator[None]:
    assistants.register("echo", "tests.fake_assistant.assistant:ASSISTANT")
    tabs.register("echo", tabs.TabEntry("tests.fake_assistant.tab", "Echo"))
    try:
        yield
    finally:
        tabs.unregister("echo")
        assistants.unregister("echo")


def test_its_tab_is_built_with_its_own_pieces(
    echo_registered: None, qtbot: Any, custodia_services: Services, custodia_qsettings: Any
) -> None:
    from desktop.main_window import MainWindow

    window = MainWindow(custodia_services, settings=custodia_qsettings)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    try:
        names = [window.tabs.widget(i).objectName() for i in range(window.tabs.count())]
        assert names[-1] == "echo" and window.tabs.tabText(len(names) - 1) == "Echo"
        tab = window.tabs.findChild(QWidget, "echo")
        assert tab.models.assistant == "echo"
        assert not tab.service.is_built()  # built on first use only
        view = [a.text() for a in window.menuBar().actions()[1].menu().actions()]
        assert "Echo" in view
        assert "echo" in window.tab_models
    finally:
        window.close_now()
