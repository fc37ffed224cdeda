"""The Postgres audit schema and its three roles, made by :func:`bootstrap` (SPEC CT1, CT3).

Run once by a role allowed to create roles (the *bootstrap* role, e.g. the DBA), and again
after an upgrade (idempotent: it brings an older schema up to date): the **owner** role owns
the schema and its tables; the **application** role may ``SELECT, INSERT`` the log (never
``UPDATE``, ``DELETE`` or ``TRUNCATE``) and call the server-side append; the **maintenance**
role may read the log and insert checkpoints. The log itself, opened with the application's
DSN, is :class:`backends.stores.audit_log.postgres.PostgresAuditLog`.

Kept apart from the log because it is another job with another role: the log never creates
a table or a role, and bootstrap never appends.
"""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from backends.config import redact_url
from backends.failures import failed
from backends.i18n import _
from backends.net import pg_connect
from backends.stores.audit_log import DEFAULT_SCHEMA, AuditLogError, AuditPermissionError, keys
from backends.stores.audit_log.record import GENESIS, RECORD_VERSION

#: the advisory lock every append takes (one per database; "CUSTAUDT" as 8 bytes)
AUDIT_LOCK_KEY = 0x4355535441554454


@dataclass(frozen=True)
class Roles:
    owner: str = "custodia_owner"
    app: str = "custodia_app"
    maintenance: str = "custodia_maint"

    @classmethod
    def with_prefix(cls, prefix: str) -> Roles:
        return cls(f"{prefix}_owner", f"{prefix}_app", f"{prefix}_maint")


@dataclass(frozen=True)
class Bootstrapped:
    """DSNs for the two login roles (with the passwords bootstrap set)."""

    app_dsn: str
    maintenance_dsn: str
    roles: Roles
    schema: str


def _migrations(schema: str) -> list[tuple[str, list[sql.Composed | sql.SQL]]]:
    s = sql.Identifier(schema)
    return [
        (
            "audit log, metadata, checkpoints",
            [
                sql.SQL(
                    """
                    CREATE TABLE {}.audit_log (
                        seq bigint PRIMARY KEY CHECK (seq > 0),
                        record text NOT NULL,
                        hash char(64) NOT NULL,
                        event_type text GENERATED ALWAYS AS ((record::jsonb) ->> 'event') STORED,
                        pseudonym text GENERATED ALWAYS AS ((record::jsonb) ->> 'pseudonym') STORED,
                        time text GENERATED ALWAYS AS ((record::jsonb) ->> 'time') STORED
                    )
                    """
                ).format(s),
                sql.SQL("CREATE INDEX audit_log_event ON {}.audit_log (event_type, seq)").format(s),
                sql.SQL("CREATE INDEX audit_log_pseudonym ON {}.audit_log (pseudonym, seq)").format(
                    s
                ),
                sql.SQL("CREATE INDEX audit_log_time ON {}.audit_log (time)").format(s),
                sql.SQL(
                    """
                    CREATE TABLE {}.audit_checkpoint (
                        seq bigint NOT NULL,
                        key_id text NOT NULL,
                        body text NOT NULL,
                        PRIMARY KEY (seq, key_id)
                    )
                    """
                ).format(s),
                sql.SQL("INSERT INTO {}.audit_meta (key, value) VALUES ('log_id', {})").format(
                    s, sql.Literal(uuid.uuid4().hex)
                ),
            ],
        ),
        (
            "merkle tree",
            [
                sql.SQL(
                    """
                    CREATE TABLE {}.audit_tree (
                        id bigint PRIMARY KEY CHECK (id >= 0),
                        hash bytea NOT NULL CHECK (length(hash) = 32)
                    )
                    """
                ).format(s),
            ],
        ),
        ("person keys beside the log (CT11)", keys.key_tables(schema)),
    ]


#: name of the server-side append (``{schema}.append_records``)
APPEND_FUNCTION = "append_records"


def _quoted(identifier: str) -> str:
    """An SQL identifier quoted as the standard says (for text inside a function body)."""
    return '"' + identifier.replace('"', '""') + '"'


