"""The window's language: Qt translators for Custodia's own strings and Qt's standard ones.

Installed once at start-up, before any widget is built (a widget reads its ``tr()`` strings
when it is made): ``resources/i18n/custodia_<lang>.qm`` (compiled from the ``.ts`` by
``scripts/i18n.py compile``) and Qt's ``qtbase_<lang>.qm`` (the standard buttons and
dialogs). The same language is installed for the backends' messages
(:func:`backends.i18n.install`), and QLocale's default follows it, so dates and numbers are
written the way the language writes them. A change in Settings ▸ Language is applied at the
next start.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from PySide6.QtCore import (
    QCoreApplication,
    QDate,
    QDateTime,
    QLibraryInfo,
    QLocale,
    QTime,
    QTranslator,
)
from PySide6.QtWidgets import QLabel

from backends import failures, i18n

log = logging.getLogger(__name__)

#: the translators installed (kept referenced: Qt does not own them)
_installed: list[QTranslator] = []
#: QLocale's default before :func:`install`, put back by :func:`uninstall`
_locale_before: list[QLocale] = []


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:
    """Mark ``text`` for lupdate under ``context``; it is translated where it is shown
    (``QCoreApplication.translate(context, text)``, or ``self.tr(text)`` in that class).
    QtCore's own is typed ``object``; lupdate knows the name."""
    return text


#: configuration values shown to the user (custodia.toml keeps them as they are)
CONFIG_WORDS = (
    QT_TRANSLATE_NOOP("config", "embedded"),
    QT_TRANSLATE_NOOP("config", "server"),
    QT_TRANSLATE_NOOP("config", "memory"),
)


def config_word(value: str) -> str:
    """A configuration value (``profile = "embedded"``) as the window shows it."""
    return QCoreApplication.translate("config", value) if value in CONFIG_WORDS else value


def language_names() -> list[tuple[str, str]]:
    """(setting, what the language chooser shows): each language in its own name, and the
    system's, named after what it resolves to now."""
    system = i18n.resolve("system", system=QLocale.system().name())
    own = {"en": "English", "es": "Español"}
    return [
        (
            "system",
            QCoreApplication.translate("config", "System language ({0})").format(own[system]),
        ),
        ("en", own["en"]),
        ("es", own["es"]),
    ]


def number(value: float, decimals: int = 0) -> str:
    """``value`` as the language writes it: English as before (``1,234``, ``0.28``), else
    QLocale's (``1.234``, ``0,28``)."""
    if i18n.current() == i18n.DEFAULT:
        return f"{value:,.{decimals}f}"
    return QLocale().toString(float(value), "f", decimals)


def when(timestamp: float, form: str = "%Y-%m-%d %H:%M") -> str:
    """A local time: as before in English (``form``), else with QLocale's short date
    (``2/12/26 8:50``, or ``2/12/26`` when ``form`` has no hour); a time of day alone (no
    ``%d`` in ``form``) reads the same in both."""
    local = time.localtime(timestamp)
    if i18n.current() == i18n.DEFAULT or "%d" not in form:
        return time.strftime(form, local)
    moment = QDateTime.fromSecsSinceEpoch(int(timestamp))
    if "%H" not in form:
        return QLocale().toString(moment.date(), QLocale.FormatType.ShortFormat)
    return QLocale().toString(moment, QLocale.FormatType.ShortFormat)


def iso_when(text: str) -> str:
    """A date the stores keep as ISO text (``2026-12-02`` or ``2026-12-02T11:40:00+00:00``)
    as the language writes it, the wall-clock time it names unconverted: in English
    ``2026-12-02 11:40`` (to the minute, as the lists showed it), else QLocale's short form
    (``2/12/26 11:40``). Text that is no ISO date is shown as it is."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return text
    with_time = len(text.strip()) > 10
    if i18n.current() == i18n.DEFAULT:
        return parsed.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")
    day = QDate(parsed.year, parsed.month, parsed.day)
    if not with_time:
        return QLocale().toString(day, QLocale.FormatType.ShortFormat)
    moment = QDateTime(day, QTime(parsed.hour, parsed.minute))
    return QLocale().toString(moment, QLocale.FormatType.ShortFormat)


def show_message(widget: QLabel, text: str) -> None:
    """Show a message without its details (the library's or the OS's own words, in English
    whatever the language: :mod:`backends.failures`); the whole message, details included,
    in the tooltip."""
    main, details = failures.split(text)
    widget.setText(main)
    widget.setToolTip(text if details else "")


def short_message(text: str) -> str:
    """A message without its details, for a cell or a one-line status."""
    return failures.split(text)[0]


def with_details_of(text: str, message: str) -> str:
    """``text`` (which quotes ``message`` without its details) with ``message``'s details
    after it again, where :func:`show_message` finds them."""
    return failures.with_details(text, failures.split(message)[1])


def stamp(text: str) -> str:
    """A stored UTC time (``2026-12-02T17:03:50.123+00:00``) to the second, unconverted: as
    before in English (``2026-12-02 17:03:50``), else the language's short date and the
    time (``2/12/26 17:03:50``). Text that is no ISO time is shown as it is."""
    shown = text[:19].replace("T", " ")
    if i18n.current() == i18n.DEFAULT:
        return shown
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return shown
    day = QLocale().toString(
        QDate(parsed.year, parsed.month, parsed.day), QLocale.FormatType.ShortFormat
    )
    return f"{day} {parsed:%H:%M:%S}"


def qm_path(language: str) -> str:
    return str(i18n.catalogue_dir() / f"custodia_{language}.qm")


def install(setting: str) -> str:
    """Install the translators for ``setting`` ("system", "en", "es"); return the language
    shown. A catalogue that is missing leaves those strings in English (logged)."""
    uninstall()
    system = QLocale.system()
    language = i18n.resolve(setting, system=system.name())
    i18n.install(language)
    _locale_before.append(QLocale())
    shown = i18n.from_locale_name(system.name()) or i18n.DEFAULT
    if shown != language:  # else the system's own formats (its country's), as before
        QLocale.setDefault(QLocale(language))
    if language == i18n.DEFAULT:
        return language
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for name, folder in (
        (f"qtbase_{language}", qt_dir),
        (f"custodia_{language}", str(i18n.catalogue_dir())),
    ):
        translator = QTranslator()
        if translator.load(name, folder):
            QCoreApplication.installTranslator(translator)
            _installed.append(translator)
        else:
            log.warning("no %s.qm in %s: those strings stay in English", name, folder)
    return language


def uninstall() -> None:
    """Remove what :func:`install` installed (tests switch languages within one process)."""
    while _installed:
        QCoreApplication.removeTranslator(_installed.pop())
    if _locale_before:
        QLocale.setDefault(_locale_before.pop())
        _locale_before.clear()
    i18n.install(i18n.DEFAULT)
