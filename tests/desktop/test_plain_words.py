"""Internal words stay off the user's screen (issue 20): the checks dialog, the migration
dialog without a server, the multi-agent layers (tests/desktop/tabs/test_multiagent.py)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QPlainTextEdit, QPushButton

from desktop.dialogs import DoctorDialog
from tests.desktop.test_storage_map import _open_map


def test_the_checks_dialog_speaks_plainly_of_an_ollama_nobody_configured(
    qtbot: Any, custodia_window: Any
) -> None:
    dialog = DoctorDialog(custodia_window.services, custodia_window.workers, custodia_window)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.handle.signals.succeeded, timeout=60_000):
        pass
    report = dialog.findChild(QPlainTextEdit, "doctor_report").toPlainText()
    assert "[missing]" not in report and "[     ok]" not in report
    assert "○ Ollama: not used by this configuration" in report
    assert "✓ data dir" in report
    dialog.reject()


def test_a_dry_run_that_cannot_start_does_not_say_it_is_reading(
    qtbot: Any, custodia_window: Any
) -> None:
    view = _open_map(qtbot, custodia_window)
    view.findChild(QPushButton, "storage_map_migrate").click()
    dialog = view.migration
    assert dialog is not None
    qtbot.waitUntil(lambda: "no server is configured" in dialog.status.text(), timeout=30_000)
    log = dialog.findChild(QPlainTextEdit, "migration_log").toPlainText()
    assert "reading" not in log and "Nothing was read or changed." in log
    assert not dialog.status.text().startswith("Stopped")