def _append_function(schema: str) -> sql.Composed:
    """``append_records(data[], event[], pseudonym[], sealed[])``: lock, read the head, build
    each record from its canonical fragments
    (:data:`~backends.stores.audit_log.record.RECORD_TEMPLATE`),
    hash it exactly as CT2 says and insert — the plain chain's steps, in one round trip instead
    of five. ``SECURITY INVOKER``: it can do nothing its caller could not (the application
    role's INSERT); the client re-hashes every returned record, so a server that chained
    differently is caught at once. Inside a function each statement takes a fresh snapshot,
    so the head read after the lock is the committed head."""
    template = (
        "'{\"data\":' || data[i] || ',\"event\":' || event[i] || ',\"pseudonym\":' "
        "|| pseudonym[i] || ',\"sealed\":' || sealed[i] || ',\"seq\":' || head_seq "
        '|| \',"time":"\' || stamp || \'","v":' + str(RECORD_VERSION) + "}'"
    )
    body = f"""
        DECLARE
            head_seq bigint;
            head_hash text;
            stamp text;
            rec text;
            grow boolean;
            node bytea;
            sibling bytea;
            lvl int;
            ix bigint;
            nid bigint;
            last bigint;
        BEGIN
            PERFORM pg_advisory_xact_lock({AUDIT_LOCK_KEY});
            SELECT l.seq, l.hash INTO head_seq, head_hash
                FROM {{log}} l ORDER BY l.seq DESC LIMIT 1;
            IF NOT FOUND THEN
                head_seq := 0;
                head_hash := '{GENESIS}';
            END IF;
            -- the Merkle tree grows here only while complete up to the head (else the
            -- client's build_tree catches up, in order)
            grow := to_regclass('{{tree_text}}') IS NOT NULL;
            IF grow THEN  -- nodes are numbered as appends create them (merkle.stored_index)
                grow := head_seq = 0 OR EXISTS (
                    SELECT 1 FROM {{tree}} t WHERE t.id = 2 * (head_seq - 1)
                        - length(replace((head_seq - 1)::bit(64)::text, '0', '')));
            END IF;
            FOR i IN 1 .. coalesce(array_length(data, 1), 0) LOOP
                head_seq := head_seq + 1;
                stamp := to_char(clock_timestamp() AT TIME ZONE 'UTC',
                                 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
                rec := {template};
                out_previous := head_hash;
                head_hash := encode(sha256(convert_to(head_hash || rec, 'UTF8')), 'hex');
                INSERT INTO {{log}} (seq, record, hash) VALUES (head_seq, rec, head_hash);
                IF grow THEN
                    node := sha256('\\x00'::bytea || convert_to(rec, 'UTF8'));
                    lvl := 0;
                    ix := head_seq - 1;
                    nid := 2 * ix - length(replace(ix::bit(64)::text, '0', ''));
                    INSERT INTO {{tree}} (id, hash) VALUES (nid, node);
                    WHILE ix % 2 = 1 LOOP
                        -- the left sibling (lvl, ix - 1): created by the append of leaf
                        -- last = (ix << lvl) - 1, as number 2*last - popcount(last) + lvl
                        last := (ix << lvl) - 1;
                        SELECT t.hash INTO STRICT sibling FROM {{tree}} t
                            WHERE t.id = 2 * last - length(replace(last::bit(64)::text, '0', ''))
                                + lvl;
                        node := sha256('\\x01'::bytea || sibling || node);
                        lvl := lvl + 1;
                        ix := ix / 2;
                        nid := nid + 1;
                        INSERT INTO {{tree}} (id, hash) VALUES (nid, node);
                    END LOOP;
                END IF;
                out_seq := head_seq;
                out_time := stamp;
                out_hash := head_hash;
                RETURN NEXT;
            END LOOP;
        END
    """
    return sql.SQL(
        "CREATE OR REPLACE FUNCTION {fn} (data text[], event text[], pseudonym text[], "
        "sealed text[]) RETURNS TABLE (out_seq bigint, out_time text, out_hash text, "
        "out_previous text) LANGUAGE plpgsql VOLATILE SECURITY INVOKER "
        "SET search_path = pg_catalog, pg_temp AS {body}"
    ).format(
        fn=sql.Identifier(schema, APPEND_FUNCTION),
        body=sql.Literal(
            body.replace("{log}", _quoted(schema) + ".audit_log")
            .replace("{tree_text}", (_quoted(schema) + ".audit_tree").replace("'", "''"))
            .replace("{tree}", _quoted(schema) + ".audit_tree")
        ),
    )


def _role(conn: psycopg.Connection[Any], name: str, password: str | None, login: bool) -> None:
    exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
    verb = sql.SQL("ALTER ROLE" if exists else "CREATE ROLE")
    options: sql.Composed | sql.SQL = sql.SQL("LOGIN" if login else "NOLOGIN")
    if password is not None:
        options = sql.SQL("{} PASSWORD {}").format(options, sql.Literal(password))
    conn.execute(
        sql.SQL("{} {} {} NOSUPERUSER NOCREATEDB NOCREATEROLE").format(
            verb, sql.Identifier(name), options
        )
    )


