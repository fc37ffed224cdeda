"""Pseudonyms and per-person keys, kept apart from the log (SPEC CT4: crypto-shredding).

Each person gets a random pseudonym (``p-`` + 16 hex digits) and a random 256-bit key. Log
records name the pseudonym only; the person's personal fields are sealed with AES-256-GCM
under their key (the pseudonym is the associated data, so a sealed blob cannot be moved to
another person). :meth:`KeyStore.forget` deletes the key: the records stay, still verify, and
can never be read again. Erasure is recoverable: the key row is deleted and the erasure marked
pending in one transaction; the mark is cleared only once the scrub below (and, in the audit
service, the ``person.erased`` record) is done, so a retry or the next start finishes it.

The key store is its own SQLite file (never the log's database, whichever log backend is in
use — a Postgres log's WAL, replicas and backups would keep a deleted key for ever). Deleting
must really destroy the key, so the store runs with ``PRAGMA secure_delete=ON`` (freed pages
are overwritten with zeros) and, after the delete, checkpoints the WAL into the main file and
truncates it to zero bytes, runs ``VACUUM`` (rebuilding the file without free pages) and
truncates the WAL again. Keys are never logged nor exported. People are looked up by an HMAC
of their identifier under a per-store random salt, so the store does not list names either.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from backends.failures import failed
from backends.i18n import N_, _
from backends.stores.audit_log import Filter
from backends.stores.audit_log.keys import (
    KEK_FILE,
    SEAL_PREFIX,
    ErasureError,
    KeyStoreError,
    PostgresKeyStore,
    open_with,
    seal_with,
)
from backends.stores.audit_log.record import utc_now
from backends.stores.audit_log.sqlite import frozen_copy, migrate_locked
from backends.stores.engines.sqlite import Migration, connect
from backends.text import checked_text

if TYPE_CHECKING:
    from backends.stores.audit_log import AuditLog

__all__ = [
    "KEK_FILE",
    "SEAL_PREFIX",
    "ErasureError",
    "KeyStore",
    "KeyStoreError",
    "PersonKeys",
    "PostgresKeyStore",
    "open_key_store",
]

log = logging.getLogger(__name__)


def _store_failed(path: Path, err: BaseException) -> str:
    """``<path>: the key store failed: <cause> (details: <SQLite's words>)``."""
    return failed(_("{path}: the key store failed").format(path=path), err)


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("CREATE TABLE key_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO key_meta(key, value) VALUES ('salt', ?)", (secrets.token_hex(32),))
    conn.execute(
        """
        CREATE TABLE person_key (
            digest TEXT PRIMARY KEY,
            pseudonym TEXT NOT NULL UNIQUE,
            key BLOB NOT NULL,
            created TEXT NOT NULL
        )
        """
    )
    conn.execute("CREATE TABLE erased (pseudonym TEXT PRIMARY KEY, time TEXT NOT NULL)")


def _pending(conn: sqlite3.Connection) -> None:
    # an erasure whose key row is deleted but whose record or scrub is not done yet
    conn.execute(
        "CREATE TABLE erasure_pending (pseudonym TEXT PRIMARY KEY, digest TEXT NOT NULL, "
        "time TEXT NOT NULL)"
    )
    conn.execute("CREATE INDEX erasure_pending_digest ON erasure_pending(digest)")


def _generation(conn: sqlite3.Connection) -> None:
    # bumped by every erasure: another process's caches are dropped when it changed (CT11)
    conn.execute("INSERT OR IGNORE INTO key_meta(key, value) VALUES ('generation', '0')")


MIGRATIONS: list[Migration] = [
    ("person keys", _create),
    ("pending erasures", _pending),
    ("erasure generation", _generation),
]


class PersonKeys(Protocol):
    """What the audit service needs of a key store (local SQLite, or beside a Postgres log)."""

    read_only: bool

    def pseudonym(self, person: str, *, create: bool = True) -> str | None: ...
    def seal(self, person: str, fields: Mapping[str, Any]) -> tuple[str, str]: ...
    def open(self, pseudonym: str, sealed: str) -> dict[str, Any] | None: ...
    def is_erased(self, pseudonym: str) -> bool: ...
    def begin_forget(self, person: str) -> list[str]: ...
    def finished_erasure(self, person: str) -> str | None: ...
    def pending_erasures(self) -> list[str]: ...
    def finish_forget(self, pseudonym: str, *, remember: bool = False) -> None: ...
    def close(self) -> None: ...


def _open_read_only(path: Path) -> sqlite3.Connection:
    """``immutable=1`` only on a copy nobody writes; beside a running app ``mode=ro``, which
    sees keys created and destroyed meanwhile (immutable would keep showing an erased key)."""
    if not path.exists():
        raise KeyStoreError(_("{path}: no key store there").format(path=path))
    mode = "immutable=1" if frozen_copy(path) else "mode=ro"
    try:
        conn = sqlite3.connect(
            f"file:{quote(str(path.resolve()))}?{mode}",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
        )
        conn.execute("PRAGMA query_only=ON")
    except sqlite3.Error as err:
        raise KeyStoreError(
            failed(_("{path}: cannot open the key store read-only").format(path=path), err)
        ) from err
    return conn


class KeyStore:
    """person → (pseudonym, key); thread-safe; one SQLite file."""

    def __init__(self, path: Path, *, timeout: float = 30.0, read_only: bool = False) -> None:
        """``read_only`` reads a copy without writing a byte (``immutable=1``: no lock, no
        ``-shm``; keys only in an un-checkpointed ``-wal`` are not seen — never copied
        elsewhere either, since a key must leave no copy behind, CT4); a live one with
        ``mode=ro`` (:func:`_open_read_only`)."""
        self.path = Path(path)
        self._lock = threading.RLock()
        self.read_only = read_only
        if read_only:
            self._conn = _open_read_only(self.path)
        else:
            self._conn = connect(self.path, synchronous="FULL", timeout=timeout)
        try:
            if not read_only:
                self._conn.execute("PRAGMA secure_delete=ON")
                migrate_locked(self._conn, self.path, MIGRATIONS)
            row = self._conn.execute("SELECT value FROM key_meta WHERE key = 'salt'").fetchone()
        except (sqlite3.Error, OSError) as err:
            self._conn.close()
            raise KeyStoreError(
                failed(_("{path}: not a usable key store").format(path=self.path), err)
            ) from err
        self._salt = bytes.fromhex(str(row[0]))
        # caches of this process, dropped whenever the store's erasure generation changed
        # (a forget here or in any other process: checked before every read and seal, CT11)
        self._generation = self._read_generation()
        self._keys: dict[str, bytes] = {}  # pseudonym -> key
        self._pseudonyms: dict[str, str] = {}  # person digest -> pseudonym
        # appends are hot: skip the HMAC and the cipher set-up for people already seen
        self._by_person: dict[str, str] = {}  # person -> pseudonym
        self._ciphers: dict[str, AESGCM] = {}  # pseudonym -> AESGCM(key)
        self._finished: dict[str, str] = {}  # person digest -> pseudonym, erasures finished

    def _read_generation(self) -> str:
        try:
            row = self._conn.execute(
                "SELECT value FROM key_meta WHERE key = 'generation'"
            ).fetchone()
        except sqlite3.Error as err:
            raise KeyStoreError(_store_failed(self.path, err)) from err
        return str(row[0]) if row else ""

    def _fresh(self) -> None:
        """Drop the caches when any process erased someone since they were filled."""
        with self._lock:
            generation = self._read_generation()
            if generation != self._generation:
                self._keys.clear()
                self._ciphers.clear()
                self._pseudonyms.clear()
                self._by_person.clear()
                self._generation = generation

    def _digest(self, person: str) -> str:
        # a name from a command line with undecodable bytes: a clear error, not a traceback
        person = checked_text(person, N_("the person's name"))
        return hmac.new(self._salt, person.encode("utf-8"), hashlib.sha256).hexdigest()

    def pseudonym(self, person: str, *, create: bool = True) -> str | None:
        """The person's pseudonym (made with a new key on first use unless ``create=False``)."""
        if not person:
            raise ValueError(_("a person identifier cannot be empty"))
        self._fresh()
        known = self._by_person.get(person)
        if known is not None:
            return known
        digest = self._digest(person)
        with self._lock:
            known = self._pseudonyms.get(digest)
            if known is not None:
                self._by_person[person] = known
                return known
            try:
                row = self._conn.execute(
                    "SELECT pseudonym, key FROM person_key WHERE digest = ?", (digest,)
                ).fetchone()
                if row is None and create:
                    self._conn.execute(
                        "INSERT OR IGNORE INTO person_key(digest, pseudonym, key, created) "
                        "VALUES (?, ?, ?, ?)",
                        (digest, "p-" + secrets.token_hex(8), secrets.token_bytes(32), utc_now()),
                    )
                    row = self._conn.execute(
                        "SELECT pseudonym, key FROM person_key WHERE digest = ?", (digest,)
                    ).fetchone()
            except sqlite3.Error as err:
                raise KeyStoreError(_store_failed(self.path, err)) from err
            if row is None:
                return None
            self._keys[str(row[0])] = bytes(row[1])
            self._pseudonyms[digest] = str(row[0])
            self._by_person[person] = str(row[0])
            return str(row[0])

    def _key(self, pseudonym: str) -> bytes | None:
        with self._lock:
            key = self._keys.get(pseudonym)
            if key is not None:
                return key
            try:
                row = self._conn.execute(
                    "SELECT key FROM person_key WHERE pseudonym = ?", (pseudonym,)
                ).fetchone()
            except sqlite3.Error as err:
                raise KeyStoreError(_store_failed(self.path, err)) from err
            if row is None:
                return None
            key = bytes(row[0])
            self._keys[pseudonym] = key
            return key

    def _cipher(self, pseudonym: str) -> AESGCM | None:
        cipher = self._ciphers.get(pseudonym)
        if cipher is None:
            key = self._key(pseudonym)
            if key is None:
                return None
            cipher = self._ciphers[pseudonym] = AESGCM(key)
        return cipher

    def seal(self, person: str, fields: Mapping[str, Any]) -> tuple[str, str]:
        """(pseudonym, sealed text) for the person's personal ``fields``."""
        for _attempt in range(2):  # a forget() in between: the person gets a new key
            pseudonym = self.pseudonym(person)
            assert pseudonym is not None
            cipher = self._cipher(pseudonym)
            if cipher is not None:
                break
        else:
            raise KeyStoreError(
                _("{path}: the person's key vanished while sealing").format(path=self.path)
            )
        return pseudonym, seal_with(cipher, pseudonym, fields)

    def open(self, pseudonym: str, sealed: str) -> dict[str, Any] | None:
        """The personal fields, or None when the key is gone (erased) or the blob is not ours."""
        self._fresh()
        return open_with(self._cipher(pseudonym), pseudonym, sealed)

    def is_erased(self, pseudonym: str) -> bool:
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT 1 FROM erased WHERE pseudonym = ?", (pseudonym,)
                ).fetchone()
            except sqlite3.Error as err:
                raise KeyStoreError(_store_failed(self.path, err)) from err
        return row is not None

    def forget(self, person: str) -> str | None:
        """Destroy the person's key for good; return their pseudonym (None if unknown).

        :meth:`begin_forget` then :meth:`finish_forget`. The audit service does the two
        itself, chaining the ``person.erased`` record in between.
        """
        pending = self.begin_forget(person)
        for pseudonym in pending:
            self.finish_forget(pseudonym)
        return pending[-1] if pending else None

    def begin_forget(self, person: str) -> list[str]:
        """Delete the person's key and mark its erasure pending, in one transaction.

        Returns every pseudonym of the person whose erasure is pending, oldest first: the one
        just erased and any an earlier attempt left unfinished (a failed scrub, a failed
        record, a crash), so that a retry finishes them. Nothing changes when it fails.
        """
        digest = self._digest(person)
        with self._lock:
            # first, so that no seal() starting from now uses the key (the lock-free fast
            # path reads these caches; a miss waits for this lock)
            self._by_person.pop(person, None)
            self._pseudonyms.pop(digest, None)
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
                row = conn.execute(
                    "SELECT pseudonym FROM person_key WHERE digest = ?", (digest,)
                ).fetchone()
                if row is not None:
                    pseudonym = str(row[0])
                    self._ciphers.pop(pseudonym, None)
                    self._keys.pop(pseudonym, None)
                    now = utc_now()
                    conn.execute("DELETE FROM person_key WHERE digest = ?", (digest,))
                    conn.execute(
                        "INSERT INTO key_meta(key, value) VALUES ('generation', '1') "
                        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                    )
                    conn.execute(
                        "INSERT OR REPLACE INTO erased(pseudonym, time) VALUES (?, ?)",
                        (pseudonym, now),
                    )
                    conn.execute(
                        "INSERT OR REPLACE INTO erasure_pending(pseudonym, digest, time) "
                        "VALUES (?, ?, ?)",
                        (pseudonym, digest, now),
                    )
                pending = [
                    str(r[0])
                    for r in conn.execute(
                        "SELECT pseudonym FROM erasure_pending WHERE digest = ? "
                        "ORDER BY time, pseudonym",
                        (digest,),
                    )
                ]
                conn.execute("COMMIT")
            except sqlite3.Error as err:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise KeyStoreError(
                    failed(
                        _(
                            "{path}: cannot erase the key, nothing was erased — close other "
                            "Custodia windows and run `custodia forget` again"
                        ).format(path=self.path),
                        err,
                    )
                ) from err
        return pending

    def finished_erasure(self, person: str) -> str | None:
        """The pseudonym of the person's erasure, left pending by a failed ``forget``, that
        this process finished on its own (at start), so that the retry can say it is done;
        kept in memory only (the store keeps no trace of an erased name)."""
        with self._lock:
            return self._finished.pop(self._digest(person), None)

    def pending_erasures(self) -> list[str]:
        """Pseudonyms whose key is deleted but whose erasure is not finished, oldest first."""
        with self._lock:
            try:
                rows = self._conn.execute(
                    "SELECT pseudonym FROM erasure_pending ORDER BY time, pseudonym"
                ).fetchall()
            except sqlite3.Error as err:
                raise KeyStoreError(_store_failed(self.path, err)) from err
        return [str(r[0]) for r in rows]

    def finish_forget(self, pseudonym: str, *, remember: bool = False) -> None:
        """Scrub every old copy of the deleted key, then clear the pending mark.

        Raises :class:`ErasureError` when the scrub cannot finish; the mark then stays, so
        that a retry (or the next start of the audit service) finishes it.
        """
        with self._lock:
            self._scrub()
            try:
                row = self._conn.execute(
                    "SELECT digest FROM erasure_pending WHERE pseudonym = ?", (pseudonym,)
                ).fetchone()
                self._conn.execute("DELETE FROM erasure_pending WHERE pseudonym = ?", (pseudonym,))
                if row is not None and remember:  # see finished_erasure()
                    self._finished[str(row[0])] = pseudonym
            except sqlite3.Error as err:
                raise ErasureError(
                    failed(
                        _(
                            "{path}: the key is destroyed but the erasure could not be marked "
                            "finished — run `custodia forget` again"
                        ).format(path=self.path),
                        err,
                    )
                ) from err

    def _scrub(self) -> None:
        """Leave no copy of deleted rows in free pages or the WAL."""
        conn = self._conn
        try:
            self._checkpoint()
            conn.execute("VACUUM")
            self._checkpoint()
        except sqlite3.Error as err:
            raise ErasureError(
                failed(
                    _(
                        "{path}: the key was deleted but old copies could not be scrubbed yet; "
                        "the erasure stays pending — close other Custodia windows and run "
                        "`custodia forget` again (or it is finished at the next start)"
                    ).format(path=self.path),
                    err,
                )
            ) from err

    def _checkpoint(self) -> None:
        busy, _log, _done = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            raise sqlite3.OperationalError("the WAL is in use by another connection")
        wal = Path(str(self.path) + "-wal")
        if wal.exists() and wal.stat().st_size:
            raise sqlite3.OperationalError("the WAL was not truncated")

    def close(self) -> None:
        with self._lock:
            self._keys.clear()
            self._ciphers.clear()
            self._pseudonyms.clear()
            self._by_person.clear()
            self._conn.close()

    # -- moving beside a shared log ----------------------------------------------------------
    def holdings(
        self,
    ) -> tuple[bytes, list[tuple[str, str, bytes, str]], list[tuple[str, str, bool]]]:
        """(salt, keys as (digest, pseudonym, key, created), erasures as (pseudonym, time,
        finished)): what :meth:`PostgresKeyStore.adopt` takes in."""
        with self._lock:
            try:
                keys = [
                    (str(d), str(p), bytes(k), str(c))
                    for d, p, k, c in self._conn.execute(
                        "SELECT digest, pseudonym, key, created FROM person_key ORDER BY created"
                    )
                ]
                pending = {
                    str(r[0]) for r in self._conn.execute("SELECT pseudonym FROM erasure_pending")
                }
                erased = [
                    (str(p), str(t), str(p) not in pending)
                    for p, t in self._conn.execute("SELECT pseudonym, time FROM erased")
                ]
            except sqlite3.Error as err:
                raise KeyStoreError(_store_failed(self.path, err)) from err
        return self._salt, keys, erased

    def destroy(self, pseudonyms: list[str]) -> None:
        """Delete these keys (they now live beside the shared log) and scrub the file; the
        erasures stay, for the embedded log of this data dir."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                self._conn.executemany(
                    "DELETE FROM person_key WHERE pseudonym = ?", [(p,) for p in pseudonyms]
                )
                self._conn.execute(
                    "INSERT INTO key_meta(key, value) VALUES ('generation', '1') "
                    "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )
                # until the scrub is done: a start finding it retries (the rows are gone)
                self._conn.execute("INSERT OR REPLACE INTO key_meta VALUES ('scrub', 'pending')")
                self._conn.execute("COMMIT")
            except sqlite3.Error as err:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise KeyStoreError(_store_failed(self.path, err)) from err
            self._keys.clear()
            self._ciphers.clear()
            self._pseudonyms.clear()
            self._by_person.clear()
            self.finish_scrub()

    def scrub_pending(self) -> bool:
        """Whether :meth:`destroy` deleted keys whose old copies are not scrubbed yet."""
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM key_meta WHERE key = 'scrub'").fetchone()
        return row is not None

    def finish_scrub(self) -> None:
        with self._lock:
            self._scrub()
            try:
                self._conn.execute("DELETE FROM key_meta WHERE key = 'scrub'")
            except sqlite3.Error as err:
                raise ErasureError(_store_failed(self.path, err)) from err


def open_key_store(path: Path, audit_log: AuditLog, *, read_only: bool = False) -> PersonKeys:
    """The key store for ``audit_log``: the local file ``path`` for a SQLite log; beside the
    log for a Postgres log whose schema has the key tables (the desktops sharing it hold the
    key-encryption key, ``audit-log.kek`` next to ``path``).

    A local file left from before is adopted on first use — the keys of the people this log
    names copied beside it (idempotent: an interrupted copy resumes), then deleted and
    scrubbed here (CT4); keys of people only an embedded log names stay."""
    dsn = getattr(audit_log, "dsn", None)
    schema = getattr(audit_log, "schema", None)
    if audit_log.kind != "postgres" or not isinstance(dsn, str) or not isinstance(schema, str):
        return KeyStore(path, read_only=read_only)
    if not getattr(audit_log, "has_key_tables", False):
        log.warning(
            _(
                "the audit schema has no person key table: keys stay in %s, so an erasure does not "
                "reach the other desktops sharing this log; run `custodia audit bootstrap` again"
            ),
            path,
        )
        return KeyStore(path, read_only=read_only)
    timeout = float(getattr(audit_log, "_timeout", 5.0))
    shared = PostgresKeyStore(
        dsn, schema=schema, kek_path=path.with_name(KEK_FILE), timeout=timeout, read_only=read_only
    )
    if read_only or not path.exists():
        return shared
    try:
        local = KeyStore(path)
        try:
            salt, keys, erased = local.holdings()
            # only the keys of people this log names (a data dir's embedded log may name
            # others: their keys stay here, for that log)
            keys = [k for k in keys if audit_log.count(Filter(pseudonym=k[1]))]
            erased = [e for e in erased if audit_log.count(Filter(pseudonym=e[0]))]
            if keys or erased:
                shared.adopt(salt, keys, erased)
            if keys:
                log.info(
                    "moving %d person keys from %s beside the shared audit log", len(keys), path
                )
                local.destroy([k[1] for k in keys])
            elif local.scrub_pending():
                local.finish_scrub()
        finally:
            local.close()
    except ErasureError as err:  # adopted and deleted; old copies scrubbed at the next start
        log.warning(_("the adopted local keys are deleted but not scrubbed yet: %s"), err)
    except KeyStoreError:
        shared.close()
        raise
    return shared
