"""``custodia migrate --to server``: copy the embedded data to the configured servers.

What "server" means differs per datum (DC3 and the seed's rule), so each kind has its own step:

================== ============================================================================
sessions           the durable mirror **stays SQLite** (MA1 in both profiles); sessions written
                   in the last 24 h are copied to the Redis L2 with the TTL they have left
tickets, feed      nothing to copy: 30-minute hand-offs and pub/sub messages live in the memory
                   of the running process; new ones go to Redis after the switch
semantic memory    points (vector + payload, same ids) copied to the Qdrant server when
                   ``qdrant_url`` is set; otherwise it stays in local mode
memories           **stay SQLite** (PA1: the memory table *is* SQLite; one user's memories gain
                   nothing from a server, and WAL already lets several processes share it)
conversations      the JSON files stay (CA1); the SQLite index is reconciled with them (rebuilt
                   where it differs); the vectors are re-embedded from the files into the Chroma
                   server when ``chroma_url`` is set (deterministic ids: a rerun never duplicates)
knowledge base     the chunks stay SQLite; their vectors go to the Chroma server when set; the
                   graph is rebuilt on the Bolt server from the chunks (per scope, by digest)
audit log          copied to Postgres **record by record** (the same ``seq, record, hash``),
                   each batch inside ``pg_advisory_xact_lock``; the chain is verified on both
                   sides before and after; a non-empty server log is never merged into
checkpoints        the trust file and the signing key stay local (they must live outside the
                   database); after the copy a checkpoint of the server log at the copied head
                   is signed and trusted — the link between the two logs
pseudonym keys     beside a server log, wrapped under a desktop-only key (CT4, CT11)
================== ============================================================================

The migration is a loop over :data:`DATA`, the declared list of what it knows: each
:class:`Migratable` names its step, the store role holding it and the server setting it moves to
(the key of the journal's target), and plans its step as COPY, REBUILD, STAYS or NOTHING.
Stores are opened through the registry (:func:`backends.services.open_store`) on the embedded
configuration (:func:`source_config`) and on the target's (:func:`target_config`); the copies
themselves are the stores' own ``copy_to`` (the session mirror's into the L2, the audit log's
into the server log, the semantic memory's into the Qdrant server), and the rebuilds are the
assistants' own (the conversation index and vectors, the tutor's vectors and graph). File
names come from their owners. No step names an engine class.

Nothing embedded is ever deleted or changed. Progress goes through :class:`Progress` (each
batch checks cancellation); a journal in the data dir (``migration-journal.json``) records
each finished step and the audit copy's position, so running again after an interruption
or a cancel finishes the job. A dry run (:func:`plan_migration`) reads and probes, and writes
nothing anywhere.

The audit schema and roles on Postgres are made by
:func:`backends.stores.audit_log.postgres.bootstrap` when they are missing, with the *admin DSN*
(``--admin-dsn``; by default the configured ``postgres_dsn``, which must then be a role that may
create roles). When the configured DSN names the application role, its password is kept, so the
configured DSN keeps working.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from backends import stores
from backends.config import Config, redact_url
from backends.errors import CancelledError, CustodiaEnvironmentError, StoreUnavailableError
from backends.progress import Progress
from backends.services import open_store
from backends.stores.audit_log import COPY_BATCH, DEFAULT_SCHEMA
from backends.stores.graph import DEFAULT_NAMESPACE
from backends.stores.sessions import SESSION_TTL as SESSION_TTL

if TYPE_CHECKING:
    from neo4j import Driver

    from backends.audit.checkpoints import Signer, TrustStore
    from backends.audit.verify import VerifyResult
    from backends.conversations.service import ConversationAgent
    from backends.services import Services
    from backends.stores.audit_log import AuditLog
    from backends.stores.audit_log.postgres import Roles
    from backends.stores.graph import Graph

    class ProbedGraph(Graph, Protocol):
        """A graph that says which server answers (every allow-listed adapter)."""

        def probe(self) -> str: ...

    from backends.stores.sessions import SessionMirror
    from backends.stores.ttl import TTLStore
    from backends.stores.vectors import SemanticMemory, VectorIndex
    from backends.tutor.service import Status, TutorService

log = logging.getLogger(__name__)

JOURNAL_FILE = "migration-journal.json"
JOURNAL_VERSION = 1
#: a JSON object as the journal holds it
JSONDict = dict[str, object]

COPY = "copy"
REBUILD = "rebuild"
STAYS = "stays"
NOTHING = "nothing to copy"


class MigrationError(CustodiaEnvironmentError):
    """The migration cannot go on; nothing embedded was touched."""


class AuditMergeRefused(MigrationError):
    """The server's audit log already holds records that are not this log's prefix."""


class BrokenChainError(MigrationError):
    """A chain does not verify (the embedded one before copying, or the copy after)."""


# -- plan and report ----------------------------------------------------------------------------


@dataclass
class Step:
    """One datum kind: what the migration does with it (planned, then done)."""

    name: str
    action: str  # copy | rebuild | stays | nothing to copy
    source: str
    target: str
    items: int = 0  # planned units of work (records, points, files …)
    detail: str = ""
    #: filled by the run
    done: int = 0
    state: str = "planned"  # planned | done | done earlier | skipped
    problem: str = ""  # a dry run found why this step would fail

    @property
    def works(self) -> bool:
        return self.action in (COPY, REBUILD)

    def line(self) -> str:
        head = f"{self.name:<22} {self.action:<15}"
        where = f"{self.source} -> {self.target}" if self.works else self.source
        count = f" ({self.items:,})" if self.works else ""
        text = f"{head} {where}{count}"
        if self.detail:
            text += f" — {self.detail}"
        if self.problem:
            text += f"  [PROBLEM: {self.problem}]"
        return text


@dataclass
class MigrationPlan:
    steps: list[Step]
    dry_run: bool = True
    resumed: bool = False  # a journal of an unfinished migration was found
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f"{s.name}: {s.problem}" for s in self.steps if s.problem]

    @property
    def total(self) -> int:
        return sum(s.items for s in self.steps if s.works)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    def lines(self) -> list[str]:
        out = [s.line() for s in self.steps]
        out.extend(self.notes)
        return out

    def to_dict(self) -> JSONDict:
        return {
            "dry_run": self.dry_run,
            "resumed": self.resumed,
            "problems": self.problems,
            "notes": self.notes,
            "steps": [asdict(s) for s in self.steps],
        }


@dataclass(frozen=True)
class MigrateOptions:
    """Knobs the CLI and the desktop pass through; defaults fit a real installation."""

    #: bootstrap role for the audit schema when it is missing ("" = the configured DSN)
    admin_dsn: str = ""
    #: Postgres role names for the bootstrap (default ``custodia_owner/_app/_maint``)
    roles: Roles | None = None
    schema: str = DEFAULT_SCHEMA
    #: records per Postgres transaction
    audit_batch: int = COPY_BATCH
    #: an existing neo4j driver to reuse (tests: one long-lived driver per session)
    bolt_driver: Driver | None = None
    #: the graph's namespace on the Bolt server (the app's is ``custodia``)
    graph_namespace: str = DEFAULT_NAMESPACE


def target_config(config: Config) -> Config:
    """The configuration after the switch: the same settings with ``profile = server``."""
    return replace(config, profile="server")


def source_config(config: Config) -> Config:
    """The configuration the data is copied from: the embedded profile, no vector server."""
    return replace(config, profile="embedded", qdrant_url="", chroma_url="")


# -- the journal -------------------------------------------------------------------------------


class Journal:
    """``migration-journal.json`` in the data dir: finished steps and the audit position.

    Written atomically (temporary file, fsync, rename), 0600. A journal of another version
    (or not a JSON object) is not resumed: the migration starts over, which every step
    allows (each copy resumes from what its target holds).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: JSONDict = {}

    @classmethod
    def load(cls, path: Path) -> Journal:
        journal = cls(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return journal
        except (OSError, ValueError) as err:
            raise MigrationError(f"{path}: unreadable migration journal: {err}") from err
        if isinstance(data, dict) and data.get("version") == JOURNAL_VERSION:
            journal.data = data
        return journal

    @property
    def unfinished(self) -> bool:
        return bool(self.data) and not self.data.get("finished")

    def _object(self, key: str) -> JSONDict:
        found = self.data.get(key)
        if not isinstance(found, dict):
            found = {}
            self.data[key] = found
        return found

    def target(self) -> dict[str, str]:
        found = self.data.get("target")
        return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}

    def step(self, name: str) -> JSONDict:
        steps = self._object("steps")
        found = steps.get(name)
        if not isinstance(found, dict):
            found = {}
            steps[name] = found
        return found

    @property
    def audit_link(self) -> JSONDict:
        """Which embedded log was copied into which server log (kept across migrations)."""
        return self._object("audit_link")

    def begin(self, target: dict[str, str], resume: bool) -> None:
        if not resume:
            link = self.data.get("audit_link") or {}
            self.data = {"version": JOURNAL_VERSION, "started": time.time(), "steps": {}}
            self.data["audit_link"] = link
        self.data["target"] = target
        self.data["finished"] = None
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(self.data, fh, indent=2, sort_keys=True)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as err:
            raise MigrationError(f"{self.path}: cannot write the migration journal: {err}") from err


