"""The multi-agent tab driven like a user would, with the scripted model (pytest-qt).

Each test waits on signals (``session_finished``, ``sessions_loaded``) or on widget state,
never on sleeps.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QTextBrowser,
    QTreeWidget,
    QWidget,
)

from backends.config import Config
from backends.models.chat import Prompt, ScriptedChat, ShouldStop
from backends.models.embedders import HashingEmbedder
from backends.multiagent.service import SESSIONS_FILE
from backends.multiagent.sessions import SessionStore
from backends.services import Services
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore
from backends.stores.vectors import MemoryItem
from backends.stores.vectors.qdrant import QdrantSemanticMemory
from desktop.tabs.multiagent import MultiAgentTab
from tests.backends.multiagent.elsewhere import CHILD_REPLIES, RunningElsewhere, stored_row

PLAN = "1. Research CSV dialects\n2. Write a python function to parse CSV"
REPLIES = [PLAN, "Dialects differ in quoting.", "def parse(text): ...", "Good. Final answer."]
TIMEOUT = 30_000


class GatedChat(ScriptedChat):
    """Scripted; the call number ``gate_at`` waits until the test opens the gate."""

    def __init__(self, replies: list[str], gate_at: int = 0) -> None:
        super().__init__(replies=replies)
        self.gate_at = gate_at
        self.reached = threading.Event()
        self.gate = threading.Event()

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        if len(self.calls) + 1 == self.gate_at:
            self.reached.set()
            self.gate.wait(20)
        yield from super().stream(prompt, should_stop)


@pytest.fixture
def chat() -> Iterator[GatedChat]:
    model = GatedChat(list(REPLIES))
    yield model
    model.gate.set()  # never leave a worker waiting


@pytest.fixture
def profile() -> str:
    """``embedded``; a test parametrised with ``profile="redis"`` runs on a real Redis."""
    return "embedded"


@pytest.fixture
def custodia_services(
    custodia_config: Config, chat: GatedChat, profile: str, request: pytest.FixtureRequest
) -> Iterator[Services]:
    config = custodia_config
    client = None
    if profile == "redis":
        import redis

        url = request.getfixturevalue("redis_url")
        config = replace(custodia_config, profile="server", redis_url=url).validated()
        client = redis.Redis.from_url(url)
        clear_custodia_keys(client)  # sessions of earlier tests would show in the list
    services = Services(config, chat=chat)
    yield services
    services.close()
    if client is not None:
        clear_custodia_keys(client)
        client.close()


def clear_custodia_keys(client: Any) -> None:
    for pattern in ("custodia:session:*", "custodia:ticket:*"):
        for key in client.scan_iter(pattern):
            client.delete(key)


@pytest.fixture
def tab(custodia_window: Any, qtbot: Any) -> MultiAgentTab:
    widget = custodia_window.findChild(QWidget, "multiagent")
    assert widget is not None
    run = widget.findChild(QPushButton, "run_task")
    qtbot.waitUntil(run.isEnabled, timeout=TIMEOUT)
    return widget


def child(tab: QWidget, kind: type, name: str) -> Any:
    found = tab.findChild(kind, name)
    assert found is not None, name
    return found


def feed_events(tab: QWidget) -> list[dict[str, Any]]:
    feed = child(tab, QListWidget, "feed")
    return [feed.item(i).data(Qt.ItemDataRole.UserRole) for i in range(feed.count())]


def searched(results: QListWidget) -> bool:
    """The search's answer is shown (not its "Searching…" line)."""
    return results.count() > 0 and not results.item(0).text().startswith("Searching")


def run_task(tab: QWidget, qtbot: Any, text: str) -> None:
    child(tab, QLineEdit, "task_input").setText(text)
    qtbot.mouseClick(child(tab, QPushButton, "run_task"), Qt.MouseButton.LeftButton)


