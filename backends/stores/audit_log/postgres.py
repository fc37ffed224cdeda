"""The server audit log: PostgreSQL with three roles (SPEC CT1, CT3).

The log connects as the **application** role, which may ``SELECT, INSERT`` the log and call
the server-side append, never ``UPDATE``, ``DELETE`` or ``TRUNCATE`` it. The schema, the
roles and that function are made by :func:`bootstrap` (:mod:`.postgres_schema`, re-exported
here); person keys live beside the log (:mod:`.keys`, CT4, CT11).

Each append is one transaction: ``pg_advisory_xact_lock(AUDIT_LOCK_KEY)``, read the head,
insert, commit — concurrent writers (threads, processes, machines) never fork the chain.
Every connection has ``connect_timeout`` and a ``statement_timeout``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Self

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from backends.config import redact_url
from backends.errors import CustodiaEnvironmentError
from backends.failures import failed
from backends.i18n import N_, _
from backends.net import pg_connect
from backends.progress import Progress
from backends.stores.audit_log import (
    CHANGED_DURING_COPY,
    DEFAULT_SCHEMA,
    AuditLogError,
    AuditPermissionError,
    ChainBatch,
    ChainCopy,
    Filter,
    Head,
    NotAPrefix,
    generated_problems,
    keys,
)
from backends.stores.audit_log.checkpoint import Checkpoint, CheckpointRejected
from backends.stores.audit_log.merkle import (
    NodeId,
    completed,
    leaf_hash,
    size_of,
    stored_index,
)
from backends.stores.audit_log.postgres_schema import (
    APPEND_FUNCTION,
    AUDIT_LOCK_KEY,
    Bootstrapped,
    Roles,
    bootstrap,
)
from backends.stores.audit_log.record import Draft, Entry, chain_drafts, chain_hash
from backends.stores.audit_log.tree_build import TreeBuild
from backends.stores.description import Measurement, Probed
from backends.stores.server import ServerStore, reached

if TYPE_CHECKING:
    from backends.config import Config

#: what callers import from here (bootstrap and the roles live in :mod:`.postgres_schema`)
__all__ = ["Bootstrapped", "PostgresAuditLog", "Roles", "bootstrap", "redact_dsn"]

STATEMENT_TIMEOUT_MS = 60_000


def redact_dsn(dsn: str) -> str:
    if "://" in dsn:
        return redact_url(dsn)
    try:
        params = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "<invalid DSN>"
    if params.get("password"):
        params["password"] = "***"
    return make_conninfo("", **{k: v for k, v in params.items() if v is not None})


def _fail(what: str, err: psycopg.Error) -> AuditLogError:
    """``what`` (in the user's language), the cause, the server's own words as details."""
    if isinstance(err, psycopg.errors.InsufficientPrivilege):
        return AuditPermissionError(failed(what, err))
    return AuditLogError(failed(what, err))


class PostgresAuditLog(ChainCopy, TreeBuild, ServerStore):
    """The :class:`~backends.stores.audit_log.AuditLog` in a Postgres schema (:func:`bootstrap`)."""

    kind = "postgres"

    #: the engine, as the storage map names it
    ENGINE = N_("Postgres (roles, advisory lock)")
    LABEL = "postgres"
    PRODUCT = "Postgres"
    URL_SETTING = "postgres_dsn"

    @classmethod
    def checkup(cls, config: Config, **context: Any) -> Probed:
        """The server answers (its version), with the configured timeout."""
        try:
            timeout = max(1, int(config.network_timeout))
            with pg_connect(config.postgres_dsn, connect_timeout=timeout) as conn:
                row = conn.execute("SHOW server_version").fetchone()
                # every turn needs this desktop's copy of the log's key-encryption key
                problem = keys.kek_problem(conn, DEFAULT_SCHEMA, config.path(keys.KEK_FILE))
                if problem:
                    raise CustodiaEnvironmentError(problem)
                return Probed(str(row[0]) if row else "")
        except psycopg.Error as err:
            raise cls.unreachable(err) from err

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The records (the head's seq) through the running log (else one of its own), and
        ``pg_total_relation_size`` of the table when the role may ask (else None)."""
        with reached(running, lambda: cls.from_config(config, **context)) as log:
            return Measurement(log.head().seq, log.table_size())

    def table_size(self) -> int | None:
        """``pg_total_relation_size`` of the log table, when the role may ask."""
        try:
            with pg_connect(self.dsn, connect_timeout=max(1, int(self._timeout))) as conn:
                row = conn.execute(
                    sql.SQL("SELECT pg_total_relation_size({})").format(
                        sql.Literal(f"{self.schema}.audit_log")
                    )
                ).fetchone()
            return int(row[0]) if row and row[0] is not None else None
        except psycopg.Error:
            return None

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        timeout: float = 5.0,
        build: Progress | None = None,
    ) -> None:
        self.dsn = dsn
        self.schema = schema
        self._timeout = timeout
        self._t = sql.Identifier(schema, "audit_log")
        self._write_lock = threading.Lock()
        self._read_lock = threading.Lock()
        self._writer: psycopg.Connection[Any] | None = None
        #: append through the server-side function (False: schema from before it existed)
        self._server_append = True
        self._append_call = sql.SQL("SELECT * FROM {}(%s, %s, %s, %s)").format(
            sql.Identifier(schema, APPEND_FUNCTION)
        )
        self._reader: psycopg.Connection[Any] | None = None
        with self._read_lock:
            conn = self._reading()
            try:
                row = conn.execute(
                    sql.SQL("SELECT value FROM {} WHERE key = 'log_id'").format(
                        sql.Identifier(schema, "audit_meta")
                    )
                ).fetchone()
                insert = conn.execute(
                    "SELECT has_table_privilege(current_user, %s, 'INSERT')",
                    (f"{schema}.audit_checkpoint",),
                ).fetchone()
            except psycopg.errors.UndefinedTable as err:
                self.close()
                raise AuditLogError(
                    _(
                        "{where}: no audit schema {schema!r}: run `custodia audit bootstrap` "
                        "as the database administrator first"
                    ).format(where=self.location, schema=schema)
                ) from err
            except psycopg.Error as err:
                self.close()
                raise _fail(
                    _("{where}: cannot open the audit log").format(where=self.location), err
                ) from err
        if row is None:
            self.close()
            raise AuditLogError(
                _("{where}: the audit schema has no log id").format(where=self.location)
            )
        self._log_id = str(row[0])
        self.stores_checkpoints = bool(insert and insert[0])
        self._tree = sql.Identifier(schema, "audit_tree")
        tree = self._query(sql.SQL("SELECT to_regclass(%s) IS NOT NULL"), (f"{schema}.audit_tree",))
        #: False for a schema bootstrapped before the tree (bootstrap again to add it)
        self._has_tree = bool(tree and tree[0][0])
        #: person keys live beside the log (False: bootstrapped before; they stay local)
        found = self._query(
            sql.SQL("SELECT to_regclass(%s) IS NOT NULL"), (f"{schema}.audit_person_key",)
        )
        self.has_key_tables = bool(found and found[0][0])
        if self._has_tree and build is not None:
            self.build_tree(build)

    # -- connections -----------------------------------------------------------------------

    @classmethod
    def from_config(cls, config: Config, *, schema: str = DEFAULT_SCHEMA, **context: Any) -> Self:
        """The ``schema`` at ``postgres_dsn``."""
        log = cls(config.postgres_dsn, schema=schema, timeout=config.network_timeout)
        if not context.get("read_only"):  # a log from before the tree gets it on first start
            progress = context.get("progress")
            log.build_tree(progress if isinstance(progress, Progress) else None)
        return log

    def _connect(self, autocommit: bool = True) -> psycopg.Connection[Any]:
        try:
            return pg_connect(
                self.dsn,
                autocommit=autocommit,
                connect_timeout=max(1, int(self._timeout)),
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}",
            )
        except psycopg.Error as err:
            raise _fail(_("{where}: cannot connect").format(where=self.location), err) from err

    def _writing(self) -> psycopg.Connection[Any]:
        if self._writer is None or self._writer.closed or self._writer.broken:
            self._writer = self._connect()
        return self._writer

    def _reading(self) -> psycopg.Connection[Any]:
        if self._reader is None or self._reader.closed or self._reader.broken:
            self._reader = self._connect()
        return self._reader

    @property
    def log_id(self) -> str:
        return self._log_id

    @property
    def location(self) -> str:
        return redact_dsn(self.dsn)

    # -- writing ---------------------------------------------------------------------------
    def append_many(self, drafts: Sequence[Draft]) -> list[Entry]:
        if not drafts:
            return []
        with self._write_lock:
            conn = self._writing()
            try:
                if self._server_append:
                    try:
                        return self._append_on_server(conn, drafts)
                    except psycopg.errors.UndefinedFunction:
                        # a schema bootstrapped before the function existed: chain here
                        self._server_append = False
                return self._append_here(conn, drafts)
            except psycopg.Error as err:
                raise _fail(_("{where}: append failed").format(where=self.location), err) from err

    def _append_on_server(
        self, conn: psycopg.Connection[Any], drafts: Sequence[Draft]
    ) -> list[Entry]:
        """One statement (autocommit: one transaction, one round trip)."""
        columns: tuple[list[str], ...] = ([], [], [], [])
        for draft in drafts:
            for column, fragment in zip(columns, draft.fragments(), strict=True):
                column.append(fragment)
        rows = conn.execute(self._append_call, columns).fetchall()
        if len(rows) != len(drafts):
            raise AuditLogError(
                _("{where}: the server appended {done} of {count} records").format(
                    where=self.location, done=len(rows), count=len(drafts)
                )
            )
        entries = []
        for draft, (seq, time, digest, previous) in zip(drafts, rows, strict=True):
            record = draft.record(int(seq), str(time))
            if chain_hash(str(previous), record) != digest:
                # committed already, so verification will flag it too; say so now
                raise AuditLogError(
                    _(
                        "{where}: the server chained record {seq} differently from CT2 "
                        "(run `custodia audit verify`)"
                    ).format(where=self.location, seq=seq)
                )
            entries.append(
                Entry(
                    int(seq),
                    str(time),
                    draft.event_type,
                    draft.pseudonym,
                    dict(draft.data),
                    draft.sealed,
                    record,
                    str(digest),
                )
            )
        return entries

    def _append_here(self, conn: psycopg.Connection[Any], drafts: Sequence[Draft]) -> list[Entry]:
        """The plain chain's steps from the client: lock, read the head, insert, commit."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (AUDIT_LOCK_KEY,))
            row = conn.execute(
                sql.SQL("SELECT seq, hash FROM {} ORDER BY seq DESC LIMIT 1").format(self._t)
            ).fetchone()
            entries = chain_drafts(drafts, (int(row[0]), str(row[1])) if row else None)
            # one statement, one round trip, however many rows
            values = sql.SQL(", ").join([sql.SQL("(%s, %s, %s)")] * len(entries))
            conn.execute(
                sql.SQL("INSERT INTO {} (seq, record, hash) VALUES ").format(self._t) + values,
                [v for e in entries for v in (e.seq, e.record, e.hash)],
            )
            self._grow_tree(conn, entries[0].seq - 1, [e.record for e in entries])
        return entries

    def extend(self, rows: Sequence[tuple[int, str, str]], after: Head) -> None:
        if not rows:
            return
        with self._write_lock:
            conn = self._writing()
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (AUDIT_LOCK_KEY,))
                    row = conn.execute(
                        sql.SQL("SELECT seq, hash FROM {} ORDER BY seq DESC LIMIT 1").format(
                            self._t
                        )
                    ).fetchone()
                    head = Head(int(row[0]), str(row[1])) if row else Head()
                    if head != after:
                        raise NotAPrefix(
                            _(CHANGED_DURING_COPY).format(
                                log=self.location, head=head.seq, expected=after.seq
                            ),
                            head,
                            after,
                        )
                    values = sql.SQL(", ").join([sql.SQL("(%s, %s, %s)")] * len(rows))
                    conn.execute(
                        sql.SQL("INSERT INTO {} (seq, record, hash) VALUES ").format(self._t)
                        + values,
                        [v for r in rows for v in r],
                    )
                    self._grow_tree(conn, rows[0][0] - 1, [r[1] for r in rows])
            except psycopg.Error as err:
                raise _fail(
                    _("{where}: copying records failed").format(where=self.location), err
                ) from err

    def add_checkpoint(self, checkpoint: Checkpoint) -> None:
        with self._write_lock:
            conn = self._writing()
            try:
                conn.execute(
                    sql.SQL(
                        "INSERT INTO {} (seq, key_id, body) VALUES (%s, %s, %s) "
                        "ON CONFLICT DO NOTHING"
                    ).format(sql.Identifier(self.schema, "audit_checkpoint")),
                    (checkpoint.seq, checkpoint.key_id, checkpoint.to_json()),
                )
            except psycopg.Error as err:
                raise _fail(
                    _("{where}: cannot store the checkpoint").format(where=self.location), err
                ) from err

    # -- the Merkle tree (CT10) ----------------------------------------------------------------
    def _grow_tree(self, conn: psycopg.Connection[Any], first: int, records: Sequence[str]) -> None:
        """Leaves ``first…`` and the parents they complete, in the caller's transaction (the
        client-side append and copies; the server's function does the same itself)."""
        if not self._has_tree:
            return
        count = conn.execute(
            sql.SQL("SELECT coalesce(max(id) + 1, 0) FROM {}").format(self._tree)
        ).fetchone()
        if size_of(int(count[0] if count else 0)) != first:
            return  # behind: build_tree catches up in order
        made: dict[NodeId, bytes] = {}

        def left(level: int, idx: int) -> bytes:
            h = made.get((level, idx))
            if h is None:
                row = conn.execute(
                    sql.SQL("SELECT hash FROM {} WHERE id = %s").format(self._tree),
                    (stored_index(level, idx),),
                ).fetchone()
                if row is None:
                    raise AuditLogError(
                        _("{where}: the tree lacks node ({level}, {index})").format(
                            where=self.location, level=level, index=idx
                        )
                    )
                h = bytes(row[0])
            return h

        rows: list[tuple[int, bytes]] = []
        for offset, record in enumerate(records):
            for level, idx, h in completed(first + offset, leaf_hash(record.encode("utf-8")), left):
                made[(level, idx)] = h
                rows.append((stored_index(level, idx), h))
        for start in range(0, len(rows), 5_000):
            chunk = rows[start : start + 5_000]
            conn.execute(
                sql.SQL("INSERT INTO {} (id, hash) VALUES ").format(self._tree)
                + sql.SQL(", ").join([sql.SQL("(%s, %s)")] * len(chunk)),
                [v for node in chunk for v in node],
            )

    def tree_size(self) -> int:
        if not self._has_tree:
            return 0
        rows = self._query(sql.SQL("SELECT coalesce(max(id) + 1, 0) FROM {}").format(self._tree))
        return size_of(int(rows[0][0]))

    def _can_build_tree(self) -> bool:
        """The application role may INSERT tree nodes, so any start of the app builds it."""
        return self._has_tree

    def _tree_batch(self, batch: int) -> tuple[int, int]:
        with self._write_lock:
            conn = self._writing()
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (AUDIT_LOCK_KEY,))
                    (count,) = conn.execute(
                        sql.SQL("SELECT coalesce(max(id) + 1, 0) FROM {}").format(self._tree)
                    ).fetchone() or (0,)
                    size = size_of(int(count))
                    rows = conn.execute(
                        sql.SQL(
                            "SELECT seq, record FROM {} WHERE seq > %s ORDER BY seq LIMIT %s"
                        ).format(self._t),
                        (size, batch),
                    ).fetchall()
                    if rows and rows[0][0] != size + 1:
                        raise AuditLogError(
                            _(
                                "{where}: record {seq} is missing; the tree cannot be built "
                                "past a gap (run `custodia audit verify`)"
                            ).format(where=self.location, seq=size + 1)
                        )
                    if rows:
                        self._grow_tree(conn, int(size), [str(r[1]) for r in rows])
            except psycopg.Error as err:
                raise _fail(
                    _("{where}: cannot build the Merkle tree").format(where=self.location), err
                ) from err
        return size, len(rows)

    def tree_nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        if not ids or not self._has_tree:
            return {}
        by_index = {stored_index(level, idx): (level, idx) for level, idx in ids}
        rows = self._query(
            sql.SQL("SELECT id, hash FROM {} WHERE id = ANY(%s::bigint[])").format(self._tree),
            (list(by_index),),
        )
        return {by_index[int(key)]: bytes(h) for key, h in rows}

    def check_unchanged(self) -> None:
        """Every query reads a consistent snapshot from the server: nothing to check."""

    def tree_range(self, first: int, end: int) -> list[tuple[int, bytes]]:
        if not self._has_tree or end <= first:
            return []
        rows = self._query(
            sql.SQL("SELECT id, hash FROM {} WHERE id >= %s AND id < %s ORDER BY id").format(
                self._tree
            ),
            (first, end),
        )
        return [(int(key), bytes(h)) for key, h in rows]

    # -- reading ---------------------------------------------------------------------------
    def _query(
        self, query: sql.Composed | sql.SQL, params: Sequence[object] = ()
    ) -> list[tuple[Any, ...]]:
        with self._read_lock:
            conn = self._reading()
            try:
                return conn.execute(query, params).fetchall()
            except psycopg.Error as err:
                if not conn.broken:
                    raise _fail(
                        _("{where}: cannot read the audit log").format(where=self.location), err
                    ) from err
            try:  # the server went away since the last read (restarted): reads retry once
                return self._reading().execute(query, params).fetchall()
            except psycopg.Error as err:
                raise _fail(
                    _("{where}: cannot read the audit log").format(where=self.location), err
                ) from err

    def head(self) -> Head:
        rows = self._query(
            sql.SQL("SELECT seq, hash FROM {} ORDER BY seq DESC LIMIT 1").format(self._t)
        )
        return Head(int(rows[0][0]), str(rows[0][1])) if rows else Head()

    def first_seq(self) -> int | None:
        rows = self._query(sql.SQL("SELECT min(seq) FROM {} WHERE seq > 0").format(self._t))
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def outside_chain(self) -> int | None:
        rows = self._query(sql.SQL("SELECT min(seq) FROM {} WHERE seq < 1").format(self._t))
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    def schema_problems(self) -> list[str]:
        rows = self._query(
            sql.SQL(
                "SELECT column_name, is_generated, coalesce(generation_expression, '') "
                "FROM information_schema.columns WHERE table_schema = %s "
                "AND table_name = 'audit_log'"
            ),
            (self.schema,),
        )
        found = {str(name): (str(generated), str(expr)) for name, generated, expr in rows}
        return generated_problems(
            {
                name: (generated == "ALWAYS", expr.replace("::text", "").replace('"', ""))
                for name, (generated, expr) in found.items()
            }
        )

    def chain(
        self, after_seq: int = 0, *, batch: int = 4096, until_seq: int | None = None
    ) -> Iterator[ChainBatch]:
        conn = self._connect(autocommit=False)
        try:
            query = sql.SQL(
                "SELECT seq, convert_to(record, 'UTF8'), convert_to(hash, 'UTF8') "
                "FROM {} WHERE seq > %s"
            ).format(self._t)
            params: list[object] = [after_seq]
            if until_seq is not None:
                query = query + sql.SQL(" AND seq <= %s")
                params.append(until_seq)
            with conn.cursor(name="audit_chain", binary=True) as cur:
                cur.itersize = batch
                cur.execute(query + sql.SQL(" ORDER BY seq"), params)
                while True:
                    rows = cur.fetchmany(batch)
                    if not rows:
                        break
                    yield rows
        except psycopg.Error as err:
            raise _fail(
                _("{where}: cannot read the audit log").format(where=self.location), err
            ) from err
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.close()

    def _select(self) -> sql.Composed | sql.SQL:
        return sql.SQL("SELECT seq, record, hash FROM {}").format(self._t)

    def get(self, seq: int) -> Entry | None:
        rows = self._query(self._select() + sql.SQL(" WHERE seq = %s"), (seq,))
        return Entry.parse(*rows[0]) if rows else None

    def range(self, first_seq: int, last_seq: int) -> list[Entry]:
        rows = self._query(
            self._select() + sql.SQL(" WHERE seq BETWEEN %s AND %s ORDER BY seq"),
            (first_seq, last_seq),
        )
        return [Entry.parse(*r) for r in rows]

    @staticmethod
    def _where(
        flt: Filter | None, before_seq: int | None = None
    ) -> tuple[sql.Composed | sql.SQL, list[object]]:
        clauses: list[sql.Composed | sql.SQL] = []
        params: list[object] = []
        if flt is not None:
            for column, op, value in (
                ("pseudonym", "=", flt.pseudonym),
                ("event_type", "=", flt.event_type),
                ("time", ">=", flt.since),
                ("time", "<", flt.until),
            ):
                if value:
                    clauses.append(sql.SQL("{} {} %s").format(sql.Identifier(column), sql.SQL(op)))
                    params.append(value)
        if before_seq is not None:
            clauses.append(sql.SQL("seq < %s"))
            params.append(before_seq)
        clauses.append(sql.SQL("seq > 0"))  # only what the chain covers (a row at -1 is not)
        return sql.SQL(" WHERE ") + sql.SQL(" AND ").join(clauses), params

    def page(self, flt: Filter, offset: int, limit: int) -> list[Entry]:
        where, params = self._where(flt)
        rows = self._query(
            self._select() + where + sql.SQL(" ORDER BY seq LIMIT %s OFFSET %s"),
            [*params, limit, offset],
        )
        return [Entry.parse(*r) for r in rows]

    def count(self, flt: Filter | None = None, *, before_seq: int | None = None) -> int:
        where, params = self._where(flt, before_seq)
        rows = self._query(sql.SQL("SELECT count(*) FROM {}").format(self._t) + where, params)
        return int(rows[0][0])

    def event_types(self) -> list[str]:
        rows = self._query(
            sql.SQL(
                "SELECT DISTINCT event_type FROM {} WHERE event_type IS NOT NULL ORDER BY 1"
            ).format(self._t)
        )
        return [str(r[0]) for r in rows]

    def checkpoints(self) -> list[Checkpoint]:
        rows = self._query(
            sql.SQL("SELECT body FROM {} ORDER BY seq").format(
                sql.Identifier(self.schema, "audit_checkpoint")
            )
        )
        out = []
        for (body,) in rows:
            try:
                out.append(Checkpoint.from_json(str(body)))
            except CheckpointRejected:
                out.append(Checkpoint("", -1, "", "", "", ""))
        return out

    def close(self) -> None:
        for conn in (self._writer, self._reader):
            if conn is not None:
                with contextlib.suppress(psycopg.Error):
                    conn.close()
        self._writer = self._reader = None
