"""The one place that builds backend objects from a :class:`Config` (constructor injection).

Both front ends — the CLI and the window — build one :class:`Services` at start-up and pass
it (or the pieces they need) on. Heavy things (models, vector stores) are built on first use,
so the window appears before any model is loaded; the desktop warms them up in a worker.

Each assistant (and shared part) is built from its declaration (:mod:`backends.assistants`)
with the :class:`~backends.assistants.Needs` it is owed — :meth:`Services.get` — and closed at
exit: no assistant reaches into the container for more. The window unpacks the container into
narrow pieces for its tabs: each tab gets a :class:`Lazy` handle on its own service
(``services.lazy_part("memories", MemoryAssistant)``; built on the first :meth:`Lazy.get`,
which a tab calls only inside a worker job) and, for its model picker, :class:`ModelChoices`
(``services.model_choices("memories")``). A tab never holds the container.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Generic, TypeVar

from backends import assistants, stores
from backends.assistants import Needs, Service
from backends.config import Config, update_file
from backends.i18n import _
from backends.models import local
from backends.models.chat import ChatModel
from backends.models.embedders import Embedder, MiniLMEmbedder, UniversalSentenceEncoder
from backends.models.registry import (
    ChatChoice,
    LoadedModels,
    ModelOption,
    create_chat_model,
    create_embedder,
    load_key,
    model_options,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
U = TypeVar("U")

#: how an assistant opens its stores: ``opener(role, config, **context)``
StoreOpener = Callable[..., Any]


#: the store of ``role`` the configuration names — the storage registry's opener, the one
#: caller of :mod:`backends.stores`; the assistants get it through :class:`Needs`
#: (``open_store``), so a test may hand them another
open_store: stores.Opener = stores.open


def _close(service: Service) -> None:
    service.close()


def local_embedder_name(key: str) -> str:
    """The name the built-in embedder ``key`` gives itself (its vectors are kept by it)."""
    return {"minilm": MiniLMEmbedder.name}.get(key, UniversalSentenceEncoder.name)


class Lazy(Generic[T]):
    """A handle on one object built on first use: :meth:`get` builds it once (thread-safe;
    call it off the GUI thread when building is slow), :meth:`is_built` says whether it was.

    The window gives each tab one of these for its service instead of the container
    (:meth:`Services.lazy`); a test may give a tab ``Lazy.of(service)``.
    """

    def __init__(self, build: Callable[[], T], *, built: Callable[[], bool] | None = None) -> None:
        self._build = build
        #: whether the owner (the container) built it already, perhaps through another path
        self._owner_built = built
        self._lock = threading.Lock()
        self._value: T | None = None
        self._done = False

    @classmethod
    def of(cls, value: T) -> Lazy[T]:
        """A handle on an object that exists already."""
        handle = cls(lambda: value)
        handle._value, handle._done = value, True
        return handle

    def get(self) -> T:
        with self._lock:
            if not self._done:
                self._value = self._build()
                self._done = True
            return self._value  # type: ignore[return-value]  # set above (T may be None)

    def is_built(self) -> bool:
        with self._lock:
            if self._done:
                return True
        return self._owner_built is not None and self._owner_built()

    def narrow(self, kind: type[U]) -> Lazy[U]:
        """This handle, as one on a ``kind`` (checked when built: ``TypeError`` otherwise) —
        how a tab given the registry's untyped handle types its own service."""

        def build() -> U:
            value = self.get()
            if not isinstance(value, kind):
                raise TypeError(f"{type(value).__name__} is not a {kind.__name__}")
            return value

        return Lazy(build, built=self.is_built)


