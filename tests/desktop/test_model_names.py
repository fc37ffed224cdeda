"""One name for a model wherever the user sees it (issue 30): the models dialog, Settings, the
tab header's model box, the conversations' model box, the status bar, the doctor and
``custodia models list`` all name it by :func:`backends.models.manage.friendly_name`.

Before, the bundled model was "SmolLM2-135M-Instruct (bundled)" in the dialog and Settings,
"SmolLM2-135M-Instruct" in the status bar and the doctor, "SmolLM2-135M-Instruct
(llama.cpp, configured)" in the conversations tab; a linked file "my-tutor (GGUF)" in the
tab header and "my-tutor" elsewhere.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QPlainTextEdit, QWidget

from backends import cli
from backends.config import Config
from backends.models.files import SMOLLM2_GGUF
from backends.models.manage import friendly_name
from backends.services import Services
from desktop.dialogs import DoctorDialog, SettingsDialog, user_line
from desktop.main_window import MainWindow
from desktop.models_dialog import ModelsDialog

BUNDLED = "smollm2"
#: a doctor line about a chat model: "✓ chat model: NAME — …", "✓ chat model (WHOSE): NAME — …"
CHAT_ROW = re.compile(r"^✓ chat model(?: \((.+?)\))?: (.+?) — ")
LINKED = "gguf:my-tutor"


def _tab(window: MainWindow, name: str) -> QWidget:
    tab = window.findChild(QWidget, name)
    assert tab is not None, name
    return tab


def _status_name(window: MainWindow, tab: str) -> str:
    window.tabs.setCurrentWidget(_tab(window, tab))
    label = window.findChild(QLabel, "status_tab_model")
    assert label is not None
    return str(label.text()).split(": ", 1)[1]


def _combo(window: QWidget, name: str) -> QComboBox:
    combo = window.findChild(QComboBox, name)
    assert combo is not None, name
    return combo


@pytest.mark.model
def test_every_place_names_the_bundled_model_and_a_linked_file_alike(
    qtbot: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    try:
        smollm2 = SMOLLM2_GGUF.verified()
        import llama_cpp  # noqa: F401
    except Exception as err:
        pytest.skip(f"bundled SmolLM2 or llama.cpp not available: {err}")
    for name in ("CHAT", "TUTOR", "MEMORIES", "CONVERSATIONS", "MULTIAGENT"):
        monkeypatch.delenv(f"CUSTODIA_{name}_MODEL", raising=False)
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    (home / "models" / "my-tutor.gguf").symlink_to(smollm2)  # linked, not copied
    (home / "custodia.toml").write_text(
        f'embedder = "hashing"\nchat_model = "{BUNDLED}"\n\n[models]\ntutor = "{LINKED}"\n'
    )
    config = Config(
        home=home, embedder="hashing", chat_model=BUNDLED, models={"tutor": LINKED}
    ).validated()
    bundled, linked = friendly_name(BUNDLED), friendly_name(LINKED)
    assert (bundled, linked) == ("SmolLM2-135M-Instruct (bundled)", "my-tutor")

    services = Services(config)
    window = MainWindow(services)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    with qtbot.waitSignal(window.checks_ready, timeout=120_000):
        window.show()
    names: dict[str, tuple[str, str]] = {}

    names["status bar"] = (_status_name(window, "memories"), _status_name(window, "tutor"))
    chat = window.findChild(QLabel, "status_chat_model")
    assert chat is not None and chat.text() == f"Chat: {bundled}"

    memories, tutor = _combo(window, "memories_model_picker"), _combo(window, "tutor_model_picker")
    qtbot.waitUntil(lambda: memories.count() > 2 and tutor.count() > 2, timeout=30_000)
    names["tab header"] = (memories.currentText(), tutor.currentText())

    conversations = _combo(_tab(window, "conversations"), "model_picker")
    window.tabs.setCurrentWidget(_tab(window, "conversations"))
    qtbot.waitUntil(lambda: conversations.findData(LINKED) >= 0, timeout=60_000)
    conversations.setCurrentIndex(conversations.findData(LINKED))
    linked_there = conversations.currentText()
    conversations.setCurrentIndex(conversations.findData(BUNDLED))
    names["conversations"] = (conversations.currentText(), linked_there)

    dialog = ModelsDialog(services, window.workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=30_000)
    rows: dict[str, str] = {}
    for row in range(dialog.table.rowCount()):
        item = dialog.table.item(row, 0)
        assert item is not None
        rows[str(item.data(Qt.ItemDataRole.UserRole))] = item.text()
    names["models dialog"] = (rows[BUNDLED], rows[LINKED])

    settings = SettingsDialog(services.config, window, window.model_options)
    qtbot.addWidget(settings)
    default, own = settings.fields["chat_model"], settings.model_fields["models.tutor"]
    assert isinstance(default, QComboBox) and isinstance(own, QComboBox)
    names["settings"] = (default.currentText(), own.currentText())

    doctor = DoctorDialog(services, window.workers, window)
    with qtbot.waitSignal(doctor.handle.signals.finished, timeout=60_000):
        doctor.show()
    report = doctor.findChild(QPlainTextEdit, "doctor_report")
    assert report is not None
    rows = [CHAT_ROW.match(line) for line in report.toPlainText().splitlines()]
    shown = {(row[1] or ""): row[2] for row in rows if row is not None}
    assert len(shown) == 2, shown  # the default chat model's row and the tutor's own
    names["doctor"] = (shown[""], next(v for k, v in shown.items() if k))
    doctor.reject()

    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    capsys.readouterr()
    assert cli.main(["models", "list", "--json"]) == 0
    listed = {m["key"]: m["name"] for m in json.loads(capsys.readouterr().out)["models"]}
    names["custodia models list"] = (listed[BUNDLED], listed[LINKED])

    assert names == dict.fromkeys(names, (bundled, linked))
    window.close_now()
    services.close()


def test_the_doctor_names_a_chat_model_as_everywhere(tmp_path: Path) -> None:
    """The doctor's line named the loaded model ("SmolLM2-135M-Instruct"), not as the
    models dialog does; an assistant's own model by its key's friendly name too."""
    from backends import doctor

    config = Config(home=tmp_path, chat_model=BUNDLED, models={"tutor": LINKED})
    check = doctor.Check("chat model", "SmolLM2-135M-Instruct", "local", ok=True)
    row = CHAT_ROW.match(user_line(check, config))
    assert row is not None and row[2] == friendly_name(BUNDLED)
    check = doctor.Check("chat model (tutor)", "my-tutor", "local", ok=True)
    row = CHAT_ROW.match(user_line(check, config))
    assert row is not None and row[1] and row[2] == "my-tutor"
    check.details["retrieval_only"] = True
    assert friendly_name("retrieval-only") in user_line(check, config)
