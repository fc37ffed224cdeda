"""The conversations tab's tools row: the history in and out of its files, and its index.

``import_conversations`` reads a ChatGPT or Custodia export (``import_dialog``; imports are
named “… (imported)”, one already here is skipped and said), ``export_conversations``
writes this conversation or all of them as JSON or Markdown (``export_dialog``; the chosen
filter's extension is added to a name without one), and ``rebuild_index`` re-embeds the
search index from the files, which :meth:`TransferPanel.sync_index` keeps up to date
after each change. File dialogs are non-native and delete themselves when closed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QMenu, QPushButton, QToolButton, QWidget

from backends.conversations import (
    ConversationAgent,
    EmbedderMismatchError,
    export_conversations,
    import_file,
    write_private,
)
from backends.errors import DimensionMismatchError
from backends.progress import Progress
from backends.services import Lazy
from desktop.tabs.conversations.jobs import TabJobs
from desktop.tabs.conversations.results import Indexed, Listing, listing
from desktop.tabs.conversations.words import counted, translate
from desktop.workers import Emit

if TYPE_CHECKING:  # the type only: the desktop imports the assistant through its package
    from backends.conversations.importers import ImportResult


def export_target(path: str, chosen_filter: str) -> tuple[str, str]:
    """``(path, format)`` for an export: the format from the name's extension, else from the
    chosen filter; a name without an extension gets the filter's (``.md`` or ``.json``)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".md", ".markdown"):
        return path, "markdown"
    if suffix == ".json":
        return path, "json"
    fmt = "markdown" if "*.md" in chosen_filter else "json"
    if not suffix:
        path += ".md" if fmt == "markdown" else ".json"
    return path, fmt


def import_note(result: ImportResult) -> str:
    """What an import did, every part said: imported, renamed, skipped as already here,
    not imported and why, repaired (never a silent part)."""
    imported = len(result.imported)
    note = counted(
        imported,
        translate("ConversationsTab", "Imported 1 conversation, named “… (imported)”"),
        translate("ConversationsTab", "Imported {0} conversations, named “… (imported)”"),
    )
    if result.renamed:
        note += translate("ConversationsTab", " ({0} under a new id)").format(result.renamed)
    if result.duplicates:
        shown = ", ".join(f"“{n}”" for n in result.duplicates[:3])
        more = len(result.duplicates) - 3
        note += translate("ConversationsTab", "; {0} already here, skipped: {1}").format(
            len(result.duplicates), shown
        )
        if more > 0:
            note += translate("ConversationsTab", " and {0} more").format(more)
    if result.failed:
        note += translate("ConversationsTab", "; {0} not imported: ").format(len(result.failed))
        note += "; ".join(result.failed[:3])
        if len(result.failed) > 3:
            note += translate("ConversationsTab", "; and {0} more").format(len(result.failed) - 3)
    if result.notices:
        note += "; " + "; ".join(result.notices[:3])
    return note