class ModelChoices:
    """Which model one assistant answers with: what a tab's model picker reads and changes —
    and nothing else of the container. Built by :meth:`Services.model_choices`."""

    def __init__(self, services: Services, assistant: str) -> None:
        if assistant not in assistants.names():
            raise ValueError(f"unknown assistant {assistant!r}")
        self._services = services
        self.assistant = assistant

    def current(self) -> str:
        """The key of the model this assistant answers with now."""
        return self._services.config.model_for(self.assistant)

    def options(self) -> list[ModelOption]:
        """What the picker offers, the current key included (reads the models folders' file
        headers: call it off the GUI thread)."""
        config = self._services.config
        return model_options(config, (config.model_for(self.assistant),))

    def use(self, key: str) -> Config:
        """From the next answer on, answer with ``key`` (not saved: see :meth:`save`)."""
        return self._services.use_model(self.assistant, key)

    def save(self, key: str) -> Config:
        """Keep ``key`` in ``custodia.toml``'s ``[models]`` (raises :class:`ConfigError` or
        :class:`OSError` when it cannot be written)."""
        assistant = self.assistant
        return update_file(
            self._services.config.home,
            lambda c: replace(c, models={**c.models, assistant: key}),
        )

    def load(self) -> ChatChoice:
        """The chosen model, loaded (slow: call it off the GUI thread)."""
        return self._services.chat_choice_for(self.assistant)


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
            found: T = self._built[name]
            return found

    _get = service

    def is_built(self, name: str) -> bool:
        with self._lock:
            return name in self._built

    def get(self, name: str, kind: type[T]) -> T:
        """The part called ``name`` (an assistant, "audit", "threads"), built on first use from
        its declaration (:mod:`backends.assistants`) with the :class:`Needs` it is owed, closed
        at exit; ``TypeError`` when it is not a ``kind`` (a caller's bug)."""
        built = self.service(name, lambda: self._build(name), _close)
        if not isinstance(built, kind):
            raise TypeError(f"{name} is a {type(built).__name__}, not a {kind.__name__}")
        return built

    def _build(self, name: str) -> Service:
        return assistants.get(name).builder()(self.needs(name))

    def needs(self, name: str) -> Needs:
        """What the part called ``name`` is built with (constructor injection)."""
        declared = assistants.get(name)
        with self._lock:
            config = self.config
        audit = None
        if "audit" in declared.needs:
            from backends.audit.service import AuditService  # noqa: PLC0415 — lazy: when declared

            audit = lambda: self.get("audit", AuditService)  # noqa: E731
        return Needs(
            config=config,
            embedder=lambda: self.embedder,
            embedder_named=self.embedder_named,
            chat=lambda: self.chat_choice_for(name),
            model=lambda: self.config.model_for(name),
            open_store=open_store,
            audit=audit,
        )

    def embedder_named(self, key: str) -> Embedder:
        """The built-in embedder ``key`` ("minilm", "use-multilingual"): the configured one
        when it is that model, else one of its own, built once and shared."""
        configured = self.embedder
        if configured.name == local_embedder_name(key):
            return configured
        with self._lock:
            config = replace(self.config, embedder=key)
        return self._get(f"embedder:{key}", lambda: create_embedder(config))

    def lazy(self, name: str, factory: Callable[[Services], T]) -> Lazy[T]:
        """A handle on the service ``factory(self)`` builds under ``name``; nothing is built
        until its :meth:`Lazy.get`."""
        return Lazy(lambda: factory(self), built=lambda: self.is_built(name))

    def lazy_part(self, name: str, kind: type[T]) -> Lazy[T]:
        """A handle on the part called ``name`` (see :meth:`get`), built on first use."""
        return self.lazy(name, lambda container: container.get(name, kind))

    def model_choices(self, assistant: str) -> ModelChoices:
        """What ``assistant``'s model picker may read and change (see :class:`ModelChoices`)."""
        return ModelChoices(self, assistant)

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
        if assistant not in assistants.names():
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

    def use_settings(self, saved: Config) -> Config:
        """From each assistant's next answer on, ``saved``'s models and generation settings,
        without a restart (a loaded file is reused when only sampling changed)."""
        with self._lock:
            self.config = replace(
                self.config,
                chat_model=saved.chat_model,
                models=dict(saved.models),
                generation=dict(saved.generation),
            ).validated()
            for assistant in assistants.names():
                self._built.pop(f"chat:{assistant}", None)
            if self._injected_chat is None:
                self._built.pop("chat", None)
            config = self.config
            in_use = {
                load_key(config.model_for(a), config.generation_for(a)) for a in assistants.names()
            }
            in_use.add(load_key(config.chat_model, config.generation_for("")))
            self._loaded.keep_only(in_use)
            return self.config

    def use_model(self, assistant: str, key: str) -> Config:
        """From now on ``assistant`` answers with ``key`` (its next answer loads it); the
        caller saves the returned configuration when the choice is to last."""
        if assistant not in assistants.names():
            raise ValueError(f"unknown assistant {assistant!r}")
        with self._lock:
            models = {**self.config.models, assistant: key}
            self.config = replace(self.config, models=models).validated()
            self._built.pop(f"chat:{assistant}", None)
            config = self.config
            in_use = {
                load_key(config.model_for(a), config.generation_for(a)) for a in assistants.names()
            }
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
                log.exception(_("error while closing a service"))
