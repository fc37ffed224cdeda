"""Models found where the user keeps them, in the window (issue 30): Tools ▸ Models ▸ Find
models on this computer, and the first-run welcome offering the best fit. A temporary HOME
holds fake LM Studio and Ollama folders with real small GGUF files; nothing is copied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backends import config as config_module
from backends.config import Config
from backends.services import Services
from desktop.models_dialog import FindModelsDialog
from desktop.workers import WorkerPool
from tests.backends.models.gguf_files import write_gguf
from tests.backends.models.test_discovery import ollama_model


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    lmstudio = home / ".lmstudio" / "models" / "someone" / "Tiny-GGUF"
    lmstudio.mkdir(parents=True)
    write_gguf(lmstudio / "Tiny-Chat-Q8_0.gguf", embedding=128)
    ollama_model(home / ".ollama" / "models", "tinyllama", "latest", embedding=256)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "OLLAMA_MODELS", "LLAMA_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


@pytest.fixture
def services(tmp_path: Path) -> Any:
    data = tmp_path / "data"
    data.mkdir()
    services = Services(Config(home=data, embedder="hashing", chat_model="smollm2").validated())
    yield services
    services.close()


def test_find_dialog_offers_the_best_fit_and_uses_it_in_one_click(
    qtbot: Any, user: Path, services: Services
) -> None:
    workers = WorkerPool()
    dialog = FindModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=30_000)
    assert dialog.selected() is not None and dialog.selected().name == "tinyllama:latest"
    assert "best fit" in dialog.table.item(dialog.table.currentRow(), 2).text()
    assert dialog.use_button.isEnabled()
    handle = dialog.use(dialog.found[dialog.table.currentRow()])
    with qtbot.waitSignal(handle.signals.finished, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: "answers with" in dialog.status.text(), timeout=30_000)
    key = "gguf:ollama-tinyllama-latest"
    assert all(services.config.model_for(a) == key for a in ("tutor", "memories"))
    assert config_module.load({}, home=services.config.home).chat_model == key
    assert (services.config.path("models") / "ollama-tinyllama-latest.gguf").is_symlink()
    workers.shutdown()


def test_first_run_welcome_offers_a_model_found_on_this_computer(
    qtbot: Any, user: Path, services: Services, tmp_path: Path
) -> None:
    from desktop.main_window import MainWindow, window_settings
    from desktop.testing.plugin import isolated_qsettings
    from desktop.welcome import SETTINGS_KEY

    with isolated_qsettings(tmp_path / "qsettings"):
        settings = window_settings()
        settings.setValue(SETTINGS_KEY, False)
        window = MainWindow(services, settings=settings)
        qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
        window.show()
        welcome = window.welcome
        assert welcome is not None
        qtbot.waitUntil(lambda: welcome.use_button.isVisible(), timeout=60_000)
        assert "tinyllama:latest" in welcome.offer_text.text()
        assert "from Ollama" in welcome.offer_text.text()
        welcome.use_button.click()
        qtbot.waitUntil(lambda: "answers with" in welcome.offer_text.text(), timeout=60_000)
        assert services.config.model_for("tutor") == "gguf:ollama-tinyllama-latest"
        window.close_now()


def test_find_models_is_in_the_tools_menu(custodia_window: Any) -> None:
    action = custodia_window.find_models_action
    assert action.text() == "&Find models on this computer…"
    assert custodia_window.models_action.objectName() == "action_models"


def test_a_copy_of_the_bundled_model_is_not_offered_as_a_better_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tester, issue 30: with an LM Studio copy of the bundled SmolLM2 the welcome said "A
    better model is already on this computer" — the same 94 MB file under another name."""
    import shutil

    from backends.models import discovery, local
    from backends.models.files import SMOLLM2_GGUF

    home = tmp_path / "user"
    folder = home / ".lmstudio" / "models" / "someone" / "qwen-tiny"
    folder.mkdir(parents=True)
    shutil.copyfile(SMOLLM2_GGUF.locate(), folder / "qwen-tiny-Q4_1.gguf")
    write_gguf(folder / "Tiny-Chat-Q8_0.gguf", embedding=128)
    for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "OLLAMA_MODELS", "LLAMA_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    found = discovery.find(memory=local.machine_memory())
    assert sorted(f.path.name for f in found) == ["Tiny-Chat-Q8_0.gguf", "qwen-tiny-Q4_1.gguf"]
    kept = discovery.not_the_bundled_model(found)
    assert len(kept) == len(found) - 1
    assert all(f.path.name != "qwen-tiny-Q4_1.gguf" for f in kept)