def _target_fingerprint(target: Config) -> dict[str, str]:
    """Where the data goes, as the journal records it (its format since the first release:
    a journal resumes only towards the same servers). A key's value is empty when its datum
    stays embedded; :attr:`Migratable.server` names these keys."""
    return {
        "cache": target.cache,
        "redis": redact_url(target.redis_url) if target.cache == "redis" else "",
        "audit": target.audit,
        "postgres": redact_url(target.postgres_dsn) if target.audit == "postgres" else "",
        "graph": target.graph,
        "neo4j": target.neo4j_uri if target.graph == "neo4j" else "",
        "qdrant": target.qdrant_url,
        "chroma": target.chroma_url,
    }


# -- progress across steps ---------------------------------------------------------------------


class _StepProgress:
    """A :class:`Progress` for one step's own function, feeding the migration's progress."""

    def __init__(self, parent: Progress, label: str) -> None:
        self.parent = parent
        self.label = label
        self.reported = 0
        self.progress = Progress(callback=self._on_progress)

    def _on_progress(self, done: int, total: int, message: str) -> None:
        delta = max(0, done - self.reported)
        self.reported = max(self.reported, done)
        self.parent.advance(delta, f"{self.label}: {message}" if message else self.label)


# -- a run -------------------------------------------------------------------------------------


@dataclass
class _Run:
    config: Config
    target: Config
    services: Services
    options: MigrateOptions
    progress: Progress
    journal: Journal
    dry_run: bool
    notes: list[str] = field(default_factory=list)
    tutor: TutorService | None = None
    #: the target's graph, when the graph moves (opened with the tutor on the target)
    graph: ProbedGraph | None = None
    tutor_prepared: bool = False
    cleanup: list[Callable[[], None]] = field(default_factory=list)

    @property
    def source(self) -> Config:
        return source_config(self.config)

    @property
    def fingerprint(self) -> dict[str, str]:
        return _target_fingerprint(self.target)

    def moves(self, datum: Migratable) -> bool:
        """The target keeps ``datum`` on a server (else it stays where it is)."""
        return bool(datum.server and self.fingerprint[datum.server])

    def close(self) -> None:
        for closer in reversed(self.cleanup):
            try:
                closer()
            except Exception:
                log.exception("migration: closing a store failed")
        self.cleanup.clear()


