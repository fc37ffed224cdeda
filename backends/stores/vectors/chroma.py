"""Chroma (local folder or ``chroma run`` server) as a
:class:`~backends.stores.vectors.VectorIndex`: one class over one collection, configured for
the conversations' collection (:class:`ChromaVectorIndex`, role ``vectors``) and for the
tutor's (:class:`ChromaChunkIndex`, role ``chunks``). chromadb is imported by the engine
helper (:mod:`backends.stores.engines.chroma`) on first open."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError, EmbedderMismatchError, InvalidVectorError
from backends.i18n import N_, _
from backends.stores.engines import chroma
from backends.stores.vectors import (
    Payload,
    VectorHit,
    Where,
    check_pointer,
    clauses,
    matches_nothing,
)

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


def chroma_where(where: Where | None) -> dict[str, Any] | None:
    """A :data:`~backends.stores.vectors.Where` in Chroma's syntax (one clause as it is,
    several under ``$and``)."""
    parts = [{key: {op: value}} for key, op, value in clauses(where)]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else {"$and": parts}


class ChromaVectorIndex(chroma.ChromaCollection):
    """:class:`VectorIndex` over one Chroma collection (cosine space, our own embeddings).

    Opened (or created, for this embedder) by the constructor: another embedder raises, and
    ``fresh`` drops the collection first. The class attributes are its configuration: the
    collection's default name, its HNSW settings (used when it is created) and what a payload
    may hold (the conversations': pointers only, never text, CA6)."""

    persistent = True
    COLLECTION: ClassVar[str] = CONVERSATIONS
    HNSW: ClassVar[dict[str, Any]] = HNSW

    def __init__(
        self,
        client: Any,
        *,
        kind: str,
        where: str,
        embedder_name: str,
        dimension: int,
        collection: str | None = None,
        fresh: bool = False,
    ) -> None:
        super().__init__(
            client,
            where=where,
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection or self.COLLECTION,
            hnsw=self.HNSW,
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
        collection: str | None = None,
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
        collection: str | None = None,
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
        collection: str | None = None,
        **context: Any,
    ) -> ChromaVectorIndex:
        """The server at ``chroma_url``, else the local folder under the data dir; only our
        collection (``collection``, else the class's) is touched (``fresh`` drops it)."""
        if config.chroma_url:
            return cls.server(
                config.chroma_url,
                timeout=config.network_timeout,
                embedder_name=embedder_name,
                dimension=dimension,
                collection=collection,
                fresh=fresh,
            )
        return cls.local(
            config.chroma_path,
            embedder_name=embedder_name,
            dimension=dimension,
            collection=collection,
            fresh=fresh,
        )

    def _other_embedder(self, name: str) -> EmbedderMismatchError:
        return EmbedderMismatchError(name, self.embedder_name, self.where)

    def _check_payload(self, payload: Payload) -> dict[str, Any]:
        """The conversations' payload is a pointer (CA6): only ``file`` and ``index``."""
        return dict(check_pointer(payload))

    # -- the role --------------------------------------------------------------------------
    @property
    def generation(self) -> str:
        return str(self.collection.id)

    def _check_vectors(self, vectors: npt.NDArray[np.float32], rows: int) -> bool:
        """Raise for a wrong shape or dimension, NaN or infinity; False if a row is all zeros."""
        if vectors.ndim != 2 or vectors.shape[0] != rows:
            if vectors.ndim == 2 and vectors.shape[1] != self.dimension:
                raise DimensionMismatchError(self.dimension, int(vectors.shape[1]), self.where)
            raise ValueError(f"expected {rows} vectors, got an array of shape {vectors.shape}")
        if vectors.shape[1] != self.dimension:
            raise DimensionMismatchError(self.dimension, int(vectors.shape[1]), self.where)
        if not np.isfinite(vectors).all():
            raise InvalidVectorError(
                _("{where}: a vector has NaN or infinite values").format(where=self.where)
            )
        return bool((np.abs(vectors).sum(axis=1) > 0).all())

    def upsert(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float32], payloads: Sequence[Payload]
    ) -> None:
        if not ids:
            return
        vectors = np.asarray(vectors, dtype=np.float32)
        if not self._check_vectors(vectors, len(ids)):
            raise InvalidVectorError(
                _("{where}: a vector is all zeros (it has no direction)").format(where=self.where)
            )
        if len(payloads) != len(ids):
            raise ValueError("one payload per id")
        self._write(ids, vectors, [self._check_payload(p) for p in payloads])

    def delete(self, ids: Sequence[str] = (), *, where: Where | None = None) -> None:
        super().delete(ids)
        if where is not None and not matches_nothing(where):
            with self._lock:
                self._call(
                    N_("cannot delete vectors"), self.collection.delete, where=chroma_where(where)
                )

    def query(
        self, vector: npt.NDArray[np.float32], k: int, where: Where | None = None
    ) -> list[VectorHit]:
        vector = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        nonzero = self._check_vectors(vector, 1)
        with self._lock:
            if k <= 0 or not nonzero or matches_nothing(where) or self.count() == 0:
                return []
            return [
                VectorHit(i, score, meta)
                for i, score, meta in self._nearest(vector, k, chroma_where(where))
            ]


class ChromaChunkIndex(ChromaVectorIndex):
    """The same index, configured for the tutor's collection (CT6): a ``scope`` and a ``doc``
    per chunk (the tutor's scopes go inside the query as a ``where`` filter); another embedder
    is answered by rebuilding it from the knowledge base."""

    COLLECTION: ClassVar[str] = CHUNKS
    HNSW: ClassVar[dict[str, Any]] = {"space": "cosine"}

    def _other_embedder(self, name: str) -> EmbedderMismatchError:
        return EmbedderMismatchError(
            name,
            self.embedder_name,
            self.where,
            dimension=self.dimension,
            advice=_("The tutor's vectors are rebuilt from the knowledge base."),
        )

    def _check_payload(self, payload: Payload) -> dict[str, Any]:
        """Chroma's metadata: strings, numbers and booleans only."""
        out = dict(payload)
        for key, value in out.items():
            if not isinstance(value, str | int | float | bool):
                raise ValueError(f"payload field {key!r} must be a string or a number")
        return out
