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
import re
import shutil
import sqlite3
import tempfile
import threading
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from backends.failures import failed
from backends.i18n import N_, _
from backends.progress import Progress
from backends.stores.audit_log import (
    CHANGED_DURING_COPY,
    AuditLogError,
    ChainBatch,
    ChainCopy,
    Filter,
    Head,
    NotAPrefix,
    generated_problems,
)
from backends.stores.audit_log.merkle import (
    MemoryTree,
    NodeId,
    range_nodes,
    size_of,
    stored_count,
    stored_index,
)
from backends.stores.audit_log.record import Draft, Entry, chain_drafts
from backends.stores.audit_log.tree_build import TreeBuild
from backends.stores.description import SqliteFile
from backends.stores.engines.sqlite import Migration, connect, migrate

if TYPE_CHECKING:
    from backends.config import Config
    from backends.stores.audit_log.checkpoint import Checkpoint

_PROTECTED = ("audit_log", "audit_meta", "audit_checkpoint")
#: the Merkle tree's table, guarded like the records (migration 3)
_TREE = "audit_tree"


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


def _create_tree(conn: sqlite3.Connection) -> None:
    """The Merkle tree's complete subtrees (CT10), append-only like the records, keyed by
    :func:`~backends.stores.audit_log.merkle.stored_index` (every commit appends at the end).
    An existing log's tree is built after the migration, resumably
    (:meth:`SQLiteAuditLog.build_tree`)."""
    conn.execute(
        f"CREATE TABLE {_TREE} (id INTEGER PRIMARY KEY CHECK (id >= 0), "
        "hash BLOB NOT NULL CHECK (length(hash) = 32))"
    )
    for verb in ("UPDATE", "DELETE"):
        conn.execute(
            f"CREATE TRIGGER {_TREE}_no_{verb.lower()} BEFORE {verb} ON {_TREE} "
            f"BEGIN SELECT RAISE(ABORT, '{_TREE} is append-only: {verb} refused'); END"
        )