Planner = Callable[["_Run", "Migratable"], Step]
StepRun = Callable[["_Run", Step], None]


@dataclass(frozen=True)
class Migratable:
    """One kind of data the migration knows, declared in :data:`DATA`."""

    #: the step's name (the plan's, the report's and the journal's)
    step: str
    #: the store role holding it ("" for files outside the registry: JSON files, keys)
    role: str
    #: the target's key (:func:`_target_fingerprint`) naming the server it moves to; ""
    #: when it never moves
    server: str
    #: plans the step: COPY or REBUILD when it moves, else STAYS (or NOTHING when empty)
    plan: Planner
    #: does the step's work (None: a step with no work)
    run: StepRun | None = None
    #: the step exists only when this is true (the tutor's, when the tutor is installed)
    present: Callable[[], bool] = lambda: True


def _probe(fn: Callable[[], object]) -> str:
    try:
        fn()
    except CustodiaEnvironmentError as err:
        return str(err)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return ""


def _http_probe(target: Config, url: str, path: str) -> None:
    """A read-only GET (the dry run must not even create a collection)."""
    from backends.net import http_json

    try:
        http_json(url.rstrip("/") + path, None, target.network_timeout)
    except CustodiaEnvironmentError as err:
        raise StoreUnavailableError(f"server not reachable: {err}") from err


def _count(path: Path, query: str, params: tuple[str, ...] = ()) -> int:
    """One number from an existing SQLite file, read-only (the dry run creates nothing)."""
    from backends.stores.description import scalar

    return scalar(path, query, params) if path.exists() else 0


# --- sessions ---


def _sessions_file(config: Config) -> Path:
    from backends.multiagent.service import SESSIONS_FILE

    return config.path(SESSIONS_FILE)


def _mirror(config: Config) -> SessionMirror | None:
    """The session mirror, read-only; None when it was never created."""
    path = _sessions_file(config)
    if not path.exists():
        return None
    mirror: SessionMirror = open_store("sessions", config, path=path, read_only=True)
    return mirror


def _plan_sessions(run: _Run, datum: Migratable) -> Step:
    cfg = run.config
    source = f"SQLite {_sessions_file(cfg)}"
    if not run.moves(datum):
        return Step(datum.step, STAYS, source, source, detail="no Redis configured (redis_url)")
    mirror = _mirror(cfg)
    recent = 0
    if mirror is not None:
        try:
            recent = len(mirror.recent())
        finally:
            mirror.close()
    step = Step(
        datum.step,
        COPY,
        source,
        f"Redis L2 {run.fingerprint[datum.server]}",
        items=recent,
        detail="sessions of the last 24 h (with the TTL they have left); "
        "the durable mirror stays SQLite",
    )
    if run.dry_run:
        step.problem = _probe(lambda: _l2(run, datum).ping())
    return step


def _l2(run: _Run, datum: Migratable) -> TTLStore:
    store: TTLStore = open_store(datum.role, run.target)
    run.cleanup.append(store.close)
    return store


def _run_sessions(run: _Run, step: Step) -> None:
    mirror = _mirror(run.config)
    if mirror is None:
        return
    try:
        sub = _StepProgress(run.progress, step.name)
        step.done = mirror.copy_to(_l2(run, SESSIONS), sub.progress)
    finally:
        mirror.close()


# --- tickets, feed ---


def _plan_tickets(run: _Run, datum: Migratable) -> Step:
    where = "Redis" if run.moves(datum) else "in-process"
    return Step(
        datum.step,
        NOTHING,
        f"in-process TTL store -> {where}",
        where,
        detail="30-minute hand-offs in the running process; new ones go to the new store",
    )


def _plan_feed(run: _Run, datum: Migratable) -> Step:
    where = "Redis pub/sub" if run.moves(datum) else "in-process bus"
    return Step(
        datum.step,
        NOTHING,
        f"in-process bus -> {where}",
        where,
        detail="events are not stored by the bus; each session keeps its own",
    )


# --- semantic memory ---


def _local_memory(run: _Run, datum: Migratable) -> tuple[SemanticMemory, bool]:
    """The local semantic memory, and whether it was opened here (else it is the process's
    own: only one process may hold it)."""
    if stores.kind_for(datum.role, run.config) == stores.kind_for(datum.role, run.source):
        from backends.multiagent import get_service

        return get_service(run.services).memory(), False
    memory: SemanticMemory = open_store(datum.role, run.source, embedder=run.services.embedder)
    return memory, True


def _plan_semantic(run: _Run, datum: Migratable) -> Step:
    cfg = run.config
    source = f"qdrant-edge {cfg.qdrant_edge_path}"
    url = run.fingerprint[datum.server]
    if not url or not (cfg.qdrant_edge_path.exists() or cfg.qdrant_path.exists()):
        reason = (
            "no Qdrant server configured (qdrant_url); no Qdrant server ships for these "
            "machines, so this path is untested here"
            if not url
            else "nothing stored locally"
        )
        return Step(datum.step, STAYS, source, source, detail=reason)
    step = Step(datum.step, COPY, source, f"Qdrant server {url}")
    if run.dry_run:
        step.problem = _probe(lambda: _http_probe(run.target, url, "/"))
    memory, owned = _local_memory(run, datum)
    try:
        step.items = sum(s.points for s in memory.status())
        problems = [s.problem for s in memory.status() if s.problem]
        if problems:
            step.problem = problems[0]
    finally:
        if owned:
            memory.close()
    return step


def copy_semantic_memory(
    source: SemanticMemory, target: SemanticMemory, progress: Progress | None = None
) -> int:
    """Copy every point (same id, vector and payload) of ``source`` into ``target``: the
    role's own :meth:`~backends.stores.vectors.SemanticCopy.copy_to` (upserts: idempotent)."""
    return source.copy_to(target, progress)


