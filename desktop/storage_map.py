"""The storage map view (View ▸ Storage map) and the migration to the servers.

The seed's table made live: one row per datum kind with its engine, durability class, item
count, size on disk, health and what losing it means (``backends.storage_map``). Counting runs
in a worker (Refresh runs it again). **Migrate to server…** first runs the dry run in a worker
and shows what will be copied, rebuilt or left; then the migration itself, with progress and
Cancel (running it again resumes).

Object names: ``storage_map`` (the view), ``storage_map_window``, ``storage_map_table``,
``storage_map_summary``, ``storage_map_refresh``, ``storage_map_migrate``,
``storage_map_progress``, ``storage_map_status``; the migration dialog ``migration_dialog``
with ``migration_plan`` (a table of steps), ``migration_log``, ``migration_admin_dsn``,
``migration_switch``, ``migration_start``, ``migration_cancel``, ``migration_progress``,
``migration_status``.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, QLocale, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends import config as config_module
from backends import i18n
from backends.config import Config
from backends.i18n import gettext_
from backends.migrate import MigrateOptions, MigrationPlan, migrate, plan_migration
from backends.migrate import switch_to_server as write_server_profile
from backends.progress import Progress
from backends.services import Services
from backends.storage_map import (
    HISTORY,
    PROVABLE,
    RECOMPUTABLE,
    StorageRow,
    storage_map,
)
from desktop.i18n import config_word, number, short_message, show_message
from desktop.workers import Emit, JobHandle, WorkerPool

#: a pale background per durability class (the seed's three answers)
CLASS_COLOURS = {
    RECOMPUTABLE: QColor("#e3f2fd"),
    HISTORY: QColor("#fff3e0"),
    PROVABLE: QColor("#e8f5e9"),
}
PROBLEM_COLOUR = QColor("#b00020")


class StorageMapView(QWidget):
    """The map: a table filled by a worker; Refresh; Migrate to server…"""

    #: emitted after each refresh with the rows shown (tests wait for it)
    map_ready = Signal(object)

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("storage_map")
        self.services = services
        self.workers = workers
        self.rows: list[StorageRow] = []
        self._handle: JobHandle | None = None
        self.migration: MigrationDialog | None = None

        cfg = services.config
        self.summary = QLabel(
            self.tr("Profile <b>{0}</b> — data dir {1}").format(config_word(cfg.profile), cfg.home)
        )
        self.summary.setObjectName("storage_map_summary")
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.columns = [
            self.tr("Datum"),
            self.tr("Assistant"),
            self.tr("Engine now"),
            self.tr("Class"),
            self.tr("Items"),
            self.tr("Size"),
            self.tr("Health"),
            self.tr("If it is lost"),
        ]
        self.table = QTableWidget(0, len(self.columns), self)
        self.table.setObjectName("storage_map_table")
        self.table.setHorizontalHeaderLabels(self.columns)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(True)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        for column in range(len(self.columns) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(self.columns) - 1, QHeaderView.ResizeMode.Stretch)

        legend = QLabel(
            self.tr(
                "If this datum is lost, what happens? <b>recomputable</b>: it is recomputed "
                "(a cache, a derived index) · <b>history</b>: history is lost (SQLite, JSON "
                "files: back them up) · <b>provable</b>: I could no longer prove nobody "
                "touched it (the hash-chained audit log and its checkpoints)"
            )
        )
        legend.setWordWrap(True)
        legend.setObjectName("storage_map_legend")

        self.refresh_button = QPushButton(self.tr("Refresh"))
        self.refresh_button.setObjectName("storage_map_refresh")
        self.migrate_button = QPushButton(self.tr("Migrate to server…"))
        self.migrate_button.setObjectName("storage_map_migrate")
        self.migrate_button.setToolTip(
            self.tr(
                "Copy the embedded data to the servers configured in Settings (a dry run "
                "first shows what will be copied or rebuilt; nothing embedded is deleted)"
            )
        )
        self.progress = QProgressBar()
        self.progress.setObjectName("storage_map_progress")
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(False)
        self.status = QLabel("")
        self.status.setObjectName("storage_map_status")
        self.status.setWordWrap(True)

        buttons = QHBoxLayout()
        buttons.addWidget(self.refresh_button)
        buttons.addWidget(self.migrate_button)
        buttons.addWidget(self.progress)
        buttons.addWidget(self.status, 1)

        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        layout.addWidget(legend)
        layout.addLayout(buttons)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.refresh_button.clicked.connect(self._on_refresh_clicked)
        self.migrate_button.clicked.connect(self._on_migrate_clicked)

    # -- counting --------------------------------------------------------------------------
    def refresh(self) -> JobHandle:
        """Measure every store again, in a worker."""
        if self._handle is not None and self._handle.running:
            return self._handle
        services = self.services

        def job(progress: Progress, emit: Emit) -> list[StorageRow]:
            return storage_map(services.config, services, progress)

        self.refresh_button.setEnabled(False)
        self.progress.setVisible(True)
        show_message(self.status, self.tr("Measuring the stores…"))
        self._handle = self.workers.start(
            "storage map",
            job,
            connect={
                "progress": self._on_progress,
                "succeeded": self._on_measured,
                "failed": self._on_failed,
                "finished": self._on_finished,
            },
        )
        return self._handle

    def _on_refresh_clicked(self) -> None:
        self.refresh()

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _on_measured(self, rows: Any) -> None:
        self.rows = list(rows)
        self.table.setRowCount(len(self.rows))
        for index, row in enumerate(self.rows):
            self._fill(index, row)
        self.table.resizeRowsToContents()
        problems = [r for r in self.rows if not r.ok]
        if problems:
            show_message(
                self.status,
                self.tr("%n store(s) need attention: {0}", "", len(problems)).format(
                    ", ".join(gettext_(r.kind) for r in problems)
                ),
            )
        else:
            show_message(self.status, self.tr("Every store is readable."))
        self.map_ready.emit(self.rows)

    def _fill(self, index: int, row: StorageRow) -> None:
        # the datum's declared words in the user's language (backends' catalogue); engines
        # and measured notes are shown as the stores describe them
        items = row.items_text()
        if i18n.current() != i18n.DEFAULT and row.items is not None:
            items = self.tr("{0}: {1}").format(gettext_(row.unit), QLocale().toString(row.items))
        cells = [
            gettext_(row.kind),
            gettext_(row.assistant),
            row.engine_text(),
            gettext_(row.durability),
            items,
            row.size_text(),
            short_message(gettext_(row.health)),
            gettext_(row.if_lost),
        ]
        tip = self.tr("Where: {0}").format(row.where)
        if row.note:
            tip += "\n" + gettext_(row.note)
        if not row.ok:  # the whole message, the library's own words (its details) too
            tip += "\n" + gettext_(row.health)
        for column, text in enumerate(cells):
            item = QTableWidgetItem(text)
            item.setToolTip(tip)
            if column == 3:
                item.setBackground(QBrush(CLASS_COLOURS.get(row.durability, QColor("white"))))
            if column in (4, 5):
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if column == 6 and not row.ok:
                item.setForeground(QBrush(PROBLEM_COLOUR))
            self.table.setItem(index, column, item)

    def _on_failed(self, message: str, environment: bool) -> None:
        show_message(self.status, self.tr("Could not measure the stores: {0}").format(message))

    def _on_finished(self) -> None:
        self.refresh_button.setEnabled(True)
        self.progress.setVisible(False)

    # -- migrating -------------------------------------------------------------------------
    def _on_migrate_clicked(self) -> None:
        self.open_migration()

    def open_migration(self) -> MigrationDialog:
        """Show the migration dialog; its dry run starts at once."""
        if self.migration is None:
            self.migration = MigrationDialog(self.services, self.workers, self)
            self.migration.migrated.connect(self._on_migrated)
        self.migration.show()
        _to_front(self.migration)
        self.migration.dry_run()
        return self.migration

    def _on_migrated(self) -> None:
        self.refresh()


class MigrationDialog(QDialog):
    """Dry run first (what will be copied / rebuilt / left), then the migration."""

    #: the dry run finished (the plan) — tests wait for it
    planned = Signal(object)
    #: the migration ended (done, failed or cancelled): the map is worth measuring again
    migrated = Signal()

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("migration_dialog")
        self.setWindowTitle(self.tr("Migrate to server"))
        self.resize(1280, 640)
        self.services = services
        self.workers = workers
        self.plan: MigrationPlan | None = None
        self.report: MigrationPlan | None = None
        self._handle: JobHandle | None = None

        intro = QLabel(
            self.tr(
                "Copies the embedded data in {0} to the servers configured in Settings. "
                "Nothing embedded is deleted; if the copy is interrupted or cancelled, run it "
                "again to resume."
            ).format(services.config.home)
        )
        intro.setWordWrap(True)
        self.plan_columns = [
            self.tr("Datum"),
            self.tr("Action"),
            self.tr("From"),
            self.tr("To"),
            self.tr("Items"),
            self.tr("State"),
            self.tr("What happens"),
        ]
        self.plan_view = QTableWidget(0, len(self.plan_columns), self)
        self.plan_view.setObjectName("migration_plan")
        self.plan_view.setHorizontalHeaderLabels(self.plan_columns)
        self.plan_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.plan_view.setWordWrap(True)
        self.plan_view.verticalHeader().setVisible(False)
        header = self.plan_view.horizontalHeader()
        for column in (0, 1, 4, 5):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        for column in (2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, 220)
        header.setSectionResizeMode(6, QHeaderView.ResizeMode.Stretch)
        self.log = QPlainTextEdit()
        self.log.setObjectName("migration_log")
        self.log.setReadOnly(True)
        self.log.setMaximumHeight(80)
        form = QFormLayout()
        self.admin_dsn = QLineEdit()
        self.admin_dsn.setObjectName("migration_admin_dsn")
        self.admin_dsn.setEchoMode(QLineEdit.EchoMode.Password)
        self.admin_dsn.setPlaceholderText(
            self.tr("only if the audit schema must be created (default: the configured DSN)")
        )
        form.addRow(self.tr("Postgres admin DSN"), self.admin_dsn)
        self.switch = QCheckBox(self.tr("Switch to the server profile when done (at restart)"))
        self.switch.setObjectName("migration_switch")
        self.switch.setChecked(services.config.profile != "server")
        self.progress = QProgressBar()
        self.progress.setObjectName("migration_progress")
        self.status = QLabel("")
        self.status.setObjectName("migration_status")
        self.status.setWordWrap(True)
        self.start_button = QPushButton(self.tr("Migrate"))
        self.start_button.setObjectName("migration_start")
        self.start_button.setEnabled(False)
        self.cancel_button = QPushButton(self.tr("Close"))
        self.cancel_button.setObjectName("migration_cancel")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.cancel_button)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.plan_view, 1)
        layout.addWidget(self.log)
        layout.addLayout(form)
        layout.addWidget(self.switch)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addLayout(buttons)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.start_button.clicked.connect(self._on_start_clicked)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)

    def _options(self) -> MigrateOptions:
        return MigrateOptions(admin_dsn=self.admin_dsn.text().strip())

    @property
    def running(self) -> bool:
        return self._handle is not None and self._handle.running

    # -- the dry run -----------------------------------------------------------------------
    def dry_run(self) -> JobHandle | None:
        if self.running:
            return None
        services, options = self.services, self._options()

        def job(progress: Progress, emit: Emit) -> MigrationPlan:
            return plan_migration(services, options, progress, _saved_config(services))

        self.start_button.setEnabled(False)
        self.plan_view.setRowCount(0)
        self.log.setPlainText(self.tr("Dry run: reading the embedded stores…"))
        show_message(self.status, "")
        self._start("migration dry run", job, self._on_planned)
        return self._handle

    def _show_steps(self, plan: MigrationPlan) -> None:
        self.plan_view.setRowCount(len(plan.steps))
        home = f"{self.services.config.home}/"
        for index, step in enumerate(plan.steps):
            state = "" if step.state == "planned" else step.state
            cells = [
                gettext_(step.name),  # the step keeps them in English (journal, JSON)
                gettext_(step.action),
                step.source.replace(home, ""),
                step.target.replace(home, "") if step.works else "",
                number(step.items) if step.works else "",
                gettext_(state) if state else "",
                step.problem or step.detail,
            ]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if step.problem and column in (0, 6):
                    item.setForeground(QBrush(PROBLEM_COLOUR))
                if column == 4:
                    item.setTextAlignment(
                        Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                    )
                self.plan_view.setItem(index, column, item)
        self.plan_view.resizeRowsToContents()

    def _on_planned(self, plan: Any) -> None:
        self.plan = plan
        self._show_steps(plan)
        lines = [self.tr("Dry run — nothing has been written.")]
        if plan.resumed:
            lines.append(self.tr("An unfinished migration to these servers will be resumed."))
        if plan.problems:
            lines.append(self.tr("Problems (fix them, then try again):"))
            lines += [f"  • {p}" for p in plan.problems]
        lines += list(plan.notes)
        self.log.setPlainText("\n".join(lines))
        self.start_button.setEnabled(not plan.problems)
        show_message(
            self.status,
            self.tr("%n item(s) to copy or rebuild.", "", plan.total)
            if not plan.problems
            else self.tr("The migration cannot start: see the problems above."),
        )
        self.planned.emit(plan)

    # -- the migration ---------------------------------------------------------------------
    def start(self) -> JobHandle | None:
        if self.running or self.plan is None or self.plan.problems:
            return None
        services, options = self.services, self._options()
        switch = self.switch.isChecked()

        def job(progress: Progress, emit: Emit) -> MigrationPlan:
            report = migrate(services, options, progress, _saved_config(services))
            if switch:
                path = write_server_profile(services.config.home)
                report.notes.append(
                    QCoreApplication.translate(
                        "MigrationDialog", "profile = server written to {0}; restart Custodia"
                    ).format(path)
                )
            return report

        self.start_button.setEnabled(False)
        self.cancel_button.setText(self.tr("Cancel"))
        show_message(self.status, self.tr("Migrating…"))
        self._start("migration", job, self._on_done)
        return self._handle

    def _on_start_clicked(self) -> None:
        self.start()

    def _on_done(self, report: Any) -> None:
        self.report = report
        self._show_steps(report)
        self.log.setPlainText("\n".join([self.tr("Migration finished."), *report.notes]))
        show_message(self.status, self.tr("Done: every step finished (details above)."))
        self.migrated.emit()

    # -- plumbing --------------------------------------------------------------------------
    def _start(self, name: str, job: Any, on_success: Any) -> None:
        self._handle = self.workers.start(
            name,
            job,
            connect={
                "progress": self._on_progress,
                "succeeded": on_success,
                "failed": self._on_failed,
                "cancelled": self._on_cancelled,
                "finished": self._on_finished,
            },
        )

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(min(done, max(total, 1)))
        if message:  # a datum's kind as declared (marked for the catalogue), or already said
            show_message(self.status, gettext_(message))

    def _on_failed(self, message: str, environment: bool) -> None:
        if self.plan is None:  # the dry run itself stopped: it is not "reading" any more
            self.log.setPlainText(self.tr("Nothing was read or changed."))
            show_message(self.status, self.tr("Cannot plan a migration: {0}").format(message))
        else:
            show_message(self.status, self.tr("Stopped: {0}").format(message))
        if self.plan is not None and not self.plan.problems:
            self.start_button.setEnabled(True)
            self.start_button.setText(self.tr("Try again"))
        self.migrated.emit()

    def _on_cancelled(self) -> None:
        show_message(
            self.status,
            self.tr("Cancelled. Nothing embedded was touched; Migrate again to resume."),
        )
        self.start_button.setEnabled(self.plan is not None and not self.plan.problems)
        self.start_button.setText(self.tr("Resume"))
        self.migrated.emit()

    def _on_finished(self) -> None:
        self.cancel_button.setText(self.tr("Close"))

    def _on_cancel_clicked(self) -> None:
        if self.running:
            assert self._handle is not None
            self._handle.cancel()
        else:
            self.close()

    def reject(self) -> None:
        if self.running:
            assert self._handle is not None
            self._handle.cancel()
            return
        super().reject()


def _saved_config(services: Services) -> Config:
    """The servers as saved in Settings now (the running services keep the start-up ones
    until a restart); read in the worker."""
    return config_module.load(home=services.config.home)


def _to_front(window: QWidget) -> None:
    """Raise an already shown window (the offscreen platform of tests cannot, and says so)."""
    if QGuiApplication.platformName() != "offscreen":
        window.raise_()
        window.activateWindow()


def open_storage_map(window: QMainWindow) -> StorageMapView:
    """Show the storage map window of ``window`` (made on first use) and measure again."""
    dialog = window.findChild(QDialog, "storage_map_window")
    if dialog is None:
        services: Services = window.services  # type: ignore[attr-defined]
        workers: WorkerPool = window.workers  # type: ignore[attr-defined]
        dialog = QDialog(window)
        dialog.setObjectName("storage_map_window")
        # the window's class name is the context tr() would use: this one is "window"'s
        dialog.setWindowTitle(QCoreApplication.translate("window", "Storage map"))
        dialog.resize(1280, 560)
        view = StorageMapView(services, workers, dialog)
        layout = QVBoxLayout(dialog)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(view)
    shown = dialog.findChild(StorageMapView, "storage_map")
    assert isinstance(shown, StorageMapView)
    dialog.show()
    _to_front(dialog)
    shown.refresh()
    return shown
