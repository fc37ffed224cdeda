from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLabel, QTabWidget

from backends.config import Config
from desktop.dialogs import AboutDialog, SettingsDialog

TAB_NAMES = ["multiagent", "memories", "conversations", "tutor"]


def test_window_has_the_four_named_tabs(custodia_window: Any) -> None:
    tabs = custodia_window.findChild(QTabWidget, "assistants")
    assert tabs is not None
    assert [tabs.widget(i).objectName() for i in range(tabs.count())] == TAB_NAMES


def test_status_bar_shows_profile_models_and_health(custodia_window: Any) -> None:
    def text(name: str) -> str:
        label = custodia_window.findChild(QLabel, name)
        assert label is not None, name
        return str(label.text())

    assert text("status_profile") == "Profile: embedded"
    assert text("status_chat_model") == "Chat: scripted"
    assert text("status_embedder") == "Embedder: hashing-384 (384-d)"
    assert text("status_health") == "All stores and models ready"


def test_ctrl_number_switches_tabs(custodia_window: Any) -> None:
    tabs = custodia_window.findChild(QTabWidget, "assistants")
    custodia_window.tab_actions[2].trigger()
    assert tabs.currentWidget().objectName() == "conversations"


def test_documented_shortcuts_are_bound(custodia_window: Any) -> None:
    """Ctrl+, and Ctrl+Q as the README and TESTING.md say, on every desktop (Qt's standard
    Preferences key is empty on some)."""
    from PySide6.QtGui import QAction

    def keys(name: str) -> list[str]:
        action = custodia_window.findChild(QAction, name)
        assert action is not None, name
        return [k.toString() for k in action.shortcuts()]

    assert "Ctrl+," in keys("action_settings")
    assert "Ctrl+Q" in keys("action_quit")
    assert keys("action_inspector") == ["Ctrl+I"]


def test_problem_in_a_store_is_shown_without_blocking(qtbot: Any, tmp_path: Path) -> None:
    import socket

    from backends.services import Services
    from desktop.main_window import MainWindow

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = Config(
        home=tmp_path,
        cache_backend="redis",
        redis_url=f"redis://127.0.0.1:{port}/0",
        embedder="hashing",
        chat_model="scripted",
        network_timeout=1.0,
    ).validated()
    services = Services(cfg)
    window = MainWindow(services)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    window.show()  # shown at once; the checks report later
    assert window.isVisible()
    with qtbot.waitSignal(window.checks_ready, timeout=30_000):
        pass
    health = window.findChild(QLabel, "status_health").text()
    assert "Problems" in health and "sessions/tickets/feed" in health
    window.close()


def test_settings_dialog_validates_and_names_the_bad_field(qtbot: Any, tmp_path: Path) -> None:
    dialog = SettingsDialog(Config(home=tmp_path))
    qtbot.addWidget(dialog)
    dialog.fields["redis_url"].setText("http://not-redis")  # type: ignore[attr-defined]
    dialog._on_accepted()
    assert "redis_url" in dialog.error_label.text()
    assert not (tmp_path / "custodia.toml").exists()  # nothing written
    dialog.fields["redis_url"].setText("redis://127.0.0.1:6379/0")  # type: ignore[attr-defined]
    dialog.fields["embedder"].setCurrentText("hashing")  # type: ignore[attr-defined]
    assert dialog.candidate().embedder == "hashing"


def test_settings_dialog_saves_a_valid_config(qtbot: Any, tmp_path: Path, monkeypatch: Any) -> None:
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "information", lambda *a, **k: QMessageBox.StandardButton.Ok)
    dialog = SettingsDialog(Config(home=tmp_path))
    qtbot.addWidget(dialog)
    dialog.fields["chat_model"].setCurrentText("retrieval-only")  # type: ignore[attr-defined]
    dialog._on_accepted()
    assert dialog.saved is not None and dialog.saved.chat_model == "retrieval-only"
    assert 'chat_model = "retrieval-only"' in (tmp_path / "custodia.toml").read_text()


def test_settings_never_copy_an_environment_override_into_the_file(
    qtbot: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from PySide6.QtWidgets import QMessageBox

    from backends import config as config_module

    monkeypatch.setattr(QMessageBox, "information", lambda *a, **k: QMessageBox.StandardButton.Ok)
    (tmp_path / "custodia.toml").write_text('chat_model = "retrieval-only"\n', encoding="utf-8")
    environ = {"CUSTODIA_HOME": str(tmp_path), "CUSTODIA_CHAT_MODEL": "scripted"}
    for var, value in environ.items():
        monkeypatch.setenv(var, value)
    effective = config_module.load(environ)
    assert effective.chat_model == "scripted"
    dialog = SettingsDialog(effective)
    qtbot.addWidget(dialog)
    assert not dialog.fields["chat_model"].isEnabled()
    assert "CUSTODIA_CHAT_MODEL" in dialog.fields["chat_model"].toolTip()
    dialog.fields["embedder"].setCurrentText("hashing")  # type: ignore[attr-defined]
    dialog.fields["network_timeout"].setValue(300.0)  # type: ignore[attr-defined]
    dialog._on_accepted()
    on_file = config_module.load({}, home=tmp_path)
    assert on_file.chat_model == "retrieval-only"  # the session's variable stayed out
    assert on_file.embedder == "hashing" and on_file.network_timeout == 300.0


def test_about_lists_versions(qtbot: Any, custodia_services: Any) -> None:
    dialog = AboutDialog(custodia_services)
    qtbot.addWidget(dialog)
    assert dialog.findChild(QLabel, "version_custodia") is not None
    assert dialog.findChild(QLabel, "version_qt").text()


def test_custodia_command_opens_the_window_offscreen(tmp_path: Path) -> None:
    """`QT_QPA_PLATFORM=offscreen custodia` (no argument) shows the window and exits cleanly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(
        QT_QPA_PLATFORM="offscreen",
        CUSTODIA_HOME=str(tmp_path),
        CUSTODIA_EMBEDDER="hashing",
        CUSTODIA_CHAT_MODEL="scripted",
        CUSTODIA_STARTUP_PROBE="1",
    )
    result = subprocess.run(
        [sys.executable, "-m", "desktop.cli"], capture_output=True, text=True, env=env, timeout=90
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("window-shown ")
