"""The clinical tutor's tab (CT5–CT8): cited answers from the study notes, every turn audited.

Top: who is asking (``scope``: the shared corpus plus that user's own notes), the status of
the knowledge base (``tutor_status``, ``tutor_progress``), "Import notes…" (``import_notes``)
and "Open inspector" (``open_inspector``, the audit inspector pane of CT8). A notice
(``degraded_notice``) says when a retrieval method — the graph server, typically — could not
run and the answer came from the others.

Left: the answer (``answer``, a QTextBrowser whose ``[n]`` citations are links that select
source *n*), the question (``question``) and ``ask`` / ``stop``. Right: the sources
(``sources``: number, note, why it was found), the selected passage (``source_text``) and the
entities around the question with their relations (``graph_view``).

The knowledge base is indexed the first time the tab is shown, in a worker with progress.
The parts: :mod:`~desktop.tabs.tutor.tab` (the tab and its jobs),
:mod:`~desktop.tabs.tutor.rendering` (the thread's HTML), :mod:`~desktop.tabs.tutor.graph`
(the entity graph). Every store and model call runs through the worker pool; these modules
only draw.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from backends.services import Lazy, ModelChoices
from backends.tutor import TutorService
from desktop.tabs.tutor.graph import EntityGraph
from desktop.tabs.tutor.rendering import (
    CITE_SCHEME,
    MODE_COLOURS,
    AnswerLabels,
    render_answer,
    render_failed,
    render_thread,
    render_turn,
    render_waiting,
)
from desktop.tabs.tutor.tab import DEFAULT_USER, TutorTab
from desktop.workers import WorkerPool

__all__ = [
    "CITE_SCHEME",
    "DEFAULT_USER",
    "MODE_COLOURS",
    "AnswerLabels",
    "EntityGraph",
    "TutorTab",
    "create",
    "render_answer",
    "render_failed",
    "render_thread",
    "render_turn",
    "render_waiting",
]


def create(
    service: Lazy[object], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    return TutorTab(service.narrow(TutorService), models, workers, parent)
