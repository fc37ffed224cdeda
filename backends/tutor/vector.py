"""Vector retrieval (CT6): Chroma, local or on a server, with our own embeddings.

One collection, ``tutor_chunks`` (the conversations assistant has its own), holds per chunk
its vector and two metadata fields, ``scope`` and ``doc``; the passage text stays in the
knowledge base. Every search puts the user's scopes *inside the query*::

    collection.query(query_embeddings=..., where={"scope": {"$in": ["shared", "user:ana"]}})

so Chroma never returns another user's chunk — nothing is filtered afterwards. The collection
records the embedder's name and dimension; a different embedder is a typed mismatch that the
tutor answers by rebuilding the (derived) collection from the knowledge base.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError, StoreUnavailableError
from backends.stores.engines import chroma

COLLECTION = "tutor_chunks"


class EmbedderChangedError(StoreUnavailableError):
    """The collection was built with another embedder (same dimension): rebuild it."""


@dataclass(frozen=True)
class VectorHit:
    chunk_id: str
    #: cosine similarity
    score: float
    scope: str


def scope_filter(scopes: Sequence[str]) -> dict[str, Any]:
    """The ``where`` filter of a search restricted to ``scopes`` (CT6)."""
    return {"scope": {"$in": list(scopes)}}


class ChunkVectors(chroma.ChromaCollection):
    """The tutor's Chroma collection (opened on first use)."""

    def __init__(
        self,
        client: Any,
        *,
        where: str,
        embedder_name: str,
        dimension: int,
        collection: str = COLLECTION,
    ) -> None:
        super().__init__(
            client,
            where=where,
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
            hnsw={"space": "cosine"},
        )
        #: the ``where`` filter of the last search (the trace shown to testers)
        self.last_where: dict[str, Any] = {}

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def local(
        cls, path: Path, *, embedder_name: str, dimension: int, collection: str = COLLECTION
    ) -> ChunkVectors:
        client = chroma.open_local(path)
        return cls(
            client,
            where=f"Chroma at {path}",
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
        )

    @classmethod
    def server(
        cls,
        url: str,
        *,
        timeout: float,
        embedder_name: str,
        dimension: int,
        collection: str = COLLECTION,
    ) -> ChunkVectors:
        client = chroma.open_server(url, timeout)
        return cls(
            client,
            where=f"Chroma server {url}",
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
        )

    def _other_embedder(self, name: str) -> EmbedderChangedError:
        return EmbedderChangedError(
            f"{self.where}: the tutor's vectors were made by {name}, not "
            f"{self.embedder_name}; they are rebuilt from the knowledge base"
        )

    def open(self) -> None:
        """Open (or create) the collection; a typed error when another embedder built it."""
        self._open()

    # -- the role --------------------------------------------------------------------------
    def upsert(
        self,
        ids: Sequence[str],
        vectors: npt.NDArray[np.float32],
        scopes: Sequence[str],
        docs: Sequence[str],
    ) -> None:
        if not ids:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.shape != (len(ids), self.dimension):
            if vectors.ndim == 2 and vectors.shape[1] != self.dimension:
                raise DimensionMismatchError(self.dimension, int(vectors.shape[1]), self.where)
            raise ValueError(f"expected {len(ids)} vectors, got shape {vectors.shape}")
        metadatas = [{"scope": s, "doc": d} for s, d in zip(scopes, docs, strict=True)]
        self._write(ids, vectors, metadatas)

    def delete_scope(self, scope: str) -> None:
        """Delete every vector of ``scope`` (a user's notes), whatever the ids: the filter is
        part of the delete, as it is of a search."""
        with self._lock:
            self._call("delete vectors", self.collection.delete, where=scope_filter([scope]))

    def search(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        """The ``k`` nearest chunks among ``scopes`` only: the filter is part of the query."""
        vector = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        if vector.shape[1] != self.dimension:
            raise DimensionMismatchError(self.dimension, int(vector.shape[1]), self.where)
        where = scope_filter(scopes)
        self.last_where = where
        if k <= 0 or not scopes:
            return []
        return [
            VectorHit(i, score, str(meta.get("scope", "")))
            for i, score, meta in self._nearest(vector, k, where)
        ]