@pytest.mark.parametrize("profile", ["embedded", pytest.param("redis", marks=pytest.mark.server)])
def test_a_task_runs_live_through_the_tab(
    tab: MultiAgentTab, qtbot: Any, chat: GatedChat, profile: str
) -> None:
    chat.gate_at = 3  # the coder waits: what happened so far must already be on screen
    phase = child(tab, QLabel, "phase")
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        run_task(tab, qtbot, "Parse CSV files")
        qtbot.waitUntil(chat.reached.is_set, timeout=TIMEOUT)
        qtbot.waitUntil(
            lambda: any(e["kind"] == "expert_result" and e["expert"] == "researcher"
                        for e in feed_events(tab)),
            timeout=TIMEOUT,
        )  # fmt: skip
        assert "<b>● working</b>" in phase.text()
        assert child(tab, QPushButton, "cancel_task").isEnabled()
        assert not child(tab, QPushButton, "run_task").isEnabled()
        qtbot.waitUntil(lambda: child(tab, QTreeWidget, "tickets").topLevelItemCount() == 2)
        chat.gate.set()
    session_id, final_phase = finished.args
    assert final_phase == "done"

    events = feed_events(tab)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["text"] for e in events if e["kind"] == "phase"] == [
        "planning",
        "working",
        "reviewing",
    ]
    assert events[-1]["kind"] == "session_finished"
    # finished, and what it is worth: the scripted coder wrote no code, nothing was run
    assert "● unverified draft</b>" in phase.text() and "done" not in phase.text()

    sessions = child(tab, QTreeWidget, "sessions")
    qtbot.waitUntil(lambda: sessions.topLevelItemCount() == 1)
    assert sessions.topLevelItem(0).data(0, Qt.ItemDataRole.UserRole) == session_id

    tickets = child(tab, QTreeWidget, "tickets")
    rows = [tickets.topLevelItem(i) for i in range(tickets.topLevelItemCount())]
    assert [r.text(2) for r in rows] == ["closed", "closed"]
    assert [r.text(1) for r in rows] == ["reviewer", "reviewer"]
    left = [r.data(3, Qt.ItemDataRole.UserRole) for r in rows]
    assert all(0 < s <= 1800 for s in left)
    assert all(":" in r.text(3) for r in rows)  # a countdown, e.g. 29:59

    health = child(tab, QLabel, "layer_health")
    assert "✗" not in health.text() and "saved sessions" in health.text()
    assert "L1" not in health.text() and "L2" not in health.text()  # no internal words
    assert ("(redis)" in health.text()) == (profile == "redis")
    assert not child(tab, QPushButton, "cancel_task").isEnabled()
    assert not child(tab, QPushButton, "resume_task").isEnabled()  # done: nothing to resume


def test_memory_search_finds_what_the_experts_stored(tab: MultiAgentTab, qtbot: Any) -> None:
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Parse CSV files")
    search = child(tab, QLineEdit, "memory_search")
    results = child(tab, QListWidget, "memory_results")
    search.setText("python function parse")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: searched(results), timeout=TIMEOUT)
    assert any("def parse(text)" in results.item(i).text() for i in range(results.count()))


def test_cancel_then_resume(tab: MultiAgentTab, qtbot: Any, chat: GatedChat) -> None:
    chat.gate_at = 2  # the researcher waits
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as stopped:
        run_task(tab, qtbot, "Parse CSV files")
        qtbot.waitUntil(chat.reached.is_set, timeout=TIMEOUT)
        qtbot.mouseClick(child(tab, QPushButton, "cancel_task"), Qt.MouseButton.LeftButton)
        chat.gate.set()
    assert stopped.args[1] == "cancelled"
    assert feed_events(tab)[-1]["outcome"] == "cancelled"
    resume = child(tab, QPushButton, "resume_task")
    assert resume.isEnabled()
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as resumed:
        qtbot.mouseClick(resume, Qt.MouseButton.LeftButton)
    assert resumed.args == [stopped.args[0], "done"]
    events = feed_events(tab)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert any(e.get("resumed") for e in events)


def test_phase_filter(tab: MultiAgentTab, qtbot: Any) -> None:
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Parse CSV files")
    sessions = child(tab, QTreeWidget, "sessions")
    combo = child(tab, QComboBox, "phase_filter")
    with qtbot.waitSignal(tab.sessions_loaded, timeout=TIMEOUT) as loaded:
        combo.setCurrentIndex(combo.findData("failed"))
    assert loaded.args == [0] and sessions.topLevelItemCount() == 0
    with qtbot.waitSignal(tab.sessions_loaded, timeout=TIMEOUT) as loaded:
        combo.setCurrentIndex(combo.findData("done"))
    assert loaded.args == [1]


