"""The commands' warnings on the terminal, in the user's language (issue 27).

A command's log lines are read by the person who typed it, not by a developer: in Spanish a
warning reads ``custodia: aviso: sesiones L2 degradada, se sigue sin ella: …``, never
``WARNING backends.multiagent: sessions L2 degraded…``. The messages themselves are marked
with :func:`backends.i18n._` where they are logged; this module writes their level in the
user's words and leaves out the logger's name (English keeps the lines as they were).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

from backends import i18n
from backends.i18n import N_, _

#: the levels as a person reads them
LEVELS = {
    "DEBUG": N_("debug"),
    "INFO": N_("note"),
    "WARNING": N_("warning"),
    "ERROR": N_("error"),
    "CRITICAL": N_("critical error"),
}
#: the English lines, unchanged
ENGLISH_FORMAT = "%(levelname)s %(name)s: %(message)s"


class UserFormatter(logging.Formatter):
    """English as before; any other language: ``custodia: <level>: <message>``."""

    def __init__(self) -> None:
        super().__init__(ENGLISH_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        if i18n.current() == i18n.DEFAULT:
            return super().format(record)
        level = LEVELS.get(record.levelname)
        shown = _(level) if level else record.levelname
        text = f"custodia: {shown}: {record.getMessage()}"
        if record.exc_info:  # a bug's traceback stays as Python writes it
            text += "\n" + self.formatException(record.exc_info)
        return text


class TerminalHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to the ``sys.stderr`` of the moment (a test's capture, a redirected stream)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(UserFormatter())

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        """StreamHandler sets it; the current ``sys.stderr`` is always used."""


def install(level: int = logging.WARNING) -> None:
    """As ``logging.basicConfig``: the terminal handler on the root logger when it has none."""
    root = logging.getLogger()
    if root.handlers:
        return
    root.addHandler(TerminalHandler())
    root.setLevel(level)
