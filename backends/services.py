"""The one place that builds backend objects from a :class:`Config` (constructor injection).

Both front ends — the CLI and the window — build one :class:`Services` at start-up and pass
it (or the pieces they need) on. Heavy things (models, vector stores) are built on first use,
so the window appears before any model is loaded; the desktop warms them up in a worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

from backends.config import Config
from backends.models import local
from backends.models.chat import ChatModel
from backends.models.embedders import Embedder
from backends.models.registry import (
    ChatChoice,
    LoadedModels,
    create_chat_model,
    create_embedder,
    load_key,
)
from backends.models.settings import ASSISTANTS

log = logging.getLogger(__name__)
T = TypeVar("T")

#: how an assistant opens its stores: ``opener(role, config, **context)``
StoreOpener = Callable[..., Any]


def open_store(role: str, config: Config, *, kind: str | None = None, **context: Any) -> Any:
    """The store of ``role`` the configuration names — the one caller of the storage
    registry (:func:`backends.stores.open`); the assistants get this through their
    constructors (``open_store=``), so a test may hand them another."""
    from backends import stores

    return stores.open(role, config, kind=kind, **context)


class Services:
    """Lazily built, thread-safe, closed once."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Embedder | None = None,
        chat: ChatModel | None = None,
        memory: local.MemorySource = local.machine_memory,
    ) -> None:
        self.config = config
        self._lock = threading.RLock()
        self._built: dict[str, Any] = {}
        #: a chat model given here serves every assistant (tests and testers)
        self._injected_chat = chat
        #: this machine's memory figures (tests inject a small budget)
        self.memory = memory
        self._loaded = LoadedModels()
        if embedder is not None:
            self._built["embedder"] = embedder
        if chat is not None:
            self._built["chat"] = ChatChoice(chat)
        self._closers: list[Callable[[], None]] = []

    def service(
        self, name: str, build: Callable[[], T], close: Callable[[T], None] | None = None
    ) -> T:
        """The object called ``name``, built by ``build()`` on first use; ``close`` at exit.

        Assistants expose themselves through this, e.g.
        ``services.service("memories", lambda: MemoryAssistant(...), MemoryAssistant.close)``.
        """
        with self._lock:
            if name not in self._built:
                built = build()
                self._built[name] = built
                if close is not None:
                    self._closers.append(lambda: close(built))
            return self._built[name]

    _get = service

    def is_built(self, name: str) -> bool:
        with self._lock:
            return name in self._built

    def open_store(self, role: str, **context: Any) -> Any:
        """The store of ``role`` for this configuration (see :func:`open_store`)."""
        with self._lock:
            config = self.config
        return open_store(role, config, **context)

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    @property
    def embedder(self) -> Embedder:
        return self._get("embedder", lambda: create_embedder(self.config))

    @property
    def chat_choice(self) -> ChatChoice:
        return self._get(
            "chat",
            lambda: create_chat_model(self.config, memory=self.memory, loaded=self._loaded),
        )

    @property
    def chat(self) -> ChatModel:
        return self.chat_choice.model

    def chat_choice_for(self, assistant: str) -> ChatChoice:
        """``assistant``'s model (``[models]`` or ``chat_model``) with its generation settings,
        loaded on first use; one loaded file serves every assistant that uses it."""
        if assistant not in ASSISTANTS:
            raise ValueError(f"unknown assistant {assistant!r}")
        if self._injected_chat is not None:
            return self.chat_choice
        with self._lock:
            config = self.config
        return self._get(
            f"chat:{assistant}",
            lambda: create_chat_model(config, assistant, memory=self.memory, loaded=self._loaded),
        )

    def chat_for(self, assistant: str) -> ChatModel:
        return self.chat_choice_for(assistant).model

    def use_folders(self, folders: tuple[str, ...]) -> Config:
        """List the GGUF files of ``folders`` (besides ``<home>/models``) from now on."""
        with self._lock:
            self.config = replace(self.config, model_folders=tuple(folders)).validated()
            return self.config

    def use_model(self, assistant: str, key: str) -> Config:
        """From now on ``assistant`` answers with ``key`` (its next answer loads it); the
        caller saves the returned configuration when the choice is to last."""
        if assistant not in ASSISTANTS:
            raise ValueError(f"unknown assistant {assistant!r}")
        with self._lock:
            models = {**self.config.models, assistant: key}
            self.config = replace(self.config, models=models).validated()
            self._built.pop(f"chat:{assistant}", None)
            config = self.config
            in_use = {load_key(config.model_for(a), config.generation_for(a)) for a in ASSISTANTS}
            in_use.add(load_key(config.chat_model, config.generation_for("")))
            self._loaded.keep_only(in_use)  # a model picked away from is not kept loaded
            return self.config

    def close(self) -> None:
        """Close what was opened, newest first; a failing closer is logged, not raised."""
        with self._lock:
            closers, self._closers = self._closers[::-1], []
        for closer in closers:
            try:
                closer()
            except Exception:
                log.exception("error while closing a service")
