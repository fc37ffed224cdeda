"""What one step of ``custodia migrate --to server`` is, for the owners that declare them.

Each owner of data (``backends/<owner>/migration.py``) declares ``STEPS``: one
:class:`Migratable` per datum kind it migrates, naming the step, the store role holding it,
the server setting it moves to, how it is planned and how it is run. The migration package
(:mod:`backends.migrate`, the composition layer) loops over the registry's declarations and
runs them with a :class:`MigrationRun`.

This module sits below the assistants: it imports no assistant and nothing of the
composition layer, so an owner's steps may import it (and the plan rows, options, errors and
helpers every step shares). Stores are opened with :func:`backends.stores.open` on the
embedded configuration (:func:`source_config`) and the target's (:func:`target_config`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar, cast
from urllib.parse import quote

from backends import stores
from backends.assistants import Context, StoreOpener
from backends.config import Config, redact_url
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import N_, _, number
from backends.net import http_json
from backends.progress import Progress
from backends.stores.audit_log import COPY_BATCH, DEFAULT_SCHEMA
from backends.stores.description import scalar
from backends.stores.graph import DEFAULT_NAMESPACE

if TYPE_CHECKING:
    from neo4j import Driver

    from backends.stores.audit_log.postgres import Roles

log = logging.getLogger(__name__)
T = TypeVar("T")

#: a JSON object as the journal holds it
JSONDict = dict[str, object]

#: the plan's actions: English in the journal and the JSON plan, translated where shown
COPY = N_("copy")
REBUILD = N_("rebuild")
STAYS = N_("stays")
NOTHING = N_("nothing to copy")

#: a step's states (English in the JSON report, translated where shown)
STATES = (N_("planned"), N_("done"), N_("done earlier"), N_("skipped"), N_("unchanged"))


class MigrationError(CustodiaEnvironmentError):
    """The migration cannot go on; nothing embedded was touched."""


class AuditMergeRefused(MigrationError):
    """The server's audit log already holds records that are not this log's prefix."""


class BrokenChainError(MigrationError):
    """A chain does not verify (the embedded one before copying, or the copy after)."""


@dataclass
class Step:
    """One datum kind: what the migration does with it (planned, then done) — a row of the
    plan and of the report."""

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

    def line(self, name_width: int = 22, action_width: int = 15) -> str:
        """The step as the user reads it: its name and action in the user's language (the
        step keeps them in English: the journal's keys and the JSON plan's words)."""
        head = f"{_(self.name):<{name_width}} {_(self.action):<{action_width}}"
        where = f"{self.source} -> {self.target}" if self.works else self.source
        count = f" ({number(self.items)})" if self.works else ""
        text = f"{head} {where}{count}"
        if self.detail:
            text += f" — {self.detail}"
        if self.problem:
            text += "  " + _("[PROBLEM: {problem}]").format(problem=self.problem)
        return text


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


def target_fingerprint(target: Config) -> dict[str, str]:
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


class StepJournal(Protocol):
    """What a step may keep in the migration journal (the audit copy's position and the
    link between the two logs); the migration package's journal is one."""

    def step(self, name: str) -> JSONDict: ...

    @property
    def audit_link(self) -> JSONDict: ...

    def save(self) -> None: ...


class StepProgress:
    """A :class:`Progress` for one step's own function, feeding the migration's progress."""

    def __init__(self, parent: Progress, label: str) -> None:
        self.parent = parent
        self.label = label
        self.reported = 0
        self.progress = Progress(callback=self._on_progress)

    def _on_progress(self, done: int, total: int, message: str) -> None:
        delta = max(0, done - self.reported)
        self.reported = max(self.reported, done)
        label = _(self.label)
        self.parent.advance(delta, f"{label}: {message}" if message else label)


@dataclass
class MigrationRun:
    """One plan or run of the migration, as every step sees it."""

    #: the running configuration (its data dir holds the embedded data)
    config: Config
    #: the configuration after the switch (:func:`target_config`)
    target: Config
    #: the running process's parts (a step uses an assistant's own service through it)
    process: Context
    options: MigrateOptions
    progress: Progress
    journal: StepJournal
    dry_run: bool
    #: what the user is told besides the steps (a bootstrap, …)
    notes: list[str] = field(default_factory=list)
    #: how stores are opened (the storage registry's; a test may give another)
    open_store: StoreOpener = stores.open
    #: closed at the end of the run, newest first
    cleanup: list[Callable[[], None]] = field(default_factory=list)
    #: what an owner's steps share during one run (built once by :meth:`once`)
    _shared: dict[str, object] = field(default_factory=dict)

    @property
    def source(self) -> Config:
        return source_config(self.config)

    @property
    def fingerprint(self) -> dict[str, str]:
        return target_fingerprint(self.target)

    def moves(self, declared: Migratable) -> bool:
        """The target keeps ``declared``'s datum on a server (else it stays where it is)."""
        return bool(declared.server and self.fingerprint[declared.server])

    def once(self, key: str, build: Callable[[], T]) -> T:
        """The object ``build()`` made the first time ``key`` was asked for in this run
        (e.g. the tutor on the target stores, shared by its vectors' and graph's steps)."""
        if key not in self._shared:
            self._shared[key] = build()
        return cast(T, self._shared[key])

    def close(self) -> None:
        for closer in reversed(self.cleanup):
            try:
                closer()
            except Exception:
                log.exception(_("migration: closing a store failed"))
        self.cleanup.clear()


#: plans a step: COPY or REBUILD when it moves, else STAYS (or NOTHING when empty)
Planner = Callable[[MigrationRun, "Migratable"], Step]
#: does a planned step's work
StepRun = Callable[[MigrationRun, Step], None]


@dataclass(frozen=True)
class Migratable:
    """One kind of data the migration knows, declared by its owner in ``STEPS``."""

    #: the step's name (the plan's, the report's and the journal's)
    step: str
    #: the store role holding it ("" for files outside the registry: JSON files, keys)
    role: str
    #: the target's key (:func:`target_fingerprint`) naming the server it moves to; ""
    #: when it never moves
    server: str
    #: plans the step
    plan: Planner
    #: does the step's work (None: a step with no work)
    run: StepRun | None = None
    #: its journal state is re-entered on a resume (its copy resumes by itself)
    reentered: bool = False


def probe(fn: Callable[[], object]) -> str:
    """Why ``fn()`` fails ("" when it does not): a dry run's problem."""
    try:
        fn()
    except CustodiaEnvironmentError as err:
        return str(err)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return ""


def http_probe(target: Config, url: str, path: str) -> None:
    """A read-only GET (the dry run must not even create a collection)."""
    try:
        http_json(url.rstrip("/") + path, None, target.network_timeout)
    except CustodiaEnvironmentError as err:
        # its message says it already ("<url>: not reachable: <cause>"): said once
        raise StoreUnavailableError(str(err)) from err


def count(path: Path, query: str, params: tuple[str, ...] = ()) -> int:
    """One number from an existing SQLite file, read-only (the dry run creates nothing)."""
    return scalar(path, query, params) if path.exists() else 0


def dsn_url(dsn: str) -> str:
    """A libpq DSN as the ``postgresql://`` URL the configuration accepts (bootstrap's DSNs
    are ``key=value`` strings)."""
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 — lazy: psycopg, server only

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
