"""What a store says about itself: its engine, where it keeps its data, how much it holds, and
whether it can be reached — the storage map's columns and the doctor's rows, asked of the store.

Every implementation class in the registry is :class:`SelfDescribing`: the class-level half
answers *without opening anything* (``engine_for``, ``label_for``, ``locate``, ``address``,
``created``) and ``checkup`` reaches a server with the configured timeouts (the doctor's
probe); ``measure`` counts what the store holds. An embedded file is measured read-only (a
missing file is "not created yet", never created); a server through a short-lived client of
its own (or the running one); a store that lives inside an assistant's service (Chroma,
qdrant-edge: one process holds the folder) only through that running instance, handed in as
``running``, so the map never fights the window for a folder lock.

A *datum* is not a store: the storage map has one row per datum (14), some held by a store
role, some by files an assistant keeps itself, and the sessions span the mirror and the L2.
Each assistant declares its data once (:class:`Datum`, in ``backends/<assistant>/data.py``):
the owner holds the file names and prefixes, so the tools copy none.

The seed's rule (SPEC, "if this datum is lost, what happens?"): :data:`RECOMPUTABLE` ("it is
recomputed"), :data:`HISTORY` ("I lose history"), :data:`PROVABLE` ("I cannot prove nobody
touched it").
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, TypeVar

from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _

if TYPE_CHECKING:
    from backends.config import Config
    from backends.models.embedders import Embedder

T = TypeVar("T")


class Running(Protocol):
    """What a datum measured *inside* the process may ask of it: the services the process
    runs (the composition layer's container satisfies this; the storage layer never names
    it). Measured from outside the process, there is none (``None``)."""

    def is_built(self, name: str) -> bool:
        """Whether the part called ``name`` (an assistant, "audit") is running already."""
        ...

    def get(self, name: str, kind: type[T]) -> T:
        """The running part called ``name`` (built on first use), checked to be a ``kind``."""
        ...

    @property
    def embedder(self) -> Embedder: ...

    def open_store(self, role: str, **context: Any) -> Any:
        """The store of ``role`` for the process's configuration."""
        ...


RECOMPUTABLE = N_("recomputable")
HISTORY = N_("history")
PROVABLE = N_("provable")
DURABILITY = (RECOMPUTABLE, HISTORY, PROVABLE)

OK = N_("ok")
NOT_CREATED = N_("not created yet")
NEEDS_SERVICES = N_("needs the running services")


@dataclass(frozen=True)
class Description:
    """What a store says about itself, without opening it."""

    role: str
    kind: str
    engine: str  # the storage map's engine column
    location: str  # the storage map's "where": a file, a folder, a redacted URL
    label: str = ""  # the doctor's short name of the engine ("redis", "qdrant-edge")
    address: str = ""  # where the doctor says it is
    product: str = ""  # the engine's proper name ("Redis", "in-process")
    shared: bool = False  # its data outlives this process (a server other processes see)


@dataclass(frozen=True)
class Measurement:
    """How much a store holds now (counted in the store itself) and whether it is usable."""

    items: int | None  # None: could not be counted
    size_bytes: int | None = None  # None: not measurable from here (a server's own disk)
    health: str = OK
    note: str = ""
    engine: str = ""  # the engine as the server names itself, when it can ("" : as described)


#: what a store that does not exist yet measures (nothing was created to find out)
NOT_CREATED_YET = Measurement(0, 0, NOT_CREATED)


@dataclass
class Probed:
    """What the doctor's probe of a store found: the server's version and details."""

    version: str = ""
    details: dict[str, str] = field(default_factory=dict)


class SelfDescribing:
    """The self-description every store implementation has (mixed into each class).

    Subclasses set :attr:`ENGINE` and :attr:`LABEL` (or override ``engine_for``,
    ``label_for`` and ``shared_for`` when one class serves two engines) and implement
    :meth:`locate`; embedded ones override :meth:`created` and :meth:`checkup` (their folder
    is writable) — one SQLite file is :class:`SqliteFile` — and a server's store is a
    :class:`backends.stores.server.ServerStore`."""

    #: the engine, as the storage map names it
    ENGINE: ClassVar[str] = ""
    #: the engine, as the doctor names it
    LABEL: ClassVar[str] = ""
    #: the engine's proper name (the sessions row names its L2 by it)
    PRODUCT: ClassVar[str] = ""
    #: True: its data outlives this process (a server); False: in this process or its files
    SHARED: ClassVar[bool] = False

    @classmethod
    def engine_for(cls, config: Config) -> str:
        return cls.ENGINE

    @classmethod
    def label_for(cls, config: Config) -> str:
        return cls.LABEL

    @classmethod
    def shared_for(cls, config: Config) -> bool:
        """Whether its data outlives this process as configured (:attr:`SHARED` unless one
        class serves an in-process engine and a server)."""
        return cls.SHARED

    @classmethod
    def locate(cls, config: Config, **context: object) -> str:
        """Where this store keeps its data, as the storage map shows it."""
        raise NotImplementedError

    @classmethod
    def address(cls, config: Config, **context: object) -> str:
        """Where the doctor says the store is (the storage map's location unless overridden)."""
        return cls.locate(config, **context)

    @classmethod
    def created(cls, config: Config, **context: object) -> bool:
        """False while an embedded store's file or folder does not exist (nothing created)."""
        return True

    @classmethod
    def checkup(cls, config: Config, **context: object) -> Probed:
        """The doctor's probe: raise :class:`CustodiaEnvironmentError` (why) when the store
        cannot be used; nothing to reach for an in-process store."""
        return Probed()

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: object
    ) -> Measurement:
        """What the store holds now: read-only for a file, through ``running`` (the instance
        the service holds) for a store that lives in this process."""
        raise NotImplementedError