def _run_semantic(run: _Run, step: Step) -> None:
    memory, owned = _local_memory(run, SEMANTIC)
    try:
        server: SemanticMemory = open_store(
            SEMANTIC.role, run.target, embedder=run.services.embedder
        )
        try:
            sub = _StepProgress(run.progress, step.name)
            step.done = copy_semantic_memory(memory, server, sub.progress)
        finally:
            server.close()
    finally:
        if owned:
            memory.close()


# --- memories, conversations ---


def _plan_memories(run: _Run, datum: Migratable) -> Step:
    from backends.memories.service import STORE_FILE

    path = run.config.path(STORE_FILE)
    return Step(
        datum.step,
        STAYS,
        f"SQLite {path}",
        f"SQLite {path}",
        detail="the memory table is SQLite in every profile (PA1); WAL shares it between "
        "processes, and one user's memories gain nothing from a server",
    )


def _conversation_folder(config: Config) -> Path:
    from backends.conversations.service import FOLDER

    return config.path(FOLDER)


def _conversation_index(config: Config) -> Path:
    from backends.conversations.service import INDEX_FILE

    return config.path(INDEX_FILE)


def _plan_conversations(run: _Run, datum: Migratable) -> Step:
    folder = _conversation_folder(run.config)
    return Step(
        datum.step,
        STAYS,
        f"JSON files {folder}",
        f"JSON files {folder}",
        detail="the files are the source of truth in every profile (CA1)",
    )


def _conversations(run: _Run) -> ConversationAgent:
    from backends.conversations import get_service

    return get_service(run.services)


def _plan_conversation_index(run: _Run, datum: Migratable) -> Step:
    path = _conversation_index(run.config)
    folder = _conversation_folder(run.config)
    files = sum(1 for _ in folder.glob("*.json")) if folder.exists() else 0
    return Step(
        datum.step,
        REBUILD if files else NOTHING,
        f"JSON files {folder}",
        f"SQLite {path}",
        items=files,
        detail="reconciled with the files (rows that differ are rebuilt); stays SQLite (CA3)",
    )


def _run_conversation_index(run: _Run, step: Step) -> None:
    sub = _StepProgress(run.progress, step.name)
    report = _conversations(run).reconcile(sub.progress)
    step.done = step.items
    step.detail = (
        f"{report.files} files: {report.unchanged} unchanged, {report.reread} re-read, "
        f"{report.removed} rows removed, {report.unreadable} unreadable now"
    )


def _plan_conversation_vectors(run: _Run, datum: Migratable) -> Step:
    cfg = run.config
    source = f"JSON files {_conversation_folder(cfg)}"
    url = run.fingerprint[datum.server]
    if not url:
        return Step(
            datum.step,
            STAYS,
            f"Chroma local {cfg.chroma_path}",
            f"Chroma local {cfg.chroma_path}",
            detail="no Chroma server configured (chroma_url)",
        )
    # the messages the conversation index knows (read-only: the dry run writes nothing)
    messages = _count(
        _conversation_index(cfg),
        "SELECT coalesce(sum(messages), 0) FROM conversations WHERE error IS NULL",
    )
    step = Step(
        datum.step,
        REBUILD,
        source,
        f"Chroma server {url}",
        items=messages,
        detail="re-embedded from the files and upserted (ids file:index; a rerun adds only "
        "what is missing)",
    )
    if run.dry_run:
        step.problem = _probe(lambda: _http_probe(run.target, url, "/api/v2/heartbeat"))
    return step


def _run_conversation_vectors(run: _Run, step: Step) -> None:
    from backends.conversations.vectors import sync

    agent = _conversations(run)
    agent.reconcile()
    embedder = run.services.embedder
    server: VectorIndex = open_store(
        CONVERSATION_VECTORS.role,
        run.target,
        embedder_name=embedder.name,
        dimension=embedder.dimension,
    )
    try:
        sub = _StepProgress(run.progress, step.name)
        report = sync(agent.files, agent.index, server, embedder, sub.progress)
        step.done = report.added
        step.detail = (
            f"{report.added} added, {report.present} already there, {report.dropped} dropped"
        )
    finally:
        server.close()


# --- audit ---


def _audit_file(config: Config) -> Path:
    from backends.audit.service import LOG_FILE

    return config.path(LOG_FILE)


def _audit_source(run: _Run) -> AuditLog:
    source: AuditLog = open_store(AUDIT.role, run.source, path=_audit_file(run.config))
    return source


def _trust(config: Config) -> tuple[Signer, TrustStore]:
    from backends.audit.checkpoints import Signer, TrustStore
    from backends.audit.service import CHECKPOINTS_FILE, SIGNING_KEY_FILE

    signer = Signer.load_or_create(config.path(SIGNING_KEY_FILE))
    return signer, TrustStore(config.path(CHECKPOINTS_FILE), signer.public_key)


def _existing_trust(config: Config) -> TrustStore | None:
    """The trust store when a signing key exists (the dry run creates nothing)."""
    from backends.audit.checkpoints import Signer, TrustStore
    from backends.audit.service import CHECKPOINTS_FILE, SIGNING_KEY_FILE

    path = config.path(SIGNING_KEY_FILE)
    if not path.exists():
        return None
    return TrustStore(config.path(CHECKPOINTS_FILE), Signer.load(path).public_key)


def _open_target_log(run: _Run, *, bootstrap_if_missing: bool) -> tuple[AuditLog | None, str]:
    """The server log (bootstrapped when missing and allowed) and what was done."""
    from backends.stores.audit_log import AuditLogError

    def target_log() -> AuditLog:
        opened: AuditLog = open_store(
            AUDIT.role, run.target, schema=run.options.schema, path=_audit_file(run.target)
        )
        return opened

    try:
        return target_log(), ""
    except AuditLogError as err:
        if "bootstrap" not in str(err) and "does not exist" not in str(err):
            raise
        if not bootstrap_if_missing:
            return None, (
                f"the audit schema {run.options.schema!r} and its roles will be created "
                "(bootstrap) with the admin DSN"
            )
    done = _bootstrap(run)
    return target_log(), done


