"""pytest plugin (``pytest11`` entry point ``custodia``): open Custodia in a test.

Fixtures:

* ``custodia_config`` — a :class:`~backends.config.Config` on a fresh temporary data dir with
  the deterministic providers: the ``hashing`` embedder and the ``scripted`` chat model.
  Override it in your own conftest to change any setting.
* ``custodia_services`` — the :class:`~backends.services.Services` built from it.
* ``custodia_window`` — the main window, shown, with its start-up checks finished; closed
  (work cancelled and waited for) after the test.

Widgets have stable object names, listed in docs/TESTING.md; find them with
``window.findChild(QWidget, "name")``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.services import Services


@pytest.fixture
def custodia_config(tmp_path: Path) -> Config:
    home = tmp_path / "custodia-home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture
def custodia_services(custodia_config: Config) -> Iterator[Services]:
    services = Services(custodia_config)
    yield services
    services.close()


@pytest.fixture
def custodia_window(qtbot: Any, custodia_services: Services) -> Iterator[Any]:
    from desktop.main_window import MainWindow

    window = MainWindow(custodia_services)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    yield window
    window.close()
