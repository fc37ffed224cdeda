"""Three small things a daily user of the tutor hit (issue 30): the question stayed in the box
after asking; "Recorded in the audit log as #N" showed the previous number while the next
answer ran; "No known entity" shrank to tiny text after a graph had been shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QWidget

from backends.services import Services
from backends.tutor.service import GraphView
from tests.backends.tutor.conftest import make_small_kb
from tests.desktop.tabs.test_tutor import ask, child, register_tutor, show_tutor


@pytest.fixture
def tab(
    qtbot: Any, custodia_services: Services, tmp_path: Path, custodia_window: Any
) -> Iterator[QWidget]:
    register_tutor(custodia_services, make_small_kb(tmp_path))
    yield show_tutor(qtbot, custodia_window)


def test_the_question_box_is_emptied_once_asked(qtbot: Any, tab: QWidget) -> None:
    ask(qtbot, tab, "Which blood test monitors warfarin?")
    assert child(tab, QLineEdit, "question").text() == ""


def test_the_previous_record_number_is_not_shown_while_the_next_answer_runs(
    qtbot: Any, tab: QWidget
) -> None:
    first = ask(qtbot, tab, "Which blood test monitors warfarin?")
    status = child(tab, QLabel, "tutor_status")
    assert f"#{first.audit_seq}" in status.text()
    child(tab, QLineEdit, "question").setText("How is warfarin reversed?")
    with qtbot.waitSignal(tab.answered, timeout=30_000):
        child(tab, QPushButton, "ask").click()
        assert f"#{first.audit_seq}" not in status.text()  # before the answer comes


def test_no_known_entity_is_shown_at_its_normal_size_after_a_graph(
    qtbot: Any, tab: QWidget
) -> None:
    names = tuple(f"entity number {i}" for i in range(40))
    edges = tuple(("warfarin", name, 1 + i % 3) for i, name in enumerate(names))
    tab.draw_graph(GraphView(seeds=("warfarin",), edges=edges))
    assert tab.graph_view.transform().m11() < 1.0  # a large drawing is shrunk to fit
    tab.draw_graph(GraphView())
    assert tab.graph_view.transform().m11() == 1.0
