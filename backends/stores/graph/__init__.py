"""The graph role (CT5): entities joined by one relationship type, behind an allow-list.

Entities are the curated terms (``resources/kb/terms.txt``); two entities are ``RELATED`` when
a chunk mentions both (co-occurrence). A relation belongs to one *scope* (the scope of the
chunks it came from), carries a ``weight`` (how many chunks) and its ``sources`` (those chunks'
ids, at most :data:`~backends.tutor.kb.MAX_EDGE_SOURCES`). Everything lives in a *namespace*
(``ns``) so tests and several installations can share one server.

Two implementations of one :class:`Graph` Protocol, one module each:

* ``sqlite`` (:class:`~backends.stores.graph.sqlite.SqliteGraph`) — embedded: tables plus
  recursive CTEs; reads go through a second connection opened with ``PRAGMA query_only``.
* ``bolt`` (:class:`~backends.stores.graph.bolt.BoltGraph`) — Neo4j 5 (or FalkorDB's Bolt
  endpoint) through the official ``neo4j`` driver: managed ``execute_query`` calls, reads in
  sessions opened with READ access (Neo4j refuses a write there), a transaction timeout and
  connection timeouts on every call, one retry when the connection fails (every write here is
  idempotent, so a retry is safe). What the server can do (its Cypher forms, batch size,
  schema bootstrap) is a :class:`~backends.stores.graph.bolt.BoltDialect` chosen from its
  first answer: Neo4j 5 gets its schema, its own shortest path and 1,000-row batches, anything
  else (FalkorDB) the portable forms and batches of at most 50 rows and about 2 KB.

The safety rule: each adapter runs only the constant texts of :data:`OPERATIONS`
(:data:`CYPHER` / :data:`SQL`). :meth:`~AllowListedGraph.execute` looks the text up first and
raises :class:`GraphQueryRefused` for anything else — before any connection is touched — then
checks the parameters against the operation's typed schema (:class:`GraphParameterError` for
an unknown, missing or ill-typed one). Values only ever travel as parameters.

FalkorDB's Bolt endpoint (measured here, FalkorDB 4.16) does *not* send parameters separately:
it splices them into the query text without escaping quotes, so a value containing ``'`` fails
or, worse, is parsed as Cypher. :class:`BoltGraph` detects that with a constant probe query
(``RETURN $probe``: a server that splices turns ``\\\\`` into ``\\``) and then escapes ``\\``
and ``'`` in every string parameter, so values round-trip verbatim on both servers.
"""

from __future__ import annotations

import json
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import _, ngettext, number
from backends.progress import Progress

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "custodia"
#: the default batch (FalkorDB's Bolt endpoint crashes on a request over ~4 KB); an adapter
#: that knows better says so in :meth:`AllowListedGraph.batch_limits` (Neo4j: far larger)
MAX_BATCH_ROWS = 50
MAX_BATCH_BYTES = 2_000
#: the most rows one call's parameters may hold, whatever the adapter
MAX_CALL_ROWS = 1_000
#: the longest path :meth:`Graph.path` looks for (in relations)
MAX_PATH_HOPS = 3


def entities_note(entities: int) -> str:
    """The storage map's note on a graph: how many entities its relations join."""
    return ngettext("{count} entity", "{count} entities", entities).format(count=number(entities))


class GraphQueryRefused(Exception):
    """A query text that is not one of the adapter's constants (refused, never sent).

    Only code sends query texts, so this is a bug (a trace in the log), not an environment
    error shown to the user."""


class GraphParameterError(CustodiaEnvironmentError):
    """A parameter that is unknown, missing or not of its declared type."""


class GraphUnavailableError(StoreUnavailableError):
    """The graph server cannot be reached or failed; retrieval goes on without it."""


# -- typed parameters ---------------------------------------------------------------------------


class Param(ABC):
    @abstractmethod
    def check(self, name: str, value: Any) -> Any:
        """The value if it is of this type, else :class:`GraphParameterError`."""


@dataclass(frozen=True)
class Text(Param):
    max_length: int = 200
    pattern: str = ""

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, str):
            raise GraphParameterError(f"{name} must be text, not {type(value).__name__}")
        if not value or len(value) > self.max_length:
            raise GraphParameterError(f"{name} must have 1 to {self.max_length} characters")
        if "\x00" in value:
            raise GraphParameterError(f"{name} must not contain NUL")
        if self.pattern and not re.fullmatch(self.pattern, value):
            raise GraphParameterError(f"{name} must match {self.pattern}")
        return value


