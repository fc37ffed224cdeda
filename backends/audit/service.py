"""What the clinical tutor (and the CLI, and the inspector) call: one object per audit log.

``append(event_type, person, personal=..., **fields)`` seals ``personal`` with the person's key,
names the person by pseudonym only, and appends. Concurrent appends from threads of one
process are *group-committed*: while one transaction (lock, read head, insert, commit) runs,
the appends that arrive queue up and go into the next transaction together. Each caller
returns only after the transaction holding its record committed (``synchronous=FULL`` on
SQLite, a durable commit on Postgres), so durability is untouched; only the number of
commits — the cost that dominates — goes down.

Every ``checkpoint_every`` records a signed checkpoint is taken, after verifying the records
since the previous one (a checkpoint never vouches for an unverified head).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from backends import stores
from backends.assistants import Needs, StoreOpener
from backends.audit.checkpoints import (
    Checkpoint,
    CheckpointError,
    CheckpointRejected,
    Signer,
    TrustStore,
)
from backends.audit.proofs import InclusionProof
from backends.audit.pseudonyms import ErasureError, PersonKeys, open_key_store
from backends.audit.verify import VerifyResult, verify_chain
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.failures import failed
from backends.i18n import _, ngettext
from backends.progress import Progress
from backends.stores.audit_log import AuditLog, Filter, Head, merkle
from backends.stores.audit_log.record import Draft, Entry

log = logging.getLogger(__name__)

LOG_FILE = "audit.sqlite3"
KEYS_FILE = "audit-keys.sqlite3"
SIGNING_KEY_FILE = "audit-signing.key"
CHECKPOINTS_FILE = "audit-checkpoints.jsonl"
ERASED_EVENT = "person.erased"
EXPORT_FORMATS = ("csv", "jsonl")
#: the event chained when an export holds decrypted personal fields
REVEALED_EXPORT = "audit.export_revealed"
EXPORT_COLUMNS = ("seq", "time", "event", "pseudonym", "status", "data", "hash", "record")


def read_only_dir(home: Path) -> bool:
    """A data dir that must not be written: the folder or its log has no write permission bit
    (as ``chmod -R a-w`` leaves it — the mode, not ``os.access``, since root could write
    anyway), or it is on a read-only mount."""
    for path in (home, home / LOG_FILE):
        try:
            mode = path.stat().st_mode
        except OSError:
            continue
        if not mode & 0o222:
            return True
    try:
        return os.statvfs(home).f_flag & os.ST_RDONLY != 0
    except OSError:
        return False


class ChainBrokenError(CustodiaEnvironmentError):
    """The chain does not verify, so no checkpoint is signed over it."""


@dataclass
class _Slot:
    draft: Draft
    entry: Entry | None = None
    error: BaseException | None = None
    done: bool = False


@dataclass
class _GroupCommit:
    """Leader/follower batching of concurrent appends into one transaction."""

    log: AuditLog
    max_batch: int = 512
    _cv: threading.Condition = field(default_factory=threading.Condition)
    _queue: list[_Slot] = field(default_factory=list)
    _busy: bool = False

    def append(self, draft: Draft) -> Entry:
        with self._cv:
            alone = not self._busy and not self._queue
            if alone:
                self._busy = True
        if alone:  # nobody to batch with (one writer): no slot, no waiting
            try:
                return self.log.append_many([draft])[0]
            finally:
                with self._cv:
                    self._busy = False
                    self._cv.notify_all()
        slot = _Slot(draft)
        with self._cv:
            self._queue.append(slot)
        while True:
            with self._cv:
                while not slot.done and self._busy:
                    self._cv.wait()
                if slot.done:
                    break
                self._busy = True
                batch = self._queue[: self.max_batch]
                del self._queue[: self.max_batch]
            try:
                entries = self.log.append_many([s.draft for s in batch])
                for s, entry in zip(batch, entries, strict=True):
                    s.entry = entry
            except BaseException as err:
                for s in batch:
                    s.error = err
            finally:
                with self._cv:
                    for s in batch:
                        s.done = True
                    self._busy = False
                    self._cv.notify_all()
        if slot.error is not None:
            raise slot.error
        assert slot.entry is not None
        return slot.entry


class ProofUnavailable(CustodiaEnvironmentError):
    """No proof can be made: no such record, no checkpoint, or the log no longer matches it."""


@dataclass(frozen=True)
class CheckpointStatus:
    """A checkpoint and whether the current log is consistent with it."""

    checkpoint: Checkpoint
    ok: bool
    detail: str
    first_broken: bool = False


@dataclass(frozen=True)
class Revealed:
    """A record as the clinician sees it."""

    entry: Entry
    status: str  # "" (no personal fields), "sealed" (readable), "erased", "unreadable"
    personal: dict[str, Any] | None


class AuditService:
    def __init__(
        self,
        log: AuditLog,
        keys: PersonKeys,
        signer: Signer,
        trust: TrustStore,
        *,
        checkpoint_every: int = 1000,
    ) -> None:
        self.log = log
        self.keys = keys
        self.signer = signer
        self.trust = trust
        self.checkpoint_every = checkpoint_every
        self._commit = _GroupCommit(log)
        self._checkpoint_lock = threading.Lock()
        self._last_checkpoint_seq: int | None = None
        #: opened on a copy that must not be written (:meth:`open`)
        self.read_only = False

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        config: Config,
        *,
        open_store: StoreOpener = stores.open,
        read_only: bool | None = None,
        progress: Progress | None = None,
        **kwargs: Any,
    ) -> AuditService:
        """The log the configuration names, with its key store, signing key and trust file.

        ``read_only`` opens a copy (a backup, read-only media) without writing a byte: no
        migration, no tree building, no key created, no erasure finished, the trust file only
        read. Verifying, exporting, proving and reading work; appending does not. By default
        (``None``) a data dir that is not writable (:func:`read_only_dir`) is opened so.
        """
        if read_only is None:
            read_only = config.audit == "sqlite" and read_only_dir(config.home)
        context: dict[str, Any] = {"read_only": True} if read_only else {}
        if progress is not None:  # building the Merkle tree of a log from an earlier release
            context["progress"] = progress
        audit_log: AuditLog = open_store("audit_log", config, path=config.path(LOG_FILE), **context)
        try:
            keys = open_key_store(config.path(KEYS_FILE), audit_log, read_only=read_only)
            if read_only:
                signer = Signer.load(config.path(SIGNING_KEY_FILE))
            else:
                signer = Signer.load_or_create(config.path(SIGNING_KEY_FILE))
        except CustodiaEnvironmentError:
            audit_log.close()
            raise
        trust = TrustStore(config.path(CHECKPOINTS_FILE), signer.public_key, read_only=read_only)
        service = cls(audit_log, keys, signer, trust, **kwargs)
        service.read_only = read_only
        if read_only:
            return service
        try:
            service.finish_erasures()
        except CustodiaEnvironmentError as err:  # the next start or `forget` tries again
            log.warning(_("an interrupted erasure is still pending: %s"), err)
        return service

    def close(self) -> None:
        self.log.close()
        self.keys.close()

    # -- writing ---------------------------------------------------------------------------
    def append(
        self,
        event_type: str,
        person: str | None = None,
        personal: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> Entry:
        """Append one record; ``personal`` is sealed with ``person``'s key (needs a person)."""
        pseudonym: str | None = None
        sealed: str | None = None
        if person:
            if personal:
                pseudonym, sealed = self.keys.seal(person, personal)
            else:
                pseudonym = self.keys.pseudonym(person)
        elif personal:
            raise ValueError("personal fields need a person to seal them for")
        entry = self._commit.append(Draft(event_type, pseudonym, fields, sealed))
        if self.checkpoint_every > 0:
            self._maybe_checkpoint(entry.seq)
        return entry

    def _maybe_checkpoint(self, seq: int) -> None:
        if self._last_checkpoint_seq is None:
            latest = self.trust.latest(self.log.log_id)
            self._last_checkpoint_seq = latest.seq if latest else 0
        if seq - self._last_checkpoint_seq < self.checkpoint_every:
            return
        if not self._checkpoint_lock.acquire(blocking=False):
            return  # another thread is taking it
        try:
            self._last_checkpoint_seq = seq
            self.checkpoint()
        except CheckpointRejected as err:  # another process checkpointed further meanwhile
            log.info("automatic checkpoint skipped: %s", err)
        except ChainBrokenError as err:
            log.error(_("automatic checkpoint refused: %s"), err)
        except CustodiaEnvironmentError as err:  # the record is committed: never fail it now
            log.error(_("automatic checkpoint failed: %s"), err)
        finally:
            self._checkpoint_lock.release()

    def checkpoint(self, progress: Progress | None = None) -> Checkpoint:
        """Verify since the last checkpoint, then sign the head, trust it, store it."""
        result = verify_chain(self.log, self.trust, from_checkpoint=True, progress=progress)
        if not result.ok:
            assert result.broken is not None
            raise ChainBrokenError(
                _("not signing a broken chain: {problem}").format(problem=result.broken.line())
            )
        if result.head.seq == 0:
            raise CheckpointError(_("the audit log is empty: nothing to checkpoint"))
        try:
            root: bytes | None = self.tree_root(result.head.seq)
        except ProofUnavailable as err:  # a schema from before the tree: the JSON form only
            log.warning(_("checkpoint without a Merkle root: %s"), err)
            root = None
        checkpoint = self.signer.sign(self.log.log_id, result.head.seq, result.head.hash, root=root)
        self.trust.accept(checkpoint)
        if self.log.stores_checkpoints:
            self.log.add_checkpoint(checkpoint)
        self._last_checkpoint_seq = checkpoint.seq
        return checkpoint

    # -- the Merkle tree and its proofs (CT10) ------------------------------------------------
    def verifier_key(self) -> str:
        """This log's note verifier key (``<origin>+<key hash>+<base64 key>``): all an
        outsider needs to check its checkpoints and proofs."""
        return self.signer.verifier_key(self.log.log_id)

    def tree_root(self, size: int) -> bytes:
        """The Merkle root of the first ``size`` records (the tree caught up first)."""
        if self.log.tree_size() < size and not self.read_only:
            self.log.build_tree()
        try:
            return merkle.root(size, self.log.tree_nodes)
        except merkle.TreeIncomplete as err:
            raise ProofUnavailable(
                _("the Merkle tree does not cover {size} records: {problem}").format(
                    size=size, problem=err
                )
            ) from None

    def note_checkpoints(self) -> list[Checkpoint]:
        """Every signed-note checkpoint known (trust file and database) that the trusted key
        signed, oldest first, one per seq."""
        found: dict[int, Checkpoint] = {}
        candidates = [*self.trust.all(self.log.log_id), *self.log.checkpoints()]
        for checkpoint in candidates:
            if not checkpoint.note or checkpoint.seq in found:
                continue
            try:
                checkpoint.check(self.trust.public_key, self.log.log_id)
            except CheckpointRejected:
                continue
            found[checkpoint.seq] = checkpoint
        return [found[seq] for seq in sorted(found)]

    def _matches(self, checkpoint: Checkpoint) -> None:
        head = self.log.head().seq
        if checkpoint.seq > head:
            raise ProofUnavailable(
                _(
                    "the checkpoint covers {seq} records, the log holds {head}: it was truncated"
                ).format(seq=checkpoint.seq, head=head)
            )
        if self.tree_root(checkpoint.seq).hex() != checkpoint.root:
            raise ProofUnavailable(
                _(
                    "the log's first {seq} records are not the ones the checkpoint signed at "
                    "{time}: the log was rewritten"
                ).format(seq=checkpoint.seq, time=checkpoint.time)
            )

    def prove(self, seq: int, checkpoint: Checkpoint | None = None) -> InclusionProof:
        """The tlog-proof of record ``seq`` against ``checkpoint`` — by default a new one (on
        a read-only copy: the latest signed checkpoint that covers it)."""
        entry = self.log.get(seq)
        if entry is None:
            raise ProofUnavailable(_("no record {seq} in the log").format(seq=seq))
        if checkpoint is None:
            if self.read_only:
                covering = [c for c in self.note_checkpoints() if c.seq >= seq]
                if not covering:
                    raise ProofUnavailable(
                        _(
                            "no signed checkpoint covers record {seq} in this read-only copy: "
                            "give one with --checkpoint FILE"
                        ).format(seq=seq)
                    )
                checkpoint = covering[-1]
            else:
                checkpoint = self.checkpoint()
        if not checkpoint.note:
            raise ProofUnavailable(
                _(
                    "the checkpoint at seq {seq} is from before the Merkle tree (no root "
                    "signed): prove against a newer one"
                ).format(seq=checkpoint.seq)
            )
        if seq > checkpoint.seq:
            raise ProofUnavailable(
                _("record {seq} is newer than the checkpoint (seq {checkpoint})").format(
                    seq=seq, checkpoint=checkpoint.seq
                )
            )
        self._matches(checkpoint)
        path = merkle.inclusion_proof(seq - 1, checkpoint.seq, self.log.tree_nodes)
        record = entry.record.encode("utf-8")
        merkle.verify_inclusion(  # never hand out a proof that does not verify
            seq - 1, checkpoint.seq, merkle.leaf_hash(record), path, bytes.fromhex(checkpoint.root)
        )
        return InclusionProof(seq - 1, path, checkpoint.note, record)

    def prove_consistency(self, old: Checkpoint, new: Checkpoint) -> list[bytes]:
        """The proof that the tree of ``new`` extends the tree of ``old`` (both must be this
        log's: a log that no longer matches either is reported, not proved)."""
        if not old.note or not new.note:
            raise ProofUnavailable(_("both checkpoints must carry a Merkle root (signed notes)"))
        if old.seq > new.seq:
            raise ProofUnavailable(
                _("--from (seq {old}) is newer than --to (seq {new})").format(
                    old=old.seq, new=new.seq
                )
            )
        self._matches(old)
        self._matches(new)
        proof = merkle.consistency_proof(old.seq, new.seq, self.log.tree_nodes)
        merkle.verify_consistency(
            old.seq, new.seq, bytes.fromhex(old.root), bytes.fromhex(new.root), proof
        )
        return proof

    def consistency_report(self) -> list[CheckpointStatus]:
        """Each known checkpoint (of this log, or of another id this data dir trusts: a copy's
        source, or this log before someone renamed it), oldest first, with whether today's log
        still extends it:
        a consistency proof from it to the current tree that verifies (checkpoints from before
        the tree: the record at its seq still has its hash). ``first_broken`` marks the first
        one the log breaks."""
        head = self.log.head()
        statuses: list[CheckpointStatus] = []
        seen: set[int] = set()
        current_root = self.tree_root(head.seq) if head.seq else merkle.EMPTY_ROOT
        for checkpoint in sorted(
            [*self.note_checkpoints(), *self.trust.all()], key=lambda c: c.seq
        ):
            if checkpoint.seq in seen:
                continue
            seen.add(checkpoint.seq)
            ok, detail = True, ""
            if checkpoint.seq > head.seq:
                ok, detail = False, _("the log ends at {seq}: truncated").format(seq=head.seq)
            elif checkpoint.root:
                try:
                    proof = merkle.consistency_proof(checkpoint.seq, head.seq, self.log.tree_nodes)
                    merkle.verify_consistency(
                        checkpoint.seq,
                        head.seq,
                        bytes.fromhex(checkpoint.root),
                        current_root,
                        proof,
                    )
                    detail = ngettext(
                        "consistency proof of {count} hash verifies",
                        "consistency proof of {count} hashes verifies",
                        len(proof),
                    ).format(count=len(proof))
                except (merkle.ProofError, merkle.TreeIncomplete) as err:
                    ok = False
                    detail = _("rewritten before seq {seq}: {problem}").format(
                        seq=checkpoint.seq, problem=err
                    )
            else:
                entry = self.log.get(checkpoint.seq)
                if entry is None or entry.hash != checkpoint.head:
                    ok = False
                    detail = _("the record at seq {seq} changed").format(seq=checkpoint.seq)
                else:
                    detail = _("head still in the chain (no Merkle root: older checkpoint)")
            statuses.append(CheckpointStatus(checkpoint, ok, detail))
        first = next((s for s in statuses if not s.ok), None)
        return [
            CheckpointStatus(s.checkpoint, s.ok, s.detail, first_broken=s is first)
            for s in statuses
        ]

    def pseudonym_of(self, person: str) -> str | None:
        """The pseudonym of ``person`` for an authorised reviewer's lookup: resolved through
        the key store's salted digest (no name is stored in clear), never created; ``None``
        for a name never seen or erased."""
        name = person.strip()
        return self.keys.pseudonym(name, create=False) if name else None

    def forget(self, person: str) -> str | None:
        """Crypto-shred ``person``: destroy their key, record the erasure; their pseudonym.

        One recoverable operation: the key row is deleted and the erasure marked pending in
        one key-store transaction; then the ``person.erased`` record is chained (unless an
        earlier attempt did), old copies of the key are scrubbed and the mark cleared. A
        failure after the first step leaves the mark, and running it again (or the next start,
        :meth:`finish_erasures`) finishes it — never "nothing to forget" with no record.
        """
        pending = self.keys.begin_forget(person)
        for pseudonym in pending:
            self._finish_erasure(pseudonym)
        return pending[-1] if pending else self.keys.finished_erasure(person)

    def finish_erasures(self) -> list[str]:
        """Finish the erasures an interrupted :meth:`forget` left pending; their pseudonyms."""
        pending = self.keys.pending_erasures()
        for pseudonym in pending:
            self._finish_erasure(pseudonym, remember=True)
        return pending

    def _finish_erasure(self, pseudonym: str, *, remember: bool = False) -> None:
        try:
            recorded = self.log.page(Filter(pseudonym=pseudonym, event_type=ERASED_EVENT), 0, 1)
            if not recorded:
                self._commit.append(Draft(ERASED_EVENT, pseudonym, {}, None))
        except CustodiaEnvironmentError as err:
            raise ErasureError(
                _(
                    "the key of {pseudonym} is destroyed but the erasure record could not be "
                    "written yet ({problem}); the erasure stays pending: run `custodia forget` "
                    "again (or it is finished at the next start)"
                ).format(pseudonym=pseudonym, problem=err)
            ) from err
        self.keys.finish_forget(pseudonym, remember=remember)

    # -- reading ---------------------------------------------------------------------------
    # What the inspector reads, so no caller reaches through the service into its log.
    @property
    def location(self) -> str:
        """Where the log keeps its records (a file, or the server and table), for people."""
        return self.log.location

    def head(self) -> Head:
        """The last record's sequence number and hash (``seq`` 0 for an empty log)."""
        return self.log.head()

    def first_seq(self) -> int | None:
        """The first sequence number kept (``None`` for an empty log)."""
        return self.log.first_seq()

    def count(self, flt: Filter | None = None) -> int:
        """How many records match ``flt`` (all of them without one)."""
        return self.log.count(flt)

    def event_types(self) -> list[str]:
        """The event types recorded so far (for a filter's choices)."""
        return self.log.event_types()

    def entry(self, seq: int) -> Entry | None:
        """The record ``seq`` (``None`` when there is none)."""
        return self.log.get(seq)

    def between(self, first_seq: int, last_seq: int) -> list[Entry]:
        """The records from ``first_seq`` to ``last_seq`` (both included) that exist; a
        missing one (a deleted row) is simply not there."""
        return self.log.range(first_seq, last_seq)

    def page(self, flt: Filter, offset: int, limit: int) -> list[Entry]:
        """Up to ``limit`` records matching ``flt``, after the first ``offset`` of them."""
        return self.log.page(flt, offset, limit)

    def verify(
        self, *, from_checkpoint: bool = False, progress: Progress | None = None
    ) -> VerifyResult:
        return verify_chain(
            self.log, self.trust, from_checkpoint=from_checkpoint, progress=progress
        )

    def reveal(self, entry: Entry) -> Revealed:
        if entry.sealed is None or entry.pseudonym is None:
            return Revealed(entry, "", None)
        personal = self.keys.open(entry.pseudonym, entry.sealed)
        if personal is not None:
            return Revealed(entry, "sealed", personal)
        if self.keys.is_erased(entry.pseudonym):
            return Revealed(entry, "erased", None)
        return Revealed(entry, "unreadable", None)

    def status(self, entry: Entry) -> str:
        """ "erased" for a forgotten person's records, "sealed" with personal fields, else ""."""
        if entry.pseudonym is None:
            return ""
        if self.keys.is_erased(entry.pseudonym):
            return "erased"
        return "sealed" if entry.sealed else ""

    def entries(self, flt: Filter | None = None, *, batch: int = 5_000) -> Iterator[Entry]:
        """Every record (matching ``flt``) in order, fetched in batches."""
        flt = flt or Filter()
        if flt.empty:
            for rows in self.log.chain(0, batch=batch):
                for seq, record, hash_ in rows:
                    yield Entry.parse(seq, record.decode("utf-8"), hash_.decode("ascii"))
            return
        offset = 0
        while True:
            page = self.log.page(flt, offset, batch)
            yield from page
            if len(page) < batch:
                return
            offset += len(page)

    def export(
        self,
        out: IO[str],
        fmt: str,
        flt: Filter | None = None,
        progress: Progress | None = None,
        reveal: bool = False,
    ) -> int:
        """Write the records to ``out`` as CSV or JSON lines; return how many.

        Each row carries the canonical ``record`` text and its ``hash``, so an export can be
        re-verified elsewhere. Personal fields appear only sealed (inside ``record``): an
        export never holds a key or a decrypted personal field — unless ``reveal`` is asked
        for (an authorised reviewer reading what students asked and were shown, CT9). Then a
        ``personal`` column holds each record's opened fields (empty for an erased person: a
        shredded key opens nothing), and the disclosure itself is chained as an
        :data:`REVEALED_EXPORT` record.
        """
        if fmt not in EXPORT_FORMATS:
            raise ValueError(f"export format must be one of {EXPORT_FORMATS}, not {fmt!r}")
        progress = progress or Progress()
        flt = flt or Filter()
        progress.start(self.log.count(flt), _("exporting the audit log"))
        erased: dict[str, bool] = {}
        writer = csv.writer(out) if fmt == "csv" else None
        if writer is not None:
            writer.writerow((*EXPORT_COLUMNS, "personal") if reveal else EXPORT_COLUMNS)
        count = 0
        for entry in self.entries(flt):
            status = ""
            if entry.pseudonym is not None:
                if entry.pseudonym not in erased:
                    erased[entry.pseudonym] = self.keys.is_erased(entry.pseudonym)
                status = "erased" if erased[entry.pseudonym] else ("sealed" if entry.sealed else "")
            row = {
                "seq": entry.seq,
                "time": entry.time,
                "event": entry.event_type,
                "pseudonym": entry.pseudonym or "",
                "status": status,
                "data": entry.data,
                "hash": entry.hash,
                "record": entry.record,
            }
            if reveal:
                row["personal"] = (self.reveal(entry).personal or "") if entry.sealed else ""
            if writer is not None:
                writer.writerow(
                    [
                        json.dumps(v, sort_keys=True, ensure_ascii=False)
                        if k == "data" or (k == "personal" and v != "")
                        else v
                        for k, v in row.items()
                    ]
                )
            else:
                out.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1
            if count % 5_000 == 0:
                progress.advance(5_000)
        progress.advance(count % 5_000)
        if reveal:  # who read what students were told is itself on the record
            self.append(
                REVEALED_EXPORT,
                None,
                records=count,
                format=fmt,
                filter={k: v for k, v in vars(flt).items() if v},
            )
        return count

    def export_file(
        self,
        path: Path,
        fmt: str,
        flt: Filter | None = None,
        progress: Progress | None = None,
        reveal: bool = False,
    ) -> int:
        """:meth:`export` to a new 0600 file (replaced atomically when complete)."""
        tmp = path.with_name(path.name + ".part")
        try:
            fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                count = self.export(fh, fmt, flt, progress, reveal=reveal)
            os.replace(tmp, path)
        except OSError as err:
            raise CustodiaEnvironmentError(
                failed(_("{path}: cannot write the export").format(path=path), err)
            ) from err
        finally:
            if tmp.exists():
                tmp.unlink()
        return count


def export_text(service: AuditService, fmt: str, flt: Filter | None = None) -> str:
    buffer = io.StringIO()
    service.export(buffer, fmt, flt)
    return buffer.getvalue()


def build(needs: Needs) -> AuditService:
    """The audit service of this app (see :mod:`backends.assistants`)."""
    return AuditService.open(needs.config)
