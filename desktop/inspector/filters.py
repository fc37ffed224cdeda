"""The inspector's filter row: a person by name, a pseudonym, an event type, a date range.

It only holds and reads the fields (:meth:`FilterBar.current_filter`); the pane applies them
(Filter, Enter, a pick from the event list) and resolves a person's name through the key
store in a worker. The words are the pane's (translation context ``InspectorPane``): this row
was part of it, and its catalogue entries stay where they are.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QCoreApplication, QDate, QLocale
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDateEdit,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QWidget,
)

from backends import i18n
from backends.audit import Filter

#: the dates as the filter's fields and the date edits show them
DATE_FORMAT = "yyyy-MM-dd"


def shown_date_format() -> str:
    """How a date edit shows its date: as before in English, else the language's short form
    with the whole year (``2/12/2026`` in Spanish); the filter itself reads ISO dates."""
    if i18n.current() == i18n.DEFAULT:
        return DATE_FORMAT
    form = QLocale().dateFormat(QLocale.FormatType.ShortFormat)
    return form if "yyyy" in form else form.replace("yy", "yyyy")


class FilterBar(QWidget):
    """``filter_person``, ``filter_pseudonym``, ``filter_event``, ``filter_dates`` with
    ``filter_since`` / ``filter_until``, and ``apply_filters`` / ``clear_filters``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.filter_pseudonym = QLineEdit()
        self.filter_pseudonym.setObjectName("filter_pseudonym")
        self.filter_pseudonym.setPlaceholderText(
            QCoreApplication.translate("InspectorPane", "Pseudonym (p-…)")
        )
        self.filter_pseudonym.setClearButtonEnabled(True)
        self.filter_event = QComboBox()
        self.filter_event.setObjectName("filter_event")
        self.filter_event.setEditable(True)
        # typed text filters; it never becomes a permanent entry of the list
        self.filter_event.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.filter_event.setMinimumWidth(160)
        event_edit = self.filter_event.lineEdit()
        if event_edit is not None:
            event_edit.setPlaceholderText(QCoreApplication.translate("InspectorPane", "Any event"))
        self.filter_dates = QCheckBox(QCoreApplication.translate("InspectorPane", "From"))
        self.filter_dates.setObjectName("filter_dates")
        self.filter_since = self._date_edit("filter_since", QDate.currentDate().addDays(-30))
        self.filter_until = self._date_edit("filter_until", QDate.currentDate())
        self.apply_filters = QPushButton(QCoreApplication.translate("InspectorPane", "Filter"))
        self.apply_filters.setObjectName("apply_filters")
        self.clear_filters = QPushButton(QCoreApplication.translate("InspectorPane", "Show all"))
        self.clear_filters.setObjectName("clear_filters")
        self.filter_person = QLineEdit()
        self.filter_person.setObjectName("filter_person")
        self.filter_person.setPlaceholderText(
            QCoreApplication.translate("InspectorPane", "Person's name")
        )
        self.filter_person.setClearButtonEnabled(True)
        self.filter_person.setToolTip(
            QCoreApplication.translate(
                "InspectorPane",
                "For an authorised reviewer: find a person's records by name. The name is "
                "looked up through the pseudonym keys; it is never stored in clear.",
            )
        )
        # two rows: at the window's minimum width (760 px) one row cut the event field and
        # the buttons off (in English too; Spanish words are longer)
        layout = QGridLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        who = QHBoxLayout()
        who.addWidget(QLabel(QCoreApplication.translate("InspectorPane", "Person")))
        who.addWidget(self.filter_person, 2)
        who.addWidget(QLabel(QCoreApplication.translate("InspectorPane", "Pseudonym")))
        who.addWidget(self.filter_pseudonym, 2)
        who.addWidget(QLabel(QCoreApplication.translate("InspectorPane", "Event")))
        who.addWidget(self.filter_event, 2)
        when = QHBoxLayout()
        when.addWidget(self.filter_dates)
        when.addWidget(self.filter_since)
        when.addWidget(QLabel(QCoreApplication.translate("InspectorPane", "to")))
        when.addWidget(self.filter_until)
        when.addStretch(1)
        when.addWidget(self.apply_filters)
        when.addWidget(self.clear_filters)
        layout.addLayout(who, 0, 0)
        layout.addLayout(when, 1, 0)

    @staticmethod
    def _date_edit(name: str, date: QDate) -> QDateEdit:
        edit = QDateEdit(date)
        edit.setObjectName(name)
        edit.setCalendarPopup(True)
        edit.setDisplayFormat(shown_date_format())
        return edit

    def current_filter(self) -> Filter:
        """The filter the fields say (the person's name is the pane's to resolve); the end
        date is included."""
        since = until = ""
        if self.filter_dates.isChecked():
            since = self.filter_since.date().toString(DATE_FORMAT)
            until = self.filter_until.date().addDays(1).toString(DATE_FORMAT)
        return Filter(
            pseudonym=self.filter_pseudonym.text().strip(),
            event_type=self.filter_event.currentText().strip(),
            since=since,
            until=until,
        )

    def person(self) -> str:
        return self.filter_person.text().strip()

    def clear(self) -> None:
        """Every field empty: the whole log."""
        self.filter_person.clear()
        self.filter_pseudonym.clear()
        self.filter_event.setCurrentText("")
        self.filter_dates.setChecked(False)

    def set_event_types(self, event_types: Iterable[str]) -> None:
        """The event list as the log has them, keeping what is typed (no signal: not a pick)."""
        current = self.filter_event.currentText()
        self.filter_event.blockSignals(True)
        self.filter_event.clear()
        self.filter_event.addItems(["", *event_types])
        self.filter_event.setCurrentText(current)
        self.filter_event.blockSignals(False)
