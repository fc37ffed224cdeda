"""Models found where the user keeps them (issue 30): LM Studio's, Jan's, GPT4All's,
llama.cpp's and Ollama's folders, under a temporary HOME, holding real small GGUF files.
Ollama's blobs are named by digest; its manifests name them. Nothing is copied."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from backends import cli, config
from backends.config import Config
from backends.models import discovery, local
from tests.backends.models.gguf_files import write_gguf

PLENTY = local.Memory(total=16 << 30, available=8 << 30)


def ollama_model(root: Path, name: str, tag: str, *, embedding: int = 64) -> Path:
    """Ollama's layout: a blob named by its digest, and a manifest naming it."""
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    staged = write_gguf(blobs / "staged", name=name, embedding=embedding)
    digest = hashlib.sha256(staged.read_bytes()).hexdigest()
    blob = blobs / f"sha256-{digest}"
    staged.rename(blob)
    manifest = root / "manifests" / "registry.ollama.ai" / "library" / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    layers = [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "0" * 64},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}"},
    ]
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": layers}))
    return blob


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    lmstudio = home / ".lmstudio" / "models" / "someone" / "Tiny-GGUF"
    lmstudio.mkdir(parents=True)
    write_gguf(lmstudio / "Tiny-Chat-Q8_0.gguf", embedding=128)
    write_gguf(lmstudio / "Tiny-Base.gguf", template=None, embedding=512)  # cannot chat
    jan = home / ".local" / "share" / "Jan" / "data" / "models" / "jan-tiny"
    jan.mkdir(parents=True)
    write_gguf(jan / "model.gguf", embedding=32)
    gpt4all = home / ".local" / "share" / "nomic.ai" / "GPT4All"
    gpt4all.mkdir(parents=True)
    write_gguf(gpt4all / "gpt4all-tiny.gguf", embedding=16)
    ollama_model(home / ".ollama" / "models", "tinyllama", "latest", embedding=256)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "OLLAMA_MODELS", "LLAMA_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_every_app_folder_is_searched_and_ollama_blobs_are_named(user: Path) -> None:
    found = {f.name: f for f in discovery.find(memory=PLENTY, home=user)}
    assert set(found) == {
        "Tiny-Chat-Q8_0",
        "Tiny-Base",
        "jan-tiny",
        "gpt4all-tiny",
        "tinyllama:latest",
    }
    assert {f.app for f in found.values()} == {"LM Studio", "Jan", "GPT4All", "Ollama"}
    ollama = found["tinyllama:latest"]
    assert (
        ollama.path.name.startswith("sha256-")
        and ollama.link_name == "ollama-tinyllama-latest.gguf"
    )
    assert ollama.ready and ollama.info is not None and ollama.info.name == "tinyllama"
    assert not found["Tiny-Base"].ready and "no chat template" in found["Tiny-Base"].reason


def test_the_best_fit_is_the_largest_that_can_chat_and_fits(user: Path) -> None:
    found = discovery.find(memory=PLENTY, home=user)
    best = discovery.best_fits(found, PLENTY)
    assert {f.name for f in best.values()} == {
        "tinyllama:latest"
    }  # Tiny-Base is larger: no template
    assert set(best) == {"tutor", "memories", "conversations", "multiagent"}
    assert discovery.best_fits(found, local.Memory(total=1 << 20, available=1 << 10)) == {}


def test_adopting_links_and_chooses_without_copying(user: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    cfg = Config(home=data)
    found = discovery.find(memory=PLENTY, home=user)
    item = discovery.pick(found, "tinyllama:latest")
    saved = discovery.adopt(cfg, item, PLENTY)
    link = data / "models" / "ollama-tinyllama-latest.gguf"
    assert link.is_symlink() and link.resolve() == item.path.resolve()
    assert saved.chat_model == "gguf:ollama-tinyllama-latest"
    assert config.load({}, home=data).model_for("tutor") == "gguf:ollama-tinyllama-latest"
    assert discovery.link(cfg, item) == link  # linked once


def test_custodia_models_find(
    user: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("CUSTODIA_HOME", str(data))
    monkeypatch.delenv("CUSTODIA_CHAT_MODEL", raising=False)
    assert cli.main(["models", "find", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert len(listed["found"]) == 5
    assert cli.main(["models", "find", "--link", "Tiny-Chat-Q8_0"]) == 0
    assert "nothing was copied" in capsys.readouterr().out
    assert (data / "models" / "Tiny-Chat-Q8_0.gguf").is_symlink()


def test_hostile_manifests_are_skipped(user: Path) -> None:
    manifests = user / ".ollama" / "models" / "manifests" / "registry.ollama.ai" / "library"
    (manifests / "odd").mkdir()
    (manifests / "odd" / "a").write_text("{not json")
    (manifests / "odd" / "b").write_text(
        json.dumps(
            {
                "layers": [
                    {
                        "mediaType": "application/vnd.ollama.image.model",
                        "digest": "sha256:../../etc/passwd",
                    }
                ]
            }
        )
    )
    (manifests / "odd" / "c").write_text(json.dumps([1, 2]))
    names = {f.name for f in discovery.find(memory=PLENTY, home=user)}
    assert not any(n.startswith("odd") for n in names)
