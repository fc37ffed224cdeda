"""Issue 25 items 2 and 7: a log that changes its identity, rows outside the chain, lying columns.

2. The trust store cannot be blinded by the log it guards: a superuser who rewrites the log and
   then changes its ``log_id`` passed ``verify`` (only checkpoints of the current id were held
   to it). 7. Only what the chain covers is shown as the log: a row at ``seq = -1`` passed
   ``verify`` and was listed and exported; generated filter columns replaced by plain ones that
   lie passed ``verify``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from backends.audit import AuditService
from backends.audit.checkpoints import Signer, TrustStore
from backends.audit.verify import (
    CHECKPOINT_MISMATCH,
    IDENTITY_CHANGED,
    SCHEMA_CHANGED,
    UNCHAINED,
    verify_chain,
)
from backends.config import Config
from backends.stores.audit_log import Filter
from backends.stores.audit_log.record import GENESIS, Draft, chain_hash
from backends.stores.audit_log.sqlite import SQLiteAuditLog


def _service(home: Path, n: int = 12) -> AuditService:
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for i in range(n):
        service.append(
            "tutor.turn", "ana" if i % 2 else None, personal={"i": i} if i % 2 else None, i=i
        )
    return service


def _superuser(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    for table in ("audit_log", "audit_meta", "audit_checkpoint", "audit_tree"):
        for verb in ("update", "delete"):
            conn.execute(f"DROP TRIGGER IF EXISTS {table}_no_{verb}")
    return conn


def _rewrite(conn: sqlite3.Connection, from_seq: int) -> None:
    rows = conn.execute("SELECT seq, record, hash FROM audit_log ORDER BY seq").fetchall()
    previous = GENESIS
    for seq, record, hash_ in rows:
        if seq < from_seq:
            previous = hash_
            continue
        if seq == from_seq:
            obj = json.loads(record)
            obj["data"]["forged"] = True
            record = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        previous = chain_hash(previous, record)
        conn.execute(
            "UPDATE audit_log SET record = ?, hash = ? WHERE seq = ?", (record, previous, seq)
        )
    conn.execute("DELETE FROM audit_tree")
    conn.execute("DELETE FROM audit_checkpoint")


def test_a_rewritten_log_that_changed_its_identity_fails_verify(tmp_path: Path) -> None:
    home = tmp_path / "home"
    service = _service(home)
    service.checkpoint()
    service.close()
    conn = _superuser(home / "audit.sqlite3")
    _rewrite(conn, 3)
    conn.execute(
        "UPDATE audit_meta SET value = 'feedfeedfeedfeedfeedfeedfeedfeed' WHERE key = 'log_id'"
    )
    conn.close()
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        for incremental in (False, True):
            result = service.verify(from_checkpoint=incremental)
            assert not result.ok and result.broken is not None
            assert result.broken.reason == IDENTITY_CHANGED, result.line()
            assert "feedfeed" in result.broken.detail
        statuses = service.consistency_report()
        assert statuses and not statuses[0].ok and statuses[0].first_broken
    finally:
        service.close()


def test_a_copy_of_the_chain_under_another_id_is_held_to_its_checkpoints(tmp_path: Path) -> None:
    """A migration's copy (another engine, another id, the same records) is not a changed
    identity: the source's checkpoints pin it, and a rewrite of the copy is still found."""
    home = tmp_path / "home"
    service = _service(home)
    service.checkpoint()
    copy = SQLiteAuditLog(tmp_path / "copy" / "audit.sqlite3")
    service.log.copy_to(copy)
    trust = service.trust
    service.close()
    assert copy.log_id != trust.all()[0].log_id
    assert verify_chain(copy, trust).ok
    copy.close()
    conn = _superuser(tmp_path / "copy" / "audit.sqlite3")
    _rewrite(conn, 5)
    conn.close()
    copy = SQLiteAuditLog(tmp_path / "copy" / "audit.sqlite3")
    try:
        broken = verify_chain(copy, trust).broken
        assert broken is not None and broken.reason == IDENTITY_CHANGED
    finally:
        copy.close()


