"""Issue 14 item 3: ``forget`` is one recoverable operation.

Each step of the erasure can fail on its own — deleting the key (the key store locked),
chaining the ``person.erased`` record (the log locked), scrubbing old copies (a reader holding
the WAL) — or the process can die between them. Whatever failed, the key is either kept, or
the erasure is pending and a retry (or the next start) finishes it with exactly one record;
never "nothing to forget" with no record. Real SQLite files, real competing connections.
"""

from __future__ import annotations

import base64
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.audit.checkpoints import Signer, TrustStore
from backends.audit.pseudonyms import ErasureError, KeyStore, KeyStoreError
from backends.audit.service import (
    CHECKPOINTS_FILE,
    KEYS_FILE,
    LOG_FILE,
    SIGNING_KEY_FILE,
    AuditService,
)
from backends.cli import main
from backends.config import Config
from backends.stores.audit_log import Filter
from backends.stores.audit_log.sqlite import SQLiteAuditLog

SHORT = 0.2  # busy timeout of the stores under test (the real one is 30 s)


def _open(home: Path) -> AuditService:
    """The service as AuditService.open builds it, with short busy timeouts."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    signer = Signer.load_or_create(home / SIGNING_KEY_FILE)
    return AuditService(
        SQLiteAuditLog(home / LOG_FILE, timeout=SHORT),
        KeyStore(home / KEYS_FILE, timeout=SHORT),
        signer,
        TrustStore(home / CHECKPOINTS_FILE, signer.public_key),
        checkpoint_every=0,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def service(home: Path) -> Iterator[AuditService]:
    svc = _open(home)
    yield svc
    svc.close()


def _needles(service: AuditService, pseudonym: str) -> list[bytes]:
    with sqlite3.connect(service.keys.path) as conn:
        row = conn.execute(
            "SELECT key FROM person_key WHERE pseudonym = ?", (pseudonym,)
        ).fetchone()
    key = bytes(row[0])
    return [key, base64.b64encode(key), key.hex().encode()]


def _key_bytes_left(path: Path, needles: list[bytes]) -> list[str]:
    return [
        p.name
        for p in path.parent.iterdir()
        if p.name.startswith(path.name) and any(n in p.read_bytes() for n in needles)
    ]


def _erasure_records(service: AuditService, pseudonym: str) -> int:
    return len(service.log.page(Filter(pseudonym=pseudonym, event_type="person.erased"), 0, 10))


def _reader(path: Path) -> sqlite3.Connection:
    """Another connection in the middle of a read transaction (a window browsing the store)."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    conn.execute("SELECT count(*) FROM person_key").fetchone()
    return conn


