"""The agent: chat turns, bad files isolated, index reconciliation (CA3), model picker."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from backends.config import Config
from backends.conversations.errors import (
    ConversationError,
    CorruptConversationError,
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    InvalidNameError,
    TurnFailedError,
    WrongKeyError,
)
from backends.conversations.files import ConversationFiles
from backends.conversations.keys import HistoryCipher, generate_key, key_id
from backends.conversations.naming import MAX_NAME
from backends.conversations.service import ConversationAgent
from backends.errors import CustodiaEnvironmentError, ModelUnavailableError
from backends.models.chat import (
    RETRIEVAL_ONLY_LABEL,
    ChatModel,
    Prompt,
    ScriptedChat,
    ShouldStop,
)

from .conftest import MakeAgent, conversation, tree_bytes

MARKER = "my neighbour's parrot recites Lorca every Tuesday"


def test_a_chat_turn_is_saved_streamed_and_indexed(make_agent: MakeAgent) -> None:
    agent = make_agent(chat=ScriptedChat(replies=["Parrots mimic sounds they hear often."]))
    tokens: list[str] = []
    result = agent.ask("Why does a parrot talk?", on_token=tokens.append)
    assert "".join(tokens) == result.answer == "Parrots mimic sounds they hear often."
    assert len(tokens) > 1  # streamed word by word
    conv = agent.load(result.conversation_id)
    assert [(m.role, m.content) for m in conv.history] == [
        ("user", "Why does a parrot talk?"),
        ("assistant", "Parrots mimic sounds they hear often."),
    ]
    assert conv.history[1].model == "scripted:scripted" and conv.provider == "scripted"
    [row] = agent.conversations()
    assert (row.id, row.messages, row.provider, row.model) == (conv.id, 2, "scripted", "scripted")
    # named from its first message (issue 20); the file's clear name stays the date
    assert row.name == "Why does a parrot talk?" == conv.display_name
    assert conv.name.startswith("Conversation ") and conv.title == row.name
    result2 = agent.ask("And crows?", result.conversation_id)
    assert (result2.user_index, result2.answer_index) == (2, 3)
    assert agent.vectors().count() == 4


def test_context_from_other_conversations_reaches_the_model(make_agent: MakeAgent) -> None:
    chat = ScriptedChat()
    agent = make_agent(chat=chat)
    first = agent.ask("My sister Lucia lives in Granada near the Alhambra")
    second = agent.ask("Where does my sister Lucia live?")
    assert second.conversation_id != first.conversation_id
    assert second.context >= 1 and second.shown is not None and second.shown.mode == "composed"
    assert "Granada" in second.answer and "context passages" not in second.answer
    passages = chat.calls[-1].context
    assert any("Granada" in p for p in passages)
    # the current conversation is not its own context
    third = agent.ask("Lucia again", second.conversation_id)
    assert all(second.conversation_id not in p for p in chat.calls[-1].context)
    assert third.conversation_id == second.conversation_id


def test_each_sentence_says_whether_a_past_conversation_states_it(make_agent: MakeAgent) -> None:
    """The answer is checked against the past messages it was given (the tutor's check): a
    sentence a past message states, and one the model made up."""
    chat = ScriptedChat(
        replies=[
            "Noted.",
            "My sister Lucia lives in Granada near the Alhambra. She moved there in 2011.",
        ]
    )
    agent = make_agent(chat=chat)
    assert agent.ask("My sister Lucia lives in Granada near the Alhambra").checked == ()
    result = agent.ask("Where does my sister Lucia live?")
    first, second = result.checked
    assert first.supported and "Granada" in result.context_passages[first.number - 1]
    assert not second.supported and "2011" in second.reason
    assert result.context_passages and result.context == len(result.context_passages)


def test_a_history_question_is_answered_from_the_history(make_agent: MakeAgent) -> None:
    """AL1: the past message that holds it, quoted, dated and named by its conversation; the
    model's invention ("in 2011", a phone number) withheld, never shown as the answer."""
    chat = ScriptedChat(
        replies=[
            "Noted.",
            "You decided to take the Vueling flight. Call 1-800-325-4769 to confirm.",
        ]
    )
    agent = make_agent(chat=chat)
    told = agent.ask("I decided to take the Iberia flight on 12 October")
    shown: list[str] = []
    result = agent.ask(
        "What did I decide about the flights?", on_answer=lambda a, p: shown.append(a.text)
    )
    assert result.shown is not None and result.shown.mode == "composed"
    assert len(shown) == 1 and shown[0] == result.answer  # at once, before the draft
    assert "“I decided to take the Iberia flight on 12 October” [1]" in result.answer
    assert result.quoted == ((told.conversation_id, 0),)
    assert "Vueling" not in result.answer and "1-800" not in result.answer
    assert {s.kind for s in result.shown.withheld} == {"withheld"}
    saved = agent.load(result.conversation_id).history[-1]
    assert saved.content == result.answer and saved.model == "custodia:composed"


def test_never_discussed_is_said_and_not_guessed(make_agent: MakeAgent) -> None:
    chat = ScriptedChat(replies=["You chose the blue kitchen in March."])
    agent = make_agent(chat=chat)
    result = agent.ask("What did I decide about the new kitchen?")
    assert result.answer == "I can't find that in your conversations."
    assert chat.calls == []  # no model guess
    spanish = agent.ask("¿Qué te dije sobre la boda de mi prima?")
    assert spanish.answer == "No lo encuentro en tus conversaciones."


def test_other_questions_get_the_models_words_labelled(make_agent: MakeAgent) -> None:
    parrot = "Tea is best brewed for three minutes with freshly boiled water."
    agent = make_agent(chat=ScriptedChat(replies=[parrot]))
    first = agent.ask("How do I make a cup of tea?")
    assert first.answer == parrot and first.shown is not None and first.shown.mode == "model"
    assert [s.kind for s in first.shown.sentences] == ["own"]
    again = agent.ask("What is the capital of Italy?", first.conversation_id)
    assert again.answer.startswith("The model's answer was withheld: it repeats")


def test_stopping_keeps_what_was_said(make_agent: MakeAgent) -> None:
    agent = make_agent(chat=ScriptedChat(replies=["one two three four five six"]))
    seen: list[str] = []
    result = agent.ask("count", on_token=seen.append, should_stop=lambda: len(seen) >= 2)
    assert result.stopped and result.answer == "one two "
    answer = agent.load(result.conversation_id).history[1]
    assert answer.content == "one two " and answer.stopped
    finished = agent.ask("again", result.conversation_id)
    assert not finished.stopped and not agent.load(finished.conversation_id).history[3].stopped


@dataclass
class _BreaksAfter(ChatModel):
    """Says two words, then ``error`` is raised from inside the stream (a model dying, or
    Ctrl+C arriving while it waits for the next token)."""

    error: BaseException
    words: int = 2
    name: str = "breaks"

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        yield from ["one ", "two ", "three "][: self.words]
        raise self.error


def test_ctrl_c_while_streaming_keeps_the_partial_answer(make_agent: MakeAgent) -> None:
    agent = make_agent(chat=_BreaksAfter(KeyboardInterrupt()))
    saved: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        agent.ask("count slowly", on_saved=saved.append)
    [cid] = saved
    history = agent.load(cid).history
    assert [(m.role, m.content, m.stopped) for m in history] == [
        ("user", "count slowly", False),
        ("assistant", "one two ", True),
    ]
    assert history[1].model == "scripted:scripted"
    [row] = agent.conversations()
    assert row.id == cid and row.messages == 2


def test_a_model_failing_mid_way_names_the_saved_conversation(make_agent: MakeAgent) -> None:
    failing = ModelUnavailableError("http://127.0.0.1:11434/api/chat: stream broken")
    agent = make_agent(chat=_BreaksAfter(failing))
    with pytest.raises(TurnFailedError, match="partial answer") as caught:
        agent.ask("tell me a story")
    cid = caught.value.conversation_id
    assert cid in str(caught.value) and "stream broken" in str(caught.value)
    assert [(m.content, m.stopped) for m in agent.load(cid).history] == [
        ("tell me a story", False),
        ("one two ", True),
    ]
    silent = make_agent(chat=_BreaksAfter(failing, words=0))
    with pytest.raises(TurnFailedError, match="your message is saved") as caught:
        silent.ask("anyone there?", cid)  # continuing the same conversation
    assert caught.value.conversation_id == cid
    assert [m.content for m in silent.load(cid).history][2:] == ["anyone there?"]


def test_no_key_next_to_encrypted_history_writes_nothing(make_agent: MakeAgent, key: str) -> None:
    """CA2: never a conversation in clear next to an encrypted history."""
    make_agent(key=key).ask("encrypted already")
    keyless = make_agent()
    folder_before = tree_bytes(keyless.folder)
    # the variable's name is the details (issue 30)
    with pytest.raises(
        HistoryKeyRequiredError, match=r"set its key in the environment .*CONVERSATIONS_KEY\)"
    ) as caught:
        keyless.ask("this would be stored in clear")
    assert caught.value.key_ids == (key_id(key),)
    with pytest.raises(HistoryKeyRequiredError):
        keyless.create("empty")
    with pytest.raises(HistoryKeyRequiredError):
        keyless.add(conversation("imported"))
    assert tree_bytes(keyless.folder) == folder_before
    assert "encrypted" in keyless.encryption_status().key_problem
    assert keyless.encryption_status().warning
    # with the key, writing works again
    assert make_agent(key=key).ask("with the key").answer


def test_a_wrong_key_writes_nothing(make_agent: MakeAgent, key: str) -> None:
    """A typo'd key would start a conversation under a key nothing else uses: refused."""
    first = make_agent(key=key)
    first.ask("under the right key")
    wrong = make_agent(key=generate_key())
    folder_before = tree_bytes(wrong.folder)
    with pytest.raises(
        HistoryWrongKeyError,
        match=r"the key set in the environment .* opens none .*\(details: CONVERSATIONS_KEY\)",
    ):
        wrong.ask("lost under a typo")
    assert tree_bytes(wrong.folder) == folder_before
    # only clear conversations: a first key is fine (they get encrypted by "Set key…")
    home_clear = make_agent(cfg=_other_home(first, "clear"))
    home_clear.ask("in clear")
    keyed = make_agent(cfg=home_clear.config, key=key)
    assert keyed.ask("encrypted next to clear ones").answer
    assert keyed.encryption_status().key_problem == ""


def test_a_stray_file_under_another_key_does_not_block_writing(
    make_agent: MakeAgent, key: str
) -> None:
    agent = make_agent(key=key)
    agent.ask("mine")
    ConversationFiles(agent.folder, HistoryCipher([generate_key()])).write(
        conversation("someone else's", cid="stray")
    )
    agent.reconcile()
    assert agent.key_problem() is None
    assert agent.ask("still writing").answer


def test_names_are_tidied_and_limited(make_agent: MakeAgent) -> None:
    agent = make_agent()
    cid = agent.ask("name me").conversation_id
    assert agent.rename(cid, "  Trip\nto\r\nLisbon\t ").name == "Trip to Lisbon"
    path = agent.folder / f"{cid}.json"
    before = path.read_bytes()
    with pytest.raises(InvalidNameError, match=f"at most {MAX_NAME}"):
        agent.rename(cid, "x" * 5000)
    with pytest.raises(InvalidNameError, match="needs a name"):
        agent.rename(cid, "\n \t")
    assert path.read_bytes() == before
    [row] = agent.conversations()
    assert row.name == "Trip to Lisbon"
    added, _ = agent.add(conversation("imported", name="long\n" + "y" * 5000))
    assert len(agent.load(added).name) == MAX_NAME and "\n" not in agent.load(added).name
    with pytest.raises(InvalidNameError):
        agent.create("z" * (MAX_NAME + 1))


def _other_home(agent: ConversationAgent, name: str) -> Config:
    home = agent.config.home.parent / name
    home.mkdir()
    return replace(agent.config, home=home)


def test_retrieval_only_choice_is_labelled(make_agent: MakeAgent) -> None:
    agent = make_agent()
    agent.ask("Quantum tunnelling lets electrons pass barriers")
    result = agent.ask("tunnelling electrons barriers", model_key="retrieval-only")
    assert result.retrieval_only and result.provider == "retrieval-only"
    assert result.answer.startswith(RETRIEVAL_ONLY_LABEL) and "tunnelling" in result.answer


def test_model_choices_and_unknown_model(make_agent: MakeAgent) -> None:
    agent = make_agent()
    assert [c.key for c in agent.model_choices()] == ["scripted", "retrieval-only"]
    assert agent.model_choices()[0].label.endswith("configured)")
    with pytest.raises(CustodiaEnvironmentError, match="unknown model"):
        agent.ask("hi", model_key="nonsense")


class _FakeRuntime(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = {
            "/api/tags": {"models": [{"name": "llama3.2:1b"}, {"name": "qwen2.5:0.5b"}]},
            "/v1/models": {"data": [{"id": "local-gguf"}]},
        }.get(self.path)
        payload = json.dumps(body or {}).encode()
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def runtime_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeRuntime)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_local_ollama_and_openai_models_are_discovered(
    make_agent: MakeAgent, config, runtime_url: str
) -> None:
    from dataclasses import replace

    agent = make_agent(cfg=replace(config, ollama_url=runtime_url, openai_url=runtime_url + "/v1"))
    keys = [c.key for c in agent.discover_models()]
    assert keys == ["ollama:llama3.2:1b", "ollama:qwen2.5:0.5b", "openai:local-gguf"]
    # nothing listening: no models, no error
    closed = make_agent(cfg=replace(config, ollama_url="http://127.0.0.1:9", openai_url=""))
    assert closed.discover_models() == []


def _break_files(agent, key: str) -> dict[str, bytes]:
    """One good, one corrupt, one under another key, one truncated token: their bytes."""
    good = agent.ask(MARKER).conversation_id
    folder = agent.folder
    other = ConversationFiles(folder, HistoryCipher([generate_key()]))
    other.write(conversation("written elsewhere", cid="otherkey"), create=True)
    agent.files.write(conversation("to be cut", cid="corrupt"), create=True)
    raw = (folder / "corrupt.json").read_bytes()
    (folder / "corrupt.json").write_bytes(raw[:-40])
    agent.files.write(conversation("token", cid="truncated"), create=True)
    data = json.loads((folder / "truncated.json").read_text())
    data["history"] = data["history"][:30]
    (folder / "truncated.json").write_text(json.dumps(data))
    return {"good": (folder / f"{good}.json").read_bytes()} | {
        name: (folder / f"{name}.json").read_bytes()
        for name in ("otherkey", "corrupt", "truncated")
    }


def test_a_bad_file_fails_alone_and_is_never_overwritten(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    before = _break_files(agent, key)
    agent.reconcile()
    rows = {r.id: r for r in agent.conversations()}
    assert len(rows) == 4
    assert rows["otherkey"].error.startswith("wrong key") and rows["otherkey"].messages is None
    assert rows["corrupt"].error.startswith("corrupt")
    assert "damaged or truncated" in rows["truncated"].error
    good = next(r for r in rows.values() if r.readable)
    assert good.messages == 2
    with pytest.raises(WrongKeyError):
        agent.load("otherkey")
    with pytest.raises(CorruptConversationError):
        agent.load("truncated")
    for bad in ("otherkey", "corrupt", "truncated"):
        with pytest.raises(ConversationError):
            agent.rename(bad, "new name")
        with pytest.raises(ConversationError):
            agent.ask("continue", bad)
    # the good one, search and new chats keep working
    agent.sync_vectors()
    assert {h.conversation_id for h in agent.search("parrot recites Lorca", 3)} == {good.id}
    agent.ask("another day", good.id)
    agent.ask("a new conversation")
    report = agent.rotate_key(generate_key())
    assert sorted(name for name, _ in report.failed) == [
        "corrupt.json",
        "otherkey.json",
        "truncated.json",
    ]
    folder = agent.folder
    for name in ("otherkey", "corrupt", "truncated"):
        assert (folder / f"{name}.json").read_bytes() == before[name]
    assert agent.encryption_status().unreadable == 3


def test_reconcile_reads_only_what_changed_and_the_files_win(
    make_agent: MakeAgent, key: str
) -> None:
    agent = make_agent(key=key)
    ids = [agent.ask(f"message number {i}").conversation_id for i in range(5)]
    restarted = make_agent(key=key)
    report = restarted.reconcile()
    assert (report.files, report.unchanged, report.reread, report.removed) == (5, 5, 0, 0)
    # another process appends to one file and deletes another: the files win
    other = ConversationFiles(agent.folder, HistoryCipher([key]))
    conv, _ = other.read(f"{ids[0]}.json")
    conv.history.append(conv.history[0])
    other.write(conv)
    (agent.folder / f"{ids[1]}.json").unlink()
    report = restarted.reconcile()
    assert (report.unchanged, report.reread, report.removed) == (3, 1, 1)
    rows = {r.id: r for r in restarted.conversations()}
    assert rows[ids[0]].messages == 3 and ids[1] not in rows
    # a deleted index is rebuilt from the files
    restarted.close()
    agent.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(agent.config.path("conversations.sqlite3")) + suffix).unlink(missing_ok=True)
    fresh = make_agent(key=key)
    assert sorted(r.id for r in fresh.conversations()) == sorted([ids[0], *ids[2:]])


def test_the_index_holds_no_message_text(make_agent: MakeAgent) -> None:
    agent = make_agent()  # even without encryption
    agent.ask(MARKER)
    agent.close()
    db = sqlite3.connect(agent.config.path("conversations.sqlite3"))
    columns = [r[1] for r in db.execute("PRAGMA table_info(conversations)")]
    db.close()
    assert columns == [
        "file", "name", "date", "provider", "model", "path", "messages", "encrypted", "key_id",
        "error", "ino", "mtime_ns", "size", "title",
    ]  # fmt: skip
    for path in agent.config.home.glob("conversations.sqlite3*"):
        assert b"Lorca" not in path.read_bytes()


def test_a_key_appearing_later_makes_files_readable(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    cid = agent.ask("encrypted words").conversation_id
    keyless = make_agent()
    [row] = keyless.conversations()
    assert row.error.startswith("key required") and row.encrypted
    assert keyless.encryption_status().unreadable == 1
    again = make_agent(key=key)
    [row] = again.conversations()
    assert row.readable and row.messages == 2 and row.id == cid


def test_delete_removes_file_row_and_vectors(make_agent: MakeAgent) -> None:
    agent = make_agent()
    keep = agent.ask("keep this one").conversation_id
    gone = agent.ask("delete that one").conversation_id
    assert agent.vectors().count() == 4
    agent.delete(gone)
    assert [r.id for r in agent.conversations()] == [keep]
    assert not (agent.folder / f"{gone}.json").exists()
    assert agent.vectors().count() == 2
    with pytest.raises(ConversationError):
        agent.delete(gone)


def test_text_utf8_cannot_hold_is_repaired_and_said(make_agent: MakeAgent, key: str) -> None:
    """Lone surrogates (undecodable bytes, a JSON escape) never crash the file, the index or
    the cipher: the window and the command line alike get repaired text and a notice."""
    agent = make_agent(key=key)
    result = agent.ask("caf\udce9 au lait")
    assert "1 character(s)" in result.notice and "\ufffd" in result.notice
    stored = agent.load(result.conversation_id)
    assert stored.history[0].content == "caf\ufffd au lait"
    assert agent.ask("plain words").notice == ""
    assert agent.search("caf\udce9 lait", 3)[0].conversation_id == result.conversation_id
    renamed = agent.rename(result.conversation_id, "name \udfff here")
    assert renamed.name == "name \ufffd here"
    assert [r.name for r in make_agent(key=key).conversations()].count("name \ufffd here") == 1