def test_enter_twice_starts_one_session(tab: MultiAgentTab, qtbot: Any) -> None:
    task = child(tab, QLineEdit, "task_input")
    run = child(tab, QPushButton, "run_task")
    task.setText("Parse CSV files")
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        qtbot.keyClick(task, Qt.Key.Key_Return)
        # Before the session exists: the button and the field already say "not now".
        read_only, run_enabled = task.isReadOnly(), run.isEnabled()
        qtbot.keyClick(task, Qt.Key.Key_Return)
    with qtbot.waitSignal(tab.sessions_loaded, timeout=TIMEOUT) as loaded:
        qtbot.mouseClick(child(tab, QWidget, "refresh_sessions"), Qt.MouseButton.LeftButton)
    assert loaded.args == [1]
    assert read_only and not run_enabled
    assert run.isEnabled() and not task.isReadOnly()


def row_phases(tab: QWidget) -> dict[str, str]:
    """The sessions list as shown: session id → phase column."""
    sessions = child(tab, QTreeWidget, "sessions")
    rows = [sessions.topLevelItem(i) for i in range(sessions.topLevelItemCount())]
    return {r.data(0, Qt.ItemDataRole.UserRole): r.text(1) for r in rows}


def test_session_finished_fires_once_the_list_shows_the_final_phase(
    tab: MultiAgentTab, qtbot: Any
) -> None:
    at_signal: list[dict[str, str]] = []

    def snapshot(session_id: str, phase: str) -> bool:
        at_signal.append(row_phases(tab))  # the list at the moment the signal is emitted
        return True

    with qtbot.waitSignal(
        tab.session_finished, timeout=TIMEOUT, check_params_cb=snapshot
    ) as finished:
        run_task(tab, qtbot, "Parse CSV files")
    assert at_signal == [{finished.args[0]: "unverified draft"}]


def test_cancelled_in_planning_marks_the_phase_it_stopped_in(
    tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    chat.gate_at = 1  # the planner waits
    phase = child(tab, QLabel, "phase")
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as stopped:
        run_task(tab, qtbot, "Parse CSV files")
        qtbot.waitUntil(chat.reached.is_set, timeout=TIMEOUT)
        cancel = child(tab, QPushButton, "cancel_task")
        qtbot.waitUntil(cancel.isEnabled, timeout=TIMEOUT)
        qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)
        chat.gate.set()
    assert stopped.args[1] == "cancelled"
    assert "✕ planning (cancelled)</b>" in phase.text()
    assert "○ working" in phase.text()
    assert phase.property("stopped_at") == "planning"


@pytest.fixture
def interrupted(custodia_config: Config) -> str:
    """A session a killed process left in phase ``working`` (before the window opens)."""
    store = SessionStore(
        MemoryTTLStore(), lambda: SqliteSessionMirror(custodia_config.path(SESSIONS_FILE))
    )
    session = Session.new("Parse CSV files (interrupted)")
    session.phase = "working"
    store.save(session)
    store.close()
    return session.session_id


def test_an_interrupted_session_resumes_after_a_restart(
    interrupted: str, tab: MultiAgentTab, qtbot: Any
) -> None:
    sessions = child(tab, QTreeWidget, "sessions")
    qtbot.waitUntil(lambda: sessions.topLevelItemCount() == 1, timeout=TIMEOUT)
    item = sessions.topLevelItem(0)
    assert "interrupted" in item.text(1)
    sessions.setCurrentItem(item)
    resume = child(tab, QPushButton, "resume_task")
    qtbot.waitUntil(resume.isEnabled, timeout=TIMEOUT)
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        qtbot.mouseClick(resume, Qt.MouseButton.LeftButton)
    assert finished.args == [interrupted, "done"]


@pytest.fixture
def old_memory(custodia_config: Config) -> None:
    """Semantic memory built with another embedder (64-d) before the window opens."""
    memory = QdrantSemanticMemory(HashingEmbedder(64), path=custodia_config.qdrant_path)
    memory.add("agent_results", MemoryItem("parse csv with the csv module", "old", "coder"))
    memory.close()