@dataclass(frozen=True)
class Int(Param):
    low: int = 0
    high: int = 1_000_000

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise GraphParameterError(f"{name} must be an integer, not {type(value).__name__}")
        if not self.low <= value <= self.high:
            raise GraphParameterError(f"{name} must be between {self.low} and {self.high}")
        return value


@dataclass(frozen=True)
class TextList(Param):
    item: Text = Text()
    max_items: int = MAX_CALL_ROWS

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise GraphParameterError(f"{name} must be a list, not {type(value).__name__}")
        if len(value) > self.max_items:
            raise GraphParameterError(f"{name} holds at most {self.max_items} items")
        return [self.item.check(f"{name}[{i}]", v) for i, v in enumerate(value)]


@dataclass(frozen=True)
class Rows(Param):
    fields: Mapping[str, Param]
    max_items: int = MAX_CALL_ROWS

    def check(self, name: str, value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise GraphParameterError(f"{name} must be a list of rows")
        if len(value) > self.max_items:
            raise GraphParameterError(f"{name} holds at most {self.max_items} rows")
        out = []
        for i, row in enumerate(value):
            if not isinstance(row, Mapping) or set(row) != set(self.fields):
                raise GraphParameterError(f"{name}[{i}] must have exactly {sorted(self.fields)}")
            out.append({k: p.check(f"{name}[{i}].{k}", row[k]) for k, p in self.fields.items()})
        return out


NAMESPACE = Text(64, r"[A-Za-z0-9_.:-]+")
NAME = Text(200)
SCOPE = Text(80)
SCOPES = TextList(SCOPE, 20)
NAMES = TextList(NAME, MAX_CALL_ROWS)
SOURCES = TextList(Text(160), 40)
DIGEST = Text(64, r"[0-9a-f]{64}")
LIMIT = Int(1, 1_000)


@dataclass(frozen=True)
class Operation:
    name: str
    access: Literal["read", "write"]
    params: Mapping[str, Param]

    def check(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(parameters, Mapping):
            raise GraphParameterError(f"{self.name}: parameters must be a mapping")
        unknown = set(parameters) - set(self.params)
        if unknown:
            raise GraphParameterError(f"{self.name}: unknown parameter(s) {sorted(unknown)}")
        missing = set(self.params) - set(parameters)
        if missing:
            raise GraphParameterError(f"{self.name}: missing parameter(s) {sorted(missing)}")
        return {k: p.check(k, parameters[k]) for k, p in self.params.items()}


def _ops(*ops: Operation) -> dict[str, Operation]:
    return {op.name: op for op in ops}


#: every operation either adapter can run: its access mode and its typed parameters
OPERATIONS: Mapping[str, Operation] = _ops(
    Operation("probe", "read", {"probe": Text(16)}),
    Operation("merge_entities", "write", {"ns": NAMESPACE, "names": NAMES}),
    Operation(
        "merge_relations",
        "write",
        {
            "ns": NAMESPACE,
            "rows": Rows(
                {"a": NAME, "b": NAME, "scope": SCOPE, "weight": Int(1, 10**9), "sources": SOURCES}
            ),
        },
    ),
    Operation("delete_scope", "write", {"ns": NAMESPACE, "scope": SCOPE}),
    Operation("set_digest", "write", {"ns": NAMESPACE, "scope": SCOPE, "digest": DIGEST}),
    Operation("delete_digest", "write", {"ns": NAMESPACE, "scope": SCOPE}),
    Operation("get_digest", "read", {"ns": NAMESPACE, "scope": SCOPE}),
    Operation(
        "neighbours", "read", {"ns": NAMESPACE, "names": NAMES, "scopes": SCOPES, "limit": LIMIT}
    ),
    Operation("between", "read", {"ns": NAMESPACE, "names": NAMES, "scopes": SCOPES}),
    Operation("two_hop", "read", {"ns": NAMESPACE, "name": NAME, "scopes": SCOPES, "limit": LIMIT}),
    Operation("path", "read", {"ns": NAMESPACE, "source": NAME, "target": NAME, "scopes": SCOPES}),
    Operation("count_entities", "read", {"ns": NAMESPACE}),
    Operation("count_relations", "read", {"ns": NAMESPACE}),
    Operation("clear", "write", {"ns": NAMESPACE}),
)

#: the only Cypher :class:`BoltGraph` sends (Neo4j 5 and FalkorDB both run all of it)
CYPHER: Mapping[str, str] = {
    "probe": "RETURN $probe AS probe",
    "merge_entities": "UNWIND $names AS name MERGE (:Entity {ns: $ns, name: name})",
    "merge_relations": (
        "UNWIND $rows AS row "
        "MATCH (a:Entity {ns: $ns, name: row.a}) "
        "MATCH (b:Entity {ns: $ns, name: row.b}) "
        "MERGE (a)-[r:RELATED {scope: row.scope}]->(b) "
        "SET r.weight = row.weight, r.sources = row.sources"
    ),
    "delete_scope": (
        "MATCH (:Entity {ns: $ns})-[r:RELATED]->(:Entity {ns: $ns}) WHERE r.scope = $scope DELETE r"
    ),
    "set_digest": "MERGE (m:GraphMeta {ns: $ns, scope: $scope}) SET m.digest = $digest",
    "delete_digest": "MATCH (m:GraphMeta {ns: $ns, scope: $scope}) DELETE m",
    "get_digest": "MATCH (m:GraphMeta {ns: $ns, scope: $scope}) RETURN m.digest AS digest",
    "neighbours": (
        "MATCH (a:Entity {ns: $ns})-[r:RELATED]-(b:Entity {ns: $ns}) "
        "WHERE a.name IN $names AND r.scope IN $scopes "
        "RETURN a.name AS source, b.name AS target, r.scope AS scope, r.weight AS weight, "
        "r.sources AS sources "
        "ORDER BY weight DESC, source, target, scope LIMIT $limit"
    ),
    "between": (
        "MATCH (a:Entity {ns: $ns})-[r:RELATED]->(b:Entity {ns: $ns}) "
        "WHERE a.name IN $names AND b.name IN $names AND r.scope IN $scopes "
        "RETURN a.name AS a, b.name AS b, r.scope AS scope, r.weight AS weight, "
        "r.sources AS sources ORDER BY a, b, scope"
    ),
    "two_hop": (
        "MATCH p = (a:Entity {ns: $ns, name: $name})-[:RELATED*1..2]-(b:Entity {ns: $ns}) "
        "WHERE b.name <> $name AND all(r IN relationships(p) WHERE r.scope IN $scopes) "
        "RETURN [n IN nodes(p) | n.name] AS names, "
        "reduce(w = 0, r IN relationships(p) | w + r.weight) AS weight, length(p) AS hops "
        "ORDER BY hops, weight DESC LIMIT $limit"
    ),
    # the portable shortest path: Neo4j 5 and FalkorDB both run it (DESIGN.md)
    "path": (
        "MATCH p = (a:Entity {ns: $ns, name: $source})-[:RELATED*1..3]-"
        "(b:Entity {ns: $ns, name: $target}) "
        "WHERE all(r IN relationships(p) WHERE r.scope IN $scopes) "
        "RETURN [n IN nodes(p) | n.name] AS names, "
        "[r IN relationships(p) | r.sources] AS sources, "
        "[r IN relationships(p) | r.weight] AS weights, length(p) AS hops "
        "ORDER BY hops LIMIT 1"
    ),
    "count_entities": "MATCH (e:Entity {ns: $ns}) RETURN count(e) AS entities",
    "count_relations": (
        "MATCH (:Entity {ns: $ns})-[r:RELATED]->(:Entity {ns: $ns}) "
        "RETURN r.scope AS scope, count(r) AS relations ORDER BY scope"
    ),
    "clear": "MATCH (n {ns: $ns}) DETACH DELETE n",
}

_SCOPED_EDGES = (
    "SELECT a AS x, b AS y, scope, weight, sources FROM relations "
    "WHERE ns = :ns AND scope IN (SELECT value FROM json_each(:scopes)) "
    "UNION ALL "
    "SELECT b, a, scope, weight, sources FROM relations "
    "WHERE ns = :ns AND scope IN (SELECT value FROM json_each(:scopes))"
)

#: the only SQL :class:`SqliteGraph` runs (``;\n`` separates the statements of one operation)
SQL: Mapping[str, str] = {
    "probe": "SELECT :probe AS probe",
    "merge_entities": (
        "INSERT OR IGNORE INTO entities (ns, name) SELECT :ns, value FROM json_each(:names)"
    ),
    "merge_relations": (
        "INSERT INTO relations (ns, a, b, scope, weight, sources) "
        "SELECT :ns, json_extract(value, '$.a'), json_extract(value, '$.b'), "
        "json_extract(value, '$.scope'), json_extract(value, '$.weight'), "
        "json_extract(value, '$.sources') FROM json_each(:rows) "
        "WHERE EXISTS (SELECT 1 FROM entities "
        "WHERE ns = :ns AND name = json_extract(value, '$.a')) "
        "AND EXISTS (SELECT 1 FROM entities "
        "WHERE ns = :ns AND name = json_extract(value, '$.b')) "
        "ON CONFLICT (ns, a, b, scope) DO UPDATE SET weight = excluded.weight, "
        "sources = excluded.sources"
    ),
    "delete_scope": "DELETE FROM relations WHERE ns = :ns AND scope = :scope",
    "set_digest": (
        "INSERT INTO graph_meta (ns, scope, digest) VALUES (:ns, :scope, :digest) "
        "ON CONFLICT (ns, scope) DO UPDATE SET digest = excluded.digest"
    ),
    "get_digest": "SELECT digest FROM graph_meta WHERE ns = :ns AND scope = :scope",
    "delete_digest": "DELETE FROM graph_meta WHERE ns = :ns AND scope = :scope",
    "neighbours": (
        "SELECT x AS source, y AS target, scope, weight, sources FROM ("
        + _SCOPED_EDGES
        + ") WHERE x IN (SELECT value FROM json_each(:names)) "
        "ORDER BY weight DESC, source, target, scope LIMIT :limit"
    ),
    "between": (
        "SELECT a, b, scope, weight, sources FROM relations "
        "WHERE ns = :ns AND scope IN (SELECT value FROM json_each(:scopes)) "
        "AND a IN (SELECT value FROM json_each(:names)) "
        "AND b IN (SELECT value FROM json_each(:names)) ORDER BY a, b, scope"
    ),
    "two_hop": (
        "WITH RECURSIVE edge(x, y, scope, weight, sources) AS (" + _SCOPED_EDGES + "), "
        "walk(node, names, weight, depth) AS ("
        "SELECT name, json_array(name), 0, 0 FROM entities WHERE ns = :ns AND name = :name "
        "UNION ALL "
        "SELECT e.y, json_insert(w.names, '$[#]', e.y), w.weight + e.weight, w.depth + 1 "
        "FROM walk w JOIN edge e ON e.x = w.node WHERE w.depth < 2) "
        "SELECT names, weight FROM walk WHERE depth > 0 AND node <> :name "
        "ORDER BY depth, weight DESC LIMIT :limit"
    ),
    "path": (
        "WITH RECURSIVE edge(x, y, scope, weight, sources) AS (" + _SCOPED_EDGES + "), "
        "walk(node, names, sources, weights, depth) AS ("
        "SELECT name, json_array(name), json_array(), json_array(), 0 "
        "FROM entities WHERE ns = :ns AND name = :source "
        "UNION ALL "
        "SELECT e.y, json_insert(w.names, '$[#]', e.y), "
        "json_insert(w.sources, '$[#]', json(e.sources)), "
        "json_insert(w.weights, '$[#]', e.weight), w.depth + 1 "
        "FROM walk w JOIN edge e ON e.x = w.node "
        "WHERE w.depth < 3 AND w.node <> :target "
        "AND NOT EXISTS (SELECT 1 FROM json_each(w.names) WHERE value = e.y) "
        "ORDER BY 5) "
        "SELECT names, sources, weights FROM walk WHERE node = :target AND depth > 0 "
        "ORDER BY depth LIMIT 1"
    ),
    "count_entities": "SELECT count(*) AS entities FROM entities WHERE ns = :ns",
    "count_relations": (
        "SELECT scope, count(*) AS relations FROM relations WHERE ns = :ns "
        "GROUP BY scope ORDER BY scope"
    ),
    "clear": (
        "DELETE FROM relations WHERE ns = :ns;\n"
        "DELETE FROM entities WHERE ns = :ns;\n"
        "DELETE FROM graph_meta WHERE ns = :ns"
    ),
}

assert set(CYPHER) == set(OPERATIONS) == set(SQL)


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Relation:
    a: str
    b: str
    scope: str
    weight: int
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Neighbour:
    source: str
    target: str
    scope: str
    weight: int
    sources: tuple[str, ...]


@dataclass(frozen=True)
class GraphPath:
    names: tuple[str, ...]
    sources: tuple[tuple[str, ...], ...]
    weights: tuple[int, ...]

    @property
    def hops(self) -> int:
        return len(self.names) - 1

    def line(self) -> str:
        return " — ".join(self.names)


@dataclass(frozen=True)
class GraphCounts:
    entities: int
    relations: dict[str, int]


@runtime_checkable
class Graph(Protocol):
    """The graph role: named operations only (see the module docstring)."""

    kind: ClassVar[str]
    namespace: str
    #: where it keeps its data (a file, a server's URI), for the storage map and messages
    where: str

    def execute(self, text: str, parameters: Mapping[str, Any]) -> list[dict[str, Any]]: ...

    def merge_entities(self, names: Sequence[str]) -> None: ...

    def merge_relations(self, relations: Sequence[Relation]) -> None: ...

    def replace_scope(
        self,
        scope: str,
        relations: Sequence[Relation],
        digest: str,
        progress: Progress | None = None,
    ) -> None: ...

    def digest(self, scope: str) -> str | None: ...

    def forget_scope(self, scope: str) -> None: ...

    def neighbours(
        self, names: Sequence[str], scopes: Sequence[str], limit: int = 100
    ) -> list[Neighbour]: ...

    def between(self, names: Sequence[str], scopes: Sequence[str]) -> list[Relation]: ...

    def two_hop(
        self, name: str, scopes: Sequence[str], limit: int = 50
    ) -> list[tuple[tuple[str, ...], int]]: ...

    def path(self, source: str, target: str, scopes: Sequence[str]) -> GraphPath | None: ...

    def counts(self) -> GraphCounts: ...

    def clear(self) -> None: ...

    def close(self) -> None: ...


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return list(json.loads(value))
    return list(value)


def batches(
    rows: Sequence[Any], max_rows: int = MAX_BATCH_ROWS, max_bytes: int = MAX_BATCH_BYTES
) -> Iterator[list[Any]]:
    """Consecutive slices of at most ``max_rows`` rows and about ``max_bytes`` of JSON."""
    batch: list[Any] = []
    size = 0
    for row in rows:
        row_size = len(json.dumps(row, default=list, ensure_ascii=False).encode("utf-8"))
        if batch and (len(batch) >= max_rows or size + row_size > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += row_size
    if batch:
        yield batch


class AllowListedGraph(ABC):
    """The named operations, on top of one guarded primitive: :meth:`execute`."""

    kind: ClassVar[str] = ""
    QUERIES: ClassVar[Mapping[str, str]] = {}

    def __init__(self, namespace: str = DEFAULT_NAMESPACE) -> None:
        self.namespace = NAMESPACE.check("namespace", namespace)
        self._by_text = {text: OPERATIONS[name] for name, text in self.QUERIES.items()}

    # -- the guard -------------------------------------------------------------------------
    def execute(self, text: str, parameters: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Run one of this adapter's constant texts with checked parameters.

        Any other text is refused with :class:`GraphQueryRefused` before anything is sent.
        """
        operation = self._by_text.get(text) if isinstance(text, str) else None
        if operation is None:
            raise GraphQueryRefused(
                f"{self.kind}: refused a query that is not one of its constant operations"
            )
        return self._run(operation, text, operation.check(parameters))

    @abstractmethod
    def _run(
        self, operation: Operation, text: str, parameters: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Send an allow-listed text with checked parameters."""

    def _op(self, operation: str, /, **parameters: Any) -> list[dict[str, Any]]:
        return self.execute(self.QUERIES[operation], {"ns": self.namespace, **parameters})

    def batch_limits(self) -> tuple[int, int]:
        """Rows and bytes of JSON per write call (each call is one request)."""
        return MAX_BATCH_ROWS, MAX_BATCH_BYTES

    # -- named operations ------------------------------------------------------------------
    def merge_entities(self, names: Sequence[str]) -> None:
        unique = sorted(set(names))
        for batch in batches(unique, *self.batch_limits()):
            self._op("merge_entities", names=batch)

    def merge_relations(self, relations: Sequence[Relation]) -> None:
        for batch in batches([_row(r) for r in relations], *self.batch_limits()):
            self._op("merge_relations", rows=batch)

    def replace_scope(
        self,
        scope: str,
        relations: Sequence[Relation],
        digest: str,
        progress: Progress | None = None,
    ) -> None:
        """Make ``scope``'s relations exactly ``relations``; record ``digest`` when done.

        The digest is dropped first and written last, so an interrupted rewrite is seen as
        out of date next time and redone.
        """
        progress = progress or Progress()
        names = sorted({n for r in relations for n in (r.a, r.b)})
        limits = self.batch_limits()
        entity_batches = list(batches(names, *limits))
        relation_batches = list(batches([_row(r) for r in relations], *limits))
        steps = len(entity_batches) + len(relation_batches) + 2
        progress.start(steps, _("graph: {scope}").format(scope=scope))
        self._drop_digest(scope)
        self._op("delete_scope", scope=scope)
        progress.advance(1)
        for batch in entity_batches:
            self._op("merge_entities", names=batch)
            progress.advance(1)
        for rows in relation_batches:
            self._op("merge_relations", rows=rows)
            progress.advance(1)
        self._op("set_digest", scope=scope, digest=digest)
        progress.advance(1)

    def _drop_digest(self, scope: str) -> None:
        self._op("set_digest", scope=scope, digest="0" * 64)

    def forget_scope(self, scope: str) -> None:
        """Remove ``scope`` entirely: its relations and its digest (a user's notes deleted).

        Entities stay: they are the curated terms, shared by every scope.
        """
        self._drop_digest(scope)  # an interrupted removal is seen as out of date
        self._op("delete_scope", scope=scope)
        self._op("delete_digest", scope=scope)

    def digest(self, scope: str) -> str | None:
        rows = self._op("get_digest", scope=scope)
        value = rows[0]["digest"] if rows else None
        return None if value in (None, "0" * 64) else str(value)

    def neighbours(
        self, names: Sequence[str], scopes: Sequence[str], limit: int = 100
    ) -> list[Neighbour]:
        if not names or not scopes:
            return []
        rows = self._op(
            "neighbours", names=sorted(set(names)), scopes=sorted(set(scopes)), limit=limit
        )
        return [
            Neighbour(
                r["source"],
                r["target"],
                r["scope"],
                int(r["weight"]),
                tuple(_as_list(r["sources"])),
            )
            for r in rows
        ]

    def between(self, names: Sequence[str], scopes: Sequence[str]) -> list[Relation]:
        if len(set(names)) < 2 or not scopes:
            return []
        rows = self._op("between", names=sorted(set(names)), scopes=sorted(set(scopes)))
        return [
            Relation(r["a"], r["b"], r["scope"], int(r["weight"]), tuple(_as_list(r["sources"])))
            for r in rows
        ]

    def two_hop(
        self, name: str, scopes: Sequence[str], limit: int = 50
    ) -> list[tuple[tuple[str, ...], int]]:
        if not scopes:
            return []
        rows = self._op("two_hop", name=name, scopes=sorted(set(scopes)), limit=limit)
        return [(tuple(_as_list(r["names"])), int(r["weight"])) for r in rows]

    def path(self, source: str, target: str, scopes: Sequence[str]) -> GraphPath | None:
        if source == target or not scopes:
            return None
        rows = self._op("path", source=source, target=target, scopes=sorted(set(scopes)))
        if not rows:
            return None
        r = rows[0]
        return GraphPath(
            tuple(_as_list(r["names"])),
            tuple(tuple(_as_list(s)) for s in _as_list(r["sources"])),
            tuple(int(w) for w in _as_list(r["weights"])),
        )

    def counts(self) -> GraphCounts:
        entities = self._op("count_entities")
        relations = self._op("count_relations")
        return GraphCounts(
            int(entities[0]["entities"]) if entities else 0,
            {str(r["scope"]): int(r["relations"]) for r in relations},
        )

    def clear(self) -> None:
        self._op("clear")

    def probe(self) -> str:
        rows = self._op_plain("probe", probe="ok")
        return str(rows[0]["probe"]) if rows else ""

    def _op_plain(self, operation: str, /, **parameters: Any) -> list[dict[str, Any]]:
        return self.execute(self.QUERIES[operation], parameters)

    def close(self) -> None:  # noqa: B027 (optional for implementations)
        pass


def _row(r: Relation) -> dict[str, Any]:
    a, b = sorted((r.a, r.b))
    return {"a": a, "b": b, "scope": r.scope, "weight": r.weight, "sources": list(r.sources)}


GraphFactory = Callable[[], Graph]
