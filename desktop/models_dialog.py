"""Tools ▸ Models…: the GGUF files Custodia can use, what each one is, whether it fits.

Every header is read in a worker (never the weights); adding a file copies it with progress
and can be cancelled (a cancelled copy leaves nothing), or links it where it is. Object names
are listed in docs/TESTING.md.
"""

from __future__ import annotations

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

from backends import config as config_module
from backends.models import local
from backends.models.registry import model_folders
from backends.models.settings import RUNTIME_DEFAULTS, resolve
from backends.progress import Progress
from backends.services import Services
from desktop.workers import Emit, JobHandle, WorkerPool

COLUMNS = (
    "File",
    "Name",
    "Architecture",
    "Parameters",
    "Quantisation",
    "Context",
    "Size",
    "Chat template",
    "Memory needed",
    "Status",
)


def _parameters(count: int) -> str:
    if count >= 1_000_000_000:
        return f"{count / 1e9:.1f}B"
    if count >= 1_000_000:
        return f"{count / 1e6:.0f}M"
    return f"{count / 1e3:.1f}K"


def _size(size: int) -> str:
    return local.human_size(size) if size >= 1 << 20 else f"{size / 1024:.0f} KB"


class ModelsDialog(QDialog):
    """The models folders' GGUF files, and adding one."""

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("models_dialog")
        self.setWindowTitle(self.tr("Models"))
        self.resize(1340, 420)
        self.services = services
        self.workers = workers
        self.found: list[local.LocalModel] = []
        self.copy_job: JobHandle | None = None
        self.list_job: JobHandle | None = None
        #: the newest listing asked for: an older one that ends later is dropped
        self._list_serial = 0
        #: what the last add did (kept above the count when the list is read again)
        self.notice = ""

        layout = QVBoxLayout(self)
        self.folders_label = QLabel("")
        self.folders_label.setObjectName("models_folders")
        self.folders_label.setWordWrap(True)
        self.folders_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.folders_label)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("models_table")
        self.table.setHorizontalHeaderLabels([self.tr(c) for c in COLUMNS])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
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
        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.setObjectName("models_refresh")
        row.addWidget(self.refresh_button)
        row.addStretch(1)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("models_progress")
        self.progress_bar.setVisible(False)
        self.progress_bar.setMinimumWidth(220)
        row.addWidget(self.progress_bar)
        self.cancel_button = QPushButton(self.tr("Cancel copy"))
        self.cancel_button.setObjectName("models_cancel")
        self.cancel_button.setVisible(False)
        row.addWidget(self.cancel_button)
        layout.addLayout(row)
        self.status = QLabel(self.tr("Reading the models folders…"))
        self.status.setObjectName("models_status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        self.add_file_button.clicked.connect(self._on_add_file_clicked)
        self.add_folder_button.clicked.connect(self._on_add_folder_clicked)
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
            return serial, folders, local.list_models(folders), services.memory()

        self.list_job = self.workers.start("models: list", job)
        self.list_job.signals.succeeded.connect(self._on_listed)
        self.list_job.signals.failed.connect(self._on_failed)
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
        for row, model in enumerate(self.found):
            cells, why = self._cells(model, memory)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, model.key)
                item.setToolTip("\n".join(t for t in (model.key, str(model.path), why) if t))
                self.table.setItem(row, column, item)
        if self.copy_job is None or not self.copy_job.running:
            count = (
                self.tr(
                    "{0} model file(s). Pick one for an assistant in its tab or in Settings."
                ).format(len(self.found))
                if self.found
                else self.tr(
                    "No model files yet: add a .gguf file (an instruction-tuned one, e.g. "
                    "'…-Instruct-Q4_K_M.gguf') or a folder that holds some."
                )
            )
            self.status.setText(f"{self.notice}\n{count}" if self.notice else count)

    def _short(self, err: local.GGUFError | None, needed: int, memory: local.Memory) -> str:
        """A status that fits its column (the row's tooltip has the whole reason)."""
        kind = err.kind if err is not None else ""
        return {
            "not-gguf": self.tr("not a GGUF file"),
            "truncated": self.tr("truncated: copy it again"),
            "version": self.tr("GGUF version not supported"),
            "no-template": self.tr("no chat template: cannot chat"),
            "architecture": self.tr("architecture not supported"),
            "memory": self.tr("too large: needs {0}, {1} available").format(
                local.human_size(needed), local.human_size(memory.available)
            ),
            "": self.tr("ready"),
        }.get(kind, str(err))

    def _cells(self, model: local.LocalModel, memory: local.Memory) -> tuple[list[str], str]:
        """The row's texts, and the whole reason it cannot be used ("" when it can)."""
        info = model.info
        if info is None:
            reason = str(model.error).removeprefix(f"{model.path}: ")
            status = self._short(model.error, 0, memory)
            return [model.path.name, "", "", "", "", "", "", "", "", status], reason
        config = self.services.config
        context = resolve("", model.key, config.generation).context_size
        context = min(
            context or RUNTIME_DEFAULTS.context_size or 2048, info.context_length or 1 << 30
        )
        needed = info.memory_needed(context)
        problem: local.GGUFError | None = None
        try:
            local.check_usable(info)
            local.check_fits(info, context, memory)
        except local.GGUFError as err:
            problem = err
        cells = [
            model.path.name,
            info.name,
            info.architecture,
            _parameters(info.parameters),
            info.quantisation,
            str(info.context_length or "?"),
            _size(info.file_size),
            self.tr("yes") if info.has_chat_template else self.tr("no"),
            self.tr("{0} at {1} tokens").format(local.human_size(needed), context),
            self._short(problem, needed, memory),
        ]
        reason = str(problem).removeprefix(f"{model.path}: ") if problem else ""
        return cells, reason

    def _on_current_cell_changed(self, row: int, column: int, old_row: int, old: int) -> None:
        """The selected file's key and, when it cannot be used, the whole reason."""
        item = self.table.item(row, 0)
        if item is not None:
            self.status.setText(item.toolTip())

    def _on_failed(self, message: str, environment: bool) -> None:
        self.status.setText(self.tr("Could not read the models folders: {0}").format(message))

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

        self.copy_job = self.workers.start("models: add file", job)
        signals = self.copy_job.signals
        signals.progress.connect(self._on_copy_progress)
        signals.succeeded.connect(self._on_copied)
        signals.failed.connect(self._on_copy_failed)
        signals.cancelled.connect(self._on_copy_cancelled)
        signals.finished.connect(self._on_copy_finished)
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
        self._say(self.tr("Added {0}.").format(Path(path).name))
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

        handle = self.workers.start("models: add folder", job)
        handle.signals.succeeded.connect(lambda _result: self.refresh())
        handle.signals.failed.connect(self._on_copy_failed)
        return handle

    def reject(self) -> None:
        if self.copy_job is not None and self.copy_job.running:
            self.copy_job.cancel()  # a half copy is removed by the job itself
        super().reject()