def test_a_changed_embedder_offers_reembed_all(
    old_memory: None, tab: MultiAgentTab, qtbot: Any
) -> None:
    button = child(tab, QPushButton, "reembed_memory")
    status = child(tab, QLabel, "memory_status")
    qtbot.waitUntil(button.isVisible, timeout=TIMEOUT)
    assert "re-embedded" in status.text()
    # A run refuses to use a memory it cannot compare with (never an empty result).
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        run_task(tab, qtbot, "Parse CSV files")
    assert finished.args[1] == "failed"
    assert "dimension" in child(tab, QLabel, "multiagent_error").text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not button.isVisible(), timeout=TIMEOUT)
    assert "1 item(s) remembered (hashing-384, 384-d)" in status.text()
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        qtbot.mouseClick(child(tab, QPushButton, "resume_task"), Qt.MouseButton.LeftButton)
    assert finished.args[1] == "done"


def stored(config: Config, session_id: str) -> tuple[float, str, str]:
    """The session's SQLite row as another program reads it: (updated_at, phase, data)."""
    return stored_row(config.home, session_id)


def test_a_session_another_process_runs_is_refused_here_until_that_process_dies(
    interrupted: str, custodia_config: Config, tab: MultiAgentTab, qtbot: Any
) -> None:
    sessions = child(tab, QTreeWidget, "sessions")
    resume = child(tab, QPushButton, "resume_task")
    qtbot.waitUntil(lambda: sessions.topLevelItemCount() == 1, timeout=TIMEOUT)
    sessions.setCurrentItem(sessions.topLevelItem(0))
    qtbot.waitUntil(resume.isEnabled, timeout=TIMEOUT)  # listed as interrupted

    env = {
        "CUSTODIA_HOME": str(custodia_config.home),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
        "CUSTODIA_PROFILE": "embedded",
    }
    # A terminal resumes it meanwhile (the planner answers, the researcher is held).
    with RunningElsewhere(env, resume=interrupted, block_at=2) as other:
        before = stored(custodia_config, interrupted)
        with qtbot.waitSignal(tab.run_refused, timeout=TIMEOUT) as refused:
            qtbot.mouseClick(resume, Qt.MouseButton.LeftButton)  # the list is not fresh yet
        message = (
            f"session {interrupted} is running in another Custodia process (pid {other.pid}); "
            "wait for it or stop it"
        )
        assert refused.args == [interrupted, message]
        assert child(tab, QLabel, "multiagent_error").text() == message
        assert stored(custodia_config, interrupted) == before  # untouched
        qtbot.waitUntil(
            lambda: (
                f"(running in another process, pid {other.pid})" in sessions.topLevelItem(0).text(1)
            ),
            timeout=TIMEOUT,
        )
        assert not resume.isEnabled()
        assert f"pid {other.pid}" in resume.toolTip()  # why Resume is off, and who runs it
        sessions.setCurrentItem(sessions.topLevelItem(0))
        qtbot.waitUntil(
            lambda: (
                f"running in another Custodia process pid {other.pid}"
                in child(tab, QLabel, "phase").text()
            ),
            timeout=TIMEOUT,
        )
        other.kill()  # kill -9

    with qtbot.waitSignal(tab.sessions_loaded, timeout=TIMEOUT):
        qtbot.mouseClick(child(tab, QWidget, "refresh_sessions"), Qt.MouseButton.LeftButton)
    assert "(interrupted)" in sessions.topLevelItem(0).text(1)
    qtbot.waitUntil(resume.isEnabled, timeout=TIMEOUT)
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        qtbot.mouseClick(resume, Qt.MouseButton.LeftButton)
    assert finished.args == [interrupted, "done"]
    # The other process' work was kept and continued, not redone over it.
    kept = json.loads(before[2])
    final = json.loads(stored(custodia_config, interrupted)[2])
    assert final["plan"] == CHILD_REPLIES[0]
    assert final["events"][: len(kept["events"])] == kept["events"]
    assert [e["seq"] for e in final["events"]] == list(range(1, len(final["events"]) + 1))


