"""The graph on a Bolt server — Neo4j 5 (the target) or FalkorDB's Bolt endpoint — through the
official ``neo4j`` driver (imported on first use): managed ``execute_query`` calls, reads in
sessions opened with READ access, writes in WRITE sessions, timeouts on every call, one retry
(every write is idempotent). See the role's docstring (:mod:`backends.stores.graph`) for the
parameter-splicing workaround.

What differs between servers is data, not branches: a :class:`BoltDialect` (its Cypher for each
operation, its batch size, its schema bootstrap, whether it enforces READ sessions), chosen once
from what the server says in its first answer (its agent, ``Neo4j/5.26.30``, and the database
it answered from: see :func:`dialect_for`).

* **Neo4j 5** (:data:`NEO4J_5`): an idempotent bootstrap before the first write — a uniqueness
  constraint on ``(ns, name)`` of ``:Entity`` (its index serves every lookup by name), an index
  on ``name``, a uniqueness constraint on ``(ns, scope)`` of ``:GraphMeta`` and an index on
  ``RELATED.scope``; neighbours anchored on the unique index (``UNWIND`` then seek); the shortest
  path as ``SHORTEST 1`` with the scope predicate inlined in the quantified pattern (a
  breadth-first search that never leaves the allowed scopes; the portable form enumerates every
  path up to 3 hops and sorts); the 2-hop neighbourhood as a quantified path with the same
  inlined predicate; batches of up to 1,000 rows / 1 MB per request. A write that reached a read
  session is refused by Neo4j itself (``Neo.ClientError.Statement.AccessMode``).
* **Anything else** (:data:`PORTABLE`, FalkorDB): the constant :data:`~backends.stores.graph.CYPHER`
  forms, batches of at most 50 rows and about 2 KB, no bootstrap (FalkorDB has no constraints),
  and READ routing is only a label there: the allow-list is the guard.

Errors are typed: :class:`GraphAuthError` (user or password refused), :class:`GraphDatabaseError`
(no such database), :class:`GraphUnavailableError` (server down or failing). A statement error
from the server (syntax, type, a write in a read session) is a bug in our constant queries and
propagates as the driver's ``ClientError``, never as "the graph is down".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Self

from backends.config import Config
from backends.failures import failed, with_details
from backends.i18n import N_, _
from backends.net import loopback_bolt_uri
from backends.stores.description import Measurement, Probed, running_store
from backends.stores.graph import (
    CYPHER,
    DEFAULT_NAMESPACE,
    MAX_BATCH_BYTES,
    MAX_BATCH_ROWS,
    MAX_CALL_ROWS,
    OPERATIONS,
    AllowListedGraph,
    GraphUnavailableError,
    Operation,
    entities_note,
)
from backends.stores.server import ServerStore, reached

#: what the storage map calls the engine (its server's own name follows in brackets)
BOLT_SERVER = N_("Bolt server")

log = logging.getLogger(__name__)


class GraphAuthError(GraphUnavailableError):
    """The graph server refused the configured user and password."""


class GraphDatabaseError(GraphUnavailableError):
    """The graph server has no database of the configured name."""


# -- dialects ------------------------------------------------------------------------------------

#: Neo4j 5's forms of the operations that it runs better than the portable text (the rest are
#: the portable constants); each is a constant, like every text the adapter sends
NEO4J_5_CYPHER: Mapping[str, str] = {
    **CYPHER,
    "neighbours": (
        "UNWIND $names AS name "
        "MATCH (a:Entity {ns: $ns, name: name})-[r:RELATED]-(b:Entity {ns: $ns}) "
        "WHERE r.scope IN $scopes "
        "RETURN a.name AS source, b.name AS target, r.scope AS scope, r.weight AS weight, "
        "r.sources AS sources "
        "ORDER BY weight DESC, source, target, scope LIMIT $limit"
    ),
    "two_hop": (
        "MATCH p = (a:Entity {ns: $ns, name: $name})"
        "(()-[r:RELATED WHERE r.scope IN $scopes]-()){1,2}(b:Entity {ns: $ns}) "
        "WHERE b.name <> $name "
        "RETURN [n IN nodes(p) | n.name] AS names, "
        "reduce(w = 0, x IN relationships(p) | w + x.weight) AS weight, length(p) AS hops "
        "ORDER BY hops, weight DESC LIMIT $limit"
    ),
    "path": (
        "MATCH p = SHORTEST 1 (a:Entity {ns: $ns, name: $source})"
        "(()-[r:RELATED WHERE r.scope IN $scopes]-()){1,3}"
        "(b:Entity {ns: $ns, name: $target}) "
        "RETURN [n IN nodes(p) | n.name] AS names, "
        "[x IN relationships(p) | x.sources] AS sources, "
        "[x IN relationships(p) | x.weight] AS weights, length(p) AS hops"
    ),
    "clear": "MATCH (n:Entity|GraphMeta {ns: $ns}) DETACH DELETE n",
}

#: Neo4j 5's schema, created before the first write; every statement is idempotent
NEO4J_5_BOOTSTRAP: tuple[str, ...] = (
    "CREATE CONSTRAINT custodia_entity_key IF NOT EXISTS "
    "FOR (e:Entity) REQUIRE (e.ns, e.name) IS UNIQUE",
    "CREATE INDEX custodia_entity_name IF NOT EXISTS FOR (e:Entity) ON (e.name)",
    "CREATE CONSTRAINT custodia_meta_key IF NOT EXISTS "
    "FOR (m:GraphMeta) REQUIRE (m.ns, m.scope) IS UNIQUE",
    "CREATE INDEX custodia_related_scope IF NOT EXISTS FOR ()-[r:RELATED]-() ON (r.scope)",
)


#: Neo4j's own account of itself (``doctor`` and the storage map show version and edition)
NEO4J_5_COMPONENTS = (
    "CALL dbms.components() YIELD name, versions, edition "
    "RETURN name, versions[0] AS version, edition"
)


@dataclass(frozen=True)
class BoltDialect:
    """What one kind of Bolt server runs best, as data (see the module docstring)."""

    name: str
    queries: Mapping[str, str]
    max_batch_rows: int
    max_batch_bytes: int
    bootstrap: tuple[str, ...] = ()
    #: the server refuses a write in a session opened with READ access
    enforces_read_sessions: bool = False
    #: a constant read naming the server's version and edition ("" when it has none)
    components: str = ""


PORTABLE = BoltDialect("portable", CYPHER, MAX_BATCH_ROWS, MAX_BATCH_BYTES)
NEO4J_5 = BoltDialect(
    "neo4j-5",
    NEO4J_5_CYPHER,
    max_batch_rows=MAX_CALL_ROWS,
    max_batch_bytes=1_000_000,
    bootstrap=NEO4J_5_BOOTSTRAP,
    enforces_read_sessions=True,
    components=NEO4J_5_COMPONENTS,
)
#: server agent prefix → dialect; an agent not listed gets :data:`PORTABLE`
DIALECTS: Mapping[str, BoltDialect] = {"Neo4j/5.": NEO4J_5}

assert all(set(d.queries) == set(OPERATIONS) for d in (PORTABLE, NEO4J_5))

_BOOTSTRAP = Operation("bootstrap", "write", {})
_COMPONENTS = Operation("components", "read", {})


def dialect_for(agent: str, database: str = "", splices_parameters: bool = False) -> BoltDialect:
    """The dialect of a server that names itself ``agent`` and answered from ``database``.

    FalkorDB's Bolt endpoint calls itself ``Neo4j/5.13.0`` too (measured), but it names no
    database in its answers and splices parameters into the text: only a server that does
    neither is taken at its word.
    """
    if not database or splices_parameters:
        return PORTABLE
    for prefix, dialect in DIALECTS.items():
        if agent.startswith(prefix):
            return dialect
    return PORTABLE


# -- Bolt (Neo4j 5, FalkorDB) --------------------------------------------------------------------


def _escape(value: Any) -> Any:
    """For a server that splices parameters into the query text: ``\\`` and ``'`` escaped."""
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(value, list):
        return [_escape(v) for v in value]
    if isinstance(value, dict):
        return {k: _escape(v) for k, v in value.items()}
    return value


