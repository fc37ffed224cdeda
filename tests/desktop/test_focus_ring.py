"""The keyboard focus ring is seen in both themes (issue 30: faint in both): at least two
pixels thick, at least 3:1 against the window colour (WCAG 2.2 focus appearance). The style
is asked to draw a focused button and text field onto an image, and the pixels are read."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QImage, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyleOption,
    QStyleOptionButton,
    QStyleOptionFrame,
)

from desktop.theme import Theme


def luminance(color: QColor) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return (
        0.2126 * channel(color.redF())
        + 0.7152 * channel(color.greenF())
        + 0.0722 * channel(color.blueF())
    )


def contrast(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def ring_thickness(element: QStyle.PrimitiveElement, option: QStyleOption) -> int:
    """How many pixels, from the left edge inwards at mid-height, contrast 3:1 with the window."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    window = app.palette().color(QPalette.ColorRole.Window)
    image = QImage(120, 40, QImage.Format.Format_ARGB32)
    image.fill(window)
    option.rect = QRect(0, 0, 120, 40)
    option.palette = app.palette()
    option.state = QStyle.StateFlag.State_Enabled | QStyle.StateFlag.State_HasFocus
    painter = QPainter(image)
    app.style().drawPrimitive(element, option, painter)
    painter.end()
    thick = 0
    for x in range(6):
        if contrast(image.pixelColor(x, 20), window) >= 3.0:
            thick += 1
    return thick


@pytest.mark.parametrize("mode", ["light", "dark"])
@pytest.mark.parametrize(
    ("element", "option"),
    [
        (QStyle.PrimitiveElement.PE_PanelButtonCommand, QStyleOptionButton),
        (QStyle.PrimitiveElement.PE_FrameLineEdit, QStyleOptionFrame),
        (QStyle.PrimitiveElement.PE_FrameFocusRect, QStyleOption),
    ],
)
def test_the_focus_ring_is_seen(qtbot: Any, mode: str, element: Any, option: Any) -> None:
    theme = Theme()
    theme.apply(mode)
    try:
        assert ring_thickness(element, option()) >= 2
    finally:
        theme.apply("light")
