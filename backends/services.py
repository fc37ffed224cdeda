"""The one place that builds backend objects from a :class:`Config` (constructor injection).

Both front ends — the CLI and the window — build one :class:`Services` at start-up and pass
it (or the pieces they need) on. Heavy things (models, vector stores) are built on first use,
so the window appears before any model is loaded; the desktop warms them up in a worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from backends.config import Config
from backends.models.chat import ChatModel
from backends.models.embedders import Embedder
from backends.models.registry import ChatChoice, create_chat_model, create_embedder

log = logging.getLogger(__name__)
T = TypeVar("T")


class Services:
    """Lazily built, thread-safe, closed once."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Embedder | None = None,
        chat: ChatModel | None = None,
    ) -> None:
        self.config = config
        self._lock = threading.RLock()
        self._built: dict[str, Any] = {}
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

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    @property
    def embedder(self) -> Embedder:
        return self._get("embedder", lambda: create_embedder(self.config))

    @property
    def chat_choice(self) -> ChatChoice:
        return self._get("chat", lambda: create_chat_model(self.config))

    @property
    def chat(self) -> ChatModel:
        return self.chat_choice.model

    def close(self) -> None:
        """Close what was opened, newest first; a failing closer is logged, not raised."""
        with self._lock:
            closers, self._closers = self._closers[::-1], []
        for closer in closers:
            try:
                closer()
            except Exception:
                log.exception("error while closing a service")
