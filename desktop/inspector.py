"""The clinician's audit inspector (SPEC CT8): browse, filter, verify and export the audit log.

Opened from View ▸ Audit inspector (``Ctrl+I``) and from the clinical tutor's tab, both through
:func:`open_inspector`. Nothing here touches the log on the GUI thread: opening it, counting,
every page of the table, revealing a record, verifying and exporting run in the window's
worker pool and come back as signals.

The table model is a windowed row cache: it knows the row count, keeps at most
``MAX_PAGES`` pages of ``PAGE`` rows, and asks a worker for a page the first time the view
paints one of its rows (showing "…" until it arrives). Unfiltered, row ``r`` is sequence
number ``first_seq + r`` and a page is one ``seq BETWEEN`` query — a deleted record shows as
a red "missing" row instead of silently closing up. Filtered, pages come by offset from the
database's indexes. A million rows scroll as smoothly as a hundred.
"""

from __future__ import annotations

import html
import json
import logging
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QDate,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QBrush, QColor, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDateEdit,
    QDialog,
    QDialogButtonBox,
    QDockWidget,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from backends import i18n
from backends.audit import (
    AuditService,
    CheckpointStatus,
    Entry,
    Filter,
    ProofFileError,
    VerifyResult,
    check_consistency,
    check_inclusion,
)
from backends.progress import Progress
from backends.services import Lazy
from desktop.workers import Emit, JobHandle, WorkerPool

log = logging.getLogger(__name__)

ServiceSource = Callable[[], AuditService]
ModelIndex = QModelIndex | QPersistentModelIndex

PAGE = 200
#: the line before the stored record text in the detail view
RECORD_HEADING = "Stored record (the exact hashed text):"
MAX_PAGES = 64
BROKEN = QColor("#f8d0d0")
MISSING = QColor("#fde9c8")
ERASED = QColor("#e6e6e6")
#: text on the coloured rows above: dark on light in every theme (a dark theme's light text on
#: these light backgrounds was unreadable)
ON_LIGHT = QColor("#1a1a1a")


def _records(count: int) -> str:
    """ "1 record", "41 records" (with thousands separators)."""
    return f"{count:,} record" if count == 1 else f"{count:,} records"


@dataclass(frozen=True)
class Row:
    """One table row: an entry (None: the sequence number is missing) and its status."""

    seq: int
    entry: Entry | None
    status: str


@dataclass(frozen=True)
class View:
    """What the table shows: the filter, how many rows, and the first seq (unfiltered)."""

    service: AuditService
    flt: Filter
    total: int
    first_seq: int
    event_types: tuple[str, ...] = ()
    #: a person looked up by name: their pseudonym, or "" when the key store has none
    person: str | None = None


