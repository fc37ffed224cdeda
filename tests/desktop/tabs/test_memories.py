"""The memories tab driven as a tester would: object names, clicks, keys (DC6).

The window runs on the hashing embedder and the scripted chat model (``custodia_window``).
"""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QLineEdit,
    QListWidget,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QTabWidget,
    QToolButton,
    QTreeWidget,
    QWidget,
)

from backends.config import Config
from backends.memories.service import STORE_FILE, MemoryAssistant
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from desktop.markdown import MarkdownView

WAIT = 10_000


def child(parent: QWidget, kind: type, name: str) -> Any:
    widget = parent.findChild(kind, name)
    assert widget is not None, f"no {kind.__name__} named {name!r}"
    return widget


@pytest.fixture
def tab(qtbot: Any, custodia_window: Any) -> QWidget:
    tabs = child(custodia_window, QTabWidget, "assistants")
    memories = child(custodia_window, QWidget, "memories")
    tabs.setCurrentWidget(memories)
    send = child(memories, QPushButton, "send")
    qtbot.waitUntil(send.isEnabled, timeout=WAIT)  # store open, models loaded
    return memories


def memory_texts(tab: QWidget) -> list[str]:
    listing = child(tab, QListWidget, "memory_list")
    return [listing.item(i).data(Qt.ItemDataRole.UserRole) for i in range(listing.count())]


def messages(tab: QWidget) -> list[QFrame]:
    transcript = child(tab, QScrollArea, "transcript")
    return transcript.findChildren(QFrame, "transcript_message")


def say(qtbot: Any, tab: QWidget, text: str) -> QFrame:
    """Type a message, press Enter, wait for the streamed answer; return its bubble."""
    chat_input = child(tab, QLineEdit, "chat_input")
    send = child(tab, QPushButton, "send")
    before = len(messages(tab))
    qtbot.keyClicks(chat_input, text)
    qtbot.keyClick(chat_input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: len(messages(tab)) == before + 2 and send.isEnabled(), timeout=WAIT)
    return messages(tab)[-1]


def bubble_text(bubble: QFrame) -> str:
    """The message as shown (Markdown source, with a "[stopped]" mark)."""
    return str(child(bubble, MarkdownView, "message_text").text())


def used_rows(tab: QWidget) -> list[tuple[str, str]]:
    used = child(tab, QTreeWidget, "memories_used")
    return [
        (used.topLevelItem(i).text(0), used.topLevelItem(i).text(1))
        for i in range(used.topLevelItemCount())
    ]


def test_tell_a_fact_then_ask_and_see_the_memory_used(qtbot: Any, tab: QWidget) -> None:
    answer = say(qtbot, tab, "Remember that my dog is called Rex")
    assert "My dog is called Rex" in bubble_text(answer)
    qtbot.waitUntil(lambda: memory_texts(tab) == ["My dog is called Rex"], timeout=WAIT)

    answer = say(qtbot, tab, "What is my dog called?")
    # the memory restated is the answer; the scripted draft ("context passages: 1") names a
    # number no memory holds: struck out, not shown as the answer
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    marks = child(answer, QLabel, "message_checked")
    assert marks.isVisible() and (marks.property("from_memories"), marks.property("withheld")) == (
        1,
        1,
    )
    assert "Scripted answer to" not in marks.text()  # folded (issue 30); the link opens it
    marks.linkActivated.emit("withheld:toggle")
    assert "<s>Scripted answer to: What is my dog called?" in marks.text()
    assert used_rows(tab) == [("0.56", "My dog is called Rex")]
    caption = child(answer, QLabel, "message_memories")
    assert caption.isVisible() and "0.56  My dog is called Rex" in caption.text()
    assert "What is my dog called?" in child(tab, QLabel, "memories_used_title").text()


