"""The vector role: vectors plus a small payload, always derived (rebuildable from a source).

**One Protocol, one hit type.** Every vector store implements :class:`VectorIndex` — count,
ids, upsert(ids, vectors, payloads), delete (by id or by a :data:`Where` filter),
query(vector, k, where) → list of :class:`VectorHit`, reset, close, and the embedder it was
opened for (``embedder_name``, ``dimension``): an index records the embedder that made it, and
opening it with another one is a typed error of one family
(:class:`~backends.errors.DimensionMismatchError`, and its
:class:`~backends.errors.EmbedderMismatchError` for the same dimension), never a silently
wrong result. Its :data:`Where` filter is one small engine-neutral language (equality,
``$ne``, ``$in``, several keys ANDed) that each engine translates into its own, so a filter
always goes *inside* the query.

Implementations:

* ``chroma`` (:mod:`backends.stores.vectors.chroma`, a local folder or a ``chroma run``
  server): :class:`~backends.stores.vectors.chroma.ChromaVectorIndex`, the conversations'
  collection (role ``vectors``, CA4–CA6: payloads are *pointers*, never text), and
  :class:`~backends.stores.vectors.chroma.ChromaChunkIndex`, the same class configured for
  the tutor's collection (role ``chunks``, CT6: the tutor's scopes are a ``where`` filter).
* ``edge`` (:mod:`backends.stores.vectors.qdrant_edge`, Qdrant's engine in-process) and
  ``qdrant`` (:mod:`backends.stores.vectors.qdrant`, qdrant-client: a server at
  ``qdrant_url``; its local mode is what older data dirs hold, moved over by ``edge``): each
  Qdrant collection is a :class:`VectorIndex` (``memory.collection(name)``).

**One extension: collections.** The Qdrant stores implement :class:`SemanticMemory` (role
``semantic``, MA10–MA11): named collections under one *configured* embedder, which open even
when that embedder changed (the guard reports the mismatch collection by collection and every
read and write raises it) and can be re-embedded in place from the text each payload keeps
(staging, crash-safe swap: engine work). A collection seen through :meth:`SemanticMemory.collection`
is an ordinary :class:`VectorIndex` — one Qdrant collection, or an edge shard — and the text
operations (:meth:`SemanticMemory.search`, ``add``: embed then query or upsert, hits as
:class:`MemoryHit`, a :class:`VectorHit` that names its collection) are written once over it
(:mod:`backends.stores.vectors.semantic`).

Engines are imported by the implementation modules only, on first use.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError
from backends.models.embedders import Embedder
from backends.progress import Progress

# -- the one Protocol and its hit -------------------------------------------------------------

Scalar = str | int | float | bool
#: a value (equality) or operators: ``{"$eq": v}``, ``{"$ne": v}``, ``{"$in": [v, ...]}``
Condition = Scalar | Mapping[str, Any]
#: key -> condition, every key must hold (AND); the same language for every engine
Where = Mapping[str, Condition]
OPERATORS = ("$eq", "$ne", "$in")
Payload = Mapping[str, Any]


@dataclass(frozen=True)
class VectorHit:
    """One neighbour: its id, cosine similarity (1.0 for the same direction), its payload."""

    id: str
    score: float
    payload: dict[str, Any]


def clauses(where: Where | None) -> list[tuple[str, str, Any]]:
    """``where`` as (key, operator, value) triples; an unknown operator is a bug (ValueError).

    Engines translate these; an ``$in`` with no value matches nothing
    (:func:`matches_nothing`)."""
    out: list[tuple[str, str, Any]] = []
    for key, condition in (where or {}).items():
        if isinstance(condition, Mapping):
            if not condition:
                raise ValueError(f"filter on {key!r}: no operator")
            for op, value in condition.items():
                if op not in OPERATORS:
                    raise ValueError(f"filter on {key!r}: unknown operator {op!r}")
                if op == "$in":
                    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
                        raise ValueError(f"filter on {key!r}: $in takes a list")
                    value = list(value)
                out.append((key, op, value))
        else:
            out.append((key, "$eq", condition))
    return out


def matches_nothing(where: Where | None) -> bool:
    """An ``$in`` with an empty list: no point can match (no need to ask the engine)."""
    return any(op == "$in" and not value for _, op, value in clauses(where))


@runtime_checkable
class VectorIndex(Protocol):
    """A derived vector index: vectors plus payloads, rebuildable from their source.

    Opening it for another embedder raises (DimensionMismatchError / EmbedderMismatchError)
    and loses nothing; ``fresh`` (of each implementation's constructor) or :meth:`reset`
    starts it empty for the embedder it was opened for, with a new :attr:`generation`."""

    kind: str
    #: survives closing and reopening (a server or a folder)
    persistent: bool
    embedder_name: str
    dimension: int
    #: where it lives, for messages
    where: str

    @property
    def generation(self) -> str:
        """Changes whenever the index is recreated (deleted folder, reset, new server)."""
        ...

    def count(self) -> int: ...

    def ids(self) -> set[str]: ...

    def upsert(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float32], payloads: Sequence[Payload]
    ) -> None:
        """Insert or replace (same id: replaced, never duplicated). Every row must be finite
        and non-zero, of :attr:`dimension` (else DimensionMismatchError)."""
        ...

    def delete(self, ids: Sequence[str] = (), *, where: Where | None = None) -> None:
        """Delete ``ids`` (unknown ones are ignored) and, with ``where``, every point it
        matches: the filter is part of the delete, as it is of a query."""
        ...

    def query(
        self, vector: npt.NDArray[np.float32], k: int, where: Where | None = None
    ) -> list[VectorHit]:
        """The ``k`` nearest by cosine, best first, among the points ``where`` matches
        (inside the query, never after it); an all-zero query has no neighbours."""
        ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


# -- the conversations' pointers (CA6) --------------------------------------------------------

#: metadata keys a pointer may carry; values are ints or short identifiers (no spaces)
POINTER_FIELDS = frozenset({"file", "index"})
_IDENTIFIER = re.compile(r"^[A-Za-z0-9._:-]{0,200}$")
Pointer = Mapping[str, str | int]


def check_pointer(pointer: Pointer) -> dict[str, str | int]:
    """A pointer carries only :data:`POINTER_FIELDS`, as ints or identifiers: never text."""
    out: dict[str, str | int] = {}
    for key, value in pointer.items():
        if key not in POINTER_FIELDS:
            raise ValueError(
                f"pointer field {key!r} is not allowed (only {sorted(POINTER_FIELDS)})"
            )
        if isinstance(value, bool) or not isinstance(value, int | str):
            raise ValueError(f"pointer field {key!r} must be an int or an identifier")
        if isinstance(value, str) and not _IDENTIFIER.match(value):
            raise ValueError(f"pointer field {key!r} must be an identifier, not text")
        out[key] = value
    return out


# -- the collections extension: the multi-agent semantic memory (MA10–MA11) -------------------

COLLECTIONS = ("agent_results", "code_patterns", "session_memory")
INDEXED_FIELDS = ("session", "expert", "ticket")
#: how to re-embed, added to every mismatch error of the collections
REEMBED_HINT = "Run `custodia reindex multiagent` (or Re-embed all in the Multi-agent tab)."
_ID_NAMESPACE = uuid.UUID("6f0c1a52-3b59-4c38-9d7e-2f7f3f0e8b11")


@dataclass(frozen=True)
class MemoryItem:
    """Something to remember: its text (kept in the payload, for re-embedding) and tags."""

    text: str
    session: str = ""
    expert: str = ""
    ticket: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def point_id(self, collection: str) -> str:
        """Deterministic: storing the same item twice (a resumed session) is a no-op."""
        key = "\x1f".join((collection, self.session, self.expert, self.ticket, self.text))
        return str(uuid.uuid5(_ID_NAMESPACE, key))

    def payload(self) -> dict[str, Any]:
        out = dict(self.extra)
        out.update(text=self.text, session=self.session, expert=self.expert, ticket=self.ticket)
        return out


@dataclass(frozen=True)
class MemoryHit(VectorHit):
    """A :class:`VectorHit` of a semantic-memory collection; its text and tags are read from
    the payload (the keys :meth:`MemoryItem.payload` writes)."""

    collection: str = ""

    @property
    def text(self) -> str:
        return str(self.payload.get("text", ""))

    @property
    def session(self) -> str:
        return str(self.payload.get("session", ""))

    @property
    def expert(self) -> str:
        return str(self.payload.get("expert", ""))

    @property
    def ticket(self) -> str:
        return str(self.payload.get("ticket", ""))


def tags_where(
    session: str | None = None,
    expert: str | None = None,
    ticket: str | None = None,
    exclude_session: str | None = None,
) -> dict[str, Condition]:
    """A semantic-memory search's tag filters as a :data:`Where` (None: any)."""
    where: dict[str, Condition] = {}
    session_ops: dict[str, Any] = {}
    if session is not None:
        session_ops["$eq"] = session
    if exclude_session is not None:
        session_ops["$ne"] = exclude_session
    if session_ops:
        where["session"] = session_ops
    for key, value in (("expert", expert), ("ticket", ticket)):
        if value is not None:
            where[key] = value
    return where


@dataclass(frozen=True)
class CollectionStatus:
    name: str
    embedder: str
    dimension: int
    points: int
    #: "" when usable with the configured embedder, else why not
    problem: str = ""


@runtime_checkable
class SemanticMemory(Protocol):
    """The collections extension of :class:`VectorIndex`: named collections under one
    configured embedder (MA10–MA11).

    Each collection is a :class:`VectorIndex` (:meth:`collection`); the rest is what only a
    store of several collections that re-embeds itself has: the embedder guard (``problem``,
    ``check``, ``needs_reembed``, ``status``: the store opens whatever embedder made it, and
    every read and write of a mismatched collection raises), :meth:`reembed` (staging and a
    crash-safe swap, engine work), and the text operations written once over the collections
    (embed then upsert or query; hits as :class:`MemoryHit`)."""

    kind: str
    collections: tuple[str, ...]
    #: the configured embedder (every read and write is checked against it)
    embedder: Embedder
    #: where it lives, for messages (a folder or a URL)
    where: str
    local: bool

    def collection(self, name: str, *, fresh: bool = False) -> VectorIndex:
        """``name`` as a :class:`VectorIndex` for the configured embedder: a mismatch raises
        (``fresh`` empties it for that embedder instead)."""
        ...

    def problem(self, name: str) -> DimensionMismatchError | None: ...

    def check(self, name: str | None = None) -> None: ...

    def verify(self) -> None:
        """:meth:`check`, and every collection can be read (health checks)."""

    @property
    def needs_reembed(self) -> bool: ...

    def status(self) -> list[CollectionStatus]: ...

    def add(self, collection: str, item: MemoryItem) -> str: ...

    def add_many(self, collection: str, items: Sequence[MemoryItem]) -> list[str]: ...

    def upsert_vectors(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        items: Sequence[MemoryItem],
    ) -> None: ...

    def search(
        self,
        collection: str,
        query: str,
        *,
        limit: int = 5,
        session: str | None = None,
        expert: str | None = None,
        ticket: str | None = None,
        exclude_session: str | None = None,
    ) -> list[MemoryHit]: ...

    def search_vector(
        self,
        collection: str,
        vector: npt.NDArray[np.float32],
        *,
        limit: int = 5,
        session: str | None = None,
        expert: str | None = None,
        ticket: str | None = None,
        exclude_session: str | None = None,
    ) -> list[MemoryHit]: ...

    def search_all(
        self, query: str, *, limit: int = 5, **filters: str | None
    ) -> list[MemoryHit]: ...

    def count(self, collection: str) -> int: ...

    def points(self, collection: str) -> Iterator[tuple[str, list[float], dict[str, Any]]]: ...

    def reembed(self, progress: Progress | None = None) -> int: ...

    def copy_to(
        self, other: SemanticMemory, progress: Progress | None = None, *, batch: int = ...
    ) -> int:
        """Every point into ``other`` (:meth:`SemanticCopy.copy_to`, inherited)."""
        ...

    def close(self) -> None: ...


#: points per upsert of :meth:`SemanticCopy.copy_to`
COPY_BATCH = 256
#: the payload keys a :class:`MemoryItem` has fields for
_TAGS = ("text", "session", "expert", "ticket")


class SemanticCopy:
    """``copy_to`` for every :class:`SemanticMemory` (a migration's copy, e.g. local to a
    Qdrant server): written against the Protocol, once for every engine."""

    def copy_to(
        self: SemanticMemory,
        other: SemanticMemory,
        progress: Progress | None = None,
        *,
        batch: int = COPY_BATCH,
    ) -> int:
        """Copy every point of every collection (same id, vector and payload) into ``other``;
        returns how many. Upserts are idempotent, so a copy stopped anywhere is finished by
        running it again. A collection made by another embedder is refused (MA11: it must be
        re-embedded first); cancellation is checked before each batch."""
        progress = progress or Progress()
        copied = 0
        for name in self.collections:
            self.check(name)
            points: list[tuple[str, list[float], dict[str, Any]]] = []
            for point in self.points(name):
                points.append(point)
                if len(points) >= batch:
                    copied += _upsert_points(other, name, points, progress)
                    points = []
            copied += _upsert_points(other, name, points, progress)
        return copied


def _upsert_points(
    target: SemanticMemory,
    name: str,
    points: Sequence[tuple[str, list[float], dict[str, Any]]],
    progress: Progress,
) -> int:
    if not points:
        return 0
    progress.check()
    items = [
        MemoryItem(
            text=str(p.get("text", "")),
            session=str(p.get("session", "")),
            expert=str(p.get("expert", "")),
            ticket=str(p.get("ticket", "")),
            extra={k: v for k, v in p.items() if k not in _TAGS},
        )
        for _, _, p in points
    ]
    vectors = np.asarray([v for _, v, _ in points], dtype=np.float32)
    target.upsert_vectors(name, [i for i, _, _ in points], vectors, items)
    progress.advance(len(points), name)
    return len(points)
