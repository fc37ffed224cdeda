"""One tab per assistant (DC1). Each tab module exposes ``create(services, workers, parent)``.

Tabs whose assistant has not landed yet are an honest "coming in the next release" page —
no fake behaviour.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from backends.services import Services
from desktop.workers import WorkerPool

#: (objectName, title, SPEC ids, module or None while the assistant has not landed)
TABS: list[tuple[str, str, str, str | None]] = [
    ("multiagent", "Multi-agent", "MA1–MA11", "desktop.tabs.multiagent"),
    ("memories", "Memories", "PA1–PA5", "desktop.tabs.memories"),
    ("conversations", "Conversations", "CA1–CA6", "desktop.tabs.conversations"),
    ("tutor", "Clinical tutor", "CT1–CT8", "desktop.tabs.tutor"),
]

TabFactory = Callable[[Services, WorkerPool, QWidget], QWidget]


class ComingSoonTab(QWidget):
    """A clearly marked placeholder for an assistant that has not landed yet."""

    def __init__(self, name: str, title: str, spec: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        layout = QVBoxLayout(self)
        label = QLabel(
            self.tr(
                "<h2>{0}</h2><p>Coming in the next release ({1}).</p>"
                "<p>This assistant is not available yet; nothing here stores or "
                "answers anything.</p>"
            ).format(title, spec)
        )
        label.setObjectName(f"{name}_coming_soon")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        layout.addWidget(label)


def build_tabs(
    services: Services, workers: WorkerPool, parent: QWidget
) -> list[tuple[QWidget, str]]:
    out: list[tuple[QWidget, str]] = []
    for name, title, spec, module in TABS:
        translated = QCoreApplication.translate("tabs", title)
        if module is None:
            widget: QWidget = ComingSoonTab(name, translated, spec, parent)
        else:
            factory: TabFactory = importlib.import_module(module).create
            widget = factory(services, workers, parent)
            assert widget.objectName() == name, f"tab {module} must be named {name!r}"
        out.append((widget, translated))
    return out
