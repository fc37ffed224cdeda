"""Fixtures for the conversation agent: a data dir, keys, agents that are closed after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.conversations.files import Conversation, StoredMessage
from backends.conversations.keys import generate_key
from backends.conversations.naming import new_id, now_iso
from backends.conversations.service import ConversationAgent
from backends.models.chat import ChatModel, ScriptedChat
from backends.models.embedders import Embedder, HashingEmbedder
from backends.models.registry import ChatChoice

MakeAgent = Callable[..., ConversationAgent]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def config(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture
def key() -> str:
    return generate_key()


@pytest.fixture
def make_agent(config: Config) -> Iterator[MakeAgent]:
    """Build agents on one data dir (building another = a restart); all closed at the end.

    ``key=`` sets CONVERSATIONS_KEY, ``embedder=``/``chat=`` replace the deterministic ones,
    ``cfg=`` another configuration. The OS keyring is not used unless ``use_keyring=True``.
    """
    opened: list[ConversationAgent] = []

    def factory(
        key: str = "",
        embedder: Embedder | None = None,
        chat: ChatModel | None = None,
        cfg: Config | None = None,
        start: bool = True,
        **kwargs: Any,
    ) -> ConversationAgent:
        base = cfg or config
        emb = embedder or HashingEmbedder(384)
        model = chat or ScriptedChat()
        agent = ConversationAgent(
            replace(base, conversations_key=key),
            embedder=lambda: emb,
            chat=lambda: ChatChoice(model),
            use_keyring=kwargs.pop("use_keyring", False),
            **kwargs,
        )
        opened.append(agent)
        if start:
            agent.start()
        return agent

    yield factory
    for agent in opened:
        agent.close()


def conversation(*texts: str, name: str = "Test", cid: str | None = None) -> Conversation:
    """A conversation alternating user/assistant messages."""
    roles = ("user", "assistant")
    return Conversation(
        id=cid or new_id(),
        name=name,
        date=now_iso(),
        provider="scripted",
        model="scripted",
        history=[StoredMessage(roles[i % 2], t, now_iso()) for i, t in enumerate(texts)],
    )


def tree_bytes(root: Path) -> dict[Path, bytes]:
    """Every regular file under ``root`` with its bytes."""
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