def _bootstrap(run: _Run) -> str:
    from psycopg.conninfo import conninfo_to_dict

    from backends.stores.audit_log.postgres import Roles, bootstrap, redact_dsn

    roles = run.options.roles or Roles()
    admin = run.options.admin_dsn or run.target.postgres_dsn
    configured = conninfo_to_dict(run.target.postgres_dsn)
    keep = configured.get("password") if configured.get("user") == roles.app else None
    result = bootstrap(
        admin,
        roles=roles,
        schema=run.options.schema,
        app_password=str(keep) if keep else None,
        timeout=run.target.network_timeout,
    )
    note = (
        f"bootstrapped the audit schema {result.schema!r} and roles "
        f"{roles.owner}/{roles.app}/{roles.maintenance} with {redact_dsn(admin)}"
    )
    if configured.get("user") != roles.app:
        note += (
            f"; the configured DSN is not the application role — set postgres_dsn to "
            f"{redact_url(dsn_url(result.app_dsn))} (its password was generated now: run "
            "`custodia audit bootstrap --admin-dsn …` again to set a new one you keep)"
        )
    run.notes.append(note)
    return note


def dsn_url(dsn: str) -> str:
    """A libpq DSN as the ``postgresql://`` URL the configuration accepts (bootstrap's DSNs
    are ``key=value`` strings)."""
    from urllib.parse import quote

    from psycopg.conninfo import conninfo_to_dict

    if "://" in dsn:
        return dsn
    p = {k: str(v) for k, v in conninfo_to_dict(dsn).items() if v is not None}
    auth = quote(p.pop("user", ""), safe="")
    if "password" in p:
        auth += ":" + quote(p.pop("password"), safe="")
    host = p.pop("host", "127.0.0.1")
    port = p.pop("port", "")
    database = p.pop("dbname", "")
    url = f"postgresql://{auth + '@' if auth else ''}{host}{':' + port if port else ''}/{database}"
    if p:
        url += "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in sorted(p.items()))
    return url


def _plan_audit(run: _Run, datum: Migratable) -> Step:
    path = _audit_file(run.config)
    source = f"SQLite {path}"
    if not run.moves(datum):
        return Step(datum.step, STAYS, source, source, detail="no Postgres configured")
    step = Step(
        datum.step,
        COPY,
        source,
        f"Postgres {run.fingerprint[datum.server]}",
        detail="record by record (seq, record, hash), chain verified on both sides "
        "before and after",
    )
    if not path.exists():
        step.action, step.detail = NOTHING, "no embedded audit log"
        return step
    source_log = _audit_source(run)
    try:
        head = source_log.head()
        step.items = head.seq
        if not run.dry_run:
            return step
        from backends.audit.verify import verify_chain

        result = verify_chain(source_log, _existing_trust(run.config))
        if not result.ok:
            step.problem = f"the embedded chain is broken: {result.line()}"
            return step
        try:
            target_log, note = _open_target_log(run, bootstrap_if_missing=False)
        except CustodiaEnvironmentError as err:
            step.problem = str(err)
            return step
        if target_log is None:
            step.detail += f"; {note}"
            return step
        try:
            resume_from = _resume_point(run, source_log, target_log)
            if resume_from:
                step.items = head.seq - resume_from
                step.detail += f"; resuming after seq {resume_from}"
        except AuditMergeRefused as err:
            step.problem = str(err)
        finally:
            target_log.close()
    finally:
        source_log.close()
    return step


def _refused(target_log: AuditLog, seq: int) -> AuditMergeRefused:
    return AuditMergeRefused(
        f"the server audit log ({target_log.location}) already holds {seq} records "
        "that are not a copy started by this migration: refusing to merge two chains. "
        "Point postgres_dsn at an empty database (or schema)."
    )


def _resume_point(run: _Run, source_log: AuditLog, target_log: AuditLog) -> int:
    """Seq already copied (0 for an empty server log); refuses anything but our own prefix:
    the journal's link must name both logs, and the server log must be this chain's prefix."""
    from backends.stores.audit_log import NotAPrefix

    head = target_log.head()
    if head.seq == 0:
        return 0
    link = run.journal.audit_link
    ours = (
        link.get("source_log_id") == source_log.log_id
        and link.get("target_log_id") == target_log.log_id
    )
    if not ours:
        raise _refused(target_log, head.seq)
    try:
        return source_log.resume_point(target_log)
    except NotAPrefix as err:
        raise _refused(target_log, head.seq) from err


def _verify(
    log_: AuditLog, trust: TrustStore, where: str, copy_of: str | None = None
) -> VerifyResult:
    """``copy_of``: the source's id, as the journal linked it, for the server's copy."""
    from backends.audit.verify import verify_chain

    result = verify_chain(log_, trust, copy_of=copy_of)
    if not result.ok:
        raise BrokenChainError(f"{where}: {result.line()}")
    return result