def show_session(tab: MultiAgentTab, qtbot: Any, session_id: str) -> None:
    """Select ``session_id`` in the list and wait until its feed is shown."""
    sessions = child(tab, QTreeWidget, "sessions")
    qtbot.waitUntil(lambda: session_id in row_phases(tab), timeout=TIMEOUT)
    rows = [sessions.topLevelItem(i) for i in range(sessions.topLevelItemCount())]
    sessions.setCurrentItem(
        next(r for r in rows if r.data(0, Qt.ItemDataRole.UserRole) == session_id)
    )
    qtbot.waitUntil(
        lambda: tab.current is not None and tab.current.session_id == session_id,
        timeout=TIMEOUT,
    )


def test_cancel_applies_only_to_the_session_shown(
    interrupted: str, tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    chat.gate_at = 3  # the coder waits
    cancel = child(tab, QPushButton, "cancel_task")
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        run_task(tab, qtbot, "Parse CSV files")
        qtbot.waitUntil(chat.reached.is_set, timeout=TIMEOUT)
        qtbot.waitUntil(cancel.isEnabled, timeout=TIMEOUT)
        running = tab.current.session_id
        own_tip = cancel.toolTip()

        show_session(tab, qtbot, interrupted)  # another session, the run goes on
        enabled_elsewhere, tip_elsewhere = cancel.isEnabled(), cancel.toolTip()
        qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)  # nothing to cancel here
        assert not child(tab, QPushButton, "resume_task").isEnabled()  # one run at a time

        show_session(tab, qtbot, running)  # back: Cancel is for this one again
        enabled_back = cancel.isEnabled()
        chat.gate.set()
    assert finished.args == [running, "done"]  # the click elsewhere cancelled nothing
    assert not enabled_elsewhere and enabled_back
    assert "Parse CSV files" in own_tip
    assert "Parse CSV files" in tip_elsewhere and "Select it" in tip_elsewhere


