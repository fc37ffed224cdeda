"""The multi-agent tab in Spanish (issue 27): a session stored in English before there was a
Spanish Custodia — its checks' summaries, where its tests came from, its experts, its result —
reads in Spanish; the feed names phases and experts in Spanish too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QListWidget, QTabWidget, QTextBrowser, QTreeWidget, QWidget

from backends.config import Config
from backends.multiagent.service import SESSIONS_FILE
from backends.multiagent.sessions import SessionStore
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore
from tests.i18n_words import compile_catalogues, english_words

WAIT = 30_000
CODE = "```python\ndef suma(a, b):\n    return a - b\n```"
FIXED = CODE.replace("a - b", "a + b")


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    compile_catalogues()


@pytest.fixture
def custodia_config(tmp_path: Path) -> Config:
    home = tmp_path / "custodia-home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted", language="es").validated()


def _attempt(number: int, status: str, summary: str, outcome: str) -> dict[str, Any]:
    return {
        "attempt": number,
        "status": status,
        "summary": summary,
        "tests_from": "the tests you attached",
        "tests": [{"name": "test_suma", "outcome": outcome, "seconds": 0.01, "output": ""}],
        "code_lines": 2,
        "network": "namespace",
        "limits": {"wall_seconds": 10.0, "memory_mb": 256},
        "seconds": 0.25,
        "output": "",
    }


@pytest.fixture
def stored_in_english(custodia_config: Config) -> str:
    """A session a run stored before there was a Spanish Custodia: its summaries, its
    verdict and its result in English."""
    store = SessionStore(
        MemoryTTLStore(), lambda: SqliteSessionMirror(custodia_config.path(SESSIONS_FILE))
    )
    old = Session.new("Escribe la función suma en Python")
    old.phase = "done"
    attempts = [
        _attempt(1, "failed", "1 of 1 tests failed", "failed"),
        _attempt(2, "verified", "1 of 1 tests passed", "passed"),
    ]
    old.data.update(
        {
            "steps": [
                {
                    "index": 1,
                    "title": "escribe la función",
                    "expert": "coder",
                    "result": FIXED,
                    "drafts": [CODE],
                    "retried": True,
                    "verification": {
                        "status": "verified",
                        "summary": "1 of 1 tests passed (after one retry)",
                        "tests_from": "the tests you attached",
                        "attempts": attempts,
                    },
                }
            ],
            "review": "La función suma bien.",
            "verification": {
                "status": "verified",
                "label": "verified",
                "summary": "the code passed the tests you attached (1 of 1) after one retry",
            },
            "result": "# Escribe la función suma en Python\n\n## Verified\n\n## Steps\n",
            "events": [
                {"seq": 1, "ts": 0.0, "kind": "phase", "phase": "working", "expert": "",
                 "text": "working"},
                {"seq": 2, "ts": 0.0, "kind": "expert_result", "phase": "working",
                 "expert": "coder", "text": FIXED},
            ],
        }
    )  # fmt: skip
    store.save(old)
    store.close()
    return old.session_id


def test_a_session_stored_in_english_reads_in_spanish(
    stored_in_english: str, custodia_window: Any, qtbot: Any
) -> None:
    tabs = custodia_window.findChild(QTabWidget, "assistants")
    tab = custodia_window.findChild(QWidget, "multiagent")
    tabs.setCurrentWidget(tab)
    sessions = tab.findChild(QTreeWidget, "sessions")
    qtbot.waitUntil(lambda: sessions.topLevelItemCount() == 1, timeout=WAIT)
    sessions.setCurrentItem(sessions.topLevelItem(0))
    badge = tab.findChild(QLabel, "verification_badge")
    qtbot.waitUntil(badge.isVisible, timeout=WAIT)
    assert "tras un reintento" in badge.text() and not english_words(badge.text()), badge.text()

    tree = tab.findChild(QTreeWidget, "verification_tests")
    rows, tips = [], []

    def walk(item: Any) -> None:
        rows.append(f"{item.text(0)} | {item.text(1)}")
        tips.append(item.toolTip(0))
        for i in range(item.childCount()):
            walk(item.child(i))

    for i in range(tree.topLevelItemCount()):
        walk(tree.topLevelItem(i))
    left = [r for r in rows + tips if english_words(r)]
    assert not left, "\n".join(left)
    assert rows[0].startswith("Paso 1 (programador): pruebas superadas: 1 de 1"), rows
    assert "las pruebas que adjuntaste" in tips[-1] and "espacio de nombres" in tips[-1], tips

    result = tab.findChild(QTextBrowser, "multiagent_result").toPlainText()
    prose = result.replace("def suma(a, b):", " ").replace("return a + b", " ")
    left = [line for line in prose.splitlines() if english_words(line)]
    assert not left, "\n".join(left)
    assert "Pasos" in result and "Verificado" in result, result

    feed = tab.findChild(QListWidget, "feed")
    qtbot.waitUntil(lambda: feed.count() == 2, timeout=WAIT)
    lines = [feed.item(i).text() for i in range(feed.count())]
    assert lines[0].endswith("fase: trabajando"), lines
    assert " programador · resultado: " in lines[1], lines
    assert feed.item(0).data(Qt.ItemDataRole.UserRole)["text"] == "working"  # as stored
