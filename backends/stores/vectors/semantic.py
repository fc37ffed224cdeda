"""What the two semantic memories (:mod:`.qdrant`, :mod:`.qdrant_edge`) share, engine aside.

The embedder guard (MA11: a collection's recorded dimension and embedder against the
configured one, with the re-embed hint), the value checks of vectors, embedding in batches and
turning the engine's points into :class:`~backends.stores.vectors.Hit`. Each implementation
supplies only what talks to its engine: :meth:`_guard` (held around each operation),
:meth:`_nearest`, :meth:`_store` and :meth:`count`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError, EmbedderMismatchError, InvalidVectorError
from backends.models.embedders import Embedder
from backends.stores.vectors import REEMBED_HINT, CollectionStatus, Hit, MemoryItem

#: (point id, vector, payload), what an engine stores
Point = tuple[str, list[float], dict[str, Any]]


class Tags(NamedTuple):
    """A search's tag filters (None: any), for the engine to apply inside the query."""

    session: str | None
    expert: str | None
    ticket: str | None
    exclude_session: str | None


def check_values(vectors: npt.NDArray[Any], where: str, *, zero: bool = False) -> bool:
    """Raise :class:`InvalidVectorError` for NaN, infinite or (unless ``zero``) all-zero rows;
    return False when some row is all zeros."""
    if not np.isfinite(vectors).all():
        raise InvalidVectorError(f"{where}: a vector has NaN or infinite values")
    nonzero = bool((np.abs(vectors).sum(axis=1) > 0).all())
    if not nonzero and not zero:
        raise InvalidVectorError(f"{where}: a vector is all zeros (it has no direction)")
    return nonzero


class SemanticMemoryBase:
    """The engine-independent half of a :class:`~backends.stores.vectors.SemanticMemory`."""

    embedder: Embedder
    collections: tuple[str, ...]
    where: str
    #: each collection's metadata: ``dimension`` (the engine's vector size), ``embedder``
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
        self, collection: str, vector: npt.NDArray[np.float32], limit: int, tags: Tags
    ) -> Iterable[Any]:
        """The engine's scored points (``id``, ``score``, ``payload``), ``tags`` inside."""
        raise NotImplementedError

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
                advice="Re-embed to switch models.",
            )
        error.args = (f"{error} {REEMBED_HINT}",)
        return error

    def check(self, name: str | None = None) -> None:
        """Raise the first mismatch (of ``name``, or of any collection)."""
        for candidate in (name,) if name else self.collections:
            error = self.problem(candidate)
            if error is not None:
                raise error

    @property
    def needs_reembed(self) -> bool:
        return any(self.problem(name) is not None for name in self.collections)

    def status(self) -> list[CollectionStatus]:
        with self._guard():
            out = []
            for name in self.collections:
                meta = self._meta[name]
                error = self.problem(name)
                out.append(
                    CollectionStatus(
                        name=name,
                        embedder=str(meta.get("embedder", "")),
                        dimension=int(meta.get("dimension", 0)),
                        points=self.count(name),
                        problem="" if error is None else str(error),
                    )
                )
            return out

    # -- writes and reads ------------------------------------------------------------------
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
            self.check(collection)
            if vectors.ndim != 2 or vectors.shape[1] != self.embedder.dimension:
                got = int(vectors.shape[-1]) if vectors.ndim else 0
                raise DimensionMismatchError(
                    self.embedder.dimension, got, f"upsert into {collection}"
                )
            check_values(vectors, f"upsert into {collection}")
            points = [
                (pid, vec.tolist(), item.payload())
                for pid, vec, item in zip(ids, vectors, items, strict=True)
            ]
            self._store(collection, points)

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
    ) -> list[Hit]:
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
    ) -> list[Hit]:
        with self._guard():
            self.check(collection)
            if vector.shape != (self.embedder.dimension,):
                got = int(vector.shape[-1]) if vector.ndim else 0
                raise DimensionMismatchError(
                    self.embedder.dimension, got, f"search in {collection}"
                )
            if not check_values(vector.reshape(1, -1), f"search in {collection}", zero=True):
                return []  # an all-zero query has no direction: no neighbours
            points = list(
                self._nearest(
                    collection, vector, limit, Tags(session, expert, ticket, exclude_session)
                )
            )
        hits = []
        for point in points:
            payload = dict(point.payload or {})
            hits.append(
                Hit(
                    collection=collection,
                    id=str(point.id),
                    score=float(point.score),
                    text=str(payload.get("text", "")),
                    session=str(payload.get("session", "")),
                    expert=str(payload.get("expert", "")),
                    ticket=str(payload.get("ticket", "")),
                    payload=payload,
                )
            )
        return hits

    def search_all(self, query: str, *, limit: int = 5, **filters: str | None) -> list[Hit]:
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
