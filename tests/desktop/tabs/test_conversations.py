"""The Conversations tab driven as a tester would: object names, clicks, keys (DC6).

Most tests build the tab alone on the deterministic providers (hashing embedder, scripted
chat); the first two run it inside the main window (``custodia_window``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QRadioButton,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QWidget,
)

from backends.config import Config
from backends.conversations.files import (
    Conversation,
    ConversationFiles,
    RotationJournal,
    StoredMessage,
    now_iso,
)
from backends.conversations.keys import HistoryCipher, generate_key, key_id
from backends.models.chat import RETRIEVAL_ONLY_LABEL, ChatModel, Prompt, ShouldStop
from backends.models.embedders import HashingEmbedder
from backends.services import Services
from desktop.tabs.conversations import ConversationsTab
from desktop.workers import WorkerPool
from tests.backends.conversations.conftest import FIXTURES
from tests.parts import conversations_service

WAIT = 10_000


def child(parent: QWidget, kind: type, name: str) -> Any:
    widget = parent.findChild(kind, name)
    assert widget is not None, f"no {kind.__name__} named {name!r}"
    return widget


def rows(tab: QWidget) -> list[list[str]]:
    tree = child(tab, QTreeWidget, "conversation_list")
    return [
        [tree.topLevelItem(i).text(c) for c in range(4)] for i in range(tree.topLevelItemCount())
    ]


def conversations_folder(tab: ConversationsTab) -> Path:
    """Where the tab's agent keeps its conversation files."""
    return tab.service.get().config.path("conversations")


def idle(qtbot: Any, tab: ConversationsTab) -> None:
    qtbot.waitUntil(lambda: tab.ready and not tab.busy, timeout=WAIT)


def say(qtbot: Any, tab: QWidget, text: str) -> None:
    chat_input = child(tab, QLineEdit, "chat_input")
    send = child(tab, QPushButton, "send")
    qtbot.keyClicks(chat_input, text)
    qtbot.mouseClick(send, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: send.isEnabled() and not tab.busy, timeout=WAIT)


def seed(services: Services, name: str, texts: list[str]) -> str:
    agent = conversations_service(services)
    roles = ("user", "assistant")
    conversation = Conversation(
        id=name.lower().replace(" ", "-"),
        name=name,
        date=now_iso(),
        provider="scripted",
        model="scripted",
        history=[StoredMessage(roles[i % 2], t, now_iso()) for i, t in enumerate(texts)],
    )
    agent.add(conversation)
    return conversation.id


MakeTab = Callable[..., ConversationsTab]
#: the container each ``make_tab`` tab's service came from (the tab holds only its service)
containers: dict[ConversationsTab, Services] = {}


@pytest.fixture
def make_tab(qtbot: Any, custodia_config: Config) -> Iterator[MakeTab]:
    """The tab alone on its own worker pool; ``prepare(services)`` runs before it is built."""
    built: list[tuple[ConversationsTab, WorkerPool, Services]] = []

    def factory(
        config: Config | None = None,
        prepare: Callable[[Services], None] | None = None,
        **services_kwargs: Any,
    ) -> ConversationsTab:
        services = Services(config or custodia_config, **services_kwargs)
        if prepare is not None:
            prepare(services)
        workers = WorkerPool()
        tab = ConversationsTab(services.lazy("conversations", conversations_service), workers)
        tab.resize(1000, 650)
        tab.show()
        built.append((tab, workers, services))
        containers[tab] = services
        idle(qtbot, tab)
        return tab

    yield factory
    for tab, workers, services in built:
        workers.shutdown()
        tab.close()
        tab.deleteLater()
        services.close()
        containers.pop(tab, None)


# -- inside the main window -------------------------------------------------------------------


@pytest.fixture
def window_tab(qtbot: Any, custodia_window: Any) -> ConversationsTab:
    tabs = child(custodia_window, QTabWidget, "assistants")
    tab = child(custodia_window, QWidget, "conversations")
    tabs.setCurrentWidget(tab)
    assert isinstance(tab, ConversationsTab)
    idle(qtbot, tab)
    return tab


def test_a_chat_turn_streams_into_the_transcript_and_is_listed(
    qtbot: Any, window_tab: ConversationsTab
) -> None:
    tab = window_tab
    transcript = child(tab, QTextBrowser, "transcript")
    changes: list[int] = []
    transcript.textChanged.connect(lambda: changes.append(1))
    say(qtbot, tab, "Tell me about zebras")
    expected = "Scripted answer to: Tell me about zebras (context passages: 0)"
    qtbot.waitUntil(lambda: expected in transcript.toPlainText(), timeout=WAIT)
    assert len(changes) > len(expected.split())  # token by token, then the final render
    [[name, date, model, count]] = rows(tab)
    # named from the first message (issue 20)
    assert (model, count, name) == ("scripted", "2", "Tell me about zebras") and date
    title = child(tab, QLabel, "conversation_title")
    qtbot.waitUntil(lambda: title.text() == "Tell me about zebras", timeout=WAIT)
    # the model named as everywhere (issue 30: "Answered by scripted:scripted")
    assert child(tab, QLabel, "tab_status").text().startswith("Answered by Scripted (for tests)")
    conversation_id = transcript.property("conversation_id")
    agent = tab.service.get()
    assert [m.content for m in agent.load(conversation_id).history] == [
        "Tell me about zebras",
        expected,
    ]
    say(qtbot, tab, "And about their stripes?")
    qtbot.waitUntil(lambda: rows(tab)[0][3] == "4", timeout=WAIT)
    assert transcript.property("conversation_id") == conversation_id


def test_a_search_hit_opens_the_conversation_at_the_message(
    qtbot: Any, window_tab: ConversationsTab
) -> None:
    tab = window_tab
    say(qtbot, tab, "Lighthouses guide ships along the coast")
    child(tab, QPushButton, "new_conversation").click()
    for text in ("Bread needs flour", "Bread also needs water", "Sourdough bread needs time"):
        say(qtbot, tab, text)
    target = child(tab, QTextBrowser, "transcript").property("conversation_id")
    child(tab, QPushButton, "new_conversation").click()
    search = child(tab, QLineEdit, "history_search")
    qtbot.keyClicks(search, "sourdough time")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    results = child(tab, QListWidget, "search_results")
    qtbot.waitUntil(lambda: results.count() > 0, timeout=WAIT)
    first = results.item(0)
    assert "Sourdough bread needs time" in first.text()
    rect = results.visualItemRect(first)
    qtbot.mouseClick(results.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: transcript.property("conversation_id") == target, timeout=WAIT)
    assert transcript.property("highlighted_message") == 4  # user, answer, user, answer, *this*
    assert "Bread needs flour" in transcript.toPlainText()
    tree = child(tab, QTreeWidget, "conversation_list")
    assert tree.currentItem().data(0, Qt.ItemDataRole.UserRole) == target


