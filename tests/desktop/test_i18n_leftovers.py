"""What the Spanish window still showed in English or cut after the first pass of issue 27:
the doctor's "0 GGUF file(s)", the shortcuts' actions cut at 760 px, ISO times in the
conversations' transcript, their title cut, the tutor's "(1 of 1 sentences not found…)" and
its method names, the memories' "0.67" and "meaning", and "Editar" cut to "Edita"."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel, QLineEdit, QPushButton, QTabWidget, QTextBrowser, QWidget

from backends import doctor
from backends.config import Config
from tests.desktop.test_i18n_window import cut_texts
from tests.i18n_words import compile_catalogues, english_words

WAIT = 15_000


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    compile_catalogues()


@pytest.fixture
def custodia_config(tmp_path: Path) -> Config:
    home = tmp_path / "custodia-home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted", language="es").validated()


def _tab(window: Any, qtbot: Any, name: str) -> Any:
    tabs = window.findChild(QTabWidget, "assistants")
    tab = window.findChild(QWidget, name)
    tabs.setCurrentWidget(tab)
    qtbot.waitUntil(lambda: not window.workers.active, timeout=60_000)
    return tab


def test_the_doctor_counts_model_files_in_spanish(custodia_window: Any) -> None:
    from desktop.dialogs import user_line

    check = doctor.Check(
        doctor.MODEL_FILES, "model files", "/models", ok=True, details={"files": []}
    )
    line = user_line(check)
    assert "GGUF file(s)" not in line and not english_words(line), line


def test_the_shortcuts_are_not_cut_at_the_minimum_size(custodia_window: Any, qtbot: Any) -> None:
    from desktop.help import ShortcutsDialog
    from desktop.main_window import MIN_HEIGHT, MIN_WIDTH

    custodia_window.resize(MIN_WIDTH, MIN_HEIGHT)
    dialog = ShortcutsDialog(custodia_window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.wait(50)
    assert dialog.list.columnWidth(0) >= dialog.list.sizeHintForColumn(0)
    assert dialog.width() <= MIN_WIDTH


def test_the_transcript_dates_its_messages_as_spanish_does(
    custodia_window: Any, qtbot: Any
) -> None:
    from desktop.main_window import MIN_HEIGHT, MIN_WIDTH
    from desktop.status_bar import ElidedLabel

    tab = _tab(custodia_window, qtbot, "conversations")
    qtbot.waitUntil(lambda: tab.ready and not tab.busy, timeout=WAIT)
    question = "Hola, ¿qué me recomiendas para el fin de semana con mis hijos en Valencia?"
    tab.findChild(QLineEdit, "chat_input").setText(question)
    send = tab.findChild(QPushButton, "send")
    send.click()
    qtbot.waitUntil(lambda: send.isEnabled() and not tab.busy, timeout=WAIT)
    transcript = tab.findChild(QTextBrowser, "transcript").toPlainText()
    assert not re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", transcript), transcript
    assert re.search(r"\d{1,2}/\d{1,2}/\d\d \d{1,2}:\d\d", transcript), transcript
    custodia_window.resize(MIN_WIDTH, MIN_HEIGHT)
    qtbot.wait(50)
    title = tab.findChild(QLabel, "conversation_title")
    assert isinstance(title, ElidedLabel)
    if title.is_elided():  # a long title ends in "…", whole in the tooltip
        assert title.full_tooltip().startswith(title.text())
    assert not [c for c in cut_texts(tab) if "Hola" in c], cut_texts(tab)


def test_the_tutor_says_why_the_draft_was_not_shown_in_spanish(
    custodia_window: Any, qtbot: Any
) -> None:
    from desktop.tabs.tutor.rendering import AnswerLabels, render_answer

    tab = _tab(custodia_window, qtbot, "tutor")
    grounding = SimpleNamespace(
        mode="extractive",
        heading="",
        sentences=(SimpleNamespace(supported=False, text="Algo", number=1),),
        reason="1 of 1 sentences not found in the passages",
        covered=True,
    )
    turn = SimpleNamespace(passages=(), grounding=grounding, follow_up_note="", answer="", cited=())
    labels = AnswerLabels(model_answer=tab.tr("The model's own answer — not shown as fact ({0})"))
    shown = render_answer(turn, labels)  # type: ignore[arg-type]
    assert "1 de 1 frases" in shown or "1 de 1 oraciones" in shown, shown
    assert "sentences not found" not in shown
    tab._show_degraded(["vector: caído", "multilingual: caído"])
    notice = tab.findChild(QLabel, "degraded_notice")
    assert not english_words(notice.text()), notice.text()
    assert "vector," not in notice.text() and "multilingual" not in notice.text()
    assert not re.search(r"^(vector|multilingual|graph):", notice.toolTip(), re.M)


def test_the_memories_write_similarity_and_reasons_in_spanish(
    custodia_window: Any, qtbot: Any
) -> None:
    from backends.memories import Hit
    from desktop.markdown import MessageView

    tab = _tab(custodia_window, qtbot, "memories")
    panel = tab.panel
    hit = Hit("Mi hija se llama Lucía", 0.6712, "significado 0,67 · nombre: Lucía")
    panel.show_used("¿Cómo se llama mi hija?", (hit,))
    shown = panel.memories_used.topLevelItem(0).text(0)
    assert shown == "0,67", shown
    from backends.memories import MemoryAssistant
    from desktop.main_window import MIN_HEIGHT, MIN_WIDTH

    custodia_window.services.get("memories", MemoryAssistant).remember("Mi perro se llama Toby")
    tab.chat_input.setText("¿Cómo se llama mi perro?")
    tab.send.click()
    qtbot.waitUntil(
        lambda: len(tab.findChildren(MessageView)) >= 2 and tab.send.isEnabled(), timeout=WAIT
    )
    custodia_window.resize(MIN_WIDTH, MIN_HEIGHT)
    qtbot.wait(50)
    edits = [v.edit_button for v in tab.findChildren(MessageView) if v.edit_button.isVisible()]
    assert edits and all(b.text() == "Editar" for b in edits)
    assert not [c for c in cut_texts(tab) if "Editar" in c], cut_texts(tab)
