from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backends.errors import StoreUnavailableError
from backends.stores.engines.sqlite import connect, migrate

MIGRATIONS = [
    ("create t", "CREATE TABLE t (x INTEGER)"),
    ("add y", "ALTER TABLE t ADD COLUMN y TEXT;\nCREATE INDEX t_y ON t (y)"),
]


def test_migrations_apply_once_in_order(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.sqlite3")
    assert migrate(conn, MIGRATIONS) == 2
    assert migrate(conn, MIGRATIONS) == 2  # idempotent
    assert [r[1] for r in conn.execute("PRAGMA table_info(t)")] == ["x", "y"]
    assert oct((tmp_path / "a.sqlite3").stat().st_mode & 0o777) == "0o600"
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.sqlite3")
    migrate(conn, MIGRATIONS)
    with pytest.raises(StoreUnavailableError, match="newer"):
        migrate(conn, MIGRATIONS[:1])


def test_failed_migration_rolls_back(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.sqlite3")
    with pytest.raises(StoreUnavailableError, match="broken"):
        migrate(conn, [*MIGRATIONS, ("broken", "CREATE TABLE t (x)")])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def test_corrupt_file_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreUnavailableError):
        conn = connect(path)
        migrate(conn, MIGRATIONS)


def test_two_processes_migrating_a_new_file_at_once(tmp_path: Path) -> None:
    path = tmp_path / "race.sqlite3"
    code = (
        "import pathlib; from backends.stores.engines.sqlite import connect, migrate;"
        "from tests.backends.stores.engines.test_sqlite import MIGRATIONS;"
        f"p = pathlib.Path({str(path)!r});"
        "[migrate(connect(p), MIGRATIONS) for _ in range(3)]"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def test_switching_to_wal_waits_out_another_process_doing_the_same() -> None:
    """Seen once in a full run on a loaded machine: two processes switching a new file to
    WAL, and SQLite answered "database is locked" at once (the switch does not go through its
    busy handler). The switch is tried again until the timeout; any other error is not."""
    from backends.stores.engines.sqlite import _journal_mode_wal

    class Switching:
        """A connection whose first two switches meet the other process's."""

        def __init__(self, error: str) -> None:
            self.error, self.calls = error, 0

        def execute(self, sql: str) -> Switching:
            self.calls += 1
            if self.calls <= 2:
                raise sqlite3.OperationalError(self.error)
            return self

        def fetchone(self) -> tuple[str]:
            return ("wal",)

    busy = Switching("database is locked")
    assert _journal_mode_wal(busy, timeout=5.0) == "wal" and busy.calls == 3  # type: ignore[arg-type]
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        _journal_mode_wal(Switching("disk I/O error"), timeout=5.0)  # type: ignore[arg-type]
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        _journal_mode_wal(Switching("database is locked"), timeout=0.0)  # type: ignore[arg-type]
