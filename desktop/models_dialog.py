"""Tools ▸ Models…: the GGUF files Custodia can use, what each one is, whether it fits.

Every header is read in a worker (never the weights); adding a file copies it with progress
and can be cancelled (a cancelled copy leaves nothing), or links it where it is. Object names
are listed in docs/TESTING.md.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends import assistants
from backends import config as config_module
from backends.models import discovery, local, manage
from backends.models.registry import model_folders
from backends.progress import Progress
from backends.services import Services
from desktop import i18n
from desktop.i18n import QT_TRANSLATE_NOOP
from desktop.workers import Emit, JobHandle, WorkerPool

COLUMNS = (
    QT_TRANSLATE_NOOP("ModelsDialog", "Model"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Status"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Memory needed"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Context"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Size"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Parameters"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Quantisation"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Architecture"),
    QT_TRANSLATE_NOOP("ModelsDialog", "Chat template"),
    QT_TRANSLATE_NOOP("ModelsDialog", "File"),
)


def _parameters(count: int) -> str:
    if count >= 1_000_000_000:
        return f"{count / 1e9:.1f}B"
    if count >= 1_000_000:
        return f"{count / 1e6:.0f}M"
    return f"{count / 1e3:.1f}K"


def _size(size: int) -> str:
    return local.human_size(size) if size >= 1 << 20 else f"{size / 1024:.0f} KB"


def _row_table(name: str, headers: list[str]) -> QTableWidget:
    """A read-only table of whole rows, one selectable at a time, columns fitted to their
    contents (the models dialog's and the finder's)."""
    table = QTableWidget(0, len(headers))
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(headers)
    table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
    table.verticalHeader().setVisible(False)
    table.setWordWrap(False)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    return table


class ModelsDialog(QDialog):
    """The bundled model and the models folders' GGUF files: add, remove (undoable while the
    dialog is open), see why one cannot chat."""

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("models_dialog")
        self.setWindowTitle(self.tr("Models"))
        self.resize(1000, 460)
        self.services = services
        self.workers = workers
        self.found: list[manage.Entry] = []
        self.copy_job: JobHandle | None = None
        self.list_job: JobHandle | None = None
        #: the newest listing asked for: an older one that ends later is dropped
        self._list_serial = 0
        #: what the last add or remove did (kept above the count when the list is read again)
        self.notice = ""
        #: removals that Undo can take back while the dialog is open (newest last)
        self.removed: list[manage.Removed] = []

        layout = QVBoxLayout(self)
        self.folders_label = QLabel("")
        self.folders_label.setObjectName("models_folders")
        self.folders_label.setWordWrap(True)
        self.folders_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.folders_label)
        self.table = _row_table("models_table", [self.tr(c) for c in COLUMNS])
        layout.addWidget(self.table, 1)

        row = QHBoxLayout()
        self.add_file_button = QPushButton(self.tr("Add model file…"))
        self.add_file_button.setObjectName("models_add_file")
        self.add_file_button.setToolTip(
            self.tr("Copy (or link) a .gguf file into the models folder")
        )
        row.addWidget(self.add_file_button)
        self.add_folder_button = QPushButton(self.tr("Add folder…"))
        self.add_folder_button.setObjectName("models_add_folder")
        self.add_folder_button.setToolTip(
            self.tr("Also list the .gguf files of a folder you keep models in")
        )
        row.addWidget(self.add_folder_button)
        self.remove_button = QPushButton(self.tr("Remove…"))
        self.remove_button.setObjectName("models_remove")
        self.remove_button.setToolTip(
            self.tr("Unlink a linked model, or delete a copied one (Undo while this is open)")
        )
        self.remove_button.setEnabled(False)
        row.addWidget(self.remove_button)
        self.undo_button = QPushButton(self.tr("Undo remove"))
        self.undo_button.setObjectName("models_undo")
        self.undo_button.setVisible(False)
        row.addWidget(self.undo_button)
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.setObjectName("models_refresh")
        row.addWidget(self.refresh_button)
        row.addStretch(1)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("models_progress")
        self.progress_bar.setVisible(False)
        self.progress_bar.setMinimumWidth(160)
        row.addWidget(self.progress_bar)
        self.cancel_button = QPushButton(self.tr("Cancel copy"))
        self.cancel_button.setObjectName("models_cancel")
        self.cancel_button.setVisible(False)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.status = QLabel(self.tr("Reading the models folders…"))
        self.status.setObjectName("models_status")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        self.add_file_button.clicked.connect(self._on_add_file_clicked)
        self.add_folder_button.clicked.connect(self._on_add_folder_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.undo_button.clicked.connect(self._on_undo_clicked)
        self.refresh_button.clicked.connect(self.refresh)
        self.table.currentCellChanged.connect(self._on_current_cell_changed)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.refresh()

    # -- listing ---------------------------------------------------------------------------
    def refresh(self) -> JobHandle:
        services = self.services
        self._list_serial += 1
        serial = self._list_serial

        def job(progress: Progress, emit: Emit) -> tuple[int, list[Path], list[Any], Any]:
            folders = model_folders(services.config)
            memory = services.memory()
            return serial, folders, manage.entries(services.config, memory), memory

        self.list_job = self.workers.start(
            "models: list", job, connect={"succeeded": self._on_listed, "failed": self._on_failed}
        )
        return self.list_job

    def _on_listed(self, result: Any) -> None:
        serial, folders, found, memory = result
        if serial != self._list_serial:
            return  # a newer listing was asked for (a folder added meanwhile): it decides
        self.found = list(found)
        self.folders_label.setText(
            self.tr("GGUF files in: {0}\nThis machine: {1} of memory available of {2}.").format(
                "; ".join(str(f) for f in folders),
                local.human_size(memory.available),
                local.human_size(memory.total),
            )
        )
        self.table.setRowCount(len(self.found))
        for row, entry in enumerate(self.found):
            for column, text in enumerate(self._cells(entry)):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, entry.key)
                item.setToolTip(self._details(entry))
                self.table.setItem(row, column, item)
        self._on_current_cell_changed(self.table.currentRow(), 0, -1, -1)
        if self.copy_job is None or not self.copy_job.running:
            files = sum(1 for e in self.found if not e.bundled)
            count = (
                self.tr(
                    "The bundled model and {0} model file(s). Pick one for an assistant in its "
                    "tab or in Settings."
                ).format(files)
                if files
                else self.tr(
                    "Only the bundled model so far: add a .gguf file (an instruction-tuned one, "
                    "e.g. '…-Instruct-Q4_K_M.gguf'), a folder that holds some, or use Tools ▸ "
                    "Models ▸ Find models on this computer."
                )
            )
            self.status.setText(f"{self.notice}\n{count}" if self.notice else count)

    def _details(self, entry: manage.Entry) -> str:
        """The whole story of a row: where it is, who uses it, why it cannot chat, why its
        context is smaller than asked."""
        lines = [entry.name]
        if entry.path is not None:
            where = str(entry.path)
            if entry.linked:
                with contextlib.suppress(OSError):
                    where = self.tr("{0} (a link to {1})").format(entry.path, entry.path.resolve())
            lines.append(where)
        if entry.used_by:
            lines.append(self.tr("Used by: {0}").format(", ".join(entry.used_by)))
        if entry.reason:
            lines.append(entry.reason)
        elif entry.context_note:
            lines.append(
                self.tr("Context limited to {0} tokens: {1}.").format(
                    i18n.number(entry.context), entry.context_note
                )
            )
        return "\n".join(lines)

    def _cells(self, entry: manage.Entry) -> list[str]:
        """The row's texts (the tooltip has the whole reason)."""
        info = entry.info
        file = entry.path.name if entry.path is not None else ""
        if info is None:
            return [entry.name, entry.status, "", "", "", "", "", "", "", file]
        return [
            entry.name,
            entry.status,
            self.tr("{0} at {1} tokens").format(local.human_size(entry.needed), entry.context),
            str(info.context_length or "?"),
            _size(info.file_size),
            _parameters(info.parameters),
            info.quantisation,
            info.architecture,
            self.tr("yes") if info.has_chat_template else self.tr("no"),
            file,
        ]

    def selected(self) -> manage.Entry | None:
        row = self.table.currentRow()
        return self.found[row] if 0 <= row < len(self.found) else None

    def _on_current_cell_changed(self, row: int, column: int, old_row: int, old: int) -> None:
        """The selected model's whole story; Remove only for what can be removed."""
        entry = self.found[row] if 0 <= row < len(self.found) else None
        self.remove_button.setEnabled(entry is not None and entry.removable)
        if entry is not None and old_row != -1:
            self.status.setText(self._details(entry))

    def _on_failed(self, message: str, environment: bool) -> None:
        self.status.setText(self.tr("Could not read the models folders: {0}").format(message))

    # -- removing --------------------------------------------------------------------------
    def remove_question(self, entry: manage.Entry) -> str:
        """What the confirmation asks before ``entry`` is removed."""
        text = (
            self.tr("Remove the link to {0}? The file itself stays where it is.")
            if entry.linked
            else self.tr("Delete {0} from the models folder?")
        ).format(entry.name)
        if entry.used_by:
            text += " " + self.tr("{0} answer with it; they will use the bundled model.").format(
                ", ".join(a.capitalize() for a in entry.used_by)
            )
        return text + " " + self.tr("You can undo this until you close this window.")

    def _on_remove_clicked(self) -> None:
        entry = self.selected()
        if entry is None or not entry.removable:
            return
        answer = QMessageBox.question(
            self,
            self.tr("Remove model"),
            self.remove_question(entry),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.remove(entry)

    def remove(self, entry: manage.Entry) -> bool:
        """Remove ``entry`` now (confirmed by the caller); Undo takes it back."""
        try:
            removed = manage.remove(self.services.config, entry)
        except (local.GGUFError, OSError, config_module.ConfigError) as err:
            self._say(self.tr("Not removed — {0}").format(err))
            return False
        self.removed.append(removed)
        self._follow_config()
        self.undo_button.setVisible(True)
        self._say(removed.message())
        self.refresh()
        return True

    def _on_undo_clicked(self) -> None:
        self.undo()

    def undo(self) -> bool:
        """Put back the last model removed while this dialog was open."""
        if not self.removed:
            return False
        removed = self.removed.pop()
        try:
            manage.restore(removed)
        except (local.GGUFError, OSError, config_module.ConfigError) as err:
            self._say(self.tr("Not put back — {0}").format(err))
            return False
        self._follow_config()
        self.undo_button.setVisible(bool(self.removed))
        self._say(self.tr("{0} is back.").format(removed.name))
        self.refresh()
        return True

    def _follow_config(self) -> None:
        """The assistants that were moved to or from a removed model answer with what the
        file now says, from their next answer."""
        try:
            saved = config_module.load({}, home=self.services.config.home)
        except config_module.ConfigError:
            return
        for assistant in assistants.names():
            if saved.model_for(assistant) != self.services.config.model_for(assistant):
                self.services.use_model(assistant, saved.model_for(assistant))

    def done(self, result: int) -> None:
        """Closing ends Undo: removed copies are deleted for good."""
        for removed in self.removed:
            manage.purge(removed)
        self.removed.clear()
        super().done(result)

    # -- adding ----------------------------------------------------------------------------
    def _on_add_file_clicked(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Add model file"), str(Path.home()), self.tr("GGUF models (*.gguf)")
        )
        if not path:
            return
        box = QMessageBox(self)
        box.setWindowTitle(self.tr("Add model file"))
        box.setText(
            self.tr(
                "Copy {0} into the models folder, or link it where it is (no copy; moving or "
                "deleting the original breaks the link)?"
            ).format(Path(path).name)
        )
        copy = box.addButton(self.tr("Copy"), QMessageBox.ButtonRole.AcceptRole)
        link = box.addButton(self.tr("Link"), QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        if box.clickedButton() in (copy, link):
            self.add_file(Path(path), link=box.clickedButton() is link)

    def add_file(self, source: Path, *, link: bool = False) -> JobHandle:
        """Copy (or link) ``source`` into ``<data dir>/models`` in a worker, with progress."""
        folder = self.services.config.path(local.MODELS_DIR)

        def job(progress: Progress, emit: Emit) -> Path:
            return local.add_model_file(source, folder, progress, link=link)

        self.copy_job = self.workers.start(
            "models: add file",
            job,
            connect={
                "progress": self._on_copy_progress,
                "succeeded": self._on_copied,
                "failed": self._on_copy_failed,
                "cancelled": self._on_copy_cancelled,
                "finished": self._on_copy_finished,
            },
        )
        self.progress_bar.setRange(0, 0)
        self.progress_bar.setVisible(True)
        self.cancel_button.setVisible(not link)
        self.add_file_button.setEnabled(False)
        self.status.setText(
            self.tr("Linking {0}…").format(source.name)
            if link
            else self.tr("Copying {0}…").format(source.name)
        )
        return self.copy_job

    def _on_copy_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, max(total, 1))
        self.progress_bar.setValue(done)

    def _say(self, notice: str) -> None:
        self.notice = notice
        self.status.setText(notice)

    def _on_copied(self, path: Any) -> None:
        self._say(self.tr("Added {0}.").format(manage.friendly_name(f"gguf:{Path(path).name}")))
        self.refresh()

    def _on_copy_failed(self, message: str, environment: bool) -> None:
        self._say(self.tr("Not added — {0}").format(message))

    def _on_copy_cancelled(self) -> None:
        self._say(self.tr("Copy cancelled; nothing was added."))

    def _on_copy_finished(self) -> None:
        self.progress_bar.setVisible(False)
        self.cancel_button.setVisible(False)
        self.add_file_button.setEnabled(True)

    def _on_cancel_clicked(self) -> None:
        if self.copy_job is not None:
            self.copy_job.cancel()

    def _on_add_folder_clicked(self) -> None:
        path = QFileDialog.getExistingDirectory(self, self.tr("Add a models folder"))
        if path:
            self.add_folder(Path(path))

    def add_folder(self, folder: Path) -> JobHandle:
        """List ``folder``'s GGUF files from now on (saved as ``model_folders``)."""
        services = self.services

        def job(progress: Progress, emit: Emit) -> None:
            def change(config: config_module.Config) -> config_module.Config:
                if str(folder) in config.model_folders:
                    return config
                return replace(config, model_folders=(*config.model_folders, str(folder)))

            saved = config_module.update_file(services.config.home, change)
            services.use_folders(saved.model_folders)

        handle = self.workers.start(
            "models: add folder",
            job,
            connect={"succeeded": lambda _result: self.refresh(), "failed": self._on_copy_failed},
        )
        return handle

    def reject(self) -> None:
        if self.copy_job is not None and self.copy_job.running:
            self.copy_job.cancel()  # a half copy is removed by the job itself
        super().reject()


FOUND_COLUMNS = (
    QT_TRANSLATE_NOOP("FindModelsDialog", "Model"),
    QT_TRANSLATE_NOOP("FindModelsDialog", "From"),
    QT_TRANSLATE_NOOP("FindModelsDialog", "Status"),
    QT_TRANSLATE_NOOP("FindModelsDialog", "Memory needed"),
    QT_TRANSLATE_NOOP("FindModelsDialog", "File"),
)


class FindModelsDialog(QDialog):
    """Tools ▸ Models ▸ Find models on this computer: the GGUF files LM Studio, Jan, GPT4All,
    llama.cpp and Ollama keep, the best fit for this machine marked; one click links it (no
    copy, nothing downloaded) and every assistant answers with it from the next answer."""

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("find_models_dialog")
        self.setWindowTitle(self.tr("Find models on this computer"))
        self.resize(900, 420)
        self.services = services
        self.workers = workers
        self.found: list[discovery.Found] = []
        self.best: dict[str, discovery.Found] = {}
        self.job: JobHandle | None = None
        layout = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "GGUF models that LM Studio, Jan, GPT4All, llama.cpp or Ollama keep on this "
                "computer. Using one links it where it is: nothing is copied or downloaded."
            )
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.table = _row_table("find_models_table", [self.tr(c) for c in FOUND_COLUMNS])
        layout.addWidget(self.table, 1)
        self.status = QLabel(self.tr("Looking in the usual folders…"))
        self.status.setObjectName("find_models_status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        row = QHBoxLayout()
        self.use_button = QPushButton(self.tr("Use for every assistant"))
        self.use_button.setObjectName("find_models_use")
        self.use_button.setEnabled(False)
        row.addWidget(self.use_button)
        self.link_button = QPushButton(self.tr("Only add it to the list"))
        self.link_button.setObjectName("find_models_link")
        self.link_button.setEnabled(False)
        row.addWidget(self.link_button)
        row.addStretch(1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        row.addWidget(buttons)
        layout.addLayout(row)
        self.use_button.clicked.connect(self._on_use_clicked)
        self.link_button.clicked.connect(self._on_link_clicked)
        self.table.currentCellChanged.connect(self._on_current_cell_changed)
        self.search()

    def search(self) -> JobHandle:
        services = self.services

        def job(progress: Progress, emit: Emit) -> tuple[list[Any], dict[str, Any]]:
            memory = services.memory()
            found = discovery.find(memory=memory)
            return found, discovery.best_fits(found, memory, services.config)

        self.job = self.workers.start(
            "models: find", job, connect={"succeeded": self._on_found, "failed": self._on_failed}
        )
        return self.job

    def _on_found(self, result: Any) -> None:
        found, best = result
        self.found, self.best = list(found), dict(best)
        fits = set(id(f) for f in self.best.values())
        self.table.setRowCount(len(self.found))
        for row, item in enumerate(self.found):
            status = item.status
            if id(item) in fits:
                status = self.tr("best fit for this computer")
            needs = local.human_size(item.needed) if item.info else ""
            for column, text in enumerate((item.name, item.app, status, needs, str(item.path))):
                cell = QTableWidgetItem(text)
                cell.setToolTip(item.reason or str(item.path))
                self.table.setItem(row, column, cell)
        if not self.found:
            self.status.setText(
                self.tr(
                    "No GGUF models found in the folders of LM Studio, Jan, GPT4All, llama.cpp "
                    "or Ollama. Tools ▸ Models… adds a file from anywhere."
                )
            )
            return
        top = next(iter(self.best.values()), None)
        if top is not None:
            self.table.setCurrentCell(self.found.index(top), 0)
            self.status.setText(
                self.tr(
                    "{0} is the best fit for this computer (needs about {1} of memory)."
                ).format(top.name, local.human_size(top.needed))
            )
        else:
            self.status.setText(
                self.tr("{0} model(s) found; none can chat within this computer's memory.").format(
                    len(self.found)
                )
            )

    def _on_failed(self, message: str, environment: bool) -> None:
        self.status.setText(self.tr("Could not look: {0}").format(message))

    def selected(self) -> discovery.Found | None:
        row = self.table.currentRow()
        return self.found[row] if 0 <= row < len(self.found) else None

    def _on_current_cell_changed(self, row: int, column: int, old_row: int, old: int) -> None:
        item = self.selected()
        self.use_button.setEnabled(item is not None and item.ready)
        self.link_button.setEnabled(item is not None and item.info is not None)
        if item is not None and item.reason:
            self.status.setText(item.reason)

    def _on_use_clicked(self) -> None:
        item = self.selected()
        if item is not None:
            self.use(item)

    def _on_link_clicked(self) -> None:
        item = self.selected()
        if item is not None:
            self.use(item, choose=False)

    def use(self, item: discovery.Found, *, choose: bool = True) -> JobHandle:
        """Link ``item`` (and, with ``choose``, answer with it from the next answer)."""
        services = self.services

        def job(progress: Progress, emit: Emit) -> str:
            if not choose:
                discovery.link(services.config, item)
                return ""
            saved = discovery.adopt(services.config, item, services.memory())
            return saved.chat_model

        handle = self.workers.start(
            "models: use found",
            job,
            connect={"succeeded": self._on_used, "failed": self._on_failed},
        )
        self.use_button.setEnabled(False)
        self.link_button.setEnabled(False)
        return handle

    def _on_used(self, key: Any) -> None:
        name = manage.friendly_name(str(key)) if key else ""
        if key:
            for assistant in assistants.names():
                self.services.use_model(assistant, str(key))
            self.status.setText(
                self.tr("Every assistant answers with {0} from its next answer.").format(name)
            )
        else:
            self.status.setText(self.tr("Added to the list; pick it in a tab or in Settings."))
        self._on_current_cell_changed(self.table.currentRow(), 0, -1, -1)
