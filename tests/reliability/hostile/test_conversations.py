"""Hostile conversation files, Fernet tokens, imports and conversation ids (CA1, CA2).

A conversation file is the source of truth and lives on disk where anyone with the laptop
can edit it; an import file comes from anywhere. Whatever they hold, Custodia answers with a
:class:`~backends.conversations.errors.ConversationError` (for that file only) or an
:class:`~backends.conversations.importers.ImportFormatError`, leaves the bytes it could not
read untouched, and keeps every other conversation readable.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from backends.config import Config
from backends.conversations.errors import ConversationError
from backends.conversations.files import FORMAT, Conversation, StoredMessage, now_iso
from backends.conversations.importers import EXPORT_FORMAT, import_file, parse
from backends.conversations.keys import generate_key, key_id
from backends.conversations.service import ConversationAgent
from backends.errors import CustodiaEnvironmentError
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.models.registry import ChatChoice
from tests.reliability.conftest import Figures, tree_bytes
from tests.reliability.hostile import BUDGET, hostile_settings, refused_cleanly
from tests.reliability.hostile.strategies import Blob, deep, dumps, json_values, mutated, nasty_text

KEY = generate_key()
SECRET = "the patient's secret sentence 4417"


def _no_vectors(config: object, embedder: object, fresh: bool) -> Any:
    from backends.errors import StoreUnavailableError

    raise StoreUnavailableError("no vector index in these tests")


@pytest.fixture
def agent(config: Config) -> Iterator[ConversationAgent]:
    embedder = HashingEmbedder(32)
    chat = ChatChoice(ScriptedChat())
    agent = ConversationAgent(
        replace(config, conversations_key=KEY),
        embedder=lambda: embedder,
        chat=lambda: chat,
        vectors=_no_vectors,
        use_keyring=False,
    )
    agent.start()
    yield agent
    agent.close()


def _seed(agent: ConversationAgent) -> Conversation:
    conversation = Conversation(
        id="a" * 32,
        name="kept",
        date=now_iso(),
        provider="scripted",
        model="scripted",
        history=[StoredMessage("user", SECRET), StoredMessage("assistant", "noted")],
    )
    agent.add(conversation)
    return conversation


def _valid_file(agent: ConversationAgent) -> bytes:
    return agent.files.encode(
        Conversation(
            id="b" * 32,
            name="n",
            date=now_iso(),
            provider="p",
            model="m",
            history=[StoredMessage("user", "hello"), StoredMessage("assistant", "hi")],
        )
    )


conversation_like = st.fixed_dictionaries(
    {},
    optional={
        "format": st.just(FORMAT) | json_values,
        "version": st.just(1) | json_values,
        "id": nasty_text | json_values,
        "name": nasty_text | json_values,
        "date": st.just(now_iso()) | json_values,
        "provider": st.just("p") | json_values,
        "model": st.just("m") | json_values,
        "encrypted": st.booleans() | json_values,
        "key_id": st.just(key_id(KEY)) | json_values,
        "history": json_values
        | st.lists(
            st.fixed_dictionaries(
                {}, optional={"role": nasty_text | json_values, "content": json_values}
            ),
            max_size=3,
        ),
    },
)


def _hostile_file_bytes(agent: ConversationAgent) -> st.SearchStrategy[bytes]:
    return st.one_of(
        conversation_like.map(dumps),
        mutated(_valid_file(agent)),
        st.binary(max_size=200),
        st.integers(1, 60_000).map(lambda n: deep(n).encode()),
        st.integers(1, 60_000).map(lambda n: deep(n, "dict").encode()),
        st.integers(1, 60_000).map(
            lambda n: (
                f'{{"format": "{FORMAT}", "version": 1, "name": "n", "date": "d", '
                f'"provider": "p", "model": "m", "history": {deep(n)}}}'
            ).encode()
        ),
    )


@pytest.mark.parametrize("budget", BUDGET)
def test_a_hostile_conversation_file_fails_alone_and_is_never_rewritten(
    budget: str, agent: ConversationAgent, figures: Figures
) -> None:
    kept = _seed(agent)
    counter = iter(range(10**9))

    @hostile_settings(budget, 60)
    @given(raw=_hostile_file_bytes(agent).map(Blob))
    @example(raw=Blob(deep(200_000).encode()))
    @example(
        raw=Blob(b'{"format": "' + FORMAT.encode() + b'", "history": "' + b"x" * 3_000_000 + b'"}')
    )
    def check(raw: bytes) -> None:
        figures.add("hostile", "conversation files", "inputs")
        name = f"h{next(counter):08d}.json"
        path = agent.folder / name
        path.write_bytes(raw)
        try:
            conversation, _ = agent.files.read(name)
        except ConversationError as err:
            assert str(err).strip()
            figures.add("hostile", "conversation files", "refused")
        else:
            assert all(isinstance(m.content, str) for m in conversation.history)
        agent.reconcile()  # the listing copes with it
        row = agent.index.get(name)
        assert row is not None and (row.readable or row.error)
        assert path.read_bytes() == raw  # never rewritten
        assert agent.load(kept.id).history == kept.history  # the others still load
        path.unlink()
        agent.reconcile()

    check()


@pytest.mark.parametrize("budget", BUDGET)
def test_hostile_fernet_tokens_are_wrong_key_or_corrupt(
    budget: str, agent: ConversationAgent, figures: Figures
) -> None:
    good = json.loads(_valid_file(agent))
    token = good["history"]
    tokens = st.one_of(
        st.text(max_size=300),
        mutated(token.encode()).map(lambda b: b.decode("latin-1")),
        st.binary(max_size=200).map(lambda b: base64.urlsafe_b64encode(b).decode()),
        st.integers(0, len(token)).map(lambda n: token[:n]),
        st.just(token + "=="),
        json_values,
    )

    @hostile_settings(budget, 60)
    @given(history=tokens, kid=st.just(good["key_id"]) | st.none() | nasty_text | json_values)
    def check(history: Any, kid: Any) -> None:
        figures.add("hostile", "Fernet tokens", "inputs")
        data = dict(good, history=history)
        if kid is None:
            data.pop("key_id")
        else:
            data["key_id"] = kid
        raw = dumps(data)
        path = agent.folder / ("c" * 32 + ".json")
        try:
            conversation = agent.files.decode(path, raw)
        except ConversationError as err:
            assert err.reason in ("corrupt", "wrong key", "key required"), err
            figures.add("hostile", "Fernet tokens", "refused")
        else:  # only the untouched token (or an equivalent encoding of it) decrypts
            assert [m.content for m in conversation.history] == ["hello", "hi"]

    check()


def _chatgpt_node(children: Any, parent: Any, message: Any) -> dict[str, Any]:
    return {"children": children, "parent": parent, "message": message}


chatgpt_like = st.fixed_dictionaries(
    {
        "mapping": st.dictionaries(
            st.sampled_from(["a", "b", "c"]),
            st.one_of(
                json_values,
                st.builds(
                    _chatgpt_node,
                    st.lists(st.sampled_from(["a", "b", "c", "zz"]), max_size=3) | json_values,
                    st.sampled_from(["a", "b", "c", None]) | json_values,
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "author": st.fixed_dictionaries(
                                {}, optional={"role": st.sampled_from(["user", "assistant"])}
                            )
                            | json_values,
                            "content": st.fixed_dictionaries(
                                {},
                                optional={
                                    "content_type": st.sampled_from(["text", "code"]) | json_values,
                                    "parts": st.lists(json_values | nasty_text, max_size=3)
                                    | json_values,
                                    "text": json_values,
                                },
                            )
                            | json_values,
                            "metadata": json_values,
                            "create_time": st.floats() | json_values,
                        },
                    )
                    | json_values,
                ),
            ),
            max_size=3,
        )
    },
    optional={
        "current_node": st.sampled_from(["a", "b", "c"]) | json_values,
        "title": json_values,
        "create_time": st.floats() | json_values,
        "default_model_slug": json_values,
    },
)

bundle_like = st.fixed_dictionaries(
    {"format": st.just(EXPORT_FORMAT)},
    optional={
        "conversations": json_values
        | st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": nasty_text | json_values,
                    "name": json_values,
                    "date": json_values,
                    "provider": json_values,
                    "model": json_values,
                    "history": json_values
                    | st.lists(
                        st.fixed_dictionaries(
                            {"role": st.just("user") | json_values, "content": nasty_text}
                        ),
                        max_size=3,
                    ),
                },
            ),
            max_size=3,
        ),
    },
)


def _zip(
    inner: bytes, name: str = "conversations.json", method: int = zipfile.ZIP_DEFLATED
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=method) as archive:
        archive.writestr(name, inner)
    return buffer.getvalue()


import_files = st.one_of(
    chatgpt_like.map(dumps),
    st.lists(chatgpt_like, max_size=2).map(dumps),
    bundle_like.map(dumps),
    conversation_like.map(dumps),
    json_values.map(dumps),
    st.binary(max_size=300),
    st.binary(max_size=300).map(lambda b: b"PK" + b),
    chatgpt_like.map(lambda d: _zip(dumps(d))),
    chatgpt_like.map(dumps).flatmap(lambda raw: mutated(_zip(raw))),
    st.integers(1, 60_000).map(lambda n: deep(n).encode()),
    st.integers(1, 60_000).map(lambda n: _zip(deep(n).encode())),
)


@pytest.mark.parametrize("budget", BUDGET)
def test_a_hostile_import_is_refused_or_only_adds(
    budget: str, agent: ConversationAgent, home: Path, tmp_path: Path, figures: Figures
) -> None:
    kept = _seed(agent)
    source = tmp_path / "import.json"

    @hostile_settings(budget, 80)
    @given(raw=import_files.map(Blob))
    @example(raw=Blob(deep(200_000).encode()))
    @example(raw=Blob(_zip(b"[" * 500_000 + b"]" * 500_000)))
    @example(raw=Blob(_zip(b"x", name="../../conversations.json")))
    def check(raw: bytes) -> None:
        figures.add("hostile", "imports", "inputs")
        source.write_bytes(raw)
        before = tree_bytes(agent.folder)
        refused, _ = refused_cleanly(lambda: import_file(agent, source), home)
        if refused:
            figures.add("hostile", "imports", "refused")
        after = tree_bytes(agent.folder)
        for name, data in before.items():  # nothing stored is changed, at most added to
            assert after.get(name) == data, name
        for name in set(after) - set(before):
            assert name.endswith(".json") and "/" not in name
            conversation, _ = agent.files.read(name)
            assert conversation.encrypted  # imports are stored under the current key
        assert agent.load(kept.id).history == kept.history
        assert not [
            p for p in tmp_path.rglob("*") if p.is_file() and home not in p.parents and p != source
        ], "an import wrote outside the data dir"

    check()


@pytest.mark.parametrize("budget", BUDGET)
def test_conversation_ids_cannot_reach_outside_the_folder(
    budget: str, agent: ConversationAgent, home: Path, tmp_path: Path, figures: Figures
) -> None:
    kept = _seed(agent)
    outside = tmp_path / "outside.json"
    outside.write_text('{"format": "custodia.conversation"}')
    probes = st.one_of(
        nasty_text,
        st.sampled_from(
            [
                "../outside",
                "../../outside",
                str(tmp_path / "outside"),
                "..%2Foutside",
                "a/../../outside",
                "a" * 129,
                kept.id + "/",
                kept.id + "\x00",
                kept.id + ".json",
            ]
        ),
        st.text(alphabet="./\\%~0aA", min_size=1, max_size=20),
    )

    @hostile_settings(budget, 60)
    @given(cid=probes, name=nasty_text)
    def check(cid: str, name: str) -> None:
        figures.add("hostile", "conversation ids and paths", "inputs")
        for action in (
            lambda: agent.load(cid),
            lambda: agent.rename(cid, name or "x"),
            lambda: agent.delete(cid),
            lambda: agent.ask("hi", conversation_id=cid or None),
        ):
            if cid in (kept.id, ""):  # "" is no id: ask() starts a new conversation
                continue
            refused, _ = refused_cleanly(action, home)
            assert refused, f"{cid!r} was accepted"
        assert outside.read_text() == '{"format": "custodia.conversation"}'
        assert agent.load(kept.id).history == kept.history

    check()


@pytest.mark.parametrize("budget", BUDGET)
def test_a_bundle_with_traversal_ids_lands_inside_the_folder(
    budget: str, agent: ConversationAgent, tmp_path: Path, figures: Figures
) -> None:
    source = tmp_path / "bundle.json"

    @hostile_settings(budget, 30)
    @given(ids=st.lists(nasty_text, min_size=1, max_size=3))
    def check(ids: list[str]) -> None:
        figures.add("hostile", "conversation ids and paths", "inputs")
        bundle = {
            "format": EXPORT_FORMAT,
            "conversations": [
                {"id": i, "name": i, "history": [{"role": "user", "content": "x"}]} for i in ids
            ],
        }
        source.write_bytes(dumps(bundle))
        result = import_file(agent, source)
        for conversation_id, _ in result.imported:
            path = agent.files.path(conversation_id)
            assert path.parent == agent.folder and path.exists()
        assert {p.parent for p in tmp_path.rglob("*.json")} <= {agent.folder, tmp_path}

    check()


def test_parse_never_raises_anything_untyped_on_a_huge_file(agent: ConversationAgent) -> None:
    raw = dumps({"format": EXPORT_FORMAT, "conversations": [{"history": "x" * 20_000_000}]})
    with pytest.raises(CustodiaEnvironmentError):
        parse(Path("big.json"), raw, agent.files)


# -- a hostile huge file in the folder (issue 14: 9) --------------------------------------------


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the characters it was given: the work done."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self.chars = 0
        self.longest = 0

    def embed_batch(self, texts: Any) -> Any:
        self.chars += sum(len(t) for t in texts)
        self.longest = max([self.longest, *(len(t) for t in texts)])
        return super().embed_batch(texts)


def _clear_file(history: list[dict[str, str]]) -> bytes:
    return dumps(
        {
            "format": FORMAT,
            "version": 1,
            "name": "dropped",
            "date": now_iso(),
            "provider": "p",
            "model": "m",
            "encrypted": False,
            "history": history,
        }
    )


def _agent_with(config: Config, embedder: HashingEmbedder) -> ConversationAgent:
    from backends.conversations.service import default_vectors

    chat = ChatChoice(ScriptedChat())
    return ConversationAgent(
        replace(config, conversations_key=KEY),
        embedder=lambda: embedder,
        chat=lambda: chat,
        vectors=default_vectors,  # a real local Chroma: the work is the real one
        use_keyring=False,
    )


def test_a_file_over_the_size_limit_costs_one_stat(config: Config) -> None:
    """A 62 MB file dropped into the folder kept the next ``ask`` busy for minutes: one just
    over the limit is named as too large and never parsed, embedded or searched."""
    from backends.conversations import files as files_module

    embedder = CountingEmbedder(32)
    agent = _agent_with(config, embedder)
    try:
        _seed(agent)
        limit = files_module.MAX_FILE_BYTES
        words = ("hostile words " * (limit // 14 + 1))[: limit + 1]
        big = agent.folder / f"{'c' * 32}.json"
        big.write_bytes(_clear_file([{"role": "user", "content": words}]))
        before = big.read_bytes()
        agent.start()
        agent.sync_vectors()
        row = {r.file: r for r in agent.conversations()}[big.name]
        assert row.error is not None and row.error.startswith("too large: the file is 16.0 MiB")
        assert "move it out of the folder" in row.error
        assert embedder.chars < 1000  # the seeded conversation only
        assert agent.search("patient secret sentence", 3)[0].conversation_id == "a" * 32
        result = agent.ask("another conversation")  # the next turn is not held up
        assert result.answer
        assert big.read_bytes() == before
    finally:
        agent.close()


def test_one_file_costs_a_bounded_amount_of_indexing(
    config: Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the size limit, a file still cannot cost more than its message limit and the
    first ``EMBED_CHARS`` characters of each message."""
    from backends.conversations import files as files_module
    from backends.conversations.vectors import EMBED_CHARS

    monkeypatch.setattr(files_module, "MAX_MESSAGES", 100)
    embedder = CountingEmbedder(32)
    agent = _agent_with(config, embedder)
    try:
        many = agent.folder / f"{'d' * 32}.json"
        many.write_bytes(_clear_file([{"role": "user", "content": f"m{i}"} for i in range(101)]))
        long = agent.folder / f"{'e' * 32}.json"
        long.write_bytes(_clear_file([{"role": "user", "content": "long " * 400_000}]))
        agent.start()
        agent.sync_vectors()
        rows = {r.file: r for r in agent.conversations()}
        assert (rows[many.name].error or "").startswith("too large: 101 messages, over the 100")
        assert rows[long.name].readable and embedder.longest == EMBED_CHARS
        with pytest.raises(ConversationError, match="over the 100"):
            agent.files.write(
                Conversation(
                    id="f" * 32,
                    name="n",
                    date=now_iso(),
                    provider="p",
                    model="m",
                    history=[StoredMessage("user", "x")] * 101,
                )
            )
    finally:
        agent.close()
