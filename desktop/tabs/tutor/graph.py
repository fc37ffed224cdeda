"""The tutor's "Entities around the question": the question's entities in the middle, the
entities related to them around, each line as thick as the passages they share.

The words are the tab's (translation context ``TutorTab``): this view was part of it, and
its catalogue entries stay where they are.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication, QPointF
from PySide6.QtGui import QBrush, QColor, QFont, QPen
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QLabel, QVBoxLayout, QWidget

from backends.tutor import GraphView


class EntityGraph(QWidget):
    """Its title, and the drawing (``graph_view`` over its :attr:`scene`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(
            QLabel(QCoreApplication.translate("TutorTab", "<b>Entities around the question</b>"))
        )
        self.scene = QGraphicsScene(self)
        self.graph_view = QGraphicsView(self.scene)
        self.graph_view.setObjectName("graph_view")
        self.graph_view.setRenderHints(self.graph_view.renderHints())
        self.graph_view.setMinimumHeight(160)
        layout.addWidget(self.graph_view, 1)

    def clear(self) -> None:
        self.scene.clear()

    def draw(self, view: GraphView) -> None:
        """The question's entities in the middle, their related entities around them."""
        scene = self.scene
        scene.clear()
        if not view.seeds:
            text = scene.addText(
                QCoreApplication.translate("TutorTab", "No known entity in this question.")
            )
            text.setDefaultTextColor(QColor("#777"))
            self.graph_view.resetTransform()  # the last graph's shrinking made it tiny
            return
        names = list(view.seeds)
        for a, b, _ in view.edges:
            for name in (a, b):
                if name not in names:
                    names.append(name)
        positions: dict[str, QPointF] = {}
        seeds = list(view.seeds)
        for i, name in enumerate(seeds):
            angle = 2 * math.pi * i / max(len(seeds), 1)
            radius = 0.0 if len(seeds) == 1 else 60.0
            positions[name] = QPointF(radius * math.cos(angle), radius * math.sin(angle))
        others = [n for n in names if n not in positions]
        for i, name in enumerate(others):
            angle = 2 * math.pi * i / max(len(others), 1) + 0.3
            positions[name] = QPointF(170 * math.cos(angle), 120 * math.sin(angle))
        heaviest = max((w for _, _, w in view.edges), default=1) or 1
        for a, b, weight in view.edges:
            pen = QPen(QColor("#9aa8bd"))
            pen.setWidthF(0.8 + 3.0 * weight / heaviest)
            line = scene.addLine(
                positions[a].x(), positions[a].y(), positions[b].x(), positions[b].y(), pen
            )
            line.setToolTip(
                QCoreApplication.translate(
                    "TutorTab", "{0} — {1}: together in {2} passages"
                ).format(a, b, weight)
            )
            line.setZValue(-1)
        font = QFont()
        font.setPointSize(8)
        for name in names:
            seed = name in view.seeds
            point = positions[name]
            r = 9.0 if seed else 6.0
            node = scene.addEllipse(
                point.x() - r,
                point.y() - r,
                2 * r,
                2 * r,
                QPen(QColor("#31527a")),
                QBrush(QColor("#f0a030") if seed else QColor("#c9d8ec")),
            )
            node.setData(0, name)
            node.setToolTip(name)
            label = scene.addText(name, font)
            label.setData(0, name)
            label.setPos(point.x() + r, point.y() - r - 4)
            if seed:
                bold = QFont(font)
                bold.setBold(True)
                label.setFont(bold)
        self._fit()

    def _fit(self) -> None:
        """Shrink the drawing to the view if needed; never blow a small one up."""
        rect = self.scene.itemsBoundingRect().adjusted(-10, -10, 10, 10)
        viewport = self.graph_view.viewport().rect()
        self.graph_view.resetTransform()
        if rect.width() > 0 and rect.height() > 0:
            factor = min(viewport.width() / rect.width(), viewport.height() / rect.height(), 1.0)
            if factor > 0:
                self.graph_view.scale(factor, factor)
        self.graph_view.centerOn(rect.center())

    def entities(self) -> list[str]:
        """Names drawn in the graph view (for testers)."""
        out: list[str] = []
        for item in self.scene.items():
            name = item.data(0)
            if isinstance(name, str) and name not in out:
                out.append(name)
        return sorted(out)
