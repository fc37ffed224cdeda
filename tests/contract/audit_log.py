"""Contract of the audit-log role (CT1–CT4, CT8): the abstract suite only.

Each implementation runs it from a small fixtures class in ``tests/backends/stores/audit_log/``.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import pytest

from backends.audit.checkpoints import Signer, TrustStore
from backends.audit.pseudonyms import KeyStore
from backends.audit.service import AuditService
from backends.audit.verify import (
    CHECKPOINT_MISMATCH,
    GAP,
    HASH_MISMATCH,
    REORDER,
    TREE_MISMATCH,
    TRUNCATED,
    UNKNOWN_CHECKPOINT,
    verify_chain,
)
from backends.stores.audit_log import AuditLog, Filter, Head, merkle
from backends.stores.audit_log.record import GENESIS, Draft, chain_hash
from tests.backends.audit.writers import open_log, write
from tests.contract import describing

Row = tuple[int, str, str]


class Tamper:
    """Privileged edits below the application. Subclasses give ``rows``, ``delete``, ``insert``."""

    def rows(self) -> list[Row]:
        raise NotImplementedError

    def delete(self, seq: int) -> None:
        raise NotImplementedError

    def insert(self, seq: int, record: str, hash_: str) -> None:
        raise NotImplementedError

    def wipe_tree(self) -> None:
        """Delete every Merkle tree node (the log rebuilds them over whatever it holds)."""
        raise NotImplementedError

    def row(self, seq: int) -> Row:
        return next(r for r in self.rows() if r[0] == seq)

    def set_record(self, seq: int, record: str) -> None:
        _, _, hash_ = self.row(seq)
        self.delete(seq)
        self.insert(seq, record, hash_)

    def swap(self, a: int, b: int) -> None:
        ra, rb = self.row(a), self.row(b)
        self.delete(a)
        self.delete(b)
        self.insert(a, rb[1], rb[2])
        self.insert(b, ra[1], ra[2])

    def truncate_after(self, seq: int) -> None:
        for row in self.rows():
            if row[0] > seq:
                self.delete(row[0])

    def rewrite_from(self, seq: int, edit: Callable[[dict[str, Any]], None]) -> None:
        """Change record ``seq`` and recompute every hash after it: a consistent forged chain."""
        rows = self.rows()
        previous = GENESIS
        for s, record, hash_ in rows:
            if s < seq:
                previous = hash_
                continue
            if s == seq:
                obj = json.loads(record)
                edit(obj)
                record = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            new_hash = chain_hash(previous, record)
            self.delete(s)
            self.insert(s, record, new_hash)
            previous = new_hash

    def insert_forged(self, seq: int) -> None:
        """Make room at ``seq`` (renumbering later rows) and insert a validly chained forgery."""
        rows = self.rows()
        for s, record, hash_ in sorted(rows, reverse=True):
            if s >= seq:
                self.delete(s)
                self.insert(s + 1, record, hash_)
        previous = next(h for s, _, h in rows if s == seq - 1)
        forged = Draft("test.write", None, {"forged": True}).record(seq, "2020-01-01T00:00:00Z")
        self.insert(seq, forged, chain_hash(previous, forged))


class AuditLogContract:
    """Every :class:`AuditLog` implementation passes this suite."""

    @pytest.fixture
    def log_spec(self) -> tuple[str, str, str]:
        """(kind, path or application DSN, schema) — picklable, for writer processes."""
        raise NotImplementedError

    @pytest.fixture
    def tamper(self, log_spec: tuple[str, str, str]) -> Tamper:
        raise NotImplementedError

    @pytest.fixture
    def audit_log(self, log_spec: tuple[str, str, str]) -> Iterator[AuditLog]:
        log = open_log(log_spec)
        yield log
        log.close()

    @pytest.fixture
    def checkpoint_writer(self, audit_log: AuditLog) -> Iterator[AuditLog]:
        """A connection allowed to store checkpoints (Postgres: the maintenance role)."""
        yield audit_log

    @pytest.fixture
    def signer(self, tmp_path: Path) -> Signer:
        return Signer.load_or_create(tmp_path / "keys" / "audit-signing.key")

    @pytest.fixture
    def trust(self, tmp_path: Path, signer: Signer) -> TrustStore:
        return TrustStore(tmp_path / "keys" / "audit-checkpoints.jsonl", signer.public_key)

    @pytest.fixture
    def service(
        self, audit_log: AuditLog, signer: Signer, trust: TrustStore, tmp_path: Path
    ) -> Iterator[AuditService]:
        keys = KeyStore(tmp_path / "keys" / "audit-keys.sqlite3")
        yield AuditService(audit_log, keys, signer, trust, checkpoint_every=0)
        keys.close()

    def fill(self, log: AuditLog, n: int = 20) -> None:
        log.append_many([Draft("test.write", None, {"n": i}) for i in range(1, n + 1)])

    def checkpoint(self, log: AuditLog, signer: Signer, trust: TrustStore, seq: int) -> None:
        entry = log.get(seq)
        assert entry is not None
        trust.accept(signer.sign(log.log_id, seq, entry.hash))

    # -- the Merkle tree beside the chain (CT10) ---------------------------------------------
    def test_the_tree_grows_with_the_log_in_the_same_transaction(self, audit_log: AuditLog) -> None:
        assert audit_log.tree_size() == 0
        assert merkle.root(0, audit_log.tree_nodes) == merkle.EMPTY_ROOT
        entries = audit_log.append_many([Draft("tutor.turn", "p-1", {"q": "¿dolor?"})])
        for batch in (1, 5, 2, 13, 1):
            entries += audit_log.append_many(
                [Draft("test.write", None, {"n": i, "é": "ü"}) for i in range(batch)]
            )
        size = len(entries)
        assert audit_log.tree_size() == size == audit_log.head().seq
        records = [e.record.encode("utf-8") for e in entries]
        for n in range(size + 1):
            assert merkle.root(n, audit_log.tree_nodes) == merkle.reference_root(records[:n])
        top = merkle.reference_root(records)
        for index in range(size):
            path = merkle.inclusion_proof(index, size, audit_log.tree_nodes)
            merkle.verify_inclusion(index, size, merkle.leaf_hash(records[index]), path, top)
        for old in range(size + 1):
            proof = merkle.consistency_proof(old, size, audit_log.tree_nodes)
            merkle.verify_consistency(old, size, merkle.reference_root(records[:old]), top, proof)

    def test_the_tree_follows_concurrent_writers(self, log_spec: tuple[str, str, str]) -> None:
        def run(index: int) -> None:
            log = open_log(log_spec)
            try:
                for i in range(5):
                    log.append_many([Draft("test.write", None, {"w": index, "i": i})])
            finally:
                log.close()

        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        log = open_log(log_spec)
        try:
            records = [r for rows in log.chain(0) for _, r, _ in rows]
            assert log.tree_size() == len(records) == 40
            assert merkle.root(40, log.tree_nodes) == merkle.reference_root(records)
        finally:
            log.close()

    # -- the basics ------------------------------------------------------------------------
    def test_empty_log(self, audit_log: AuditLog) -> None:
        assert audit_log.head() == Head(0, GENESIS)
        assert audit_log.first_seq() is None
        assert audit_log.count() == 0
        assert verify_chain(audit_log).line() == "OK 0 records"

    def test_append_chains_records(self, audit_log: AuditLog) -> None:
        first = audit_log.append_many([Draft("tutor.turn", "p-1", {"q": "¿dolor?"})])[0]
        more = audit_log.append_many([Draft("tutor.turn", None, {"n": i}) for i in range(3)])
        assert [e.seq for e in [first, *more]] == [1, 2, 3, 4]
        assert first.hash == chain_hash(GENESIS, first.record)
        assert more[0].hash == chain_hash(first.hash, more[0].record)
        assert audit_log.head() == Head(4, more[-1].hash)
        stored = audit_log.get(1)
        assert stored is not None
        assert stored.record == first.record and stored.data == {"q": "¿dolor?"}
        assert stored.pseudonym == "p-1" and stored.event_type == "tutor.turn"
        assert json.loads(stored.record)["seq"] == 1
        result = verify_chain(audit_log)
        assert result.ok and result.line() == "OK 4 records"

    def test_filters_pages_and_ranges(self, audit_log: AuditLog) -> None:
        drafts = [
            Draft("tutor.turn" if i % 3 else "tutor.source", f"p-{i % 2}", {"i": i})
            for i in range(30)
        ]
        entries = audit_log.append_many(drafts)
        assert audit_log.count() == 30
        assert audit_log.event_types() == ["tutor.source", "tutor.turn"]
        only = Filter(event_type="tutor.source", pseudonym="p-0")
        expected = [
            e.seq for e in entries if e.event_type == "tutor.source" and e.pseudonym == "p-0"
        ]
        assert audit_log.count(only) == len(expected)
        assert [e.seq for e in audit_log.page(only, 1, 3)] == expected[1:4]
        assert audit_log.count(only, before_seq=expected[2]) == 2
        assert [e.seq for e in audit_log.range(5, 9)] == [5, 6, 7, 8, 9]
        times = [e.time for e in entries]
        window = Filter(since=times[10], until=times[20])
        assert [e.seq for e in audit_log.page(window, 0, 100)] == list(range(11, 21))
        assert audit_log.count(Filter(since="2999-01-01")) == 0

    def test_checkpoints_are_stored(
        self, audit_log: AuditLog, checkpoint_writer: AuditLog, signer: Signer
    ) -> None:
        self.fill(audit_log, 3)
        assert checkpoint_writer.stores_checkpoints
        checkpoint = signer.sign(audit_log.log_id, 3, audit_log.head().hash)
        checkpoint_writer.add_checkpoint(checkpoint)
        checkpoint_writer.add_checkpoint(checkpoint)  # idempotent
        assert audit_log.checkpoints() == [checkpoint]

    # -- the tamper matrix -----------------------------------------------------------------
    def test_changed_field_is_located(self, audit_log: AuditLog, tamper: Tamper) -> None:
        self.fill(audit_log)
        _, record, _ = tamper.row(7)
        tamper.set_record(7, record.replace('"n":7', '"n":70'))
        broken = verify_chain(audit_log).broken
        assert broken is not None and (broken.seq, broken.reason) == (7, HASH_MISMATCH)

    def test_deleted_row_is_located(self, audit_log: AuditLog, tamper: Tamper) -> None:
        self.fill(audit_log)
        tamper.delete(7)
        broken = verify_chain(audit_log).broken
        assert broken is not None and (broken.seq, broken.reason) == (7, GAP)

    def test_inserted_row_is_located(self, audit_log: AuditLog, tamper: Tamper) -> None:
        self.fill(audit_log)
        tamper.insert_forged(7)  # validly chained to seq 6: the link 7 -> 8 breaks
        broken = verify_chain(audit_log).broken
        assert broken is not None and (broken.seq, broken.reason) == (8, REORDER)
        assert "says it is seq 7" in broken.detail

    def test_inserted_row_at_the_end_is_located(self, audit_log: AuditLog, tamper: Tamper) -> None:
        self.fill(audit_log)
        forged = Draft("test.write", None, {"forged": True}).record(21, "2020-01-01T00:00:00Z")
        tamper.insert(21, forged, "f" * 64)
        broken = verify_chain(audit_log).broken
        assert broken is not None and (broken.seq, broken.reason) == (21, HASH_MISMATCH)

    def test_swapped_rows_are_located(self, audit_log: AuditLog, tamper: Tamper) -> None:
        self.fill(audit_log)
        tamper.swap(7, 9)
        broken = verify_chain(audit_log).broken
        assert broken is not None and (broken.seq, broken.reason) == (7, REORDER)

    def test_truncated_tail_is_located(
        self, audit_log: AuditLog, tamper: Tamper, signer: Signer, trust: TrustStore
    ) -> None:
        self.fill(audit_log)
        self.checkpoint(audit_log, signer, trust, 15)
        tamper.truncate_after(12)
        for incremental in (False, True):
            broken = verify_chain(audit_log, trust, from_checkpoint=incremental).broken
            assert broken is not None and (broken.seq, broken.reason) == (13, TRUNCATED)

    def test_rewritten_chain_is_caught_by_the_checkpoint(
        self, audit_log: AuditLog, tamper: Tamper, signer: Signer, trust: TrustStore
    ) -> None:
        self.fill(audit_log)
        self.checkpoint(audit_log, signer, trust, 10)
        self.checkpoint(audit_log, signer, trust, 15)
        tamper.rewrite_from(5, lambda obj: obj["data"].update(n=500))
        stale = verify_chain(audit_log).broken  # the tree left as it was gives it away...
        assert stale is not None and (stale.seq, stale.reason) == (5, TREE_MISMATCH)
        assert "the stored leaf of seq 5" in stale.detail  # every stored node is held
        tamper.wipe_tree()  # ...so a thorough forger rebuilds it over the forgery
        assert audit_log.build_tree() == 20
        assert verify_chain(audit_log).ok  # a bare chain proves nothing against a rewrite...
        full = verify_chain(audit_log, trust).broken  # ...signed checkpoints do
        assert full is not None and (full.seq, full.reason) == (10, CHECKPOINT_MISMATCH)
        incremental = verify_chain(audit_log, trust, from_checkpoint=True).broken
        assert incremental is not None
        assert (incremental.seq, incremental.reason) == (15, CHECKPOINT_MISMATCH)

    def test_forged_checkpoint_in_the_database_is_flagged(
        self,
        audit_log: AuditLog,
        checkpoint_writer: AuditLog,
        trust: TrustStore,
        tmp_path: Path,
    ) -> None:
        self.fill(audit_log)
        stranger = Signer.load_or_create(tmp_path / "stranger.key")
        checkpoint_writer.add_checkpoint(stranger.sign(audit_log.log_id, 12, audit_log.head().hash))
        broken = verify_chain(audit_log, trust).broken
        assert broken is not None and (broken.seq, broken.reason) == (12, UNKNOWN_CHECKPOINT)

    def test_incremental_verification_reads_only_new_records(
        self, audit_log: AuditLog, signer: Signer, trust: TrustStore, tamper: Tamper
    ) -> None:
        self.fill(audit_log, 50)
        self.checkpoint(audit_log, signer, trust, 40)
        result = verify_chain(audit_log, trust, from_checkpoint=True)
        assert result.ok and (result.verified, result.start_seq) == (10, 40)
        assert result.line() == "OK 50 records (10 verified since the checkpoint at seq 40)"
        # damage before the checkpoint is the full verification's job, not the incremental's
        _, record, _ = tamper.row(3)
        tamper.set_record(3, record.replace('"n":3', '"n":33'))
        assert verify_chain(audit_log, trust, from_checkpoint=True).ok
        broken = verify_chain(audit_log, trust).broken
        assert broken is not None and broken.seq == 3

    # -- erasure ---------------------------------------------------------------------------
    def test_erasure_keeps_the_chain_and_shreds_the_person(self, service: AuditService) -> None:
        alice = service.append("tutor.turn", "alice", personal={"name": "Alice", "dx": "flu"})
        bob = service.append("tutor.turn", "bob", personal={"name": "Bob"}, topic="asthma")
        assert service.reveal(alice).personal == {"name": "Alice", "dx": "flu"}
        assert "Alice" not in alice.record and alice.pseudonym and alice.pseudonym in alice.record
        pseudonym = service.forget("alice")
        assert pseudonym == alice.pseudonym
        stored = service.log.get(alice.seq)
        assert stored is not None
        revealed = service.reveal(stored)
        assert (revealed.status, revealed.personal) == ("erased", None)
        assert service.reveal(bob).personal == {"name": "Bob"}
        erased = service.log.page(Filter(event_type="person.erased"), 0, 10)
        assert [e.pseudonym for e in erased] == [pseudonym]
        assert service.verify().line() == "OK 3 records"

    # -- concurrency -----------------------------------------------------------------------
    def test_sixteen_threads_make_one_chain(self, log_spec: tuple[str, str, str]) -> None:
        logs = [open_log(log_spec) for _ in range(16)]
        barrier = threading.Barrier(16)
        seqs: list[int] = []
        lock = threading.Lock()

        def run(index: int) -> None:
            barrier.wait()
            for n in range(12):
                entry = logs[index].append_many([Draft("test.write", None, {"w": index, "n": n})])
                with lock:
                    seqs.append(entry[0].seq)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for log in logs[1:]:
            log.close()
        assert sorted(seqs) == list(range(1, 16 * 12 + 1))
        assert verify_chain(logs[0]).line() == f"OK {16 * 12} records"
        logs[0].close()

    def test_sixteen_processes_make_one_chain(self, log_spec: tuple[str, str, str]) -> None:
        start_at = time.time() + 2.5  # all children are up by then: the appends overlap
        with ProcessPoolExecutor(16, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(write, log_spec, w, 10, start_at) for w in range(16)]
            seqs = sorted(s for f in futures for s in f.result(timeout=60))
        assert seqs == list(range(1, 161))
        log = open_log(log_spec)
        try:
            assert verify_chain(log).line() == "OK 160 records"
        finally:
            log.close()

    # -- copy_to: a migration's copy (the very rows, resumable, never merged) -----------------

    @staticmethod
    def rows_of(log: AuditLog) -> list[tuple[int, bytes, bytes]]:
        return [row for batch in log.chain() for row in batch]

    def test_copy_to_copies_the_very_rows_and_resumes_after_the_target_head(
        self, audit_log: AuditLog, tmp_path: Path
    ) -> None:
        from backends.progress import Progress
        from backends.stores.audit_log.sqlite import SQLiteAuditLog

        source = SQLiteAuditLog(tmp_path / "source.sqlite3")
        back = SQLiteAuditLog(tmp_path / "back.sqlite3")
        try:
            self.fill(source, 30)
            seen: list[int] = []
            progress = Progress()
            # into this implementation: stopped at 10, then resumed where the target ends
            assert source.copy_to(audit_log, progress, until=10, batch=4, copied=seen.append)
            assert seen == [4, 8, 10] and progress.done == 10
            assert audit_log.head().seq == 10
            assert source.copy_to(audit_log, batch=7) == 20
            assert source.copy_to(audit_log) == 0  # finished: nothing twice
            assert self.rows_of(audit_log) == self.rows_of(source)
            assert verify_chain(audit_log).line() == "OK 30 records"
            # out of this implementation (its chain() feeding another log)
            assert audit_log.copy_to(back, batch=8) == 30
            assert self.rows_of(back) == self.rows_of(source)
        finally:
            source.close()
            back.close()

    def test_copy_to_refuses_a_target_that_is_not_its_prefix(
        self, audit_log: AuditLog, tmp_path: Path
    ) -> None:
        from backends.stores.audit_log import NotAPrefix
        from backends.stores.audit_log.sqlite import SQLiteAuditLog

        source = SQLiteAuditLog(tmp_path / "source.sqlite3")
        try:
            self.fill(source, 5)
            self.fill(audit_log, 1)  # a record of another chain
            with pytest.raises(NotAPrefix, match="not a prefix"):
                source.copy_to(audit_log)
            rows = [(1, "x", "y")]
            with pytest.raises(NotAPrefix, match="changed during the copy"):
                audit_log.extend(rows, Head())  # its head is no longer genesis
            assert audit_log.head().seq == 1  # nothing was inserted
        finally:
            source.close()

    def test_copy_to_stops_at_a_link_that_does_not_verify(
        self, audit_log: AuditLog, tmp_path: Path
    ) -> None:
        from backends.stores.audit_log import ChainChanged
        from backends.stores.audit_log.sqlite import SQLiteAuditLog

        path = tmp_path / "source.sqlite3"
        source = SQLiteAuditLog(path)
        try:
            self.fill(source, 12)
            with sqlite3.connect(path) as conn:
                conn.execute("DROP TRIGGER audit_log_no_update")
                conn.execute(
                    "UPDATE audit_log SET record = replace(record, '1', '2') WHERE seq = 9"
                )
            with pytest.raises(ChainChanged, match="seq 9"):
                source.copy_to(audit_log, batch=4)
            assert audit_log.head().seq == 8  # whole batches only, up to the break
        finally:
            source.close()

    def test_group_commit_keeps_one_chain(self, service: AuditService) -> None:
        barrier = threading.Barrier(8)

        def run(index: int) -> None:
            barrier.wait()
            for n in range(25):
                service.append("tutor.turn", f"person-{index}", personal={"n": n}, writer=index)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert service.verify().line() == "OK 200 records"

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself(self, audit_log: AuditLog, tmp_path: Path) -> None:
        cfg = describing.config(tmp_path)
        where = Path(audit_log.location)
        assert describing.measure(audit_log, cfg, path=where).items == 0
        self.fill(audit_log, 3)
        measured = describing.measure(audit_log, cfg, path=where)
        assert measured.items == audit_log.head().seq == audit_log.count() == 3
        describing.check_probe(audit_log, cfg, path=where)


# -- implementations -------------------------------------------------------------------------
