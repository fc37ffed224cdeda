"""The storage map view and the migration dialog, driven like a user would (pytest-qt)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QPlainTextEdit, QPushButton, QTableWidget

from backends import config as config_module
from backends.config import Config
from backends.storage_map import KINDS
from backends.stores.audit_log.record import Draft
from desktop.dialogs import SettingsDialog
from desktop.storage_map import MigrationDialog, StorageMapView
from tests.parts import audit_service, memories_service

RECORDS = 120


@pytest.fixture
def custodia_config(tmp_path: Path) -> Config:
    """The plugin's config with a Postgres DSN set (unreachable unless a test replaces it)."""
    home = tmp_path / "custodia-home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


def _open_map(qtbot: Any, window: Any) -> StorageMapView:
    action = window.findChild(QAction, "action_storage_map")
    assert action is not None
    view: StorageMapView | None = None

    def opened() -> None:
        nonlocal view
        view = window.findChild(StorageMapView, "storage_map")
        assert view is not None and view.rows

    action.trigger()
    qtbot.waitUntil(opened, timeout=90_000)
    assert view is not None
    return view


def test_the_map_counts_what_the_stores_hold(qtbot: Any, custodia_window: Any) -> None:
    services = custodia_window.services
    memories_service(services).remember("I live in Lisbon")
    audit_service(services).log.append_many(
        [Draft("test.event", None, {"n": n}, None) for n in range(7)]
    )
    view = _open_map(qtbot, custodia_window)
    table = view.findChild(QTableWidget, "storage_map_table")
    assert table.rowCount() == len(KINDS)
    by_kind = {table.item(r, 0).text(): r for r in range(table.rowCount())}
    assert table.item(by_kind["memories"], 4).text() == "1 memory"
    assert table.item(by_kind["audit log"], 4).text() == "7 records"
    assert table.item(by_kind["audit log"], 3).text() == "provable"
    assert table.item(by_kind["conversation vectors"], 3).text() == "recomputable"
    assert "Where:" in table.item(by_kind["memories"], 2).toolTip()

    # Refresh measures again, in a worker.
    memories_service(services).remember("My dog is called Rex")
    with qtbot.waitSignal(view.map_ready, timeout=90_000):
        view.findChild(QPushButton, "storage_map_refresh").click()
    assert table.item(by_kind["memories"], 4).text() == "2 memories"
    assert custodia_window.findChild(QDialog, "storage_map_window").isVisible()


def test_migrate_button_without_servers_explains_why(qtbot: Any, custodia_window: Any) -> None:
    view = _open_map(qtbot, custodia_window)
    with qtbot.waitSignal(custodia_window.workers.active_changed, timeout=10_000):
        view.findChild(QPushButton, "storage_map_migrate").click()
    dialog = view.migration
    assert isinstance(dialog, MigrationDialog)
    qtbot.waitUntil(lambda: "no server is configured" in dialog.status.text(), timeout=90_000)
    assert not dialog.findChild(QPushButton, "migration_start").isEnabled()


@pytest.mark.server
def test_dry_run_then_migration_with_progress(
    qtbot: Any, custodia_window: Any, fresh_postgres_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = custodia_window.services
    audit_service(services).log.append_many(
        [Draft("test.event", None, {"n": n}, None) for n in range(RECORDS)]
    )
    # The user has just saved the server's DSN in Settings (it applies at restart; the
    # migration reads it from the file).
    config_module.save(replace(services.config, postgres_dsn=fresh_postgres_db))
    assert services.config.postgres_dsn == ""
    view = _open_map(qtbot, custodia_window)
    dialog = view.open_migration()
    with qtbot.waitSignal(dialog.planned, timeout=90_000) as planned:
        pass
    plan = planned.args[0]
    assert not plan.problems and plan.step("audit log").items == RECORDS
    table = dialog.findChild(QTableWidget, "migration_plan")
    steps = {table.item(r, 0).text(): table.item(r, 1).text() for r in range(table.rowCount())}
    assert steps["audit log"] == "copy" and steps["memories"] == "stays"
    assert "Dry run" in dialog.findChild(QPlainTextEdit, "migration_log").toPlainText()
    assert dialog.findChild(QPushButton, "migration_start").isEnabled()
    assert _count(fresh_postgres_db) is None  # the dry run wrote nothing

    progress: list[tuple[int, int]] = []
    dialog.progress.valueChanged.connect(lambda v: progress.append((v, dialog.progress.maximum())))
    with qtbot.waitSignal(dialog.migrated, timeout=60_000):
        dialog.findChild(QPushButton, "migration_start").click()
    assert dialog.report is not None, dialog.status.text()
    assert dialog.report.step("audit log").state == "done"
    assert _count(fresh_postgres_db) == RECORDS
    assert progress and progress[-1][0] == progress[-1][1]
    log = dialog.findChild(QPlainTextEdit, "migration_log").toPlainText()
    assert "profile = server written" in log
    audit_row = [r for r in range(table.rowCount()) if table.item(r, 0).text() == "audit log"]
    assert table.item(audit_row[0], 5).text() == "done"
    assert 'profile = "server"' in (services.config.home / "custodia.toml").read_text()
    qtbot.waitUntil(lambda: not custodia_window.workers.active, timeout=90_000)


def _count(dsn: str) -> int | None:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        if not conn.execute(
            "SELECT 1 FROM information_schema.schemata WHERE schema_name = 'custodia_audit'"
        ).fetchone():
            return None
        row = conn.execute("SELECT count(*) FROM custodia_audit.audit_log").fetchone()
        return int(row[0]) if row else 0


def test_settings_say_what_is_rebuilt_and_migrated(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "information", lambda parent, title, text: shown.append(text))
    dialog = SettingsDialog(Config(home=tmp_path))
    qtbot.addWidget(dialog)
    dialog.fields["postgres_dsn"].setText("postgresql://app@127.0.0.1:5432/custodia")  # type: ignore[attr-defined]
    dialog.fields["neo4j_uri"].setText("bolt://127.0.0.1:7687")  # type: ignore[attr-defined]
    dialog.fields["profile"].setCurrentText("server")  # type: ignore[attr-defined]
    dialog._on_accepted()
    assert dialog.saved is not None and dialog.saved.audit == "postgres"
    (text,) = shown
    assert "To migrate" in text and "audit log → Postgres" in text
    assert "Rebuilt from their source" in text and "graph on the Bolt server" in text
    assert "memories, conversations" in text  # what stays


@pytest.mark.server
def test_cancelled_migration_offers_to_resume(
    qtbot: Any, custodia_window: Any, redis_url: str
) -> None:
    services = custodia_window.services
    config_module.save(replace(services.config, redis_url=redis_url.rsplit("/", 1)[0] + "/5"))
    view = _open_map(qtbot, custodia_window)
    dialog = view.open_migration()
    with qtbot.waitSignal(dialog.planned, timeout=90_000):
        pass
    start = dialog.findChild(QPushButton, "migration_start")
    cancel = dialog.findChild(QPushButton, "migration_cancel")
    with qtbot.waitSignal(dialog.migrated, timeout=90_000):
        start.click()
        assert cancel.text() == "Cancel"
        cancel.click()  # before the worker even starts: it stops at its first check
    assert "Cancelled" in dialog.status.text() and dialog.report is None
    assert start.isEnabled() and start.text() == "Resume"
    assert cancel.text() == "Close"
