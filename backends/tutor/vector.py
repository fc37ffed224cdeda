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

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError, StoreUnavailableError
from backends.stores import chroma

log = logging.getLogger(__name__)

COLLECTION = "tutor_chunks"
PAGE = 1000


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


class ChunkVectors:
    """The tutor's Chroma collection."""

    def __init__(
        self,
        client: Any,
        *,
        where: str,
        embedder_name: str,
        dimension: int,
        collection: str = COLLECTION,
    ) -> None:
        self.where = where
        self.embedder_name = embedder_name
        self.dimension = dimension
        self.collection_name = collection
        self._client = client
        self._lock = threading.RLock()
        self._collection: Any = None
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

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (DimensionMismatchError, StoreUnavailableError):
            raise
        except Exception as err:  # chromadb, httpx, sqlite: the store, not our code
            raise StoreUnavailableError(f"{self.where}: cannot {what}: {err}") from err

    def open(self) -> None:
        """Open (or create) the collection; a typed error when another embedder built it."""
        with self._lock:
            collection = self._call("open the collection", self._get_or_create)
            meta = collection.metadata or {}
            dim = meta.get("dimension")
            name = meta.get("embedder")
            if isinstance(dim, int) and dim != self.dimension:
                raise DimensionMismatchError(dim, self.dimension, self.where)
            if isinstance(name, str) and name != self.embedder_name:
                raise EmbedderChangedError(
                    f"{self.where}: the tutor's vectors were made by {name}, not "
                    f"{self.embedder_name}; they are rebuilt from the knowledge base"
                )
            self._collection = collection

    def _get_or_create(self) -> Any:
        try:
            return self._client.get_collection(self.collection_name, embedding_function=None)
        except Exception as err:
            if not chroma.is_not_found(err):
                raise
        return self._client.get_or_create_collection(
            self.collection_name,
            embedding_function=None,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={"embedder": self.embedder_name, "dimension": self.dimension, "format": 1},
        )

    def reset(self) -> None:
        """Drop the collection and create it empty for this embedder."""
        with self._lock:
            try:
                self._client.delete_collection(self.collection_name)
            except Exception as err:
                if not chroma.is_not_found(err):
                    raise StoreUnavailableError(f"{self.where}: cannot reset: {err}") from err
            self._collection = None
            self.open()

    @property
    def collection(self) -> Any:
        if self._collection is None:
            self.open()
        return self._collection

    # -- the role --------------------------------------------------------------------------
    def count(self) -> int:
        with self._lock:
            return int(self._call("count", self.collection.count))

    def ids(self) -> set[str]:
        out: set[str] = set()
        with self._lock:
            offset = 0
            while True:
                page = self._call(
                    "list ids", self.collection.get, include=[], limit=PAGE, offset=offset
                )
                out.update(page["ids"])
                if len(page["ids"]) < PAGE:
                    return out
                offset += PAGE

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
        with self._lock:
            for start in range(0, len(ids), chroma.WRITE_PAGE):
                end = start + chroma.WRITE_PAGE
                self._call(
                    "write vectors",
                    self.collection.upsert,
                    ids=list(ids[start:end]),
                    embeddings=vectors[start:end],
                    metadatas=metadatas[start:end],
                )

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            for start in range(0, len(ids), PAGE):
                self._call(
                    "delete vectors", self.collection.delete, ids=list(ids[start : start + PAGE])
                )

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
        with self._lock:
            result = self._call(
                "search",
                self.collection.query,
                query_embeddings=vector,
                n_results=k,
                where=where,
                include=["metadatas", "distances"],
            )
        ids = result["ids"][0]
        distances = (result.get("distances") or [[]])[0]
        metadatas = (result.get("metadatas") or [[]])[0]
        return [
            VectorHit(i, 1.0 - float(d), str((m or {}).get("scope", "")))
            for i, d, m in zip(ids, distances, metadatas, strict=False)
        ]

    def close(self) -> None:
        with self._lock:
            close = getattr(self._client, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:
                    log.debug("closing the Chroma client failed", exc_info=True)
            self._collection = None
