"""The audit inspector's pane: filter the log, read a record, verify, prove, export, forget.

Nothing here touches the log on the GUI thread: opening it, counting, every page of the
table (:mod:`desktop.inspector.table`), revealing a record, verifying and exporting run in the
window's worker pool and come back as signals. The record tab and the checkpoints tab are
panels of their own (:mod:`~desktop.inspector.record`, :mod:`~desktop.inspector.checkpoints`);
the pane keeps the service and starts every job.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from backends import i18n
from backends.audit import AuditService, CheckpointStatus, Filter, VerifyResult
from backends.progress import Progress
from desktop.i18n import number, short_message, show_message, with_details_of
from desktop.inspector.card import RECORD_HEADING, reading_order, record_card
from desktop.inspector.checkpoints import CheckpointsPanel
from desktop.inspector.filters import FilterBar
from desktop.inspector.proofs import ProofDialog
from desktop.inspector.record import RecordPanel
from desktop.inspector.table import AuditTableModel, View, records_text
from desktop.workers import Emit, JobHandle, WorkerPool

log = logging.getLogger(__name__)

#: how the pane gets the audit service (built on first use, in a worker)
ServiceSource = Callable[[], AuditService]


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
        """:func:`~desktop.inspector.table.records_text` in the language shown (its plural
        forms, the locale's separators)."""
        if i18n.current() == i18n.DEFAULT:
            return records_text(count)
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
        #: said before the next view's line (what Forget did)
        self._after_reload_message = ""
        #: where the running export writes
        self._export_path: Path | None = None

        self.model = AuditTableModel(workers, self)
        self._build()
        self._connect_signals()
        self._set_busy(True)
        self.reload()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        self.filters = FilterBar()
        self.filter_person = self.filters.filter_person
        self.filter_pseudonym = self.filters.filter_pseudonym
        self.filter_event = self.filters.filter_event
        self.filter_dates = self.filters.filter_dates
        self.filter_since = self.filters.filter_since
        self.filter_until = self.filters.filter_until
        self.apply_filters = self.filters.apply_filters
        self.clear_filters = self.filters.clear_filters
        #: Enter on a listed event type emits both signals that filter: they coalesce here
        self._apply_filters_timer = QTimer(self)
        self._apply_filters_timer.setSingleShot(True)
        self._apply_filters_timer.setInterval(0)
        layout.addWidget(self.filters)

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

        self.record = RecordPanel()
        self.audit_card = self.record.audit_card
        self.audit_detail = self.record.audit_detail
        self.show_json = self.record.show_json
        self.export_proof = self.record.export_proof
        self.checkpoints = CheckpointsPanel()
        self.verifier_key = self.checkpoints.verifier_key
        self.copy_key = self.checkpoints.copy_key
        self.check_checkpoints = self.checkpoints.check_checkpoints
        self.checkpoints_list = self.checkpoints.checkpoints_list
        self.checkpoints_status = self.checkpoints.checkpoints_status
        self.verify_proof_file = self.checkpoints.verify_proof_file

        self.inspector_tabs = QTabWidget()
        self.inspector_tabs.setObjectName("inspector_tabs")
        self.inspector_tabs.addTab(self.record, self.tr("Record"))
        self.inspector_tabs.addTab(self.checkpoints, self.tr("Checkpoints and proofs"))
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
        # three rows: in one, the verdict and the log's actions made the pane ~1,300 px wide
        # in Spanish, so at the window's minimum width (760 px) the dock scrolled sideways
        # and its filters were cut at the right
        for widget in (
            self.verify_chain,
            self.verify_incremental,
            self.cancel_verify,
            self.verify_progress,
        ):
            actions.addWidget(widget)
        actions.addStretch(1)
        layout.addLayout(actions)
        self.verify_status.setWordWrap(True)
        layout.addWidget(self.verify_status)
        log_actions = QHBoxLayout()
        for widget in (self.refresh_log, self.forget_person):
            log_actions.addWidget(widget)
        log_actions.addStretch(1)
        for widget in (self.export_reveal, self.export_csv, self.export_jsonl):
            log_actions.addWidget(widget)
        layout.addLayout(log_actions)
        self.inspector_status = QLabel("")
        self.inspector_status.setObjectName("inspector_status")
        self.inspector_status.setWordWrap(True)
        layout.addWidget(self.inspector_status)

    def _connect_signals(self) -> None:
        self.model.page_failed.connect(self._on_page_failed)
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
        self.export_proof.clicked.connect(self._on_export_proof_clicked)
        self.copy_key.clicked.connect(self._on_copy_key_clicked)
        self.check_checkpoints.clicked.connect(self._on_check_checkpoints_clicked)
        self.verify_proof_file.clicked.connect(self._on_verify_proof_file_clicked)
        self.inspector_tabs.currentChanged.connect(self._on_inspector_tabs_current_changed)

    # -- filters and loading ---------------------------------------------------------------
    def current_filter(self) -> Filter:
        return self.filters.current_filter()

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
        person = self.filters.person()
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
        show_message(self.inspector_status, self.tr("Loading the audit log…"))
        self.workers.start(
            "audit inspector: load",
            job,
            connect={
                "succeeded": self._on_view_succeeded,
                "failed": self._on_job_failed,
            },
        )

    def _on_view_succeeded(self, view: View) -> None:
        self.service = view.service
        self.model.set_view(view)
        self.filters.set_event_types(view.event_types)
        self.record.clear()
        try:
            self.checkpoints.show_key(view.service.verifier_key())
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
        message = self._after_reload_message
        if message:
            text, self._after_reload_message = f"{message} · {text}", ""
        show_message(self.inspector_status, text)
        self._set_busy(False)
        if self._select_seq is not None:
            seq, self._select_seq = self._select_seq, None
            self.select_seq(seq)
        self.view_ready.emit()

    def _on_job_failed(self, message: str, environment: bool) -> None:
        self._set_busy(False)
        prefix = self.tr("Audit log unavailable") if environment else self.tr("Unexpected error")
        show_message(self.inspector_status, f"{prefix}: {message}")

    def _on_page_failed(self, message: str) -> None:
        text = self.tr("Some records could not be read: {0} (Refresh to try again)")
        show_message(
            self.inspector_status, with_details_of(text.format(short_message(message)), message)
        )

    def _on_filter_event_activated(self, index: int) -> None:
        """An event type picked from the list filters at once."""
        self._apply_filters_timer.start()

    def _on_apply_filters_clicked(self) -> None:
        self.reload()

    def _on_clear_filters_clicked(self) -> None:
        self.filters.clear()
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
                    "personal": reading_order(revealed.personal),
                    "fields": entry.data,
                    "hash": entry.hash,
                },
                ensure_ascii=False,
                indent=2,
            )
            card = record_card(entry, revealed.status, revealed.personal, labels)
            return seq, f"{shown}\n\n{RECORD_HEADING}\n{entry.record}", card

        self.workers.start(
            "audit inspector: detail",
            job,
            connect={
                "succeeded": self._on_detail_succeeded,
                "failed": self._on_job_failed,
            },
        )

    def _on_detail_succeeded(self, result: tuple[int, str, str]) -> None:
        seq, text, card = result
        self.record.show_record(seq, text, card, broken=self.model.broken_seq == seq)
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
        seq = self.record.seq
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

        show_message(self.inspector_status, self.tr("Writing the proof of record {0}…").format(seq))
        self.workers.start(
            "audit inspector: proof",
            job,
            connect={
                "succeeded": self._on_proof_succeeded,
                "failed": self._on_job_failed,
            },
        )

    def _on_proof_succeeded(self, path: str) -> None:
        show_message(
            self.inspector_status,
            self.tr(
                "Proof written to {0}: check it with the verifier key (Checkpoints and proofs)"
            ).format(path),
        )
        self.proof_exported.emit(str(path))

    def _on_copy_key_clicked(self) -> None:
        clipboard = QGuiApplication.clipboard()
        if clipboard is not None:
            clipboard.setText(self.verifier_key.text())
        show_message(self.inspector_status, self.tr("Verifier key copied"))

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

        self.checkpoints.show_checking()
        self.workers.start(
            "audit inspector: checkpoints",
            job,
            connect={
                "succeeded": self._on_checkpoints_succeeded,
                "failed": self._on_checkpoints_failed,
            },
        )

    def _on_checkpoints_succeeded(self, statuses: list[CheckpointStatus]) -> None:
        self.checkpoints.show_statuses(statuses)
        self.checkpoints_checked.emit(list(statuses))

    def _on_checkpoints_failed(self, message: str, environment: bool) -> None:
        self.checkpoints.show_failure(message)

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
        show_message(self.verify_status, self.tr("Verifying…"))
        self._verify_handle = self.workers.start(
            "audit inspector: verify",
            job,
            connect={
                "progress": self._on_verify_progress,
                "succeeded": self._on_verify_succeeded,
                "failed": self._on_verify_failed,
                "cancelled": self._on_verify_cancelled,
                "finished": self._on_verify_finished,
            },
        )
        self.cancel_verify.setEnabled(True)
        self._set_busy(False)

    def _on_cancel_verify_clicked(self) -> None:
        if self._verify_handle is not None:
            self._verify_handle.cancel()

    def _on_verify_progress(self, done: int, total: int, message: str) -> None:
        if total > 0:
            self.verify_progress.setRange(0, total)
            self.verify_progress.setValue(done)

    def _on_verify_succeeded(self, result: VerifyResult) -> None:
        self.verify_progress.setRange(0, 1)
        self.verify_progress.setValue(1)
        if result.ok:
            if result.start_seq:
                text = self.tr(
                    "Chain intact: {0} ({1} verified since the checkpoint at seq {2})"
                ).format(self._count(result.records), number(result.verified), result.start_seq)
            else:
                text = self.tr("Chain intact: {0} verified in {1} s").format(
                    self._count(result.records), number(result.seconds, 2)
                )
            show_message(self.verify_status, text)
            self.verify_status.setStyleSheet("color: #1b5e20")
        else:
            broken = result.broken
            assert broken is not None  # a chain that does not verify says where it breaks
            # the reason and detail as the backends wrote them in the user's language
            show_message(
                self.verify_status,
                self.tr("Broken at seq {0}: {1} — {2}").format(
                    broken.seq, broken.reason_text(), broken.detail_text()
                ),
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
        show_message(self.verify_status, self.tr("Verification failed: {0}").format(message))
        self.verify_status.setStyleSheet("color: #b00020")

    def _on_verify_cancelled(self) -> None:
        self.verify_progress.setRange(0, 1)
        self.verify_progress.setValue(0)
        show_message(self.verify_status, self.tr("Verification cancelled"))
        self.verify_status.setStyleSheet("")

    def _on_verify_finished(self) -> None:
        self._verify_handle = None
        self.cancel_verify.setEnabled(False)
        self._set_busy(False)

    # -- erasure ---------------------------------------------------------------------------
    def _ask_forget(self) -> str | None:
        """Who to forget, confirmed with what will and will not be erased (tests replace
        this method)."""
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

        show_message(self.inspector_status, self.tr("Forgetting…"))
        self.workers.start(
            "audit inspector: forget",
            job,
            connect={
                "succeeded": self._on_forget_succeeded,
                "failed": self._on_job_failed,
            },
        )

    def _on_forget_succeeded(self, pseudonym: str) -> None:
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

        show_message(self.inspector_status, self.tr("Exporting to {0}…").format(path))
        self.workers.start(
            "audit inspector: export",
            job,
            connect={
                "succeeded": self._on_export_succeeded,
                "failed": self._on_job_failed,
            },
        )
        self._export_path = path

    def _on_export_succeeded(self, count: int) -> None:
        show_message(
            self.inspector_status,
            self.tr("Exported {0} to {1}").format(self._count(int(count)), self._export_path),
        )
        self.exported.emit(int(count))

    def shutdown(self) -> None:
        if self._verify_handle is not None:
            self._verify_handle.cancel()
