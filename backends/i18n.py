"""The user's language, for the commands and the messages of the backends (no Qt here).

One setting, ``language`` (``custodia.toml``, ``CUSTODIA_LANGUAGE``, Settings ▸ Language), is
``"system"``, ``"en"`` or ``"es"``; :func:`resolve` turns it into the language to show, and
``"system"`` reads the locale variables (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, as gettext
does; the window passes Qt's own idea of the system locale instead). :func:`install` loads
the gettext catalogue ``resources/i18n/<lang>/LC_MESSAGES/custodia.mo`` (compiled from the
``.po`` by ``scripts/i18n.py compile``) and points argparse's own words ("usage:",
"options:", ...) at it too, so a Spanish ``custodia --help`` has no English left.

Messages are marked with :func:`_` (and :func:`ngettext`) at the point they are shown, so a
module-level constant is marked with :func:`N_` and translated when used.
"""

from __future__ import annotations

import argparse
import contextlib
import gettext
import os
import sys
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path

#: what the ``language`` setting accepts
SETTINGS = ("system", "en", "es")
#: the languages Custodia is written in (English is the source: it needs no catalogue)
LANGUAGES = ("en", "es")
DEFAULT = "en"
DOMAIN = "custodia"

_translation: gettext.NullTranslations = gettext.NullTranslations()
_language = DEFAULT


def catalogue_dir() -> Path:
    """``resources/i18n`` of the source tree, or of a PyInstaller bundle."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources" / "i18n"
    return Path(__file__).resolve().parents[1] / "resources" / "i18n"


def from_locale_name(name: str) -> str | None:
    """``"es_ES.UTF-8"``, ``"es"``, ``"es-419"`` -> ``"es"``; an unknown or empty name -> None."""
    code = name.strip().split(".")[0].split("@")[0].replace("-", "_").split("_")[0].lower()
    if code in LANGUAGES:
        return code
    return None


def system_language(environ: Mapping[str, str] | None = None) -> str:
    """The language the locale variables ask for, as gettext reads them (the first one set
    wins: ``LANGUAGE``'s first entry, ``LC_ALL``, ``LC_MESSAGES``, ``LANG``); English when
    none names a language Custodia has."""
    env = os.environ if environ is None else environ
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(var, "")
        if not value:
            continue
        first = value.split(":")[0]
        if first in ("C", "POSIX") or first.startswith(("C.", "POSIX.")):
            return DEFAULT
        return from_locale_name(first) or DEFAULT
    return DEFAULT


def resolve(
    setting: str, environ: Mapping[str, str] | None = None, system: str | None = None
) -> str:
    """The language to show for ``setting``: itself when it names one, else the system's
    (``system`` if given, as the window reads it from Qt; else the locale variables)."""
    if setting in LANGUAGES:
        return setting
    if system is not None:
        return from_locale_name(system) or DEFAULT
    return system_language(environ)


def load(language: str) -> gettext.NullTranslations:
    """The catalogue for ``language``; English, or a catalogue not compiled yet, translates
    nothing (the messages are written in English)."""
    if language == DEFAULT:
        return gettext.NullTranslations()
    return gettext.translation(
        DOMAIN, localedir=str(catalogue_dir()), languages=[language], fallback=True
    )


def install(language: str) -> str:
    """Use ``language`` for every message from now on (and argparse's own words); returns
    the language installed."""
    global _translation, _language
    _translation = load(language)
    _language = language if language in LANGUAGES else DEFAULT
    # argparse calls its module's `_` and `ngettext` (Python 3.11: imported from gettext),
    # looked up each time a message is made, so rebinding them translates its words too
    argparse._ = gettext_  # type: ignore[attr-defined]
    argparse.ngettext = ngettext  # type: ignore[attr-defined]
    return _language


@contextlib.contextmanager
def speaking(language: str) -> Iterator[str]:
    """Messages in ``language`` inside the block, then in the installed one again: the
    tutor's command frames its answer in the question's language (issue 27). For a command's
    main thread; the window translates on its own side."""
    global _translation, _language
    saved = _translation, _language
    if language != _language:
        _translation = load(language)
        _language = language if language in LANGUAGES else DEFAULT
    try:
        yield _language
    finally:
        _translation, _language = saved


def current() -> str:
    """The language installed (``"en"`` before :func:`install`)."""
    return _language


def gettext_(message: str) -> str:
    """``message`` in the installed language."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of ``singular``/``plural`` for ``n``, in the installed language."""
    return _translation.ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """``message`` in the installed language as ``context`` means it: one English word may
    be two Spanish ones (a session's phase "done" is "terminada", a migration's "hecho")."""
    return _translation.pgettext(context, message)


#: how each language writes a number: the thousands separator, the decimal mark, and the
#: fewest digits left of a group for the group to be marked (CLDR's minimumGroupingDigits,
#: as QLocale and Babel apply it: Spanish writes 2048 and 12.345, English 2,048 and 12,345)
NUMBER_SYMBOLS: dict[str, tuple[str, str, int]] = {"en": (",", ".", 1), "es": (".", ",", 2)}


def number(value: float, decimals: int | None = 0, language: str | None = None) -> str:
    """``value`` as the installed language (or ``language``) writes it, with ``decimals``
    digits after the mark: ``2,048`` and ``22.0`` in English, ``22,0`` and ``12.345`` in
    Spanish; the desktop writes the same with QLocale (``desktop.i18n.number``).
    ``decimals=None``: as few as the value needs, up to three (``5``, ``0,25``), as ``:g``."""
    group, point, fewest = NUMBER_SYMBOLS.get(language or _language, NUMBER_SYMBOLS[DEFAULT])
    if decimals is None:
        text = f"{abs(value):.3f}".rstrip("0").rstrip(".")
    else:
        text = f"{abs(value):.{decimals}f}"
    whole, _dot, fraction = text.partition(".")
    if len(whole) >= 3 + fewest:
        head = len(whole) % 3 or 3
        whole = group.join([whole[:head]] + [whole[i : i + 3] for i in range(head, len(whole), 3)])
    sign = "-" if value < 0 and text.strip("0.") else ""
    return sign + whole + (point + fraction if fraction else "")


def date_time(moment: datetime) -> str:
    """A date and time as the installed language writes it: ``2026-12-02 17:18`` in English
    (as before), QLocale's short form elsewhere (Spanish ``2/12/26 17:18``), as the window's
    ``desktop.i18n.when`` writes it."""
    if _language == "es":
        return f"{moment.day}/{moment.month}/{moment:%y} {moment.hour}:{moment:%M}"
    return f"{moment:%Y-%m-%d %H:%M}"


def named(text: str) -> str:
    """A name with its engine in brackets (``"sessions L2 (redis)"``) in the installed
    language: the whole when the catalogue has it, else the name before the brackets and
    the engine in them, each when it has it (``"sesiones L1 (memoria)"``)."""
    whole = gettext_(text)
    if whole != text:
        return whole
    name, bracket, rest = text.partition(" (")
    if rest.endswith(")") and "(" not in rest:
        rest = gettext_(rest[:-1]) + ")"
    return gettext_(name) + bracket + rest


def N_(message: str) -> str:
    """Mark ``message`` for extraction only; translate it with :func:`_` where it is shown."""
    return message


_ = gettext_
