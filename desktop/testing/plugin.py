"""pytest plugin (``pytest11`` entry point ``custodia``): open Custodia in a test.

Fixtures:

* ``custodia_config`` — a :class:`~backends.config.Config` on a fresh temporary data dir with
  the deterministic providers: the ``hashing`` embedder and the ``scripted`` chat model,
  in English (``language="en"``, whatever the machine's locale). Override it in your own
  conftest to change any setting — ``language="es"`` opens the window in Spanish.
* ``custodia_services`` — the :class:`~backends.services.Services` built from it.
* ``custodia_qsettings`` — the window's settings (size, splitters, last tab, theme, the
  first-run welcome) in a temporary folder, never the user's; the welcome is marked as seen.
* ``custodia_window`` — the main window, shown, with its start-up checks finished; closed
  (work cancelled and waited for, without the "Quit anyway?" question) after the test. It
  is built in ``custodia_config.language`` (Qt's and Custodia's translators installed
  first, as at start-up; removed after the test).

Widgets have stable object names, listed in docs/TESTING.md; find them with
``window.findChild(QWidget, "name")``.

A tab can also be opened alone: it is given its own service, never the container — a lazy
handle (``custodia_services.lazy_part("memories", MemoryAssistant)``, or ``Lazy.of(service)``
for one built by the test) and, for its model picker,
``custodia_services.model_choices("memories")`` (or ``None``: no picker), with a
:class:`~desktop.workers.WorkerPool`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.services import Services


@pytest.fixture
def custodia_config(tmp_path: Path) -> Config:
    home = tmp_path / "custodia-home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted", language="en").validated()


@pytest.fixture
def custodia_services(custodia_config: Config) -> Iterator[Services]:
    services = Services(custodia_config)
    yield services
    services.close()


@contextmanager
def isolated_qsettings(folder: Path) -> Iterator[Path]:
    """Point the user-scope INI settings (where the window keeps its state) at ``folder``
    while inside; the previous location is restored after."""
    from PySide6.QtCore import QSettings  # noqa: PLC0415 — lazy: a plugin of every test run; Qt only for GUI tests

    fmt, scope = QSettings.Format.IniFormat, QSettings.Scope.UserScope
    before = QSettings(fmt, scope, "Custodia", "Custodia").fileName()
    previous = str(Path(before).parent.parent)
    QSettings.setPath(fmt, scope, str(folder))
    try:
        yield folder
    finally:
        QSettings.setPath(fmt, scope, previous)


@pytest.fixture
def custodia_qsettings(tmp_path: Path) -> Iterator[Any]:
    from desktop.main_window import window_settings  # noqa: PLC0415 — lazy: a plugin of every test run; Qt only for GUI tests
    from desktop.welcome import SETTINGS_KEY  # noqa: PLC0415 — lazy: a plugin of every test run; Qt only for GUI tests

    with isolated_qsettings(tmp_path / "qsettings"):
        settings = window_settings()
        settings.setValue(SETTINGS_KEY, True)  # no first-run welcome in a test's window
        settings.sync()
        yield settings


@pytest.fixture
def custodia_window(
    qtbot: Any, custodia_services: Services, custodia_qsettings: Any
) -> Iterator[Any]:
    from desktop import i18n  # noqa: PLC0415 — lazy: a plugin of every test run; Qt only for GUI tests
    from desktop.main_window import MainWindow  # noqa: PLC0415 — lazy: a plugin of every test run; Qt only for GUI tests

    i18n.install(custodia_services.config.language)  # before any widget, as at start-up
    try:
        window = MainWindow(custodia_services, settings=custodia_qsettings)
        qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
        with qtbot.waitSignal(window.checks_ready, timeout=60_000):
            window.show()
        yield window
        window.close_now()
    finally:
        i18n.uninstall()