# -- the tab alone ----------------------------------------------------------------------------


def test_without_a_key_a_persistent_warning_is_shown(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab()
    status = child(tab, QLabel, "encryption_status")
    assert "clear text" in status.text() and status.property("warning") is True
    say(qtbot, tab, "still warned after a turn")
    assert "clear text" in status.text()


def test_with_a_key_the_status_says_encrypted(
    qtbot: Any, make_tab: MakeTab, custodia_config: Config
) -> None:
    tab = make_tab(replace(custodia_config, conversations_key=generate_key()))
    status = child(tab, QLabel, "encryption_status")
    assert "encrypted" in status.text() and "CONVERSATIONS_KEY" not in status.text()
    assert "CONVERSATIONS_KEY" in child(tab, QLabel, "encryption_details").text()
    assert status.property("warning") is False


def test_set_key_encrypts_every_conversation(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Old notes", ["kept in clear", "for now"]))
    dialog = _key_dialog(qtbot, tab)
    child(dialog, QPushButton, "generate_key").click()
    assert len(child(dialog, QLineEdit, "key_input").text()) == 44
    buttons = dialog.findChild(QDialogButtonBox)
    buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    status = child(tab, QLabel, "encryption_status")
    qtbot.waitUntil(lambda: "for this session only" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    data = json.loads((conversations_folder(tab) / "old-notes.json").read_text())
    assert data["encrypted"] is True and "kept in clear" not in json.dumps(data)
    assert "1 conversation encrypted with the new key" in child(tab, QLabel, "tab_status").text()


def test_rename_in_place_and_delete_with_confirmation(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "First name", ["hello", "hi"]))
    tree = child(tab, QTreeWidget, "conversation_list")
    item = tree.topLevelItem(0)
    item.setText(0, "Second name")  # what an in-place edit (F2, double click) does
    qtbot.waitUntil(lambda: rows(tab) and rows(tab)[0][0] == "Second name", timeout=WAIT)
    idle(qtbot, tab)
    path = conversations_folder(tab) / "first-name.json"
    assert json.loads(path.read_text())["name"] == "Second name"
    tree.setCurrentItem(tree.topLevelItem(0))
    child(tab, QPushButton, "delete_conversation").click()
    confirm = child(tab, QMessageBox, "confirm_delete")
    qtbot.waitUntil(confirm.isVisible, timeout=WAIT)
    confirm.button(QMessageBox.StandardButton.No).click()
    idle(qtbot, tab)
    assert path.exists() and len(rows(tab)) == 1
    child(tab, QPushButton, "delete_conversation").click()
    qtbot.waitUntil(confirm.isVisible, timeout=WAIT)
    confirm.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: rows(tab) == [], timeout=WAIT)
    assert not path.exists()


def test_an_unreadable_conversation_is_marked_and_the_others_work(
    qtbot: Any, make_tab: MakeTab, custodia_config: Config
) -> None:
    def prepare(services: Services) -> None:
        seed(services, "Good one", ["fine", "yes"])
        seed(services, "Broken one", ["soon", "corrupt"])
        path = services.config.path("conversations") / "broken-one.json"
        path.write_bytes(path.read_bytes()[:-30])

    tab = make_tab(prepare=prepare)
    names = sorted(r[0] for r in rows(tab))
    assert names == ["Good one", "⚠ broken-one"]
    tree = child(tab, QTreeWidget, "conversation_list")
    broken = next(
        tree.topLevelItem(i) for i in range(2) if tree.topLevelItem(i).text(0).startswith("⚠")
    )
    assert "corrupt" in broken.toolTip(0)
    tree.itemClicked.emit(broken, 0)
    assert "cannot be read" in child(tab, QLabel, "tab_status").text()
    good = next(tree.topLevelItem(i) for i in range(2) if tree.topLevelItem(i) is not broken)
    tree.itemClicked.emit(good, 0)
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: transcript.property("conversation_id") == "good-one", timeout=WAIT)
    assert "1 conversation cannot be read" in child(tab, QLabel, "encryption_status").text()


def test_model_picker_and_retrieval_only(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab()
    picker = child(tab, QComboBox, "model_picker")
    keys = [picker.itemData(i) for i in range(picker.count())]
    assert keys[:2] == ["scripted", "retrieval-only"]
    say(qtbot, tab, "Kestrels hover above motorway verges")
    child(tab, QPushButton, "new_conversation").click()
    picker.setCurrentIndex(keys.index("retrieval-only"))
    say(qtbot, tab, "kestrels hover motorway")
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: RETRIEVAL_ONLY_LABEL in transcript.toPlainText(), timeout=WAIT)
    assert "Retrieval-only mode" in child(tab, QLabel, "tab_status").text()
    assert rows(tab)[0][2] == "retrieval-only"


def test_import_then_rebuild_index(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab()
    child(tab, QPushButton, "import_conversations").click()
    dialog = child(tab, QFileDialog, "import_dialog")
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    dialog.fileSelected.emit(str(FIXTURES / "chatgpt_conversations.json"))
    dialog.close()
    qtbot.waitUntil(lambda: len(rows(tab)) == 2, timeout=WAIT)
    idle(qtbot, tab)
    assert tab.service.get().vectors().count() == 7
    child(tab, QPushButton, "rebuild_index").click()
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "rebuilt" in status.text(), timeout=WAIT)
    assert "7 messages indexed" in status.text()


def test_another_embedder_offers_a_rebuild(
    qtbot: Any, make_tab: MakeTab, custodia_config: Config
) -> None:
    first = make_tab()
    say(qtbot, first, "indexed with 384 dimensions")
    containers[first].close()
    tab = make_tab(embedder=HashingEmbedder(64))
    status = child(tab, QLabel, "tab_status")
    assert "Rebuild index" in status.text() and "384" in status.text()
    child(tab, QPushButton, "rebuild_index").click()
    qtbot.waitUntil(lambda: "rebuilt" in status.text(), timeout=WAIT)
    assert tab.service.get().vectors().dimension == 64


