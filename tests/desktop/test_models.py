"""Bring your own model in the window: Tools ▸ Models…, the picker in each chat tab, the
Settings page per assistant, the status bar. Real GGUF files (the bundled SmolLM2 linked into
the models folder, tiny ones written by the ``gguf`` writer)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import QObject
from PySide6.QtWidgets import QComboBox, QLabel, QTabWidget

from backends import config as config_module
from backends.config import Config
from backends.models import local
from backends.models.files import SMOLLM2_GGUF
from backends.services import Services
from desktop.dialogs import SettingsDialog
from desktop.model_picker import ModelPicker
from desktop.models_dialog import COLUMNS, ModelsDialog
from desktop.workers import WorkerPool
from tests.backends.models.gguf_files import truncate, write_gguf

T = TypeVar("T", bound=QObject)


def child(parent: QObject, kind: type[T], name: str) -> T:
    found = parent.findChild(kind, name)
    assert found is not None, name
    return found


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    write_gguf(home / "models" / "tiny-chat.gguf", name="Tiny Chat")
    write_gguf(home / "models" / "tiny-base.gguf", name="Tiny Base", template=None)
    truncate(write_gguf(home / "models" / "cut.gguf"), -50)
    return home


@pytest.fixture
def services(home: Path) -> Any:
    services = Services(Config(home=home, embedder="hashing", chat_model="scripted").validated())
    yield services
    services.close()


@pytest.fixture
def workers(qtbot: Any) -> Any:
    pool = WorkerPool()
    yield pool
    pool.shutdown()


def _rows(dialog: ModelsDialog) -> dict[str, dict[str, str]]:
    """File name -> {column title: text}."""
    table: Any = dialog.table
    return {
        table.item(r, COLUMNS.index("File")).text(): {
            COLUMNS[c]: table.item(r, c).text() for c in range(table.columnCount())
        }
        for r in range(table.rowCount())
    }


def test_models_dialog_lists_each_file_with_its_header(
    qtbot: Any, services: Services, workers: WorkerPool
) -> None:
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    rows = _rows(dialog)
    chat = rows["tiny-chat.gguf"]
    assert (chat["Model"], chat["Architecture"], chat["Quantisation"]) == (
        "tiny-chat",
        "llama",
        "F16",
    )
    assert (chat["Context"], chat["Chat template"], chat["Status"]) == ("4096", "yes", "ready")
    assert chat["Parameters"] == "2.1K" and chat["Size"] == "8 KB"
    assert chat["Memory needed"].endswith("at 2048 tokens")
    base = rows["tiny-base.gguf"]
    assert base["Chat template"] == "no" and "cannot chat" in base["Status"]
    assert "truncated" in rows["cut.gguf"]["Status"]
    folders = child(dialog, QLabel, "models_folders").text()
    assert str(services.config.path("models")) in folders and "memory available" in folders


def test_a_file_too_large_for_the_memory_says_so_in_the_list(
    qtbot: Any, home: Path, workers: WorkerPool
) -> None:
    cfg = Config(home=home, embedder="hashing", chat_model="scripted").validated()
    tight = Services(cfg, memory=lambda: local.Memory(total=64 << 20, available=1 << 20))
    dialog = ModelsDialog(tight, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    assert _rows(dialog)["tiny-chat.gguf"]["Status"].startswith("too large: needs")
    tight.close()


def test_add_model_file_copies_with_progress_then_lists_it(
    qtbot: Any, services: Services, workers: WorkerPool, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setattr(local, "COPY_BLOCK", 1024)
    source = write_gguf(tmp_path / "Downloaded-Instruct.Q4_K_M.gguf", name="Downloaded")
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    seen: list[int] = []
    handle = dialog.add_file(source)
    handle.signals.progress.connect(lambda done, total, message: seen.append(done))
    with qtbot.waitSignal(handle.signals.finished, timeout=10_000):
        pass
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 5, timeout=10_000)
    assert seen and seen[-1] == 9
    assert (services.config.path("models") / source.name).read_bytes() == source.read_bytes()
    assert "Added Downloaded-Instruct.Q4_K_M." in dialog.status.text()
    assert not dialog.progress_bar.isVisible() and dialog.add_file_button.isEnabled()


def test_a_file_that_is_not_a_gguf_is_not_added(
    qtbot: Any, services: Services, workers: WorkerPool, tmp_path: Path
) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_text("<html>404</html>")
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    handle = dialog.add_file(fake)
    with qtbot.waitSignal(handle.signals.finished, timeout=10_000):
        pass
    assert "Not added" in dialog.status.text() and "not a GGUF" in dialog.status.text()
    assert not (services.config.path("models") / "model.gguf").exists()


def test_add_folder_lists_its_files_and_saves_it(
    qtbot: Any, services: Services, workers: WorkerPool, tmp_path: Path
) -> None:
    extra = tmp_path / "llms"
    extra.mkdir()
    write_gguf(extra / "elsewhere.gguf")
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    dialog.add_folder(extra)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 5, timeout=10_000)
    assert services.config.model_folders == (str(extra),)
    saved = tomllib.loads(services.config.path("custodia.toml").read_text())
    assert saved["model_folders"] == [str(extra)]


def test_picker_offers_files_not_the_test_model_and_switches_the_next_answer(
    qtbot: Any, services: Services, workers: WorkerPool
) -> None:
    picker = ModelPicker(services.model_choices("tutor"), workers)
    qtbot.addWidget(picker)
    combo = child(picker, QComboBox, "tutor_model_picker")
    qtbot.waitUntil(lambda: combo.findData("gguf:tiny-chat") >= 0, timeout=10_000)
    keys = [combo.itemData(i) for i in range(combo.count())]
    assert keys[:2] == ["smollm2", "retrieval-only"]
    assert keys.count("scripted") == 1 and combo.currentData() == "scripted"  # in use: shown
    assert combo.itemText(keys.index("gguf:tiny-base")) == "tiny-base"  # its friendly name
    items: Any = combo.model()
    assert not items.item(keys.index("gguf:tiny-base")).isEnabled()  # cannot chat
    with qtbot.waitSignal(picker.model_loaded, timeout=10_000) as loaded:
        picker.choose("retrieval-only")
    assert loaded.args[0] == "tutor" and loaded.args[1] == "Retrieval-only (no generation)"
    assert services.chat_for("tutor").retrieval_only  # the next answer
    assert services.chat_for("memories").name == "scripted"
    saved = config_module.load({}, home=services.config.home)
    assert saved.models == {"tutor": "retrieval-only"}


def test_picker_a_broken_file_leaves_retrieval_only_with_the_reason(
    qtbot: Any, services: Services, workers: WorkerPool
) -> None:
    picker = ModelPicker(services.model_choices("memories"), workers)
    qtbot.addWidget(picker)
    with qtbot.waitSignal(picker.model_loaded, timeout=10_000) as loaded:
        picker.choose("gguf:cut")
    assert loaded.args[1] == "Retrieval-only (no generation)" and "truncated" in loaded.args[2]
    state = child(picker, QLabel, "memories_model_state")
    assert state.text().startswith("retrieval-only — the file is truncated")
    assert services.chat_for("memories").retrieval_only


def test_picker_follows_the_environment(
    qtbot: Any, services: Services, workers: WorkerPool, monkeypatch: Any
) -> None:
    monkeypatch.setenv("CUSTODIA_TUTOR_MODEL", "scripted")
    picker = ModelPicker(services.model_choices("tutor"), workers)
    qtbot.addWidget(picker)
    assert not picker.combo.isEnabled() and "CUSTODIA_TUTOR_MODEL" in picker.combo.toolTip()


def test_settings_edit_a_model_and_settings_per_assistant(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "information", lambda *a, **k: QMessageBox.StandardButton.Ok)
    cfg = Config(home=tmp_path, embedder="hashing", chat_model="smollm2").validated()
    dialog = SettingsDialog(cfg)
    qtbot.addWidget(dialog)
    chat = child(dialog, QComboBox, "chat_model")
    assert "scripted" not in [chat.itemText(i) for i in range(chat.count())]
    child(dialog, QComboBox, "models_tutor").setCurrentText("gguf:phi-3.5-mini")
    fields: Any = dialog.model_fields
    assert fields["generation.tutor.temperature"].value() == pytest.approx(0.1)
    fields["generation.tutor.temperature"].setValue(0.3)
    fields["generation.tutor.max_tokens"].setValue(200)
    fields["generation.memories.system_prompt"].setPlainText("Be brief.")
    dialog._on_accepted()
    assert dialog.saved is not None, dialog.error_label.text()
    saved = tomllib.loads((tmp_path / "custodia.toml").read_text())
    assert saved["models"] == {"tutor": "gguf:phi-3.5-mini"}
    assert saved["generation"] == {
        "tutor": {"temperature": 0.3, "max_tokens": 200},
        "memories": {"system_prompt": "Be brief."},
    }


def test_settings_a_bad_model_key_is_named_and_focused(qtbot: Any, tmp_path: Path) -> None:
    dialog = SettingsDialog(Config(home=tmp_path).validated())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.assistant_tabs.setCurrentIndex(0)
    child(dialog, QComboBox, "models_multiagent").setCurrentText("gpt-9")
    dialog._on_accepted()
    assert dialog.saved is None
    assert "models.multiagent" in dialog.error_label.text()
    assert dialog.assistant_tabs.tabText(dialog.assistant_tabs.currentIndex()) == "Multi-agent"
    assert not (tmp_path / "custodia.toml").exists()


@pytest.mark.model
def test_window_status_bar_and_pickers_show_each_tabs_model(qtbot: Any, tmp_path: Path) -> None:
    try:
        smollm2 = SMOLLM2_GGUF.verified()
        import llama_cpp  # noqa: F401
    except Exception as err:
        pytest.skip(f"bundled SmolLM2 or llama.cpp not available: {err}")
    from desktop.main_window import MainWindow

    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "my-tutor.gguf").symlink_to(smollm2)
    cfg = Config(
        home=home, embedder="hashing", chat_model="scripted", models={"tutor": "gguf:my-tutor"}
    ).validated()
    services = Services(cfg)
    window = MainWindow(services)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    tabs = child(window, QTabWidget, "assistants")
    label = child(window, QLabel, "status_tab_model")
    names = [tabs.widget(i).objectName() for i in range(4)]  # type: ignore[union-attr]
    tabs.setCurrentIndex(names.index("tutor"))
    assert label.text() == "Tutor: my-tutor"
    tabs.setCurrentIndex(1)
    assert label.text() == "Memories: Scripted (for tests)"
    assert "Tutor: my-tutor" in label.toolTip()
    for name in ("tutor", "memories", "multiagent"):
        assert child(window, QComboBox, f"{name}_model_picker").count() >= 1
    window.close()
    services.close()


def test_cancelling_a_copy_adds_nothing(
    qtbot: Any, services: Services, workers: WorkerPool, tmp_path: Path
) -> None:
    source = write_gguf(tmp_path / "big.gguf")
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    handle = dialog.add_file(source)
    dialog.cancel_button.click()  # before the copy even starts: deterministic
    with qtbot.waitSignal(handle.signals.finished, timeout=10_000):
        pass
    assert dialog.status.text().startswith("Copy cancelled; nothing was added.")
    assert sorted(p.name for p in services.config.path("models").iterdir()) == [
        "cut.gguf",
        "tiny-base.gguf",
        "tiny-chat.gguf",
    ]


@pytest.mark.model
def test_picking_a_real_gguf_for_the_tutor_loads_it_for_the_next_answer(
    qtbot: Any, services: Services, workers: WorkerPool
) -> None:
    try:
        smollm2 = SMOLLM2_GGUF.verified()
        import llama_cpp  # noqa: F401
    except Exception as err:
        pytest.skip(f"bundled SmolLM2 or llama.cpp not available: {err}")
    (services.config.path("models") / "mine.gguf").symlink_to(smollm2)
    picker = ModelPicker(services.model_choices("tutor"), workers)
    qtbot.addWidget(picker)
    qtbot.waitUntil(lambda: picker.combo.findData("gguf:mine") >= 0, timeout=10_000)
    picker.combo.setCurrentIndex(picker.combo.findData("gguf:mine"))
    with qtbot.waitSignal(picker.model_loaded, timeout=60_000) as loaded:
        picker.combo.activated.emit(picker.combo.currentIndex())  # as a user's pick does
    assert loaded.args[:2] == ["tutor", "mine"]
    assert child(picker, QLabel, "tutor_model_state").text() == "ready"
    assert services.chat_for("tutor").name == "mine"
    assert config_module.load({}, home=services.config.home).models == {"tutor": "gguf:mine"}


def test_a_slow_earlier_listing_never_overwrites_a_newer_one(
    qtbot: Any, services: Services, workers: WorkerPool, monkeypatch: Any, tmp_path: Path
) -> None:
    """Adding a folder lists again while the first listing may still run: whichever ends
    last, the table shows the newest (the older one once left 3 rows where 4 were)."""
    import threading

    from desktop import models_dialog

    release = threading.Event()
    real = local.list_models
    calls: list[int] = []

    def listing(folders: list[Path]) -> list[local.LocalModel]:
        calls.append(len(folders))
        if len(calls) == 1:
            release.wait(10)  # the first listing is slow
        return real(folders)

    monkeypatch.setattr(models_dialog.local, "list_models", listing)
    extra = tmp_path / "llms"
    extra.mkdir()
    write_gguf(extra / "elsewhere.gguf")
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    first = dialog.list_job
    assert first is not None
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=10_000)
    done = dialog.add_folder(extra)
    with qtbot.waitSignal(done.signals.finished, timeout=10_000):
        pass
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 5, timeout=10_000)
    with qtbot.waitSignal(first.signals.finished, timeout=10_000):
        release.set()  # the first listing ends now, with the old folders
    assert dialog.table.rowCount() == 5


def test_the_bundled_model_is_listed_and_cannot_be_removed(
    qtbot: Any, services: Services, workers: WorkerPool
) -> None:
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    bundled = dialog.found[0]
    assert bundled.bundled and bundled.name == "SmolLM2-135M-Instruct (bundled)"
    assert dialog.table.item(0, 0).text() == "SmolLM2-135M-Instruct (bundled)"
    dialog.table.setCurrentCell(0, 0)
    assert not dialog.remove_button.isEnabled()
    assert "No model files yet" not in dialog.status.text()
    assert all("gguf:" not in dialog.table.item(r, 0).text() for r in range(4))


def test_remove_a_copy_is_confirmed_and_undone_while_the_dialog_is_open(
    qtbot: Any, services: Services, workers: WorkerPool, home: Path
) -> None:
    config_module.update_file(home, lambda c: replace_models(c, tutor="gguf:tiny-chat"))
    services.use_model("tutor", "gguf:tiny-chat")
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    entry = next(e for e in dialog.found if e.name == "tiny-chat")
    question = dialog.remove_question(entry)
    assert "Delete tiny-chat from the models folder?" in question and "Tutor" in question
    dialog.table.setCurrentCell(dialog.found.index(entry), 0)
    assert dialog.remove_button.isEnabled()
    assert dialog.remove(entry)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 3, timeout=10_000)
    assert not (home / "models" / "tiny-chat.gguf").exists()
    assert "Tutor now answer" in dialog.status.text()
    assert services.config.model_for("tutor") == "smollm2"  # from the next answer
    assert dialog.undo_button.isVisible() or not dialog.isVisible()
    assert dialog.undo()
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    assert (home / "models" / "tiny-chat.gguf").is_file()
    assert services.config.model_for("tutor") == "gguf:tiny-chat"
    assert dialog.remove(next(e for e in dialog.found if e.name == "tiny-base"))
    dialog.reject()  # closing ends undo: the copy is deleted for good
    assert sorted(p.name for p in (home / "models").iterdir()) == ["cut.gguf", "tiny-chat.gguf"]


def test_remove_a_link_keeps_the_file(
    qtbot: Any, services: Services, workers: WorkerPool, home: Path, tmp_path: Path
) -> None:
    source = write_gguf(tmp_path / "kept-elsewhere.gguf")
    (home / "models" / "kept-elsewhere.gguf").symlink_to(source)
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 5, timeout=10_000)
    entry = next(e for e in dialog.found if e.name == "kept-elsewhere")
    assert entry.linked and "The file itself stays where it is" in dialog.remove_question(entry)
    assert dialog.remove(entry)
    assert source.is_file() and not (home / "models" / "kept-elsewhere.gguf").is_symlink()
    assert dialog.undo()
    assert (home / "models" / "kept-elsewhere.gguf").resolve() == source.resolve()


def test_the_context_is_bounded_by_what_the_file_was_trained_on(
    qtbot: Any, home: Path, workers: WorkerPool
) -> None:
    cfg = Config(
        home=home,
        embedder="hashing",
        chat_model="scripted",
        generation={"gguf:tiny-chat": {"context_size": 99_999}},
    ).validated()
    services = Services(cfg)
    dialog = ModelsDialog(services, workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 4, timeout=10_000)
    chat = _rows(dialog)["tiny-chat.gguf"]
    assert chat["Memory needed"].endswith("at 4096 tokens")
    entry = next(e for e in dialog.found if e.name == "tiny-chat")
    assert "Context limited to 4,096 tokens: Tiny Chat was trained on 4,096 tokens" in (
        dialog._details(entry)
    )
    services.close()


def replace_models(config: Config, **models: str) -> Config:
    from dataclasses import replace

    return replace(config, models={**config.models, **models})


def test_the_picker_shows_the_whole_name_of_the_model(
    qtbot: Any, home: Path, workers: WorkerPool
) -> None:
    """It was clipped to "SmolLM2-135M-Instruct (" at every window size."""
    services = Services(Config(home=home, embedder="hashing", chat_model="smollm2").validated())
    picker = ModelPicker(services.model_choices("tutor"), workers)
    qtbot.addWidget(picker)
    qtbot.waitUntil(lambda: picker.combo.count() > 2, timeout=10_000)
    text = picker.combo.currentText()
    assert text == "SmolLM2-135M-Instruct (bundled)"
    room = picker.combo.sizeHint().width() - 30  # the arrow and the frame
    assert room >= picker.combo.fontMetrics().horizontalAdvance(text)
    services.close()


def test_generation_settings_apply_to_the_next_answer_without_a_restart(
    qtbot: Any, custodia_window: Any
) -> None:
    from dataclasses import replace

    services = custodia_window.services
    before = services.chat_for("tutor")
    assert before.settings.temperature == 0.1
    saved = replace(services.config, generation={"tutor": {"temperature": 0.9, "top_p": 0.5}})
    custodia_window.apply_settings(saved)
    after = services.chat_for("tutor")
    assert (after.settings.temperature, after.settings.top_p) == (0.9, 0.5)
    assert services.chat_for("memories").settings.temperature == 0.2  # its own, unchanged


def test_settings_show_models_by_name_and_save_their_keys(qtbot: Any, home: Path) -> None:
    """Settings showed `gguf:My-…`: the model boxes show friendly names, the file keeps keys."""
    cfg = Config(home=home, embedder="hashing", chat_model="gguf:tiny-chat").validated()
    from backends.models.registry import model_options

    options = [o for o in model_options(cfg) if not o.problem]
    dialog = SettingsDialog(cfg, None, options)
    qtbot.addWidget(dialog)
    chat: Any = dialog.fields["chat_model"]
    assert chat.currentText() == "tiny-chat"
    shown = [chat.itemText(i) for i in range(chat.count())]
    assert "SmolLM2-135M-Instruct (bundled)" in shown and not any("gguf:" in t for t in shown)
    tutor: Any = dialog.model_fields["models.tutor"]
    tutor.setCurrentIndex(tutor.findText("SmolLM2-135M-Instruct (bundled)"))
    chat.setEditText("ollama:llama3.2")  # a key typed in is taken as it is
    candidate = dialog.candidate()
    assert candidate.models["tutor"] == "smollm2"
    assert candidate.chat_model == "ollama:llama3.2"
