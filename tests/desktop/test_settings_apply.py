"""Settings that apply (issue 30): what applies from the next answer says so, the rest says
"after a restart"; the servers are a section of their own, folded for the embedded profile;
an assistant's context size is bounded by what its model file was trained on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QComboBox, QGroupBox, QLabel, QSpinBox, QToolButton

from backends.config import Config
from backends.models.local import GGUFInfo
from backends.models.registry import ModelOption
from desktop.dialogs import SettingsDialog


def _info(path: Path, context: int) -> GGUFInfo:
    return GGUFInfo(
        path=path,
        name="Trained-8k",
        architecture="llama",
        parameters=1_000_000,
        quantisation="Q4_0",
        context_length=context,
        file_size=1_000_000,
        chat_template="{{ messages }}",
        layers=2,
        embedding=64,
        head_count=4,
        head_count_kv=4,
        key_length=16,
        value_length=16,
        version=3,
    )


def test_the_context_size_is_bounded_by_what_the_model_was_trained_on(
    qtbot: Any, tmp_path: Path
) -> None:
    """99,999 was accepted for a model trained on 8,192 tokens."""
    path = tmp_path / "Trained-8k.gguf"
    options = [
        ModelOption("smollm2", "SmolLM2"),
        ModelOption("retrieval-only", "Retrieval-only"),
        ModelOption(f"gguf:{path}", "Trained-8k", info=_info(path, 8192)),
    ]
    models = {"tutor": f"gguf:{path}", "memories": "retrieval-only"}
    config = Config(home=tmp_path, models=models).validated()
    dialog = SettingsDialog(config, None, options)
    qtbot.addWidget(dialog)
    spin = dialog.findChild(QSpinBox, "generation_tutor_context_size")
    spin.setValue(99_999)
    assert spin.value() == 8192
    note = dialog.findChild(QLabel, "context_note_tutor")
    assert not note.isHidden() and "trained on 8,192 tokens" in note.text()
    assert dialog.candidate().generation_for("tutor").context_size == 8192
    # another assistant on a model whose training is not known: the general limit
    other = dialog.findChild(QSpinBox, "generation_memories_context_size")
    assert other.maximum() > 8192 and dialog.findChild(QLabel, "context_note_memories").isHidden()
    # choosing the bounded model elsewhere bounds it there too
    combo: Any = dialog.model_fields["models.memories"]
    combo.setCurrentIndex(combo.findData(f"gguf:{path}"))
    assert other.maximum() == 8192


def test_the_servers_are_folded_for_the_embedded_profile(qtbot: Any, tmp_path: Path) -> None:
    dialog = SettingsDialog(Config(home=tmp_path).validated())
    qtbot.addWidget(dialog)
    servers = dialog.findChild(QGroupBox, "settings_servers")
    button = dialog.findChild(QToolButton, "settings_servers_button")
    assert servers.isHidden() and not button.isChecked()
    assert "after a restart" in button.text()
    button.click()
    assert not servers.isHidden()
    assert servers.isAncestorOf(dialog.fields["redis_url"])
    assert servers.isAncestorOf(dialog.fields["profile"])
    assert not servers.isAncestorOf(dialog.fields["chat_model"])  # a model is not a server
    server = SettingsDialog(replace(Config(home=tmp_path), profile="server").validated())
    qtbot.addWidget(server)
    assert not server.findChild(QGroupBox, "settings_servers").isHidden()


def test_what_applies_at_once_says_so_and_no_restart_is_asked_for_it(
    qtbot: Any, tmp_path: Path
) -> None:
    dialog = SettingsDialog(Config(home=tmp_path).validated())
    qtbot.addWidget(dialog)
    assert "next answer" in dialog.findChild(QLabel, "assistants_note").text()
    assert "restart" in dialog.findChild(QLabel, "settings_intro").text()
    spin: Any = dialog.model_fields["generation.tutor.temperature"]
    spin.setValue(0.9)
    assert dialog.saved_message(dialog.candidate()) == ""  # applied: nothing to restart
    dialog.fields["embedder"].setEditText("hashing")  # type: ignore[attr-defined]
    text = dialog.saved_message(dialog.candidate())
    assert "next start" in text and "next answer" in text


def test_the_bundled_model_bounds_the_context_by_its_own_header(qtbot: Any, tmp_path: Path) -> None:
    from backends.models import local
    from backends.models.files import SMOLLM2_GGUF
    from backends.models.manage import BUNDLED_CONTEXT_LENGTH

    assert local.read_gguf(SMOLLM2_GGUF.locate()).context_length == BUNDLED_CONTEXT_LENGTH
    config = Config(home=tmp_path).validated()  # the bundled model answers every assistant
    dialog = SettingsDialog(config)
    qtbot.addWidget(dialog)
    spin = dialog.findChild(QSpinBox, "generation_conversations_context_size")
    assert spin.maximum() == 8192
    assert "SmolLM2-135M-Instruct (bundled) was trained on 8,192 tokens" in (
        dialog.findChild(QLabel, "context_note_conversations").text()
    )


def test_the_model_boxes_show_a_model_name_whole_at_the_minimum_size(
    qtbot: Any, tmp_path: Path
) -> None:
    """'SmolLM2-135M-Instruct (bundl' was shown in the assistants' pages at 760×480."""
    config = Config(home=tmp_path, models={"tutor": "smollm2"}).validated()
    dialog = SettingsDialog(config)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.resize(760, 480)
    tutor_page = dialog.model_fields["models.tutor"].parentWidget()
    dialog.assistant_tabs.setCurrentWidget(tutor_page)  # the pages follow the tabs' order
    qtbot.wait(20)
    for combo in (dialog.fields["chat_model"], dialog.model_fields["models.tutor"]):
        assert isinstance(combo, QComboBox)
        edit = combo.lineEdit()
        assert combo.currentText() == "SmolLM2-135M-Instruct (bundled)"
        assert edit.width() >= edit.fontMetrics().horizontalAdvance(combo.currentText())
