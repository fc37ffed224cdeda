"""``custodia ask tutor``, ``custodia kb import`` and ``custodia kb stats``, headless."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from backends import cli
from backends.audit.service import AuditService
from backends.config import Config
from tests.backends.tutor.conftest import write_note


@pytest.fixture
def home(tmp_path: Path, small_kb: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith("CUSTODIA_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "retrieval-only")
    # a few shipped notes instead of the whole corpus, to stay quick
    monkeypatch.setattr("backends.tutor.tutor.shipped_kb_dir", lambda: small_kb)
    return home


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_prints_the_cited_passages_and_is_audited(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "ask", "tutor", "Which test monitors warfarin?", "--user", "ana")
    assert code == 0
    assert out.startswith("[Retrieval-only mode")
    assert "Sources:" in out and " *[1] " in out and "found by: " in out
    assert "kb/notes/" in out
    assert "Audit record #1" in err and "not for clinical decisions" in err
    code, out, _ = run(
        capsys, "ask", "tutor", "What treats anaphylaxis?", "--user", "ana", "--json"
    )
    data = json.loads(out)
    assert data["audit_seq"] == 2 and data["retrieval_only"] and data["passages"]
    assert data["passages"][0]["found_by"][0]["method"] in {"vector", "keyword", "graph"}
    audit = AuditService.open(Config(home=home))
    try:
        assert audit.verify().ok and len(list(audit.entries())) == 2
    finally:
        audit.close()
    assert run(capsys, "ask", "tutor", "Anything?", "--user", "  ")[0] == 2


def test_import_and_stats(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ward"
    write_note(folder, "rota.md", "Ward rota", "Zebrafish rota: warfarin clinic on Mondays.")
    code, out, _ = run(capsys, "kb", "import", str(folder), "--user", "ana")
    assert code == 0 and out.startswith("Imported into ana's notes: 1 added")
    code, out, _ = run(capsys, "kb", "import", str(folder), "--user", "ana")
    assert "0 added, 0 updated, 1 unchanged" in out
    code, out, _ = run(capsys, "kb", "stats")
    assert code == 0 and "user:ana: 1 documents, 1 chunks" in out and "graph (sqlite):" in out
    code, out, _ = run(capsys, "kb", "stats", "--json")
    stats = json.loads(out)
    assert stats["users"] == ["ana"] and stats["vectors"] == stats["chunks"]
    assert stats["graph"]["ok"] and stats["graph"]["relations"] > 0
    code, out, _ = run(capsys, "ask", "tutor", "zebrafish rota", "--user", "bob", "--json")
    assert all(p["scope"] == "shared" for p in json.loads(out)["passages"])
    code, _, err = run(capsys, "kb", "import", str(tmp_path / "missing"))
    assert code == 1 and "no such file or folder" in err
