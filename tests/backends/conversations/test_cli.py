"""Headless: ``custodia ask conversations``, ``custodia conversations ...``, ``reindex``,
``rotate-key``."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from backends import cli
from backends.conversations.cli import NEW_KEY_ENV
from backends.conversations.keys import generate_key, key_id

from .conftest import FIXTURES


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("CUSTODIA_") or name == "CONVERSATIONS_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_list_show_and_continue(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "ask", "conversations", "Where do flamingos sleep?")
    assert code == 0
    assert out.strip() == "Scripted answer to: Where do flamingos sleep? (context passages: 0)"
    cid = err.split("conversation ")[1].split()[0]
    code, out, err = run(capsys, "ask", "conversations", "And eat?", "--conversation", cid)
    assert code == 0 and cid in err
    code, out, _ = run(capsys, "conversations", "list", "--json")
    [row] = json.loads(out)
    assert (row["id"], row["messages"], row["provider"], row["encrypted"]) == (
        cid,
        4,
        "scripted",
        False,
    )
    code, out, _ = run(capsys, "conversations", "show", cid)
    assert "## User" in out and "Where do flamingos sleep?" in out
    code, out, _ = run(capsys, "conversations", "list")
    assert cid in out and "4 msg" in out and "clear" in out


def test_ask_with_another_model(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ask", "conversations", "Flamingos are pink because of carotenoids")
    code, out, err = run(
        capsys, "ask", "conversations", "why are flamingos pink", "--model", "retrieval-only"
    )
    assert code == 0 and out.startswith("[Retrieval-only mode") and "carotenoids" in out
    assert "retrieval-only mode" in err
    code, _, err = run(capsys, "ask", "conversations", "hi", "--model", "nonsense")
    assert code == 1 and "unknown model" in err


def test_import_search_export(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "conversations", "import", str(FIXTURES / "chatgpt_conversations.json")
    )
    assert code == 0 and "imported 2 conversation(s)" in err and "Trip to Lisbon" in out
    code, out, _ = run(capsys, "conversations", "search", "tram Belém", "--json")
    hits = json.loads(out)
    assert hits[0]["name"] == "Trip to Lisbon" and "Belém" in hits[0]["text"]
    target = tmp_path / "all.md"
    code, _, err = run(
        capsys, "conversations", "export", "--format", "markdown", "--output", str(target)
    )
    assert code == 0 and "plaintext" in err
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert "# Sourdough starter help" in target.read_text()
    code, out, _ = run(capsys, "conversations", "export")
    assert len(json.loads(out)["conversations"]) == 2


def test_rename_and_delete(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "ask", "conversations", "short lived")
    cid = err.split("conversation ")[1].split()[0]
    assert run(capsys, "conversations", "rename", cid, "A better name")[0] == 0
    assert "A better name" in run(capsys, "conversations", "list")[1]
    assert run(capsys, "conversations", "delete", cid)[0] == 2  # needs --yes
    assert run(capsys, "conversations", "delete", cid, "--yes")[0] == 0
    assert json.loads(run(capsys, "conversations", "list", "--json")[1]) == []
    code, _, err = run(capsys, "conversations", "show", cid)
    assert code == 1 and "no such conversation" in err


def test_reindex_rebuilds_the_search_index(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ask", "conversations", "index me")
    code, out, _ = run(capsys, "reindex", "conversations")
    assert code == 0 and "2 message(s) indexed" in out


def test_rotate_key(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "ask", "conversations", "encrypt me later")
    code, out, err = run(capsys, "rotate-key", "--generate")
    new = out.strip()
    assert code == 0 and "re-encrypted 1 conversation(s)" in err
    assert "CONVERSATIONS_KEY" in err  # no OS keyring here: the user is told where to put it
    files = list((home / "conversations").glob("*.json"))
    assert json.loads(files[0].read_text())["key_id"] == key_id(new)
    monkeypatch.setenv("CONVERSATIONS_KEY", new)
    newer = generate_key()
    monkeypatch.setenv(NEW_KEY_ENV, newer)
    code, out, err = run(capsys, "rotate-key")
    assert code == 0 and out == "" and "re-encrypted 1" in err
    assert json.loads(files[0].read_text())["key_id"] == key_id(newer)
    monkeypatch.setenv(NEW_KEY_ENV, "not a key")
    code, _, err = run(capsys, "rotate-key")
    assert code == 1 and "not a Fernet key" in err
