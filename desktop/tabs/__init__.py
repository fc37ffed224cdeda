"""One tab per assistant (DC1). Each tab module exposes ``create(service, models, workers,
parent)``: ``service`` is a :class:`~backends.services.Lazy` handle on its assistant's service
(built on first use, inside a worker job), ``models`` the assistant's
:class:`~backends.services.ModelChoices` (for the model picker). A tab never gets the
:class:`~backends.services.Services` container: the main window unpacks it into these
(:class:`TabPieces`). Tab modules are imported by name when the tabs are built.

Tabs whose assistant has not landed yet are an honest "coming in the next release" page —
no fake behaviour.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from backends.services import Lazy, ModelChoices
from desktop.i18n import QT_TRANSLATE_NOOP
from desktop.workers import WorkerPool

#: (objectName, title, SPEC ids, module or None while the assistant has not landed)
TABS: list[tuple[str, str, str, str | None]] = [
    ("multiagent", QT_TRANSLATE_NOOP("tabs", "Multi-agent"), "MA1–MA11", "desktop.tabs.multiagent"),
    ("memories", QT_TRANSLATE_NOOP("tabs", "Memories"), "PA1–PA5", "desktop.tabs.memories"),
    (
        "conversations",
        QT_TRANSLATE_NOOP("tabs", "Conversations"),
        "CA1–CA6",
        "desktop.tabs.conversations",
    ),
    ("tutor", QT_TRANSLATE_NOOP("tabs", "Clinical tutor"), "CT1–CT8", "desktop.tabs.tutor"),
]

TabFactory = Callable[[Lazy[Any], ModelChoices, WorkerPool, QWidget], QWidget]


@dataclass(frozen=True)
class TabPieces:
    """What one tab is given of the container: its service (lazy) and its model choices."""

    service: Lazy[Any]
    models: ModelChoices


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
    pieces: Mapping[str, TabPieces], workers: WorkerPool, parent: QWidget
) -> list[tuple[QWidget, str]]:
    """The tabs of :data:`TABS`, each built from its ``pieces[name]``."""
    out: list[tuple[QWidget, str]] = []
    for name, title, spec, module in TABS:
        translated = QCoreApplication.translate("tabs", title)
        if module is None:
            widget: QWidget = ComingSoonTab(name, translated, spec, parent)
        else:
            factory: TabFactory = importlib.import_module(module).create
            given = pieces[name]
            widget = factory(given.service, given.models, workers, parent)
            assert widget.objectName() == name, f"tab {module} must be named {name!r}"
        out.append((widget, translated))
    return out
