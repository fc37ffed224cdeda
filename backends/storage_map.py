"""The storage map: the seed's table — which engine holds which datum — made live.

One :class:`StorageRow` per datum kind (sessions, tickets, feed, semantic memory, memories,
conversations, conversation index, conversation vectors, knowledge base, knowledge base
vectors, graph, audit log, checkpoints, pseudonym keys): the engine holding it *now* (from the
configuration), its durability class from the seed's rule, how many items it holds and how
much disk it takes (counted in the stores themselves, not estimated), its health, and what
happens if it is lost.

The seed's rule (SPEC, "if this datum is lost, what happens?"):

============== ==================================== ==========================================
class          answer                               engines
============== ==================================== ==========================================
recomputable   "it is recomputed"                   a cache (Redis, memory), a derived index
history        "I lose history"                     SQLite in WAL mode, JSON files
provable       "I cannot prove nobody touched it"   the hash-chained audit log (+ checkpoints)
============== ==================================== ==========================================

Reading the map never writes user data: embedded SQLite files are opened read-only (or not at
all when they do not exist yet); servers are asked with the configured timeouts; stores that
live inside an assistant's service (Qdrant local mode, Chroma) are read through that service,
so the map never fights the window for a folder lock. Each row is one step of ``progress``
(cancellable); a store that cannot be read is a row with a health message, never an exception.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backends import stores
from backends.config import Config, redact_url
from backends.errors import CancelledError, CustodiaEnvironmentError
from backends.progress import Progress
from backends.services import open_store

if TYPE_CHECKING:
    from backends.services import Services

log = logging.getLogger(__name__)

RECOMPUTABLE = "recomputable"
HISTORY = "history"
PROVABLE = "provable"
DURABILITY = (RECOMPUTABLE, HISTORY, PROVABLE)

OK = "ok"
NOT_CREATED = "not created yet"
NOT_AVAILABLE = "assistant not available yet"

#: the datum kinds, in the order the map shows them
KINDS = (
    "sessions",
    "tickets",
    "feed",
    "semantic memory",
    "memories",
    "conversations",
    "conversation index",
    "conversation vectors",
    "knowledge base",
    "knowledge base vectors",
    "graph",
    "audit log",
    "checkpoints",
    "pseudonym keys",
)

# Files and names the assistants use (kept in one place; tests check them against the stores).
SESSIONS_FILE = "multiagent.sqlite3"
MEMORIES_FILE = "memories.sqlite3"
CONVERSATIONS_DIR = "conversations"
CONVERSATIONS_INDEX_FILE = "conversations.sqlite3"
AUDIT_FILE = "audit.sqlite3"
KEYS_FILE = "audit-keys.sqlite3"
SIGNING_KEY_FILE = "audit-signing.key"
CHECKPOINTS_FILE = "audit-checkpoints.jsonl"
NAMESPACE = "custodia"
SESSION_PREFIX = f"{NAMESPACE}:session:"
TICKET_PREFIX = f"{NAMESPACE}:ticket:"


@dataclass(frozen=True)
class StorageRow:
    """One datum kind: where it lives now, how much of it there is, what its loss means."""

    kind: str
    assistant: str
    engine: str
    where: str
    durability: str
    items: int | None  # None: could not be counted (see ``health``)
    unit: str
    size_bytes: int | None  # None: not measurable from here (a server's own disk)
    health: str  # "ok", "not created yet", or why it cannot be used
    if_lost: str
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.health in (OK, NOT_CREATED)

    def items_text(self) -> str:
        if self.items is None:
            return "?"
        return f"{self.items:,} {self.unit if self.items != 1 else singular(self.unit)}"

    def size_text(self) -> str:
        return "—" if self.size_bytes is None else human_size(self.size_bytes)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ok"] = self.ok
        return out


def singular(unit: str) -> str:
    if unit.endswith("ies"):
        return unit[:-3] + "y"
    return unit[:-1] if unit.endswith("s") else unit


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"  # pragma: no cover


# -- measuring files ----------------------------------------------------------------------------


def file_size(path: Path) -> int:
    """A file's bytes, with its SQLite ``-wal`` and ``-shm`` companions when present."""
    total = 0
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(OSError):
            total += candidate.stat().st_size
    return total


