"""The derived vector index of past messages (CA4–CA6): Chroma, local or on a server.

Chroma holds, per message, its vector and a *pointer* — id ``"<file>:<index>"`` and metadata
``{"file": "<file>", "index": <index>}`` — never the text: no ``documents``, no text in
metadata, so it is no side channel next to the encrypted history (CA6). A search embeds the
query, finds pointers and loads (and decrypts) the messages from the files locally.

The collection records the embedder's name and dimension in its metadata; opening it with
another embedder is a :class:`~backends.errors.DimensionMismatchError` (other dimension) or an
:class:`~backends.conversations.errors.EmbedderMismatchError` (same dimension, other model),
never a silently wrong result — rebuild the index to switch (:meth:`VectorIndex.reset`).

:func:`sync` is what the start-up worker runs: it indexes only the messages whose id is
missing and drops ids whose file or message is gone; re-running it never duplicates
anything (ids are deterministic, CA5). Everything here can be deleted and rebuilt from the
files.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from backends.conversations.errors import ConversationError, EmbedderMismatchError
from backends.conversations.files import ConversationFiles
from backends.conversations.index import ConversationIndex, row_for
from backends.errors import DimensionMismatchError, InvalidVectorError
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.stores.engines import chroma

log = logging.getLogger(__name__)

#: the most characters of one message that are embedded: every embedder truncates far below
#: this (MiniLM at 256 tokens), so a longer message costs no more than this to index
EMBED_CHARS = 16_000


def embeddable(text: str) -> str:
    """What of a message is embedded: its first :data:`EMBED_CHARS` characters (never "")."""
    return text[:EMBED_CHARS] or " "


COLLECTION = "custodia_conversations"
#: metadata keys a pointer may carry; values are ints or short identifiers (no spaces)
POINTER_FIELDS = frozenset({"file", "index"})
_IDENTIFIER = re.compile(r"^[A-Za-z0-9._:-]{0,200}$")
#: Chroma persists its HNSW graph every ``sync_threshold`` additions and replays the rest
#: from its log at every open (~0.75 ms per entry at 10k vectors here). The default, 1000,
#: made each start pay up to ~0.7 s; 100 caps that at ~40 ms and also made the initial build
#: and small chat-turn upserts faster (measured: docs/CONVERSATIONS.md).
HNSW = {"space": "cosine", "sync_threshold": 100, "batch_size": 100}
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
        collection: str = COLLECTION,
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
        collection: str = COLLECTION,
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
        collection: str = COLLECTION,
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


# -- pointers and synchronisation -------------------------------------------------------------


def pointer_id(file: str, index: int) -> str:
    return f"{file}:{index}"


def split_pointer_id(value: str) -> tuple[str, int] | None:
    file, sep, index = value.rpartition(":")
    if not sep or not index.isdigit():
        return None
    return file, int(index)


@dataclass
class SyncReport:
    expected: int = 0
    present: int = 0
    added: int = 0
    dropped: int = 0
    #: vectors of files that exist but cannot be read now (e.g. no key), or that another
    #: process wrote after the index was read: kept, not re-made
    kept: int = 0
    #: files that could not be read while indexing (skipped)
    skipped_files: int = 0
    seconds: float = 0.0


def sync(
    files: ConversationFiles,
    index: ConversationIndex,
    vectors: VectorIndex,
    embedder: Embedder,
    progress: Progress | None = None,
    batch: int = 256,
) -> SyncReport:
    """Make the vectors agree with the (already reconciled) index: add missing, drop gone.

    The expected ids come from the index (``file:i`` for each of its ``messages``); the
    present ones from the vector store itself, so a deleted or stale store is repaired.
    """
    started = time.perf_counter()
    progress = progress or Progress()
    report = SyncReport()
    counts = index.message_counts()
    unreadable = index.unreadable()
    expected = {pointer_id(f, i) for f, n in counts.items() for i in range(n)}
    present = vectors.ids()
    report.expected, report.present = len(expected), len(present)
    missing: dict[str, list[int]] = {}
    for value in expected - present:
        parsed = split_pointer_id(value)
        if parsed is not None:
            missing.setdefault(parsed[0], []).append(parsed[1])
    extra: list[str] = []
    stale: list[tuple[str, str, int]] = []
    for value in present - expected:
        parsed = split_pointer_id(value)
        if parsed is not None and parsed[0] in unreadable:
            report.kept += 1
        elif parsed is None:
            extra.append(value)
        else:
            stale.append((value, *parsed))
    if stale:
        # Another process may have written since ``expected`` was read (a CLI turn next to
        # this start-up): look again before dropping anything. An id is only dropped when
        # the index, read now, does not expect it and its file did not change since the
        # index last saw it (or is gone).
        counts_now = index.message_counts()
        on_disk = files.scan()
        seen = {file: entry[0] for file, entry in index.stamps().items()}
        for value, file, position in stale:
            if position < counts_now.get(file, 0):
                report.kept += 1  # expected after all: written meanwhile
            elif file in on_disk and seen.get(file) != on_disk[file]:
                report.kept += 1  # changed since the index saw it: the next sync decides
            else:
                extra.append(value)
    total = sum(len(v) for v in missing.values())
    progress.start(total, "indexing past messages")
    if extra:
        vectors.delete(sorted(extra))
        report.dropped = len(extra)
    pending: list[tuple[str, str, Pointer]] = []

    def flush() -> None:
        if not pending:
            return
        progress.check()
        matrix = embedder.embed_many(text for _, text, _ in pending)
        vectors.upsert([p[0] for p in pending], matrix, [p[2] for p in pending])
        report.added += len(pending)
        progress.advance(len(pending), f"{report.added} of {total} messages indexed")
        pending.clear()

    for file, positions in sorted(missing.items()):
        progress.check()
        try:
            conversation, _ = files.read(file)
        except ConversationError as err:
            log.info("not indexing %s: %s", file, err)
            report.skipped_files += 1
            row = row_for(files, file)  # the index learns why (a chmod keeps the stamp)
            if row is not None and row.error is not None:
                index.apply([row])
            continue
        for i in sorted(positions):
            if i < len(conversation.history):
                text = embeddable(conversation.history[i].content)
                pending.append((pointer_id(file, i), text, {"file": file, "index": i}))
        if len(pending) >= batch:
            flush()
    flush()
    report.seconds = time.perf_counter() - started
    return report
