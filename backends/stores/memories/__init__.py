"""Memory store role (PA1–PA5): texts with their vectors, searched by cosine.

The Protocol and its value types; implementation: ``sqlite``
(:class:`~backends.stores.memories.sqlite.SQLiteMemoryStore`, the original's ``vectores``
table, searched from an in-memory matrix). The memories assistant's domain (answers, recall
thresholds, near duplicates) stays in :mod:`backends.memories`.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import _
from backends.progress import Progress

Vector = npt.NDArray[np.float32]


class MemoryStoreError(StoreUnavailableError):
    """The memory database cannot be read or written (corrupt, locked, disk full...)."""


class EmptyTextError(CustodiaEnvironmentError):
    """A memory (or a message) with no text in it."""


class MemoryExistsError(CustodiaEnvironmentError):
    """An edit would turn a memory into the text of another one that already exists."""

    def __init__(self, text: str) -> None:
        super().__init__(_("a memory with this text already exists: {text!r}").format(text=text))
        self.text = text


class MemoryNotFoundError(CustodiaEnvironmentError):
    """The memory named does not exist (any more)."""

    def __init__(self, text: str) -> None:
        super().__init__(_("no such memory: {text!r}").format(text=text))
        self.text = text


@dataclass(frozen=True)
class Memory:
    """One remembered fact, as listed (without its vector)."""

    text: str
    created_at: float
    updated_at: float
    source: str
    dimension: int
    #: the embedder that produced the stored vector ("" when unknown: written by the original)
    embedder: str
    #: True when the current embedder can search it (same dimension and model, readable vector)
    searchable: bool


@dataclass(frozen=True)
class StoredMemory:
    """A memory with its raw vector: what :meth:`SQLiteMemoryStore.restore` puts back (undo)."""

    memory: Memory
    vector: bytes


@dataclass(frozen=True)
class Hit:
    """A search result: the memory's text and its cosine similarity to the query."""

    text: str
    similarity: float
    #: why recall found it, for people ("meaning 0.61 · name: Lucía"); "" from a bare search
    why: str = ""


@dataclass(frozen=True)
class StoreStats:
    """How many memories there are, and how many the current embedder can search."""

    total: int
    searchable: int
    #: dimension -> count, for the rows of another dimension (never compared, PA3)
    other_dimensions: dict[int, int] = field(default_factory=dict)
    #: embedder name -> count, for rows of the right dimension written by another model
    other_models: dict[str, int] = field(default_factory=dict)
    #: rows whose vector cannot be read (wrong length or not finite)
    unreadable: int = 0
    #: embedder name ("" unknown) -> count, for every readable row the current embedder
    #: cannot search (of another dimension or model)
    stale_models: dict[str, int] = field(default_factory=dict)

    @property
    def needs_reembed(self) -> int:
        return self.total - self.searchable


@dataclass(frozen=True)
class AddResult:
    """What :meth:`SQLiteMemoryStore.add` did: ``created``, ``duplicate`` or ``refreshed``."""

    text: str
    status: str

    @property
    def created(self) -> bool:
        return self.status == "created"


@runtime_checkable
class MemoryStore(Protocol):
    """The memory-store role. :class:`SQLiteMemoryStore` is its implementation."""

    dimension: int
    model: str
    #: changes whenever the searchable rows change (for caches derived from them)
    generation: int

    def add(self, text: str, vector: npt.ArrayLike, source: str = "user") -> AddResult: ...

    def add_many(
        self, items: Iterable[tuple[str, npt.ArrayLike]], source: str = "user"
    ) -> list[AddResult]: ...

    def get(self, text: str) -> Memory | None: ...

    def update(self, text: str, new_text: str, vector: npt.ArrayLike) -> StoredMemory: ...

    def delete(self, text: str) -> StoredMemory | None: ...

    def restore(self, stored: StoredMemory) -> None: ...

    def search(
        self, vector: npt.ArrayLike, k: int = 10, threshold: float | None = None
    ) -> list[Hit]: ...

    def list(self, limit: int | None = None, offset: int = 0) -> list[Memory]: ...

    def count(self) -> int: ...

    def stats(self) -> StoreStats: ...

    def reembed(
        self,
        embed: Callable[[Sequence[str]], npt.ArrayLike],
        progress: Progress | None = None,
        batch_size: int = 64,
    ) -> int: ...

    def nearest(self, vector: npt.ArrayLike) -> Hit | None: ...

    def similarities(self, vector: npt.ArrayLike, texts: Iterable[str]) -> dict[str, float]: ...

    def searchable_texts(self) -> builtins.list[str]: ...

    def signal_vectors(self, model: str, texts: Sequence[str]) -> dict[str, Vector]: ...

    def put_signal_vectors(
        self, model: str, items: Iterable[tuple[str, npt.ArrayLike]]
    ) -> None: ...

    def find_text(self, fragment: str, limit: int = 200) -> builtins.list[Memory]: ...

    def load(self) -> None:
        """Load (or refresh) what a search needs now instead of at the first search."""

    def close(self) -> None: ...