def test_delete_with_undo_button_and_ctrl_z(qtbot: Any, tab: QWidget) -> None:
    new = child(tab, QLineEdit, "memory_new")
    qtbot.keyClicks(new, "I am allergic to penicillin")
    qtbot.mouseClick(child(tab, QPushButton, "memory_add"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: memory_texts(tab) == ["I am allergic to penicillin"], timeout=WAIT)

    listing = child(tab, QListWidget, "memory_list")
    undo = child(tab, QPushButton, "memory_undo")
    delete = child(tab, QPushButton, "memory_delete")
    notice = child(tab, QLabel, "memory_notice")
    for how in ("button", "ctrl+z"):
        listing.setCurrentRow(0)
        assert delete.isEnabled()
        qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: "Deleted" in notice.text(), timeout=WAIT)
        assert memory_texts(tab) == [] and undo.isEnabled()
        if how == "button":
            qtbot.mouseClick(undo, Qt.MouseButton.LeftButton)
        else:
            listing.setFocus()
            qtbot.keyClick(listing, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
        qtbot.waitUntil(lambda: memory_texts(tab) == ["I am allergic to penicillin"], timeout=WAIT)
        assert "Undone" in child(tab, QLabel, "memory_notice").text()


def test_proposals_from_the_conversation_wait_for_a_yes(qtbot: Any, tab: QWidget) -> None:
    say(qtbot, tab, "I live in Valencia. My sister Ana lives in Madrid.")
    proposals = child(tab, QFrame, "proposals")
    qtbot.waitUntil(lambda: len(proposals.findChildren(QFrame, "proposal")) == 2, timeout=WAIT)
    assert proposals.isVisible()
    assert memory_texts(tab) == []  # nothing stored without the user's yes
    first, second = proposals.findChildren(QFrame, "proposal")
    assert "I live in Valencia" in child(first, QLabel, "proposal_text").text()
    qtbot.mouseClick(child(first, QPushButton, "proposal_accept"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: memory_texts(tab) == ["I live in Valencia"], timeout=WAIT)
    qtbot.mouseClick(child(second, QPushButton, "proposal_dismiss"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not proposals.isVisible(), timeout=WAIT)
    assert memory_texts(tab) == ["I live in Valencia"]


def test_remember_button_and_near_duplicate_update(qtbot: Any, tab: QWidget) -> None:
    say(qtbot, tab, "I live in Valencia")
    user_bubble = messages(tab)[-2]
    qtbot.mouseClick(child(user_bubble, QToolButton, "remember_message"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: memory_texts(tab) == ["I live in Valencia"], timeout=WAIT)

    new = child(tab, QLineEdit, "memory_new")
    qtbot.keyClicks(new, "I live in Valencia, Spain")
    qtbot.keyClick(new, Qt.Key.Key_Return)
    proposals = child(tab, QFrame, "proposals")
    qtbot.waitUntil(lambda: len(proposals.findChildren(QFrame, "proposal")) == 1, timeout=WAIT)
    (row,) = proposals.findChildren(QFrame, "proposal")  # the turn's own proposal was answered
    assert "Spain" in child(row, QLabel, "proposal_text").text()
    assert "Update" in child(row, QLabel, "proposal_text").text()
    assert child(row, QPushButton, "proposal_keep_both").isVisible()
    assert memory_texts(tab) == ["I live in Valencia"]  # not stored silently
    qtbot.mouseClick(child(row, QPushButton, "proposal_accept"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: memory_texts(tab) == ["I live in Valencia, Spain"], timeout=WAIT)


def test_search_and_edit(qtbot: Any, tab: QWidget) -> None:
    new = child(tab, QLineEdit, "memory_new")
    for fact in ["My dog is called Rex", "I am allergic to penicillin"]:
        qtbot.keyClicks(new, fact)
        qtbot.keyClick(new, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda f=fact: f in memory_texts(tab), timeout=WAIT)

    search = child(tab, QLineEdit, "memory_search_box")
    qtbot.keyClicks(search, "penicillin")
    qtbot.waitUntil(lambda: memory_texts(tab) == ["I am allergic to penicillin"], timeout=WAIT)
    listing = child(tab, QListWidget, "memory_list")
    assert "(" in listing.item(0).text()  # similarity shown beside a semantic hit

    search.clear()
    qtbot.waitUntil(lambda: len(memory_texts(tab)) == 2, timeout=WAIT)
    item = listing.findItems("My dog is called Rex", Qt.MatchFlag.MatchExactly)[0]
    item.setText("My dog is called Rex and he is three")  # what the inline editor commits
    qtbot.waitUntil(
        lambda: "My dog is called Rex and he is three" in memory_texts(tab), timeout=WAIT
    )
    assert "My dog is called Rex" not in memory_texts(tab)
    qtbot.mouseClick(child(tab, QPushButton, "memory_undo"), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "My dog is called Rex" in memory_texts(tab), timeout=WAIT)


def test_the_tab_works_given_only_its_service(qtbot: Any, custodia_config: Config) -> None:
    """Constructor injection: no container — a handle on a memory assistant built here, and
    no model choices (so no model picker). It is built on first use, off the GUI thread."""
    import threading

    from backends.services import Lazy
    from desktop.tabs.memories import MemoriesTab
    from desktop.workers import WorkerPool

    built_on: list[threading.Thread] = []

    def build() -> MemoryAssistant:
        built_on.append(threading.current_thread())
        return MemoryAssistant(
            custodia_config.path(STORE_FILE),
            HashingEmbedder,
            lambda: ScriptedChat(),
            config=custodia_config,
        )

    service = Lazy(build)
    workers = WorkerPool()
    tab = MemoriesTab(service, None, workers)
    qtbot.addWidget(tab, before_close_func=lambda w: workers.shutdown())
    tab.show()
    assert tab.findChild(QWidget, "memories_model_row") is None
    qtbot.waitUntil(child(tab, QPushButton, "send").isEnabled, timeout=WAIT)
    assert service.is_built() and built_on and built_on != [threading.main_thread()]

    say(qtbot, tab, "Remember that my dog is called Rex")
    qtbot.waitUntil(lambda: memory_texts(tab) == ["My dog is called Rex"], timeout=WAIT)
    answer = say(qtbot, tab, "What is my dog called?")
    # the memory restated is the answer; the scripted draft ("context passages: 1") names a
    # number no memory holds: struck out, not shown as the answer
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    marks = child(answer, QLabel, "message_checked")
    assert marks.isVisible() and (marks.property("from_memories"), marks.property("withheld")) == (
        1,
        1,
    )
    assert "Scripted answer to" not in marks.text()  # folded (issue 30); the link opens it
    marks.linkActivated.emit("withheld:toggle")
    assert "<s>Scripted answer to: What is my dog called?" in marks.text()
    assert used_rows(tab) == [("0.56", "My dog is called Rex")]
    workers.shutdown()
    service.get().close()


@pytest.fixture
def memories_of_another_embedder(custodia_config: Config) -> None:
    """Memories written earlier with a 64-d embedder, before the window opens (384-d)."""
    small = HashingEmbedder(64)
    earlier = MemoryAssistant(custodia_config.path(STORE_FILE), lambda: small, ScriptedChat)
    for fact in ["My dog is called Rex", "I live in Valencia", "I am allergic to penicillin"]:
        earlier.remember(fact)
    earlier.close()


def test_limited_recall_is_explained_and_reembed_fixes_it(
    qtbot: Any, memories_of_another_embedder: None, tab: QWidget
) -> None:
    status = child(tab, QLabel, "memory_status")
    reembed = child(tab, QPushButton, "reembed_all")
    qtbot.waitUntil(lambda: "Recall is limited" in status.text(), timeout=WAIT)
    assert "3 of 3" in status.text() and "64-d" in status.text()
    assert reembed.isVisible()

    answer = say(qtbot, tab, "What is my dog called?")
    # not recalled (its vector is of another embedder), still found by its words
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    assert used_rows(tab) == [("0.00", "My dog is called Rex")]

    qtbot.mouseClick(reembed, Qt.MouseButton.LeftButton)
    progress = child(tab, QProgressBar, "reembed_progress")
    qtbot.waitUntil(
        lambda: "Re-embedded 3" in child(tab, QLabel, "memory_notice").text(), timeout=WAIT
    )
    qtbot.waitUntil(lambda: "Recall is limited" not in status.text(), timeout=WAIT)
    assert not reembed.isVisible() and not progress.isVisible()

    answer = say(qtbot, tab, "What is my dog called?")
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    assert used_rows(tab)[0] == ("0.56", "My dog is called Rex")


@pytest.mark.model
def test_the_default_embedder_recalls_a_fact_from_another_session(
    qtbot: Any, tmp_path: Any
) -> None:
    """The issue's "done when": MiniLM (the default), two app sessions on one data dir."""
    from backends.errors import ModelUnavailableError
    from backends.models.embedders import MiniLMEmbedder
    from backends.services import Services
    from desktop.main_window import MainWindow

    try:
        MiniLMEmbedder()
    except ModelUnavailableError as err:
        pytest.skip(f"MiniLM model files not installed: {err}")
    config = Config(home=tmp_path, embedder="minilm", chat_model="scripted").validated()

    def session(message: str) -> tuple[QFrame, QWidget, MainWindow]:
        services = Services(config)
        window = MainWindow(services)
        qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
        with qtbot.waitSignal(window.checks_ready, timeout=60_000):
            window.show()
        memories = child(window, QWidget, "memories")
        qtbot.waitUntil(child(memories, QPushButton, "send").isEnabled, timeout=60_000)
        return say(qtbot, memories, message), memories, window

    _, _, first = session("Remember that I am allergic to penicillin")
    first.close()
    answer, memories, second = session("Can I take amoxicillin for my sore throat?")
    # never told about amoxicillin: said so, with the memory that matters beside it
    assert bubble_text(answer) == (
        "You haven't told me that. The closest thing you told me: "
        "You are allergic to penicillin [1]."
    )
    ((similarity, text),) = used_rows(memories)
    assert text == "I am allergic to penicillin" and float(similarity) >= 0.30
    second.close()


def test_an_unreachable_embedder_is_explained_not_crashed(qtbot: Any, tmp_path: Any) -> None:
    import socket

    from backends.services import Services
    from desktop.main_window import MainWindow

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = Config(
        home=tmp_path,
        embedder="ollama:nomic-embed-text",
        ollama_url=f"http://127.0.0.1:{port}",
        chat_model="scripted",
        network_timeout=1.0,
    ).validated()
    window = MainWindow(Services(config))
    qtbot.addWidget(window, before_close_func=lambda w: w.workers.shutdown())
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    memories = child(window, QWidget, "memories")
    status = child(memories, QLabel, "memory_status")
    qtbot.waitUntil(lambda: "cannot be opened" in status.text(), timeout=WAIT)
    assert "not reachable" in status.text()
    assert not child(memories, QPushButton, "send").isEnabled()
    window.close()


def test_reembedding_can_be_cancelled_and_says_so(
    qtbot: Any, memories_of_another_embedder: None, tab: QWidget
) -> None:
    status = child(tab, QLabel, "memory_status")
    reembed = child(tab, QPushButton, "reembed_all")
    cancel = child(tab, QPushButton, "reembed_cancel")
    qtbot.waitUntil(reembed.isVisible, timeout=WAIT)
    qtbot.mouseClick(reembed, Qt.MouseButton.LeftButton)
    assert cancel.isVisible() and child(tab, QProgressBar, "reembed_progress").isVisible()
    qtbot.mouseClick(cancel, Qt.MouseButton.LeftButton)  # before the worker even starts
    notice = child(tab, QLabel, "memory_notice")
    qtbot.waitUntil(lambda: "Re-embedding stopped" in notice.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: reembed.isVisible() and not cancel.isVisible(), timeout=WAIT)
    assert "Recall is limited: 3 of 3" in status.text()


def test_stop_keeps_what_was_said_in_the_conversation(qtbot: Any, tmp_path: Any) -> None:
    """Stop mid-answer: the words so far stay, marked [stopped], and the next turn's history
    holds them (the stopped exchange is part of the conversation)."""
    import threading

    from backends.models import registry
    from backends.services import Services
    from desktop.main_window import MainWindow

    started, release = threading.Event(), threading.Event()

    class PausingChat(ScriptedChat):
        def stream(self, prompt: Any, should_stop: Any = lambda: False) -> Any:
            for i, piece in enumerate(super().stream(prompt, should_stop)):
                yield piece
                if i == 1:  # two words said, then wait for the test's Stop
                    started.set()
                    release.wait(10)

    chat = PausingChat(replies=["Rex is a very good dog indeed", "Second answer"])
    registry.register_chat_model("pausing-test", lambda config, arg: chat)
    try:
        config = Config(home=tmp_path, embedder="hashing", chat_model="pausing-test")
        window = MainWindow(Services(config))
        qtbot.addWidget(window, before_close_func=lambda w: (release.set(), w.workers.shutdown()))
        with qtbot.waitSignal(window.checks_ready, timeout=60_000):
            window.show()
        memories = child(window, QWidget, "memories")
        child(window, QTabWidget, "assistants").setCurrentWidget(memories)
        send = child(memories, QPushButton, "send")
        qtbot.waitUntil(send.isEnabled, timeout=WAIT)
        chat_input = child(memories, QLineEdit, "chat_input")
        qtbot.keyClicks(chat_input, "Tell me a story")  # not about the user: the model's
        qtbot.keyClick(chat_input, Qt.Key.Key_Return)
        qtbot.waitUntil(started.is_set, timeout=WAIT)
        stop = child(memories, QPushButton, "stop")
        qtbot.waitUntil(stop.isVisible, timeout=WAIT)
        qtbot.mouseClick(stop, Qt.MouseButton.LeftButton)
        release.set()
        qtbot.waitUntil(send.isEnabled, timeout=WAIT)
        stopped = messages(memories)[-1]
        answer = bubble_text(stopped)
        assert answer.startswith("Rex is") and "[stopped]" in answer and "indeed" not in answer
        # "Remember" stores what was said, not the display mark
        qtbot.mouseClick(child(stopped, QToolButton, "remember_message"), Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(memory_texts(memories)) == 1, timeout=WAIT)
        assert "stopped" not in memory_texts(memories)[0]
        assert memory_texts(memories)[0].startswith("Rex is")

        history = memories.history  # what the next turn is given (and checked against)
        assert [m.role for m in history[-2:]] == ["user", "assistant"]
        assert history[-1].content.startswith("Rex is") and "indeed" not in history[-1].content
        say(qtbot, memories, "And what else?")
    finally:
        registry.CHAT_FACTORIES.pop("pausing-test", None)


def test_editing_a_search_hit_edits_the_memory_not_its_similarity(qtbot: Any, tab: QWidget) -> None:
    new = child(tab, QLineEdit, "memory_new")
    qtbot.keyClicks(new, "My sister is Ana")
    qtbot.keyClick(new, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: memory_texts(tab) == ["My sister is Ana"], timeout=WAIT)
    search = child(tab, QLineEdit, "memory_search_box")
    qtbot.keyClicks(search, "sister")
    listing = child(tab, QListWidget, "memory_list")
    qtbot.waitUntil(lambda: listing.count() == 1 and "(" in listing.item(0).text(), timeout=WAIT)

    listing.setCurrentRow(0)
    qtbot.mouseClick(child(tab, QPushButton, "memory_edit"), Qt.MouseButton.LeftButton)
    editor = listing.findChild(QLineEdit)
    assert editor is not None and editor.text() == "My sister is Ana"  # no "(0.xx)"
    editor.setText("My sister is Ana and she lives in Porto")  # an edit that extends the text
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    search.clear()
    qtbot.waitUntil(
        lambda: memory_texts(tab) == ["My sister is Ana and she lives in Porto"], timeout=WAIT
    )


class GatedChat(ScriptedChat):
    """Scripted; before its first word waits for ``gate`` (the test looks at the wait)."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies=replies)
        import threading

        self.waiting = threading.Event()
        self.gate = threading.Event()

    def stream(self, prompt: Any, should_stop: Any = lambda: False) -> Any:
        self.waiting.set()
        while not self.gate.wait(0.05):
            if should_stop():
                return
        self.waiting.clear()
        yield from super().stream(prompt, should_stop)


@pytest.fixture
def gated(qtbot: Any, tmp_path: Any) -> Any:
    """A window whose memories tab answers with a :class:`GatedChat`."""
    from backends.models import registry
    from backends.services import Services
    from desktop.main_window import MainWindow

    chat = GatedChat(["First *answer*", "Second answer", "Third answer"])
    registry.register_chat_model("gated-test", lambda config, arg: chat)
    config = Config(home=tmp_path, embedder="hashing", chat_model="gated-test")
    window = MainWindow(Services(config))

    def before_close(w: Any) -> None:
        chat.gate.set()
        w.workers.shutdown()

    qtbot.addWidget(window, before_close_func=before_close)
    with qtbot.waitSignal(window.checks_ready, timeout=60_000):
        window.show()
    memories = child(window, QWidget, "memories")
    child(window, QTabWidget, "assistants").setCurrentWidget(memories)
    qtbot.waitUntil(child(memories, QPushButton, "send").isEnabled, timeout=WAIT)
    yield chat, memories
    chat.gate.set()
    registry.CHAT_FACTORIES.pop("gated-test", None)
    window.close_now()


def test_the_reply_says_thinking_until_its_first_word(qtbot: Any, gated: Any) -> None:
    chat, tab = gated
    chat_input = child(tab, QLineEdit, "chat_input")
    qtbot.keyClicks(chat_input, "Hello there")
    qtbot.keyClick(chat_input, Qt.Key.Key_Return)
    qtbot.waitUntil(chat.waiting.is_set, timeout=WAIT)
    answer = messages(tab)[-1]
    status = child(answer, QLabel, "message_status")
    assert status.isVisible() and status.text() == "Thinking…"  # not a blank bubble
    chat.gate.set()
    send = child(tab, QPushButton, "send")
    qtbot.waitUntil(send.isEnabled, timeout=WAIT)
    assert not status.isVisible() and bubble_text(answer) == "First *answer*"
    # rendered as Markdown, not shown raw
    label = child(answer, QLabel, "message_markdown")
    assert label.textFormat() == Qt.TextFormat.MarkdownText


def test_stop_says_cancelling_until_the_answer_stopped(qtbot: Any, gated: Any) -> None:
    chat, tab = gated
    chat_input = child(tab, QLineEdit, "chat_input")
    qtbot.keyClicks(chat_input, "Hello there")
    qtbot.keyClick(chat_input, Qt.Key.Key_Return)
    qtbot.waitUntil(chat.waiting.is_set, timeout=WAIT)
    stop = child(tab, QPushButton, "stop")
    qtbot.mouseClick(stop, Qt.MouseButton.LeftButton)
    answer = messages(tab)[-1]
    assert stop.text() == "Cancelling…" and not stop.isEnabled()
    assert child(answer, QLabel, "message_status").text() == "Cancelling…"
    qtbot.waitUntil(child(tab, QPushButton, "send").isEnabled, timeout=WAIT)
    assert not stop.isVisible() and stop.text() == "Stop"
    assert "[stopped]" in bubble_text(answer)


def test_regenerate_asks_the_last_question_again(qtbot: Any, gated: Any) -> None:
    chat, tab = gated
    chat.gate.set()
    say(qtbot, tab, "Tell me a joke")
    first = messages(tab)
    assert [bubble_text(b) for b in first] == ["Tell me a joke", "First *answer*"]
    regenerate = child(first[1], QToolButton, "regenerate_message")
    assert regenerate.isVisible()
    qtbot.mouseClick(regenerate, Qt.MouseButton.LeftButton)
    send = child(tab, QPushButton, "send")
    qtbot.waitUntil(lambda: send.isEnabled() and len(chat.calls) == 2, timeout=WAIT)
    qtbot.waitUntil(lambda: len(messages(tab)) == 2, timeout=WAIT)
    assert [bubble_text(b) for b in messages(tab)] == ["Tell me a joke", "Second answer"]
    assert "Tell me a joke" in chat.calls[1].user
    assert list(chat.calls[1].history) == []  # the replaced answer left the conversation


def test_edit_and_resend_replaces_the_question_and_what_followed(qtbot: Any, gated: Any) -> None:
    chat, tab = gated
    chat.gate.set()
    say(qtbot, tab, "Tell me about cats")
    say(qtbot, tab, "What do they eat?")
    question = messages(tab)[0]
    edit = child(question, QToolButton, "edit_message")
    chat_input = child(tab, QLineEdit, "chat_input")
    cancel = child(tab, QPushButton, "cancel_edit")
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    assert chat_input.text() == "Tell me about cats" and chat_input.hasSelectedText()
    # nothing is lost yet: greyed until the new question is sent; Esc keeps them
    assert len(messages(tab)) == 4 and not any(b.isEnabled() for b in messages(tab))
    assert cancel.isVisible()
    qtbot.keyClick(chat_input, Qt.Key.Key_Escape)
    assert all(b.isEnabled() for b in messages(tab)) and not cancel.isVisible()
    assert chat_input.text() == ""

    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton)
    qtbot.keyClicks(chat_input, "Tell me about dogs")  # replaces the selection
    qtbot.keyClick(chat_input, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: len(messages(tab)) == 2 and child(tab, QPushButton, "send").isEnabled(),
        timeout=WAIT,
    )
    assert bubble_text(messages(tab)[0]) == "Tell me about dogs"
    assert chat.calls[-1].user == "Tell me about dogs"
    assert len(tab.history) == 2  # the edited exchange and the later one left


def checked_tab(qtbot: Any, config: Config, reply: str) -> QWidget:
    """The tab alone, one memory stored, answering ``reply`` to every question."""
    from backends.services import Lazy
    from desktop.tabs.memories import MemoriesTab
    from desktop.workers import WorkerPool

    assistant = MemoryAssistant(
        config.path(STORE_FILE),
        HashingEmbedder,
        lambda: ScriptedChat(replies=[reply]),
        config=config,
    )
    assistant.remember("My dog is called Rex")
    workers = WorkerPool()
    tab = MemoriesTab(Lazy.of(assistant), None, workers)
    qtbot.addWidget(tab, before_close_func=lambda w: (workers.shutdown(), assistant.close()))
    tab.resize(1000, 600)
    tab.show()
    qtbot.waitUntil(child(tab, QPushButton, "send").isEnabled, timeout=WAIT)
    return tab


def test_told_the_memory_is_the_answer_and_what_the_model_adds_is_withheld(
    qtbot: Any, custodia_config: Config
) -> None:
    """AL2 in the chat: asked about something it was told, the answer is the memory restated
    with ✓ [1] (linking to it in "memories used"); what the model added that no memory
    states is struck out with why, never shown as the answer."""
    tab = checked_tab(qtbot, custodia_config, "Your dog is called Rex. Dogs are loyal animals.")
    answer = say(qtbot, tab, "What's the name of my dog?")
    marks = child(answer, QLabel, "message_checked")
    qtbot.waitUntil(marks.isVisible, timeout=WAIT)
    assert marks.property("checked") is True and marks.property("mode") == "composed"
    assert (marks.property("from_memories"), marks.property("withheld")) == (1, 1)
    marks.linkActivated.emit("withheld:toggle")  # folded by default: the user opens it
    shown = marks.text()
    answered, held = shown.split("Withheld")
    assert "Your dog is called Rex. " in answered and 'href="memory:1"' in answered
    assert "✓&nbsp;[1]" in answered and "loyal" not in answered
    assert "<s>Dogs are loyal animals.</s>" in held
    assert not child(answer, MarkdownView, "message_text").isVisible()  # the marked one shows
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    legend = child(answer, QLabel, "message_checked_legend")
    assert legend.isVisible() and "From what you told me" in legend.text()
    assert "struck out" in legend.text()

    used = child(tab, QTreeWidget, "memories_used")
    used.setCurrentItem(None)
    marks.linkActivated.emit("memory:1")  # what clicking ✓ [1] does
    assert used.currentItem() is used.topLevelItem(0)
    assert used.currentItem().text(1) == "My dog is called Rex"


def test_the_models_withheld_draft_is_folded_until_asked_for(
    qtbot: Any, custodia_config: Config
) -> None:
    """Issue 30: on a fresh data dir every memory answer showed the default model's withheld
    draft struck through under "Withheld from the model's draft" ("✗ Elena, Elenka"). It is
    folded behind a small link now; the link opens it, and folds it again."""
    tab = checked_tab(qtbot, custodia_config, "Your dog is called Rex. Elena, Elenka.")
    answer = say(qtbot, tab, "What's the name of my dog?")
    marks = child(answer, QLabel, "message_checked")
    qtbot.waitUntil(marks.isVisible, timeout=WAIT)
    assert marks.property("withheld") == 1  # withheld all the same (and audited as before)
    folded = marks.text()
    assert "Your dog is called Rex" in folded
    assert "Elena" not in folded and "<s>" not in folded and "Withheld from" not in folded
    assert 'href="withheld:toggle"' in folded and "Show what was withheld" in folded
    legend = child(answer, QLabel, "message_checked_legend")
    assert "struck out" not in legend.text()
    marks.linkActivated.emit("withheld:toggle")  # what clicking the link does
    assert "<s>Elena, Elenka.</s>" in marks.text() and "Hide what was withheld" in marks.text()
    assert "struck out" in legend.text()
    marks.linkActivated.emit("withheld:toggle")
    assert "Elena" not in marks.text()
    assert bubble_text(answer) == "Your dog is called Rex [1]."  # what Copy and Remember take


@pytest.mark.parametrize(
    "reply",
    [
        "I'm glad you asked about your teeth. Please call 1-800-325-4769 (Toll-Free).",
        "The user said earlier: your blood type is O.",
        "Your blood type is A positive.",
    ],
)
def test_never_told_says_so_whatever_the_model_would_say(
    qtbot: Any, custodia_config: Config, reply: str
) -> None:
    tab = checked_tab(qtbot, custodia_config, reply)
    answer = say(qtbot, tab, "What is my blood type?")
    assert bubble_text(answer) == "You haven't told me that."
    marks = child(answer, QLabel, "message_checked")
    assert marks.property("mode") == "dont_know" and "1-800" not in marks.text()


def test_an_invented_phone_number_is_struck_out(qtbot: Any, custodia_config: Config) -> None:
    reply = "I'm glad you asked about your teeth. Please call 1-800-325-4769 (Toll-Free)."
    tab = checked_tab(qtbot, custodia_config, reply)
    answer = say(qtbot, tab, "What is my dog called?")
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    marks = child(answer, QLabel, "message_checked")
    assert "1-800" not in marks.text()  # folded: not even struck out
    marks.linkActivated.emit("withheld:toggle")
    assert "<s>Please call 1-800-325-4769 (Toll-Free).</s>" in marks.text()
    assert "no source holds: 1-800-325-4769" in marks.text()


def test_a_general_question_gets_the_models_words_labelled(
    qtbot: Any, custodia_config: Config
) -> None:
    """Not about the user: the model's words, in grey italics, labelled as its own."""
    tab = checked_tab(qtbot, custodia_config, "Luna is a good name for a cat.")
    answer = say(qtbot, tab, "What is a good name for a cat?")
    assert used_rows(tab) == []
    marks = child(answer, QLabel, "message_checked")
    assert marks.isVisible() and marks.property("mode") == "model"
    assert marks.property("own") == 1 and "<i>Luna is a good name for a cat.</i>" in marks.text()
    legend = child(answer, QLabel, "message_checked_legend")
    assert "the model's own words" in legend.text()


def test_marks_follow_the_theme(qtbot: Any, custodia_config: Config) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop import theme

    tab = checked_tab(qtbot, custodia_config, "Your dog is called Rex. Dogs are loyal animals.")
    answer = say(qtbot, tab, "What is my dog called?")
    marks = child(answer, QLabel, "message_checked")
    assert theme.colors(False)["ok"] in marks.text()
    app = QApplication.instance()
    before = app.palette()
    try:
        app.setPalette(theme.dark_palette())
        qtbot.waitUntil(lambda: theme.colors(True)["ok"] in marks.text(), timeout=WAIT)
        assert theme.colors(True)["muted"] in marks.text()
    finally:
        app.setPalette(before)


def test_the_models_code_keeps_its_markdown(qtbot: Any, custodia_config: Config) -> None:
    reply = "Use print.\n\n```python\nprint('woof')\n```"
    tab = checked_tab(qtbot, custodia_config, reply)
    answer = say(qtbot, tab, "How do I print in Python?")
    body = child(answer, MarkdownView, "message_text")
    marks = child(answer, QLabel, "message_checked")
    assert body.isVisible() and len(body.code_blocks()) == 1 and not marks.isVisible()
    legend = child(answer, QLabel, "message_checked_legend")
    assert legend.isVisible() and "the model's own words" in legend.text()


def test_drafts_that_rarely_pass_are_not_asked_for_unless_the_user_asks(
    qtbot: Any, custodia_config: Config
) -> None:
    """The composed answer alone, at once; "Ask the model to rephrase" asks for a draft."""
    from backends.answers import DraftStats

    stats = DraftStats(custodia_config.path("draft_stats.json"))
    for _ in range(5):
        stats.record("memories:scripted", passed=False)
    tab = checked_tab(qtbot, custodia_config, "Your dog is called Rex.")
    answer = say(qtbot, tab, "What is my dog called?")
    assert bubble_text(answer) == "Your dog is called Rex [1]."
    rephrase = child(answer, QPushButton, "rephrase_answer")
    assert rephrase.isVisible()
    qtbot.mouseClick(rephrase, Qt.MouseButton.LeftButton)
    send = child(tab, QPushButton, "send")
    qtbot.waitUntil(
        lambda: send.isEnabled() and len(messages(tab)) == 2 and messages(tab)[-1] is not answer,
        timeout=WAIT,
    )
    again = messages(tab)[-1]
    marks = child(again, QLabel, "message_checked")
    assert marks.property("mode") == "generated"  # the draft passed: the model's words, cited
    assert bubble_text(again) == "Your dog is called Rex [1]."
    assert not child(again, QPushButton, "rephrase_answer").isVisible()