def _writer(path: Path) -> sqlite3.Connection:
    """Another connection holding the write lock."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=SHORT)
    conn.execute("BEGIN IMMEDIATE")
    return conn


def _assert_done(service: AuditService, pseudonym: str, needles: list[bytes], blob: str) -> None:
    assert _erasure_records(service, pseudonym) == 1
    assert service.keys.pending_erasures() == []
    assert service.keys.open(pseudonym, blob) is None and service.keys.is_erased(pseudonym)
    assert _key_bytes_left(service.keys.path, needles) == []
    assert service.verify().ok


def test_a_scrub_blocked_by_a_reader_is_finished_by_the_retry(service: AuditService) -> None:
    """The issue's reproduction: a reader holds the key store longer than the busy timeout;
    forget fails asking to retry; the retry must chain the record (it said "nothing to
    forget" and no ``person.erased`` record was ever written)."""
    entry = service.append("tutor.turn", "carol", personal={"dx": "asma"})
    for i in range(20):  # others, so that the key shares pages with live rows
        service.append("tutor.turn", f"person {i}", personal={"i": i})
    assert entry.pseudonym is not None and entry.sealed is not None
    needles = _needles(service, entry.pseudonym)
    reader = _reader(service.keys.path)
    try:
        with pytest.raises(ErasureError, match="forget` again"):
            service.forget("carol")
    finally:
        reader.close()
    assert service.keys.open(entry.pseudonym, entry.sealed) is None  # the key is unusable
    assert service.keys.pending_erasures() == [entry.pseudonym]
    assert service.forget("carol") == entry.pseudonym
    _assert_done(service, entry.pseudonym, needles, entry.sealed)
    assert service.forget("carol") is None  # now it really is done


def test_a_record_that_cannot_be_chained_is_chained_by_the_retry(service: AuditService) -> None:
    entry = service.append("tutor.turn", "carol", personal={"dx": "asma"})
    assert entry.pseudonym is not None and entry.sealed is not None
    needles = _needles(service, entry.pseudonym)
    writer = _writer(Path(service.log.location))
    try:
        with pytest.raises(ErasureError, match="erasure record could not be written"):
            service.forget("carol")
    finally:
        writer.close()
    assert _erasure_records(service, entry.pseudonym) == 0
    assert service.keys.pending_erasures() == [entry.pseudonym]
    assert service.forget("carol") == entry.pseudonym
    _assert_done(service, entry.pseudonym, needles, entry.sealed)


def test_a_key_that_cannot_be_deleted_is_kept_whole(service: AuditService) -> None:
    entry = service.append("tutor.turn", "carol", personal={"dx": "asma"})
    assert entry.pseudonym is not None and entry.sealed is not None
    needles = _needles(service, entry.pseudonym)
    writer = _writer(service.keys.path)
    try:
        with pytest.raises(KeyStoreError, match="nothing was erased"):
            service.forget("carol")
    finally:
        writer.close()
    assert service.keys.open(entry.pseudonym, entry.sealed) == {"dx": "asma"}
    assert service.keys.pending_erasures() == [] and _erasure_records(service, entry.pseudonym) == 0
    assert service.forget("carol") == entry.pseudonym
    _assert_done(service, entry.pseudonym, needles, entry.sealed)


def test_the_next_start_finishes_a_pending_erasure_and_the_retry_says_done(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service = _open(home)
    entry = service.append("tutor.turn", "carol", personal={"dx": "asma"})
    assert entry.pseudonym is not None and entry.sealed is not None
    needles = _needles(service, entry.pseudonym)
    reader = _reader(service.keys.path)
    try:
        with pytest.raises(ErasureError):
            service.forget("carol")
    finally:
        reader.close()
        service.close()
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    for var in ("CUSTODIA_PROFILE", "CUSTODIA_POSTGRES_DSN"):
        monkeypatch.delenv(var, raising=False)
    assert main(["forget", "carol"]) == 0  # finished when the service opened: not "nothing"
    assert f"forgot {entry.pseudonym}" in capsys.readouterr().out
    again = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        _assert_done(again, entry.pseudonym, needles, entry.sealed)
    finally:
        again.close()


def test_a_crash_between_the_key_and_the_record_is_finished_at_the_next_start(
    home: Path,
) -> None:
    service = _open(home)
    entry = service.append("tutor.turn", "carol", personal={"dx": "asma"})
    assert entry.pseudonym is not None and entry.sealed is not None
    needles = _needles(service, entry.pseudonym)
    assert service.keys.begin_forget("carol") == [entry.pseudonym]  # then the process dies
    service.close()
    again = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        _assert_done(again, entry.pseudonym, needles, entry.sealed)
    finally:
        again.close()


def test_a_person_who_returns_before_the_retry_is_erased_whole(service: AuditService) -> None:
    """The first attempt left an erasure pending; carol came back (a new key) before the
    retry: the retry erases the new key and finishes the old erasure."""
    first = service.append("tutor.turn", "carol", personal={"dx": "asma"})
    reader = _reader(service.keys.path)
    try:
        with pytest.raises(ErasureError):
            service.forget("carol")
    finally:
        reader.close()
    second = service.append("tutor.turn", "carol", personal={"dx": "gripe"})
    assert second.pseudonym != first.pseudonym
    assert service.forget("carol") == second.pseudonym
    for entry in (first, second):
        assert entry.pseudonym is not None
        assert _erasure_records(service, entry.pseudonym) == 1
    assert service.keys.pending_erasures() == []


def test_an_undecodable_name_is_a_clear_error(service: AuditService) -> None:
    """Issue 14 item 6: a name from a command line with a byte that is not UTF-8."""
    from backends.text import InvalidTextError

    with pytest.raises(InvalidTextError, match="0xE9"):
        service.forget("caf\udce9")
    with pytest.raises(InvalidTextError, match="U\\+D800"):
        service.append("tutor.turn", "\ud800", personal={"x": 1})
