"""The clinician's audit inspector (SPEC CT8): browse, filter, verify and export the audit log.

Opened from View ▸ Audit inspector (``Ctrl+I``) and from the clinical tutor's tab, both through
:func:`open_inspector`, which docks the pane in the window. The package's parts:

- :mod:`~desktop.inspector.pane`: the pane (filters, table, actions; every job it starts);
- :mod:`~desktop.inspector.table`: the windowed, lazily paged table model;
- :mod:`~desktop.inspector.record`, :mod:`~desktop.inspector.checkpoints`: its two side tabs;
- :mod:`~desktop.inspector.card`: a record as a clinician reads it (HTML, built in a worker);
- :mod:`~desktop.inspector.proofs`: the "Verify a proof file…" dialog.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea

from backends.audit import AuditService
from backends.services import Lazy
from desktop.inspector.card import RECORD_HEADING, record_card
from desktop.inspector.pane import InspectorPane
from desktop.inspector.proofs import ProofDialog
from desktop.inspector.table import MAX_PAGES, PAGE, AuditTableModel, Row, View
from desktop.workers import WorkerPool

__all__ = [
    "MAX_PAGES",
    "PAGE",
    "RECORD_HEADING",
    "AuditTableModel",
    "InspectorHost",
    "InspectorPane",
    "ProofDialog",
    "Row",
    "View",
    "open_inspector",
    "record_card",
]


@runtime_checkable
class InspectorHost(Protocol):
    """What :func:`open_inspector` needs of a window (the main window has both)."""

    #: the audit service, built on first use (in a worker: the pane's first job)
    audit: Lazy[AuditService]
    workers: WorkerPool


def open_inspector(window: QMainWindow) -> InspectorPane:
    """Show the inspector docked in ``window`` (made on first use); return the pane.

    ``window`` needs ``audit`` (a :class:`~backends.services.Lazy` handle on the audit
    service) and ``workers`` (the main window has both); the tutor tab calls this with its
    window too.
    """
    dock = window.findChild(QDockWidget, "inspector_dock")
    if dock is None:
        if not isinstance(window, InspectorHost):
            raise TypeError(f"{type(window).__name__} has no audit service or worker pool")
        audit, workers = window.audit, window.workers
        # the window's class name is the context tr() would use: this one is "window"'s
        dock = QDockWidget(QCoreApplication.translate("window", "Audit inspector"), window)
        dock.setObjectName("inspector_dock")
        pane = InspectorPane(workers, audit.get, dock)
        # in a scroll area: at the window's minimum size (760×480) the pane's filters and
        # its record card were cut at the right and its last row ran under the status bar
        scroll = QScrollArea(dock)
        scroll.setObjectName("inspector_scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(pane)
        dock.setWidget(scroll)
        window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
        dock.show()  # half the window to start with (the scroll area alone asks for little)
        window.resizeDocks([dock], [max(200, window.height() // 2)], Qt.Orientation.Vertical)
    dock.show()
    dock.raise_()
    shown = dock.findChild(InspectorPane)
    assert isinstance(shown, InspectorPane)
    return shown
