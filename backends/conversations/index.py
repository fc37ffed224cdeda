"""The SQLite index of the conversation files (CA3): only a faster way to list them.

One row per file: date, provider, model, path, message count — plus fields that are already
in clear in the file (name, whether it is encrypted and under which key id), why the file
cannot be read when it cannot, and the file's stamp (inode, mtime, size) for reconciliation.
No message text is ever stored here: of a title made from a first message only the token of an
encrypted file is kept (ciphertext, decrypted by the agent for the list).

:func:`reconcile` makes the index agree with the folder: a file whose stamp did not change
costs one ``stat`` (from ``scandir``) and nothing else; changed, new and vanished files are
re-read, added or dropped. The files always win (CA4): the index can be deleted at any time
and is rebuilt at the next start.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from backends.conversations.errors import ConversationError, ConversationNotFoundError
from backends.conversations.files import SUFFIX, ConversationFiles, FileStamp
from backends.errors import StoreUnavailableError
from backends.failures import explain, failed, without_details
from backends.i18n import _, number
from backends.progress import Progress
from backends.stores.engines.sqlite import Migration, connect, migrate

log = logging.getLogger(__name__)

MIGRATIONS: list[Migration] = [
    (
        "0001 conversations index",
        """
        CREATE TABLE conversations (
            file TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            date TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            path TEXT NOT NULL,
            messages INTEGER,
            encrypted INTEGER NOT NULL DEFAULT 0,
            key_id TEXT NOT NULL DEFAULT '',
            error TEXT,
            ino INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL
        );
        CREATE INDEX conversations_by_date ON conversations(date);
        """,
    ),
    (
        # the file's ``title`` field as stored: a token when the history is encrypted (never
        # its plaintext: the agent decrypts it for the list), the text when it is clear
        "0002 conversation titles",
        "ALTER TABLE conversations ADD COLUMN title TEXT NOT NULL DEFAULT '';",
    ),
]


@dataclass(frozen=True)
class IndexRow:
    file: str
    name: str
    date: str
    provider: str
    model: str
    path: str
    messages: int | None
    encrypted: bool
    key_id: str
    error: str | None
    stamp: FileStamp
    #: the title field as stored in the file (a token when encrypted), "" for none
    title: str = ""

    @property
    def id(self) -> str:
        return self.file[: -len(SUFFIX)]

    @property
    def readable(self) -> bool:
        return self.error is None


_COLUMNS = (
    "file, name, date, provider, model, path, messages, encrypted, key_id, error, ino, mtime_ns, "
    "size, title"
)


def _row(values: tuple[object, ...]) -> IndexRow:
    (file, name, date, provider, model, path, messages, enc, kid, error) = values[:10]
    (ino, mtime, size, title) = values[10:]
    return IndexRow(
        str(file),
        str(name),
        str(date),
        str(provider),
        str(model),
        str(path),
        None if messages is None else int(str(messages)),
        bool(enc),
        str(kid),
        None if error is None else str(error),
        FileStamp(int(str(ino)), int(str(mtime)), int(str(size))),
        str(title or ""),
    )


#: SQLite result codes (primary) meaning the file is not, or no longer, a usable database
_DAMAGED = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
#: ... and meaning another connection holds a lock the busy handler did not wait for
#: (switching a new file to WAL, two processes migrating it at once)
_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
#: SQLite's own busy timeout (it waits this long for a lock when it can)
BUSY_TIMEOUT = 10.0
#: for this long after a first attempt, a busy open or statement is retried: SQLite gives up
#: at once where waiting could deadlock (a new file switched to WAL by two processes), so
#: those are retried; a lock held longer than the busy timeout is reported, not retried
RETRY_SECONDS = 5.0
#: how long to wait for another process to finish opening or repairing the index
LOCK_TIMEOUT = 30.0


class IndexDamagedError(StoreUnavailableError):
    """The SQLite file is damaged (not a database, a malformed page). It is derived data:
    :meth:`ConversationIndex.reset` moves it aside and the next reconcile rebuilds it."""


def _sqlite_code(err: BaseException | None) -> int | None:
    """The primary SQLite result code of ``err`` or of what caused it."""
    seen = 0
    while err is not None and seen < 5:
        if isinstance(err, sqlite3.Error):
            code = getattr(err, "sqlite_errorcode", None)
            return None if code is None else int(code) & 0xFF
        err = err.__cause__
        seen += 1
    return None


@contextlib.contextmanager
def _folder_lock(folder: Path, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
    """An exclusive ``flock`` on ``folder`` itself (no lock file): held while the index is
    opened, migrated or repaired, so two processes starting at once do not race to switch a
    new file to WAL (SQLite answers one of them "database is locked" without waiting)."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(folder, os.O_RDONLY)
    except OSError as err:
        raise StoreUnavailableError(
            failed(_("{folder}: the folder cannot be opened").format(folder=folder), err)
        ) from err
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StoreUnavailableError(
                        _(
                            "{folder}: another Custodia process has held the conversation "
                            "index lock for {seconds} s; close it and try again"
                        ).format(folder=folder, seconds=number(timeout))
                    ) from None
                time.sleep(0.01)
            except OSError as err:  # a file system without flock: go on unlocked
                log.debug("%s: no flock (%s)", folder, err)
                break
        yield
    finally:
        os.close(fd)  # releases the lock