def test_a_resumed_migration_copy_is_held_to_its_source_not_called_a_changed_identity(
    tmp_path: Path,
) -> None:
    """A migration killed half-way and resumed (test_kill_9_during_migration_quick failed with
    'identity changed'): the half copy holds none of the trusted heads, and the trust store
    also holds an earlier, finished copy's checkpoint. Vouched for by the data dir (the
    journal's link), it is held to the source's checkpoints up to its head; not vouched for,
    it is still a changed identity."""
    home = tmp_path / "home"
    service = _service(home, n=6)
    service.checkpoint()  # the source's checkpoint at seq 6
    for i in range(6):
        service.append("tutor.turn", None, i=100 + i)
    service.checkpoint()  # and at seq 12
    source_id, trust = service.log.log_id, service.trust
    earlier = SQLiteAuditLog(tmp_path / "earlier" / "audit.sqlite3")
    service.log.copy_to(earlier)  # a finished migration, signed, then undone
    head = earlier.head()
    trust.accept(service.signer.sign(earlier.log_id, head.seq, head.hash))
    earlier.close()
    half = SQLiteAuditLog(tmp_path / "half" / "audit.sqlite3")
    service.log.copy_to(half, until=5)  # killed here, below every checkpoint
    try:
        assert half.head().seq == 5
        assert verify_chain(half, trust, copy_of=source_id).ok
        assert verify_chain(half, trust, copy_of=source_id, from_checkpoint=True).ok
        broken = verify_chain(half, trust).broken  # no vouch: the log's word is not taken
        assert broken is not None and broken.reason == IDENTITY_CHANGED
        service.log.copy_to(half, after=5, until=9)  # resumed, killed again
        assert verify_chain(half, trust, copy_of=source_id).ok
    finally:
        half.close()
        service.close()
    conn = _superuser(tmp_path / "half" / "audit.sqlite3")
    _rewrite(conn, 3)
    conn.close()
    half = SQLiteAuditLog(tmp_path / "half" / "audit.sqlite3")
    try:
        broken = verify_chain(half, trust, copy_of=source_id).broken
        assert broken is not None and broken.reason == CHECKPOINT_MISMATCH and broken.seq == 6
    finally:
        half.close()


def test_a_row_outside_the_chain_fails_verify_and_is_never_shown(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _service(home).close()
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    forged = Draft("tutor.turn", "p-0000000000000000", {"forged": True}).record(
        -1, "2020-01-01T00:00:00.000000Z"
    )
    conn.execute("INSERT INTO audit_log(seq, record, hash) VALUES (-1, ?, ?)", (forged, "0" * 64))
    conn.close()
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        result = service.verify()
        assert not result.ok and result.broken is not None
        assert (result.broken.seq, result.broken.reason) == (-1, UNCHAINED)
        assert service.count() == 12 and service.first_seq() == 1
        assert service.page(Filter(), 0, 100)[0].seq == 1
        assert service.count(Filter(pseudonym="p-0000000000000000")) == 0
        rows = [json.loads(line) for line in service_export(service).splitlines()]
        assert len(rows) == 12 and all(r["seq"] >= 1 for r in rows)
    finally:
        service.close()


def service_export(service: AuditService) -> str:
    from backends.audit.service import export_text

    return export_text(service, "jsonl", Filter(event_type="tutor.turn"))


def test_filter_columns_that_lie_fail_verify(tmp_path: Path) -> None:
    """The generated columns replaced by plain ones holding other values."""
    home = tmp_path / "home"
    _service(home).close()
    conn = _superuser(home / "audit.sqlite3")
    conn.executescript(
        """
        CREATE TABLE plain (seq INTEGER PRIMARY KEY, record TEXT NOT NULL, hash TEXT NOT NULL,
                            event_type TEXT, pseudonym TEXT, time TEXT);
        INSERT INTO plain SELECT seq, record, hash, 'other', 'p-nobody', time FROM audit_log;
        DROP TABLE audit_log;
        ALTER TABLE plain RENAME TO audit_log;
        """
    )
    conn.close()
    log = SQLiteAuditLog(home / "audit.sqlite3")
    try:
        broken = verify_chain(log).broken
        assert broken is not None and broken.reason == SCHEMA_CHANGED, broken
        assert "pseudonym" in broken.detail
    finally:
        log.close()


@pytest.mark.parametrize("n", [0, 3])
def test_an_honest_log_has_no_schema_or_identity_finding(tmp_path: Path, n: int) -> None:
    log = SQLiteAuditLog(tmp_path / "audit.sqlite3")
    log.append_many([Draft("test.write", None, {"n": i}) for i in range(n)])
    signer = Signer.load_or_create(tmp_path / "k" / "audit-signing.key")
    trust = TrustStore(tmp_path / "k" / "trust.jsonl", signer.public_key)
    assert verify_chain(log, trust).ok
    log.close()