def test_without_the_key_of_an_encrypted_history_nothing_is_written(
    qtbot: Any, make_tab: MakeTab
) -> None:
    def prepare(services: Services) -> None:
        folder = services.config.path("conversations")
        encrypted = Conversation(
            "secret", "Secret", now_iso(), "scripted", "scripted", [StoredMessage("user", "x")]
        )
        ConversationFiles(folder, HistoryCipher([generate_key()])).write(encrypted, create=True)

    tab = make_tab(prepare=prepare)
    status = child(tab, QLabel, "encryption_status")
    assert "New messages are refused" in status.text() and status.property("warning") is True
    assert "encrypted and locked" in status.text() and "clear text" not in status.text()
    folder = conversations_folder(tab)
    before = sorted(p.name for p in folder.iterdir())
    say(qtbot, tab, "this would be stored in clear")
    tab_status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "history is locked" in tab_status.text(), timeout=WAIT)
    assert "CONVERSATIONS_KEY" not in tab_status.text() and "Set key" in tab_status.text()
    # nothing lost, nothing written, nothing shown that is not stored
    assert child(tab, QLineEdit, "chat_input").text() == "this would be stored in clear"
    assert "stored in clear" not in child(tab, QTextBrowser, "transcript").toPlainText()
    assert sorted(p.name for p in folder.iterdir()) == before
    search = child(tab, QLineEdit, "history_search")  # search says what it could not read
    qtbot.keyClicks(search, "anything")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "Not searched" in tab_status.text(), timeout=WAIT)
    assert "1 key required" in tab_status.text()


@dataclass
class _SlowChat(ChatModel):
    """Streams numbered words until stopped (a long answer the user stops)."""

    name: str = "slow"

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        for i in range(2000):
            if should_stop():
                return
            time.sleep(0.01)
            yield f"word{i} "


def _say_then_stop(qtbot: Any, tab: ConversationsTab, text: str, after: str) -> None:
    transcript = child(tab, QTextBrowser, "transcript")
    shown = transcript.toPlainText().count(after)
    qtbot.keyClicks(child(tab, QLineEdit, "chat_input"), text)
    child(tab, QPushButton, "send").click()
    qtbot.waitUntil(lambda: transcript.toPlainText().count(after) > shown, timeout=WAIT)
    child(tab, QPushButton, "stop_chat").click()
    idle(qtbot, tab)


def test_stop_keeps_what_was_said_marked_stopped(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab(chat=_SlowChat())
    transcript = child(tab, QTextBrowser, "transcript")
    _say_then_stop(qtbot, tab, "talk for a long time", "word5 ")
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "Stopped" in status.text(), timeout=WAIT)
    cid = transcript.property("conversation_id")
    answer = tab.service.get().load(cid).history[1]
    assert answer.stopped and answer.content.startswith("word0 word1 word2 word3 word4 word5 ")
    assert "word1999" not in answer.content
    qtbot.waitUntil(lambda: "stopped" in transcript.toPlainText(), timeout=WAIT)
    assert rows(tab)[0][3] == "2"
    _say_then_stop(qtbot, tab, "and again", "word2 ")  # the same conversation goes on
    assert transcript.property("conversation_id") == cid
    qtbot.waitUntil(lambda: rows(tab)[0][3] == "4", timeout=WAIT)


def test_a_name_too_long_is_refused_and_the_list_shows_the_stored_one(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Short name", ["hello", "hi"]))
    path = conversations_folder(tab) / "short-name.json"
    before = path.read_bytes()
    tree = child(tab, QTreeWidget, "conversation_list")
    tree.topLevelItem(0).setText(0, "x" * 5000)
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "at most 200 characters" in status.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: rows(tab)[0][0] == "Short name", timeout=WAIT)
    idle(qtbot, tab)
    assert path.read_bytes() == before
    tree.topLevelItem(0).setText(0, "Two\nlines")  # what a paste could bring
    qtbot.waitUntil(lambda: rows(tab)[0][0] == "Two lines", timeout=WAIT)
    idle(qtbot, tab)
    assert json.loads(path.read_text())["name"] == "Two lines"


def _open_in_list(qtbot: Any, tab: ConversationsTab, conversation_id: str) -> None:
    tree = child(tab, QTreeWidget, "conversation_list")
    item = next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).data(0, Qt.ItemDataRole.UserRole) == conversation_id
    )
    rect = tree.visualItemRect(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: transcript.property("conversation_id") == conversation_id, timeout=WAIT)
    idle(qtbot, tab)


def _is_new_conversation(tab: ConversationsTab) -> bool:
    transcript = child(tab, QTextBrowser, "transcript")
    return (
        tab.current_id is None
        and transcript.property("conversation_id") == ""
        and not transcript.toPlainText().strip()
        and child(tab, QLabel, "conversation_title").text() == "New conversation"
        and child(tab, QTreeWidget, "conversation_list").currentItem() is None
    )


def test_deleting_the_conversation_being_answered_stops_it_then_starts_afresh(
    qtbot: Any, make_tab: MakeTab
) -> None:
    """Delete… while its answer streams: confirmed, the answer stops, the file goes (not
    written again by the stopped answer), and the tab is a new conversation again."""
    tab = make_tab(chat=_SlowChat(), prepare=lambda s: seed(s, "Long talk", ["hello", "hi"]))
    path = conversations_folder(tab) / "long-talk.json"
    _open_in_list(qtbot, tab, "long-talk")
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.keyClicks(child(tab, QLineEdit, "chat_input"), "talk for a long time")
    child(tab, QPushButton, "send").click()
    qtbot.waitUntil(lambda: "word5 " in transcript.toPlainText(), timeout=WAIT)
    stop = child(tab, QPushButton, "stop_chat")
    assert stop.isVisible()
    delete = child(tab, QPushButton, "delete_conversation")
    assert delete.isEnabled()
    qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)
    confirm = child(tab, QMessageBox, "confirm_delete")
    qtbot.waitUntil(confirm.isVisible, timeout=WAIT)
    assert "stopped first" in confirm.text()
    confirm.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: rows(tab) == [] and not stop.isVisible(), timeout=WAIT)
    idle(qtbot, tab)
    assert not path.exists()
    assert _is_new_conversation(tab)
    status = child(tab, QLabel, "tab_status")
    assert "Deleted “Long talk”" in status.text()
    _say_then_stop(qtbot, tab, "a fresh start", "word2 ")  # not "no such conversation"
    qtbot.waitUntil(lambda: len(rows(tab)) == 1, timeout=WAIT)
    assert "no such conversation" not in status.text()
    new_id = transcript.property("conversation_id")
    assert new_id and new_id != "long-talk" and tab.current_id == new_id
    assert tab.service.get().load(new_id).history[0].content == "a fresh start"


