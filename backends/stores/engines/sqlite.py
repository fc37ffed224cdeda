"""SQLite helpers shared by every store: private files, WAL, append-only named migrations.

``PRAGMA user_version`` counts the migrations applied; a migration list is only ever
appended to (never edited or reordered), as sqlite-utils and simonw/llm do it.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import _

Migration = tuple[str, str | Callable[[sqlite3.Connection], None]]


def connect(
    path: Path,
    *,
    wal: bool = True,
    synchronous: str = "NORMAL",
    timeout: float = 10.0,
    check_same_thread: bool = False,
) -> sqlite3.Connection:
    """Open (creating 0600, its folder 0700) a SQLite file; typed error when impossible."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
        conn = sqlite3.connect(
            str(path), timeout=timeout, check_same_thread=check_same_thread, isolation_level=None
        )
        if wal:
            mode = _journal_mode_wal(conn, timeout)
            if str(mode).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot enable WAL (journal_mode={mode})")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
    except (sqlite3.Error, OSError) as err:
        raise StoreUnavailableError(
            failed(_("{path}: cannot open SQLite database").format(path=path), err)
        ) from err
    return conn


def _journal_mode_wal(conn: sqlite3.Connection, timeout: float) -> object:
    """Switch a connection to WAL. The switch needs the file to itself for a moment, and SQLite
    answers "database is locked" at once (without its busy handler) while another process
    is doing the same on a new file: try again until ``timeout``, as the busy handler would."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        try:
            return conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def migrate(conn: sqlite3.Connection, migrations: Sequence[Migration]) -> int:
    """Apply the migrations not yet applied, each in its own transaction; return the version.

    The version is read *inside* the write transaction, so two processes opening a new file
    at once do not both try to apply the same migration.
    """
    while True:
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as err:
            raise StoreUnavailableError(
                failed(_("cannot lock the database to migrate it"), err)
            ) from err
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        if version > len(migrations):
            conn.execute("ROLLBACK")
            raise StoreUnavailableError(
                _(
                    "database schema version {version} is newer than this Custodia knows "
                    "({known}); upgrade Custodia"
                ).format(version=version, known=len(migrations))
            )
        if version == len(migrations):
            conn.execute("COMMIT")
            return version
        name, step = migrations[version]
        try:
            if callable(step):
                step(conn)
            else:
                for statement in _statements(step):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version={version + 1}")
            conn.execute("COMMIT")
        except sqlite3.Error as err:
            if conn.in_transaction:  # "disk is full" has already rolled it back
                conn.execute("ROLLBACK")
            raise StoreUnavailableError(
                failed(_("migration {name!r} failed").format(name=name), err)
            ) from err


def _statements(script: str) -> list[str]:
    """Split a script on ";" at line ends. Triggers (";" inside a body): use a callable step."""
    parts = [p.strip() for p in script.split(";\n")]
    return [p.rstrip(";") for p in parts if p.strip()]