class ConversationIndex:
    """The SQLite file (WAL) holding :class:`IndexRow` s; thread-safe and shared safely with
    other processes (opened under a folder lock, busy statements retried).

    The file is derived data: when it is damaged it is moved aside (``.damaged-<time>``,
    kept, never deleted) with a warning and an empty one takes its place; the caller then
    reconciles, which rebuilds every row from the files (:attr:`recovered` says where the
    damaged one went).
    """

    def __init__(self, path: Path, lock_folder: Path | None = None) -> None:
        self.path = path
        self._lock_folder = lock_folder or path.parent
        self._lock = threading.RLock()
        #: where the last damaged file was moved (None when none was)
        self.recovered: Path | None = None
        self._conn = self._open()

    def _open(self) -> sqlite3.Connection:
        with _folder_lock(self._lock_folder):
            deadline = time.monotonic() + RETRY_SECONDS
            attempt = 0
            while True:
                attempt += 1
                conn: sqlite3.Connection | None = None
                try:
                    conn = connect(self.path, timeout=BUSY_TIMEOUT)
                    migrate(conn, MIGRATIONS)
                    # reads every page of the (small) file: a damaged one is found now
                    check = conn.execute("PRAGMA quick_check(1)").fetchone()
                    if check is None or str(check[0]) != "ok":
                        raise IndexDamagedError(f"{self.path}: integrity check: {check}")
                    return conn
                except (StoreUnavailableError, sqlite3.Error) as err:
                    if conn is not None:
                        with contextlib.suppress(sqlite3.Error):
                            conn.close()
                    code = _sqlite_code(err)
                    damaged = isinstance(err, IndexDamagedError) or code in _DAMAGED
                    if damaged and self.recovered is None:
                        self._move_aside(err)
                        continue
                    if code in _BUSY and time.monotonic() < deadline:
                        time.sleep(min(0.02 * attempt, 0.2))
                        continue
                    if isinstance(err, StoreUnavailableError):
                        raise
                    raise StoreUnavailableError(f"{self.path}: {explain(err)}") from err

    def _move_aside(self, why: BaseException) -> None:
        """Move the damaged file (and its -wal/-shm) aside; kept for inspection."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        try:
            for suffix in ("-wal", "-shm"):
                side = Path(str(self.path) + suffix)
                if side.exists():
                    side.rename(Path(str(aside) + suffix))
            if self.path.exists():
                self.path.rename(aside)
        except OSError as err:
            raise StoreUnavailableError(
                failed(
                    _("{path} is damaged ({why}) and cannot be moved aside").format(
                        path=self.path, why=without_details(explain(why))
                    ),
                    err,
                )
            ) from err
        self.recovered = aside
        log.warning(
            _("%s is damaged (%s): moved to %s; it is rebuilt from the conversation files"),
            self.path,
            why,
            aside.name,
        )

    def reset(self) -> Path | None:
        """Replace a damaged file by an empty one (moving it aside); reconcile afterwards."""
        with self._lock:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self.recovered = None
            with _folder_lock(self._lock_folder):
                self._move_aside(IndexDamagedError("found damaged while in use"))
            recovered = self.recovered
            self._conn = self._open()
            self.recovered = recovered
            return recovered

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _error(self, err: sqlite3.Error) -> StoreUnavailableError:
        if _sqlite_code(err) in _DAMAGED:
            return IndexDamagedError(f"{self.path}: {err}")
        return StoreUnavailableError(f"{self.path}: {err}")

    def _execute(self, sql: str, params: Iterable[object] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            deadline = time.monotonic() + RETRY_SECONDS
            attempt = 0
            while True:
                attempt += 1
                try:
                    return self._conn.execute(sql, tuple(params)).fetchall()
                except sqlite3.Error as err:
                    if _sqlite_code(err) in _BUSY and time.monotonic() < deadline:
                        time.sleep(min(0.02 * attempt, 0.2))
                        continue
                    raise self._error(err) from err

    def rows(self) -> list[IndexRow]:
        """Every conversation, newest first."""
        return [
            _row(r)
            for r in self._execute(
                f"SELECT {_COLUMNS} FROM conversations ORDER BY date DESC, mtime_ns DESC, file"
            )
        ]

    def get(self, file: str) -> IndexRow | None:
        found = self._execute(f"SELECT {_COLUMNS} FROM conversations WHERE file = ?", (file,))
        return _row(found[0]) if found else None

    def stamps(self) -> dict[str, tuple[FileStamp, str, bool, str, bool]]:
        """``file -> (stamp, path, encrypted, key_id, readable)`` for reconciliation."""
        out = {}
        for file, ino, mtime, size, path, enc, kid, error in self._execute(
            "SELECT file, ino, mtime_ns, size, path, encrypted, key_id, error FROM conversations"
        ):
            stamp = FileStamp(int(str(ino)), int(str(mtime)), int(str(size)))
            out[str(file)] = (stamp, str(path), bool(enc), str(kid), error is None)
        return out

    def message_counts(self) -> dict[str, int]:
        """``file -> messages`` for the readable conversations."""
        return {
            str(f): int(str(n))
            for f, n in self._execute(
                "SELECT file, messages FROM conversations WHERE error IS NULL"
            )
        }

    def unreadable(self) -> set[str]:
        return {
            str(f) for (f,) in self._execute("SELECT file FROM conversations WHERE error NOT NULL")
        }

    def unreadable_reasons(self) -> dict[str, int]:
        """``reason -> how many`` conversations cannot be read ("wrong key", "corrupt", ...)."""
        out: dict[str, int] = {}
        for (error,) in self._execute("SELECT error FROM conversations WHERE error NOT NULL"):
            reason = str(error).split(":", 1)[0]
            out[reason] = out.get(reason, 0) + 1
        return out

    def encrypted_key_ids(self) -> dict[str, tuple[int, int]]:
        """``key id -> (files, readable files)`` over the encrypted conversations ("" for
        files that record no key id). One small grouped query: no file is read."""
        return {
            str(kid): (int(str(total)), int(str(readable or 0)))
            for kid, total, readable in self._execute(
                "SELECT key_id, COUNT(*), SUM(error IS NULL) FROM conversations "
                "WHERE encrypted GROUP BY key_id"
            )
        }

    def apply(self, upserts: Iterable[IndexRow], deletes: Iterable[str] = ()) -> None:
        """Upsert and delete rows in one transaction (retried when another process holds
        the lock longer than SQLite's busy timeout)."""
        values = [
            (
                r.file,
                r.name,
                r.date,
                r.provider,
                r.model,
                r.path,
                r.messages,
                int(r.encrypted),
                r.key_id,
                r.error,
                r.stamp.ino,
                r.stamp.mtime_ns,
                r.stamp.size,
                r.title,
            )
            for r in upserts
        ]
        gone = [(f,) for f in deletes]
        with self._lock:
            deadline = time.monotonic() + RETRY_SECONDS
            attempt = 0
            while True:
                attempt += 1
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                    self._conn.executemany(
                        f"INSERT OR REPLACE INTO conversations ({_COLUMNS}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        values,
                    )
                    self._conn.executemany("DELETE FROM conversations WHERE file = ?", gone)
                    self._conn.execute("COMMIT")
                    return
                except sqlite3.Error as err:
                    if self._conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._conn.execute("ROLLBACK")
                    if _sqlite_code(err) in _BUSY and time.monotonic() < deadline:
                        time.sleep(min(0.02 * attempt, 0.2))
                        continue
                    raise self._error(err) from err


@dataclass
class ReconcileReport:
    files: int = 0
    unchanged: int = 0
    reread: int = 0
    removed: int = 0
    unreadable: int = 0
    seconds: float = 0.0
    changed: list[str] = field(default_factory=list)


def row_for(files: ConversationFiles, file: str) -> IndexRow | None:
    """The index row that describes ``file`` now (None when the file vanished)."""
    path = files.folder / file
    try:
        conversation, stamp = files.read(file)
    except ConversationNotFoundError:
        return None
    except ConversationError as err:
        try:
            stamp = FileStamp.of(path.stat())
        except FileNotFoundError:
            return None
        except OSError as os_err:
            raise StoreUnavailableError(f"{path}: {explain(os_err)}") from os_err
        header = files.header(file) or {}
        return IndexRow(
            file=file,
            name=str(header.get("name") or file[: -len(SUFFIX)]),
            date=str(header.get("date", "")),
            provider=str(header.get("provider", "")),
            model=str(header.get("model", "")),
            path=str(path),
            messages=None,
            encrypted=bool(header.get("encrypted", False)),
            # in clear in the file: which key it needs (a wrong key tells from a missing one)
            key_id=str(header.get("key_id", "")),
            error=f"{err.reason}: {err.detail}",
            stamp=stamp,
            title=str(header.get("title", "")),
        )
    return IndexRow(
        file=file,
        name=conversation.name,
        date=conversation.date,
        provider=conversation.provider,
        model=conversation.model,
        path=str(path),
        messages=len(conversation.history),
        encrypted=conversation.encrypted,
        key_id=conversation.key_id,
        error=None,
        stamp=stamp,
        title=files.index_title(conversation),
    )


def reconcile(
    files: ConversationFiles, index: ConversationIndex, progress: Progress | None = None
) -> ReconcileReport:
    """Make the index agree with the files (the files win). Unchanged files are not read.

    A file is re-read when its stamp or path changed, when it could not be read last time
    (the key may be there now), or when it is encrypted under a key id the current cipher
    does not hold (the key may have changed).
    """
    started = time.perf_counter()
    report = ReconcileReport()
    on_disk = files.scan()
    known = index.stamps()
    cipher = files.cipher
    to_read: list[str] = []
    for file, stamp in on_disk.items():
        entry = known.get(file)
        if entry is not None:
            old_stamp, old_path, encrypted, kid, readable = entry
            key_ok = not encrypted or (cipher is not None and cipher.knows(kid))
            if old_stamp == stamp and old_path == str(files.folder / file) and readable and key_ok:
                report.unchanged += 1
                continue
        to_read.append(file)
    gone = [file for file in known if file not in on_disk]
    if progress is not None and to_read:
        progress.start(len(to_read), _("reading changed conversations"))
    rows: list[IndexRow] = []
    for file in sorted(to_read):
        row = row_for(files, file)
        if row is None:
            gone.append(file)
        else:
            rows.append(row)
        if progress is not None:
            progress.advance(1, file)
    if rows or gone:
        index.apply(rows, [f for f in gone if f in known])
    report.files = len(on_disk)
    report.reread = len(rows)
    report.removed = len([f for f in gone if f in known])
    report.changed = [r.file for r in rows]
    report.unreadable = len(index.unreadable())
    report.seconds = time.perf_counter() - started
    return report
