"""Issue 25, item 12: a conversation turn on a disk that fills up between the user's message
and the answer. The message was saved; the turn fails — and says so, naming the conversation,
instead of an error beside a silent one-message conversation."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.config import Config
from backends.conversations.errors import TurnFailedError
from backends.conversations.service import ConversationAgent
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.models.registry import ChatChoice
from tests.reliability.faults.filesystems import tmpfs

EMBEDDER = HashingEmbedder(32)


@pytest.fixture
def small_home(tmp_path: Path) -> Iterator[Path]:
    home = tmp_path / "home"
    with tmpfs(home, size="8m") as mounted:
        if not mounted:
            pytest.skip("a full disk between two writes needs a small tmpfs (root and mount)")
        yield home


def _fill(home: Path, leave: int) -> Path:
    """Fill the filesystem until ``leave`` bytes are free."""
    filler = home / "filler.bin"
    free = os.statvfs(home).f_bavail * os.statvfs(home).f_frsize
    with open(filler, "wb") as fh, contextlib.suppress(OSError):
        fh.write(b"\0" * max(0, free - leave))
    return filler


def test_a_turn_whose_answer_cannot_be_saved_says_what_was_kept(small_home: Path) -> None:
    config = Config(home=small_home, embedder="hashing", chat_model="scripted").validated()
    agent = ConversationAgent(
        config, embedder=lambda: EMBEDDER, chat=lambda: ChatChoice(ScriptedChat()),
        use_keyring=False,
    )  # fmt: skip
    try:
        agent.ask("warm up: the index and its files exist")
        message = "m" * 200_000  # the answer's save rewrites the file: twice this is needed
        filler = _fill(small_home, leave=300_000)
        saved: list[str] = []
        with pytest.raises(TurnFailedError) as caught:
            agent.ask(message, on_saved=saved.append)
        assert saved, "the message was saved before the answer"
        assert caught.value.conversation_id == saved[0]
        text = str(caught.value)
        assert "your message is saved" in text and saved[0] in text
        filler.unlink()
        history = agent.load(saved[0]).history
        assert [m.role for m in history] == ["user"]
        again = agent.ask("and now?", saved[0])  # the conversation goes on
        assert [m.role for m in agent.load(again.conversation_id).history][-1] == "assistant"
    finally:
        agent.close()