class SqliteFile(SelfDescribing):
    """The self-description of a store that is one SQLite file (``context["path"]``): it is
    there once created, usable while its folder is writable, and counted read-only by
    :attr:`COUNT` (a query giving one number)."""

    LABEL: ClassVar[str] = "sqlite"
    PRODUCT: ClassVar[str] = "SQLite"
    #: what :meth:`measure` counts
    COUNT: ClassVar[str] = ""

    @classmethod
    def locate(cls, config: Config, **context: object) -> str:
        return str(context["path"])

    @classmethod
    def created(cls, config: Config, **context: object) -> bool:
        return Path(str(context["path"])).exists()

    @classmethod
    def checkup(cls, config: Config, **context: object) -> Probed:
        return writable_folder(Path(str(context["path"])).parent)

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: object
    ) -> Measurement:
        """The file's :attr:`COUNT` and its size with its -wal and -shm, read-only."""
        return sqlite_count(Path(str(context["path"])), cls.COUNT)


# -- measuring files, read-only ------------------------------------------------------------------


def allocated(stat: os.stat_result) -> int:
    """The bytes a file takes on disk, as ``du`` counts them: sparse files (qdrant-edge maps
    hundreds of MB of them) take only what was written; ``st_size`` where there are no
    blocks to count (Windows)."""
    blocks = getattr(stat, "st_blocks", None)
    return stat.st_size if blocks is None else int(blocks) * 512


def file_size(path: Path) -> int:
    """A file's bytes on disk, with its SQLite ``-wal`` and ``-shm`` companions."""
    total = 0
    for candidate in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with contextlib.suppress(OSError):
            total += allocated(candidate.stat())
    return total


def dir_size(path: Path) -> int:
    """The bytes a folder's files take on disk (``du``, not their apparent sizes)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += allocated((Path(root) / name).lstat())
    return total


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to an existing SQLite file (never creates one)."""
    if not path.exists():
        raise FileNotFoundError(path)
    conn = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0, isolation_level=None
    )
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        yield conn
    finally:
        conn.close()


def scalar(path: Path, sql: str, parameters: tuple[str, ...] = ()) -> int:
    """One number from an existing SQLite file, read-only."""
    with read_only(path) as conn:
        row = conn.execute(sql, parameters).fetchone()
    return int(row[0] or 0) if row else 0


def sqlite_count(path: Path, sql: str, parameters: tuple[str, ...] = ()) -> Measurement:
    """``sql``'s count and the file's size; "not created yet" while the file does not exist."""
    if not path.exists():
        return NOT_CREATED_YET
    return Measurement(scalar(path, sql, parameters), file_size(path))


def writable_folder(path: Path) -> Probed:
    """An embedded store's probe: its folder exists (made when missing) and is writable."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if not os.access(path, os.W_OK):
        raise CustodiaEnvironmentError(
            _("{folder}: the folder is not writable").format(folder=path)
        )
    return Probed()


def running_store(running: Callable[[], T] | None) -> T:
    """The instance the process holds (a store only one process may open, or whose client
    needs the service's embedder); measured from outside the process, there is none."""
    if running is None:
        raise CustodiaEnvironmentError(NEEDS_SERVICES)
    return running()


# -- the data ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    """Where a datum lives now: the engine and location the storage map shows."""

    engine: str
    location: str
    if_lost: str = ""  # appended to the datum's own when the engine changes the answer


def _no_context(config: Config) -> Mapping[str, object]:
    return {}


def _no_files(config: Config) -> Sequence[Path]:
    return ()


@dataclass(frozen=True)
class Datum:
    """One datum kind, declared once by the assistant that owns it (a storage map row).

    ``role`` names the store role holding it ("" : files the assistant keeps itself) and
    ``context`` the role's context (its file); ``place`` says where it lives when that is not
    just the store's description; ``measure`` counts it (read-only, never creating anything),
    given the configuration and the process's services (None: measured from outside).
    ``files`` names the files the assistant's own work reads and writes (the doctor checks
    that each one that exists can be opened for both)."""

    kind: str
    assistant: str
    durability: str
    unit: str
    if_lost: str
    measure: Callable[[Config, Running | None], Measurement]
    role: str = ""
    context: Callable[[Config], Mapping[str, object]] = _no_context
    place: Callable[[Config], Place] | None = None
    note: str = ""
    files: Callable[[Config], Sequence[Path]] = _no_files