def dir_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).lstat().st_size
    return total


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to an existing SQLite file (never creates one)."""
    if not path.exists():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0, isolation_level=None
    )
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        yield conn
    finally:
        conn.close()


def _scalar(path: Path, sql: str) -> int:
    with read_only(path) as conn:
        row = conn.execute(sql).fetchone()
    return int(row[0] or 0) if row else 0


# -- the map -----------------------------------------------------------------------------------


Probe = Callable[["_Context"], StorageRow]


@dataclass
class _Context:
    config: Config
    services: Services | None


def _error_text(err: BaseException) -> str:
    if isinstance(err, CustodiaEnvironmentError):
        return str(err)
    if isinstance(err, sqlite3.Error | OSError):
        return f"cannot read: {err}"
    return f"{type(err).__name__}: {err}"


def _guard(base: StorageRow, measure: Callable[[], StorageRow]) -> StorageRow:
    """``measure()``, or ``base`` with the reason it failed as its health."""
    try:
        return measure()
    except CancelledError:
        raise
    except Exception as err:
        if not isinstance(err, CustodiaEnvironmentError | sqlite3.Error | OSError):
            log.exception("storage map: measuring %s failed", base.kind)
        return replace(base, health=_error_text(err))


def _sqlite_row(base: StorageRow, path: Path, count_sql: str, **extra: Any) -> StorageRow:
    if not path.exists():
        return replace(base, items=0, size_bytes=0, health=NOT_CREATED, **extra)
    items = _scalar(path, count_sql)
    return replace(base, items=items, size_bytes=file_size(path), health=OK, **extra)


def _redis_items(config: Config, prefix: str) -> tuple[int, int | None]:
    """(live keys under ``prefix``, their memory in bytes) on the configured Redis."""
    store = open_store("ttl", config)  # the configured one is Redis here
    try:
        items = store.items(prefix)
        size: int | None = 0
        try:
            for item in items[:10_000]:
                usage = store.client.memory_usage(item.key)
                size = (size or 0) + int(usage or 0)
        except Exception:  # MEMORY USAGE may be refused (ACLs): the count still stands
            size = None
        return len(items), size
    finally:
        store.close()


# --- multi-agent ---


def _sessions(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    path = cfg.path(SESSIONS_FILE)
    l2 = "Redis" if cfg.cache == "redis" else "in-process"
    base = StorageRow(
        "sessions",
        "multi-agent",
        f"SQLite (WAL) + {l2} L2",
        str(path),
        HISTORY,
        None,
        "sessions",
        None,
        OK,
        "history lost: the SQLite mirror is the durable copy"
        + (
            " (Redis L2 keeps the last 24 h and repairs it at the next start)"
            if l2 == "Redis"
            else ""
        ),
    )

    def measure() -> StorageRow:
        row = _sqlite_row(base, path, "SELECT count(*) FROM sessions")
        if cfg.cache == "redis":
            try:
                keys, _ = _redis_items(cfg, SESSION_PREFIX)
                row = replace(row, note=f"{keys} in Redis L2 ({redact_url(cfg.redis_url)})")
            except CustodiaEnvironmentError as err:
                row = replace(row, health=f"L2: {err}")
        return row

    return _guard(base, measure)


def _tickets(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    redis = cfg.cache == "redis"
    store = stores.describe("ttl", cfg)
    base = StorageRow(
        "tickets",
        "multi-agent",
        store.engine,
        store.location,
        RECOMPUTABLE,
        None,
        "tickets",
        None,
        OK,
        "nothing durable: a ticket is a 30-minute hand-off; the session records the work",
    )

    def measure() -> StorageRow:
        if redis:
            count, size = _redis_items(cfg, TICKET_PREFIX)
            return replace(base, items=count, size_bytes=size)
        services = ctx.services
        if services is not None and services.is_built("multiagent"):
            from backends.multiagent import get_service

            return replace(base, items=len(get_service(services).live_tickets()))
        return replace(base, items=0, note="only while a task runs in this process")

    return _guard(base, measure)


def _feed(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    redis = cfg.cache == "redis"
    path = cfg.path(SESSIONS_FILE)
    bus = stores.describe("bus", cfg)
    base = StorageRow(
        "feed",
        "multi-agent",
        bus.engine,
        bus.location,
        RECOMPUTABLE,
        None,
        "events",
        None,
        OK,
        "nothing: every event is also kept in its session",
        "events kept in sessions; the bus itself stores none",
    )

    def measure() -> StorageRow:
        row = base
        if path.exists():
            row = replace(
                row,
                items=_scalar(
                    path,
                    "SELECT coalesce(sum(json_array_length(data, '$.events')), 0) "
                    "FROM sessions WHERE json_valid(data)",
                ),
            )
        else:
            row = replace(row, items=0)
        if redis:
            store = open_store("ttl", cfg)
            try:
                store.ping()
            finally:
                store.close()
        return row

    return _guard(base, measure)


def _semantic_memory(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    local = not cfg.qdrant_url
    base = StorageRow(
        "semantic memory",
        "multi-agent",
        "qdrant-edge (embedded)" if local else "Qdrant server",
        str(cfg.qdrant_edge_path) if local else cfg.qdrant_url,
        RECOMPUTABLE,
        None,
        "points",
        None,
        OK,
        "the experts stop recalling past results; the results stay in their sessions",
    )

    def measure() -> StorageRow:
        services = ctx.services
        if local and not (cfg.qdrant_edge_path.exists() or cfg.qdrant_path.exists()):
            return replace(base, items=0, size_bytes=0, health=NOT_CREATED)
        if services is None:
            raise CustodiaEnvironmentError("needs the running services")
        from backends.multiagent import get_service

        status = get_service(services).memory_status()
        items = sum(s.points for s in status)
        problems = [s.problem for s in status if s.problem]
        return replace(
            base,
            items=items,
            size_bytes=dir_size(cfg.qdrant_edge_path) if local else None,
            health=problems[0] if problems else OK,
            note=", ".join(f"{s.name} {s.points}" for s in status),
        )

    return _guard(base, measure)


# --- memories ---


def _memories(ctx: _Context) -> StorageRow:
    path = ctx.config.path(MEMORIES_FILE)
    base = StorageRow(
        "memories",
        "memories",
        "SQLite (WAL), vectors as BLOBs",
        str(path),
        HISTORY,
        None,
        "memories",
        None,
        OK,
        "lost: the facts the user asked to be remembered (back up this file)",
    )
    return _guard(base, lambda: _sqlite_row(base, path, "SELECT count(*) FROM vectores"))


# --- conversations ---


def _conversations(ctx: _Context) -> StorageRow:
    folder = ctx.config.path(CONVERSATIONS_DIR)
    base = StorageRow(
        "conversations",
        "conversations",
        "JSON files (one per conversation)",
        str(folder),
        HISTORY,
        None,
        "files",
        None,
        OK,
        "lost: they are the source of truth (back up this folder)",
    )

    def measure() -> StorageRow:
        if not folder.exists():
            return replace(base, items=0, size_bytes=0, health=NOT_CREATED)
        from backends.conversations.files import SUFFIX, is_valid_id

        count = size = 0
        with os.scandir(folder) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(SUFFIX) or not is_valid_id(name[: -len(SUFFIX)]):
                    continue
                if entry.is_file(follow_symlinks=False):
                    count += 1
                    size += entry.stat(follow_symlinks=False).st_size
        return replace(base, items=count, size_bytes=size)

    return _guard(base, measure)


def _conversation_index(ctx: _Context) -> StorageRow:
    path = ctx.config.path(CONVERSATIONS_INDEX_FILE)
    base = StorageRow(
        "conversation index",
        "conversations",
        "SQLite (WAL)",
        str(path),
        RECOMPUTABLE,
        None,
        "rows",
        None,
        OK,
        "rebuilt from the JSON files at the next start",
    )

    def measure() -> StorageRow:
        row = _sqlite_row(base, path, "SELECT count(*) FROM conversations")
        if row.health == OK:
            bad = _scalar(path, "SELECT count(*) FROM conversations WHERE error IS NOT NULL")
            if bad:
                row = replace(row, note=f"{bad} unreadable now (no key, damaged)")
        return row

    return _guard(base, measure)


def _chroma_where(cfg: Config) -> tuple[str, str]:
    if cfg.chroma_url:
        return "Chroma server", cfg.chroma_url
    return "Chroma local", str(cfg.chroma_path)


def _conversation_vectors(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    engine, where = _chroma_where(cfg)
    base = StorageRow(
        "conversation vectors",
        "conversations",
        engine,
        where,
        RECOMPUTABLE,
        None,
        "vectors",
        None,
        OK,
        "rebuilt from the JSON files (Rebuild index)",
    )

    def measure() -> StorageRow:
        if not cfg.chroma_url and not cfg.chroma_path.exists():
            return replace(base, items=0, size_bytes=0, health=NOT_CREATED)
        if ctx.services is None:
            raise CustodiaEnvironmentError("needs the running services")
        from backends.conversations import get_service

        count = get_service(ctx.services).vectors().count()
        size = None if cfg.chroma_url else dir_size(cfg.chroma_path)
        note = "" if cfg.chroma_url else "size: the whole Chroma folder (shared with the tutor)"
        return replace(base, items=count, size_bytes=size, note=note)

    return _guard(base, measure)


# --- clinical tutor ---


TUTOR_FILE = "tutor.sqlite3"
GRAPH_FILE = "tutor-graph.sqlite3"


def _tutor_rows(ctx: _Context) -> list[StorageRow]:
    try:
        import backends.tutor.service  # noqa: F401
    except ImportError:
        available = False
    else:
        available = True
    rows = [_knowledge_base(ctx), _knowledge_base_vectors(ctx), _graph(ctx)]
    if not available:
        rows = [replace(r, health=NOT_AVAILABLE, items=None, size_bytes=None) for r in rows]
    return rows


def _knowledge_base(ctx: _Context) -> StorageRow:
    path = ctx.config.path(TUTOR_FILE)
    base = StorageRow(
        "knowledge base",
        "clinical tutor",
        "SQLite (chunks + FTS5)",
        str(path),
        HISTORY,
        None,
        "chunks",
        None,
        OK,
        "the shipped notes are imported again; documents you imported are lost",
    )

    def measure() -> StorageRow:
        row = _sqlite_row(base, path, "SELECT count(*) FROM chunks")
        if row.health == OK:
            documents = _scalar(path, "SELECT count(*) FROM documents")
            mine = _scalar(path, "SELECT count(*) FROM documents WHERE scope LIKE 'user:%'")
            row = replace(row, note=f"{documents} documents, {mine} imported by users")
        return row

    return _guard(base, measure)


def _knowledge_base_vectors(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    engine, where = _chroma_where(cfg)
    base = StorageRow(
        "knowledge base vectors",
        "clinical tutor",
        engine,
        where,
        RECOMPUTABLE,
        None,
        "vectors",
        None,
        OK,
        "rebuilt from the knowledge base chunks (automatically, at the tutor's next start)",
    )

    def measure() -> StorageRow:
        if not cfg.chroma_url and not cfg.chroma_path.exists():
            return replace(base, items=0, size_bytes=0, health=NOT_CREATED)
        if ctx.services is None:
            raise CustodiaEnvironmentError("needs the running services")
        embedder = ctx.services.embedder
        vectors = open_store(
            "chunks", cfg, embedder_name=embedder.name, dimension=embedder.dimension
        )
        try:
            count = vectors.count()
        finally:
            vectors.close()
        note = "" if cfg.chroma_url else "size: counted with the conversation vectors"
        return replace(base, items=count, note=note)

    return _guard(base, measure)


def _graph(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    bolt = cfg.graph == "neo4j"
    path = cfg.path(GRAPH_FILE)
    store = stores.describe("graph", cfg, path=path)
    base = StorageRow(
        "graph",
        "clinical tutor",
        store.engine,
        store.location,
        RECOMPUTABLE,
        None,
        "relations",
        None,
        OK,
        "rebuilt from the knowledge base (terms that co-occur in a chunk)",
    )

    def measure() -> StorageRow:
        if not bolt:
            row = _sqlite_row(
                base, path, f"SELECT count(*) FROM relations WHERE ns = '{NAMESPACE}'"
            )
            if row.health == OK:
                entities = _scalar(path, f"SELECT count(*) FROM entities WHERE ns = '{NAMESPACE}'")
                row = replace(row, note=f"{entities} entities")
            return row
        if ctx.services is None:
            raise CustodiaEnvironmentError("needs the running services")
        from backends.tutor.service import get_service

        graph = get_service(ctx.services).graph  # the tutor's own driver
        counts = graph.counts()
        describe = getattr(graph, "describe", None)  # a server that can say what it is
        engine = f"Bolt server ({describe()})" if callable(describe) else base.engine
        return replace(
            base,
            engine=engine,
            items=sum(counts.relations.values()),
            note=f"{counts.entities} entities",
        )

    return _guard(base, measure)


# --- audit ---


def _audit_service(ctx: _Context) -> Any:
    from backends.audit.service import get_service

    if ctx.services is None:
        raise CustodiaEnvironmentError("needs the running services")
    return get_service(ctx.services)


def _audit_exists(cfg: Config) -> bool:
    return cfg.audit == "postgres" or cfg.path(AUDIT_FILE).exists()


def _audit_log(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    postgres = cfg.audit == "postgres"
    store = stores.describe("audit_log", cfg, path=cfg.path(AUDIT_FILE))
    base = StorageRow(
        "audit log",
        "clinical tutor",
        store.engine,
        store.location,
        PROVABLE,
        None,
        "records",
        None,
        OK,
        "detectable: signed checkpoints kept outside the log show what existed",
    )

    def measure() -> StorageRow:
        if not _audit_exists(cfg):
            return replace(base, items=0, size_bytes=0, health=NOT_CREATED)
        service = _audit_service(ctx)
        head = service.log.head()
        result = service.verify(from_checkpoint=True)
        size = file_size(cfg.path(AUDIT_FILE)) if not postgres else _postgres_size(service.log)
        return replace(
            base,
            items=head.seq,
            size_bytes=size,
            health=OK if result.ok else result.line(),
            note=f"chain {result.line()}",
        )

    return _guard(base, measure)


def _postgres_size(audit_log: Any) -> int | None:
    """``pg_total_relation_size`` of the log table, when the role may ask."""
    try:
        import psycopg
        from psycopg import sql

        with psycopg.connect(audit_log.dsn, connect_timeout=5) as conn:
            row = conn.execute(
                sql.SQL("SELECT pg_total_relation_size({})").format(
                    sql.Literal(f"{audit_log.schema}.audit_log")
                )
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else None
    except Exception:
        return None


def _checkpoints(ctx: _Context) -> StorageRow:
    cfg = ctx.config
    path = cfg.path(CHECKPOINTS_FILE)
    base = StorageRow(
        "checkpoints",
        "clinical tutor",
        "signed JSON lines + Ed25519 key file",
        str(path),
        PROVABLE,
        None,
        "checkpoints",
        None,
        OK,
        "the chain still verifies, but a rewrite of the whole log is no longer evident "
        "(keep exported checkpoints elsewhere)",
    )

    def measure() -> StorageRow:
        if not _audit_exists(cfg):
            return replace(base, items=0, size_bytes=0, health=NOT_CREATED)
        service = _audit_service(ctx)
        trusted = service.trust.all()
        stored = len(service.log.checkpoints())
        size = file_size(path) + file_size(cfg.path(SIGNING_KEY_FILE))
        mine = sum(1 for c in trusted if c.log_id == service.log.log_id)
        return replace(
            base,
            items=len(trusted),
            size_bytes=size,
            note=f"{mine} for this log, {stored} also stored in the log's database",
        )

    return _guard(base, measure)


def _pseudonym_keys(ctx: _Context) -> StorageRow:
    path = ctx.config.path(KEYS_FILE)
    base = StorageRow(
        "pseudonym keys",
        "clinical tutor",
        "SQLite (secure_delete), never on a server",
        str(path),
        HISTORY,
        None,
        "keys",
        None,
        OK,
        "personal fields in the log become unreadable (as if everyone was erased); "
        "the chain still verifies",
    )

    def measure() -> StorageRow:
        row = _sqlite_row(base, path, "SELECT count(*) FROM person_key")
        if row.health == OK:
            erased = _scalar(path, "SELECT count(*) FROM erased")
            row = replace(row, note=f"erased: {erased} (their keys destroyed)")
        return row

    return _guard(base, measure)


_BEFORE_TUTOR: tuple[Probe, ...] = (
    _sessions,
    _tickets,
    _feed,
    _semantic_memory,
    _memories,
    _conversations,
    _conversation_index,
    _conversation_vectors,
)
_AFTER_TUTOR: tuple[Probe, ...] = (_audit_log, _checkpoints, _pseudonym_keys)


def storage_map(
    config: Config, services: Services | None = None, progress: Progress | None = None
) -> list[StorageRow]:
    """Every datum kind, measured now. ``services``: the process's own (shared) services."""
    progress = progress or Progress()
    ctx = _Context(config, services)
    progress.start(len(KINDS), "measuring the stores")
    rows: list[StorageRow] = []
    for probe in _BEFORE_TUTOR:
        progress.check()
        rows.append(probe(ctx))
        progress.advance(1, rows[-1].kind)
    progress.check()
    tutor = _tutor_rows(ctx)
    rows.extend(tutor)
    progress.advance(len(tutor), "clinical tutor")
    for probe in _AFTER_TUTOR:
        progress.check()
        rows.append(probe(ctx))
        progress.advance(1, rows[-1].kind)
    return rows


def healthy(rows: list[StorageRow]) -> bool:
    return all(r.ok for r in rows)


# -- output ------------------------------------------------------------------------------------


def format_table(rows: list[StorageRow]) -> str:
    """The map as a fixed-width text table (``custodia storage``, ``custodia doctor``)."""
    header = ("datum", "engine", "class", "items", "size", "health", "if lost")
    table = [header] + [
        (r.kind, r.engine, r.durability, r.items_text(), r.size_text(), _short(r.health), r.if_lost)
        for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    lines = [
        "  ".join([*(c.ljust(w) for c, w in zip(line, widths, strict=False)), line[-1]]).rstrip()
        for line in table
    ]
    lines.insert(1, "-" * min(160, max(len(x) for x in lines)))
    return "\n".join(lines)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_json(config: Config, rows: list[StorageRow]) -> str:
    return json.dumps(
        {
            "profile": config.profile,
            "home": str(config.home),
            "ok": healthy(rows),
            "rows": [r.to_dict() for r in rows],
        },
        indent=2,
    )
