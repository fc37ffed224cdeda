"""Light and dark themes: the system's by default, or the one chosen in View ▸ Theme.

The theme is the application palette (Fusion draws every widget from it, so the same look on
every desktop) plus a few named colours for rich text and style sheets (:func:`colors`),
which the tabs read again when the palette changes (``QEvent.PaletteChange``).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleOption,
    QStyleOptionComplex,
    QWidget,
)

#: View ▸ Theme: what is stored in QSettings ("view/theme")
MODES = ("system", "light", "dark")

_LIGHT = {
    "muted": "#666666",
    "faint": "#888888",
    "ok": "#2e7d32",
    "error": "#b00020",
    "warning": "#8a4b00",
    "user_bubble": "#e3effd",
    "assistant_bubble": "#f1f1f1",
    "proposal": "#fff8e1",
    "proposal_border": "#f0d58c",
    "code": "#f6f8fa",
    "focus": "#1a5fb4",
}
_DARK = {
    "muted": "#a8a8a8",
    "faint": "#8c8c8c",
    "ok": "#81c784",
    "error": "#ff8a80",
    "warning": "#ffb74d",
    "user_bubble": "#1f3550",
    "assistant_bubble": "#2b2b2b",
    "proposal": "#3a3220",
    "proposal_border": "#7a6633",
    "code": "#1e1e1e",
    "focus": "#8ab4f8",
}


def system_is_dark() -> bool:
    """What the desktop asks for (Qt's colour scheme hint; unknown counts as light)."""
    return bool(QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark)


def is_dark(mode: str) -> bool:
    if mode == "dark":
        return True
    if mode == "light":
        return False
    return system_is_dark()


def current_is_dark() -> bool:
    """The palette in use is dark (whatever chose it)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        return False
    return app.palette().color(QPalette.ColorRole.Window).lightness() < 128


def colors(dark: bool | None = None) -> dict[str, str]:
    """Named colours for the theme in use (or the one asked for)."""
    return dict(_DARK if (current_is_dark() if dark is None else dark) else _LIGHT)


def dark_palette() -> QPalette:
    p = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    window, base, text = QColor("#2d2d2d"), QColor("#1f1f1f"), QColor("#e8e8e8")
    for r, c in (
        (role.Window, window),
        (role.WindowText, text),
        (role.Base, base),
        (role.AlternateBase, QColor("#2a2a2a")),
        (role.ToolTipBase, QColor("#3a3a3a")),
        (role.ToolTipText, text),
        (role.PlaceholderText, QColor("#8c8c8c")),
        (role.Text, text),
        (role.Button, QColor("#383838")),
        (role.ButtonText, text),
        (role.BrightText, QColor("#ff6e6e")),
        (role.Light, QColor("#4a4a4a")),
        (role.Midlight, QColor("#404040")),
        (role.Mid, QColor("#303030")),
        (role.Dark, QColor("#1a1a1a")),
        (role.Shadow, QColor("#000000")),
        (role.Highlight, QColor("#3d6fb4")),
        (role.HighlightedText, QColor("#ffffff")),
        (role.Link, QColor("#8ab4f8")),
        (role.LinkVisited, QColor("#c58af9")),
    ):
        p.setColor(r, c)
    for r in (role.WindowText, role.Text, role.ButtonText):
        p.setColor(group.Disabled, r, QColor("#7a7a7a"))
    return p


#: how thick the keyboard focus ring is, in pixels (Fusion's is a faint 1-px outline)
FOCUS_WIDTH = 2

_RINGED_PRIMITIVES = (
    QStyle.PrimitiveElement.PE_PanelButtonCommand,
    QStyle.PrimitiveElement.PE_FrameLineEdit,
)
_RINGED_CONTROLS = (
    QStyle.ComplexControl.CC_ComboBox,
    QStyle.ComplexControl.CC_SpinBox,
)


def _ring(painter: QPainter, option: QStyleOption) -> None:
    """A ring of :data:`FOCUS_WIDTH` pixels in the theme's focus colour (at least 3:1 against
    the window in both themes, as WCAG's focus appearance asks)."""
    dark = option.palette.color(QPalette.ColorRole.Window).lightness() < 128
    painter.save()
    painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    pen = QPen(QColor(colors(dark)["focus"]), FOCUS_WIDTH)
    pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
    painter.setPen(pen)
    painter.setBrush(Qt.BrushStyle.NoBrush)
    half = FOCUS_WIDTH / 2
    painter.drawRect(QRectF(option.rect).adjusted(half, half, -half, -half))
    painter.restore()


class FocusStyle(QProxyStyle):
    """Fusion, with a focus ring one sees: buttons, text fields, combo and spin boxes, and
    whatever Fusion draws a focus rectangle for (lists, tables, check boxes)."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        if element == QStyle.PrimitiveElement.PE_FrameFocusRect:
            _ring(painter, option)
            return
        super().drawPrimitive(element, option, painter, widget)
        if element in _RINGED_PRIMITIVES and option.state & QStyle.StateFlag.State_HasFocus:
            _ring(painter, option)

    def drawComplexControl(
        self,
        control: QStyle.ComplexControl,
        option: QStyleOptionComplex,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawComplexControl(control, option, painter, widget)
        if control in _RINGED_CONTROLS and option.state & QStyle.StateFlag.State_HasFocus:
            _ring(painter, option)


class Theme(QObject):
    """Applies a mode to the application and follows the system while the mode is "system"."""

    #: the palette changed: True when it is dark now
    changed = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.mode = "system"
        self.dark = False
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_color_scheme_changed)

    def apply(self, mode: str) -> bool:
        """Use ``mode`` (one of :data:`MODES`; anything else is "system"); True when dark."""
        self.mode = mode if mode in MODES else "system"
        app = QApplication.instance()
        if not isinstance(app, QApplication):
            return False
        if not isinstance(app.style(), FocusStyle):
            # Fusion draws from the palette alone, the same on every desktop
            app.setStyle(FocusStyle("Fusion"))
        dark = is_dark(self.mode)
        app.setPalette(dark_palette() if dark else app.style().standardPalette())
        self.dark = dark
        self.changed.emit(dark)
        return dark

    def _on_color_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        if self.mode == "system":
            self.apply("system")
