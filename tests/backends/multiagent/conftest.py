from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config
from backends.models.chat import ChatModel, ScriptedChat
from backends.models.embedders import Embedder, HashingEmbedder
from backends.multiagent.service import MultiAgentService

PLAN = "1. Research CSV dialects\n2. Write a python function to parse CSV"
REPLIES = [PLAN, "Dialects differ in quoting.", "def parse(text): ...", "Good. Final answer."]

MakeService = Callable[..., MultiAgentService]


@pytest.fixture
def config(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture
def make_service(config: Config) -> Iterator[MakeService]:
    """Build services on one data dir (a new one = a restart); all closed at the end."""
    opened: list[MultiAgentService] = []

    def factory(
        chat: ChatModel | None = None,
        embedder: Embedder | None = None,
        cfg: Config | None = None,
        **kwargs: Any,
    ) -> MultiAgentService:
        for old in opened:
            old.close()  # one process at a time on the Qdrant folder
        model = chat if chat is not None else ScriptedChat(replies=list(REPLIES))
        emb = embedder if embedder is not None else HashingEmbedder(384)
        kwargs.setdefault("retry_after", 0)
        service = MultiAgentService(
            cfg or config, embedder=lambda: emb, chat=lambda: model, **kwargs
        )
        opened.append(service)
        return service

    yield factory
    for service in opened:
        service.close()


@pytest.fixture
def redis_config(config: Config, redis_url: str) -> Config:
    return replace(config, profile="server", redis_url=redis_url).validated()


@pytest.fixture
def namespace() -> str:
    return f"test-{uuid.uuid4().hex[:8]}"