def bootstrap(
    admin_dsn: str,
    *,
    roles: Roles | None = None,
    schema: str = DEFAULT_SCHEMA,
    app_password: str | None = None,
    maintenance_password: str | None = None,
    timeout: float = 5.0,
) -> Bootstrapped:
    """Create (or bring up to date) the schema and the three roles; idempotent.

    Run it as a role that may create roles and schemas in the database. Passwords default to
    fresh random ones; the returned DSNs carry them.
    """
    roles = roles or Roles()
    app_password = app_password or secrets.token_urlsafe(24)
    maintenance_password = maintenance_password or secrets.token_urlsafe(24)
    s = sql.Identifier(schema)
    try:
        with (
            pg_connect(admin_dsn, connect_timeout=max(1, int(timeout))) as conn,
            conn.transaction(),
        ):
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (AUDIT_LOCK_KEY,))
            _role(conn, roles.owner, None, login=False)
            _role(conn, roles.app, app_password, login=True)
            _role(conn, roles.maintenance, maintenance_password, login=True)
            owner, app, maint = (
                sql.Identifier(roles.owner),
                sql.Identifier(roles.app),
                sql.Identifier(roles.maintenance),
            )
            database = sql.Identifier(conn.info.dbname)
            conn.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(owner))
            conn.execute(
                sql.SQL("GRANT CONNECT ON DATABASE {} TO {}, {}").format(database, app, maint)
            )
            conn.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(s, owner)
            )
            conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(s))
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}, {}").format(s, app, maint))
            conn.execute(sql.SQL("SET LOCAL ROLE {}").format(owner))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {}.audit_meta "
                    "(key text PRIMARY KEY, value text NOT NULL)"
                ).format(s)
            )
            row = conn.execute(
                sql.SQL("SELECT value FROM {}.audit_meta WHERE key = 'schema_version'").format(s)
            ).fetchone()
            version = int(row[0]) if row else 0
            migrations = _migrations(schema)
            for _name, statements in migrations[version:]:
                for statement in statements:
                    conn.execute(statement)
            conn.execute(
                sql.SQL(
                    "INSERT INTO {}.audit_meta (key, value) VALUES ('schema_version', %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
                ).format(s),
                (str(len(migrations)),),
            )
            tables = ("audit_log", "audit_meta", "audit_checkpoint", "audit_tree", *keys.TABLES)
            for table in tables:
                conn.execute(
                    sql.SQL("REVOKE ALL ON {}.{} FROM PUBLIC, {}, {}").format(
                        s, sql.Identifier(table), app, maint
                    )
                )
            grants = [
                ("SELECT, INSERT", "audit_log", app),
                ("SELECT", "audit_meta", app),
                ("SELECT", "audit_checkpoint", app),
                ("SELECT, INSERT", "audit_tree", app),  # never UPDATE, DELETE (CT1)
                ("SELECT", "audit_tree", maint),
                ("SELECT", "audit_log", maint),
                ("SELECT", "audit_meta", maint),
                ("SELECT, INSERT", "audit_checkpoint", maint),
                *keys.key_grants(roles.app, roles.maintenance),
            ]
            for privileges, table, role in grants:
                conn.execute(
                    sql.SQL("GRANT {} ON {}.{} TO {}").format(
                        sql.SQL(privileges),
                        s,
                        sql.Identifier(table),
                        sql.Identifier(role) if isinstance(role, str) else role,
                    )
                )
            # code, like grants, is (re)made on every bootstrap: an older schema gains it
            conn.execute(_append_function(schema))
            append_fn = sql.SQL("{}(text[], text[], text[], text[])").format(
                sql.Identifier(schema, APPEND_FUNCTION)
            )
            conn.execute(
                sql.SQL("REVOKE ALL ON FUNCTION {} FROM PUBLIC, {}").format(append_fn, maint)
            )
            conn.execute(sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}").format(append_fn, app))
            for statement in keys.key_functions(schema):  # the only way a key is deleted
                conn.execute(statement)
            for fn in keys.function_signatures(schema):
                conn.execute(sql.SQL("REVOKE ALL ON FUNCTION {} FROM PUBLIC").format(fn))
                conn.execute(
                    sql.SQL("GRANT EXECUTE ON FUNCTION {} TO {}, {}").format(fn, app, maint)
                )
            conn.execute("RESET ROLE")
    except psycopg.errors.InsufficientPrivilege as err:
        raise AuditPermissionError(failed(_("audit bootstrap"), err)) from err
    except psycopg.Error as err:
        raise AuditLogError(
            failed(_("audit bootstrap on {where} failed").format(where=redact_url(admin_dsn)), err)
        ) from err
    return Bootstrapped(
        app_dsn=make_conninfo(admin_dsn, user=roles.app, password=app_password),
        maintenance_dsn=make_conninfo(
            admin_dsn, user=roles.maintenance, password=maintenance_password
        ),
        roles=roles,
        schema=schema,
    )