def test_after_new_delete_acts_on_nothing_and_deleting_the_open_one_starts_afresh(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Short talk", ["hello", "hi"]))
    _open_in_list(qtbot, tab, "short-talk")
    child(tab, QPushButton, "new_conversation").click()
    assert _is_new_conversation(tab)  # nothing left current in the list either
    delete = child(tab, QPushButton, "delete_conversation")
    delete.click()  # used to offer deleting the conversation just left
    confirm = child(tab, QMessageBox, "confirm_delete")
    assert not confirm.isVisible()
    assert "Select a conversation" in child(tab, QLabel, "tab_status").text()
    _open_in_list(qtbot, tab, "short-talk")
    delete.click()
    qtbot.waitUntil(confirm.isVisible, timeout=WAIT)
    assert "stopped first" not in confirm.text()  # no answer is being written
    confirm.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: rows(tab) == [], timeout=WAIT)
    idle(qtbot, tab)
    assert _is_new_conversation(tab)
    assert "Deleted “Short talk”" in child(tab, QLabel, "tab_status").text()


def test_a_conversation_deleted_elsewhere_gives_way_to_a_new_one(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Elsewhere", ["hello", "hi"]))
    _open_in_list(qtbot, tab, "elsewhere")
    tab.service.get().delete("elsewhere")  # the CLI, another window
    chat_input = child(tab, QLineEdit, "chat_input")
    qtbot.keyClicks(chat_input, "are you still there?")
    child(tab, QPushButton, "send").click()
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "no longer exists" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    assert "“Elsewhere”" in status.text() and "new conversation" in status.text()
    assert chat_input.text() == "are you still there?"  # nothing lost
    assert _is_new_conversation(tab) and rows(tab) == []
    child(tab, QPushButton, "send").click()
    qtbot.waitUntil(lambda: len(rows(tab)) == 1 and not tab.busy, timeout=WAIT)
    assert tab.current_id and tab.current_id != "elsewhere"


def _key_dialog(qtbot: Any, tab: ConversationsTab, mode: str = "mode_key") -> Any:
    """The key dialog, opened with ``set_key``, in ``mode`` (``mode_key``/``mode_passphrase``;
    without an OS keyring it opens on the passphrase)."""
    child(tab, QPushButton, "set_key").click()
    dialog = child(tab, QDialog, "key_dialog")
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    child(dialog, QRadioButton, mode).click()
    return dialog


def _ok(dialog: QDialog) -> None:
    dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()


def test_an_invalid_key_is_explained_in_the_dialog_which_stays_open(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Old notes", ["kept in clear", "for now"]))
    path = conversations_folder(tab) / "old-notes.json"
    before = path.read_bytes()
    dialog = _key_dialog(qtbot, tab)
    key_input = child(dialog, QLineEdit, "key_input")
    error = child(dialog, QLabel, "key_error")
    assert not error.isVisible()
    _ok(dialog)  # empty
    assert dialog.isVisible() and error.isVisible() and "Generate" in error.text()
    qtbot.keyClicks(key_input, "not-a-fernet-key")
    assert not error.isVisible()  # fixing it clears the complaint
    qtbot.keyClick(key_input, Qt.Key.Key_Return)  # Enter is OK too
    assert dialog.isVisible() and error.isVisible()
    assert error.property("error") is True
    assert "not a key of the right form" in error.text() and "press Generate" in error.text()
    assert "rotate-key" not in error.text() and "custodia" not in error.text()
    assert dialog.focusWidget() is key_input and key_input.selectedText() == "not-a-fernet-key"
    assert not tab.busy and path.read_bytes() == before  # nothing started, nothing written
    child(dialog, QPushButton, "generate_key").click()
    assert not error.isVisible()
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):  # accepted: deleted
        _ok(dialog)
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(
        lambda: "1 conversation encrypted with the new key" in status.text(), timeout=WAIT
    )
    idle(qtbot, tab)
    assert json.loads(path.read_text())["encrypted"] is True
    assert tab.findChild(QDialog, "key_dialog") is None


def test_the_key_dialog_wants_the_key_of_an_unfinished_change(
    qtbot: Any, make_tab: MakeTab
) -> None:
    pending = generate_key()

    def prepare(services: Services) -> None:
        seed(services, "Old notes", ["kept in clear", "for now"])
        RotationJournal(services.config.path("conversations")).begin(key_id(pending))

    tab = make_tab(prepare=prepare)
    dialog = _key_dialog(qtbot, tab)
    key_input = child(dialog, QLineEdit, "key_input")
    error = child(dialog, QLabel, "key_error")
    child(dialog, QPushButton, "generate_key").click()  # another key: refused here
    _ok(dialog)
    assert dialog.isVisible() and "unfinished" in error.text()
    assert key_id(pending) not in error.text() and dialog.focusWidget() is key_input
    key_input.clear()
    qtbot.keyClicks(key_input, pending[:-2])  # cut off: Generate would not help here
    _ok(dialog)
    assert "not a key of the right form" in error.text() and "unfinished" in error.text()
    assert "press Generate" not in error.text()
    key_input.setText(pending)
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        _ok(dialog)
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "encrypted with the new key" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    assert "unfinished" not in child(tab, QLabel, "encryption_status").text()


def test_dialogs_are_deleted_when_cancelled(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab()
    for _ in range(2):
        dialog = _key_dialog(qtbot, tab)
        with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
            dialog.findChild(QDialogButtonBox).button(
                QDialogButtonBox.StandardButton.Cancel
            ).click()
        assert tab.findChildren(QDialog, "key_dialog") == []
    for name, opener in (("import_dialog", "import_conversations"), ("export_dialog", None)):
        if opener:
            child(tab, QPushButton, opener).click()
        else:
            tab.export_all.trigger()
        file_dialog = child(tab, QFileDialog, name)
        qtbot.waitUntil(file_dialog.isVisible, timeout=WAIT)
        with qtbot.waitSignal(file_dialog.destroyed, timeout=WAIT):
            file_dialog.reject()
        assert tab.findChildren(QFileDialog) == []
    assert not tab.busy


# -- issue 20: passphrase, copy, keyring, a new history, stale hits, imports, exports ---------

PASSPHRASE = "correct horse battery staple"


def _type_passphrase(qtbot: Any, dialog: QDialog, text: str, confirm: bool) -> None:
    field = child(dialog, QLineEdit, "passphrase_input")
    field.clear()
    qtbot.keyClicks(field, text)
    if confirm:
        again = child(dialog, QLineEdit, "passphrase_confirm")
        again.clear()
        qtbot.keyClicks(again, text)


def test_a_passphrase_encrypts_and_a_wrong_one_is_said_in_the_dialog(
    qtbot: Any, make_tab: MakeTab, custodia_config: Config
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Old notes", ["kept in clear", "for now"]))
    dialog = _key_dialog(qtbot, tab, "mode_passphrase")
    confirm = child(dialog, QLineEdit, "passphrase_confirm")
    assert confirm.isVisible()  # no passphrase yet: a new one is typed twice
    _type_passphrase(qtbot, dialog, "short", confirm=True)
    _ok(dialog)
    error = child(dialog, QLabel, "key_error")
    assert dialog.isVisible() and "at least 8 characters" in error.text()
    _type_passphrase(qtbot, dialog, PASSPHRASE, confirm=False)
    qtbot.keyClicks(confirm, "x")
    _ok(dialog)
    assert "differ" in error.text() and dialog.isVisible()
    _type_passphrase(qtbot, dialog, PASSPHRASE, confirm=True)
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        _ok(dialog)
    status = child(tab, QLabel, "encryption_status")
    qtbot.waitUntil(lambda: "derived from your passphrase" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    folder = conversations_folder(tab)
    data = json.loads((folder / "old-notes.json").read_text())
    assert data["encrypted"] is True and (folder / ".kdf.json").exists()
    assert not (folder / ".rotation.key").exists()  # the derived key is never written
    # a restart: locked, and the dialog asks for the passphrase (no confirmation field)
    again = make_tab(custodia_config)
    status = child(again, QLabel, "encryption_status")
    assert "encrypted with a passphrase and locked" in status.text()
    dialog = _key_dialog(qtbot, again, "mode_passphrase")
    assert child(dialog, QRadioButton, "mode_passphrase").isChecked()
    assert not child(dialog, QLineEdit, "passphrase_confirm").isVisible()
    _type_passphrase(qtbot, dialog, "correct horse battery stapler", confirm=False)
    _ok(dialog)
    error = child(dialog, QLabel, "key_error")
    qtbot.waitUntil(lambda: "does not open your history" in error.text(), timeout=WAIT)
    assert dialog.isVisible() and not child(dialog, QLabel, "key_progress").isVisible()
    assert "To set another passphrase, tick" in error.text()
    _type_passphrase(qtbot, dialog, PASSPHRASE, confirm=False)
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        _ok(dialog)
    qtbot.waitUntil(lambda: "derived from your passphrase" in status.text(), timeout=WAIT)
    idle(qtbot, again)
    assert [r[0] for r in rows(again)] == ["Old notes"]


def test_copy_puts_the_generated_key_on_the_clipboard(qtbot: Any, make_tab: MakeTab) -> None:
    from PySide6.QtGui import QGuiApplication

    tab = make_tab()
    dialog = _key_dialog(qtbot, tab)
    child(dialog, QPushButton, "generate_key").click()
    child(dialog, QPushButton, "copy_key").click()
    key = child(dialog, QLineEdit, "key_input").text()
    assert len(key) == 44 and QGuiApplication.clipboard().text() == key


def test_without_a_keyring_the_dialog_says_so_and_offers_the_passphrase(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab()
    agent = tab.service.get()
    assert not agent.keys.keyring().usable  # these machines have no OS keyring
    child(tab, QPushButton, "set_key").click()
    dialog = child(tab, QDialog, "key_dialog")
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    intro = child(dialog, QLabel, "key_intro").text()
    assert "for this session only" in intro and "A passphrase needs no keyring" in intro
    assert child(dialog, QRadioButton, "mode_passphrase").isChecked()
    child(dialog, QRadioButton, "mode_key").click()
    child(dialog, QPushButton, "generate_key").click()
    notice = child(dialog, QLabel, "key_notice")
    assert notice.isVisible() and "Copy this key now" in notice.text()


def test_generate_in_the_window_saves_the_key_before_rewriting_any_file(
    qtbot: Any, make_tab: MakeTab
) -> None:
    """The window's Generate is a generated key (``generated=True``): without a keyring it is
    in conversations/.rotation.key for as long as the rotation journal exists, so a kill
    during the rotation leaves every file under a key the user can get back."""
    import threading

    def prepare(services: Services) -> None:
        for i in range(300):
            seed(services, f"Note {i}", [f"text {i}", "answer"])

    tab = make_tab(prepare=prepare)
    folder = conversations_folder(tab)
    dialog = _key_dialog(qtbot, tab)
    child(dialog, QPushButton, "generate_key").click()
    key = child(dialog, QLineEdit, "key_input").text()
    seen: list[tuple[bool, str]] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            journal = (folder / ".rotation.journal").exists()
            try:
                saved = (folder / ".rotation.key").read_text().strip()
            except FileNotFoundError:
                saved = ""
            if journal:
                seen.append((journal, saved))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        _ok(dialog)
        status = child(tab, QLabel, "tab_status")
        qtbot.waitUntil(
            lambda: "300 conversations encrypted with the new key" in status.text(),
            timeout=60_000,
        )
    finally:
        done.set()
        watcher.join()
    assert seen, "the rotation was never seen running"
    # whenever files were being rewritten, the generated key was saved (and it is this key)
    assert all(saved == key for _, saved in seen[:-1])
    assert not (folder / ".rotation.key").exists()  # removed once the rotation finished


def test_a_new_history_after_the_key_is_lost(qtbot: Any, make_tab: MakeTab) -> None:
    def prepare(services: Services) -> None:
        folder = services.config.path("conversations")
        old = Conversation(
            "secret", "Secret", now_iso(), "scripted", "scripted", [StoredMessage("user", "x")]
        )
        ConversationFiles(folder, HistoryCipher([generate_key()])).write(old, create=True)

    tab = make_tab(prepare=prepare)
    folder = conversations_folder(tab)
    before = (folder / "secret.json").read_bytes()
    new_history = child(tab, QPushButton, "new_history")
    assert new_history.isVisible()
    new_history.click()
    box = child(tab, QMessageBox, "new_history_dialog")
    qtbot.waitUntil(box.isVisible, timeout=WAIT)
    assert "kept exactly as they are" in box.text() and "clear text" in box.informativeText()
    child(box, QPushButton, "new_history_encrypted").click()
    dialog = child(tab, QDialog, "key_dialog")
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    assert dialog.windowTitle() == "Start a new encrypted history"
    assert child(dialog, QRadioButton, "mode_passphrase").isChecked()
    _type_passphrase(qtbot, dialog, PASSPHRASE, confirm=True)
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        _ok(dialog)
    status = child(tab, QLabel, "encryption_status")
    qtbot.waitUntil(lambda: "earlier history are locked" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    assert not new_history.isVisible() and "New messages are refused" not in status.text()
    assert rows(tab)[0][0] == "Secret (locked)"
    say(qtbot, tab, "A fresh start")
    qtbot.waitUntil(lambda: len(rows(tab)) == 2, timeout=WAIT)
    new_id = child(tab, QTextBrowser, "transcript").property("conversation_id")
    data = json.loads((folder / f"{new_id}.json").read_text())
    assert data["encrypted"] is True and "A fresh start" not in json.dumps(data)
    assert (folder / "secret.json").read_bytes() == before  # untouched


def test_continue_unencrypted_warns_and_keeps_the_old_files(qtbot: Any, make_tab: MakeTab) -> None:
    def prepare(services: Services) -> None:
        folder = services.config.path("conversations")
        old = Conversation(
            "secret", "Secret", now_iso(), "scripted", "scripted", [StoredMessage("user", "x")]
        )
        ConversationFiles(folder, HistoryCipher([generate_key()])).write(old, create=True)

    tab = make_tab(prepare=prepare)
    folder = conversations_folder(tab)
    before = (folder / "secret.json").read_bytes()
    child(tab, QPushButton, "new_history").click()
    box = child(tab, QMessageBox, "new_history_dialog")
    qtbot.waitUntil(box.isVisible, timeout=WAIT)
    child(box, QPushButton, "new_history_clear").click()
    status = child(tab, QLabel, "encryption_status")
    qtbot.waitUntil(lambda: "stored in clear text" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    assert status.property("warning") is True and "locked" in status.text()
    say(qtbot, tab, "Now in clear")
    qtbot.waitUntil(lambda: len(rows(tab)) == 2, timeout=WAIT)
    assert (folder / "secret.json").read_bytes() == before


def test_search_hits_follow_renames_and_deletes_and_never_show_a_raw_id(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Zebra facts", ["zebras have stripes", "yes"]))
    idle(qtbot, tab)
    search = child(tab, QLineEdit, "history_search")
    results = child(tab, QListWidget, "search_results")
    qtbot.keyClicks(search, "zebras stripes")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: results.count() > 0, timeout=WAIT)
    assert results.item(0).text().startswith("Zebra facts")
    tree = child(tab, QTreeWidget, "conversation_list")
    tree.topLevelItem(0).setText(0, "Striped horses")  # an in-place rename
    qtbot.waitUntil(
        lambda: results.count() > 0 and results.item(0).text().startswith("Striped horses"),
        timeout=WAIT,
    )
    idle(qtbot, tab)
    # deleted elsewhere (the CLI): clicking the stale hit names it, never its id
    (conversations_folder(tab) / "zebra-facts.json").unlink()
    item = results.item(0)
    qtbot.mouseClick(
        results.viewport(), Qt.MouseButton.LeftButton, pos=results.visualItemRect(item).center()
    )
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "no longer exists" in status.text(), timeout=WAIT)
    assert "“Striped horses”" in status.text() and "zebra-facts" not in status.text()
    qtbot.waitUntil(lambda: results.count() == 0, timeout=WAIT)  # the stale hit is gone
    idle(qtbot, tab)


def test_deleting_drops_its_search_hits(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Zebra facts", ["zebras have stripes", "yes"]))
    search = child(tab, QLineEdit, "history_search")
    results = child(tab, QListWidget, "search_results")
    qtbot.keyClicks(search, "zebras")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: results.count() > 0, timeout=WAIT)
    tree = child(tab, QTreeWidget, "conversation_list")
    tree.setCurrentItem(tree.topLevelItem(0))
    child(tab, QPushButton, "delete_conversation").click()
    confirm = child(tab, QMessageBox, "confirm_delete")
    qtbot.waitUntil(confirm.isVisible, timeout=WAIT)
    confirm.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: rows(tab) == [], timeout=WAIT)
    idle(qtbot, tab)
    assert results.count() == 0


def test_an_import_is_named_imported_and_a_second_one_skips_what_is_here(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab()
    path = str(FIXTURES / "chatgpt_conversations.json")
    status = child(tab, QLabel, "tab_status")
    tab.transfer._on_import_file_selected(path)  # what the import dialog's fileSelected does
    qtbot.waitUntil(lambda: len(rows(tab)) == 2, timeout=WAIT)
    idle(qtbot, tab)
    assert sorted(r[0] for r in rows(tab)) == [
        "Sourdough starter help (imported)",
        "Trip to Lisbon (imported)",
    ]
    tab.transfer._on_import_file_selected(path)
    qtbot.waitUntil(lambda: "already here, skipped" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    assert "Imported 0 conversations" in status.text() and "“Trip to Lisbon”" in status.text()
    assert len(rows(tab)) == 2


@pytest.mark.parametrize(
    ("chosen", "name", "expected", "fmt"),
    [
        ("Markdown (*.md)", "notes", "notes.md", "markdown"),
        ("JSON (*.json)", "notes", "notes.json", "json"),
        ("JSON (*.json)", "notes.md", "notes.md", "markdown"),
        ("Markdown (*.md)", "notes.v2", "notes.v2", "markdown"),
    ],
)
def test_the_export_gets_the_chosen_filter_s_extension(
    qtbot: Any,
    make_tab: MakeTab,
    tmp_path: Any,
    chosen: str,
    name: str,
    expected: str,
    fmt: str,
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Zebra facts", ["zebras have stripes", "yes"]))
    child(tab, QWidget, "export_conversations").menu().actions()[1].trigger()  # all
    dialog = child(tab, QFileDialog, "export_dialog")
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    dialog.setDirectory(str(tmp_path))
    dialog.selectNameFilter(chosen)
    dialog.selectFile(name)
    dialog.accept()
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "Exported to" in status.text(), timeout=WAIT)
    idle(qtbot, tab)
    written = tmp_path / expected
    assert written.exists() and str(written) in status.text()
    text = written.read_text()
    assert text.startswith("# Zebra facts") if fmt == "markdown" else json.loads(text)


def test_a_wait_longer_than_200_ms_says_what_is_happening(qtbot: Any, make_tab: MakeTab) -> None:
    tab = make_tab(chat=_SlowChat())
    activity = child(tab, QLabel, "tab_activity")
    assert not activity.isVisible()
    qtbot.keyClicks(child(tab, QLineEdit, "chat_input"), "a long answer please")
    child(tab, QPushButton, "send").click()
    qtbot.waitUntil(activity.isVisible, timeout=WAIT)
    assert activity.text() == "Answering…"
    child(tab, QPushButton, "stop_chat").click()
    idle(qtbot, tab)
    qtbot.waitUntil(lambda: not activity.isVisible(), timeout=WAIT)


def test_messages_are_rendered_as_markdown_with_copy_links(qtbot: Any, make_tab: MakeTab) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QGuiApplication

    answer = "Here is **one** way:\n\n```python\ndef f():\n    return 1\n```\n\nSay <div> too."
    tab = make_tab(prepare=lambda s: seed(s, "Code talk", ["show me code", answer]))
    tree = child(tab, QTreeWidget, "conversation_list")
    item = tree.topLevelItem(0)
    qtbot.mouseClick(
        tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(item).center()
    )
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: "def f():" in transcript.toPlainText(), timeout=WAIT)
    text = transcript.toPlainText()
    assert "**" not in text and "```" not in text  # rendered, not shown raw
    assert "    return 1" in text  # code indentation kept on screen
    assert "Say <div> too." in text  # raw HTML is text, never lost
    assert "monospace" in transcript.toHtml()
    with qtbot.waitSignal(tab.copied, timeout=WAIT) as copied:
        transcript.anchorClicked.emit(QUrl("copy:1:0"))  # the answer's first code block
    assert copied.args == ["def f():\n    return 1"]
    assert QGuiApplication.clipboard().text() == "def f():\n    return 1"
    transcript.anchorClicked.emit(QUrl("copy:1"))  # the whole answer, as stored
    assert QGuiApplication.clipboard().text() == answer


def test_a_hit_whose_file_became_unreadable_is_named_not_shown_by_id(
    qtbot: Any, make_tab: MakeTab
) -> None:
    tab = make_tab(prepare=lambda s: seed(s, "Zebra facts", ["zebras have stripes", "yes"]))
    search = child(tab, QLineEdit, "history_search")
    results = child(tab, QListWidget, "search_results")
    qtbot.keyClicks(search, "zebras stripes")
    qtbot.keyClick(search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: results.count() > 0, timeout=WAIT)
    idle(qtbot, tab)
    path = conversations_folder(tab) / "zebra-facts.json"
    path.write_bytes(path.read_bytes()[:-40])  # damaged since the search
    item = results.item(0)
    qtbot.mouseClick(
        results.viewport(), Qt.MouseButton.LeftButton, pos=results.visualItemRect(item).center()
    )
    status = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "cannot be opened" in status.text(), timeout=WAIT)
    assert "“Zebra facts”" in status.text() and "zebra-facts" not in status.text()
    idle(qtbot, tab)
    assert rows(tab)[0][0].startswith("⚠")  # the list marks it too


def test_the_transcript_follows_a_dark_theme(qtbot: Any, make_tab: MakeTab) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop import theme

    tab = make_tab(prepare=lambda s: seed(s, "Zebra facts", ["zebras have stripes", "yes"]))
    tree = child(tab, QTreeWidget, "conversation_list")
    item = tree.topLevelItem(0)
    qtbot.mouseClick(
        tree.viewport(), Qt.MouseButton.LeftButton, pos=tree.visualItemRect(item).center()
    )
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: "zebras have stripes" in transcript.toPlainText(), timeout=WAIT)
    assert "#0b5394" in transcript.toHtml()
    app = QApplication.instance()
    before = app.palette()
    try:
        app.setPalette(theme.dark_palette())
        qtbot.waitUntil(lambda: "#8ab4f8" in transcript.toHtml(), timeout=WAIT)
    finally:
        app.setPalette(before)
    qtbot.waitUntil(lambda: "#0b5394" in transcript.toHtml(), timeout=WAIT)


def test_the_tab_works_given_only_its_service(qtbot: Any, custodia_config: Config) -> None:
    """Constructor injection: a handle on an agent built here, no container anywhere."""
    from backends.conversations import ConversationAgent
    from backends.models.chat import ScriptedChat
    from backends.models.registry import ChatChoice
    from backends.services import Lazy

    agent = ConversationAgent(
        custodia_config,
        embedder=HashingEmbedder,
        chat=lambda: ChatChoice(ScriptedChat()),
        use_keyring=False,
    )
    workers = WorkerPool()
    tab = ConversationsTab(Lazy.of(agent), workers)
    qtbot.addWidget(tab, before_close_func=lambda w: workers.shutdown())
    tab.show()
    idle(qtbot, tab)
    say(qtbot, tab, "Tell me about zebras")
    qtbot.waitUntil(lambda: len(rows(tab)) == 1, timeout=WAIT)
    [[name, _date, model, count]] = rows(tab)
    assert (name, model, count) == ("Tell me about zebras", "scripted", "2")
    conversation_id = child(tab, QTextBrowser, "transcript").property("conversation_id")
    assert agent.load(conversation_id).history[0].content == "Tell me about zebras"
    workers.shutdown()
    agent.close()


# -- answers checked against past conversations (CT9) -------------------------------------


def test_the_answer_marks_what_a_past_message_states_and_what_is_its_own(
    qtbot: Any, make_tab: MakeTab
) -> None:
    """The sentence a past message states gets ✓ [1] and names that conversation; the other
    is muted, as not from the past conversations — not struck out."""
    from backends.models.chat import ScriptedChat

    reply = "Zebras have stripes. They are my favourite animals."
    tab = make_tab(
        chat=ScriptedChat(replies=[reply]),
        prepare=lambda s: seed(s, "Zebra facts", ["zebras have stripes", "yes, they do"]),
    )
    say(qtbot, tab, "Do zebras have stripes?")
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: transcript.property("checked_messages") == "1", timeout=WAIT)
    assert (transcript.property("from_past"), transcript.property("own")) == (1, 1)
    text = transcript.toPlainText()
    assert "Zebras have stripes. ✓ [1]" in text
    assert "[1] from “Zebra facts”" in text and "You: zebras have stripes" in text
    assert "not from your past conversations" in text
    page = transcript.toHtml()
    assert 'href="source:1:1"' in page
    assert "font-style:italic" in page and "line-through" not in page
    own = re.search(r"<span style=\"[^\"]*\">They are my favourite animals\.</span>", page)
    assert own is not None and "italic" in own.group(0)

    status = child(tab, QLabel, "tab_status")
    tab.chat._on_transcript_anchor_clicked(QUrl("source:1:1"))  # what clicking ✓ [1] does
    assert status.text().startswith("[1] from “Zebra facts”")
    assert "zebras have stripes" in status.text()


def test_no_marks_without_past_conversations(qtbot: Any, make_tab: MakeTab) -> None:
    from backends.models.chat import ScriptedChat

    tab = make_tab(chat=ScriptedChat(replies=["Zebras have stripes."]))
    say(qtbot, tab, "Do zebras have stripes?")
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: "Zebras have stripes." in transcript.toPlainText(), timeout=WAIT)
    assert transcript.property("checked_messages") == ""
    assert "✓" not in transcript.toPlainText()


# -- history questions answered from the history (AL1) -----------------------------------------


def test_a_history_question_quotes_the_past_message_and_withholds_the_models_invention(
    qtbot: Any, make_tab: MakeTab
) -> None:
    """ "What did I decide about the flights?": the past message that says it, quoted with its
    date and conversation (a link that opens it); the model's draft — a phone number, a
    flight nobody chose — struck out, never the answer."""
    from backends.models.chat import ScriptedChat

    reply = "You chose Vueling. Call 1-800-325-4769 to confirm."
    tab = make_tab(
        chat=ScriptedChat(replies=[reply]),
        prepare=lambda s: seed(
            s, "Rome trip", ["I decided to take the Iberia flight on 12 October", "Good choice."]
        ),
    )
    say(qtbot, tab, "What did I decide about the flights?")
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: transcript.property("checked_messages") == "1", timeout=WAIT)
    assert transcript.property("answer_mode") == "composed"
    assert (transcript.property("from_past"), transcript.property("withheld")) == (1, 2)
    text = transcript.toPlainText()
    assert "in “Rome trip”: “I decided to take the Iberia flight on 12 October” ✓ [1]" in text
    page = transcript.toHtml()
    assert 'href="open:rome-trip:0"' in page
    # issue 30: the withheld draft is folded behind a link, not shown struck through
    assert "Vueling" not in text and "1-800" not in text and "line-through" not in page
    assert 'href="withheld:1"' in page and "Show what was withheld" in text
    transcript.anchorClicked.emit(QUrl("withheld:1"))  # what clicking the link does
    text, page = transcript.toPlainText(), transcript.toHtml()
    assert "line-through" in page and "Vueling" in text and "Hide what was withheld" in text
    answer = text.split("Withheld")[0]
    assert "Vueling" not in answer and "1-800" not in answer
    transcript.anchorClicked.emit(QUrl("withheld:1"))
    assert "Vueling" not in transcript.toPlainText()


def test_never_discussed_is_said_not_guessed(qtbot: Any, make_tab: MakeTab) -> None:
    from backends.models.chat import ScriptedChat

    chat = ScriptedChat(replies=["You chose the blue kitchen."])
    tab = make_tab(
        chat=chat,
        prepare=lambda s: seed(s, "Rome trip", ["I decided to take the Iberia flight", "OK."]),
    )
    say(qtbot, tab, "What did I decide about the new kitchen?")
    transcript = child(tab, QTextBrowser, "transcript")
    qtbot.waitUntil(lambda: transcript.property("answer_mode") == "dont_know", timeout=WAIT)
    assert "I can't find that in your conversations." in transcript.toPlainText()
    assert "blue kitchen" not in transcript.toPlainText() and chat.calls == []


def test_a_model_chosen_elsewhere_is_the_one_the_next_chat_uses(
    qtbot: Any, custodia_window: Any, window_tab: ConversationsTab
) -> None:
    """Tester, issue 30: after the welcome's "Use it" the banner said every assistant
    answers with the found model, but the conversations picker kept the old one (its list
    was read once, from the configuration the agent was built with), and so did the chat."""
    idle(qtbot, window_tab)
    picker = child(window_tab, QComboBox, "model_picker")
    assert picker.currentData() == "scripted"
    custodia_window.services.use_model("conversations", "retrieval-only")
    custodia_window._models_changed()
    qtbot.waitUntil(lambda: picker.currentData() == "retrieval-only", timeout=WAIT)
    assert picker.findData("scripted") < 0  # no longer the configured one; testers' only


def test_the_model_box_shows_the_models_whole_name(
    qtbot: Any, custodia_window: Any, window_tab: ConversationsTab
) -> None:
    """Tester, issue 30: "SmolLM2-135M-Instruct (llama.c" even at 1366x768 — the box took
    a third of its row and the conversation's title the rest."""
    custodia_window.resize(1366, 768)
    idle(qtbot, window_tab)
    picker = child(window_tab, QComboBox, "model_picker")
    picker.addItem("SmolLM2-135M-Instruct (llama.cpp, configured)", "long")
    picker.setCurrentIndex(picker.count() - 1)
    qtbot.waitUntil(
        lambda: picker.width() >= picker.fontMetrics().horizontalAdvance(picker.currentText()),
        timeout=WAIT,
    )
