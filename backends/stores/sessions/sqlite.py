"""The session mirror in SQLite (``multiagent.sqlite3``): WAL mode, 0600, a fresher row is
never replaced, ``read_only`` for a second process that only lists."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import N_, _
from backends.stores.description import (
    Measurement,
    SqliteFile,
    sqlite_count,
)
from backends.stores.engines.sqlite import Migration, connect, migrate
from backends.stores.sessions import Session, WarmsL2, check_limit

if TYPE_CHECKING:
    from backends.config import Config

log = logging.getLogger(__name__)

MIGRATIONS: Sequence[Migration] = (
    (
        "0001_sessions",
        """
        CREATE TABLE sessions(
            session_id TEXT PRIMARY KEY,
            created_at REAL,
            updated_at REAL,
            phase TEXT,
            model TEXT,
            task TEXT,
            data TEXT
        );
        CREATE INDEX sessions_by_created ON sessions(created_at);
        CREATE INDEX sessions_by_phase ON sessions(phase, created_at);
        """,
    ),
)

_EVENTS = (
    "SELECT coalesce(sum(json_array_length(data, '$.events')), 0) "
    "FROM sessions WHERE json_valid(data)"
)
_COLUMNS = "session_id, created_at, updated_at, phase, model, task, data"


class SqliteSessionMirror(WarmsL2, SqliteFile):
    """``sessions`` table of MA7 in a WAL-mode SQLite file (0600, folder 0700).

    A save never replaces a fresher row (``updated_at``), so two processes writing one file
    cannot roll each other back. ``read_only=True`` opens the file with ``mode=ro`` (for
    listing from a second process; every write then fails, typed).
    """

    ENGINE = "SQLite (WAL)"

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The sessions in the file (``count="events"``: the feed events they keep), read-only,
        and the file's size with its -wal and -shm."""
        if context.get("count") == "events":
            return sqlite_count(Path(context["path"]), _EVENTS)
        return sqlite_count(Path(context["path"]), "SELECT count(*) FROM sessions")

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.where = str(path)
        self.read_only = read_only
        self._lock = threading.Lock()
        if read_only:
            try:
                self._conn = sqlite3.connect(
                    f"{path.resolve().as_uri()}?mode=ro",
                    uri=True,
                    timeout=10.0,
                    check_same_thread=False,
                    isolation_level=None,
                )
                self._conn.execute("PRAGMA busy_timeout=10000")
                self._conn.execute("SELECT count(*) FROM sessions").fetchone()
            except sqlite3.Error as err:
                raise StoreUnavailableError(
                    failed(_("{path}: cannot open sessions read-only").format(path=path), err)
                ) from err
        else:
            self._conn = connect(path)
            try:
                migrate(self._conn, MIGRATIONS)
            except StoreUnavailableError:
                self._conn.close()
                raise

    @classmethod
    def from_config(
        cls, config: Config, *, path: Path, read_only: bool = False, **context: Any
    ) -> SqliteSessionMirror:
        """The file ``path`` (in the data dir)."""
        return cls(path, read_only=read_only)

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection (diagnostics and fault tests)."""
        return self._conn

    def _run(self, what: str, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        with self._lock:
            try:
                return fn(self._conn)
            except sqlite3.Error as err:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise StoreUnavailableError(failed(f"{self.path}: {_(what)}", err)) from err

    def save(self, session: Session) -> None:
        row = (
            session.session_id,
            session.created_at,
            session.updated_at,
            session.phase,
            session.model,
            session.task,
            json.dumps(session.data, ensure_ascii=False, separators=(",", ":")),
        )

        def write(conn: sqlite3.Connection) -> None:
            conn.execute(
                f"INSERT INTO sessions({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(session_id) DO UPDATE SET "
                "updated_at=excluded.updated_at, phase=excluded.phase, model=excluded.model, "
                "task=excluded.task, data=excluded.data "
                "WHERE excluded.updated_at >= sessions.updated_at",
                row,
            )

        self._run(N_("saving the session failed"), write)

    def load(self, session_id: str) -> Session | None:
        rows = self._run(
            "load",
            lambda c: c.execute(
                f"SELECT {_COLUMNS} FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchall(),
        )
        return _from_row(rows[0]) if rows else None

    def list(
        self,
        *,
        phase: str | None = None,
        model: str | None = None,
        task_contains: str | None = None,
        limit: int | None = None,
    ) -> list[Session]:
        check_limit(limit)
        where, params = [], []
        if phase:
            where.append("phase = ?")
            params.append(phase)
        if model:
            where.append("model = ?")
            params.append(model)
        if task_contains:
            where.append("instr(lower(task), lower(?)) > 0")
            params.append(task_contains)
        sql = f"SELECT {_COLUMNS} FROM sessions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, session_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = self._run(
            N_("listing the sessions failed"), lambda c: c.execute(sql, params).fetchall()
        )
        return [_from_row(r) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _from_row(row: Sequence[Any]) -> Session:
    session_id, created_at, updated_at, phase, model, task, data = row
    try:
        blob = json.loads(data) if data else {}
    except json.JSONDecodeError:
        log.warning(_("session %s: data is not JSON; keeping it under 'raw'"), session_id)
        blob = {"raw": data}
    return Session(
        session_id=session_id,
        task=task or "",
        model=model or "",
        phase=phase or "planning",
        created_at=float(created_at or 0.0),
        updated_at=float(updated_at or created_at or 0.0),
        data=blob if isinstance(blob, dict) else {"raw": blob},
    )
