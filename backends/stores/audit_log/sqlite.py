"""The embedded audit log: one SQLite file (WAL, ``synchronous=FULL``).

Appends are serialised with ``BEGIN IMMEDIATE`` (the database's write lock, across threads
and processes): read the head, insert, commit. Triggers abort every UPDATE and DELETE on the
log, its metadata and its checkpoints.

What this proves, honestly: the triggers stop the application (and any mistake in it) from
changing history, but not someone who can write the file — they can drop the triggers or
edit the file with any tool. Against them the hash chain makes the change *evident*, and
signed checkpoints kept outside the file make even a complete rewrite evident. Postgres
roles add what SQLite cannot: the application's credentials themselves lack UPDATE/DELETE.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backends.stores.audit_log import (
    AuditLogError,
    ChainBatch,
    ChainCopy,
    Filter,
    Head,
    NotAPrefix,
)
from backends.stores.audit_log.record import Draft, Entry, chain_drafts
from backends.stores.description import SqliteFile
from backends.stores.engines.sqlite import Migration, connect, migrate

if TYPE_CHECKING:
    from backends.config import Config
    from backends.stores.audit_log.checkpoint import Checkpoint

_PROTECTED = ("audit_log", "audit_meta", "audit_checkpoint")


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.execute(
        """
        CREATE TABLE audit_log (
            seq INTEGER PRIMARY KEY,
            record TEXT NOT NULL,
            hash TEXT NOT NULL,
            event_type TEXT GENERATED ALWAYS AS (json_extract(record, '$.event')) VIRTUAL,
            pseudonym TEXT GENERATED ALWAYS AS (json_extract(record, '$.pseudonym')) VIRTUAL,
            time TEXT GENERATED ALWAYS AS (json_extract(record, '$.time')) VIRTUAL
        )
        """
    )
    conn.execute("CREATE INDEX audit_log_event ON audit_log(event_type, seq)")
    conn.execute("CREATE INDEX audit_log_pseudonym ON audit_log(pseudonym, seq)")
    conn.execute("CREATE INDEX audit_log_time ON audit_log(time)")
    conn.execute("CREATE TABLE audit_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO audit_meta(key, value) VALUES ('log_id', ?)", (uuid.uuid4().hex,))
    conn.execute(
        """
        CREATE TABLE audit_checkpoint (
            seq INTEGER NOT NULL,
            key_id TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (seq, key_id)
        )
        """
    )


def _create_triggers(conn: sqlite3.Connection) -> None:
    for table in _PROTECTED:
        for verb in ("UPDATE", "DELETE"):
            conn.execute(
                f"CREATE TRIGGER {table}_no_{verb.lower()} BEFORE {verb} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} is append-only: {verb} refused'); END"
            )


#: append-only named migrations (PRAGMA user_version counts them)
MIGRATIONS: list[Migration] = [
    ("audit log, metadata, checkpoints", _create_schema),
    ("append-only triggers", _create_triggers),
]

_SELECT = "SELECT seq, record, hash FROM audit_log"
_INSERT = "INSERT INTO audit_log(seq, record, hash) VALUES (?, ?, ?)"


def _where(flt: Filter | None, before_seq: int | None = None) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if flt is not None:
        if flt.pseudonym:
            clauses.append("pseudonym = ?")
            params.append(flt.pseudonym)
        if flt.event_type:
            clauses.append("event_type = ?")
            params.append(flt.event_type)
        if flt.since:
            clauses.append("time >= ?")
            params.append(flt.since)
        if flt.until:
            clauses.append("time < ?")
            params.append(flt.until)
    if before_seq is not None:
        clauses.append("seq < ?")
        params.append(before_seq)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def migrate_locked(conn: sqlite3.Connection, path: Path, migrations: list[Migration]) -> int:
    """``migrate`` under an exclusive lock file: processes opening a new file at once would
    otherwise both see version 0 and the second would fail creating the tables."""
    lock_path = path.with_name(path.name + ".migrate-lock")
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return migrate(conn, migrations)
    finally:
        os.close(fd)


class SQLiteAuditLog(ChainCopy, SqliteFile):
    """:class:`~backends.stores.audit_log.AuditLog` on a SQLite file."""

    kind = "sqlite"

    #: the engine, as the storage map names it
    ENGINE = "SQLite (WAL, append-only triggers)"
    COUNT = "SELECT coalesce(max(seq), 0) FROM audit_log"

    stores_checkpoints = True

    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._timeout = timeout
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._conn = self._open()
        try:
            migrate_locked(self._conn, self.path, MIGRATIONS)
            row = self._conn.execute("SELECT value FROM audit_meta WHERE key = 'log_id'").fetchone()
        except (sqlite3.Error, OSError) as err:
            self._conn.close()
            raise AuditLogError(f"{self.path}: not a usable audit log: {err}") from err
        self._log_id = str(row[0])
        self._reader = self._open()

    @classmethod
    def from_config(cls, config: Config, *, path: Path, **context: Any) -> SQLiteAuditLog:
        """The file ``path`` (in the data dir)."""
        return cls(path)

    def _open(self) -> sqlite3.Connection:
        # synchronous=FULL: an audit record a power cut can lose is not audited.
        return connect(self.path, synchronous="FULL", timeout=self._timeout)

    # -- properties ------------------------------------------------------------------------
    @property
    def log_id(self) -> str:
        return self._log_id

    @property
    def location(self) -> str:
        return str(self.path)

    # -- writing ---------------------------------------------------------------------------
    def append_many(self, drafts: Sequence[Draft]) -> list[Entry]:
        if not drafts:
            return []
        conn = self._conn
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as err:
                raise AuditLogError(f"{self.path}: cannot lock the audit log: {err}") from err
            try:
                row = conn.execute(
                    "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1"
                ).fetchone()
                entries = chain_drafts(drafts, (int(row[0]), str(row[1])) if row else None)
                if len(entries) == 1:  # the usual case: no list to build
                    e = entries[0]
                    conn.execute(_INSERT, (e.seq, e.record, e.hash))
                else:
                    conn.executemany(_INSERT, [(e.seq, e.record, e.hash) for e in entries])
                conn.execute("COMMIT")
            except sqlite3.Error as err:
                if conn.in_transaction:  # SQLite already rolled back after "disk is full"
                    conn.execute("ROLLBACK")
                raise AuditLogError(f"{self.path}: append failed: {err}") from err
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        return entries

    def extend(self, rows: Sequence[tuple[int, str, str]], after: Head) -> None:
        if not rows:
            return
        conn = self._conn
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as err:
                raise AuditLogError(f"{self.path}: cannot lock the audit log: {err}") from err
            try:
                row = conn.execute(
                    "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1"
                ).fetchone()
                head = Head(int(row[0]), str(row[1])) if row else Head()
                if head != after:
                    raise NotAPrefix(
                        f"{self.path}: the log changed during the copy (head seq {head.seq}, "
                        f"expected {after.seq})",
                        head,
                        after,
                    )
                conn.executemany(_INSERT, rows)
                conn.execute("COMMIT")
            except sqlite3.Error as err:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise AuditLogError(f"{self.path}: copying records failed: {err}") from err
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._write_lock:
            try:
                self._conn.execute(
                    "INSERT OR IGNORE INTO audit_checkpoint(seq, key_id, body) VALUES (?, ?, ?)",
                    (checkpoint.seq, checkpoint.key_id, checkpoint.to_json()),
                )
            except sqlite3.Error as err:
                raise AuditLogError(f"{self.path}: cannot store the checkpoint: {err}") from err

    # -- reading ---------------------------------------------------------------------------
    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with self._read_lock:
            try:
                return list(self._reader.execute(sql, params).fetchall())
            except sqlite3.Error as err:
                raise AuditLogError(f"{self.path}: cannot read the audit log: {err}") from err

    def head(self) -> Head:
        rows = self._query("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
        return Head(int(rows[0][0]), str(rows[0][1])) if rows else Head()  # type: ignore[call-overload]

    def first_seq(self) -> int | None:
        rows = self._query("SELECT min(seq) FROM audit_log")
        value = rows[0][0] if rows else None
        return int(value) if value is not None else None  # type: ignore[call-overload]

    def chain(
        self, after_seq: int = 0, *, batch: int = 4096, until_seq: int | None = None
    ) -> Iterator[ChainBatch]:
        # Its own connection: a long walk must not hold the reader others use.
        conn = self._open()
        conn.text_factory = bytes  # records as the UTF-8 bytes that were hashed
        try:
            sql = "SELECT seq, record, hash FROM audit_log WHERE seq > ?"
            params: list[object] = [after_seq]
            if until_seq is not None:
                sql += " AND seq <= ?"
                params.append(until_seq)
            conn.execute("BEGIN")  # one snapshot for the whole walk
            cursor = conn.execute(sql + " ORDER BY seq", params)
            while True:
                rows = cursor.fetchmany(batch)
                if not rows:
                    break
                yield rows
        except sqlite3.Error as err:
            raise AuditLogError(f"{self.path}: cannot read the audit log: {err}") from err
        finally:
            conn.close()

    def get(self, seq: int) -> Entry | None:
        rows = self._query(_SELECT + " WHERE seq = ?", (seq,))
        return Entry.parse(*rows[0]) if rows else None  # type: ignore[arg-type]

    def range(self, first_seq: int, last_seq: int) -> list[Entry]:
        rows = self._query(
            _SELECT + " WHERE seq BETWEEN ? AND ? ORDER BY seq", (first_seq, last_seq)
        )
        return [Entry.parse(*r) for r in rows]  # type: ignore[arg-type]

    def page(self, flt: Filter, offset: int, limit: int) -> list[Entry]:
        where, params = _where(flt)
        rows = self._query(
            _SELECT + where + " ORDER BY seq LIMIT ? OFFSET ?", [*params, limit, offset]
        )
        return [Entry.parse(*r) for r in rows]  # type: ignore[arg-type]

    def count(self, flt: Filter | None = None, *, before_seq: int | None = None) -> int:
        where, params = _where(flt, before_seq)
        rows = self._query("SELECT count(*) FROM audit_log" + where, params)
        return int(rows[0][0])  # type: ignore[call-overload]

    def event_types(self) -> list[str]:
        rows = self._query(
            "SELECT DISTINCT event_type FROM audit_log WHERE event_type IS NOT NULL "
            "ORDER BY event_type"
        )
        return [str(r[0]) for r in rows]

    def checkpoints(self) -> list[Checkpoint]:
        from backends.stores.audit_log.checkpoint import Checkpoint, CheckpointRejected

        out = []
        for (body,) in self._query("SELECT body FROM audit_checkpoint ORDER BY seq"):
            try:
                out.append(Checkpoint.from_json(str(body)))
            except CheckpointRejected:
                out.append(Checkpoint("", -1, "", "", "", ""))  # unreadable: verify flags it
        return out

    def close(self) -> None:
        with self._write_lock, self._read_lock:
            self._conn.close()
            self._reader.close()
