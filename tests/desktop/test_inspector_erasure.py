"""CT11 in the window (issue 25 item 3): a ``forget`` done elsewhere — another process on the
same data dir, or another desktop on the same Postgres log — and Refresh no longer shows the
person's decrypted question and answer."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.migrate import dsn_url
from backends.stores.audit_log.keys import KEK_FILE
from backends.stores.audit_log.postgres import Roles, bootstrap
from desktop.inspector import InspectorPane
from desktop.workers import WorkerPool

QUESTION = "¿Qué es la troponina?"


@contextmanager
def _pane(qtbot: Any, config: Config) -> Iterator[InspectorPane]:
    workers = WorkerPool()
    services: list[AuditService] = []

    def source() -> AuditService:
        services.append(AuditService.open(config, checkpoint_every=0))
        return services[0]

    widget = InspectorPane(workers, source)
    qtbot.addWidget(widget)
    widget.resize(1300, 700)
    with qtbot.waitSignal(widget.view_ready, timeout=10_000):
        widget.show()
    try:
        yield widget
    finally:
        workers.shutdown()
        for service in services:
            service.close()


def _turns(config: Config) -> None:
    service = AuditService.open(config, checkpoint_every=0)
    for n, person in enumerate(("student", "ana")):
        service.append(
            "tutor.turn",
            person,
            personal={"question": f"{QUESTION} ({n})", "answer": "Un marcador [1]."},
            cited=["cardio.md#3"],
        )
    service.close()


def _forget_shows_erased_after_refresh(
    qtbot: Any, pane: InspectorPane, forget: Callable[[], object]
) -> None:
    def loaded() -> None:
        assert pane.model.row_at(1) is not None

    qtbot.waitUntil(loaded, timeout=10_000)
    with qtbot.waitSignal(pane.detail_shown, timeout=10_000):
        pane.select_seq(1)
    assert QUESTION in pane.audit_card.toPlainText()  # the window has read the key

    forget()  # elsewhere: not through this window's service

    with qtbot.waitSignal(pane.view_ready, timeout=10_000):
        pane.refresh_log.click()
    assert QUESTION not in pane.audit_card.toPlainText()  # nothing kept from before
    with qtbot.waitSignal(pane.detail_shown, timeout=10_000):
        pane.select_seq(1)
    card = pane.audit_card.toPlainText()
    assert QUESTION not in card and "erased" in card
    assert QUESTION not in pane.audit_detail.toPlainText()
    with qtbot.waitSignal(pane.detail_shown, timeout=10_000):
        pane.select_seq(2)  # someone else is still readable
    assert QUESTION in pane.audit_card.toPlainText()


def test_a_forget_in_another_service_on_the_data_dir(qtbot: Any, tmp_path: Path) -> None:
    config = Config(home=tmp_path / "home")
    _turns(config)
    with _pane(qtbot, config) as pane:

        def forget() -> None:
            other = AuditService.open(config, checkpoint_every=0)
            try:
                assert other.forget("student")
            finally:
                other.close()

        _forget_shows_erased_after_refresh(qtbot, pane, forget)


@pytest.mark.server
def test_a_forget_on_another_desktop_on_the_postgres_log(
    qtbot: Any, tmp_path: Path, fresh_postgres_db: str
) -> None:
    made = bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"w{uuid.uuid4().hex[:10]}"))

    def desktop(name: str) -> Config:
        home = tmp_path / name
        return Config(home=home, profile="server", postgres_dsn=dsn_url(made.app_dsn)).validated()

    _turns(desktop("window"))
    (tmp_path / "other").mkdir()
    shutil.copy2(tmp_path / "window" / KEK_FILE, tmp_path / "other" / KEK_FILE)
    with _pane(qtbot, desktop("window")) as pane:

        def forget() -> None:
            other = AuditService.open(desktop("other"), checkpoint_every=0)
            try:
                assert other.forget("student")
            finally:
                other.close()

        _forget_shows_erased_after_refresh(qtbot, pane, forget)
