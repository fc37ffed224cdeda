from __future__ import annotations

import csv
import io
import json
import sqlite3
import stat
from pathlib import Path

import pytest

from backends.audit.checkpoints import CheckpointError
from backends.audit.service import REVEALED_EXPORT, AuditService, ChainBrokenError, export_text
from backends.audit.verify import verify_records
from backends.config import Config
from backends.stores.audit_log import Filter


@pytest.fixture
def service(tmp_path: Path):
    svc = AuditService.open(Config(home=tmp_path / "home"), checkpoint_every=10)
    yield svc
    svc.close()


def _tamper(service: AuditService, seq: int) -> None:
    log_path = Path(service.log.location)
    conn = sqlite3.connect(log_path, isolation_level=None)
    conn.execute("DROP TRIGGER audit_log_no_update")
    conn.execute(
        "UPDATE audit_log SET record = replace(record, '\"n\":', '\"n\":9') WHERE seq = ?", (seq,)
    )
    conn.close()


def test_files_are_private_and_apart(service: AuditService, tmp_path: Path) -> None:
    service.append("tutor.turn", "ana", personal={"name": "Ana"})
    home = tmp_path / "home"
    for name in ("audit.sqlite3", "audit-keys.sqlite3", "audit-signing.key"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(home.stat().st_mode) == 0o700


def test_automatic_checkpoints_follow_the_chain(service: AuditService) -> None:
    for n in range(25):
        service.append("tutor.turn", None, n=n)
    latest = service.trust.latest(service.log.log_id)
    assert latest is not None and latest.seq == 20
    assert [c.seq for c in service.log.checkpoints()] == [10, 20]
    assert service.verify(from_checkpoint=True).line() == (
        "OK 25 records (5 verified since the checkpoint at seq 20)"
    )


def test_no_checkpoint_over_a_broken_chain(service: AuditService) -> None:
    service.checkpoint_every = 0
    for n in range(5):
        service.append("tutor.turn", None, n=n)
    _tamper(service, 3)
    with pytest.raises(ChainBrokenError, match="seq 3"):
        service.checkpoint()


def test_empty_log_has_nothing_to_checkpoint(service: AuditService) -> None:
    with pytest.raises(CheckpointError, match="empty"):
        service.checkpoint()


def test_personal_fields_need_a_person(service: AuditService) -> None:
    with pytest.raises(ValueError):
        service.append("tutor.turn", None, personal={"name": "x"})


def test_exports_are_verifiable_and_hold_no_plaintext(
    service: AuditService, tmp_path: Path
) -> None:
    service.append("tutor.turn", "ana", personal={"name": "Ana Sánchez"}, topic="asma")
    service.append("tutor.turn", "beto", personal={"name": "Beto"})
    service.forget("ana")
    jsonl = export_text(service, "jsonl")
    assert "Ana Sánchez" not in jsonl and "Beto" not in jsonl
    rows = [json.loads(line) for line in jsonl.splitlines()]
    assert [r["status"] for r in rows] == ["erased", "sealed", "erased"]
    assert rows[0]["data"] == {"topic": "asma"}
    assert verify_records((r["seq"], r["record"], r["hash"]) for r in rows) is None
    table = list(csv.DictReader(io.StringIO(export_text(service, "csv"))))
    assert [int(r["seq"]) for r in table] == [1, 2, 3]
    assert table[2]["event"] == "person.erased"
    only = export_text(service, "jsonl", Filter(event_type="person.erased"))
    assert len(only.splitlines()) == 1
    out = tmp_path / "export.csv"
    assert service.export_file(out, "csv") == 3
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


def test_an_authorised_export_reveals_what_was_asked_and_shown_and_is_itself_recorded(
    service: AuditService,
) -> None:
    shown = {"question": "¿Antídoto del paracetamol?", "answer": "acetylcysteine [1]."}
    service.append("tutor.turn", "ana", personal=shown, model="m")
    service.append("tutor.turn", "beto", personal={"question": "Beto's question"})
    service.forget("beto")
    assert "acetylcysteine" not in export_text(service, "jsonl")  # by default: sealed only
    before = len(list(service.entries()))
    buffer = io.StringIO()
    assert service.export(buffer, "jsonl", reveal=True) == before
    rows = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert rows[0]["personal"] == shown  # opened with ana's key
    assert rows[1]["personal"] == ""  # beto's key is shredded: nothing to open
    assert all(r["personal"] == "" for r in rows[2:])
    # the disclosure is chained: who read the fields, how many records, which filter
    last = list(service.entries())[-1]
    assert last.event_type == REVEALED_EXPORT and last.data["records"] == before
    assert service.verify().ok
    table = list(csv.DictReader(io.StringIO(export_text(service, "csv"))))
    assert "personal" not in table[0]
    buffer = io.StringIO()
    service.export(buffer, "csv", Filter(event_type="tutor.turn"), reveal=True)
    revealed = list(csv.DictReader(io.StringIO(buffer.getvalue())))
    assert json.loads(revealed[0]["personal"]) == shown and revealed[1]["personal"] == ""


def test_reveal_statuses(service: AuditService) -> None:
    plain = service.append("tutor.turn", None, n=1)
    named = service.append("tutor.turn", "ana")
    sealed = service.append("tutor.turn", "beto", personal={"x": 1})
    assert service.reveal(plain).status == ""
    assert service.reveal(named).status == ""
    assert service.reveal(sealed).status == "sealed"
    assert service.status(sealed) == "sealed"
    service.forget("beto")
    assert service.status(sealed) == "erased"


def test_verification_can_be_cancelled(service: AuditService) -> None:
    from backends.errors import CancelledError
    from backends.progress import Progress

    service.append("tutor.turn", None, n=1)
    progress = Progress()
    progress.cancel()
    with pytest.raises(CancelledError):
        service.verify(progress=progress)


def test_a_log_without_its_tree_still_checkpoints_and_appends(tmp_path: Path) -> None:
    """Issue 28: a Postgres schema from before the tree (not bootstrapped again) has no tree;
    the automatic checkpoint every N records failed the append that triggered it."""
    service = AuditService.open(Config(home=tmp_path / "home"), checkpoint_every=5)
    try:
        service.log._has_tree = False  # type: ignore[attr-defined]  # as such a schema
        for n in range(12):
            service.append("tutor.turn", None, n=n)
        latest = service.trust.latest(service.log.log_id)
        assert latest is not None and latest.seq == 10 and not latest.note
        assert service.verify().ok
    finally:
        service.close()
