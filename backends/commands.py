"""What every assistant's commands share: argparse types, the shared command groups
(``custodia ask <assistant>``, ``custodia reindex <assistant>``) and how a closed pipe ends a
command. Below the assistants in the layers: an assistant's ``cli.py`` imports this, never
the composition layer's :mod:`backends.cli`."""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import TypeAlias

from backends.i18n import _

SubParsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


#: exit status when the reader of stdout left (``… | head``): 128 + SIGPIPE, as shells report
PIPE_CLOSED = 141

#: the largest count an option takes (SQLite's LIMIT is a 64-bit integer; nobody lists more)
MAX_COUNT = 1_000_000_000


def positive_int(text: str) -> int:
    """argparse type: a whole number ≥ 1 (a count of 0 or less is a usage error, exit 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("must be a positive integer, not {text!r}").format(text=text)
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            _("must be a positive integer, not {value}").format(value=value)
        )
    if value > MAX_COUNT:
        raise argparse.ArgumentTypeError(
            _("must be at most {most}, not {value}").format(most=f"{MAX_COUNT:,}", value=value)
        )
    return value


def shared_subparsers(sub: SubParsers, name: str, help: str, dest: str) -> SubParsers:
    """``custodia <name> <assistant> ...``, a command group each assistant adds to: created
    by the first that asks, found in ``sub`` itself by the others (no registry kept aside, so
    a new parser never sees an old one's group)."""
    existing = sub.choices.get(name)
    if existing is not None:
        for action in existing._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action
    parser = sub.add_parser(name, help=help)
    return parser.add_subparsers(dest=dest, metavar="ASSISTANT", required=True)


def ask_subparsers(sub: SubParsers) -> SubParsers:
    """The shared ``custodia ask <assistant> ...`` command: each assistant adds its parser."""
    return shared_subparsers(
        sub, "ask", _("one turn with an assistant, printed to the terminal"), "assistant"
    )


def reindex_subparsers(sub: SubParsers) -> SubParsers:
    """The shared ``custodia reindex <assistant>`` command."""
    return shared_subparsers(
        sub, "reindex", _("rebuild an assistant's derived search index"), "index"
    )


def silence_stdout() -> None:
    """Point stdout at /dev/null so Python's exit-time flush does not fail again (the
    standard way to handle ``EPIPE``, as the Python docs describe it)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):  # no real file behind stdout
        pass
