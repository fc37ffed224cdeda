"""The fake assistant's tab (what ``desktop/tabs/<name>.py`` is for a real one)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from backends.services import Lazy, ModelChoices
from desktop.workers import WorkerPool


class EchoTab(QWidget):
    def __init__(self, service: Lazy[Any], models: ModelChoices, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("echo")
        self.service = service
        self.models = models
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Echo", self))


def create(
    service: Lazy[Any], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    return EchoTab(service, models, parent)