class TransferPanel(QWidget):
    """Import…, Export (this conversation, all), Rebuild index (see the module doc)."""

    #: an import or export changed the list (or says what it did): the tab shows it
    listing_arrived = Signal(object)
    #: conversations were imported: search hits may be stale
    imported = Signal()

    def __init__(
        self, service: Lazy[ConversationAgent], jobs: TabJobs, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.jobs = jobs
        self.state = jobs.state
        self._export_all = True
        self.file_dialog: QFileDialog | None = None
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        tools = QHBoxLayout(self)
        tools.setContentsMargins(0, 0, 0, 0)
        self.import_conversations = QPushButton(translate("ConversationsTab", "Import…"))
        self.import_conversations.setObjectName("import_conversations")
        self.export_conversations = QToolButton()
        self.export_conversations.setObjectName("export_conversations")
        self.export_conversations.setText(translate("ConversationsTab", "Export"))
        self.export_conversations.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_conversations)
        self.export_current = QAction(translate("ConversationsTab", "This conversation…"), self)
        self.export_current.setObjectName("export_current")
        self.export_all = QAction(translate("ConversationsTab", "All conversations…"), self)
        self.export_all.setObjectName("export_all")
        menu.addAction(self.export_current)
        menu.addAction(self.export_all)
        self.export_conversations.setMenu(menu)
        self.rebuild_index = QPushButton(translate("ConversationsTab", "Rebuild index"))
        self.rebuild_index.setObjectName("rebuild_index")
        self.rebuild_index.setToolTip(
            translate(
                "ConversationsTab",
                "Delete the search index and rebuild it from the conversation files",
            )
        )
        for widget in (self.import_conversations, self.export_conversations, self.rebuild_index):
            tools.addWidget(widget)

    def _connect_signals(self) -> None:
        self.import_conversations.clicked.connect(self._on_import_clicked)
        self.export_current.triggered.connect(self._on_export_current_triggered)
        self.export_all.triggered.connect(self._on_export_all_triggered)
        self.rebuild_index.clicked.connect(self._on_rebuild_index_clicked)

    # -- the search index ------------------------------------------------------------------
    def sync_index(self) -> None:
        """Embed what changed since the index was last brought up to date; an index made by
        another embedder turns search off and offers ``rebuild_index``."""
        service = self.service

        def job(progress: Progress, emit: Emit) -> Indexed:
            agent = service.get()
            try:
                report = agent.sync_vectors(progress)
            except (DimensionMismatchError, EmbedderMismatchError) as err:
                return Indexed("", str(err))
            return Indexed(
                translate("ConversationsTab", "{0} new, {1} dropped").format(
                    report.added, report.dropped
                )
            )

        self.jobs.run(
            "conversations: index",
            job,
            {"succeeded": self._on_index_succeeded},
            progress=True,
            doing=translate("ConversationsTab", "Updating the search index…"),
        )

    def _on_index_succeeded(self, result: Any) -> None:
        assert isinstance(result, Indexed)
        if result.mismatch:
            self.jobs.say(
                translate(
                    "ConversationsTab",
                    "Search is off: {0} Use “Rebuild index” to re-embed with the current model.",
                ).format(result.mismatch)
            )
            self.rebuild_index.setStyleSheet("font-weight:bold;")
        else:
            self.rebuild_index.setStyleSheet("")
            self.jobs.index_progress.setToolTip(result.note)

    def _on_rebuild_index_clicked(self) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> Indexed:
            report = service.get().rebuild_vectors(progress)
            return Indexed(
                counted(
                    report.added,
                    translate("ConversationsTab", "1 message indexed"),
                    translate("ConversationsTab", "{0} messages indexed"),
                )
            )

        self.rebuild_index.setEnabled(False)
        self.jobs.run(
            "conversations: rebuild",
            job,
            {"succeeded": self._on_rebuild_succeeded, "finished": self._on_rebuild_finished},
            progress=True,
            doing=translate("ConversationsTab", "Rebuilding the search index…"),
        )

    def _on_rebuild_succeeded(self, result: Any) -> None:
        assert isinstance(result, Indexed)
        self.rebuild_index.setStyleSheet("")
        self.jobs.say(
            translate("ConversationsTab", "Search index rebuilt: {0}").format(result.note)
        )

    def _on_rebuild_finished(self) -> None:
        self.rebuild_index.setEnabled(True)

    # -- files -----------------------------------------------------------------------------
    def _choose_file(
        self, name: str, save: bool, filters: list[str], slot: Callable[[str], None]
    ) -> None:
        dialog = QFileDialog(self)
        dialog.setObjectName(name)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAcceptMode(
            QFileDialog.AcceptMode.AcceptSave if save else QFileDialog.AcceptMode.AcceptOpen
        )
        dialog.setFileMode(
            QFileDialog.FileMode.AnyFile if save else QFileDialog.FileMode.ExistingFile
        )
        dialog.setNameFilters(filters)
        dialog.fileSelected.connect(slot)  # emitted before finished: the dialog is still there
        dialog.finished.connect(self._on_file_dialog_finished)
        self.file_dialog = dialog
        dialog.open()

    def _on_file_dialog_finished(self, result: int) -> None:
        self.file_dialog = None

    def _on_import_clicked(self) -> None:
        self._choose_file(
            "import_dialog",
            False,
            [
                translate("ConversationsTab", "Conversations (*.json *.zip)"),
                translate("ConversationsTab", "All files (*)"),
            ],
            self._on_import_file_selected,
        )

    def _on_import_file_selected(self, path: str) -> None:
        service = self.service

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            result = import_file(agent, Path(path), progress)
            return listing(agent, import_note(result))

        self.jobs.run(
            "conversations: import",
            job,
            {"succeeded": [self.listing_arrived, self._on_import_succeeded]},
            progress=True,
            doing=translate("ConversationsTab", "Importing…"),
        )

    def _on_import_succeeded(self, result: Any) -> None:
        self.sync_index()
        self.imported.emit()

    def _on_export_current_triggered(self) -> None:
        if self.state.current_id is None:
            self.jobs.say(translate("ConversationsTab", "Open a conversation to export it."))
            return
        self._export_all = False
        self._choose_export()

    def _on_export_all_triggered(self) -> None:
        self._export_all = True
        self._choose_export()

    def _choose_export(self) -> None:
        self._choose_file(
            "export_dialog",
            True,
            [
                translate("ConversationsTab", "JSON (*.json)"),
                translate("ConversationsTab", "Markdown (*.md)"),
            ],
            self._on_export_file_selected,
        )

    def _on_export_file_selected(self, path: str) -> None:
        dialog = self.file_dialog
        chosen = dialog.selectedNameFilter() if dialog is not None else ""
        path, fmt = export_target(path, chosen)
        ids = None if self._export_all else [self.state.current_id or ""]
        service = self.service

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            text, problems = export_conversations(agent, ids, fmt, progress)
            write_private(Path(path), text)
            note = f"Exported to {path} (plaintext)"
            if problems:
                note += f"; {len(problems)} unreadable conversation(s) left out"
            return listing(agent, note)

        self.jobs.run(
            "conversations: export",
            job,
            {"succeeded": self.listing_arrived},
            doing=translate("ConversationsTab", "Exporting…"),
        )
