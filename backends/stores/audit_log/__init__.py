"""The audit log role: one Protocol, two implementations (SQLite embedded, Postgres server).

Every implementation stores, per record, its sequence number, its canonical text and its chain
hash — nothing else is authoritative. ``event_type``, ``pseudonym`` and ``time`` are *derived*
from the record text by the database (generated columns), so they cannot disagree with what
the hash covers; they exist only to index the inspector's filters.

Capabilities are attributes (``kind``, ``stores_checkpoints``), never ``if kind == ...``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from backends.errors import StoreUnavailableError
from backends.stores.audit_log.record import GENESIS, Draft, Entry

if TYPE_CHECKING:
    from backends.stores.audit_log.checkpoint import Checkpoint


class AuditLogError(StoreUnavailableError):
    """The audit log cannot be used right now (file, server, schema)."""


class AuditPermissionError(AuditLogError):
    """The database refused the operation to this role (e.g. UPDATE as the application)."""


@dataclass(frozen=True)
class Head:
    """The last record: ``seq`` 0 and :data:`GENESIS` for an empty log."""

    seq: int = 0
    hash: str = GENESIS


@dataclass(frozen=True)
class Filter:
    """What the inspector filters on; empty fields do not filter.

    ``since`` is inclusive and ``until`` exclusive, both as text comparable with record
    times (``2025-01-31`` or ``2025-01-31T12:00:00Z``).
    """

    pseudonym: str = ""
    event_type: str = ""
    since: str = ""
    until: str = ""

    @property
    def empty(self) -> bool:
        return not (self.pseudonym or self.event_type or self.since or self.until)


#: a batch of the chain: ``(seq, record, hash)`` rows, record and hash as UTF-8 bytes (exactly
#: what the chain hash covers: no decoding and re-encoding per record)
ChainBatch = list[tuple[int, bytes, bytes]]


@runtime_checkable
class AuditLog(Protocol):
    """Append-only hash-chained records."""

    #: "sqlite" or "postgres"
    kind: str
    #: True when this connection may add checkpoints to the database's checkpoint table
    stores_checkpoints: bool

    @property
    def log_id(self) -> str:
        """Random id given to this log at creation; checkpoints name it."""
        ...

    @property
    def location(self) -> str:
        """Path or redacted DSN, for messages."""
        ...

    def append_many(self, drafts: Sequence[Draft]) -> list[Entry]:
        """Append in one transaction under the log's lock: read head, insert, commit."""
        ...

    def head(self) -> Head: ...

    def first_seq(self) -> int | None:
        """Smallest stored sequence number (1 unless tampered), None when empty."""
        ...

    def chain(
        self, after_seq: int = 0, *, batch: int = 4096, until_seq: int | None = None
    ) -> Iterator[ChainBatch]:
        """Rows with ``seq > after_seq`` (and ``<= until_seq``) in order, in big batches."""
        ...

    def get(self, seq: int) -> Entry | None: ...

    def range(self, first_seq: int, last_seq: int) -> list[Entry]:
        """Stored records with ``first_seq <= seq <= last_seq`` in order."""
        ...

    def page(self, flt: Filter, offset: int, limit: int) -> list[Entry]:
        """Records matching ``flt`` in sequence order, ``limit`` of them from ``offset``."""
        ...

    def count(self, flt: Filter | None = None, *, before_seq: int | None = None) -> int:
        """How many records match (``seq < before_seq`` too when given)."""
        ...

    def event_types(self) -> list[str]: ...

    def add_checkpoint(self, checkpoint: Checkpoint) -> None: ...

    def checkpoints(self) -> list[Checkpoint]:
        """Checkpoints stored in the database (not trusted until their signature checks)."""
        ...

    def close(self) -> None: ...


def append(log: AuditLog, draft: Draft) -> Entry:
    """One record (its own transaction)."""
    return log.append_many([draft])[0]
