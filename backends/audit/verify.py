"""Verification: walk the chain, check it against trusted checkpoints, name the first break.

Full verification starts at :data:`~backends.stores.audit_log.record.GENESIS`; incremental
verification starts at the latest trusted checkpoint (its record must still hash to the signed
head) and costs only the records appended since. The walk never re-serialises a record: the
stored canonical text is what was hashed, so each record costs one ``sha256`` over
``previous_hash + record`` — done batch-wise with ``map`` over rows fetched 50,000 at a time,
which keeps the per-record cost in C (about 2 s per million records here).

Reasons for a break, in :attr:`Break.reason`:

- ``gap`` — a sequence number is missing (a row was deleted);
- ``reorder`` — the record stored at ``seq`` says it is another sequence number (moved rows);
- ``hash mismatch`` — the record or its hash was changed, or a row was inserted;
- ``checkpoint mismatch`` — the chain is internally consistent but disagrees with a signed
  checkpoint (the chain was rewritten from an earlier point);
- ``truncated`` — the log ends before the latest trusted checkpoint;
- ``unknown checkpoint`` — a checkpoint stored in the database is not signed by the
  trusted key (or is unreadable);
- ``tree mismatch`` — the records are intact but the Merkle tree stored beside them is not
  theirs (its nodes were changed): proofs served from it would not verify;
- ``identity changed`` — the trust store holds checkpoints of this chain under another log id
  (or only of other ids) and the log holds none of their heads: rewritten, then renamed so
  that no checkpoint would be held to it;
- ``outside the chain`` — a row at a seq below 1, which no chain covers (never shown);
- ``schema changed`` — the filter columns are not generated from the record text any more
  (they could say anything the hash does not cover).

The walk also rebuilds the Merkle tree's root from the records (a compact range, no stored
node trusted) and holds it to every checkpoint that signs a root and to the stored tree.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import sha256
from itertools import islice

from backends.audit.checkpoints import Checkpoint, CheckpointRejected, TrustStore
from backends.i18n import N_, _, number
from backends.progress import Progress
from backends.stores.audit_log import AuditLog, ChainBatch, Head, merkle
from backends.stores.audit_log.record import GENESIS, chain_hash, record_seq

GAP = "gap"
REORDER = "reorder"
HASH_MISMATCH = "hash mismatch"
CHECKPOINT_MISMATCH = "checkpoint mismatch"
TRUNCATED = "truncated"
UNKNOWN_CHECKPOINT = "unknown checkpoint"
TREE_MISMATCH = "tree mismatch"
IDENTITY_CHANGED = "identity changed"
UNCHAINED = "outside the chain"
SCHEMA_CHANGED = "schema changed"
#: each reason as the user reads it (the reason itself stays as it is: ``--json``, tests)
REASON_WORDS = {
    GAP: N_("gap"),
    REORDER: N_("reorder"),
    HASH_MISMATCH: N_("hash mismatch"),
    CHECKPOINT_MISMATCH: N_("checkpoint mismatch"),
    TRUNCATED: N_("truncated"),
    UNKNOWN_CHECKPOINT: N_("unknown checkpoint"),
    TREE_MISMATCH: N_("tree mismatch"),
    IDENTITY_CHANGED: N_("identity changed"),
    UNCHAINED: N_("outside the chain"),
    SCHEMA_CHANGED: N_("schema changed"),
}

BATCH = 4096  # rows per fetch: small enough to stay in cache (measured faster than 50k)
_digest = operator.methodcaller("digest")
_record = operator.itemgetter(1)
_hash = operator.itemgetter(2)
_LEAF = b"\x00"


@dataclass(frozen=True)
class Break:
    """The first broken link: ``reason`` (one of the constants above) and ``detail`` in
    English, as ``--json`` and the logs keep them; ``shown``, the detail in the language
    of the user who verified (:func:`broken_at`), read through :meth:`reason_text` and
    :meth:`detail_text`."""

    seq: int
    reason: str
    detail: str
    shown: str = ""

    def reason_text(self) -> str:
        """The reason in the user's language."""
        words = REASON_WORDS.get(self.reason)
        return _(words) if words else self.reason

    def detail_text(self) -> str:
        """The detail in the user's language."""
        return self.shown or self.detail

    def line(self) -> str:
        return _("first broken link at seq {seq}: {reason} — {detail}").format(
            seq=self.seq, reason=self.reason_text(), detail=self.detail_text()
        )