#: append-only named migrations (PRAGMA user_version counts them)
MIGRATIONS: list[Migration] = [
    ("audit log, metadata, checkpoints", _create_schema),
    ("append-only triggers", _create_triggers),
    ("merkle tree", _create_tree),
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
    clauses.append("seq > 0")  # only what the chain covers (a row at -1 is not)
    return " WHERE " + " AND ".join(clauses), params


_TREE_COUNT = f"SELECT coalesce(max(id) + 1, 0) FROM {_TREE}"
_TREE_INSERT = f"INSERT INTO {_TREE}(id, hash) VALUES (?, ?)"
_TREE_GET = f"SELECT hash FROM {_TREE} WHERE id = ?"


def _tree_nodes(
    conn: sqlite3.Connection,
    first: int,
    leaves: Sequence[bytes],
    frontier: dict[int, bytes] | None = None,
) -> tuple[list[tuple[int, bytes]], dict[int, bytes]]:
    """The rows leaves ``first…`` add — each leaf and the parents it completes, numbered by
    :func:`stored_index` (consecutive) — and the tree's right edge after them.

    ``frontier`` is the right edge of the tree of ``first`` leaves (level -> the complete
    subtree's hash, one per set bit of ``first``): every left sibling an append needs is in it.
    Read from the table (one query) when not given.
    """
    if frontier is None:
        ids = range_nodes(0, first)
        found: dict[int, bytes] = {}
        for start in range(0, len(ids), 500):
            chunk = [stored_index(level, idx) for level, idx in ids[start : start + 500]]
            found.update(
                (int(k), bytes(h))
                for k, h in conn.execute(
                    f"SELECT id, hash FROM {_TREE} WHERE id IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        frontier = {}
        for level, idx in ids:
            h = found.get(stored_index(level, idx))
            if h is None:
                raise AuditLogError(
                    _("the Merkle tree lacks node ({level}, {index})").format(
                        level=level, index=idx
                    )
                )
            frontier[level] = h
    out: list[tuple[int, bytes]] = []
    for index, h in enumerate(leaves, start=first):
        node = 2 * index - index.bit_count()  # stored_index(0, index); parents follow it
        out.append((node, h))
        level, i = 0, index
        while i & 1:
            h = sha256(b"\x01" + frontier.pop(level) + h).digest()
            level += 1
            i >>= 1
            node += 1
            out.append((node, h))
        frontier[level] = h
    return out, frontier


#: what a reader says when the files it reads changed under it (issue 28 review)
CHANGED_WHILE_READ = N_("the log changed while it was read — verify again")

Stamp = tuple[int, int, int] | None


def _stamp(path: Path) -> Stamp:
    """(inode, size, mtime) of a file, None when absent: any write or replacement moves it."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def frozen_copy(path: Path) -> bool:
    """Is ``path`` in a copy nobody writes (read-only media, a folder we may not write, or a
    ``chmod -R a-w`` copy, whose folder and file carry no write bit at all — root may still
    write it, but no app does)?"""
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
        if not os.access(folder, os.W_OK):
            return True
        return not (folder.stat().st_mode | path.stat().st_mode) & 0o222
    except OSError:
        return True


class ReadOnlyCopy:
    """Opens connections to a log that write not a byte, to the file or beside it (a backup,
    read-only media, ``chmod -R a-w``) — and a consistent view of a log an app is writing.

    Where the files may be written (their folder is writable: the live data dir), ``mode=ro``:
    SQLite's own locks and WAL index give each read a consistent snapshot, at the cost of the
    ``-shm``/``-wal`` it may create beside the file (as the app itself does). ``immutable=1``
    tells SQLite the file never changes — true only of a copy nobody writes (:func:`frozen_copy`):
    used on such a copy when no ``-wal`` holds frames (a log closed cleanly, the usual backup);
    SQLite then takes no lock and creates no file. (It was chosen for any 0-byte ``-wal``: a
    reader beside a running app saw a head of 10 while walking 6,010 records.) A frozen copy
    taken while the log was open keeps its last commits in ``-wal``, which ``immutable=1``
    would silently not read: file and ``-wal`` are copied to a private temporary folder
    (removed on :meth:`close`), and the copy is retried if either moved meanwhile.

    (inode, size, mtime) of the file and its ``-wal`` are recorded at open; :meth:`check`
    (after every read, and at the end of a verify) fails with :data:`CHANGED_WHILE_READ`
    rather than give a result from a view SQLite was told would not change.
    """

    COPY_TRIES = 3

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.exists():
            raise AuditLogError(_("{path}: no audit log there").format(path=path))
        wal = Path(f"{path}-wal")
        self._watched = (path, wal)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.frozen = frozen_copy(path)
        self._stamps = self._now()
        if not self.frozen:
            self.mode = "mode=ro"
            self._uri = f"file:{quote(str(path.resolve()))}?mode=ro"
            return
        stamp = self._stamps[1]
        if stamp is None or stamp[1] == 0:
            self.mode = "immutable=1"
            self._uri = f"file:{quote(str(path.resolve()))}?immutable=1"
            return
        self.mode = "mode=ro (a private copy)"
        self._tmp = tempfile.TemporaryDirectory(prefix="custodia-audit-ro-")
        target = Path(self._tmp.name) / path.name
        for _attempt in range(self.COPY_TRIES):
            before = self._now()
            try:
                shutil.copyfile(path, target)
                shutil.copyfile(wal, Path(f"{target}-wal"))
            except OSError as err:
                self.close()
                raise AuditLogError(
                    failed(_("{path}: cannot read the copy").format(path=path), err)
                ) from err
            if self._now() == before:
                self._stamps = before
                break
        else:
            self.close()
            raise AuditLogError(f"{path}: {_(CHANGED_WHILE_READ)}")
        self._uri = f"file:{quote(str(target))}?mode=ro"

    def _now(self) -> tuple[Stamp, ...]:
        return tuple(_stamp(p) for p in self._watched)

    def check(self) -> None:
        """Fail if what was opened changed since: a frozen copy's file or ``-wal`` (anything
        read since may be torn), a live log's file replaced (another log read)."""
        now = self._now()
        if self.frozen:
            changed = now != self._stamps
        else:
            old, new = self._stamps[0], now[0]
            changed = old is None or new is None or old[0] != new[0]
        if changed:
            raise AuditLogError(f"{self.path}: {_(CHANGED_WHILE_READ)}")

    def connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self._uri, uri=True, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA query_only=ON")
            conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except sqlite3.Error as err:
            raise AuditLogError(
                failed(_("{path}: cannot open the copy read-only").format(path=self.path), err)
            ) from err
        return conn

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


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


class SQLiteAuditLog(ChainCopy, TreeBuild, SqliteFile):
    """:class:`~backends.stores.audit_log.AuditLog` on a SQLite file."""

    kind = "sqlite"

    #: the engine, as the storage map names it
    ENGINE = N_("SQLite (WAL, append-only triggers)")
    COUNT = "SELECT coalesce(max(seq), 0) FROM audit_log"

    stores_checkpoints = True

    def __init__(
        self,
        path: Path,
        *,
        timeout: float = 30.0,
        read_only: bool = False,
        build: Progress | None = None,
    ) -> None:
        """Open (creating and migrating) the log; ``read_only`` opens a copy without writing a
        byte (:func:`open_read_only`). A log from before the tree gets it built here, resumably,
        reporting to ``build``."""
        self.path = Path(path)
        self._timeout = timeout
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self.read_only = read_only
        self.stores_checkpoints = not read_only
        self._copy = ReadOnlyCopy(self.path) if read_only else None
        self._conn = self._open()
        try:
            if not read_only:
                migrate_locked(self._conn, self.path, MIGRATIONS)
            row = self._conn.execute("SELECT value FROM audit_meta WHERE key = 'log_id'").fetchone()
            self._has_tree = bool(
                self._conn.execute(
                    "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", (_TREE,)
                ).fetchone()
            )
        except (sqlite3.Error, OSError) as err:
            self._conn.close()
            if self._copy is not None:
                self._copy.close()
            raise AuditLogError(
                failed(_("{path}: not a usable audit log").format(path=self.path), err)
            ) from err
        self._log_id = str(row[0])
        self._reader = self._open()
        self._memory_tree: MemoryTree | None = None
        #: the tree's right edge after the last commit of this object: (size, level -> hash)
        self._frontier: tuple[int, dict[int, bytes]] | None = None
        self._pending_frontier: tuple[int, dict[int, bytes]] | None = None
        if not read_only:
            self.build_tree(build)

    @classmethod
    def from_config(cls, config: Config, *, path: Path, **context: Any) -> SQLiteAuditLog:
        """The file ``path`` (in the data dir); ``read_only=True`` for a copy; ``progress`` is
        told how building the Merkle tree of a log from an earlier release goes."""
        progress = context.get("progress")
        return cls(
            path,
            read_only=bool(context.get("read_only", False)),
            build=progress if isinstance(progress, Progress) else None,
        )

    def _open(self) -> sqlite3.Connection:
        if self._copy is not None:
            return self._copy.connect()
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
    @contextmanager
    def _locked_write(self, what: str) -> Iterator[sqlite3.Connection]:
        """One write transaction under the database's write lock (``BEGIN IMMEDIATE``, across
        threads and processes): committed when the block ends, rolled back when it raises
        (an SQLite error becomes :class:`AuditLogError` saying what failed: ``what``, marked
        with ``N_``). The tree's cached right edge is kept only once the transaction committed."""
        conn = self._conn
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as err:
                raise AuditLogError(
                    failed(_("{path}: cannot lock the audit log").format(path=self.path), err)
                ) from err
            try:
                yield conn
                conn.execute("COMMIT")
                self._committed(True)
            except sqlite3.Error as err:
                self._committed(False)
                if conn.in_transaction:  # SQLite already rolled back after "disk is full"
                    conn.execute("ROLLBACK")
                raise AuditLogError(failed(f"{self.path}: {_(what)}", err)) from err
            except BaseException:
                self._committed(False)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def _head_in(self, conn: sqlite3.Connection) -> Head:
        """The head as the transaction on ``conn`` sees it."""
        row = conn.execute("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchone()
        return Head(int(row[0]), str(row[1])) if row else Head()

    def append_many(self, drafts: Sequence[Draft]) -> list[Entry]:
        if not drafts:
            return []
        with self._locked_write(N_("append failed")) as conn:
            head = self._head_in(conn)
            entries = chain_drafts(drafts, (head.seq, head.hash))  # Head(): the genesis
            if len(entries) == 1:  # the usual case: no list to build
                e = entries[0]
                conn.execute(_INSERT, (e.seq, e.record, e.hash))
            else:
                conn.executemany(_INSERT, [(e.seq, e.record, e.hash) for e in entries])
            self._grow_tree(conn, entries[0].seq - 1, [e.record for e in entries])
        return entries

    def extend(self, rows: Sequence[tuple[int, str, str]], after: Head) -> None:
        if not rows:
            return
        with self._locked_write(N_("copying records failed")) as conn:
            head = self._head_in(conn)
            if head != after:
                raise NotAPrefix(
                    _(CHANGED_DURING_COPY).format(log=self.path, head=head.seq, expected=after.seq),
                    head,
                    after,
                )
            conn.executemany(_INSERT, rows)
            self._grow_tree(conn, rows[0][0] - 1, [r[1] for r in rows])

    def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._write_lock:
            try:
                self._conn.execute(
                    "INSERT OR IGNORE INTO audit_checkpoint(seq, key_id, body) VALUES (?, ?, ?)",
                    (checkpoint.seq, checkpoint.key_id, checkpoint.to_json()),
                )
            except sqlite3.Error as err:
                raise AuditLogError(
                    failed(_("{path}: cannot store the checkpoint").format(path=self.path), err)
                ) from err

    # -- the Merkle tree (CT10) ----------------------------------------------------------------
    def _grow_tree(self, conn: sqlite3.Connection, first: int, records: Sequence[str]) -> None:
        """Add leaves ``first, first+1, …`` and the parents they complete, inside the caller's
        transaction. A tree not complete up to ``first`` (being built, or behind after a copy
        by an older release) is left to :meth:`build_tree`, which catches up in order."""
        if not self._has_tree:
            return
        cached = self._frontier
        if cached is not None and cached[0] == first:
            # This object's last commit left the tree at ``first`` leaves and the head is still
            # there: nobody appended since (a tree never holds more leaves than records, and
            # never shrinks), so the table need not be asked. A copy: the cache changes only
            # once this transaction commits (:meth:`_committed`).
            edge: dict[int, bytes] | None = dict(cached[1])
        elif int(conn.execute(_TREE_COUNT).fetchone()[0]) != stored_count(first):
            return
        else:
            edge = None
        leaves = [sha256(b"\x00" + r.encode("utf-8")).digest() for r in records]
        added, edge = _tree_nodes(conn, first, leaves, edge)
        if len(added) == 1:
            conn.execute(_TREE_INSERT, added[0])
        else:
            conn.executemany(_TREE_INSERT, added)
        self._pending_frontier = (first + len(records), edge)

    def _committed(self, ok: bool) -> None:
        """After a transaction that grew the tree: keep its right edge only if it committed."""
        self._frontier = self._pending_frontier if ok else None
        self._pending_frontier = None

    def tree_size(self) -> int:
        """How many leaves the stored tree holds (the log's size once built)."""
        if not self._has_tree:
            return 0
        rows = self._query(_TREE_COUNT)
        return size_of(int(rows[0][0]))  # type: ignore[call-overload]

    def _can_build_tree(self) -> bool:
        return not self.read_only and self._has_tree

    def _tree_batch(self, batch: int) -> tuple[int, int]:
        conn = self._conn
        with self._write_lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    size = size_of(int(conn.execute(_TREE_COUNT).fetchone()[0]))
                    conn.text_factory = bytes
                    rows = conn.execute(
                        "SELECT seq, record FROM audit_log WHERE seq > ? ORDER BY seq LIMIT ?",
                        (size, batch),
                    ).fetchall()
                    conn.text_factory = str
                    if rows and rows[0][0] != size + 1:
                        raise AuditLogError(
                            _(
                                "{where}: record {seq} is missing; the tree cannot be built "
                                "past a gap (run `custodia audit verify`)"
                            ).format(where=self.path, seq=size + 1)
                        )
                    leaves = [sha256(b"\x00" + record).digest() for _, record in rows]
                    conn.executemany(_TREE_INSERT, _tree_nodes(conn, size, leaves)[0])
                    conn.execute("COMMIT")
                    self._frontier = None
                finally:
                    conn.text_factory = str
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
            except sqlite3.Error as err:
                raise AuditLogError(
                    failed(_("{path}: cannot build the Merkle tree").format(path=self.path), err)
                ) from err
        return size, len(rows)

    def tree_nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        """Stored complete-subtree hashes (a log opened read-only before its tree was built
        computes them in memory, once)."""
        if not ids:
            return {}
        if self.read_only and self.tree_size() < self.head().seq:
            return self._in_memory_tree().fetch(ids)
        found: dict[NodeId, bytes] = {}
        by_index = {stored_index(level, idx): (level, idx) for level, idx in ids}
        keys = list(by_index)
        for start in range(0, len(keys), 500):  # SQLite's parameter limit, with margin
            chunk = keys[start : start + 500]
            rows = self._query(
                f"SELECT id, hash FROM {_TREE} WHERE id IN ({','.join('?' * len(chunk))})",
                chunk,
            )
            for key, h in rows:
                found[by_index[int(key)]] = bytes(h)  # type: ignore[call-overload]
        return found

    def tree_range(self, first: int, end: int) -> list[tuple[int, bytes]]:
        if not self._has_tree or end <= first:
            return []
        rows = self._query(
            f"SELECT id, hash FROM {_TREE} WHERE id >= ? AND id < ? ORDER BY id", (first, end)
        )
        return [(int(key), bytes(h)) for key, h in rows]  # type: ignore[call-overload]

    def _in_memory_tree(self) -> MemoryTree:
        head = self.head().seq
        if self._memory_tree is None or self._memory_tree.size != head:
            tree = MemoryTree()
            for rows in self.chain(0, until_seq=head):
                for _, record, _ in rows:
                    tree.append(record)
            self._memory_tree = tree
        return self._memory_tree

    # -- reading ---------------------------------------------------------------------------
    def _query(self, sql: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        with self._read_lock:
            try:
                rows = list(self._reader.execute(sql, params).fetchall())
            except sqlite3.Error as err:
                raise AuditLogError(
                    failed(_("{path}: cannot read the audit log").format(path=self.path), err)
                ) from err
        self.check_unchanged()
        return rows

    def check_unchanged(self) -> None:
        """A read-only view fails rather than answer from files that changed under it."""
        if self._copy is not None:
            self._copy.check()

    def head(self) -> Head:
        rows = self._query("SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1")
        return Head(int(rows[0][0]), str(rows[0][1])) if rows else Head()  # type: ignore[call-overload]

    def first_seq(self) -> int | None:
        rows = self._query("SELECT min(seq) FROM audit_log WHERE seq > 0")
        value = rows[0][0] if rows else None
        return int(value) if value is not None else None  # type: ignore[call-overload]

    def outside_chain(self) -> int | None:
        rows = self._query("SELECT min(seq) FROM audit_log WHERE seq < 1")
        value = rows[0][0] if rows else None
        return int(value) if value is not None else None  # type: ignore[call-overload]

    def schema_problems(self) -> list[str]:
        columns = {
            str(r[1]): int(r[6])  # type: ignore[call-overload]
            for r in self._query("PRAGMA table_xinfo(audit_log)")
        }
        rows = self._query(
            "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'audit_log'"
        )
        text = str(rows[0][0]) if rows else ""
        found: dict[str, tuple[bool, str]] = {}
        for name, hidden in columns.items():
            match = re.search(
                rf"\b{name}\b[^,]*GENERATED ALWAYS AS \((json_extract\(record, '\$\.\w+'\))\)",
                text,
            )
            found[name] = (hidden in (2, 3), match.group(1) if match else "")
        return generated_problems(found)

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
                self.check_unchanged()
                yield rows
        except sqlite3.Error as err:
            raise AuditLogError(
                failed(_("{path}: cannot read the audit log").format(path=self.path), err)
            ) from err
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
        counted: int = int(rows[0][0])  # type: ignore[call-overload]
        return counted

    def event_types(self) -> list[str]:
        rows = self._query(
            "SELECT DISTINCT event_type FROM audit_log WHERE event_type IS NOT NULL "
            "ORDER BY event_type"
        )
        return [str(r[0]) for r in rows]

    def checkpoints(self) -> list[Checkpoint]:
        from backends.stores.audit_log.checkpoint import (  # noqa: PLC0415 — lazy: cryptography, only when checkpoints are read
            Checkpoint,
            CheckpointRejected,
        )

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
            if self._copy is not None:
                self._copy.close()
