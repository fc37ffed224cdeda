"""Start-up: configuration, the backend objects (built once), the window.

Heavy imports (chromadb, qdrant, onnxruntime, llama.cpp) happen in a worker after the window
is shown, so the window appears fast; the start-up doctor runs there too and reports problems
in the window without blocking it.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Sequence

from desktop.started import STARTED  # first: the clock of start-up figures  # isort: skip
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from backends import __version__
from backends import config as config_module
from backends.errors import CustodiaEnvironmentError
from backends.services import Services
from desktop import i18n
from desktop.main_window import MainWindow
from desktop.resources import app_icon

log = logging.getLogger("custodia")


def _setup_logging(home: os.PathLike[str] | str) -> None:
    path = os.path.join(home, "custodia.log")
    try:
        os.makedirs(home, mode=0o700, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
        os.chmod(path, 0o600)
    except OSError:
        handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)


def run(argv: Sequence[str]) -> int:
    os.umask(0o077)  # private files whoever creates them (Chroma, Qdrant: 0644 otherwise)
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    if "--self-test" in argv:  # checks an installation on a temporary data dir, offscreen
        from desktop import selftest  # noqa: PLC0415 — lazy: the self-test imports every assistant

        return selftest.run()
    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    assert isinstance(app, QApplication)
    app.setApplicationName("Custodia")
    app.setWindowIcon(app_icon())
    app.setOrganizationName("Custodia")
    app.setApplicationVersion(__version__)
    try:
        cfg = config_module.load()
    except CustodiaEnvironmentError as err:
        i18n.install(os.environ.get("CUSTODIA_LANGUAGE", "system").strip())
        QMessageBox.critical(
            None,
            app.translate("startup", "Custodia: configuration error"),
            app.translate(
                "startup",
                "The configuration cannot be used:\n\n{0}\n\nFix "
                "custodia.toml or the environment and start again.",
            ).format(err),
        )
        return 2
    _setup_logging(cfg.home)
    # before any widget is built: a widget reads its tr() strings when it is made
    language = i18n.install(cfg.language)
    log.info("language %s (setting %r)", language, cfg.language)
    services = Services(cfg)
    window = MainWindow(services)
    window.show()
    log.info("window shown %.3f s after start", time.perf_counter() - STARTED)
    if os.environ.get("CUSTODIA_STARTUP_PROBE"):  # used by bench/ to time start-up

        def report() -> None:
            print(f"window-shown {time.perf_counter() - STARTED:.3f}", flush=True)
            window.close()

        QTimer.singleShot(0, report)
    return int(app.exec())
