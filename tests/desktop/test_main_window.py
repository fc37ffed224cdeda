from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QTabWidget, QWidget

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
    assert text("status_chat_model") == "Chat: Scripted (for tests)"
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


def test_no_tab_holds_the_container(custodia_window: Any) -> None:
    """Constructor injection: each tab (and each widget in it) holds its own service's
    handle and model choices, never the :class:`Services` container."""
    from PySide6.QtCore import QObject

    from backends.services import Lazy, Services

    for name in TAB_NAMES:
        tab = custodia_window.findChild(QWidget, name)
        for obj in [tab, *tab.findChildren(QObject)]:
            held = vars(obj).values() if hasattr(obj, "__dict__") else ()
            assert not any(isinstance(value, Services) for value in held), (name, obj)
        assert isinstance(tab.service, Lazy)


def test_the_window_appears_before_any_service_is_built(
    qtbot: Any, custodia_config: Config, custodia_qsettings: Any
) -> None:
    """Opening a store is slow: the window is shown while every assistant's service (and the
    audit service) waits to be built, and each is then built off the GUI thread."""
    import threading
    from collections.abc import Callable

    from backends import assistants
    from backends.services import Services
    from desktop.main_window import MainWindow

    gate = threading.Event()
    built_on: dict[str, threading.Thread] = {}
    finished: list[str] = []

    class GatedServices(Services):
        """Real services whose named ones wait for ``gate`` before they are built."""

        def service(self, name: str, build: Callable[[], Any], close: Any = None) -> Any:
            def gated() -> Any:
                built_on[name] = threading.current_thread()
                gate.wait(30)
                built = build()
                finished.append(name)
                return built

            return super().service(name, gated, close)

    services = GatedServices(custodia_config)
    window = MainWindow(services, settings=custodia_qsettings)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    ready: list[Any] = []
    window.checks_ready.connect(ready.append)
    try:
        window.show()
        qtbot.waitExposed(window)
        assert window.isVisible() and finished == []
        assert threading.main_thread() not in built_on.values()
    finally:
        gate.set()
    qtbot.waitUntil(lambda: bool(ready) and not window.workers.active, timeout=60_000)
    declared = {*assistants.names(), *assistants.part_names()}
    assert built_on and set(built_on) <= declared  # the tabs' start-up work
    assert threading.main_thread() not in built_on.values()
    window.close_now()


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
        XDG_CONFIG_HOME=str(tmp_path / "config"),  # the window's QSettings: not the user's
    )
    result = subprocess.run(
        [sys.executable, "-m", "desktop.cli"], capture_output=True, text=True, env=env, timeout=90
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("window-shown ")
    assert (tmp_path / "config" / "Custodia" / "Custodia.ini").is_file()


# -- issue 20: remembered state, theme, width, help, welcome, quitting ----------------------


def _open(qtbot: Any, config: Config, **kwargs: Any) -> Any:
    from backends.services import Services
    from desktop.main_window import MainWindow

    window = MainWindow(Services(config), **kwargs)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    return window


def test_size_splitters_and_last_tab_are_remembered(qtbot: Any, custodia_config: Config) -> None:
    from PySide6.QtWidgets import QSplitter

    first = _open(qtbot, custodia_config)
    first.resize(780, 560)  # inside the offscreen screen (800x600): restoring clamps to it
    first.tabs.setCurrentIndex(2)
    splitter = first.findChild(QSplitter, "memories_splitter")
    splitter.setSizes([300, 500])
    wanted = splitter.sizes()
    first.close_now()

    second = _open(qtbot, custodia_config)
    assert (second.width(), second.height()) == (780, 560)
    assert second.tabs.currentWidget().objectName() == "conversations"
    assert second.findChild(QSplitter, "memories_splitter").sizes() == wanted
    second.close_now()


def test_settings_of_a_test_are_never_the_users(custodia_window: Any, tmp_path: Path) -> None:
    from pathlib import Path as P

    path = P(custodia_window.settings.fileName())
    assert str(tmp_path) in str(path) or "qsettings" in str(path)
    assert not str(path).startswith(str(P.home() / ".config"))


def test_view_theme_switches_light_dark_and_follows_the_system(
    qtbot: Any, custodia_window: Any, monkeypatch: Any
) -> None:
    from PySide6.QtCore import Qt as QtNS
    from PySide6.QtGui import QAction, QGuiApplication, QPalette
    from PySide6.QtWidgets import QApplication

    from desktop import theme

    def window_lightness() -> int:
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        return int(app.palette().color(QPalette.ColorRole.Window).lightness())

    memories = custodia_window.findChild(QWidget, "memories")
    dark = custodia_window.findChild(QAction, "action_theme_dark")
    dark.trigger()
    assert dark.isChecked() and window_lightness() < 128
    assert custodia_window.settings.value("view/theme") == "dark"
    assert theme.colors()["user_bubble"] in memories.styleSheet()  # the tab followed
    custodia_window.findChild(QAction, "action_theme_light").trigger()
    assert window_lightness() > 128 and "#e3effd" in memories.styleSheet()

    custodia_window.findChild(QAction, "action_theme_system").trigger()
    monkeypatch.setattr(theme, "system_is_dark", lambda: True)
    QGuiApplication.styleHints().colorSchemeChanged.emit(QtNS.ColorScheme.Dark)
    assert window_lightness() < 128  # the desktop went dark: so does the window
    monkeypatch.setattr(theme, "system_is_dark", lambda: False)
    QGuiApplication.styleHints().colorSchemeChanged.emit(QtNS.ColorScheme.Light)
    assert window_lightness() > 128


@pytest.mark.parametrize(
    "name",
    [
        "multiagent",
        "memories",
        "conversations",
        "tutor",
    ],
)
def test_every_tab_fits_a_900_px_wide_screen(qtbot: Any, custodia_window: Any, name: str) -> None:
    custodia_window.resize(880, 640)
    tabs = custodia_window.tabs
    tab = custodia_window.findChild(QWidget, name)
    tabs.setCurrentWidget(tab)
    qtbot.wait(10)
    assert custodia_window.width() == 880
    assert tab.minimumSizeHint().width() <= tabs.width()
    assert custodia_window.minimumWidth() <= 880
    status_bar = custodia_window.statusBar()
    assert status_bar.minimumSizeHint().width() <= 880  # its labels shrink (tooltips keep all)


def test_help_user_guide_shows_the_guide_rendered(qtbot: Any, custodia_window: Any) -> None:
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDialog, QTextBrowser

    custodia_window.findChild(QAction, "action_user_guide").trigger()
    dialog = custodia_window.findChild(QDialog, "user_guide_dialog")
    assert dialog is not None and dialog.isVisible()
    text = dialog.findChild(QTextBrowser, "user_guide_text").toPlainText()
    assert text.startswith("Custodia user guide")  # the heading, rendered (no "#")
    assert "## " not in text and "|---|" not in text
    dialog.close()


def test_help_keyboard_shortcuts_lists_what_is_bound(qtbot: Any, custodia_window: Any) -> None:
    from PySide6.QtGui import QAction, QKeySequence
    from PySide6.QtWidgets import QDialog, QTreeWidget

    def listed() -> dict[str, str]:
        custodia_window.findChild(QAction, "action_shortcuts").trigger()
        dialogs = [
            d for d in custodia_window.findChildren(QDialog, "shortcuts_dialog") if d.isVisible()
        ]
        tree = dialogs[-1].findChild(QTreeWidget, "shortcuts_list")
        rows = {tree.topLevelItem(i).text(0): tree.topLevelItem(i).text(1)
                for i in range(tree.topLevelItemCount())}  # fmt: skip
        dialogs[-1].close()
        return rows

    rows = listed()
    assert "Ctrl+Q" in rows["Quit"] and "Ctrl+," in rows["Settings"]
    assert rows["Audit inspector"] == "Ctrl+I" and rows["Multi-agent"] == "Ctrl+1"
    assert "F1" in rows["User guide"]
    assert rows["Memories: undo the last change"] == "Ctrl+Z"
    custodia_window.inspector_action.setShortcut(QKeySequence("Ctrl+Shift+I"))
    assert listed()["Audit inspector"] == "Ctrl+Shift+I"  # generated, not a copied table


def test_first_run_welcome_is_shown_once_and_dismissable(
    qtbot: Any, custodia_config: Config
) -> None:
    from PySide6.QtWidgets import QFrame, QPushButton

    window = _open(qtbot, custodia_config)
    banner = window.findChild(QFrame, "welcome")
    assert banner is not None and banner.isVisible()
    text = banner.findChild(QLabel, "welcome_text").text()
    for title in ("Multi-agent", "Memories", "Conversations", "Clinical tutor"):
        assert title in text
    assert "remembers" in text and "sources" in text  # what each tab is for
    assert window.tabs.isVisible()  # never blocking: the tabs work underneath
    qtbot.mouseClick(banner.findChild(QPushButton, "welcome_dismiss"), Qt.MouseButton.LeftButton)
    assert not banner.isVisible()
    window.close_now()
    again = _open(qtbot, custodia_config)
    assert again.findChild(QFrame, "welcome") is None
    again.close_now()


def test_the_plugin_window_has_no_welcome(custodia_window: Any) -> None:
    from PySide6.QtWidgets import QFrame

    assert custodia_window.findChild(QFrame, "welcome") is None


def test_quit_asks_only_while_a_run_is_going(qtbot: Any, custodia_window: Any) -> None:
    import threading

    from PySide6.QtWidgets import QMessageBox, QPushButton

    release = threading.Event()

    def job(progress: Any, emit: Any) -> None:
        while not progress.cancelled and not release.wait(0.02):
            pass

    handle = custodia_window.workers.start("memories: turn", job)
    custodia_window.quit_action.trigger()
    box = custodia_window.quit_box
    assert isinstance(box, QMessageBox) and box.objectName() == "quit_confirm"
    assert "an answer in Memories" in box.text()
    qtbot.mouseClick(box.findChild(QPushButton, "keep_running"), Qt.MouseButton.LeftButton)
    assert custodia_window.isVisible() and handle.running and not handle.progress.cancelled
    release.set()
    qtbot.waitUntil(lambda: not handle.running, timeout=10_000)
    assert custodia_window.running_work() == []
    assert custodia_window.close()  # nothing running: closes without asking


def test_about_is_friendly_with_versions_behind_details(qtbot: Any, custodia_services: Any) -> None:
    """About was a table of library versions: now what Custodia is, the versions on demand."""
    dialog = AboutDialog(custodia_services)
    qtbot.addWidget(dialog)
    dialog.show()
    versions = dialog.findChild(QWidget, "about_versions")
    assert versions is not None and not versions.isVisible()
    assert "Nothing you write leaves this computer" in dialog.findChild(QLabel).text()
    dialog.findChild(QPushButton, "about_details").click()
    assert versions.isVisible()


def test_the_user_guide_fits_its_window_without_scrolling_sideways(qtbot: Any) -> None:
    """Its screenshots forced horizontal scrolling; and it opened with `make run`."""
    from desktop.help import UserGuideDialog

    dialog = UserGuideDialog()
    qtbot.addWidget(dialog)
    dialog.resize(560, 480)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.fit_images()
    assert dialog.browser.horizontalScrollBar().maximum() == 0
    start = dialog.browser.toPlainText()[:1200]
    assert "make run" not in start


def test_the_welcome_text_takes_the_width_not_its_button(qtbot: Any) -> None:
    """At the window's minimum width the welcome's text was squeezed into a 135-px column
    beside a 600-px "Got it" (the box layout gave the button the room the wrapped text
    needed): the first thing a new user saw."""
    from desktop.welcome import WelcomeBanner

    banner = WelcomeBanner({})
    qtbot.addWidget(banner)
    banner.resize(760, 200)
    banner.show()
    qtbot.waitExposed(banner)
    button = banner.dismiss_button
    assert button.width() <= button.sizeHint().width() + 8
    assert banner.text.width() > 760 * 0.7


def test_the_status_bar_keeps_what_fits_at_the_minimum_width(
    qtbot: Any, custodia_window: Any
) -> None:
    """Tester, issue 30: at 760 px every status-bar label was cut ("Perfil: int",
    "Vectorizador: all-MiniLM-L6-v2 (38"); the profile and the embedder now give way."""
    custodia_window.resize(760, 480)
    qtbot.waitUntil(lambda: not custodia_window.embedder_label.isVisible(), timeout=5_000)
    assert not custodia_window.profile_label.isVisible()
    custodia_window.resize(1366, 768)
    qtbot.waitUntil(custodia_window.embedder_label.isVisible, timeout=5_000)
    assert custodia_window.profile_label.isVisible()
