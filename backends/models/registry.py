"""Builds the configured embedder and chat model by name.

Fakes are ordinary entries of the same registry (the simonw/llm way), so a tester selects
``hashing`` and ``scripted`` through configuration exactly as a user selects a real model.
When the configured chat model cannot load, the registry falls back to the clearly labelled
retrieval-only mode (DC4) and says why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from backends.config import Config
from backends.errors import ConfigError, CustodiaEnvironmentError
from backends.models.chat import (
    ChatModel,
    LlamaCppChat,
    OllamaChat,
    OpenAICompatibleChat,
    RetrievalOnlyChat,
    ScriptedChat,
)
from backends.models.embedders import Embedder, HashingEmbedder, MiniLMEmbedder, OllamaEmbedder
from backends.models.files import SMOLLM2_GGUF

log = logging.getLogger(__name__)

EmbedderFactory = Callable[[Config, str], Embedder]
ChatFactory = Callable[[Config, str], ChatModel]

EMBEDDER_FACTORIES: dict[str, EmbedderFactory] = {
    "minilm": lambda config, arg: MiniLMEmbedder(),
    "hashing": lambda config, arg: HashingEmbedder(int(arg) if arg else 384),
    "ollama": lambda config, arg: OllamaEmbedder(
        arg or "nomic-embed-text", config.ollama_url, config.network_timeout
    ),
}

CHAT_FACTORIES: dict[str, ChatFactory] = {
    "smollm2": lambda config, arg: LlamaCppChat(SMOLLM2_GGUF.verified(), "SmolLM2-135M-Instruct"),
    "scripted": lambda config, arg: ScriptedChat(),
    "retrieval-only": lambda config, arg: RetrievalOnlyChat("selected in settings"),
    "ollama": lambda config, arg: OllamaChat(arg, config.ollama_url, config.network_timeout),
    "openai": lambda config, arg: OpenAICompatibleChat(
        arg, config.openai_url or "http://127.0.0.1:8080/v1", config.network_timeout
    ),
}


def register_embedder(name: str, factory: EmbedderFactory) -> None:
    EMBEDDER_FACTORIES[name] = factory


def register_chat_model(name: str, factory: ChatFactory) -> None:
    CHAT_FACTORIES[name] = factory


def _split(key: str, value: str, table: dict[str, object]) -> tuple[str, str]:
    kind, _, arg = value.partition(":")
    if kind not in table:
        raise ConfigError(key, f"unknown model {value!r}; known: {', '.join(sorted(table))}")
    return kind, arg


def create_embedder(config: Config) -> Embedder:
    """The configured embedder, or a :class:`CustodiaEnvironmentError` saying why not."""
    kind, arg = _split("embedder", config.embedder, EMBEDDER_FACTORIES)  # type: ignore[arg-type]
    try:
        return EMBEDDER_FACTORIES[kind](config, arg)
    except ValueError as err:
        raise ConfigError("embedder", str(err)) from err


@dataclass(frozen=True)
class ChatChoice:
    model: ChatModel
    #: why the configured model was replaced by retrieval-only mode ("" when it was not)
    fallback_reason: str = ""


def create_chat_model(config: Config) -> ChatChoice:
    """The configured chat model; retrieval-only (with the reason) when it cannot load."""
    kind, arg = _split("chat_model", config.chat_model, CHAT_FACTORIES)  # type: ignore[arg-type]
    try:
        model = CHAT_FACTORIES[kind](config, arg)
        model.check()
        return ChatChoice(model)
    except CustodiaEnvironmentError as err:
        log.warning("chat model %s unavailable, using retrieval-only mode: %s", kind, err)
        return ChatChoice(RetrievalOnlyChat(str(err)), str(err))
