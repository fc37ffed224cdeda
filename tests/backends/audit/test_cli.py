from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from backends.audit.service import AuditService
from backends.cli import main
from backends.config import Config


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    for var in ("CUSTODIA_PROFILE", "CUSTODIA_POSTGRES_DSN"):
        monkeypatch.delenv(var, raising=False)
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(6):
        service.append("tutor.turn", "ana" if n % 2 else "beto", personal={"n": n}, n=n)
    service.close()
    return home


def test_verify_ok(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "verify"]) == 0
    assert capsys.readouterr().out.strip() == "OK 6 records"


def test_verify_names_the_first_broken_seq(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    conn.execute("DROP TRIGGER audit_log_no_delete")
    conn.execute("DELETE FROM audit_log WHERE seq = 4")
    conn.close()
    assert main(["audit", "verify"]) == 1
    out = capsys.readouterr().out
    assert "seq 4" in out and "gap" in out


def test_checkpoint_then_incremental(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exported = tmp_path / "cp.json"
    assert main(["audit", "checkpoint", "--output", str(exported)]) == 0
    assert "checkpoint seq 6" in capsys.readouterr().out
    assert json.loads(exported.read_text())["checkpoint"]["seq"] == 6
    assert main(["audit", "verify", "--from-checkpoint"]) == 0
    assert capsys.readouterr().out.strip() == (
        "OK 6 records (0 verified since the checkpoint at seq 6)"
    )
    assert main(["audit", "verify", "--checkpoint", str(exported)]) == 0


def test_replayed_exported_checkpoint_is_rejected(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "old.json"
    assert main(["audit", "checkpoint", "--output", str(old)]) == 0
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    service.append("tutor.turn", None, n=99)
    service.close()
    assert main(["audit", "checkpoint"]) == 0
    capsys.readouterr()
    assert main(["audit", "verify", "--checkpoint", str(old)]) == 1
    assert "older than the latest trusted" in capsys.readouterr().out


def test_export_formats(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", "export", "--format", "jsonl"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["seq"] == 1
    out = tmp_path / "audit.csv"
    assert main(["audit", "export", "--format", "csv", "--output", str(out)]) == 0
    assert out.read_text().splitlines()[0] == "seq,time,event,pseudonym,status,data,hash,record"


def test_forget(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["forget", "ana"]) == 0
    assert "forgot p-" in capsys.readouterr().out
    assert main(["forget", "ana"]) == 1
    assert main(["audit", "verify"]) == 0
    assert capsys.readouterr().out.strip().endswith("OK 7 records")
    assert main(["audit", "export", "--format", "jsonl", "--event", "person.erased"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
