"""The SQLite index of the conversation files (CA3): only a faster way to list them.

One row per file: date, provider, model, path, message count — plus fields that are already
in clear in the file (name, whether it is encrypted and under which key id), why the file
cannot be read when it cannot, and the file's stamp (inode, mtime, size) for reconciliation.
No message text is ever stored here.

:func:`reconcile` makes the index agree with the folder: a file whose stamp did not change
costs one ``stat`` (from ``scandir``) and nothing else; changed, new and vanished files are
re-read, added or dropped. The files always win (CA4): the index can be deleted at any time
and is rebuilt at the next start.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from backends.conversations.errors import ConversationError, ConversationNotFoundError
from backends.conversations.files import SUFFIX, ConversationFiles, FileStamp
from backends.errors import StoreUnavailableError
from backends.progress import Progress
from backends.stores.sqlite import Migration, connect, migrate

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

    @property
    def id(self) -> str:
        return self.file[: -len(SUFFIX)]

    @property
    def readable(self) -> bool:
        return self.error is None


_COLUMNS = (
    "file, name, date, provider, model, path, messages, encrypted, key_id, error, ino, mtime_ns, "
    "size"
)


def _row(values: tuple[object, ...]) -> IndexRow:
    (file, name, date, provider, model, path, messages, enc, kid, error, ino, mtime, size) = values
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
    )


class ConversationIndex:
    """The SQLite file (WAL) holding :class:`IndexRow` s; thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn = connect(path)
        self._lock = threading.RLock()
        migrate(self._conn, MIGRATIONS)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def _execute(self, sql: str, params: Iterable[object] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            try:
                return self._conn.execute(sql, tuple(params)).fetchall()
            except sqlite3.Error as err:
                raise StoreUnavailableError(f"{self.path}: {err}") from err

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

    def apply(self, upserts: Iterable[IndexRow], deletes: Iterable[str] = ()) -> None:
        """Upsert and delete rows in one transaction."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO conversations ({_COLUMNS}) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
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
                        )
                        for r in upserts
                    ],
                )
                self._conn.executemany(
                    "DELETE FROM conversations WHERE file = ?", [(f,) for f in deletes]
                )
                self._conn.execute("COMMIT")
            except sqlite3.Error as err:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise StoreUnavailableError(f"{self.path}: {err}") from err


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
            raise StoreUnavailableError(f"{path}: {os_err}") from os_err
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
            key_id="",
            error=f"{err.reason}: {err.detail}",
            stamp=stamp,
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
        progress.start(len(to_read), "reading changed conversations")
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
