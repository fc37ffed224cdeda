"""The vector roles: vectors plus pointers or tags, always derived (rebuildable from a source).

Three Protocols share one engine family (Chroma, Qdrant) and one error family
(:class:`~backends.errors.DimensionMismatchError` and its
:class:`~backends.errors.EmbedderMismatchError`): an index records the embedder that made it,
and a different embedder is a typed error, never a silently wrong result.

* :class:`VectorIndex` — the conversations' index (CA4–CA6): vectors and *pointers* (never
  text). Implementation: ``chroma`` (:mod:`backends.stores.vectors.chroma`, local or server).
* :class:`ChunkIndex` — the tutor's chunk vectors (CT6): the user's scopes inside the query.
  Implementation: ``chroma``.
* :class:`SemanticMemory` — the multi-agent memory (MA10–MA11): named collections with payload
  tags that filter inside the query, re-embedding from the text in the payload.
  Implementations: ``edge`` (:mod:`backends.stores.vectors.qdrant_edge`, Qdrant's engine
  in-process, embedded) and ``qdrant`` (:mod:`backends.stores.vectors.qdrant`, qdrant-client:
  a server at ``qdrant_url``; its local mode is what older data dirs hold, moved over by
  ``edge``).

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

# -- the conversations' index -----------------------------------------------------------------

#: metadata keys a pointer may carry; values are ints or short identifiers (no spaces)
POINTER_FIELDS = frozenset({"file", "index"})
_IDENTIFIER = re.compile(r"^[A-Za-z0-9._:-]{0,200}$")
Pointer = Mapping[str, str | int]


@dataclass(frozen=True)
class VectorHit:
    id: str
    #: cosine similarity, 1.0 for the same direction
    score: float
    pointer: dict[str, str | int]


@runtime_checkable
class VectorIndex(Protocol):
    """The "derived vector index" role: vectors plus pointers, rebuildable from the source."""

    kind: str
    #: survives closing and reopening (a server or a folder)
    persistent: bool
    embedder_name: str
    dimension: int

    @property
    def generation(self) -> str:
        """Changes whenever the index is recreated (deleted folder, reset, new server)."""
        ...

    def count(self) -> int: ...

    def ids(self) -> set[str]: ...

    def upsert(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float32], pointers: Sequence[Pointer]
    ) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def query(self, vector: npt.NDArray[np.float32], k: int) -> list[VectorHit]: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


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


# -- the tutor's chunk vectors -----------------------------------------------------------------


@dataclass(frozen=True)
class ChunkHit:
    chunk_id: str
    #: cosine similarity
    score: float
    scope: str


def scope_filter(scopes: Sequence[str]) -> dict[str, Any]:
    """The ``where`` filter of a search restricted to ``scopes`` (CT6)."""
    return {"scope": {"$in": list(scopes)}}


@runtime_checkable
class ChunkIndex(Protocol):
    """The tutor's chunk vectors: one collection, a ``scope`` and a ``doc`` per chunk."""

    embedder_name: str
    dimension: int
    where: str
    #: the ``where`` filter of the last search (the trace shown to testers)
    last_where: dict[str, Any]

    def open(self) -> None: ...

    def count(self) -> int: ...

    def ids(self) -> set[str]: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def upsert(
        self,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        scopes: Sequence[str],
        docs: Sequence[str],
    ) -> None: ...

    def delete_scope(self, scope: str) -> None: ...

    def search(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[ChunkHit]: ...

    def reset(self) -> None: ...

    def close(self) -> None: ...


# -- the multi-agent semantic memory ---------------------------------------------------------

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
class Hit:
    collection: str
    id: str
    score: float
    text: str
    session: str
    expert: str
    ticket: str
    payload: dict[str, Any]


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
    """Named collections of tagged items, one configured embedder (MA10–MA11)."""

    collections: tuple[str, ...]
    #: the configured embedder (every read and write is checked against it)
    embedder: Embedder
    #: where it lives, for messages (a folder or a URL)
    where: str
    local: bool

    def problem(self, name: str) -> DimensionMismatchError | None: ...

    def check(self, name: str | None = None) -> None: ...

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
    ) -> list[Hit]: ...

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
    ) -> list[Hit]: ...

    def search_all(self, query: str, *, limit: int = 5, **filters: str | None) -> list[Hit]: ...

    def count(self, collection: str) -> int: ...

    def points(self, collection: str) -> Iterator[tuple[str, list[float], dict[str, Any]]]: ...

    def reembed(self, progress: Progress | None = None) -> int: ...

    def close(self) -> None: ...