class AuditTableModel(QAbstractTableModel):
    """Windowed, lazily paged rows of the audit log (see the module docstring)."""

    #: emitted when a page arrived (tests wait on it)
    page_loaded = Signal(int)
    #: a page could not be read: the message
    page_failed = Signal(str)

    def __init__(self, workers: WorkerPool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("audit_model")
        self._workers = workers
        self._view: View | None = None
        self._pages: OrderedDict[int, list[Row]] = OrderedDict()
        self._pending: set[int] = set()
        self._generation = 0
        self.broken_seq: int | None = None
        self._headers = [
            self.tr("Seq"),
            self.tr("Time (UTC)"),
            self.tr("Event"),
            self.tr("Pseudonym"),
            self.tr("Status"),
            self.tr("Fields"),
            self.tr("Hash"),
        ]

    # -- what is shown ---------------------------------------------------------------------
    def set_view(self, view: View | None) -> None:
        self.beginResetModel()
        self._view = view
        self._pages.clear()
        self._pending.clear()
        self._generation += 1
        self.endResetModel()

    @property
    def view(self) -> View | None:
        return self._view

    @property
    def ranged(self) -> bool:
        """Unfiltered: row r is seq first_seq + r."""
        return self._view is not None and self._view.flt.empty

    @property
    def loaded_pages(self) -> int:
        return len(self._pages)

    def set_broken(self, seq: int | None) -> None:
        self.broken_seq = seq
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 6))

    def row_at(self, row: int) -> Row | None:
        """The row if its page is loaded (else asks for it and returns None)."""
        if self._view is None or not 0 <= row < self._view.total:
            return None
        page, offset = divmod(row, PAGE)
        rows = self._pages.get(page)
        if rows is None:
            self._request(page)
            return None
        self._pages.move_to_end(page)
        return rows[offset] if offset < len(rows) else None

    def row_of_seq(self, seq: int) -> int | None:
        if self._view is None or not self.ranged:
            return None
        row = seq - self._view.first_seq
        return min(max(row, 0), self._view.total - 1) if self._view.total else None

    # -- Qt model --------------------------------------------------------------------------
    def rowCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() or self._view is None:
            return 0
        return self._view.total

    def columnCount(self, parent: ModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._headers)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return self._headers[section]
        return None

    def data(self, index: ModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self.row_at(index.row())
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if row is None:
                return "…" if column else ""
            if row.entry is None:
                return (str(row.seq), self.tr("— missing —"), "", "", "", "", "")[column]
            return self._display(row, column)
        if role == Qt.ItemDataRole.BackgroundRole and row is not None:
            if self.broken_seq is not None and row.seq == self.broken_seq:
                return QBrush(BROKEN)
            if row.entry is None:
                return QBrush(MISSING)
            if row.status == "erased":
                return QBrush(ERASED)
        if role == Qt.ItemDataRole.ForegroundRole and row is not None:
            coloured = (
                (self.broken_seq is not None and row.seq == self.broken_seq)
                or row.entry is None
                or row.status == "erased"
            )
            if coloured:
                return QBrush(ON_LIGHT)
        if role == Qt.ItemDataRole.ToolTipRole and row is not None and row.entry is not None:
            if index.column() == 1:
                return row.entry.time  # the full stored time, microseconds and all
            return row.entry.hash
        if role == Qt.ItemDataRole.UserRole and row is not None:
            return row.seq
        return None

    def _display(self, row: Row, column: int) -> str:
        entry = row.entry
        assert entry is not None
        if column == 0:
            return str(entry.seq)
        if column == 1:
            return entry.time[:19].replace("T", " ")  # to the second; UTC (header says)
        if column == 2:
            return entry.event_type
        if column == 3:
            return entry.pseudonym or ""
        if column == 4:
            return {
                "erased": self.tr("erased"),
                "sealed": self.tr("sealed"),
            }.get(row.status, "")
        if column == 5:
            text = json.dumps(entry.data, ensure_ascii=False, sort_keys=True)
            return text if len(text) <= 120 else text[:119] + "…"
        return entry.hash[:16]

    # -- paging ----------------------------------------------------------------------------
    def _request(self, page: int) -> None:
        view = self._view
        if view is None or page in self._pending:
            return
        self._pending.add(page)
        generation = self._generation
        ranged = self.ranged

        def job(progress: Progress, emit: Emit) -> tuple[int, int, list[Row]]:
            service = view.service
            if ranged:
                first = view.first_seq + page * PAGE
                last = min(first + PAGE, view.first_seq + view.total) - 1
                found = {e.seq: e for e in service.between(first, last)}
                entries: list[tuple[int, Entry | None]] = [
                    (seq, found.get(seq)) for seq in range(first, last + 1)
                ]
            else:
                page_entries = service.page(view.flt, page * PAGE, PAGE)
                entries = [(e.seq, e) for e in page_entries]
            statuses: dict[str, str] = {}
            rows = []
            for seq, entry in entries:
                status = ""
                if entry is not None and entry.pseudonym:
                    if entry.pseudonym not in statuses:
                        statuses[entry.pseudonym] = service.status(entry)
                    status = statuses[entry.pseudonym]
                    if status == "sealed" and not entry.sealed:
                        status = ""
                rows.append(Row(seq, entry, status))
            return generation, page, rows

        handle = self._workers.start(f"audit page {page}", job)
        handle.signals.succeeded.connect(self._on_page_succeeded)
        handle.signals.failed.connect(self._on_page_failed)

    def _on_page_succeeded(self, result: Any) -> None:
        generation, page, rows = result
        if generation != self._generation:
            return  # an older view
        self._pending.discard(page)
        self._pages[page] = rows
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        first = page * PAGE
        last = min(first + PAGE, self.rowCount()) - 1
        if last >= first:
            self.dataChanged.emit(self.index(first, 0), self.index(last, 6))
        self.page_loaded.emit(page)

    def _on_page_failed(self, message: str, environment: bool) -> None:
        # Pages that failed stay "pending" (shown as "…") until the next reset (Refresh), so
        # a log that went away is not asked again at every repaint.
        log.warning("audit page failed: %s", message)
        self.page_failed.emit(message)


class InspectorPane(QWidget):
    """Browse, filter, verify and export the audit log."""

    #: the view is ready (after opening or applying filters); tests wait on it
    view_ready = Signal()
    #: verification finished: the :class:`VerifyResult`
    verified = Signal(object)
    #: an export finished: the number of records
    exported = Signal(int)
    #: the detail view shows a record
    detail_shown = Signal(int)
    #: an inclusion proof was written: its path
    proof_exported = Signal(str)
    #: a person was forgotten: their pseudonym ("" when there was no key)
    forgotten = Signal(str)
    #: the checkpoints were checked against the log: the list of CheckpointStatus
    checkpoints_checked = Signal(object)

    def _count(self, count: int) -> str:
        """:func:`_records` in the language shown (its plural forms, the locale's separators)."""
        if i18n.current() == i18n.DEFAULT:
            return _records(count)
        return self.tr("%Ln record(s)", "", count)

    def __init__(
        self, workers: WorkerPool, source: ServiceSource, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("inspector")
        self.workers = workers
        self._source = source
        self.service: AuditService | None = None
        self._verify_handle: JobHandle | None = None
        self._select_seq: int | None = None

        self.model = AuditTableModel(workers, self)
        self.model.page_failed.connect(self._on_page_failed)
        self._build()
        self._connect_signals()
        self._set_busy(True)
        self.reload()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        filters = QHBoxLayout()
        self.filter_pseudonym = QLineEdit()
        self.filter_pseudonym.setObjectName("filter_pseudonym")
        self.filter_pseudonym.setPlaceholderText(self.tr("Pseudonym (p-…)"))
        self.filter_pseudonym.setClearButtonEnabled(True)
        self.filter_event = QComboBox()
        self.filter_event.setObjectName("filter_event")
        self.filter_event.setEditable(True)
        # typed text filters; it never becomes a permanent entry of the list
        self.filter_event.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self._apply_filters_timer = QTimer(self)
        self._apply_filters_timer.setSingleShot(True)
        self._apply_filters_timer.setInterval(0)
        self.filter_event.setMinimumWidth(160)
        event_edit = self.filter_event.lineEdit()
        if event_edit is not None:
            event_edit.setPlaceholderText(self.tr("Any event"))
        self.filter_dates = QCheckBox(self.tr("From"))
        self.filter_dates.setObjectName("filter_dates")
        self.filter_since = QDateEdit(QDate.currentDate().addDays(-30))
        self.filter_since.setObjectName("filter_since")
        self.filter_since.setCalendarPopup(True)
        self.filter_since.setDisplayFormat("yyyy-MM-dd")
        self.filter_until = QDateEdit(QDate.currentDate())
        self.filter_until.setObjectName("filter_until")
        self.filter_until.setCalendarPopup(True)
        self.filter_until.setDisplayFormat("yyyy-MM-dd")
        self.apply_filters = QPushButton(self.tr("Filter"))
        self.apply_filters.setObjectName("apply_filters")
        self.clear_filters = QPushButton(self.tr("Show all"))
        self.clear_filters.setObjectName("clear_filters")
        self.filter_person = QLineEdit()
        self.filter_person.setObjectName("filter_person")
        self.filter_person.setPlaceholderText(self.tr("Person's name"))
        self.filter_person.setClearButtonEnabled(True)
        self.filter_person.setToolTip(
            self.tr(
                "For an authorised reviewer: find a person's records by name. The name is "
                "looked up through the pseudonym keys; it is never stored in clear."
            )
        )
        filters.addWidget(QLabel(self.tr("Person")))
        filters.addWidget(self.filter_person, 2)
        filters.addWidget(QLabel(self.tr("Pseudonym")))
        filters.addWidget(self.filter_pseudonym, 2)
        filters.addWidget(QLabel(self.tr("Event")))
        filters.addWidget(self.filter_event, 2)
        filters.addWidget(self.filter_dates)
        filters.addWidget(self.filter_since)
        filters.addWidget(QLabel(self.tr("to")))
        filters.addWidget(self.filter_until)
        filters.addWidget(self.apply_filters)
        filters.addWidget(self.clear_filters)
        layout.addLayout(filters)

        self.audit_table = QTableView()
        self.audit_table.setObjectName("audit_table")
        self.audit_table.setModel(self.model)
        self.audit_table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.audit_table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.audit_table.setAlternatingRowColors(True)
        self.audit_table.setWordWrap(False)
        vertical = self.audit_table.verticalHeader()
        vertical.setVisible(False)
        vertical.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)  # no per-row measuring
        vertical.setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.audit_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((64, 190, 110, 140, 64, 300, 130)):
            header.resizeSection(column, width)

        self.audit_card = QTextBrowser()
        self.audit_card.setObjectName("audit_card")
        self.audit_card.setOpenLinks(False)
        self.audit_card.setPlaceholderText(self.tr("Select a record to read it."))
        self.audit_detail = QPlainTextEdit()
        self.audit_detail.setObjectName("audit_detail")
        self.audit_detail.setReadOnly(True)
        self.audit_detail.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.audit_detail.setPlaceholderText(self.tr("Select a record to see it in full."))
        self.audit_detail.setVisible(False)
        self.show_json = QCheckBox(self.tr("Show the stored JSON"))
        self.show_json.setObjectName("show_json")
        self.export_proof = QPushButton(self.tr("Export proof…"))
        self.export_proof.setObjectName("export_proof")
        self.export_proof.setToolTip(
            self.tr(
                "Write a proof that this record is in the signed log (c2sp.org/tlog-proof), "
                "which anyone can check with the verifier key alone"
            )
        )
        self.export_proof.setEnabled(False)
        record_tab = QWidget()
        record_layout = QVBoxLayout(record_tab)
        record_layout.setContentsMargins(0, 0, 0, 0)
        record_layout.addWidget(self.audit_card, 1)
        record_layout.addWidget(self.audit_detail, 1)
        record_buttons = QHBoxLayout()
        record_buttons.addWidget(self.show_json)
        record_buttons.addStretch(1)
        record_buttons.addWidget(self.export_proof)
        record_layout.addLayout(record_buttons)

        self.verifier_key = QLineEdit()
        self.verifier_key.setObjectName("verifier_key")
        self.verifier_key.setReadOnly(True)
        self.verifier_key.setToolTip(
            self.tr("Give this key to whoever checks a proof or checkpoint of this log")
        )
        self.copy_key = QPushButton(self.tr("Copy"))
        self.copy_key.setObjectName("copy_key")
        self.check_checkpoints = QPushButton(self.tr("Check the checkpoints"))
        self.check_checkpoints.setObjectName("check_checkpoints")
        self.check_checkpoints.setToolTip(
            self.tr("Is today's log consistent with every checkpoint signed so far?")
        )
        self.checkpoints_list = QListWidget()
        self.checkpoints_list.setObjectName("checkpoints_list")
        self.checkpoints_status = QLabel("")
        self.checkpoints_status.setObjectName("checkpoints_status")
        self.checkpoints_status.setWordWrap(True)
        self.verify_proof_file = QPushButton(self.tr("Verify a proof file…"))
        self.verify_proof_file.setObjectName("verify_proof_file")
        checkpoints_tab = QWidget()
        checkpoints_layout = QVBoxLayout(checkpoints_tab)
        checkpoints_layout.setContentsMargins(0, 0, 0, 0)
        key_row = QHBoxLayout()
        key_row.addWidget(QLabel(self.tr("Verifier key")))
        key_row.addWidget(self.verifier_key, 1)
        key_row.addWidget(self.copy_key)
        checkpoints_layout.addLayout(key_row)
        checkpoints_layout.addWidget(self.checkpoints_list, 1)
        checkpoints_layout.addWidget(self.checkpoints_status)
        checkpoint_buttons = QHBoxLayout()
        checkpoint_buttons.addWidget(self.check_checkpoints)
        checkpoint_buttons.addStretch(1)
        checkpoint_buttons.addWidget(self.verify_proof_file)
        checkpoints_layout.addLayout(checkpoint_buttons)

        self.inspector_tabs = QTabWidget()
        self.inspector_tabs.setObjectName("inspector_tabs")
        self.inspector_tabs.addTab(record_tab, self.tr("Record"))
        self.inspector_tabs.addTab(checkpoints_tab, self.tr("Checkpoints and proofs"))
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.audit_table)
        splitter.addWidget(self.inspector_tabs)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)

        actions = QHBoxLayout()
        self.verify_chain = QPushButton(self.tr("Verify"))
        self.verify_chain.setObjectName("verify_chain")
        self.verify_chain.setToolTip(
            self.tr("Recompute every hash and check the signed checkpoints")
        )
        self.verify_incremental = QCheckBox(self.tr("Only since the last checkpoint"))
        self.verify_incremental.setObjectName("verify_incremental")
        self.cancel_verify = QPushButton(self.tr("Cancel"))
        self.cancel_verify.setObjectName("cancel_verify")
        self.cancel_verify.setEnabled(False)
        self.verify_progress = QProgressBar()
        self.verify_progress.setObjectName("verify_progress")
        self.verify_progress.setMaximumWidth(200)
        self.verify_progress.setTextVisible(True)
        self.verify_status = QLabel(self.tr("Not verified yet"))
        self.verify_status.setObjectName("verify_status")
        self.verify_status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.export_csv = QPushButton(self.tr("Export CSV…"))
        self.export_csv.setObjectName("export_csv")
        self.export_jsonl = QPushButton(self.tr("Export JSONL…"))
        self.export_jsonl.setObjectName("export_jsonl")
        self.export_reveal = QCheckBox(self.tr("With questions and answers"))
        self.export_reveal.setObjectName("export_reveal")
        self.export_reveal.setToolTip(
            self.tr(
                "For an authorised reviewer: the export also holds each record's decrypted "
                "fields (what was asked and the answer shown). The disclosure is recorded in "
                "the audit log."
            )
        )
        self.refresh_log = QPushButton(self.tr("Refresh"))
        self.refresh_log.setObjectName("refresh_log")
        self.forget_person = QPushButton(self.tr("Forget a person…"))
        self.forget_person.setObjectName("forget_person")
        self.forget_person.setToolTip(
            self.tr("Erase a person: destroy their key, so their records can never be read again")
        )
        for widget in (
            self.verify_chain,
            self.verify_incremental,
            self.cancel_verify,
            self.verify_progress,
        ):
            actions.addWidget(widget)
        actions.addWidget(self.verify_status, 1)
        for widget in (
            self.refresh_log,
            self.forget_person,
            self.export_reveal,
            self.export_csv,
            self.export_jsonl,
        ):
            actions.addWidget(widget)
        layout.addLayout(actions)
        self.inspector_status = QLabel("")
        self.inspector_status.setObjectName("inspector_status")
        self.inspector_status.setWordWrap(True)
        layout.addWidget(self.inspector_status)

    def _connect_signals(self) -> None:
        self.apply_filters.clicked.connect(self._on_apply_filters_clicked)
        self.clear_filters.clicked.connect(self._on_clear_filters_clicked)
        self.filter_pseudonym.returnPressed.connect(self._on_apply_filters_clicked)
        self.filter_person.returnPressed.connect(self._on_apply_filters_clicked)
        self.forget_person.clicked.connect(self._on_forget_person_clicked)
        # Enter in the event box and a pick from its list both filter; Enter on a listed
        # type emits both signals, so they go through one coalescing timer
        self.filter_event.activated.connect(self._on_filter_event_activated)
        event_edit = self.filter_event.lineEdit()
        if event_edit is not None:
            event_edit.returnPressed.connect(self._apply_filters_timer.start)
        self._apply_filters_timer.timeout.connect(self._on_apply_filters_clicked)
        self.refresh_log.clicked.connect(self._on_apply_filters_clicked)
        self.verify_chain.clicked.connect(self._on_verify_chain_clicked)
        self.cancel_verify.clicked.connect(self._on_cancel_verify_clicked)
        self.export_csv.clicked.connect(self._on_export_csv_clicked)
        self.export_jsonl.clicked.connect(self._on_export_jsonl_clicked)
        selection = self.audit_table.selectionModel()
        selection.currentRowChanged.connect(self._on_current_row_changed)
        self.show_json.toggled.connect(self._on_show_json_toggled)
        self.export_proof.clicked.connect(self._on_export_proof_clicked)
        self.copy_key.clicked.connect(self._on_copy_key_clicked)
        self.check_checkpoints.clicked.connect(self._on_check_checkpoints_clicked)
        self.verify_proof_file.clicked.connect(self._on_verify_proof_file_clicked)
        self.inspector_tabs.currentChanged.connect(self._on_inspector_tabs_current_changed)

    # -- filters and loading ---------------------------------------------------------------
    def current_filter(self) -> Filter:
        since = until = ""
        if self.filter_dates.isChecked():
            since = self.filter_since.date().toString("yyyy-MM-dd")
            until = self.filter_until.date().addDays(1).toString("yyyy-MM-dd")
        return Filter(
            pseudonym=self.filter_pseudonym.text().strip(),
            event_type=self.filter_event.currentText().strip(),
            since=since,
            until=until,
        )

    def _set_busy(self, busy: bool) -> None:
        for widget in (self.apply_filters, self.clear_filters, self.refresh_log):
            widget.setEnabled(not busy)
        ready = not busy and self.service is not None
        for widget in (
            self.verify_chain,
            self.export_csv,
            self.export_jsonl,
            self.check_checkpoints,
            self.forget_person,
        ):
            widget.setEnabled(ready and self._verify_handle is None)

    def reload(self) -> None:
        """(Re)open the log and show it with the current filters."""
        flt = self.current_filter()
        person = self.filter_person.text().strip()
        source = self._source
        existing = self.service

        def job(progress: Progress, emit: Emit) -> View:
            nonlocal flt
            service = existing if existing is not None else source()
            found: str | None = None
            if person:  # resolved through the key store: the name itself is never stored
                found = service.pseudonym_of(person) or ""
                flt = Filter(found or "p-none", flt.event_type, flt.since, flt.until)
            first = service.first_seq() or 1
            if flt.empty:
                head = service.head()
                total = max(head.seq - first + 1, 0)
            else:
                total = service.count(flt)
            return View(service, flt, total, first, tuple(service.event_types()), found)

        self._set_busy(True)
        self.inspector_status.setText(self.tr("Loading the audit log…"))
        handle = self.workers.start("audit inspector: load", job)
        handle.signals.succeeded.connect(self._on_view_succeeded)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_view_succeeded(self, view: Any) -> None:
        self.service = view.service
        self.model.set_view(view)
        current = self.filter_event.currentText()
        self.filter_event.blockSignals(True)
        self.filter_event.clear()
        self.filter_event.addItems(["", *view.event_types])
        self.filter_event.setCurrentText(current)
        self.filter_event.blockSignals(False)
        self.audit_detail.clear()
        self.audit_card.clear()
        self.export_proof.setEnabled(False)
        try:
            self.verifier_key.setText(view.service.verifier_key())
            self.verifier_key.setCursorPosition(0)  # the log's name first
        except Exception as err:
            log.warning("no verifier key: %s", err)
        where = view.service.location
        if view.flt.empty:
            text = self.tr("{0} in {1}").format(self._count(view.total), where)
        else:
            text = self.tr("{0} match the filters ({1})").format(self._count(view.total), where)
        if view.person == "":
            text = self.tr(
                "No key for that name: never seen, or erased (an erased person cannot be "
                "found by name)"
            )
        elif view.person:
            text += " · " + self.tr("the person is {0}").format(view.person)
        message = getattr(self, "_after_reload_message", "")
        if message:
            text, self._after_reload_message = f"{message} · {text}", ""
        self.inspector_status.setText(text)
        self._set_busy(False)
        if self._select_seq is not None:
            seq, self._select_seq = self._select_seq, None
            self.select_seq(seq)
        self.view_ready.emit()

    def _on_job_failed(self, message: str, environment: bool) -> None:
        self._set_busy(False)
        prefix = self.tr("Audit log unavailable") if environment else self.tr("Unexpected error")
        self.inspector_status.setText(f"{prefix}: {message}")

    def _on_page_failed(self, message: str) -> None:
        self.inspector_status.setText(
            self.tr("Some records could not be read: {0} (Refresh to try again)").format(message)
        )

    def _on_filter_event_activated(self, index: int) -> None:
        """An event type picked from the list filters at once."""
        self._apply_filters_timer.start()

    def _on_apply_filters_clicked(self) -> None:
        self.reload()

    def _on_clear_filters_clicked(self) -> None:
        self.filter_person.clear()
        self.filter_pseudonym.clear()
        self.filter_event.setCurrentText("")
        self.filter_dates.setChecked(False)
        self.reload()

    def select_seq(self, seq: int) -> None:
        """Select (and scroll to) the row of ``seq`` in the unfiltered view."""
        row = self.model.row_of_seq(seq)
        if row is None:
            return
        index = self.model.index(row, 0)
        self.audit_table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)
        self.audit_table.selectRow(row)
        self.audit_table.setCurrentIndex(index)

    def selected_seq(self) -> int | None:
        index = self.audit_table.currentIndex()
        if not index.isValid():
            return None
        row = self.model.row_at(index.row())
        if row is not None:
            return row.seq
        view = self.model.view
        return view.first_seq + index.row() if view is not None and self.model.ranged else None

    # -- detail ----------------------------------------------------------------------------
    # (a tutor turn's sealed fields read best as asked, shown, then how it was checked)
    def _on_current_row_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        view = self.model.view
        if view is None or not current.isValid():
            return
        row = self.model.row_at(current.row())
        seq = row.seq if row is not None else None
        if seq is None and self.model.ranged:
            seq = view.first_seq + current.row()
        if seq is None:
            return
        service = view.service
        labels = self.card_labels()

        def job(progress: Progress, emit: Emit) -> tuple[int, str, str]:
            entry = service.entry(seq)
            if entry is None:
                return seq, "", ""
            revealed = service.reveal(entry)
            shown = json.dumps(
                {
                    "seq": entry.seq,
                    "time": entry.time,
                    "event": entry.event_type,
                    "pseudonym": entry.pseudonym,
                    "status": revealed.status,
                    "personal": _reading_order(revealed.personal),
                    "fields": entry.data,
                    "hash": entry.hash,
                },
                ensure_ascii=False,
                indent=2,
            )
            card = record_card(entry, revealed.status, revealed.personal, labels)
            return seq, f"{shown}\n\n{RECORD_HEADING}\n{entry.record}", card

        handle = self.workers.start("audit inspector: detail", job)
        handle.signals.succeeded.connect(self._on_detail_succeeded)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_detail_succeeded(self, result: Any) -> None:
        seq, text, card = result
        if not text:
            text = self.tr(
                "Sequence number {0} is missing from the log: the record was deleted."
            ).format(seq)
            card = f"<p><b>{html.escape(text)}</b></p>"
        elif self.model.broken_seq == seq:
            warning = self.tr("This is the first broken link.")
            text = warning + "\n\n" + text
            card = f"<p style='color:#b00020'><b>{html.escape(warning)}</b></p>" + card
        self.audit_detail.setPlainText(text)
        self.audit_card.setHtml(card)
        self._detail_seq = seq
        self.export_proof.setEnabled(bool(result[1]))
        self.detail_shown.emit(seq)

    def card_labels(self) -> dict[str, str]:
        """The record card's words, translated here on the GUI thread (the card is built in
        a worker)."""
        return {
            "nobody in particular": self.tr("nobody in particular"),
            "erased: this person's fields can never be read again": self.tr(
                "erased: this person's fields can never be read again"
            ),
            "Who": self.tr("Who"),
            "When": self.tr("When"),
            "Asked": self.tr("Asked"),
            "As a follow-up to": self.tr("As a follow-up to"),
            "Shown": self.tr("Shown"),
            "Withheld (not supported by the notes)": self.tr(
                "Withheld (not supported by the notes)"
            ),
            "none": self.tr("none"),
            "Asked / shown": self.tr("Asked / shown"),
            "erased": self.tr("erased"),
            "Sources cited": self.tr("Sources cited"),
            "Passages consulted": self.tr("Passages consulted"),
            "Grounding check": self.tr("Grounding check"),
        }

    def _on_show_json_toggled(self, shown: bool) -> None:
        self.audit_detail.setVisible(shown)

    # -- proofs and checkpoints (CT10) -----------------------------------------------------
    def _ask_proof_path(self, seq: int) -> Path | None:
        """The file dialog for a proof (tests replace this method)."""
        name, _ = QFileDialog.getSaveFileName(
            self,
            self.tr("Export a proof of record {0}").format(seq),
            f"record-{seq}.tlog-proof",
            self.tr("Transparency-log proofs (*.tlog-proof)"),
        )
        return Path(name) if name else None

    def _on_export_proof_clicked(self) -> None:
        seq = getattr(self, "_detail_seq", None)
        if self.service is None or seq is None:
            return
        path = self._ask_proof_path(seq)
        if path is not None:
            self.export_proof_to(seq, path)

    def export_proof_to(self, seq: int, path: Path) -> None:
        """Write the tlog-proof of record ``seq`` (against a new checkpoint) in a worker."""
        if self.service is None:
            return
        service = self.service

        def job(progress: Progress, emit: Emit) -> str:
            text = service.prove(seq).text()
            fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            return str(path)

        self.inspector_status.setText(self.tr("Writing the proof of record {0}…").format(seq))
        handle = self.workers.start("audit inspector: proof", job)
        handle.signals.succeeded.connect(self._on_proof_succeeded)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_proof_succeeded(self, path: Any) -> None:
        self.inspector_status.setText(
            self.tr(
                "Proof written to {0}: check it with the verifier key (Checkpoints and proofs)"
            ).format(path)
        )
        self.proof_exported.emit(str(path))

    def _on_copy_key_clicked(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.verifier_key.text())
        self.inspector_status.setText(self.tr("Verifier key copied"))

    def _on_inspector_tabs_current_changed(self, index: int) -> None:
        """The checkpoints are checked when their tab is first shown (again with the button)."""
        tab = self.inspector_tabs.widget(index)
        shown = tab is not None and tab.isAncestorOf(self.checkpoints_list)
        if shown and self.checkpoints_list.count() == 0 and self.check_checkpoints.isEnabled():
            self._on_check_checkpoints_clicked()

    def _on_check_checkpoints_clicked(self) -> None:
        if self.service is None:
            return
        service = self.service

        def job(progress: Progress, emit: Emit) -> list[CheckpointStatus]:
            return service.consistency_report()

        self.checkpoints_status.setText(self.tr("Checking the checkpoints…"))
        handle = self.workers.start("audit inspector: checkpoints", job)
        handle.signals.succeeded.connect(self._on_checkpoints_succeeded)
        handle.signals.failed.connect(self._on_checkpoints_failed)

    def _on_checkpoints_succeeded(self, statuses: Any) -> None:
        self.checkpoints_list.clear()
        first_broken: CheckpointStatus | None = None
        for status in statuses:
            checkpoint = status.checkpoint
            when = checkpoint.time[:19].replace("T", " ")
            if status.ok:
                mark = self.tr("consistent")
            elif status.first_broken:
                mark = self.tr("BROKEN — the first one the log breaks")
                first_broken = status
            else:
                mark = self.tr("broken")
            item = QListWidgetItem(
                self.tr("seq {0} · signed {1} UTC · {2}").format(checkpoint.seq, when, mark)
            )
            item.setToolTip(status.detail)
            item.setData(Qt.ItemDataRole.UserRole, checkpoint.seq)
            if not status.ok:
                item.setBackground(QBrush(BROKEN))
                item.setForeground(QBrush(ON_LIGHT))
            self.checkpoints_list.addItem(item)
        if not statuses:
            text = self.tr("No checkpoint yet: take one with `custodia audit checkpoint`.")
            self.checkpoints_status.setStyleSheet("")
        elif first_broken is None:
            text = self.tr("Today's log is consistent with all {0} checkpoints.").format(
                len(statuses)
            )
            self.checkpoints_status.setStyleSheet("color: #1b5e20")
        else:
            text = self.tr(
                "The log no longer matches the checkpoint at seq {0} (signed {1}): {2}"
            ).format(first_broken.checkpoint.seq, first_broken.checkpoint.time, first_broken.detail)
            self.checkpoints_status.setStyleSheet("color: #b00020; font-weight: bold")
        self.checkpoints_status.setText(text)
        self.checkpoints_checked.emit(list(statuses))

    def _on_checkpoints_failed(self, message: str, environment: bool) -> None:
        self.checkpoints_status.setText(
            self.tr("Cannot check the checkpoints: {0}").format(message)
        )

    def proof_dialog(self) -> ProofDialog:
        """The "Verify a proof file…" dialog, the key of this log filled in."""
        return ProofDialog(self.verifier_key.text(), self)

    def _on_verify_proof_file_clicked(self) -> None:
        self.proof_dialog().open()

    # -- verification ----------------------------------------------------------------------
    def _on_verify_chain_clicked(self) -> None:
        if self.service is None or self._verify_handle is not None:
            return
        service = self.service
        incremental = self.verify_incremental.isChecked()

        def job(progress: Progress, emit: Emit) -> VerifyResult:
            return service.verify(from_checkpoint=incremental, progress=progress)

        self.model.set_broken(None)
        self.verify_progress.setRange(0, 0)
        self.verify_status.setText(self.tr("Verifying…"))
        handle = self.workers.start("audit inspector: verify", job)
        self._verify_handle = handle
        self.cancel_verify.setEnabled(True)
        self._set_busy(False)
        handle.signals.progress.connect(self._on_verify_progress)
        handle.signals.succeeded.connect(self._on_verify_succeeded)
        handle.signals.failed.connect(self._on_verify_failed)
        handle.signals.cancelled.connect(self._on_verify_cancelled)
        handle.signals.finished.connect(self._on_verify_finished)

    def _on_cancel_verify_clicked(self) -> None:
        if self._verify_handle is not None:
            self._verify_handle.cancel()

    def _on_verify_progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.verify_progress.setRange(0, total)
            self.verify_progress.setValue(done)

    def _on_verify_succeeded(self, result: Any) -> None:
        self.verify_progress.setRange(0, 1)
        self.verify_progress.setValue(1)
        if result.ok:
            if result.start_seq:
                text = self.tr(
                    "Chain intact: {0} ({1} verified since the checkpoint at seq {2})"
                ).format(self._count(result.records), result.verified, result.start_seq)
            else:
                text = self.tr("Chain intact: {0} verified in {1:.2f} s").format(
                    self._count(result.records), result.seconds
                )
            self.verify_status.setText(text)
            self.verify_status.setStyleSheet("color: #1b5e20")
        else:
            broken = result.broken
            self.verify_status.setText(
                self.tr("Broken at seq {0}: {1} — {2}").format(
                    broken.seq, broken.reason, broken.detail
                )
            )
            self.verify_status.setStyleSheet("color: #b00020; font-weight: bold")
            self.model.set_broken(broken.seq)
            if self.model.ranged:
                self.select_seq(broken.seq)
            else:  # show everything so the broken row is there to select
                self._select_seq = broken.seq
                self._on_clear_filters_clicked()
        self.verified.emit(result)

    def _on_verify_failed(self, message: str, environment: bool) -> None:
        self.verify_progress.setRange(0, 1)
        self.verify_progress.setValue(0)
        self.verify_status.setText(self.tr("Verification failed: {0}").format(message))
        self.verify_status.setStyleSheet("color: #b00020")

    def _on_verify_cancelled(self) -> None:
        self.verify_progress.setRange(0, 1)
        self.verify_progress.setValue(0)
        self.verify_status.setText(self.tr("Verification cancelled"))
        self.verify_status.setStyleSheet("")

    def _on_verify_finished(self) -> None:
        self._verify_handle = None
        self.cancel_verify.setEnabled(False)
        self._set_busy(False)

    # -- erasure ---------------------------------------------------------------------------
    def _ask_forget(self) -> str | None:
        """Who to forget, confirmed with what will and will not be erased (tests replace
        this method)."""
        from PySide6.QtWidgets import QInputDialog

        name, ok = QInputDialog.getText(
            self, self.tr("Forget a person"), self.tr("The person's name, as the tutor knows it:")
        )
        name = name.strip()
        if not ok or not name:
            return None
        answer = QMessageBox.question(
            self,
            self.tr("Forget {0}?").format(name),
            self.tr(
                "{0}'s key will be destroyed: what they asked and were shown can never be read "
                "again, by anyone, and an erasure record is added to the log.\n\n"
                "Not erased: their records stay in the chain (sealed, unreadable), so the log "
                "still verifies; notes they imported into the tutor stay until deleted there; "
                "copies of the key store in your own backups are not reached."
            ).format(name),
        )
        return name if answer == QMessageBox.StandardButton.Yes else None

    def _on_forget_person_clicked(self) -> None:
        name = self._ask_forget()
        if name:
            self.forget(name)

    def forget(self, person: str) -> None:
        """Erase ``person`` in a worker (crypto-shredding), then show the log again."""
        if self.service is None:
            return
        service = self.service

        def job(progress: Progress, emit: Emit) -> str:
            return service.forget(person) or ""

        self.inspector_status.setText(self.tr("Forgetting…"))
        handle = self.workers.start("audit inspector: forget", job)
        handle.signals.succeeded.connect(self._on_forget_succeeded)
        handle.signals.failed.connect(self._on_job_failed)

    def _on_forget_succeeded(self, pseudonym: Any) -> None:
        if pseudonym:
            message = self.tr("Forgotten: the key of {0} is destroyed").format(pseudonym)
        else:
            message = self.tr("No key for that name: nothing to forget")
        self._after_reload_message = message
        self.filter_person.clear()
        self.reload()
        self.forgotten.emit(str(pseudonym))

    # -- export ----------------------------------------------------------------------------
    def _ask_export_path(self, fmt: str) -> Path | None:
        """The file dialog (tests replace this method)."""
        caption = self.tr("Export the audit log")
        pattern = self.tr("CSV files (*.csv)") if fmt == "csv" else self.tr("JSON lines (*.jsonl)")
        name, _ = QFileDialog.getSaveFileName(self, caption, f"audit.{fmt}", pattern)
        return Path(name) if name else None

    def _on_export_csv_clicked(self) -> None:
        path = self._ask_export_path("csv")
        if path is not None:
            self.export_to(path, "csv")

    def _on_export_jsonl_clicked(self) -> None:
        path = self._ask_export_path("jsonl")
        if path is not None:
            self.export_to(path, "jsonl")

    def _confirm_reveal(self) -> bool:
        """Asked before an export with decrypted fields (tests replace this method)."""
        answer = QMessageBox.question(
            self,
            self.tr("Export decrypted questions and answers?"),
            self.tr(
                "The file will hold, in clear, what each person asked and the answer they "
                "were shown. Export it only if you are authorised to read it, and keep it "
                "safe. The export is recorded in the audit log."
            ),
        )
        return answer == QMessageBox.StandardButton.Yes

    def export_to(self, path: Path, fmt: str) -> None:
        """Export the records the filters show to ``path`` in a worker (with their decrypted
        fields when ``export_reveal`` is checked and the reviewer confirms)."""
        if self.service is None:
            return
        service = self.service
        flt = self.current_filter()
        reveal = self.export_reveal.isChecked()
        if reveal and not self._confirm_reveal():
            return

        def job(progress: Progress, emit: Emit) -> int:
            return service.export_file(path, fmt, flt, progress, reveal=reveal)

        self.inspector_status.setText(self.tr("Exporting to {0}…").format(path))
        handle = self.workers.start("audit inspector: export", job)
        handle.signals.succeeded.connect(self._on_export_succeeded)
        handle.signals.failed.connect(self._on_job_failed)
        self._export_path = path

    def _on_export_succeeded(self, count: Any) -> None:
        self.inspector_status.setText(
            self.tr("Exported {0} to {1}").format(self._count(int(count)), self._export_path)
        )
        self.exported.emit(int(count))

    def shutdown(self) -> None:
        if self._verify_handle is not None:
            self._verify_handle.cancel()