def _run_audit(run: _Run, step: Step) -> None:
    from backends.stores.audit_log import ChainChanged, NotAPrefix

    signer, trust = _trust(run.config)
    source_log = _audit_source(run)
    target_log: AuditLog | None = None
    try:
        # Before: the embedded chain verifies (with its trusted checkpoints).
        before = _verify(source_log, trust, "the embedded audit chain is broken; not copying it")
        target_log, _ = _open_target_log(run, bootstrap_if_missing=True)
        assert target_log is not None
        start = _resume_point(run, source_log, target_log)
        if start:
            _verify(
                target_log,
                trust,
                "the server audit chain is broken; not continuing",
                copy_of=source_log.log_id,
            )
        state = run.journal.step(step.name)
        run.journal.audit_link.update(
            source_log_id=source_log.log_id, target_log_id=target_log.log_id
        )
        state["copied_seq"] = start
        run.journal.save()
        until = before.head.seq

        def copied(seq: int) -> None:  # each committed batch, before the progress moves
            state["copied_seq"] = seq
            run.journal.save()

        sub = _StepProgress(run.progress, step.name)
        try:
            step.done = source_log.copy_to(
                target_log,
                sub.progress,
                after=start,
                until=until,
                batch=run.options.audit_batch,
                copied=copied,
            )
        except NotAPrefix as err:
            raise AuditMergeRefused(
                f"the server audit log changed during the copy (head seq {err.head.seq}, "
                f"expected {err.expected.seq}): someone else is appending; stopped"
            ) from err
        except ChainChanged as err:
            raise BrokenChainError(
                f"the embedded audit chain changed while copying (seq {err.seq}); stopped"
            ) from err
        # After: both chains verify and the copy ends on the same head.
        copied_log = _verify(
            target_log,
            trust,
            "the copied audit chain does not verify",
            copy_of=source_log.log_id,
        )
        again = _verify(source_log, trust, "the embedded audit chain no longer verifies")
        mine = source_log.get(copied_log.head.seq) if copied_log.head.seq else None
        if copied_log.head.seq != until or (mine is not None and mine.hash != copied_log.head.hash):
            raise BrokenChainError(
                f"the server log ends at seq {copied_log.head.seq}, the embedded copy at {until}"
            )
        if copied_log.head.seq:
            checkpoint = signer.sign(target_log.log_id, copied_log.head.seq, copied_log.head.hash)
            trust.accept(checkpoint)
            if target_log.stores_checkpoints:
                target_log.add_checkpoint(checkpoint)
            state["checkpoint"] = {"seq": checkpoint.seq, "head": checkpoint.head}
        step.detail = (
            f"{copied_log.records} records on the server, both chains verified "
            f"(embedded: {again.records}); head {copied_log.head.hash[:12]}… signed as a "
            f"checkpoint of the server log {target_log.log_id}"
        )
    finally:
        if target_log is not None:
            target_log.close()
        source_log.close()


def _plan_checkpoints(run: _Run, datum: Migratable) -> Step:
    from backends.audit.service import CHECKPOINTS_FILE

    path = run.config.path(CHECKPOINTS_FILE)
    detail = "the trust file and the signing key stay outside any database"
    if run.moves(AUDIT):
        detail += "; after the copy, a checkpoint of the server log at the copied head is signed"
    return Step(datum.step, STAYS, f"local {path}", f"local {path}", detail=detail)


def _plan_keys(run: _Run, datum: Migratable) -> Step:
    from backends.audit.service import KEYS_FILE

    path = run.config.path(KEYS_FILE)
    return Step(
        datum.step,
        STAYS,
        f"SQLite {path}",
        f"SQLite {path}",
        detail=(
            "on a server log they move beside it on first use, wrapped under audit-log.kek, a "
            "key only the desktops hold (CT4, CT11; docs/AUDIT.md)"
        ),
    )


# --- clinical tutor (knowledge base, its vectors, the graph) ---


def _tutor_available() -> bool:
    try:
        import backends.tutor.service  # noqa: F401
    except ImportError:
        return False
    return True


def _kb_file(config: Config) -> Path:
    from backends.tutor.kb import DB_FILE

    return config.path(DB_FILE)


def _graph_file(config: Config) -> Path:
    from backends.tutor.service import GRAPH_FILE

    return config.path(GRAPH_FILE)


def _chunks(config: Config) -> int:
    """Chunks in the knowledge base, read-only."""
    return _count(_kb_file(config), "SELECT count(*) FROM chunks")


def _relations(config: Config) -> int:
    """Relations of the application's namespace in the embedded graph, read-only."""
    return _count(
        _graph_file(config), "SELECT count(*) FROM relations WHERE ns = ?", (DEFAULT_NAMESPACE,)
    )


def _target_tutor(run: _Run) -> TutorService:
    """A tutor service on the target stores (same knowledge base file), made once per run."""
    if run.tutor is None:
        from backends.audit.service import AuditService
        from backends.tutor.service import TutorService

        target = run.target
        graph: ProbedGraph | None = None
        if run.moves(GRAPH):
            graph = run.graph = open_store(
                GRAPH.role,
                target,
                path=_graph_file(target),
                namespace=run.options.graph_namespace,
                driver=run.options.bolt_driver,
            )

        def no_audit() -> AuditService:
            raise MigrationError("the migration never writes tutor turns")

        services = run.services
        run.tutor = TutorService(
            target,
            embedder=lambda: services.embedder,
            chat=lambda: services.chat,
            audit=no_audit,
            graph=graph,
            namespace=run.options.graph_namespace,
        )
        run.cleanup.append(run.tutor.close)
    return run.tutor


def _target_graph(run: _Run) -> ProbedGraph:
    _target_tutor(run)
    if run.graph is None:
        raise MigrationError("the graph stays where it is")
    return run.graph


def _prepare_tutor(run: _Run, step: Step) -> Status:
    tutor = _target_tutor(run)
    if not run.tutor_prepared:
        sub = _StepProgress(run.progress, step.name)
        tutor.prepare(sub.progress)
        run.tutor_prepared = True
    return tutor.status()


def _run_tutor_vectors(run: _Run, step: Step) -> None:
    status = _prepare_tutor(run, step)
    if status.vectors != status.chunks:
        raise MigrationError(
            f"the Chroma server holds {status.vectors} of the {status.chunks} chunk vectors"
        )
    step.done = status.vectors
    step.detail = f"{status.vectors} vectors for {status.chunks} chunks on the server"


