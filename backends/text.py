"""Text that is not Unicode: undecodable command-line bytes, file names, lone surrogates.

Python hands undecodable bytes of ``argv`` and of file names over as lone surrogates
(``surrogateescape``: the byte 0xE9 becomes U+DCE9). Such a string is a ``str`` until it is
encoded — printed, hashed, stored, sent to a model — and then it is a ``UnicodeEncodeError``
far from where it came in. Backends that take user text check it at the door with
:func:`checked_text` (a clear :class:`InvalidTextError`), and whatever names a file shows it
with :func:`printable` (the bad bytes as ``\\xe9`` escapes).
"""

from __future__ import annotations

from backends.errors import CustodiaEnvironmentError


class InvalidTextError(CustodiaEnvironmentError):
    """User text that is not valid Unicode (undecodable bytes or a lone surrogate)."""


def bad_character(text: str) -> str:
    """What makes ``text`` unencodable, for a message ("" when it is valid UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        code = ord(text[err.start])
        where = f"at character {err.start + 1}"
        if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: a byte that was not UTF-8
            return f"the byte 0x{code - 0xDC00:02X} {where}, which is not UTF-8"
        return f"a lone surrogate U+{code:04X} {where}"
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


def checked_text(value: str, what: str) -> str:
    """``value`` if it is valid Unicode text, else :class:`InvalidTextError` naming ``what``."""
    problem = bad_character(value)
    if problem:
        raise InvalidTextError(
            f"{what} is not valid text: it holds {problem} ({printable(value)!r}); "
            "give it again in UTF-8"
        )
    return value
