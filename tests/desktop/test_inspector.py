"""The audit inspector (CT8) over a real temporary SQLite log."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QPushButton, QTableView, QWidget

from backends.audit.service import AuditService
from backends.config import Config
from desktop.inspector import InspectorPane
from desktop.workers import WorkerPool


@pytest.fixture
def audit_home(tmp_path: Path) -> Path:
    home = tmp_path / "audit-home"
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n in range(40):
        person = ("ana", "beto", "carla")[n % 3]
        event = "tutor.turn" if n % 4 else "tutor.source"
        service.append(event, person, personal={"name": person.title(), "n": n}, n=n)
    service.forget("carla")
    service.close()
    return home


@pytest.fixture
def pane(qtbot: Any, audit_home: Path) -> Iterator[InspectorPane]:
    workers = WorkerPool()
    services: list[AuditService] = []

    def source() -> AuditService:
        services.append(AuditService.open(Config(home=audit_home), checkpoint_every=0))
        return services[0]

    widget = InspectorPane(workers, source)
    qtbot.addWidget(widget)
    widget.resize(1200, 600)
    with qtbot.waitSignal(widget.view_ready, timeout=10_000):
        widget.show()
    yield widget
    workers.shutdown()
    for service in services:
        service.close()


def _tamper(home: Path, seq: int) -> None:
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    conn.execute("DROP TRIGGER audit_log_no_update")
    conn.execute(
        "UPDATE audit_log SET record = replace(record, '\"n\":', '\"n\":7') WHERE seq = ?", (seq,)
    )
    conn.close()


def _wait_rows(qtbot: Any, pane: InspectorPane, rows: int) -> None:
    def loaded() -> None:
        for row in range(rows):
            assert pane.model.row_at(row) is not None

    qtbot.waitUntil(loaded, timeout=10_000)


def test_object_names(pane: InspectorPane) -> None:
    assert pane.objectName() == "inspector"
    assert isinstance(pane.findChild(QTableView, "audit_table"), QTableView)
    for name in ("verify_chain", "export_csv", "export_jsonl", "apply_filters", "clear_filters"):
        assert isinstance(pane.findChild(QPushButton, name), QPushButton), name
    for name in (
        "filter_pseudonym",
        "filter_event",
        "filter_since",
        "filter_until",
        "audit_detail",
    ):
        assert isinstance(pane.findChild(QWidget, name), QWidget), name


def test_shows_the_log_with_statuses(qtbot: Any, pane: InspectorPane) -> None:
    model = pane.model
    assert model.rowCount() == 41  # 40 turns and the erasure
    _wait_rows(qtbot, pane, 41)
    assert model.index(0, 0).data() == "1"
    assert model.index(0, 2).data() == "tutor.source"
    assert model.index(0, 4).data() == "sealed"  # ana
    assert model.index(2, 4).data() == "erased"  # carla
    assert model.index(40, 2).data() == "person.erased"
    assert "41 records" in pane.inspector_status.text()


def test_filters_by_pseudonym_event_and_date(qtbot: Any, pane: InspectorPane) -> None:
    _wait_rows(qtbot, pane, 3)
    ana = pane.model.index(0, 3).data()
    pane.filter_pseudonym.setText(ana)
    pane.filter_event.setCurrentText("tutor.turn")
    with qtbot.waitSignal(pane.view_ready, timeout=10_000):
        qtbot.mouseClick(pane.apply_filters, qtbot_button())
    expected = [n + 1 for n in range(40) if n % 3 == 0 and n % 4]
    assert pane.model.rowCount() == len(expected)
    _wait_rows(qtbot, pane, len(expected))
    assert [int(pane.model.index(r, 0).data()) for r in range(len(expected))] == expected
    pane.filter_pseudonym.clear()
    pane.filter_event.setCurrentText("")
    pane.filter_dates.setChecked(True)
    pane.filter_since.setDate(pane.filter_since.date().addYears(5))
    pane.filter_until.setDate(pane.filter_since.date())
    with qtbot.waitSignal(pane.view_ready, timeout=10_000):
        pane.apply_filters.click()
    assert pane.model.rowCount() == 0


def test_enter_in_the_event_filter_filters_and_adds_no_entry(
    qtbot: Any, pane: InspectorPane
) -> None:
    from PySide6.QtCore import Qt

    _wait_rows(qtbot, pane, 41)
    known = [pane.filter_event.itemText(i) for i in range(pane.filter_event.count())]
    edit = pane.filter_event.lineEdit()
    assert edit is not None
    for typed, rows in (("person.erased", 1), ("no.such.event", 0)):
        edit.setText(typed)
        with qtbot.waitSignal(pane.view_ready, timeout=10_000):
            qtbot.keyClick(edit, Qt.Key.Key_Return)
        assert pane.model.rowCount() == rows
    assert [pane.filter_event.itemText(i) for i in range(pane.filter_event.count())] == known


def qtbot_button() -> Any:
    from PySide6.QtCore import Qt

    return Qt.MouseButton.LeftButton


def test_detail_view_reveals_and_marks_erased(qtbot: Any, pane: InspectorPane) -> None:
    _wait_rows(qtbot, pane, 3)
    with qtbot.waitSignal(pane.detail_shown, timeout=10_000):
        pane.audit_table.selectRow(0)
    text = pane.audit_detail.toPlainText()
    shown = json.loads(text.split("\n\n")[0])
    assert shown["personal"] == {"name": "Ana", "n": 0} and shown["status"] == "sealed"
    assert text.endswith(pane.service.entry(1).record)  # type: ignore[union-attr]
    with qtbot.waitSignal(pane.detail_shown, timeout=10_000):
        pane.audit_table.selectRow(2)
    shown = json.loads(pane.audit_detail.toPlainText().split("\n\n")[0])
    assert shown["personal"] is None and shown["status"] == "erased"


def test_verify_intact_chain(qtbot: Any, pane: InspectorPane) -> None:
    with qtbot.waitSignal(pane.verified, timeout=10_000) as blocker:
        qtbot.mouseClick(pane.verify_chain, qtbot_button())
    assert blocker.args[0].ok
    assert "Chain intact: 41 records" in pane.verify_status.text()


def test_verify_flags_and_selects_the_tampered_row(
    qtbot: Any, pane: InspectorPane, audit_home: Path
) -> None:
    _tamper(audit_home, 23)
    pane.filter_event.setCurrentText("tutor.source")  # the broken row is not in this view
    with qtbot.waitSignal(pane.view_ready, timeout=10_000):
        pane.apply_filters.click()
    with qtbot.waitSignal(pane.verified, timeout=10_000) as blocker:
        pane.verify_chain.click()
    result = blocker.args[0]
    assert not result.ok and result.broken.seq == 23
    qtbot.waitUntil(lambda: pane.selected_seq() == 23, timeout=10_000)
    assert "Broken at seq 23" in pane.verify_status.text()
    assert pane.model.broken_seq == 23
    _wait_rows(qtbot, pane, 23)
    assert pane.model.index(22, 0).data(0x08) is not None  # BackgroundRole: flagged


def test_deleted_row_shows_as_missing(qtbot: Any, pane: InspectorPane, audit_home: Path) -> None:
    conn = sqlite3.connect(audit_home / "audit.sqlite3", isolation_level=None)
    conn.execute("DROP TRIGGER audit_log_no_delete")
    conn.execute("DELETE FROM audit_log WHERE seq = 5")
    conn.close()
    with qtbot.waitSignal(pane.view_ready, timeout=10_000):
        pane.refresh_log.click()
    _wait_rows(qtbot, pane, 10)
    assert pane.model.index(4, 0).data() == "5"
    assert "missing" in pane.model.index(4, 1).data()
    with qtbot.waitSignal(pane.verified, timeout=10_000) as blocker:
        pane.verify_chain.click()
    assert blocker.args[0].broken.seq == 5
    qtbot.waitUntil(lambda: pane.selected_seq() == 5, timeout=10_000)


def test_export_csv_and_jsonl(
    qtbot: Any, pane: InspectorPane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out.jsonl"
    monkeypatch.setattr(pane, "_ask_export_path", lambda fmt: target)
    with qtbot.waitSignal(pane.exported, timeout=10_000) as blocker:
        pane.export_jsonl.click()
    assert blocker.args[0] == 41
    lines = target.read_text().splitlines()
    # The name may only leave sealed: as a JSON string it would be quoted, and quotes
    # never occur in the base64 blob (a bare "Ana" can, by chance, inside one).
    assert len(lines) == 41 and '"Ana"' not in target.read_text()
    csv_target = tmp_path / "out.csv"
    monkeypatch.setattr(pane, "_ask_export_path", lambda fmt: csv_target)
    with qtbot.waitSignal(pane.exported, timeout=10_000):
        pane.export_csv.click()
    assert csv_target.read_text().startswith("seq,time,event")


def test_an_export_with_questions_and_answers_is_confirmed_first(
    qtbot: Any, pane: InspectorPane, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "revealed.jsonl"
    monkeypatch.setattr(pane, "_ask_export_path", lambda fmt: target)
    answers: list[bool] = [False]
    monkeypatch.setattr(pane, "_confirm_reveal", lambda: answers.pop(0))
    pane.export_reveal.setChecked(True)
    pane.export_jsonl.click()  # declined: nothing is written
    qtbot.wait(200)
    assert not target.exists()
    answers.append(True)
    with qtbot.waitSignal(pane.exported, timeout=10_000) as blocker:
        pane.export_jsonl.click()
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(rows) == blocker.args[0] and all("personal" in r for r in rows)
    assert any(isinstance(r["personal"], dict) for r in rows)


def test_opens_from_the_view_menu(qtbot: Any, custodia_window: Any) -> None:
    action = custodia_window.findChild(QAction, "action_inspector")
    assert action is not None and action.shortcut().toString() == "Ctrl+I"
    action.trigger()
    dock = custodia_window.findChild(QDockWidget, "inspector_dock")
    assert dock is not None and dock.isVisible()
    pane = dock.findChild(InspectorPane, "inspector")
    assert pane is not None
    qtbot.waitUntil(lambda: pane.service is not None, timeout=10_000)
    assert pane.model.rowCount() == 0  # a fresh data dir has an empty log
    action.trigger()  # again: the same pane
    assert custodia_window.findChildren(QDockWidget, "inspector_dock") == [dock]


@pytest.mark.slow
def test_a_million_rows_page_lazily(qtbot: Any, tmp_path: Path) -> None:
    """1M records: the count is instant, scrolling anywhere loads only the pages it shows."""
    from bench.bench_audit import bulk_build

    home = tmp_path / "big"
    home.mkdir(mode=0o700)
    bulk_build(home / "audit.sqlite3", 1_000_000).close()
    workers = WorkerPool()
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    widget = InspectorPane(workers, lambda: service)
    qtbot.addWidget(widget)
    try:
        with qtbot.waitSignal(widget.view_ready, timeout=30_000):
            widget.show()
        assert widget.model.rowCount() == 1_000_000
        for target in (500_000, 999_999, 123_456):
            widget.audit_table.scrollTo(widget.model.index(target, 0))
            qtbot.waitUntil(lambda t=target: widget.model.row_at(t) is not None, timeout=10_000)
            assert widget.model.index(target, 0).data() == str(target + 1)
        assert widget.model.loaded_pages <= 12
    finally:
        workers.shutdown()
        service.close()


def test_unavailable_log_is_reported(qtbot: Any, tmp_path: Path) -> None:
    from backends.errors import StoreUnavailableError

    def source() -> AuditService:
        raise StoreUnavailableError("postgres at 127.0.0.1:1 refused the connection")

    workers = WorkerPool()
    widget = InspectorPane(workers, source)
    qtbot.addWidget(widget)
    try:
        qtbot.waitUntil(lambda: "unavailable" in widget.inspector_status.text(), timeout=10_000)
        assert "refused the connection" in widget.inspector_status.text()
        assert not widget.verify_chain.isEnabled()
    finally:
        workers.shutdown()


# -- the record card, proofs and checkpoints (issue 28, CT10) --------------------------------
@pytest.fixture
def turn_home(tmp_path: Path) -> Path:
    """A log with real-looking tutor turns, one erased person, and a checkpoint."""
    home = tmp_path / "turn-home"
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    for n, person in enumerate(("ana", "beto", "ana")):
        service.append(
            "tutor.turn",
            person,
            personal={
                "question": f"¿Qué es la troponina? ({n})",
                "heading": "Según tus apuntes",
                "answer": "La troponina es un marcador de daño miocárdico [1].",
                "unsupported": ["Siempre sube a las 2 horas."],
                "language": "es",
            },
            cited=["cardio.md#3"],
            chunks=["cardio.md#3", "cardio.md#4"],
            model="scripted",
            grounding={"covered": True, "unsupported": 1},
        )
    service.checkpoint()
    service.forget("beto")
    service.checkpoint()
    service.close()
    return home


@pytest.fixture
def turn_pane(qtbot: Any, turn_home: Path) -> Iterator[InspectorPane]:
    workers = WorkerPool()
    services: list[AuditService] = []

    def source() -> AuditService:
        services.append(AuditService.open(Config(home=turn_home), checkpoint_every=0))
        return services[0]

    widget = InspectorPane(workers, source)
    qtbot.addWidget(widget)
    widget.resize(1300, 700)
    with qtbot.waitSignal(widget.view_ready, timeout=10_000):
        widget.show()
    yield widget
    workers.shutdown()
    for service in services:
        service.close()


def test_a_record_reads_as_a_card_with_the_json_behind_a_toggle(
    qtbot: Any, turn_pane: InspectorPane
) -> None:
    _wait_rows(qtbot, turn_pane, 4)
    with qtbot.waitSignal(turn_pane.detail_shown, timeout=10_000):
        turn_pane.select_seq(1)
    card = turn_pane.audit_card.toPlainText()
    for expected in (
        "Who",
        "Asked",
        "¿Qué es la troponina? (0)",
        "Shown",
        "marcador de daño miocárdico",
        "Withheld",
        "Siempre sube a las 2 horas.",
        "Sources cited",
        "cardio.md#3",
    ):
        assert expected in card, expected
    assert not turn_pane.audit_detail.isVisibleTo(turn_pane)
    turn_pane.show_json.setChecked(True)
    assert turn_pane.audit_detail.isVisibleTo(turn_pane)
    assert '"question"' in turn_pane.audit_detail.toPlainText()
    with qtbot.waitSignal(turn_pane.detail_shown, timeout=10_000):
        turn_pane.select_seq(2)  # beto, erased
    assert "erased" in turn_pane.audit_card.toPlainText()
    assert "troponina" not in turn_pane.audit_card.toPlainText()


def test_erased_rows_keep_dark_text_on_their_light_background(
    qtbot: Any, turn_pane: InspectorPane
) -> None:
    from PySide6.QtCore import Qt

    _wait_rows(qtbot, turn_pane, 4)
    index = turn_pane.model.index(1, 2)  # beto's turn
    background = index.data(Qt.ItemDataRole.BackgroundRole).color()
    foreground = index.data(Qt.ItemDataRole.ForegroundRole).color()
    assert background.lightness() > 200 and foreground.lightness() < 60


def test_export_proof_of_the_selected_record_verifies_with_the_key_alone(
    qtbot: Any, turn_pane: InspectorPane, tmp_path: Path
) -> None:
    from backends.audit import check_inclusion

    _wait_rows(qtbot, turn_pane, 4)
    with qtbot.waitSignal(turn_pane.detail_shown, timeout=10_000):
        turn_pane.select_seq(3)
    assert turn_pane.export_proof.isEnabled()
    target = tmp_path / "r3.tlog-proof"
    turn_pane._ask_proof_path = lambda seq: target  # type: ignore[method-assign]
    with qtbot.waitSignal(turn_pane.proof_exported, timeout=10_000):
        turn_pane.export_proof.click()
    key = turn_pane.verifier_key.text()
    assert key.startswith("custodia/audit/")
    assert check_inclusion(target.read_text(), key).seq == 3
    dialog = turn_pane.proof_dialog()
    qtbot.addWidget(dialog)
    dialog.proof_path.setText(str(target))
    assert dialog.run_check() and dialog.outcome.text().startswith("OK record 3")
    target.write_text(target.read_text().replace("index 2", "index 1"))
    assert not dialog.run_check() and "NOT" in dialog.outcome.text()
    turn_pane.copy_key.click()
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == key


def test_the_checkpoints_list_names_the_first_one_the_log_breaks(
    qtbot: Any, turn_pane: InspectorPane, turn_home: Path
) -> None:
    with qtbot.waitSignal(turn_pane.checkpoints_checked, timeout=10_000) as ok:
        turn_pane.check_checkpoints.click()
    assert [s.ok for s in ok.args[0]] == [True, True]
    assert "consistent with all 2" in turn_pane.checkpoints_status.text()
    # someone with the file rewrites record 4 (after the first checkpoint) and rebuilds the tree
    conn = sqlite3.connect(turn_home / "audit.sqlite3", isolation_level=None)
    for table in ("audit_log", "audit_tree"):
        for verb in ("update", "delete"):
            conn.execute(f"DROP TRIGGER {table}_no_{verb}")
    conn.execute("UPDATE audit_log SET record = replace(record, 'person', 'persona') WHERE seq = 4")
    conn.execute("DELETE FROM audit_tree")
    conn.close()
    assert turn_pane.service is not None
    turn_pane.service.log.build_tree()
    with qtbot.waitSignal(turn_pane.checkpoints_checked, timeout=10_000) as broken:
        turn_pane.check_checkpoints.click()
    assert [(s.ok, s.first_broken) for s in broken.args[0]] == [(True, False), (False, True)]
    assert "seq 4" in turn_pane.checkpoints_status.text()
    assert "BROKEN" in turn_pane.checkpoints_list.item(1).text()


def test_the_inspector_reads_a_read_only_copy_without_writing_a_byte(
    qtbot: Any, turn_home: Path, tmp_path: Path
) -> None:
    import hashlib
    import shutil

    backup = tmp_path / "backup"
    shutil.copytree(turn_home, backup)
    for path in [*backup.rglob("*"), backup]:  # chmod -R a-w
        path.chmod(path.stat().st_mode & ~0o222)

    def digests() -> dict[str, str]:
        return {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(backup.iterdir())
            if p.is_file()
        }

    before = digests()
    workers = WorkerPool()
    services: list[AuditService] = []

    def source() -> AuditService:
        services.append(AuditService.open(Config(home=backup), checkpoint_every=0))
        return services[0]

    pane = InspectorPane(workers, source)
    qtbot.addWidget(pane)
    try:
        with qtbot.waitSignal(pane.view_ready, timeout=10_000):
            pane.show()
        assert services[0].read_only
        _wait_rows(qtbot, pane, 4)
        with qtbot.waitSignal(pane.detail_shown, timeout=10_000):
            pane.select_seq(1)
        assert "troponina" in pane.audit_card.toPlainText()
        with qtbot.waitSignal(pane.verified, timeout=10_000) as done:
            pane.verify_chain.click()
        assert done.args[0].ok
        with qtbot.waitSignal(pane.checkpoints_checked, timeout=10_000):
            pane.check_checkpoints.click()
        target = tmp_path / "ro.tlog-proof"
        with qtbot.waitSignal(pane.proof_exported, timeout=10_000):
            pane.export_proof_to(3, target)
    finally:
        workers.shutdown()
        for service in services:
            service.close()
        after = digests()
        for path in [*backup.rglob("*"), backup]:
            path.chmod(0o700)
    assert after == before


def test_a_reviewer_finds_a_person_by_name_through_the_keys(
    qtbot: Any, turn_pane: InspectorPane
) -> None:
    _wait_rows(qtbot, turn_pane, 4)
    turn_pane.filter_person.setText("  ana ")
    with qtbot.waitSignal(turn_pane.view_ready, timeout=10_000):
        turn_pane.apply_filters.click()
    assert turn_pane.model.rowCount() == 2  # ana's two turns
    assert "the person is p-" in turn_pane.inspector_status.text()
    turn_pane.filter_person.setText("beto")  # erased: no key, so no lookup
    with qtbot.waitSignal(turn_pane.view_ready, timeout=10_000):
        turn_pane.apply_filters.click()
    assert turn_pane.model.rowCount() == 0
    assert "No key for that name" in turn_pane.inspector_status.text()
    assert turn_pane.service is not None
    assert turn_pane.service.pseudonym_of("nobody") is None


def test_forget_a_person_in_the_window(qtbot: Any, turn_pane: InspectorPane) -> None:
    _wait_rows(qtbot, turn_pane, 4)
    turn_pane._ask_forget = lambda: "ana"  # type: ignore[method-assign]
    with (
        qtbot.waitSignal(turn_pane.view_ready, timeout=10_000),
        qtbot.waitSignal(turn_pane.forgotten, timeout=10_000) as done,
    ):
        turn_pane.forget_person.click()
    assert done.args[0].startswith("p-")
    assert "Forgotten" in turn_pane.inspector_status.text()
    assert turn_pane.model.rowCount() == 5  # + the person.erased record
    _wait_rows(qtbot, turn_pane, 5)
    assert turn_pane.model.index(0, 4).data() == "erased"
    with qtbot.waitSignal(turn_pane.detail_shown, timeout=10_000):
        turn_pane.select_seq(1)
    assert "troponina" not in turn_pane.audit_card.toPlainText()


def test_the_checkpoints_are_checked_when_their_tab_is_shown(
    qtbot: Any, turn_pane: InspectorPane
) -> None:
    with qtbot.waitSignal(turn_pane.checkpoints_checked, timeout=10_000):
        turn_pane.inspector_tabs.setCurrentIndex(1)
    assert turn_pane.checkpoints_list.count() == 2


def test_the_docked_inspector_fits_the_window_at_its_minimum_size(
    qtbot: Any, custodia_window: Any
) -> None:
    """Tester: at 760×480 the inspector's filters and record card were cut at the right and
    its last row ran under the status bar; now the dock scrolls what does not fit. Issue 27:
    its rows wrap (filters on two, the verdict and the log's actions on their own), so the
    pane's width fits the window's whole and nothing scrolls sideways."""
    from desktop.inspector import open_inspector

    custodia_window.resize(760, 480)
    pane = open_inspector(custodia_window)
    dock = custodia_window.findChild(QDockWidget, "inspector_dock")
    assert pane.minimumSizeHint().width() <= 760 - 20  # the dock's frame and scroll bar
    assert dock.widget().minimumSizeHint().width() <= 760  # what the dock asks of the window
    assert dock.widget().minimumSizeHint().height() <= 480 // 2
