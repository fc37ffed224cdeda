"""The fake assistant: it keeps notes in a SQLite file of its own and echoes them back."""

from __future__ import annotations

import argparse
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from backends.assistants import Context, Needs
from backends.commands import SubParsers
from backends.config import Config
from backends.stores.description import HISTORY, Datum, Measurement, Running, sqlite_count

FILE = "echo.sqlite3"


class EchoService:
    """Notes in one SQLite file; the chat model comes from the Needs it was built with."""

    def __init__(self, path: Path, needs: Needs) -> None:
        self.needs = needs
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS notes (person TEXT, text TEXT)")
        self.closed = False

    def add(self, person: str, text: str) -> None:
        with self.db:
            self.db.execute("INSERT INTO notes VALUES (?, ?)", (person, text))

    def echo(self, text: str) -> str:
        return f"echo ({self.needs.model()}): {text}"

    def forget(self, person: str) -> int:
        with self.db:
            return self.db.execute("DELETE FROM notes WHERE person = ?", (person,)).rowcount

    def close(self) -> None:
        self.db.close()
        self.closed = True


def build(needs: Needs) -> EchoService:
    return EchoService(needs.config.path(FILE), needs)


def _file(config: Config) -> Mapping[str, object]:
    return {"path": config.path(FILE)}


def _measure(config: Config, process: Running | None) -> Measurement:
    return sqlite_count(config.path(FILE), "SELECT count(*) FROM notes")


DATA = (
    Datum(
        "echo notes",
        "echo",
        HISTORY,
        "notes",
        "lost: what the echo assistant was told",
        _measure,
        role="memories",
        context=_file,
    ),
)


def _cmd_echo(args: argparse.Namespace, context: Context) -> int:
    print(context.get("echo", EchoService).echo(args.text))
    return 0


def add_commands(sub: SubParsers) -> None:
    p = sub.add_parser("echo", help="the fake assistant: echo a text")
    p.add_argument("text")
    p.set_defaults(handler=_cmd_echo)


def forget(context: Context, person: str) -> list[str]:
    if not context.config.path(FILE).exists():
        return []
    removed = context.get("echo", EchoService).forget(person)
    return [f"echo: {removed} note(s) of {person} deleted"]
