"""Person keys beside a shared Postgres log (SPEC CT4, CT11: erasure holds everywhere).

When desktops share one Postgres log, each keeping its own key file let ``forget`` on one
leave the person readable on the others (issue 25). So the keys live beside the log, in the
audit schema, and every read and every seal asks the server (no cache): a deletion is seen by
every process and every desktop on their next read.

CT4 (no copy of a destroyed key in dead tuples, WAL, archives, base backups or exports): a
key is stored only **wrapped** — AES-256-GCM under the log's *key-encryption key* (KEK), with
the pseudonym as associated data. The KEK is 32 random bytes kept only in the data dirs of the
desktops that share the log (``audit-log.kek``, 0600; copied there by hand), never sent to the
server. A deleted row's old bytes (a dead tuple, a page in the WAL or an archive, a replica)
are ciphertext under a key the server never sees. Names are looked up by HMAC under a salt
derived from the KEK, so the server cannot test names either.

Roles (CT1's spirit): the application role may ``SELECT`` and ``INSERT`` a key, never
``UPDATE`` or ``DELETE`` one; the only way to delete a key is :data:`ERASE_FUNCTION`, a
``SECURITY DEFINER`` function owned by the owner role that deletes the person's rows and
writes their tombstones in one statement (a key never disappears without a trace).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psycopg
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from psycopg import sql

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import N_, _
from backends.net import pg_connect
from backends.stores.audit_log.record import canonical, utc_now
from backends.text import checked_text

SEAL_PREFIX = "v1."
#: the file, in each desktop's data dir, holding the shared log's key-encryption key
KEK_FILE = "audit-log.kek"
ERASE_FUNCTION = "erase_person_keys"
FINISH_FUNCTION = "finish_key_erasure"
TABLES = ("audit_key_kek", "audit_key_salt", "audit_person_key", "audit_key_erased")


class KeyStoreError(StoreUnavailableError):
    """The key store cannot be used."""


class ErasureError(KeyStoreError):
    """A key could not be destroyed completely (e.g. another reader held the WAL)."""


def _unreadable_kek(path: Path) -> str:
    return _("{path}: unreadable key-encryption key").format(path=path)


def seal_with(cipher: AESGCM, pseudonym: str, fields: Mapping[str, Any]) -> str:
    nonce = secrets.token_bytes(12)
    body = canonical(dict(fields)).encode("utf-8")
    blob = cipher.encrypt(nonce, body, pseudonym.encode("utf-8"))
    return SEAL_PREFIX + base64.b64encode(nonce + blob).decode("ascii")


def open_with(cipher: AESGCM | None, pseudonym: str, sealed: str) -> dict[str, Any] | None:
    if cipher is None or not sealed.startswith(SEAL_PREFIX):
        return None
    try:
        raw = base64.b64decode(sealed[len(SEAL_PREFIX) :], validate=True)
        body = cipher.decrypt(raw[:12], raw[12:], pseudonym.encode("utf-8"))
        value = json.loads(body)
    except (ValueError, InvalidTag):
        return None
    return value if isinstance(value, dict) else None


def key_tables(schema: str) -> list[sql.Composed | sql.SQL]:
    """The migration that adds the key tables to the audit schema (run as the owner)."""
    s = sql.Identifier(schema)
    return [
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.audit_key_kek "
            "(id int PRIMARY KEY CHECK (id = 1), kek_id text NOT NULL)"
        ).format(s),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.audit_key_salt "
            "(salt_id text PRIMARY KEY, wrapped bytea NOT NULL)"
        ).format(s),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.audit_person_key (digest text PRIMARY KEY, "
            "pseudonym text NOT NULL UNIQUE, wrapped bytea NOT NULL, created text NOT NULL)"
        ).format(s),
        sql.SQL(
            "CREATE TABLE IF NOT EXISTS {}.audit_key_erased (pseudonym text PRIMARY KEY, "
            "digest text NOT NULL, time text NOT NULL, finished boolean NOT NULL DEFAULT false)"
        ).format(s),
    ]


def key_functions(schema: str) -> list[sql.Composed | sql.SQL]:
    """The erasure functions (re-made on every bootstrap, owned by the owner role)."""
    s = sql.Identifier(schema)
    erase = sql.Identifier(schema, ERASE_FUNCTION)
    finish = sql.Identifier(schema, FINISH_FUNCTION)
    return [
        sql.SQL(
            "CREATE OR REPLACE FUNCTION {fn}(digests text[], at text) RETURNS SETOF text "
            "LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$ "
            "WITH gone AS (DELETE FROM {s}.audit_person_key WHERE digest = ANY(digests) "
            "RETURNING pseudonym, digest) "
            "INSERT INTO {s}.audit_key_erased (pseudonym, digest, time) "
            "SELECT pseudonym, digest, at FROM gone ON CONFLICT (pseudonym) DO NOTHING "
            "RETURNING pseudonym $$"
        ).format(fn=erase, s=s),
        sql.SQL(
            "CREATE OR REPLACE FUNCTION {fn}(p text) RETURNS void LANGUAGE sql SECURITY DEFINER "
            "SET search_path = pg_catalog, pg_temp AS $$ "
            "UPDATE {s}.audit_key_erased SET finished = true WHERE pseudonym = p $$"
        ).format(fn=finish, s=s),
    ]


def key_grants(app: str, maint: str) -> list[tuple[str, str, str]]:
    """(privileges, table, role): keys are created and read, never updated nor deleted."""
    return [
        ("SELECT, INSERT", "audit_key_kek", app),
        ("SELECT, INSERT", "audit_key_salt", app),
        ("SELECT, INSERT", "audit_person_key", app),
        ("SELECT, INSERT", "audit_key_erased", app),
        ("SELECT", "audit_key_erased", maint),
    ]


def function_signatures(schema: str) -> list[sql.Composed]:
    return [
        sql.SQL("{}(text[], text)").format(sql.Identifier(schema, ERASE_FUNCTION)),
        sql.SQL("{}(text)").format(sql.Identifier(schema, FINISH_FUNCTION)),
    ]


def has_key_tables(conn: psycopg.Connection[Any], schema: str) -> bool:
    row = conn.execute(
        "SELECT to_regclass(%s) IS NOT NULL", (f"{schema}.audit_person_key",)
    ).fetchone()
    return bool(row and row[0])


def kek_problem(conn: psycopg.Connection[Any], schema: str, path: Path) -> str | None:
    """Why a desktop could not read this log's person keys (for the doctor), or None."""
    try:
        if not has_key_tables(conn, schema):
            return None
        row = conn.execute(
            sql.SQL("SELECT kek_id FROM {}").format(sql.Identifier(schema, "audit_key_kek"))
        ).fetchone()
    except psycopg.Error:  # not bootstrapped, or not this role's: the log's own check says so
        return None
    if row is None:
        return None  # this desktop will make the key on first use
    try:
        kek = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except FileNotFoundError:
        return (
            f"{path}: missing — copy audit-log.kek (0600) from a desktop that already uses this "
            "log, or no tutor turn can be recorded here"
        )
    except (OSError, ValueError) as err:
        return f"{path}: unreadable key-encryption key: {err}"
    if _kek_id(kek) != row[0]:
        return f"{path}: not the key-encryption key this log's person keys are wrapped with"
    return None


