"""Text that is not Unicode: undecodable command-line bytes, file names, lone surrogates.

Python hands undecodable bytes of ``argv`` and of file names over as lone surrogates
(``surrogateescape``: the byte 0xE9 becomes U+DCE9). Such a string is a ``str`` until it is
encoded — printed, hashed, stored, sent to a model — and then it is a ``UnicodeEncodeError``
far from where it came in. Backends that take user text check it at the door with
:func:`checked_text` (a clear :class:`InvalidTextError`), and whatever names a file shows it
with :func:`printable` (the bad bytes as ``\\xe9`` escapes).
"""

from __future__ import annotations

import codecs
import re

from backends.errors import CustodiaEnvironmentError
from backends.i18n import _


class InvalidTextError(CustodiaEnvironmentError):
    """User text that is not valid Unicode (undecodable bytes or a lone surrogate)."""


def bad_character(text: str) -> str:
    """What makes ``text`` unencodable, for a message ("" when it is valid UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(text[err.start])
        where = err.start + 1
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: a byte that was not UTF-8
            return _("the byte 0x{byte} at character {where}, which is not UTF-8").format(
                byte=f"{code - 0xDC00:02X}", where=where
            )
        return _("a lone surrogate U+{code} at character {where}").format(
            code=f"{code:04X}", where=where
        )
    return ""


def printable(text: str) -> str:
    """``text`` safe to print and encode: undecodable bytes as ``\\xNN``, lone surrogates as
    ``\\udNNN`` (valid text is returned unchanged)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


#: ``repr`` of a surrogate-escaped byte inside a message (an ``OSError`` names its file with
#: ``repr``): ``\\udcff`` stands for the byte 0xFF
_ESCAPED_BYTE = re.compile(r"\\udc([89a-f][0-9a-f])", re.IGNORECASE)


def printable_message(text: str) -> str:
    """A message for the user with every undecodable byte shown as ``\\xNN`` — raw (a file
    name) or already escaped by ``repr`` (``'caf\\udcff'`` inside an ``OSError``)."""
    return _ESCAPED_BYTE.sub(lambda m: "\\x" + m.group(1).lower(), printable(text))


def _escape_bytes(err: UnicodeError) -> tuple[str, int]:
    """The ``errors=`` handler of the commands' output: ``\\xNN`` for an undecodable byte of
    a file name (never ``\\udcNN``), ``\\uNNNN`` for any other unencodable character."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    out = []
    for char in err.object[err.start : err.end]:
        code = ord(char)
        out.append(f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}")
    return "".join(out), err.end


#: the name to give ``reconfigure(errors=...)``
OUTPUT_ERRORS = "custodia.escape_bytes"
codecs.register_error(OUTPUT_ERRORS, _escape_bytes)


def checked_text(value: str, what: str) -> str:
    """``value`` if it is valid Unicode text, else :class:`InvalidTextError` naming ``what``."""
    problem = bad_character(value)
    if problem:
        raise InvalidTextError(
            _(
                "{what} is not valid text: it holds {problem} ({text!r}); give it again in UTF-8"
            ).format(what=_(what), problem=problem, text=printable(value))
        )
    return value
