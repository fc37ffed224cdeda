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

import base64
import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from backends.errors import StoreUnavailableError
from backends.stores.audit_log.record import canonical, utc_now
from backends.stores.audit_log.sqlite import migrate_locked
from backends.stores.engines.sqlite import Migration, connect
from backends.text import checked_text

SEAL_PREFIX = "v1."


class KeyStoreError(StoreUnavailableError):
    """The key store file cannot be used."""


class ErasureError(KeyStoreError):
    """A key could not be destroyed completely (e.g. another reader held the WAL)."""


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


MIGRATIONS: list[Migration] = [("person keys", _create), ("pending erasures", _pending)]


def _open_immutable(path: Path) -> sqlite3.Connection:
    if not path.exists():
        raise KeyStoreError(f"{path}: no key store there")
    try:
        conn = sqlite3.connect(
            f"file:{quote(str(path.resolve()))}?immutable=1",
            uri=True,
            check_same_thread=False,
            isolation_level=None,
        )
        conn.execute("PRAGMA query_only=ON")
    except sqlite3.Error as err:
        raise KeyStoreError(f"{path}: cannot open the key store read-only: {err}") from err
    return conn


class KeyStore:
    """person → (pseudonym, key); thread-safe; one SQLite file."""

    def __init__(self, path: Path, *, timeout: float = 30.0, read_only: bool = False) -> None:
        """``read_only`` reads a copy without writing a byte (``immutable=1``: no lock, no
        ``-shm``; keys only in an un-checkpointed ``-wal`` are not seen — never copied
        elsewhere either, since a key must leave no copy behind, CT4)."""
        self.path = Path(path)
        self._lock = threading.RLock()
        self.read_only = read_only
        if read_only:
            self._conn = _open_immutable(self.path)
        else:
            self._conn = connect(self.path, synchronous="FULL", timeout=timeout)
        try:
            if not read_only:
                self._conn.execute("PRAGMA secure_delete=ON")
                migrate_locked(self._conn, self.path, MIGRATIONS)
            row = self._conn.execute("SELECT value FROM key_meta WHERE key = 'salt'").fetchone()
        except (sqlite3.Error, OSError) as err:
            self._conn.close()
            raise KeyStoreError(f"{self.path}: not a usable key store: {err}") from err
        self._salt = bytes.fromhex(str(row[0]))
        # caches of this process (forget clears them; see docs/AUDIT.md on other processes)
        self._keys: dict[str, bytes] = {}  # pseudonym -> key
        self._pseudonyms: dict[str, str] = {}  # person digest -> pseudonym
        # appends are hot: skip the HMAC and the cipher set-up for people already seen
        self._by_person: dict[str, str] = {}  # person -> pseudonym
        self._ciphers: dict[str, AESGCM] = {}  # pseudonym -> AESGCM(key)
        self._finished: dict[str, str] = {}  # person digest -> pseudonym, erasures finished

    def _digest(self, person: str) -> str:
        # a name from a command line with undecodable bytes: a clear error, not a traceback
        person = checked_text(person, "the person's name")
        return hmac.new(self._salt, person.encode("utf-8"), hashlib.sha256).hexdigest()

    def pseudonym(self, person: str, *, create: bool = True) -> str | None:
        """The person's pseudonym (made with a new key on first use unless ``create=False``)."""
        if not person:
            raise ValueError("a person identifier cannot be empty")
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
                raise KeyStoreError(f"{self.path}: {err}") from err
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
                raise KeyStoreError(f"{self.path}: {err}") from err
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
            raise KeyStoreError(f"{self.path}: the person's key vanished while sealing")
        nonce = secrets.token_bytes(12)
        body = canonical(dict(fields)).encode("utf-8")
        blob = cipher.encrypt(nonce, body, pseudonym.encode("utf-8"))
        return pseudonym, SEAL_PREFIX + base64.b64encode(nonce + blob).decode("ascii")

    def open(self, pseudonym: str, sealed: str) -> dict[str, Any] | None:
        """The personal fields, or None when the key is gone (erased) or the blob is not ours."""
        cipher = self._cipher(pseudonym)
        if cipher is None or not sealed.startswith(SEAL_PREFIX):
            return None
        try:
            raw = base64.b64decode(sealed[len(SEAL_PREFIX) :], validate=True)
            body = cipher.decrypt(raw[:12], raw[12:], pseudonym.encode("utf-8"))
            value = json.loads(body)
        except (ValueError, InvalidTag):
            return None
        return value if isinstance(value, dict) else None

    def is_erased(self, pseudonym: str) -> bool:
        with self._lock:
            try:
                row = self._conn.execute(
                    "SELECT 1 FROM erased WHERE pseudonym = ?", (pseudonym,)
                ).fetchone()
            except sqlite3.Error as err:
                raise KeyStoreError(f"{self.path}: {err}") from err
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
                    f"{self.path}: cannot erase the key ({err}); nothing was erased: close other "
                    "Custodia windows and run `custodia forget` again"
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
                raise KeyStoreError(f"{self.path}: {err}") from err
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
                    f"{self.path}: the key is destroyed but the erasure could not be marked "
                    f"finished ({err}); run `custodia forget` again"
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
                f"{self.path}: the key was deleted but old copies could not be scrubbed "
                f"yet ({err}); the erasure stays pending: close other Custodia windows and run "
                "`custodia forget` again (or it is finished at the next start)"
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