def _kek_id(kek: bytes) -> str:
    return hashlib.sha256(b"custodia audit kek id\x00" + kek).hexdigest()[:32]


def _write_private(path: Path, data: str) -> None:
    """Whole or not at all, and never over another process's (``FileExistsError``)."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.link(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class PostgresKeyStore:
    """person → (pseudonym, key) in the audit schema, wrapped under the desktops' KEK."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str,
        kek_path: Path,
        timeout: float = 5.0,
        read_only: bool = False,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self.path = kek_path
        self.read_only = read_only
        self._timeout = timeout
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        self._finished: dict[str, str] = {}
        self._t = {name: sql.Identifier(schema, name) for name in TABLES}
        self._kek = self._load_kek()
        self._wrap = AESGCM(self._kek)
        self._salts = [hmac.new(self._kek, b"custodia person digest salt", "sha256").digest()]
        self._load_salts()

    # -- the connection and the KEK --------------------------------------------------------
    def _db(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            try:
                self._conn = pg_connect(
                    self.dsn, autocommit=True, connect_timeout=max(1, int(self._timeout))
                )
            except psycopg.Error as err:
                raise KeyStoreError(
                    failed(_("the person key store on the audit server"), err)
                ) from err
        return self._conn

    def _q(self, query: sql.Composed | sql.SQL, params: Any = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                cur = self._db().execute(query, params)
                return cur.fetchall() if cur.description else []
            except psycopg.Error as err:
                raise KeyStoreError(
                    failed(_("the person key store on the audit server"), err)
                ) from err

    def _load_kek(self) -> bytes:
        claimed = self._q(sql.SQL("SELECT kek_id FROM {}").format(self._t["audit_key_kek"]))
        try:
            kek = bytes.fromhex(self.path.read_text(encoding="ascii").strip())
        except FileNotFoundError:
            if claimed or self.read_only:
                raise KeyStoreError(
                    _(
                        "{path}: this desktop has no copy of the shared audit log's "
                        "key-encryption key: copy audit-log.kek (0600) from a desktop that "
                        "already uses this log into this data folder"
                    ).format(path=self.path)
                ) from None
            kek = secrets.token_bytes(32)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                _write_private(self.path, kek.hex())
            except FileExistsError:  # another process of this data dir made it first
                try:
                    kek = bytes.fromhex(self.path.read_text(encoding="ascii").strip())
                except (OSError, ValueError) as err:
                    raise KeyStoreError(failed(_unreadable_kek(self.path), err)) from err
            except OSError as err:
                raise KeyStoreError(
                    failed(
                        _("{path}: cannot write the key-encryption key").format(path=self.path),
                        err,
                    )
                ) from err
        except (OSError, ValueError) as err:
            raise KeyStoreError(failed(_unreadable_kek(self.path), err)) from err
        if len(kek) != 32:
            raise KeyStoreError(
                _("{path}: not a 256-bit key-encryption key").format(path=self.path)
            )
        if not claimed and not self.read_only:
            self._q(
                sql.SQL("INSERT INTO {} (id, kek_id) VALUES (1, %s) ON CONFLICT DO NOTHING").format(
                    self._t["audit_key_kek"]
                ),
                (_kek_id(kek),),
            )
            claimed = self._q(sql.SQL("SELECT kek_id FROM {}").format(self._t["audit_key_kek"]))
        if claimed and claimed[0][0] != _kek_id(kek):
            raise KeyStoreError(
                _(
                    "{path}: this is not the key-encryption key the shared audit log's person "
                    "keys are wrapped with: copy audit-log.kek from a desktop that uses this log"
                ).format(path=self.path)
            )
        return kek

    def _load_salts(self) -> None:
        """The salts of key stores adopted from desktops' local files (wrapped, see adopt)."""
        rows = self._q(
            sql.SQL("SELECT salt_id, wrapped FROM {} ORDER BY salt_id").format(
                self._t["audit_key_salt"]
            )
        )
        salts = self._salts[:1]
        for salt_id, wrapped in rows:
            salt = self._unwrap(bytes(wrapped), "salt:" + str(salt_id))
            if salt is not None:
                salts.append(salt)
        self._salts = salts

    def _wrapped(self, secret: bytes, label: str) -> bytes:
        nonce = secrets.token_bytes(12)
        return nonce + self._wrap.encrypt(nonce, secret, label.encode("utf-8"))

    def _unwrap(self, blob: bytes, label: str) -> bytes | None:
        try:
            return self._wrap.decrypt(blob[:12], blob[12:], label.encode("utf-8"))
        except (InvalidTag, ValueError):
            return None

    def _digests(self, person: str) -> list[str]:
        data = person.encode("utf-8")
        return [hmac.new(salt, data, hashlib.sha256).hexdigest() for salt in self._salts]

    # -- the KeyStore surface --------------------------------------------------------------
    def _row(self, person: str) -> tuple[str, bytes] | None:
        rows = self._q(
            sql.SQL(
                "SELECT pseudonym, wrapped FROM {} WHERE digest = ANY(%s) "
                "ORDER BY created, pseudonym LIMIT 1"
            ).format(self._t["audit_person_key"]),
            (self._digests(person),),
        )
        return (str(rows[0][0]), bytes(rows[0][1])) if rows else None

    def _person(self, person: str, create: bool) -> tuple[str, bytes] | None:
        if not person:
            raise ValueError("a person identifier cannot be empty")
        person = checked_text(person, N_("the person's name"))
        row = self._row(person)
        if row is None:
            self._load_salts()  # a desktop's local keys adopted since we started
            row = self._row(person)
        if row is None and create:
            pseudonym = "p-" + secrets.token_hex(8)
            self._q(
                sql.SQL(
                    "INSERT INTO {} (digest, pseudonym, wrapped, created) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (digest) DO NOTHING"
                ).format(self._t["audit_person_key"]),
                (
                    self._digests(person)[0],
                    pseudonym,
                    self._wrapped(secrets.token_bytes(32), "key:" + pseudonym),
                    utc_now(),
                ),
            )
            row = self._row(person)
        return row

    def pseudonym(self, person: str, *, create: bool = True) -> str | None:
        row = self._person(person, create)
        return row[0] if row else None

    def _cipher(self, pseudonym: str) -> AESGCM | None:
        rows = self._q(
            sql.SQL("SELECT wrapped FROM {} WHERE pseudonym = %s").format(
                self._t["audit_person_key"]
            ),
            (pseudonym,),
        )
        key = self._unwrap(bytes(rows[0][0]), "key:" + pseudonym) if rows else None
        return AESGCM(key) if key is not None else None

    def seal(self, person: str, fields: Mapping[str, Any]) -> tuple[str, str]:
        row = self._person(person, True)
        if row is None:
            raise KeyStoreError(_("the person's key vanished while sealing"))
        key = self._unwrap(row[1], "key:" + row[0])
        if key is None:
            raise KeyStoreError(
                _("{path}: a person key cannot be unwrapped with this KEK").format(path=self.path)
            )
        return row[0], seal_with(AESGCM(key), row[0], fields)

    def open(self, pseudonym: str, sealed: str) -> dict[str, Any] | None:
        return open_with(self._cipher(pseudonym), pseudonym, sealed)

    def is_erased(self, pseudonym: str) -> bool:
        return bool(
            self._q(
                sql.SQL("SELECT 1 FROM {} WHERE pseudonym = %s").format(
                    self._t["audit_key_erased"]
                ),
                (pseudonym,),
            )
        )

    def begin_forget(self, person: str) -> list[str]:
        person = checked_text(person, N_("the person's name"))
        self._load_salts()
        digests = self._digests(person)
        self._q(
            sql.SQL("SELECT * FROM {}(%s, %s)").format(sql.Identifier(self.schema, ERASE_FUNCTION)),
            (digests, utc_now()),
        )
        return [
            str(r[0])
            for r in self._q(
                sql.SQL(
                    "SELECT pseudonym FROM {} WHERE digest = ANY(%s) AND NOT finished "
                    "ORDER BY time, pseudonym"
                ).format(self._t["audit_key_erased"]),
                (digests,),
            )
        ]

    def finished_erasure(self, person: str) -> str | None:
        for digest in self._digests(person):
            found = self._finished.pop(digest, None)
            if found is not None:
                return found
        return None

    def pending_erasures(self) -> list[str]:
        return [
            str(r[0])
            for r in self._q(
                sql.SQL(
                    "SELECT pseudonym FROM {} WHERE NOT finished ORDER BY time, pseudonym"
                ).format(self._t["audit_key_erased"])
            )
        ]

    def finish_forget(self, pseudonym: str, *, remember: bool = False) -> None:
        """Mark the erasure finished: nothing to scrub here — every copy the server keeps
        (dead tuple, WAL, archive) is wrapped under a KEK it never sees."""
        rows = self._q(
            sql.SQL("SELECT digest FROM {} WHERE pseudonym = %s").format(
                self._t["audit_key_erased"]
            ),
            (pseudonym,),
        )
        self._q(
            sql.SQL("SELECT {}(%s)").format(sql.Identifier(self.schema, FINISH_FUNCTION)),
            (pseudonym,),
        )
        if rows and remember:
            self._finished[str(rows[0][0])] = pseudonym

    def counts(self) -> tuple[int, int]:
        """(keys held, people erased) beside the log, for the storage map."""
        held = self._q(sql.SQL("SELECT count(*) FROM {}").format(self._t["audit_person_key"]))
        gone = self._q(sql.SQL("SELECT count(*) FROM {}").format(self._t["audit_key_erased"]))
        return int(held[0][0]), int(gone[0][0])

    def adopt(
        self,
        salt: bytes,
        keys: list[tuple[str, str, bytes, str]],
        erased: list[tuple[str, str, bool]],
    ) -> None:
        """Take a desktop's local key store in (idempotent, so resumable): its salt, keys
        (digest, pseudonym, key, created) and erasures (pseudonym, time, finished)."""
        salt_id = hashlib.sha256(salt).hexdigest()[:32]
        with self._lock:
            try:
                conn = self._db()
                with conn.transaction():
                    conn.execute(
                        sql.SQL(
                            "INSERT INTO {} (salt_id, wrapped) VALUES (%s, %s) "
                            "ON CONFLICT DO NOTHING"
                        ).format(self._t["audit_key_salt"]),
                        (salt_id, self._wrapped(salt, "salt:" + salt_id)),
                    )
                    for digest, pseudonym, key, created in keys:
                        conn.execute(
                            sql.SQL(
                                "INSERT INTO {} (digest, pseudonym, wrapped, created) "
                                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING"
                            ).format(self._t["audit_person_key"]),
                            (digest, pseudonym, self._wrapped(key, "key:" + pseudonym), created),
                        )
                    for pseudonym, time, finished in erased:
                        conn.execute(
                            sql.SQL(
                                "INSERT INTO {} (pseudonym, digest, time, finished) "
                                "VALUES (%s, '', %s, %s) ON CONFLICT DO NOTHING"
                            ).format(self._t["audit_key_erased"]),
                            (pseudonym, time, finished),
                        )
            except psycopg.Error as err:
                raise KeyStoreError(failed(_("adopting the local person keys"), err)) from err
        self._load_salts()

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