def broken_at(at: int, reason: str, detail: str, /, **values: object) -> Break:
    """A break whose ``detail`` (marked with ``N_``, placeholders filled from ``values``) is
    kept in English and shown in the user's language."""
    return Break(at, reason, detail.format(**values), _(detail).format(**values))


@dataclass(frozen=True)
class VerifyResult:
    ok: bool
    records: int  # records in the log (its head seq)
    verified: int  # records hashed by this run
    start_seq: int  # the walk started after this seq (0: genesis)
    checkpoint: Checkpoint | None  # latest trusted checkpoint used, if any
    broken: Break | None
    seconds: float
    head: Head = field(default_factory=Head)  # the head that was verified up to

    def line(self) -> str:
        """The verdict, in the user's language (``--json`` has the fields)."""
        if self.broken is not None:
            return _("BROKEN {problem}").format(problem=self.broken.line())
        if self.start_seq:
            return _(
                "OK {records} records ({verified} verified since the checkpoint at seq {seq})"
            ).format(
                records=number(self.records), verified=number(self.verified), seq=self.start_seq
            )
        return _("OK {records} records").format(records=number(self.records))


def _first_difference(a: list[bytes], b: list[bytes]) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def _chain_ok(previous: bytes, records: list[bytes], stored: list[bytes]) -> bool:
    """Does every record hash, chained on the stored hash before it, to its stored hash?

    ``sha256(prev_i + record_i)`` for the whole batch through ``map`` (no Python frame per
    record); the raw digests joined are compared once with the stored hex hashes joined and
    decoded — the same test as comparing each ``hexdigest()``, without formatting a million
    hex strings.
    """
    prevs = [previous]
    prevs.extend(islice(stored, len(stored) - 1))
    computed = b"".join(map(_digest, map(sha256, map(operator.add, prevs, records))))
    try:
        expected = bytes.fromhex(b"".join(stored).decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return False  # a stored hash that is not hex: the slow path says which
    return computed == expected and all(len(h) == 64 for h in (stored[0], stored[-1]))


def _hashes(previous: bytes, records: list[bytes], stored: list[bytes]) -> list[bytes]:
    """The slow path, to locate a break: each computed hash as bytes."""
    prevs = [previous]
    prevs.extend(islice(stored, len(stored) - 1))
    return [sha256(p + r).hexdigest().encode("ascii") for p, r in zip(prevs, records, strict=True)]


def _seq_inside(record: bytes) -> int | None:
    return record_seq(record.decode("utf-8", errors="replace"))


def trusted_checkpoints(
    log: AuditLog, trust: TrustStore | None, copy_of: str | None = None
) -> tuple[dict[int, Checkpoint], Break | None]:
    """Checkpoints to hold the chain to: the trust store's and the database's valid ones.

    A database checkpoint not signed by the trusted key is itself a finding
    (``unknown checkpoint``); without a trust store, no checkpoint is trusted. Checkpoints the
    trust store holds for *other* log ids count too when this log holds their latest head (a
    migration's copy: another engine, another id, the same chain); when it holds none of them
    and no checkpoint of its own id is trusted either, its identity changed (issue 25: a
    superuser rewrote the log and renamed it, so that no checkpoint would be held to it).

    ``copy_of`` is the id of the log this one is a copy of, as the data dir itself recorded it
    (a migration's journal names both logs before it copies a record): that log's checkpoints
    up to this log's head pin it as its own, those beyond are not yet copied (a migration
    killed half-way and resumed), and checkpoints of any third id (an earlier, undone copy)
    are not this chain's. The log's word about its identity is never taken (issue 25).
    """
    if trust is None:
        return {}, None
    every = trust.all()
    found: dict[int, Checkpoint] = {c.seq: c for c in every if c.log_id == log.log_id}
    problem: Break | None = None
    if copy_of is not None and copy_of != log.log_id:
        head = log.head().seq
        for checkpoint in every:
            if checkpoint.log_id == copy_of and 0 < checkpoint.seq <= head:
                found.setdefault(checkpoint.seq, checkpoint)
    else:
        others: dict[str, list[Checkpoint]] = {}
        for checkpoint in every:
            if checkpoint.log_id != log.log_id:
                others.setdefault(checkpoint.log_id, []).append(checkpoint)
        if others:
            problem = _other_logs(log, others, found)
    return found, _stored_checkpoints(log, trust, found, problem)


def _other_logs(
    log: AuditLog, others: dict[str, list[Checkpoint]], found: dict[int, Checkpoint]
) -> Break | None:
    """Adds to ``found`` the checkpoints of the other logs this log continues (it holds their
    latest head); an identity change when it continues none and trusts none of its own."""
    head = log.head().seq
    unmatched: list[Checkpoint] = []
    for checkpoints in others.values():
        covered = [c for c in checkpoints if 0 < c.seq <= head]
        entry = log.get(covered[-1].seq) if covered else None
        if covered and entry is not None and entry.hash == covered[-1].head:
            for c in covered:  # this log continues that chain: they pin it too
                found.setdefault(c.seq, c)
        else:
            unmatched.extend(checkpoints)
    if not unmatched or found:
        return None
    first = min(unmatched, key=lambda c: c.seq)
    names = ", ".join(sorted({c.log_id for c in unmatched}))
    return broken_at(
        max(min(first.seq, head), 1) if head else max(first.seq, 1),
        IDENTITY_CHANGED,
        N_(
            "this data dir trusts checkpoints of log {names}, but the log now calls itself "
            "{log_id} and holds none of their heads (first: seq {seq}, signed {time}): it was "
            "rewritten or replaced"
        ),
        names=names,
        log_id=log.log_id,
        seq=first.seq,
        time=first.time,
    )


def _stored_checkpoints(
    log: AuditLog, trust: TrustStore, found: dict[int, Checkpoint], problem: Break | None
) -> Break | None:
    """Adds to ``found`` the database's validly signed checkpoints; the first finding among
    them (an unknown signature, a fork) or ``problem``."""
    for checkpoint in log.checkpoints():
        try:
            checkpoint.check(trust.public_key, log.log_id)
        except CheckpointRejected as err:
            if problem is None or checkpoint.seq < problem.seq:
                problem = Break(max(checkpoint.seq, 0), UNKNOWN_CHECKPOINT, str(err))
            continue
        known = found.get(checkpoint.seq)
        if known is not None and known.head != checkpoint.head:
            problem = broken_at(
                checkpoint.seq,
                UNKNOWN_CHECKPOINT,
                N_("two validly signed checkpoints name different heads (the key signed a fork)"),
            )
            continue
        found[checkpoint.seq] = checkpoint
    return problem


def schema_break(log: AuditLog) -> Break | None:
    """A row no chain covers, or filter columns that are not the record's (issue 25)."""
    outside = log.outside_chain()
    if outside is not None:
        return broken_at(
            outside,
            UNCHAINED,
            N_(
                "a row is stored at seq {seq}, which no chain covers (inserted below the "
                "chain; it is never shown or exported)"
            ),
            seq=outside,
        )
    problems = log.schema_problems()
    if problems:
        return Break(0, SCHEMA_CHANGED, "; ".join(problems))
    return None


def verify_chain(
    log: AuditLog,
    trust: TrustStore | None = None,
    *,
    from_checkpoint: bool = False,
    progress: Progress | None = None,
    batch: int = BATCH,
    pinned: Checkpoint | None = None,
    copy_of: str | None = None,
) -> VerifyResult:
    """Walk the chain (from genesis, or from the latest checkpoint with ``from_checkpoint``).

    ``pinned`` is a checkpoint the verifier holds itself (an exported one, its signature
    already checked), possibly older than the latest trusted one: the chain must still hold
    its head at its seq. It is walked over even with ``from_checkpoint`` (the walk then
    starts at it), since the later checkpoints may be re-signed over a rewrite by whoever
    holds the data dir's key. ``copy_of``: see :func:`trusted_checkpoints`.
    """
    started = time.perf_counter()
    progress = progress or Progress()
    checkpoints, checkpoint_problem = trusted_checkpoints(log, trust, copy_of)
    schema_problem = schema_break(log)
    if schema_problem is not None and (
        checkpoint_problem is None or schema_problem.seq < checkpoint_problem.seq
    ):
        checkpoint_problem = schema_problem
    if pinned is not None:
        checkpoint_problem = _pin(checkpoints, pinned, checkpoint_problem)
    latest = checkpoints[max(checkpoints)] if checkpoints else None
    anchor = pinned if pinned is not None else latest
    head = log.head()

    def result(broken: Break | None, verified: int, start: int) -> VerifyResult:
        if checkpoint_problem is not None and (
            broken is None or checkpoint_problem.seq < broken.seq
        ):
            broken = checkpoint_problem
        return VerifyResult(
            ok=broken is None,
            records=head.seq,
            verified=verified,
            start_seq=start,
            checkpoint=latest,
            broken=broken,
            seconds=time.perf_counter() - started,
            head=head,
        )

    start, previous = 0, GENESIS
    if from_checkpoint and anchor is not None and anchor.seq <= head.seq:
        moved = _anchor_break(log, anchor)
        if moved is not None:
            return result(*moved)
        start, previous = anchor.seq, anchor.head
    progress.start(max(head.seq - start, 0), _("verifying the audit chain"))
    frontier: merkle.CompactRange | None = merkle.CompactRange()
    if start:  # the stored edge of the tree at the anchor, trusted only if it folds to its root
        assert anchor is not None
        frontier, wrong_tree = _stored_frontier(log, anchor)
        if wrong_tree is not None:
            return result(wrong_tree, 0, anchor.seq)
    broken, verified = _walk(
        log, checkpoints, start, previous.encode("ascii"), progress, batch, head.seq, frontier
    )
    if broken is None:
        broken = _tree_root_break(log, head.seq, frontier)
    log.check_unchanged()  # a read-only view whose files moved: no result, not a wrong one
    if broken is None and latest is not None and head.seq < latest.seq:
        broken = broken_at(
            head.seq + 1,
            TRUNCATED,
            N_("the log ends at seq {seq} but the checkpoint signed at {time} covers seq {covers}"),
            seq=head.seq,
            time=latest.time,
            covers=latest.seq,
        )
    return result(broken, verified, start)


def _pin(
    checkpoints: dict[int, Checkpoint], pinned: Checkpoint, problem: Break | None
) -> Break | None:
    """Holds the chain to ``pinned`` too; a finding when the log's own checkpoint at its seq
    names another head (and nothing earlier was found)."""
    known = checkpoints.get(pinned.seq)
    if known is not None and known.head != pinned.head and problem is None:
        problem = broken_at(
            pinned.seq,
            CHECKPOINT_MISMATCH,
            N_(
                "the checkpoint given names another head at seq {seq} than the one stored "
                "with the log (the log was forked or rewritten)"
            ),
            seq=pinned.seq,
        )
    checkpoints[pinned.seq] = pinned
    return problem


def _anchor_break(log: AuditLog, anchor: Checkpoint) -> tuple[Break, int, int] | None:
    """Why the walk cannot start at ``anchor`` (the result's break, verified count and start),
    or None when the checkpointed record is there and still hashes to its head."""
    record = log.get(anchor.seq)
    if record is None:
        return broken_at(anchor.seq, GAP, N_("the checkpointed record is missing")), 0, 0
    before = log.get(anchor.seq - 1) if anchor.seq > 1 else None
    before_hash = before.hash if before is not None else GENESIS
    if record.hash != anchor.head or chain_hash(before_hash, record.record) != record.hash:
        return (
            broken_at(
                anchor.seq,
                CHECKPOINT_MISMATCH,
                N_("the record at seq {seq} no longer matches the checkpoint signed at {time}"),
                seq=anchor.seq,
                time=anchor.time,
            ),
            0,
            anchor.seq,
        )
    return None


def _stored_frontier(
    log: AuditLog, anchor: Checkpoint
) -> tuple[merkle.CompactRange | None, Break | None]:
    """The stored edge of the tree at ``anchor`` (None when the tree is not built so far), or
    a finding when it does not fold to the root the checkpoint signed."""
    try:
        frontier: merkle.CompactRange | None = merkle.CompactRange.stored(
            anchor.seq, log.tree_nodes
        )
    except merkle.TreeIncomplete:
        frontier = None
    if frontier is not None and anchor.root and frontier.root().hex() != anchor.root:
        return frontier, broken_at(
            anchor.seq,
            TREE_MISMATCH,
            N_(
                "the Merkle tree stored beside the log does not have the root the checkpoint "
                "signed at {time}"
            ),
            time=anchor.time,
        )
    return frontier, None


def _tree_root_break(
    log: AuditLog, size: int, frontier: merkle.CompactRange | None
) -> Break | None:
    """A finding when the stored tree's root is not the records' (its nodes were changed)."""
    if (
        frontier is not None
        and log.tree_size() >= size
        and merkle.root(size, log.tree_nodes) != frontier.root()
    ):
        return broken_at(
            size,
            TREE_MISMATCH,
            N_(
                "the Merkle tree stored beside the log is not the records' tree (its nodes "
                "were changed): proofs from it would not verify"
            ),
        )
    return None


def _walk(
    log: AuditLog,
    checkpoints: dict[int, Checkpoint],
    start: int,
    previous: bytes,
    progress: Progress,
    batch: int,
    until_seq: int,
    frontier: merkle.CompactRange | None = None,
) -> tuple[Break | None, int]:
    expected = start + 1
    tree_end = merkle.stored_count(log.tree_size()) if frontier is not None else 0
    verified = 0
    marks = sorted(s for s in checkpoints if s > start)
    for rows in log.chain(start, batch=batch, until_seq=until_seq):
        progress.check()
        n = len(rows)
        records = list(map(_record, rows))
        stored = list(map(_hash, rows))
        problems = [
            *_sequence_breaks(rows, expected),
            *_hash_breaks(rows, records, stored, previous),
            *_inside_breaks(rows, records),
            *_checkpoint_breaks(rows, stored, checkpoints, marks),
        ]
        if frontier is not None and not problems:
            problems.extend(_tree_breaks(log, rows, records, checkpoints, frontier, tree_end))
        if problems:
            found = min(problems, key=lambda b: b.seq)
            return found, verified + max(found.seq - expected, 0)
        verified += n
        expected += n
        previous = stored[-1]
        progress.advance(n)
    return None, verified


def _sequence_breaks(rows: ChainBatch, expected: int) -> list[Break]:
    """1. sequence numbers: unique and ordered, so contiguous iff the ends are right."""
    n = len(rows)
    if rows[0][0] == expected and rows[-1][0] == expected + n - 1:
        return []
    for index, row in enumerate(rows):
        if row[0] != expected + index:
            seq = expected + index
            return [broken_at(seq, GAP, N_("seq {seq} is missing"), seq=seq)]
    return []


def _hash_breaks(
    rows: ChainBatch, records: list[bytes], stored: list[bytes], previous: bytes
) -> list[Break]:
    """2. the hashes, each chained on the stored one before it."""
    if _chain_ok(previous, records, stored):
        return []
    index = _first_difference(_hashes(previous, records, stored), stored)
    seq = rows[index][0]
    inside = _seq_inside(records[index])
    if inside is not None and inside != seq:
        return [_reordered(seq, inside)]
    return [
        broken_at(
            seq,
            HASH_MISMATCH,
            N_(
                "the record at seq {seq} does not hash to its stored hash (changed, inserted "
                "or its predecessor changed)"
            ),
            seq=seq,
        )
    ]


def _reordered(seq: int, inside: int | None) -> Break:
    return broken_at(
        seq, REORDER, N_("the record stored at seq {seq} says it is seq {inside}"),
        seq=seq, inside=inside,
    )  # fmt: skip


def _inside_breaks(rows: ChainBatch, records: list[bytes]) -> list[Break]:
    """3. the sequence numbers written inside the records (ends of each batch)."""
    problems: list[Break] = []
    for index in {0, len(rows) - 1}:
        inside = _seq_inside(records[index])
        seq = rows[index][0]
        if inside != seq:
            problems.append(_reordered(seq, inside))
    return problems


def _checkpoint_breaks(
    rows: ChainBatch, stored: list[bytes], checkpoints: dict[int, Checkpoint], marks: list[int]
) -> list[Break]:
    """4. the signed checkpoints inside this batch (``marks``, those ahead: consumed)."""
    problems: list[Break] = []
    first, last, n = rows[0][0], rows[-1][0], len(rows)
    while marks and marks[0] <= last:
        mark = marks.pop(0)
        index = mark - first
        if 0 <= index < n and rows[index][0] == mark:
            if stored[index] != checkpoints[mark].head.encode("ascii"):
                problems.append(
                    broken_at(
                        mark,
                        CHECKPOINT_MISMATCH,
                        N_(
                            "the chain at seq {seq} differs from the checkpoint signed at "
                            "{time} (rewritten up to here)"
                        ),
                        seq=mark,
                        time=checkpoints[mark].time,
                    )
                )
        else:
            problems.append(
                broken_at(mark, GAP, N_("the checkpointed seq {seq} is missing"), seq=mark)
            )
    return problems


def _tree_breaks(
    log: AuditLog,
    rows: ChainBatch,
    records: list[bytes],
    checkpoints: dict[int, Checkpoint],
    frontier: merkle.CompactRange,
    tree_end: int,
) -> list[Break]:
    """5. the Merkle root of the records, at every checkpoint that signs one, and every node
    the stored tree holds for them (one range read: their ids are consecutive)."""
    problems: list[Break] = []
    first, last = rows[0][0], rows[-1][0]
    leaves = list(map(_digest, map(sha256, map(_LEAF.__add__, records))))
    base = merkle.stored_count(frontier.size)
    made: list[bytes] = []
    done = 0
    for mark in sorted(m for m in checkpoints if first <= m <= last and checkpoints[m].root):
        made += frontier.append_each(leaves[done : mark - first + 1])
        done = mark - first + 1
        if frontier.root().hex() != checkpoints[mark].root:
            problems.append(
                broken_at(
                    mark,
                    CHECKPOINT_MISMATCH,
                    N_(
                        "the Merkle root of the first {count} records differs from the one "
                        "signed at {time}"
                    ),
                    count=mark,
                    time=checkpoints[mark].time,
                )
            )
            break
    made += frontier.append_each(leaves[done:])
    wrong = _stored_tree_break(log, base, made, tree_end)
    if wrong is not None:
        problems.append(wrong)
    return problems


def _stored_tree_break(log: AuditLog, base: int, made: list[bytes], tree_end: int) -> Break | None:
    """The first stored node among ids ``base…`` that is not the one computed from the
    records (``made``, in stored order); nodes of a tree not built that far are not judged."""
    end = min(base + len(made), tree_end)
    if end <= base:
        return None
    stored = log.tree_range(base, end)
    expected = made[: end - base]
    ids_right = len(stored) == len(expected) and stored[0][0] == base and stored[-1][0] == end - 1
    if ids_right and b"".join(h for _, h in stored) == b"".join(expected):
        return None  # ids unique and ordered: right ends and count mean every id is there
    held = dict(stored)
    for offset, computed in enumerate(expected):
        node = base + offset
        if held.get(node) == computed:
            continue
        level, index = merkle.node_at(node)
        low, high = (index << level) + 1, (index + 1) << level
        return _wrong_node(node, level, index, low, high, missing=node not in held)
    return None


def _wrong_node(node: int, level: int, index: int, low: int, high: int, *, missing: bool) -> Break:
    """The finding for a stored tree node that is missing or not the records' own."""
    values = {"node": node, "level": level, "index": index, "low": low, "high": high}
    if level == 0:
        if missing:
            where = N_("the stored leaf of seq {low} (node {node}) is missing")
        else:
            where = N_("the stored leaf of seq {low} (node {node}) is not the one the records give")
    elif missing:
        where = N_(
            "the stored node {node} (level {level}, index {index}, over seqs {low}–{high}) "
            "is missing"
        )
    else:
        where = N_(
            "the stored node {node} (level {level}, index {index}, over seqs {low}–{high}) "
            "is not the one the records give"
        )
    rest = N_(
        "{where}: the Merkle tree stored beside the log is not the records' tree, and proofs "
        "served from it would not verify (the records themselves are intact)"
    )
    return Break(
        high,
        TREE_MISMATCH,
        rest.format(where=where.format(**values)),
        _(rest).format(where=_(where).format(**values)),
    )


def verify_records(records: Iterable[tuple[int, str, str]], previous: str = GENESIS) -> int | None:
    """The first seq whose hash does not chain, for small in-memory lists (tests, exports)."""
    for seq, record, stored in records:
        if chain_hash(previous, record) != stored:
            return seq
        previous = stored
    return None
