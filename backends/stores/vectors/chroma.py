"""Chroma (local folder or ``chroma run`` server) for the vector roles: the conversations'
:class:`~backends.stores.vectors.VectorIndex` and the tutor's
:class:`~backends.stores.vectors.ChunkIndex`. chromadb is imported by the engine helper
(:mod:`backends.stores.engines.chroma`) on first open."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError, EmbedderMismatchError, InvalidVectorError
from backends.stores.engines import chroma
from backends.stores.vectors import ChunkHit, Pointer, VectorHit, check_pointer, scope_filter

if TYPE_CHECKING:
    from backends.config import Config

#: the collections' default names (the conversations' and the tutor's)
CONVERSATIONS = "custodia_conversations"
CHUNKS = "tutor_chunks"
#: Chroma persists its HNSW graph every ``sync_threshold`` additions and replays the rest
#: from its log at every open (~0.75 ms per entry at 10k vectors here). The default, 1000,
#: made each start pay up to ~0.7 s; 100 caps that at ~40 ms and also made the initial build
#: and small chat-turn upserts faster (measured: docs/CONVERSATIONS.md).
HNSW = {"space": "cosine", "sync_threshold": 100, "batch_size": 100}


class ChromaVectorIndex(chroma.ChromaCollection):
    """:class:`VectorIndex` over one Chroma collection (cosine space, our own embeddings)."""

    persistent = True

    def __init__(
        self,
        client: Any,
        *,
        kind: str,
        where: str,
        embedder_name: str,
        dimension: int,
        collection: str = CONVERSATIONS,
        fresh: bool = False,
    ) -> None:
        super().__init__(
            client,
            where=where,
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
            hnsw=HNSW,
        )
        self.kind = kind
        try:
            if fresh:
                self._drop()
            self._open()
        except Exception:
            self.close()
            raise

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def local(
        cls,
        path: Path,
        *,
        embedder_name: str,
        dimension: int,
        collection: str = CONVERSATIONS,
        fresh: bool = False,
    ) -> ChromaVectorIndex:
        """Persistent local Chroma in ``path`` (created 0700)."""
        client = chroma.open_local(path)
        return cls(
            client,
            kind="chroma-local",
            where=f"Chroma at {path}",
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
            fresh=fresh,
        )

    @classmethod
    def server(
        cls,
        url: str,
        *,
        timeout: float,
        embedder_name: str,
        dimension: int,
        collection: str = CONVERSATIONS,
        fresh: bool = False,
    ) -> ChromaVectorIndex:
        """A Chroma server (``chroma run``) at ``url``; every request times out."""
        client = chroma.open_server(url, timeout)
        return cls(
            client,
            kind="chroma-server",
            where=f"Chroma server {url}",
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
            fresh=fresh,
        )

    @classmethod
    def from_config(
        cls,
        config: Config,
        *,
        embedder_name: str,
        dimension: int,
        fresh: bool = False,
        **context: Any,
    ) -> ChromaVectorIndex:
        """The server at ``chroma_url``, else the local folder under the data dir; only our
        collection is touched (``fresh`` drops it)."""
        if config.chroma_url:
            return cls.server(
                config.chroma_url,
                timeout=config.network_timeout,
                embedder_name=embedder_name,
                dimension=dimension,
                fresh=fresh,
            )
        return cls.local(
            config.chroma_path, embedder_name=embedder_name, dimension=dimension, fresh=fresh
        )

    def _other_embedder(self, name: str) -> EmbedderMismatchError:
        return EmbedderMismatchError(name, self.embedder_name, self.where)

    # -- the role --------------------------------------------------------------------------
    @property
    def generation(self) -> str:
        return str(self.collection.id)

    def _check_vectors(self, vectors: npt.NDArray[np.float32], rows: int) -> bool:
        """Raise for a wrong shape or dimension, NaN or infinity; False if a row is all zeros."""
        if vectors.ndim != 2 or vectors.shape[0] != rows:
            raise ValueError(f"expected {rows} vectors, got an array of shape {vectors.shape}")
        if vectors.shape[1] != self.dimension:
            raise DimensionMismatchError(self.dimension, int(vectors.shape[1]), self.where)
        if not np.isfinite(vectors).all():
            raise InvalidVectorError(f"{self.where}: a vector has NaN or infinite values")
        return bool((np.abs(vectors).sum(axis=1) > 0).all())

    def upsert(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float32], pointers: Sequence[Pointer]
    ) -> None:
        if not ids:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if not self._check_vectors(vectors, len(ids)):
            raise InvalidVectorError(f"{self.where}: a vector is all zeros (it has no direction)")
        if len(pointers) != len(ids):
            raise ValueError("one pointer per id")
        self._write(ids, vectors, [check_pointer(p) for p in pointers])

    def query(self, vector: npt.NDArray[np.float32], k: int) -> list[VectorHit]:
        vector = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        nonzero = self._check_vectors(vector, 1)
        with self._lock:
            if k <= 0 or not nonzero or self.count() == 0:
                return []
            return [VectorHit(i, score, meta) for i, score, meta in self._nearest(vector, k)]


class ChromaChunkIndex(chroma.ChromaCollection):
    """The tutor's Chroma collection (opened on first use)."""

    def __init__(
        self,
        client: Any,
        *,
        where: str,
        embedder_name: str,
        dimension: int,
        collection: str = CHUNKS,
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
        cls, path: Path, *, embedder_name: str, dimension: int, collection: str = CHUNKS
    ) -> ChromaChunkIndex:
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
        collection: str = CHUNKS,
    ) -> ChromaChunkIndex:
        client = chroma.open_server(url, timeout)
        return cls(
            client,
            where=f"Chroma server {url}",
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
        )

    @classmethod
    def from_config(
        cls, config: Config, *, embedder_name: str, dimension: int, **context: Any
    ) -> ChromaChunkIndex:
        """The server at ``chroma_url``, else the local folder under the data dir."""
        if config.chroma_url:
            return cls.server(
                config.chroma_url,
                timeout=config.network_timeout,
                embedder_name=embedder_name,
                dimension=dimension,
            )
        return cls.local(config.chroma_path, embedder_name=embedder_name, dimension=dimension)

    def _other_embedder(self, name: str) -> EmbedderMismatchError:
        return EmbedderMismatchError(
            name,
            self.embedder_name,
            self.where,
            dimension=self.dimension,
            advice="The tutor's vectors are rebuilt from the knowledge base.",
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
    ) -> list[ChunkHit]:
        """The ``k`` nearest chunks among ``scopes`` only: the filter is part of the query."""
        vector = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        if vector.shape[1] != self.dimension:
            raise DimensionMismatchError(self.dimension, int(vector.shape[1]), self.where)
        where = scope_filter(scopes)
        self.last_where = where
        if k <= 0 or not scopes:
            return []
        return [
            ChunkHit(i, score, str(meta.get("scope", "")))
            for i, score, meta in self._nearest(vector, k, where)
        ]