def _run_tutor_graph(run: _Run, step: Step) -> None:
    status = _prepare_tutor(run, step)
    if not status.graph_ok:
        raise MigrationError(f"the graph could not be rebuilt: {status.graph_message}")
    step.done = status.graph_relations
    step.detail = (
        f"{status.graph_relations} relations, {status.entities} entities on the Bolt server "
        "(rebuilt per scope; a scope whose digest matches is skipped on a rerun)"
    )


def _plan_knowledge_base(run: _Run, datum: Migratable) -> Step:
    kb = f"SQLite {_kb_file(run.config)}"
    if not _tutor_available():
        return Step(datum.step, STAYS, kb, kb, detail="the tutor is not installed")
    return Step(
        datum.step,
        STAYS,
        kb,
        kb,
        detail="chunks and the FTS5 keyword index are SQLite in every profile",
    )


def _plan_tutor_vectors(run: _Run, datum: Migratable) -> Step:
    cfg = run.config
    kb = f"SQLite {_kb_file(cfg)}"
    url = run.fingerprint[datum.server]
    if not url:
        local_chroma = f"Chroma local {cfg.chroma_path}"
        return Step(
            datum.step,
            STAYS,
            local_chroma,
            local_chroma,
            detail="no Chroma server configured (chroma_url)",
        )
    chunks = _chunks(cfg)
    step = Step(
        datum.step,
        REBUILD if chunks else NOTHING,
        kb,
        f"Chroma server {url}",
        items=chunks,
        detail="re-embedded from the chunks into the server's tutor_chunks collection",
    )
    if run.dry_run and chunks:
        step.problem = _probe(lambda: _http_probe(run.target, url, "/api/v2/heartbeat"))
    return step


def _plan_graph(run: _Run, datum: Migratable) -> Step:
    cfg = run.config
    if not run.moves(datum):
        graph_file = f"SQLite {_graph_file(cfg)}"
        return Step(
            datum.step,
            STAYS,
            graph_file,
            graph_file,
            detail="no Bolt server configured (neo4j_uri)",
        )
    chunks = _chunks(cfg)
    step = Step(
        datum.step,
        REBUILD if chunks else NOTHING,
        f"SQLite {_kb_file(cfg)}",
        f"Bolt {run.fingerprint[datum.server]}",
        items=_relations(cfg),
        detail="rebuilt from the knowledge base's co-occurring terms, in batches of ≤ 50",
    )
    if run.dry_run and chunks:
        step.problem = _probe(lambda: _target_graph(run).probe())
    return step


# -- what the migration knows ------------------------------------------------------------------

SESSIONS = Migratable("sessions", "ttl", "redis", _plan_sessions, _run_sessions)
SEMANTIC = Migratable("semantic memory", "semantic", "qdrant", _plan_semantic, _run_semantic)
CONVERSATION_VECTORS = Migratable(
    "conversation vectors",
    "vectors",
    "chroma",
    _plan_conversation_vectors,
    _run_conversation_vectors,
)
GRAPH = Migratable("graph", "graph", "neo4j", _plan_graph, _run_tutor_graph, _tutor_available)
AUDIT = Migratable("audit log", "audit_log", "postgres", _plan_audit, _run_audit)

#: every datum, in the plan's order
DATA: tuple[Migratable, ...] = (
    SESSIONS,
    Migratable("tickets", "ttl", "redis", _plan_tickets),
    Migratable("feed", "bus", "redis", _plan_feed),
    SEMANTIC,
    Migratable("memories", "memories", "", _plan_memories),
    Migratable("conversations", "", "", _plan_conversations),
    Migratable("conversation index", "", "", _plan_conversation_index, _run_conversation_index),
    CONVERSATION_VECTORS,
    Migratable("knowledge base", "", "", _plan_knowledge_base),
    Migratable(
        "knowledge base vectors",
        "chunks",
        "chroma",
        _plan_tutor_vectors,
        _run_tutor_vectors,
        _tutor_available,
    ),
    GRAPH,
    AUDIT,
    Migratable("checkpoints", "", "", _plan_checkpoints),
    Migratable("pseudonym keys", "", "", _plan_keys),
)

#: the steps whose journal state is re-entered on a resume (their copy resumes by itself)
REENTERED = frozenset({AUDIT.step})


# -- planning and running ----------------------------------------------------------------------


def _steps(run: _Run) -> list[tuple[Step, StepRun | None]]:
    return [(datum.plan(run, datum), datum.run) for datum in DATA if datum.present()]


def _require_server_target(target: Config) -> None:
    fingerprint = _target_fingerprint(target)
    if not any(fingerprint[datum.server] for datum in DATA if datum.server):
        raise MigrationError(
            "no server is configured: set redis_url, postgres_dsn, neo4j_uri, qdrant_url or "
            "chroma_url (Settings, custodia.toml or CUSTODIA_* variables) first"
        )


def plan_migration(
    services: Services,
    options: MigrateOptions | None = None,
    progress: Progress | None = None,
    servers: Config | None = None,
) -> MigrationPlan:
    """The dry run: what would be copied, rebuilt or left, with counts and reachability.

    ``servers``: the configuration naming the servers (default: the services' own; the
    window passes the one saved in Settings, which takes effect only at restart). Writes
    nothing anywhere (no bootstrap, no journal, no collection).
    """
    options = options or MigrateOptions()
    config = services.config
    target = target_config(servers or config)
    _require_server_target(target)
    journal = Journal.load(config.path(JOURNAL_FILE))
    run = _Run(config, target, services, options, progress or Progress(), journal, True)
    try:
        steps = [step for step, _ in _steps(run)]
    finally:
        run.close()
    resumed = journal.unfinished and journal.target() == _target_fingerprint(target)
    return MigrationPlan(steps, dry_run=True, resumed=resumed, notes=run.notes)


