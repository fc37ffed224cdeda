"""What a conversation is called, and text made fit to store: its id, its name, the title
made from its first message, and the repair of text UTF-8 cannot hold.

Apart from :mod:`.files` because none of it touches the disk: the importers, the CLI and the
agent tidy names and repair text with these too.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from datetime import UTC, datetime

from backends.conversations.errors import InvalidNameError
from backends.i18n import _

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")

# -- text that UTF-8 cannot hold ----------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
#: what replaces a character UTF-8 cannot encode (a lone surrogate)
REPLACEMENT = "\ufffd"


def repair_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many were replaced.

    Lone surrogates come from bytes that are not UTF-8 (``$'caf\\xe9'`` on a command line
    arrives as ``'caf\\udce9'``) or from a JSON escape such as ``"\\udfff"``; UTF-8 cannot
    encode them, so left in they crash the file, the index and the cipher. A valid pair is
    joined into its character.
    """
    if _SURROGATE.search(text) is None:
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count(REPLACEMENT) - text.count(REPLACEMENT)


def clean_text(text: str) -> str:
    """:func:`repair_text` without the count (writing and reading: never crash)."""
    return repair_text(text)[0]


def repaired_notice(count: int, what: str) -> str:
    """The notice shown when ``count`` characters of ``what`` were repaired ("" when none)."""
    if not count:
        return ""
    return (
        f"{what}: {count} character(s) that are not valid text (invalid UTF-8 or a lone "
        f"surrogate) replaced by {REPLACEMENT}"
    )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_id() -> str:
    return uuid.uuid4().hex


def is_valid_id(value: str) -> bool:
    return bool(_ID.match(value))


# -- names ------------------------------------------------------------------------------------

#: the longest conversation name, in characters (after tidying)
MAX_NAME = 200


def tidy_name(name: str) -> str:
    """``name`` on one line: whitespace runs (newlines, tabs) become one space, control
    characters (a terminal escape, a NUL) are dropped, the ends are stripped."""
    cleaned = "".join(c for c in clean_text(name) if c.isspace() or unicodedata.category(c) != "Cc")
    return " ".join(cleaned.split())


def check_name(name: str) -> str:
    """The tidied name, or :class:`InvalidNameError` when it is empty or too long."""
    tidied = tidy_name(name)
    if not tidied:
        raise InvalidNameError(_("a conversation needs a name (it is empty)"))
    if len(tidied) > MAX_NAME:
        raise InvalidNameError(
            _("a conversation name is at most {most} characters (this one has {count})").format(
                most=MAX_NAME, count=len(tidied)
            )
        )
    return tidied


def fit_title(value: object) -> str:
    """A stored title as shown (one line, at most :data:`MAX_NAME`), "" when it is not text
    or empty (then the name is shown; never the "Conversation" placeholder)."""
    if not isinstance(value, str) or not tidy_name(value):
        return ""
    return fit_name(value)


def fit_name(name: str, default: str = "Conversation") -> str:
    """The tidied name cut to :data:`MAX_NAME` with "…" (imports, listings: never refused)."""
    tidied = tidy_name(name) or default
    return tidied if len(tidied) <= MAX_NAME else tidied[: MAX_NAME - 1] + "…"


#: the longest title made from a first message (characters)
TITLE_CHARS = 60
_TITLE_LEAD = re.compile(r"^(?:#{1,6}\s+|>\s*)+")
_TITLE_MARKUP = re.compile(r"\*\*|__|`+")


def make_title(message: str) -> str:
    """A short title from a first message: its first line, cut at a word near
    :data:`TITLE_CHARS` with "…"; "" when nothing is left."""
    text = tidy_name(message.strip().splitlines()[0] if message.strip() else "")
    # Markdown emphasis and code marks, a heading's or quote's lead: not part of a title
    text = _TITLE_MARKUP.sub("", _TITLE_LEAD.sub("", text)).strip()
    if len(text) <= TITLE_CHARS:
        return text
    cut = text[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= TITLE_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"