PROBE = "\\\\"  # two backslashes: a server that splices parameters returns one


class BoltGraph(AllowListedGraph, ServerStore):
    """Neo4j 5 (the target) or any Bolt server (FalkorDB in tests) via the ``neo4j`` driver."""

    kind = "bolt"
    QUERIES = CYPHER

    #: the engine, as the storage map names it
    ENGINE = N_("Bolt server (Neo4j)")
    LABEL = "neo4j"
    PRODUCT = "Neo4j"
    URL_SETTING = "neo4j_uri"

    @classmethod
    def checkup(cls, config: Config, **context: Any) -> Probed:
        """The server through a graph store of its own: its typed errors (password refused,
        no such database, not reachable) and, for Neo4j, its version and edition."""
        with reached(None, lambda: cls.from_config(config)) as graph:
            info = graph.server_info()
        version = f"{info['version']} {info['edition']}".strip()
        return Probed(version, {k: v for k, v in info.items() if v})

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The namespace's relations through the running store (the tutor's own driver),
        and the server as it names itself."""
        graph = running_store(running)
        counts = graph.counts()
        return Measurement(
            sum(counts.relations.values()),
            None,
            note=entities_note(counts.entities),
            engine=f"{BOLT_SERVER} ({graph.describe()})",  # translated where shown
        )

    def __init__(
        self,
        uri: str,
        *,
        user: str = "",
        password: str = "",
        namespace: str = DEFAULT_NAMESPACE,
        timeout: float = 5.0,
        driver: Any = None,
        database: str = "",
    ) -> None:
        super().__init__(namespace)
        # every dialect's texts are constants too: a caller may name any of them
        for dialect in (PORTABLE, *DIALECTS.values()):
            self._by_text.update({t: OPERATIONS[n] for n, t in dialect.queries.items()})
        self.uri = uri
        #: where it keeps its data (the storage map's location)
        self.where = uri
        self.timeout = float(timeout)
        self.database = database
        self._owns_driver = driver is None
        self._driver = driver
        self._user = user
        self._password = password
        self._lock = threading.Lock()
        #: None until probed; True when the server splices parameters into the text
        self.splices_parameters: bool | None = None
        #: what the server said it is in its first answer ("Neo4j/5.26.30"), and its dialect
        self.server_agent = ""
        self.server_database = ""
        self.dialect: BoltDialect | None = None
        self._bootstrapped = False
        #: set when a connection was lost: the server that answers next may be another one
        self._reprobe = False

    @classmethod
    def from_config(
        cls,
        config: Config,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        driver: Any = None,
        **context: Any,
    ) -> BoltGraph:
        """The Bolt server at ``neo4j_uri``, with its user and password (or ``driver``: one
        long-lived driver shared by a test session)."""
        return cls(
            config.neo4j_uri,
            user=config.neo4j_user,
            password=config.neo4j_password,
            namespace=namespace,
            timeout=config.network_timeout,
            driver=driver,
            database=config.neo4j_database,
        )

    def _get_driver(self) -> Any:
        with self._lock:
            if self._driver is None:
                try:
                    import neo4j  # noqa: PLC0415 — lazy: the driver loads only when a graph server is used

                    auth = (
                        neo4j.basic_auth(self._user, self._password)
                        if self._user and self._password
                        else None
                    )
                    self._driver = neo4j.GraphDatabase.driver(
                        loopback_bolt_uri("neo4j_uri", self.uri),
                        auth=auth,
                        connection_timeout=self.timeout,
                        connection_acquisition_timeout=self.timeout,
                        max_transaction_retry_time=0,
                    )
                except Exception as err:  # bad URI, missing driver
                    raise GraphUnavailableError(
                        failed(_("graph server {uri}").format(uri=self.uri), err)
                    ) from err
            return self._driver

    def _send(
        self, operation: Operation, text: str, parameters: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """One request in a session opened with the operation's access (READ or WRITE)."""
        import neo4j  # noqa: PLC0415 — lazy: the driver loads only when a graph server is used
        from neo4j.exceptions import (  # noqa: PLC0415 — lazy, with neo4j
            AuthError,
            DriverError,
            Neo4jError,
            ServiceUnavailable,
            SessionExpired,
            TransientError,
        )

        driver = self._get_driver()
        routing = (
            neo4j.RoutingControl.READ if operation.access == "read" else neo4j.RoutingControl.WRITE
        )
        query = neo4j.Query(text, timeout=self.timeout)
        options: dict[str, Any] = {"database_": self.database} if self.database else {}
        last: Exception | None = None
        for attempt in (1, 2):  # one retry: every operation here is idempotent
            try:
                result = driver.execute_query(
                    query, parameters_=parameters, routing_=routing, **options
                )
                if not self.server_agent:
                    self.server_agent = str(getattr(result.summary.server, "agent", "") or "")
                    self.server_database = str(result.summary.database or "")
                return [dict(record) for record in result.records]
            except AuthError as err:
                message = _(
                    "graph server {uri} refused user {user!r} and its password: check "
                    "neo4j_user and neo4j_password"
                ).format(uri=self.uri, user=self._user or _("(none)"))
                raise GraphAuthError(with_details(message, str(err.code or ""))) from err
            except (ServiceUnavailable, SessionExpired, TransientError) as err:
                last = err
                self._reprobe = self._reprobe or not isinstance(err, TransientError)
                log.info(
                    "graph %s: %s failed (attempt %d): %s", self.uri, operation.name, attempt, err
                )
            except Neo4jError as err:
                code = err.code or ""
                if code == "Neo.ClientError.Database.DatabaseNotFound":
                    message = _(
                        "graph server {uri} has no database {name!r}: check the database name"
                    ).format(uri=self.uri, name=self.database)
                    raise GraphDatabaseError(with_details(message, code)) from err
                if code.startswith("Neo.ClientError.Statement."):
                    raise  # our constant query was refused as a statement: a bug, not an outage
                message = _("graph server {uri}: {operation} failed").format(
                    uri=self.uri, operation=operation.name
                )
                raise GraphUnavailableError(
                    with_details(message, f"{code} {err.message or ''}")
                ) from err
            except (DriverError, OSError) as err:
                last = err
                self._reprobe = True
        assert last is not None
        raise GraphUnavailableError(
            failed(_("graph server {uri} is not reachable").format(uri=self.uri), last)
        ) from last

    def _ready(self) -> BoltDialect:
        """Probe the server once: whether it splices parameters, and its dialect.

        Again after a lost connection: a server restored, recreated or replaced on the same
        address may be empty (no schema) or another kind of server.
        """
        if self._reprobe:
            self._reprobe = False
            self.dialect, self.splices_parameters = None, None
            self.server_agent = self.server_database = ""
            self._bootstrapped = False
        if self.dialect is None:
            rows = self._send(OPERATIONS["probe"], CYPHER["probe"], {"probe": PROBE})
            echoed = rows[0]["probe"] if rows else PROBE
            self.splices_parameters = echoed != PROBE
            if self.splices_parameters:
                log.info("graph %s splices parameters into query text: escaping them", self.uri)
            self.dialect = dialect_for(
                self.server_agent, self.server_database, self.splices_parameters
            )
            log.info("graph %s: %s, %s dialect", self.uri, self.server_agent, self.dialect.name)
        return self.dialect

    def bootstrap(self) -> None:
        """Create the dialect's constraints and indexes (idempotent; once per adapter)."""
        dialect = self._ready()
        if not self._bootstrapped:
            for statement in dialect.bootstrap:
                self._send(_BOOTSTRAP, statement, {})
            self._bootstrapped = True

    def server_info(self) -> dict[str, str]:
        """What the server is: its agent, our dialect for it, and (Neo4j) version and edition."""
        dialect = self._ready()
        info = {"agent": self.server_agent, "dialect": dialect.name, "version": "", "edition": ""}
        if dialect.components:
            for row in self._send(_COMPONENTS, dialect.components, {}):
                if row.get("name") == "Neo4j Kernel":
                    info.update(version=str(row["version"]), edition=str(row["edition"]))
        return info

    def describe(self) -> str:
        """The server in a few words: ``Neo4j 5.26.30 community``, else its agent."""
        info = self.server_info()
        if info["version"]:
            return f"Neo4j {info['version']} {info['edition']}".strip()
        return f"agent {info['agent'] or 'unknown'}, {info['dialect']} Cypher"

    def batch_limits(self) -> tuple[int, int]:
        dialect = self._ready()
        return dialect.max_batch_rows, dialect.max_batch_bytes

    def _run(
        self, operation: Operation, text: str, parameters: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if operation.name == "probe":
            return self._send(operation, text, parameters)
        dialect = self._ready()
        if operation.access == "write" and not self._bootstrapped:
            self.bootstrap()
        if self.splices_parameters:
            parameters = _escape(parameters)
        return self._send(operation, dialect.queries[operation.name], parameters)

    def close(self) -> None:
        with self._lock:
            if self._owns_driver and self._driver is not None:
                try:
                    self._driver.close()
                except Exception:
                    log.debug("closing the neo4j driver failed", exc_info=True)
            self._driver = None