class ProofDialog(QDialog):
    """Check a proof a colleague sent, with nothing but the files and the verifier key: an
    inclusion proof (``.tlog-proof``, optionally with the record's text), or a consistency
    proof between an older and a newer checkpoint."""

    #: the check's outcome: (ok, message)
    checked = Signal(bool, str)

    def __init__(self, key: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("proof_dialog")
        self.setWindowTitle(self.tr("Verify a proof file"))
        self.setMinimumWidth(620)
        form = QFormLayout()
        self.proof_path = self._file_row(form, self.tr("Proof file"), "proof_path")
        self.key = QLineEdit(key)
        self.key.setObjectName("proof_key")
        self.key.setCursorPosition(0)
        form.addRow(self.tr("Verifier key"), self.key)
        self.entry_path = self._file_row(
            form, self.tr("Record text (optional)"), "proof_entry_path"
        )
        self.old_path = self._file_row(
            form, self.tr("Older checkpoint (consistency)"), "proof_old_path"
        )
        self.new_path = self._file_row(
            form, self.tr("Newer checkpoint (consistency)"), "proof_new_path"
        )
        self.outcome = QLabel(
            self.tr(
                "An inclusion proof needs the proof file; a consistency proof also both "
                "checkpoints."
            )
        )
        self.outcome.setObjectName("proof_result")
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.check_button = buttons.addButton(
            self.tr("Check"), QDialogButtonBox.ButtonRole.ActionRole
        )
        self.check_button.setObjectName("proof_check")
        self.check_button.clicked.connect(self._on_check_clicked)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.outcome)
        layout.addWidget(buttons)

    def _file_row(self, form: QFormLayout, label: str, name: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setObjectName(name)
        browse = QPushButton(self.tr("Browse…"))
        row = QHBoxLayout()
        row.addWidget(edit, 1)
        row.addWidget(browse)
        form.addRow(label, row)

        def pick() -> None:
            path, _ = QFileDialog.getOpenFileName(self, label)
            if path:
                edit.setText(path)

        browse.clicked.connect(pick)
        return edit

    def _on_check_clicked(self) -> None:
        self.run_check()

    def run_check(self) -> bool:
        """Check what the fields name; show and return the outcome."""
        try:
            proof = _read_text(self.proof_path.text(), self.tr("proof"))
            key = self.key.text().strip()
            if self.old_path.text().strip() or self.new_path.text().strip():
                outcome = check_consistency(
                    _read_text(self.old_path.text(), self.tr("older checkpoint")),
                    _read_text(self.new_path.text(), self.tr("newer checkpoint")),
                    proof,
                    key,
                )
            else:
                entry = None
                if self.entry_path.text().strip():
                    try:
                        entry = Path(self.entry_path.text().strip()).read_bytes()
                    except OSError as err:
                        raise ProofFileError(str(err)) from None
                    entry = entry.removesuffix(b"\n")
                outcome = check_inclusion(proof, key, entry)
        except ProofFileError as err:
            self.outcome.setText(self.tr("Does NOT verify: {0}").format(err))
            self.outcome.setStyleSheet("color: #b00020; font-weight: bold")
            self.checked.emit(False, str(err))
            return False
        self.outcome.setText(outcome.line)
        self.outcome.setStyleSheet("color: #1b5e20; font-weight: bold")
        self.checked.emit(True, outcome.line)
        return True


def _read_text(path: str, what: str) -> str:
    if not path.strip():
        raise ProofFileError(f"choose the {what} file")
    try:
        return Path(path.strip()).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ProofFileError(f"cannot read the {what}: {err}") from None


def record_card(
    entry: Entry, status: str, personal: dict[str, Any] | None, labels: dict[str, str]
) -> str:
    """A record as a clinician reads it (HTML): who, when, what was asked, what was shown and
    which sentences were withheld, the sources cited; other events as their fields.
    ``labels`` are the words in the language shown (:meth:`InspectorPane.card_labels`)."""
    e = html.escape

    def _t(key: str) -> str:
        return labels.get(key, key)

    data = dict(entry.data)
    rows: list[tuple[str, str]] = []
    who = entry.pseudonym or _t("nobody in particular")
    if status == "erased":
        who += " — " + _t("erased: this person's fields can never be read again")
    rows.append((_t("Who"), e(who)))
    rows.append((_t("When"), e(entry.time[:19].replace("T", " ") + " UTC")))
    parts = [
        f"<h3>{e(entry.event_type)} · #{entry.seq}</h3>",
    ]
    if personal:
        if personal.get("question"):
            rows.append((_t("Asked"), e(str(personal["question"]))))
        if personal.get("follows"):
            rows.append((_t("As a follow-up to"), e(str(personal["follows"]))))
        shown = "\n\n".join(str(personal[k]) for k in ("heading", "answer") if personal.get(k))
        if shown:
            rows.append((_t("Shown"), e(shown).replace("\n", "<br>")))
        withheld = personal.get("unsupported") or []
        if isinstance(withheld, list):
            rows.append(
                (
                    _t("Withheld (not supported by the notes)"),
                    "<br>".join("• " + e(str(s)) for s in withheld) if withheld else _t("none"),
                )
            )
        rest = {
            k: v
            for k, v in personal.items()
            if k not in {"question", "follows", "heading", "answer", "unsupported"}
            and k not in {"model_sentences", "own_chunks"}
        }
        for key, value in rest.items():
            rows.append((e(key), e(value if isinstance(value, str) else json.dumps(value))))
    elif status == "erased":
        rows.append((_t("Asked / shown"), _t("erased")))
    cited = data.pop("cited", None)
    consulted = data.pop("chunks", None)
    if cited is not None:
        rows.append((_t("Sources cited"), "<br>".join(e(str(c)) for c in cited) or _t("none")))
    if consulted is not None:
        rows.append((_t("Passages consulted"), e(", ".join(str(c) for c in consulted)) or "—"))
    grounding = data.pop("grounding", None)
    if isinstance(grounding, dict):
        rows.append(
            (
                _t("Grounding check"),
                e(", ".join(f"{k}: {v}" for k, v in sorted(grounding.items()))),
            )
        )
    for key, value in sorted(data.items()):
        rows.append((e(key), e(value if isinstance(value, str) else json.dumps(value))))
    table = "".join(
        f"<tr><td valign='top' style='padding-right:12px'><b>{label}</b></td><td>{value}</td></tr>"
        for label, value in rows
    )
    parts.append(f"<table cellspacing='4'>{table}</table>")
    return "".join(parts)


def open_inspector(window: QMainWindow) -> InspectorPane:
    """Show the inspector docked in ``window`` (made on first use); return the pane.

    ``window`` needs ``audit`` (a :class:`~backends.services.Lazy` handle on the audit
    service) and ``workers`` (the main window has both); the tutor tab calls this with its
    window too.
    """
    dock = window.findChild(QDockWidget, "inspector_dock")
    if dock is None:
        audit: Lazy[AuditService] = window.audit  # type: ignore[attr-defined]
        workers: WorkerPool = window.workers  # type: ignore[attr-defined]
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


#: the order a reviewer reads a tutor turn's sealed fields in; others follow as stored
READING_ORDER = (
    "question",
    "heading",
    "answer",
    "unsupported",
    "model_sentences",
    "generated",
    "language",
    "own_chunks",
)


def _reading_order(personal: dict[str, Any] | None) -> dict[str, Any] | None:
    """``personal`` with what was asked and shown first (JSON keeps insertion order)."""
    if personal is None:
        return None
    first = {k: personal[k] for k in READING_ORDER if k in personal}
    return first | {k: v for k, v in personal.items() if k not in first}
