"""What the two semantic memories (:mod:`.qdrant`, :mod:`.qdrant_edge`) share, engine aside.

Each collection as a :class:`~backends.stores.vectors.VectorIndex` (:class:`Collection`,
what :meth:`SemanticMemoryBase.collection` returns), the embedder guard (MA11: a
collection's recorded dimension and embedder against the configured one, with the re-embed
hint), the value checks of vectors, and the text operations written over the collections
(embed in batches then upsert; embed then query; hits as
:class:`~backends.stores.vectors.MemoryHit`). Each implementation supplies only what talks to
its engine: :meth:`_guard` (held around each operation), :meth:`_nearest`, :meth:`_store`,
:meth:`_ids`, :meth:`_delete`, :meth:`_recreate` and :meth:`count`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Self

import numpy as np
import numpy.typing as npt

from backends.errors import (
    DimensionMismatchError,
    EmbedderMismatchError,
    InvalidVectorError,
    StoreUnavailableError,
)
from backends.i18n import _
from backends.models.embedders import Embedder
from backends.stores.description import OK, Measurement, SelfDescribing, running_store
from backends.stores.vectors import (
    REEMBED_HINT,
    CollectionStatus,
    MemoryHit,
    MemoryItem,
    Payload,
    SemanticCopy,
    VectorHit,
    Where,
    matches_nothing,
    tags_where,
)

if TYPE_CHECKING:
    from backends.config import Config

#: (point id, vector, payload), what an engine stores
Point = tuple[str, list[float], dict[str, Any]]


def check_values(vectors: npt.NDArray[Any], where: str, *, zero: bool = False) -> bool:
    """Raise :class:`InvalidVectorError` for NaN, infinite or (unless ``zero``) all-zero rows;
    return False when some row is all zeros."""
    if not np.isfinite(vectors).all():
        raise InvalidVectorError(
            _("{where}: a vector has NaN or infinite values").format(where=where)
        )
    nonzero = bool((np.abs(vectors).sum(axis=1) > 0).all())
    if not nonzero and not zero:
        raise InvalidVectorError(
            _("{where}: a vector is all zeros (it has no direction)").format(where=where)
        )
    return nonzero


class Collection:
    """One collection of a semantic memory as a :class:`~backends.stores.vectors.VectorIndex`
    for the configured embedder. Every operation holds the memory's guard (the edge's lease)
    and checks the collection against the embedder first (MA11: a mismatch raises, never an
    empty result). Closing it closes nothing: the memory owns the engine."""

    persistent = True

    def __init__(self, memory: SemanticMemoryBase, name: str) -> None:
        self._memory = memory
        self.name = name
        self.kind = memory.kind
        self.embedder_name = memory.embedder.name
        self.dimension = memory.embedder.dimension
        self.where = f"semantic memory collection {name!r} ({memory.where})"

    @property
    def generation(self) -> str:
        with self._memory._guard():
            meta = self._memory._meta[self.name]
            return str(meta.get("generation") or f"{self._memory.where}#{self.name}")

    def count(self) -> int:
        return self._memory.count(self.name)

    def ids(self) -> set[str]:
        with self._memory._guard():
            self._memory.check(self.name)
            return self._memory._ids(self.name)

    def upsert(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float32], payloads: Sequence[Payload]
    ) -> None:
        memory = self._memory
        with memory._guard():
            memory.check(self.name)
            vectors = np.asarray(vectors, dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
                got = int(vectors.shape[-1]) if vectors.ndim else 0
                raise DimensionMismatchError(self.dimension, got, f"upsert into {self.name}")
            if not (len(ids) == len(payloads) == vectors.shape[0]):
                raise ValueError("one vector and one payload per id")
            if not ids:
                return
            check_values(vectors, f"upsert into {self.name}")
            points = [
                (str(pid), vec.tolist(), dict(payload))
                for pid, vec, payload in zip(ids, vectors, payloads, strict=True)
            ]
            memory._store(self.name, points)

    def delete(self, ids: Sequence[str] = (), *, where: Where | None = None) -> None:
        with self._memory._guard():
            self._memory.check(self.name)
            self._memory._delete(
                self.name, list(ids), None if where is None or matches_nothing(where) else where
            )

    def query(
        self, vector: npt.NDArray[np.float32], k: int, where: Where | None = None
    ) -> list[VectorHit]:
        return [hit for hit in self.hits(vector, k, where)]

    def hits(
        self, vector: npt.NDArray[np.float32], k: int, where: Where | None = None
    ) -> list[MemoryHit]:
        """:meth:`query`, each hit naming its collection (and its text and tags)."""
        memory = self._memory
        vector = np.asarray(vector, dtype=np.float32)
        if vector.ndim == 2 and vector.shape[0] == 1:
            vector = vector[0]
        with memory._guard():
            memory.check(self.name)
            if vector.shape != (self.dimension,):
                got = int(vector.shape[-1]) if vector.ndim else 0
                raise DimensionMismatchError(self.dimension, got, f"search in {self.name}")
            if not check_values(vector.reshape(1, -1), f"search in {self.name}", zero=True):
                return []  # an all-zero query has no direction: no neighbours
            if k <= 0 or matches_nothing(where):
                return []
            points = list(memory._nearest(self.name, vector, k, where))
        return [
            MemoryHit(
                id=str(point.id),
                score=float(point.score),
                payload=dict(point.payload or {}),
                collection=self.name,
            )
            for point in points
        ]

    def reset(self) -> None:
        """Empty the collection for the configured embedder (a new generation)."""
        with self._memory._guard():
            self._memory._recreate(self.name)

    def close(self) -> None:
        """Nothing: the memory's :meth:`~SemanticMemoryBase.close` closes the engine."""