def migrate(
    services: Services,
    options: MigrateOptions | None = None,
    progress: Progress | None = None,
    servers: Config | None = None,
) -> MigrationPlan:
    """Copy the embedded data to the configured servers; resumable; returns what was done.

    Raises :class:`~backends.errors.CancelledError` when ``progress`` is cancelled (run again
    to resume), :class:`AuditMergeRefused` for a non-empty server log, other
    :class:`MigrationError`/:class:`~backends.errors.StoreUnavailableError` for the rest.
    """
    options = options or MigrateOptions()
    progress = progress or Progress()
    config = services.config
    target = target_config(servers or config)
    _require_server_target(target)
    journal = Journal.load(config.path(JOURNAL_FILE))
    fingerprint = _target_fingerprint(target)
    resume = journal.unfinished and journal.target() == fingerprint
    run = _Run(config, target, services, options, progress, journal, False)
    try:
        planned = _steps(run)
        plan = MigrationPlan(
            [s for s, _ in planned], dry_run=False, resumed=resume, notes=run.notes
        )
        journal.begin(fingerprint, resume)
        progress.start(plan.total, "migrating to the servers")
        for step, runner in planned:
            progress.check()
            _run_step(run, step, runner, resume)
        journal.data["finished"] = time.time()
        journal.save()
    finally:
        run.close()
    return plan


def _run_step(run: _Run, step: Step, runner: StepRun | None, resume: bool) -> None:
    progress, journal = run.progress, run.journal
    if runner is None or not step.works:
        step.state = "unchanged"
        return
    state = journal.step(step.name)
    if resume and state.get("state") == "done" and step.name not in REENTERED:
        step.state = "done earlier"
        progress.advance(step.items, f"{step.name}: done earlier")
        return
    state["state"] = "running"
    journal.save()
    before = progress.done
    try:
        runner(run, step)
    except CancelledError:
        log.info("migration cancelled during %s; run it again to resume", step.name)
        raise
    rest = step.items - (progress.done - before)
    if rest > 0:
        progress.advance(rest, step.name)
    step.state = "done"
    state.update(state="done", finished=time.time(), done=step.done)
    journal.save()


def iter_lines(plan: MigrationPlan) -> Iterator[str]:
    yield from plan.lines()
    for problem in plan.problems:
        yield f"problem: {problem}"


# -- switching stores in the settings --------------------------------------------------------


def switch_to_server(home: Path) -> Path:
    """Write ``profile = server`` to the data dir's custodia.toml (the file's own values —
    never the environment's overrides); return the file. Takes effect at the next start."""
    from backends import config as config_module

    on_file = config_module.load(environ={}, home=home)
    return config_module.save(replace(on_file, profile="server"))


@dataclass
class SwitchSummary:
    """What changing the configuration from ``old`` to ``new`` does to the data."""

    #: derived indexes rebuilt from their source (automatically, or by the migration)
    rebuilt: list[str] = field(default_factory=list)
    #: data that has to be copied to stay with the user (``custodia migrate``)
    migrated: list[str] = field(default_factory=list)
    #: data that stays where it is whatever the switch
    kept: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.rebuilt or self.migrated)

    def text(self) -> str:
        parts = []
        if self.migrated:
            parts.append(
                "To migrate (Storage map ▸ Migrate to server…, or `custodia migrate "
                "--to server`, before restarting):"
            )
            parts.extend(f"  • {line}" for line in self.migrated)
        if self.rebuilt:
            parts.append("Rebuilt from their source (derived indexes):")
            parts.extend(f"  • {line}" for line in self.rebuilt)
        if self.kept:
            parts.append("Unchanged:")
            parts.extend(f"  • {line}" for line in self.kept)
        return "\n".join(parts)


def switch_summary(old: Config, new: Config) -> SwitchSummary:
    """Say, per store whose engine changes, what is rebuilt and what must be migrated."""
    out = SwitchSummary()
    if old.cache != new.cache:
        if new.cache == "redis":
            out.migrated.append(
                "sessions of the last 24 h → Redis L2 (optional: the durable copy stays in "
                "SQLite, and L2 fills itself as sessions are saved)"
            )
        else:
            out.kept.append("sessions: the durable copy is SQLite; nothing is lost")
        out.kept.append("tickets and the live feed start empty on the new store (hand-offs)")
    if old.audit != new.audit:
        if new.audit == "postgres":
            out.migrated.append(
                "audit log → Postgres, record by record, chain verified on both sides; the "
                "server log must be empty (without the copy it starts a separate chain)"
            )
        else:
            out.migrated.append(
                "audit log: the embedded SQLite log is used again; records written on the "
                "server stay there (never copied back, so the two chains do not merge)"
            )
    if old.graph != new.graph:
        out.rebuilt.append(
            f"graph on {'the Bolt server' if new.graph == 'neo4j' else 'SQLite'}: rebuilt from "
            "the knowledge base at the tutor's next start"
        )
    if old.chroma_url != new.chroma_url:
        where = "the Chroma server" if new.chroma_url else "local Chroma"
        out.rebuilt.append(
            f"conversation vectors and knowledge base vectors in {where}: rebuilt from the "
            "conversation files and the knowledge base at the next start"
        )
    if old.qdrant_url != new.qdrant_url:
        if new.qdrant_url:
            out.migrated.append(
                "semantic memory → the Qdrant server (points copied: the texts live only in them)"
            )
        else:
            out.migrated.append(
                "semantic memory: the local Qdrant folder is used again; points stored on the "
                "server are not copied back"
            )
    if old.embedder != new.embedder:
        out.rebuilt.append(
            "every vector, for the new embedder: conversation and knowledge base vectors "
            "automatically; memories and semantic memory with their Re-embed all buttons"
        )
    if not out.empty:
        out.kept.append(
            "memories, conversations (JSON files), the knowledge base, pseudonym keys and "
            "checkpoints stay in the data dir"
        )
    return out
