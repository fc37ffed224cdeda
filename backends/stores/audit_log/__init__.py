"""The audit log role: one Protocol, two implementations (SQLite embedded, Postgres server).

Every implementation stores, per record, its sequence number, its canonical text and its chain
hash — nothing else is authoritative. ``event_type``, ``pseudonym`` and ``time`` are *derived*
from the record text by the database (generated columns), so they cannot disagree with what
the hash covers; they exist only to index the inspector's filters.

Capabilities are attributes (``kind``, ``stores_checkpoints``), never ``if kind == ...``.

A migration copies one log into another with :meth:`ChainCopy.copy_to` (every implementation
inherits it): the very rows ``(seq, record, hash)``, checked link by link as they are read,
written by the target's :meth:`AuditLog.extend` only while its head is still where the copy
left it — so a copy stopped anywhere resumes after the target's head, never duplicating a
record, and never merges into a log that is not this one's prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import N_, _
from backends.progress import Progress
from backends.stores.audit_log.merkle import NodeId
from backends.stores.audit_log.record import GENESIS, Draft, Entry, chain_hash

if TYPE_CHECKING:
    from backends.stores.audit_log.checkpoint import Checkpoint

#: a copy's target log moved under it (said by each engine's ``extend``)
CHANGED_DURING_COPY = N_(
    "{log}: the log changed during the copy (head seq {head}, expected {expected})"
)


class AuditLogError(StoreUnavailableError):
    """The audit log cannot be used right now (file, server, schema)."""


class AuditPermissionError(AuditLogError):
    """The database refused the operation to this role (e.g. UPDATE as the application)."""


class ChainCopyError(CustodiaEnvironmentError):
    """A copy of the chain that must stop (nothing half-written: each batch is atomic)."""


class NotAPrefix(ChainCopyError):
    """The target log holds records that are not this log's prefix, or its head moved
    while copying (someone else appends): two chains are never merged."""

    def __init__(self, message: str, head: Head, expected: Head) -> None:
        super().__init__(message)
        self.head = head
        self.expected = expected


class ChainChanged(ChainCopyError):
    """This log's chain does not link while it is copied (changed underneath the copy)."""

    def __init__(self, message: str, seq: int) -> None:
        super().__init__(message)
        self.seq = seq


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
        """Smallest sequence number the chain covers (1 unless tampered), None when empty;
        every read, filter and count sees only ``seq >= 1``."""
        ...

    def outside_chain(self) -> int | None:
        """The smallest stored seq below 1 (a row no chain covers), None when there is none."""
        ...

    def schema_problems(self) -> list[str]:
        """What is wrong with the schema reads rely on: the filter columns must be generated
        from the record text (else they can lie about what the hash covers)."""
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

    def extend(self, rows: Sequence[tuple[int, str, str]], after: Head) -> None:
        """Insert another log's verified ``(seq, record, hash)`` rows as they are, in one
        transaction under the log's lock, if its head is still ``after``; otherwise insert
        nothing and raise :class:`NotAPrefix` (a migration's copy, :meth:`ChainCopy.copy_to`)."""
        ...

    def resume_point(self, other: AuditLog) -> int:
        """The seq ``other`` holds of this chain (:meth:`ChainCopy.resume_point`, inherited)."""
        ...

    def copy_to(
        self,
        other: AuditLog,
        progress: Progress | None = None,
        *,
        after: int | None = None,
        until: int | None = None,
        batch: int = ...,
        copied: Callable[[int], None] | None = None,
    ) -> int:
        """This chain's rows into ``other`` (:meth:`ChainCopy.copy_to`, inherited)."""
        ...

    def add_checkpoint(self, checkpoint: Checkpoint) -> None: ...

    # the Merkle tree beside the chain (CT10, :mod:`backends.stores.audit_log.merkle`)
    def tree_size(self) -> int:
        """How many leaves (records, from seq 1) the stored tree covers."""
        ...

    def tree_nodes(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        """Stored complete-subtree hashes, ``(level, index) -> hash`` (missing ones absent)."""
        ...

    def check_unchanged(self) -> None:
        """Raise :class:`AuditLogError` if a read-only view's files changed since it opened
        (what was read may be torn); a no-op where the engine keeps reads consistent."""
        ...

    def tree_range(self, first: int, end: int) -> list[tuple[int, bytes]]:
        """Stored nodes ``(id, hash)`` with ``first <= id < end``, by id (the storage order
        of :func:`~backends.stores.audit_log.merkle.stored_index`): one range read, for a
        verifier holding every stored node to the records (issue 28 review)."""
        ...

    def build_tree(self, progress: Progress | None = None, *, batch: int = ...) -> int:
        """Extend the tree to the head, in resumable batches; how many leaves were added."""
        ...

    def checkpoints(self) -> list[Checkpoint]:
        """Checkpoints stored in the database (not trusted until their signature checks)."""
        ...

    def close(self) -> None: ...


#: the filter columns and what each must be generated from (the record text's key)
GENERATED = {"event_type": "event", "pseudonym": "pseudonym", "time": "time"}


def generated_problems(found: dict[str, tuple[bool, str]]) -> list[str]:
    """``found``: column -> (is generated, its expression); the columns that are not
    :data:`GENERATED` from their key of the record, in the user's language."""
    problems = []
    for column, key in GENERATED.items():
        generated, expression = found.get(column, (False, ""))
        if column not in found:
            problems.append(_("the column {column} is missing").format(column=column))
        elif not generated or f"'{key}'" not in expression.replace("'$.", "'"):
            problems.append(
                _(
                    "the column {column} is not generated from the record's {key!r} (it can "
                    "say anything the hash does not cover)"
                ).format(column=column, key=key)
            )
    return problems


def append(log: AuditLog, draft: Draft) -> Entry:
    """One record (its own transaction)."""
    return log.append_many([draft])[0]


#: rows per transaction of :meth:`ChainCopy.copy_to`
COPY_BATCH = 500
#: the schema a server log lives in unless told otherwise
DEFAULT_SCHEMA = "custodia_audit"


class ChainCopy:
    """``copy_to`` for every :class:`AuditLog` (written against the Protocol: one copy, every
    engine)."""

    def resume_point(self: AuditLog, other: AuditLog) -> int:
        """The seq ``other`` already holds of this chain (0 when empty); :class:`NotAPrefix`
        when it holds anything that is not this log's prefix."""
        head = other.head()
        if head.seq == 0:
            return 0
        mine = self.get(head.seq)
        if mine is None or mine.hash != head.hash:
            raise NotAPrefix(
                _(
                    "{target} already holds {count} records that are not a prefix of {source}"
                ).format(target=other.location, count=head.seq, source=self.location),
                head,
                Head(mine.seq, mine.hash) if mine is not None else Head(),
            )
        return int(head.seq)

    def copy_to(
        self: AuditLog,
        other: AuditLog,
        progress: Progress | None = None,
        *,
        after: int | None = None,
        until: int | None = None,
        batch: int = COPY_BATCH,
        copied: Callable[[int], None] | None = None,
    ) -> int:
        """Copy this chain's records ``after < seq <= until`` into ``other``, the same rows;
        returns how many were copied.

        ``after`` defaults to :meth:`resume_point` (a stopped copy resumes, a finished one
        copies nothing); ``until`` to this log's head. Each batch is one transaction of
        ``other`` and is checked link by link first (:class:`ChainChanged`); ``copied(seq)``
        is called after each committed batch (a journal), before ``progress`` advances.
        Cancellation is checked before each batch.
        """
        progress = progress or Progress()
        start = ChainCopy.resume_point(self, other) if after is None else after
        last = self.head().seq if until is None else until
        previous = GENESIS
        if start:
            entry = self.get(start)
            if entry is None:
                raise ChainChanged(
                    _("{log}: no record {seq} to resume after").format(
                        log=self.location, seq=start
                    ),
                    start,
                )
            previous = entry.hash
        expected, done = start + 1, 0
        rows: list[tuple[int, str, str]] = []
        first_previous = previous

        def flush() -> None:
            nonlocal rows, done
            if not rows:
                return
            progress.check()
            other.extend(rows, Head(rows[0][0] - 1, first_previous))
            if copied is not None:
                copied(rows[-1][0])
            done += len(rows)
            progress.advance(len(rows), f"{rows[-1][0]}/{last}")
            rows = []

        for chunk in self.chain(start, batch=batch, until_seq=last):
            for seq, record_bytes, hash_bytes in chunk:
                record, stored = record_bytes.decode("utf-8"), hash_bytes.decode("ascii")
                # only a chain that links is copied, record by record
                if seq != expected or chain_hash(previous, record) != stored:
                    raise ChainChanged(
                        _("{log}: the chain changed while copying (seq {seq})").format(
                            log=self.location, seq=seq
                        ),
                        seq,
                    )
                if not rows:
                    first_previous = previous
                rows.append((seq, record, stored))
                previous, expected = stored, seq + 1
                if len(rows) >= batch:
                    flush()
        flush()
        return done