class SemanticMemoryBase(SemanticCopy, SelfDescribing):
    """The engine-independent half of a :class:`~backends.stores.vectors.SemanticMemory`."""

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The points of every collection, through the running memory (one process holds
        it), its first problem (MA11: another embedder) as health, and its folder's size."""
        status = running_store(running).status()
        problems = [s.problem for s in status if s.problem]
        return Measurement(
            sum(s.points for s in status),
            cls.disk_size(config),
            problems[0] if problems else OK,
            ", ".join(f"{s.name} {s.points}" for s in status),
        )

    @classmethod
    def disk_size(cls, config: Config) -> int | None:
        """The bytes its folder takes (None: a server's own disk)."""
        return None

    kind: str
    embedder: Embedder
    collections: tuple[str, ...]
    where: str
    #: each collection's metadata: ``dimension`` (the engine's vector size), ``embedder``,
    #: ``generation`` (made when the collection is created; older ones have none)
    _meta: dict[str, dict[str, Any]]
    #: how many items are embedded and upserted at a time by :meth:`add_many`
    _add_batch: int = 256

    # -- what each engine supplies ---------------------------------------------------------
    def _guard(self) -> AbstractContextManager[None]:
        """Held around each operation (the edge's lease); nothing by default."""
        return contextlib.nullcontext()

    def count(self, collection: str) -> int:
        raise NotImplementedError

    def _store(self, collection: str, points: Sequence[Point]) -> None:
        """Upsert checked points into ``collection``."""
        raise NotImplementedError

    def _nearest(
        self,
        collection: str,
        vector: npt.NDArray[np.float32],
        limit: int,
        where: Where | None,
    ) -> Iterable[Any]:
        """The engine's scored points (``id``, ``score``, ``payload``), ``where`` inside."""
        raise NotImplementedError

    def _ids(self, collection: str) -> set[str]:
        raise NotImplementedError

    def _delete(self, collection: str, ids: Sequence[str], where: Where | None) -> None:
        """Delete ``ids`` and, with ``where``, every point it matches."""
        raise NotImplementedError

    def _recreate(self, collection: str) -> None:
        """Drop ``collection`` and create it empty for the configured embedder."""
        raise NotImplementedError

    # -- each collection as a VectorIndex --------------------------------------------------
    def collection(self, name: str, *, fresh: bool = False) -> Collection:
        """``name`` as a :class:`~backends.stores.vectors.VectorIndex`: raises the mismatch
        when another embedder made it (``fresh``: emptied for the configured one instead)."""
        with self._guard():
            if fresh:
                self.problem(name)  # an unknown name is a KeyError, before anything is dropped
                self._recreate(name)
            else:
                self.check(name)
        return Collection(self, name)

    # -- the embedder guard (MA11) ---------------------------------------------------------
    def problem(self, name: str) -> DimensionMismatchError | None:
        """Why ``name`` cannot be used with the configured embedder, or None."""
        meta = self._meta.get(name)
        if meta is None:
            raise KeyError(f"unknown collection {name!r}; known: {', '.join(self.collections)}")
        where = f"semantic memory collection {name!r}"
        dimension = int(meta.get("dimension", 0))
        error: DimensionMismatchError
        if dimension != self.embedder.dimension:
            error = DimensionMismatchError(dimension, self.embedder.dimension, where)
        else:
            recorded = str(meta.get("embedder", ""))
            if recorded == self.embedder.name:
                return None
            error = EmbedderMismatchError(
                recorded,
                self.embedder.name,
                where,
                dimension=dimension,
                advice=_("Re-embed to switch models."),
            )
        error.args = (f"{error} {REEMBED_HINT}",)
        return error

    def check(self, name: str | None = None) -> None:
        """Raise the first mismatch (of ``name``, or of any collection)."""
        for candidate in (name,) if name else self.collections:
            error = self.problem(candidate)
            if error is not None:
                raise error

    def verify(self) -> None:
        """:meth:`check`, and whatever the engine needs to prove it can still read every
        collection (the health check's; an engine whose files can be damaged says more)."""
        self.check()

    @property
    def needs_reembed(self) -> bool:
        return any(self.problem(name) is not None for name in self.collections)

    def status(self) -> list[CollectionStatus]:
        with self._guard():
            out = []
            for name in self.collections:
                meta = self._meta[name]
                error = self.problem(name)
                problem = "" if error is None else str(error)
                try:
                    points = self.count(name)
                except StoreUnavailableError as err:  # a damaged collection: say so, go on
                    points, problem = 0, problem or str(err)
                out.append(
                    CollectionStatus(
                        name=name,
                        embedder=str(meta.get("embedder", "")),
                        dimension=int(meta.get("dimension", 0)),
                        points=points,
                        problem=problem,
                    )
                )
            return out

    # -- the text operations, over the collections -----------------------------------------
    def add(self, collection: str, item: MemoryItem) -> str:
        return self.add_many(collection, [item])[0]

    def add_many(self, collection: str, items: Sequence[MemoryItem]) -> list[str]:
        """Embed and upsert in batches; returns the (deterministic) point ids."""
        with self._guard():
            self.check(collection)
        ids = [item.point_id(collection) for item in items]
        for start in range(0, len(items), self._add_batch):
            chunk = items[start : start + self._add_batch]
            vectors = self.embedder.embed_batch([i.text for i in chunk])
            keep = [
                int(i) for i in np.flatnonzero(np.abs(vectors).sum(axis=1) > 0)
            ]  # 0: no meaning
            self.upsert_vectors(
                collection,
                [ids[start + i] for i in keep],
                vectors[keep],
                [chunk[i] for i in keep],
            )
        return ids

    def upsert_vectors(
        self,
        collection: str,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        items: Sequence[MemoryItem],
    ) -> None:
        """Upsert precomputed vectors (bench, re-embedding); checks their dimension."""
        with self._guard():
            index = self.collection(collection)
            index.upsert(ids, vectors, [item.payload() for item in items])

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
    ) -> list[MemoryHit]:
        """Nearest items by cosine; the tag filters go inside the query (not after it)."""
        with self._guard():
            self.check(collection)
        vector = self.embedder.embed(query)
        return self.search_vector(
            collection,
            vector,
            limit=limit,
            session=session,
            expert=expert,
            ticket=ticket,
            exclude_session=exclude_session,
        )

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
    ) -> list[MemoryHit]:
        with self._guard():
            index = self.collection(collection)
            where = tags_where(session, expert, ticket, exclude_session)
            return index.hits(vector, limit, where or None)

    def search_all(self, query: str, *, limit: int = 5, **filters: str | None) -> list[MemoryHit]:
        """Search every collection; best first."""
        with self._guard():
            self.check()
        vector = self.embedder.embed(query)
        with self._guard():
            hits = [
                hit
                for name in self.collections
                for hit in self.search_vector(name, vector, limit=limit, **filters)
            ]
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]
