"""``custodia models list|add|remove|use|find`` (issue 30): the dialog's checks and messages,
headless, with ``--json``. Real tiny GGUF files; a temporary data dir and HOME."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from backends import cli, config
from tests.backends.models.gguf_files import write_gguf


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CUSTODIA_CHAT_MODEL", "CUSTODIA_TUTOR_MODEL", "CUSTODIA_MEMORIES_MODEL"):
        monkeypatch.delenv(name, raising=False)
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("CUSTODIA_HOME", str(data))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("OLLAMA_MODELS", raising=False)
    monkeypatch.delenv("LLAMA_CACHE", raising=False)
    return data


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["models", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_shows_the_bundled_model_and_every_file_by_friendly_name(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "models").mkdir()
    write_gguf(home / "models" / "Tiny-Chat.gguf")
    write_gguf(home / "models" / "Base-Only.gguf", template=None)
    code, out, _err = run(capsys, "list")
    assert code == 0
    assert "SmolLM2-135M-Instruct (bundled)" in out
    assert "Tiny-Chat  ready" in out.replace("   ", "  ") or "Tiny-Chat" in out
    assert "no chat template: cannot chat" in out
    assert "gguf:" not in out  # friendly names, never config keys
    code, out, _err = run(capsys, "list", "--json")
    listed = {m["name"]: m for m in json.loads(out)["models"]}
    assert (
        listed["Tiny-Chat"]["status"] == "ready" and listed["Tiny-Chat"]["key"] == "gguf:Tiny-Chat"
    )
    assert listed["Base-Only"]["reason"].startswith("Tiny Test Model has no chat template")
    assert listed["SmolLM2-135M-Instruct (bundled)"]["bundled"] is True
    assert set(listed["SmolLM2-135M-Instruct (bundled)"]["used_by"]) == {
        "tutor",
        "memories",
        "conversations",
        "multiagent",
    }


def test_add_use_remove_round_trip(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_gguf(tmp_path / "Mine-Q8.gguf", context=8192)
    code, out, err = run(capsys, "add", str(source), "--json")
    assert code == 0, err
    assert json.loads(out)["model"]["name"] == "Mine-Q8"
    assert (home / "models" / "Mine-Q8.gguf").is_file() and source.is_file()

    code, out, err = run(capsys, "use", "Mine-Q8", "--assistant", "tutor")
    assert code == 0, err
    assert "Tutor answers with Mine-Q8 from the next answer." in out
    assert config.load({}, home=home).models == {"tutor": "gguf:Mine-Q8"}

    code, out, err = run(capsys, "remove", "Mine-Q8")  # stdin is not a terminal here
    assert code == 1 and "add --yes" in err
    code, out, err = run(capsys, "remove", "Mine-Q8", "--yes", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["moved"] == ["tutor"] and "bundled model" in result["message"]
    assert not (home / "models" / "Mine-Q8.gguf").exists()
    assert list((home / "models").iterdir()) == []  # no copy left aside by the command
    assert config.load({}, home=home).model_for("tutor") == "smollm2"
    assert source.is_file()


def test_a_linked_model_is_unlinked_not_deleted(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write_gguf(tmp_path / "Linked.gguf")
    assert run(capsys, "add", str(source), "--link")[0] == 0
    assert (home / "models" / "Linked.gguf").is_symlink()
    code, out, _err = run(capsys, "remove", "Linked", "--yes")
    assert code == 0 and "the file itself is where it was" in out
    assert source.is_file() and not (home / "models" / "Linked.gguf").exists()


def test_the_same_refusals_as_the_dialog(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (home / "models").mkdir()
    write_gguf(home / "models" / "Base.gguf", template=None)
    code, _out, err = run(capsys, "use", "Base")
    assert code == 1 and "not chosen — Tiny Test Model has no chat template" in err
    code, _out, err = run(capsys, "use", "nothing-like-it")
    assert code == 1 and "no model of that name" in err and "Base" in err
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 40))
    code, out, _err = run(capsys, "add", str(bad), "--json")
    assert code == 1 and json.loads(out)["ok"] is False
    code, _out, err = run(capsys, "remove", "bundled", "--yes")
    assert code == 1 and "bundled model cannot be removed" in err
    assert config.load({}, home=home).chat_model == "smollm2"
