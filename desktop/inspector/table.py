"""The audit table's model: a windowed, lazily paged view of a log of any size.

It knows the row count, keeps at most ``MAX_PAGES`` pages of ``PAGE`` rows, and asks a worker
for a page the first time the view paints one of its rows (showing "…" until it arrives).
Unfiltered, row ``r`` is sequence number ``first_seq + r`` and a page is one ``seq BETWEEN``
query — a deleted record shows as a red "missing" row instead of silently closing up.
Filtered, pages come by offset from the database's indexes. A million rows scroll as
smoothly as a hundred.
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from backends.audit import AuditService, Entry, Filter
from backends.progress import Progress
from desktop.i18n import stamp
from desktop.workers import Emit, WorkerPool

log = logging.getLogger(__name__)

ModelIndex = QModelIndex | QPersistentModelIndex

PAGE = 200
MAX_PAGES = 64
BROKEN = QColor("#f8d0d0")
MISSING = QColor("#fde9c8")
ERASED = QColor("#e6e6e6")
#: text on the coloured rows above: dark on light in every theme (a dark theme's light text on
#: these light backgrounds was unreadable)
ON_LIGHT = QColor("#1a1a1a")


def records_text(count: int) -> str:
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
            background = self._background(row)
            return QBrush(background) if background is not None else None
        if role == Qt.ItemDataRole.ForegroundRole and row is not None:
            # text on a coloured row is dark, whatever the theme
            return QBrush(ON_LIGHT) if self._background(row) is not None else None
        if role == Qt.ItemDataRole.ToolTipRole and row is not None and row.entry is not None:
            if index.column() == 1:
                return row.entry.time  # the full stored time, microseconds and all
            return row.entry.hash
        if role == Qt.ItemDataRole.UserRole and row is not None:
            return row.seq
        return None

    def _background(self, row: Row) -> QColor | None:
        """The colour of a broken, missing or erased row (None: the view's own)."""
        if self.broken_seq is not None and row.seq == self.broken_seq:
            return BROKEN
        if row.entry is None:
            return MISSING
        if row.status == "erased":
            return ERASED
        return None

    def _display(self, row: Row, column: int) -> str:
        entry = row.entry
        assert entry is not None
        if column == 0:
            return str(entry.seq)
        if column == 1:
            return stamp(entry.time)  # to the second; UTC (header says)
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

        self._workers.start(
            f"audit page {page}",
            job,
            connect={"succeeded": self._on_page_succeeded, "failed": self._on_page_failed},
        )

    def _on_page_succeeded(self, result: tuple[int, int, list[Row]]) -> None:
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
