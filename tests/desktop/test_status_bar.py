"""The status bar at the window's minimum size (760×480), in English and in Spanish (~30 %
longer): every piece is readable whole, or ends in "…" with the whole of it in its tooltip
(issue 30: "Comprobando los almacer", "10 tarea(s) en c", "(carganc" were cut)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QStatusBar

from backends.config import Config
from desktop.status_bar import ElidedLabel


@pytest.fixture(params=["en", "es"])
def custodia_config(request: pytest.FixtureRequest, tmp_path: Path) -> Config:
    home = tmp_path / "custodia-home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted", language=request.param)


def _plain(label: QLabel) -> str:
    document = QTextDocument()
    document.setHtml(label.text())
    return document.toPlainText() if "<" in label.text() else label.text()


def _readable(label: QLabel) -> str:
    """ "" when ``label`` shows its whole text, or ends in "…" and its tooltip has the
    whole text; else what is wrong with it."""
    whole = _plain(label)
    needed = label.fontMetrics().horizontalAdvance(whole)
    if needed <= label.contentsRect().width():
        return ""
    if not isinstance(label, ElidedLabel):
        return f"{label.objectName()}: cut, not elided: {whole!r}"
    shown = label.shown_text()
    if not shown.endswith("…") or len(shown) < 4:
        return f"{label.objectName()}: shows {shown!r} of {whole!r}"
    if whole not in label.full_tooltip():
        return f"{label.objectName()}: its tooltip lacks {whole!r}"
    return ""


def _layout_problems(bar: QStatusBar) -> list[str]:
    shown = [w for w in bar.findChildren(QLabel) if w.isVisible() and w.text()]
    spans = sorted(
        (w.mapTo(bar, QPoint(0, 0)).x(), w.mapTo(bar, QPoint(0, 0)).x() + w.width(), w)
        for w in shown
    )
    out = [f"{w.objectName()} leaves the bar" for left, right, w in spans if right > bar.width()]
    out += [
        f"{a[2].objectName()} overlaps {b[2].objectName()}"
        for a, b in itertools.pairwise(spans)
        if a[1] > b[0]
    ]
    return out + [problem for *_span, w in spans if (problem := _readable(w))]


@pytest.fixture
def narrow(custodia_window: Any, qtbot: Any) -> Iterator[Any]:
    window = custodia_window
    window.resize(760, 480)
    qtbot.waitUntil(lambda: window.width() == 760, timeout=5_000)
    yield window


def test_every_piece_of_the_status_bar_is_readable_at_760_px(narrow: Any, qtbot: Any) -> None:
    """As at start-up on a fresh data dir with the bundled model and work running (the
    longest texts the bar shows), and once ready."""
    window = narrow
    window.status.loading(replace(window.services.config, chat_model="smollm2"))
    window.health_label.setText(window.tr("Checking stores…"))
    window.status.busy_count(10)
    window._show_tab_model()
    qtbot.wait(50)  # laid out
    bar = window.statusBar()
    assert _layout_problems(bar) == []
    assert window.tab_model_label.isVisible() and window.health_label.isVisible()
    assert not window.chat_label.isVisible()  # the default chat model gives way (tooltip)
    assert window.chat_label.text() in window.tab_model_label.toolTip()
    window.status.busy_count(0)
    qtbot.wait(50)
    assert _layout_problems(bar) == []


def test_an_elided_label_keeps_its_whole_text_and_says_it_in_its_tooltip(qtbot: Any) -> None:
    label = ElidedLabel("Recuerdos: SmolLM2-135M-Instruct (incluido) (cargando…)")
    label.setToolTip("Tutor: SmolLM2-135M-Instruct")
    qtbot.addWidget(label)
    label.resize(120, label.sizeHint().height())
    label.show()
    assert label.is_elided() and label.shown_text().endswith("…")
    assert label.text() == "Recuerdos: SmolLM2-135M-Instruct (incluido) (cargando…)"
    assert label.full_tooltip().splitlines() == [label.text(), "Tutor: SmolLM2-135M-Instruct"]
    label.resize(label.sizeHint().width(), label.height())
    assert not label.is_elided() and label.full_tooltip() == "Tutor: SmolLM2-135M-Instruct"
    assert label.minimumSizeHint().width() < 120