def test_a_run_ending_does_not_steal_the_view(
    interrupted: str, tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    chat.gate_at = 3  # the coder waits
    title = child(tab, QLabel, "feed_title")
    at_signal: list[tuple[str, dict[str, str]]] = []

    def snapshot(session_id: str, phase: str) -> bool:
        assert tab.current is not None
        at_signal.append((tab.current.session_id, row_phases(tab)))
        return True

    with qtbot.waitSignal(
        tab.session_finished, timeout=TIMEOUT, check_params_cb=snapshot
    ) as finished:
        run_task(tab, qtbot, "Parse CSV files")
        qtbot.waitUntil(chat.reached.is_set, timeout=TIMEOUT)
        show_session(tab, qtbot, interrupted)
        chat.gate.set()
    running = finished.args[0]
    # The view stayed on the session the user chose; the list row shows the end.
    [(shown, rows)] = at_signal
    assert shown == interrupted and "(interrupted)" in title.text()
    assert rows[running] == "unverified draft"
    notice = child(tab, QLabel, "multiagent_notice")
    assert notice.isVisible() and notice.property("session") == running
    assert "Parse CSV files" in notice.text() and "unverified draft" in notice.text()

    notice.linkActivated.emit("show")  # "Show it"
    qtbot.waitUntil(lambda: tab.current.session_id == running, timeout=TIMEOUT)
    assert feed_events(tab)[-1]["outcome"] == "done"
    assert not notice.isVisible()


def test_memory_search_hides_hits_below_the_recall_threshold(
    tab: MultiAgentTab, qtbot: Any
) -> None:
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Parse CSV files")
    search = child(tab, QLineEdit, "memory_search")
    results = child(tab, QListWidget, "memory_results")

    def listed(query: str) -> list[str]:
        results.clear()
        search.setText(query)
        qtbot.keyClick(search, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: searched(results), timeout=TIMEOUT)
        return [results.item(i).text() for i in range(results.count())]

    # Nothing stored is about the weather: every hit scores 0.00 with the hashing embedder.
    [only] = listed("weather tomorrow")
    assert only.startswith("Nothing similar (similarity ≥ 0.15)") and "hidden" in only

    rows = listed("python function parse")
    hits = [results.item(i) for i in range(results.count())]
    scores = [float(r.text().split(" · ")[0]) for r in hits if r.data(Qt.ItemDataRole.UserRole)]
    assert scores and all(score >= 0.15 for score in scores)
    assert any("def parse(text)" in row for row in rows)
    assert rows[-1].endswith("weaker match(es) below similarity 0.15 hidden.")


# -- issue 20: the result, the live phase in the list, quitting during a run ----------------


def test_the_sessions_list_shows_the_live_phase(
    tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    chat.gate_at = 3  # the coder waits: the session is "working"
    sessions = child(tab, QTreeWidget, "sessions")
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Parse CSV files")
        qtbot.waitUntil(chat.reached.is_set, timeout=TIMEOUT)
        qtbot.waitUntil(lambda: sessions.topLevelItemCount() == 1, timeout=TIMEOUT)
        row = sessions.topLevelItem(0)
        qtbot.waitUntil(lambda: row.text(1) == "working", timeout=TIMEOUT)  # not "planning"
        assert row.data(1, Qt.ItemDataRole.UserRole) == "working"
        chat.gate.set()
    assert sessions.topLevelItem(0).text(1) == "unverified draft"


def test_the_result_pane_assembles_the_answer_with_copy_and_export(
    tab: MultiAgentTab, qtbot: Any, tmp_path: Any
) -> None:
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QFileDialog, QToolButton

    result = child(tab, QTextBrowser, "multiagent_result")
    copy = child(tab, QToolButton, "copy_result")
    export = child(tab, QToolButton, "export_result")
    assert not copy.isEnabled() and not export.isEnabled()  # nothing to show yet
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Parse CSV files")
    shown = result.toPlainText()
    assert "Good. Final answer." in shown  # the reviewer's answer
    assert "Research CSV dialects" in shown and "Dialects differ in quoting." in shown
    assert "def parse(text): ..." in shown  # every step's work, in plan order
    assert shown.index("Final answer") < shown.index("Dialects differ")
    assert "the reviewer's answer above" not in " ".join(e["text"] for e in feed_events(tab))

    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    markdown = QGuiApplication.clipboard().text()
    assert markdown.startswith("# Parse CSV files") and "## Answer" in markdown

    qtbot.mouseClick(export, Qt.MouseButton.LeftButton)
    dialog = tab.findChild(QFileDialog, "export_result_dialog")
    assert dialog is not None and dialog.defaultSuffix() == "md"
    dialog.reject()
    with qtbot.waitSignal(tab.result_exported, timeout=TIMEOUT) as exported:
        tab.export_result_to(str(tmp_path / "csv-result"))  # no suffix typed
    assert exported.args == [str(tmp_path / "csv-result.md")]
    assert (tmp_path / "csv-result.md").read_text(encoding="utf-8") == markdown
    with qtbot.waitSignal(tab.result_exported, timeout=TIMEOUT) as exported:
        tab.export_result_to(str(tmp_path / "notes.txt"))
    assert exported.args == [str(tmp_path / "notes.txt.md")]


class UntilStopped(ScriptedChat):
    """The first call streams nothing until the run is stopped (a long generation)."""

    def __init__(self) -> None:
        super().__init__(replies=list(REPLIES))
        self.streaming = threading.Event()

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        if len(self.calls) == 1:  # the researcher
            self.streaming.set()
            while not should_stop():
                threading.Event().wait(0.02)
            return
        yield from super().stream(prompt, should_stop)


def test_quitting_during_a_run_asks_and_leaves_it_interrupted_not_cancelled(
    qtbot: Any, custodia_config: Config, tmp_path: Any
) -> None:
    from PySide6.QtWidgets import QMessageBox

    from backends.multiagent import MultiAgentService
    from desktop.main_window import MainWindow

    model = UntilStopped()
    services = Services(custodia_config, chat=model)
    window = MainWindow(services)
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    tab = window.findChild(QWidget, "multiagent")
    qtbot.waitUntil(child(tab, QPushButton, "run_task").isEnabled, timeout=TIMEOUT)
    run_task(tab, qtbot, "Parse CSV files")
    qtbot.waitUntil(model.streaming.is_set, timeout=TIMEOUT)

    window.quit_action.trigger()  # Ctrl+Q
    box = window.findChild(QMessageBox, "quit_confirm")
    assert box is not None and box.isVisible() and window.isVisible()
    assert "multi-agent session" in box.text()
    qtbot.mouseClick(box.findChild(QPushButton, "keep_running"), Qt.MouseButton.LeftButton)
    assert window.isVisible() and window.running_work() == ["a multi-agent session"]

    window.close()  # the window's close button asks too
    box = window.findChild(QMessageBox, "quit_confirm")
    assert box is not None and box.isVisible()
    qtbot.mouseClick(box.findChild(QPushButton, "quit_anyway"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=TIMEOUT)

    again = Services(custodia_config, chat=ScriptedChat(replies=list(REPLIES)))
    try:
        service = again.get("multiagent", MultiAgentService)
        (session,) = service.list_sessions(None, 10)
        assert session.phase == "working"  # where it was: not "cancelled"
        kinds = [e["kind"] for e in session.events]
        assert "session_finished" not in kinds
        assert "closed" in session.events[-1]["text"]
        assert service.run_states([session])[session.session_id].kind == "interrupted"
    finally:
        again.close()


def test_a_memory_search_says_it_is_searching(tab: MultiAgentTab, qtbot: Any) -> None:
    results = child(tab, QListWidget, "memory_results")
    search = child(tab, QLineEdit, "memory_search")
    search.setText("csv")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    assert results.count() == 1 and results.item(0).text().startswith("Searching")
    qtbot.waitUntil(lambda: not results.item(0).text().startswith("Searching"), timeout=TIMEOUT)


def test_a_big_memory_gets_its_search_index_in_the_background(
    custodia_config: Config, monkeypatch: pytest.MonkeyPatch, request: Any, qtbot: Any
) -> None:
    """Issue 19: past the threshold the tab builds HNSW in a worker (a child process does the
    work); the window stays responsive and the status comes back."""
    import numpy as np

    from backends.stores.vectors import qdrant_edge
    from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory

    monkeypatch.setattr(qdrant_edge, "HNSW_THRESHOLD", 300)
    memory = EdgeSemanticMemory(HashingEmbedder(384), path=custodia_config.qdrant_edge_path)
    vectors = np.random.default_rng(3).standard_normal((400, 384)).astype(np.float32)
    items = [MemoryItem(f"result {i}", f"s{i % 4}", "coder") for i in range(400)]
    memory.upsert_vectors(
        "agent_results", [i.point_id("agent_results") for i in items], vectors, items
    )
    memory.close()
    tab: MultiAgentTab = request.getfixturevalue("tab")
    service = tab._service()

    def indexed() -> bool:
        return tab._index is None and not service.memory_needs_index()

    qtbot.waitUntil(indexed, timeout=60_000)
    assert service.memory().indexed("agent_results") == (400, 400)  # type: ignore[attr-defined]
    status = child(tab, QLabel, "memory_status")
    qtbot.waitUntil(lambda: "400 item(s) remembered" in status.text(), timeout=TIMEOUT)


# -- issue 24: what was verified -------------------------------------------------------------

CODER_PLAN = "1. coder: write add(a, b) in Python"
BAD_CODE = "```python\ndef add(a, b):\n    return a - b\n```"
GOOD_CODE = "```python\ndef add(a, b):\n    return a + b\n```"
TESTER = "```python\ndef test_add():\n    assert add(2, 3) == 5\n```"


def verification_rows(tab: QWidget) -> list[tuple[int, str, str]]:
    """The tests tree, flattened: (depth, first column, outcome column)."""
    tree = child(tab, QTreeWidget, "verification_tests")
    rows: list[tuple[int, str, str]] = []

    def walk(item: Any, depth: int) -> None:
        rows.append((depth, item.text(0), item.text(1)))
        for i in range(item.childCount()):
            walk(item.child(i), depth + 1)

    for i in range(tree.topLevelItemCount()):
        walk(tree.topLevelItem(i), 0)
    return rows


def test_the_result_pane_shows_the_tests_that_ran_and_the_retry(
    tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    chat.replies[:] = [CODER_PLAN, BAD_CODE, TESTER, GOOD_CODE, "add is right now."]
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT) as finished:
        run_task(tab, qtbot, "Write add(a, b) in Python")
    assert finished.args[1] == "done"
    badge = child(tab, QLabel, "verification_badge")
    assert badge.isVisible() and badge.property("status") == "verified"
    assert "✓ verified" in badge.text() and "after one retry" in badge.text()
    tree = child(tab, QTreeWidget, "verification_tests")
    assert tree.isVisible()
    rows = verification_rows(tab)
    assert rows[0][0] == 0 and rows[0][1].startswith("Step 1 (coder)") and rows[0][2] == "verified"
    attempts = [r for r in rows if r[0] == 1]
    assert [a[2] for a in attempts] == ["failed verification", "verified"]
    tests = [(r[1], r[2]) for r in rows if r[0] == 2]
    assert tests == [("✗ test_add", "failed"), ("✓ test_add", "passed")]
    # the failure's output is there, folded under its test
    failing = tree.topLevelItem(0).child(0).child(0)
    assert failing.childCount() == 1 and "AssertionError" in failing.child(0).text(0)
    assert not failing.isExpanded()
    kinds = [e["kind"] for e in feed_events(tab)]
    assert "verifying" in kinds and "retry" in kinds and kinds.count("verification") == 2
    assert child(tab, QTreeWidget, "sessions").topLevelItem(0).text(1) == "verified"
    tab.grab().save("/tmp/multiagent-verified.png")


def test_code_that_fails_its_tests_is_shown_as_failed_never_done(
    tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    chat.replies[:] = [CODER_PLAN, BAD_CODE, TESTER, BAD_CODE, "Looks fine to me."]
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Write add(a, b) in Python")
    badge = child(tab, QLabel, "verification_badge")
    assert badge.property("status") == "failed" and "✗ failed verification" in badge.text()
    phase = child(tab, QLabel, "phase")
    assert "● failed verification</b>" in phase.text() and "done" not in phase.text()
    rows = verification_rows(tab)
    assert [(r[1], r[2]) for r in rows if r[0] == 2] == [
        ("✗ test_add", "failed"),
        ("✗ test_add", "failed"),
    ]
    assert child(tab, QTreeWidget, "sessions").topLevelItem(0).text(1) == "failed verification"
    result = child(tab, QTextBrowser, "multiagent_result").toPlainText()
    assert "Failed verification" in result
    tab.grab().save("/tmp/multiagent-failed.png")


@pytest.fixture
def finished_before_checks(custodia_config: Config) -> str:
    """A session an earlier version finished (no verification record), before the window."""
    store = SessionStore(
        MemoryTTLStore(), lambda: SqliteSessionMirror(custodia_config.path(SESSIONS_FILE))
    )
    old = Session.new("An old task, from before checks")
    old.phase = "done"
    old.data.update({"review": "It was fine.", "steps": [], "result": "# An old task\n"})
    store.save(old)
    store.close()
    return old.session_id


def test_a_session_finished_before_checks_is_shown_as_an_unverified_draft(
    finished_before_checks: str, tab: MultiAgentTab, qtbot: Any
) -> None:
    """It still loads, and says that nothing in it was run."""
    sessions = child(tab, QTreeWidget, "sessions")
    qtbot.waitUntil(lambda: sessions.topLevelItemCount() == 1, timeout=TIMEOUT)
    assert sessions.topLevelItem(0).text(1) == "unverified draft"
    sessions.setCurrentItem(sessions.topLevelItem(0))
    badge = child(tab, QLabel, "verification_badge")
    qtbot.waitUntil(badge.isVisible, timeout=TIMEOUT)
    assert badge.property("status") == "unverified"
    assert "finished before results were checked" in badge.text()
    assert "Nothing here was run" in badge.text()


def test_the_result_pane_keeps_the_codes_lines_and_indentation(
    tab: MultiAgentTab, qtbot: Any, chat: GatedChat
) -> None:
    """Issue 24: a coder's "Here it is: ```python" (the fence after words) came out on one line,
    and a Python comment was shown as a heading."""
    code = (
        "Here it is: ```python\n"
        "def add(a, b):\n"
        "    # the sum\n"
        "    if a:\n"
        "        return a + b\n"
        "    return b\n"
        "```"
    )
    chat.replies[:] = [CODER_PLAN, code, TESTER, "add is right."]
    with qtbot.waitSignal(tab.session_finished, timeout=TIMEOUT):
        run_task(tab, qtbot, "Write add(a, b) in Python")
    shown = child(tab, QTextBrowser, "multiagent_result").toPlainText()
    assert "def add(a, b):\n    # the sum\n    if a:\n        return a + b\n    return b" in shown
    assert "```" not in shown
