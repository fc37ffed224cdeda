"""One tab per assistant (DC1): the desktop's own registry, keyed by the names of
:mod:`backends.assistants` (the backends never name a widget).

:data:`TABS` maps an assistant's name to a :class:`TabEntry`: the ``"module"`` whose
``create(service, models, workers, parent)`` builds the tab (``service`` is a
:class:`~backends.services.Lazy` handle on its assistant's service, built on first use inside
a worker job; ``models`` the assistant's :class:`~backends.services.ModelChoices` for the model
picker), the tab's title (marked for Qt Linguist) and the turn the packaged self-test takes in
it. A tab never gets the :class:`~backends.services.Services` container: the main window
unpacks it into these (:class:`TabPieces`). Tab modules are imported by name when the tabs are
built.

An assistant registered without a tab here gets an honest "coming in the next release" page —
no fake behaviour — and the self-test fails on it.

Adding an assistant's tab: one module in ``desktop/tabs/``, one line in :data:`TABS` (or
:func:`register`; docs/ARCHITECTURE.md, "Adding an assistant").
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from backends import assistants
from backends.i18n import _
from backends.services import Lazy, ModelChoices
from desktop.i18n import QT_TRANSLATE_NOOP
from desktop.workers import WorkerPool


@dataclass(frozen=True)
class TabEntry:
    """An assistant's tab: its module, its title, and the turn the self-test takes in it."""

    #: the module whose ``create(service, models, workers, parent)`` builds the tab
    module: str
    #: the tab's title, marked for Qt Linguist (context "tabs")
    title: str
    #: ``"module:function"``: ``turn(services, progress) -> detail``, one real turn of the
    #: assistant checked end to end (raises ``StepFailed``); "" : the self-test has none
    selftest: str = ""
    #: its short name in the status bar ("Tutor: SmolLM2 …"), marked for Qt Linguist (context
    #: "MainWindow"); "" : the title
    short: str = ""
    #: the jobs a quit would end: (job name prefix, what the user is told, marked for Qt
    #: Linguist in context "MainWindow"); its other jobs are reads a quit loses nothing by
    runs: tuple[tuple[str, str], ...] = ()


#: name (as in :mod:`backends.assistants`) -> its tab
TABS: dict[str, TabEntry] = {
    "multiagent": TabEntry(
        "desktop.tabs.multiagent",
        QT_TRANSLATE_NOOP("tabs", "Multi-agent"),
        "desktop.selftest_turns:multiagent",
        QT_TRANSLATE_NOOP("MainWindow", "Multi-agent"),
        (
            ("multi-agent: run", QT_TRANSLATE_NOOP("MainWindow", "a multi-agent session")),
            (
                "multi-agent: re-embed",
                QT_TRANSLATE_NOOP("MainWindow", "re-embedding the multi-agent memory"),
            ),
        ),
    ),
    "memories": TabEntry(
        "desktop.tabs.memories",
        QT_TRANSLATE_NOOP("tabs", "Memories"),
        "desktop.selftest_turns:memories",
        QT_TRANSLATE_NOOP("MainWindow", "Memories"),
        (
            ("memories: turn", QT_TRANSLATE_NOOP("MainWindow", "an answer in Memories")),
            ("memories: re-embed", QT_TRANSLATE_NOOP("MainWindow", "re-embedding the memories")),
        ),
    ),
    "conversations": TabEntry(
        "desktop.tabs.conversations",
        QT_TRANSLATE_NOOP("tabs", "Conversations"),
        "desktop.selftest_turns:conversations",
        QT_TRANSLATE_NOOP("MainWindow", "Conversations"),
        (
            ("conversations: chat", QT_TRANSLATE_NOOP("MainWindow", "an answer in Conversations")),
            (
                "conversations: rebuild",
                QT_TRANSLATE_NOOP("MainWindow", "rebuilding the conversations' search index"),
            ),
            (
                "conversations: key",
                QT_TRANSLATE_NOOP("MainWindow", "re-encrypting the conversations"),
            ),
            (
                "conversations: import",
                QT_TRANSLATE_NOOP("MainWindow", "an import of conversations"),
            ),
            (
                "conversations: export",
                QT_TRANSLATE_NOOP("MainWindow", "an export of conversations"),
            ),
        ),
    ),
    "tutor": TabEntry(
        "desktop.tabs.tutor",
        QT_TRANSLATE_NOOP("tabs", "Clinical tutor"),
        "desktop.selftest_turns:tutor",
        QT_TRANSLATE_NOOP("MainWindow", "Tutor"),
        (
            ("tutor: ask", QT_TRANSLATE_NOOP("MainWindow", "an answer in the clinical tutor")),
            ("tutor: import", QT_TRANSLATE_NOOP("MainWindow", "an import of study notes")),
        ),
    ),
}

#: a tab module's ``create``: it narrows the handle to its service's type (``Lazy.narrow``)
TabFactory = Callable[[Lazy[object], ModelChoices, WorkerPool, QWidget], QWidget]


def register(name: str, entry: TabEntry, *, clobber: bool = False) -> None:
    """Add the tab of the assistant ``name`` (a plugin's or a test's)."""
    if name in TABS and not clobber:
        raise ValueError(f"a tab for {name!r} is registered already")
    TABS[name] = entry


def unregister(name: str) -> None:
    TABS.pop(name, None)


def quit_would_end() -> list[tuple[str, str]]:
    """Every tab's jobs a quit would end: (job name prefix, what the user is told)."""
    return [run for entry in TABS.values() for run in entry.runs]


def tab_entry(name: str) -> TabEntry | None:
    """The tab registered for the assistant ``name``; None: it has none yet."""
    return TABS.get(name)


def short_title_of(name: str) -> str:
    """The assistant's short name in the status bar, in the installed language."""
    entry = TABS.get(name)
    if entry is None or not entry.short:
        return title_of(name)
    return QCoreApplication.translate("MainWindow", entry.short)


def title_of(name: str) -> str:
    """The tab's title in the installed language (the declaration's when it has no tab)."""
    entry = TABS.get(name)
    if entry is None:
        return _(assistants.get(name).title)
    return QCoreApplication.translate("tabs", entry.title)


@dataclass(frozen=True)
class TabPieces:
    """What one tab is given of the container: its service (lazy) and its model choices."""

    service: Lazy[object]
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
    """A tab for each registered assistant, in the registry's order, each built from its
    ``pieces[name]``."""
    out: list[tuple[QWidget, str]] = []
    for declared in assistants.assistants():
        name = declared.name
        entry = TABS.get(name)
        title = title_of(name)
        if entry is None:
            widget: QWidget = ComingSoonTab(name, title, declared.spec, parent)
        else:
            factory: TabFactory = importlib.import_module(entry.module).create
            given = pieces[name]
            widget = factory(given.service, given.models, workers, parent)
            assert widget.objectName() == name, f"tab {entry.module} must be named {name!r}"
        out.append((widget, title))
    return out
