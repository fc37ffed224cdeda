"""What an assistant is, and which there are: a lazy registry of declarations.

In the manner of fsspec's ``known_implementations`` (and :mod:`backends.stores`' registry of
engines): :data:`KNOWN` maps a name to a ``"module:attr"`` string naming an
:class:`Assistant` declaration, imported only when asked for. Each declaration is made once,
in its own package (``backends/<name>/assistant.py``), and says everything the rest of the
program needs to know about it — its title and SPEC ids, how to build its service from
:class:`Needs`, its data (storage map rows, each with its migration step), its commands, its
model choice and what it does when a person is forgotten. The composition layer
(:mod:`backends.services`, the CLI, the storage map, the doctor, migration) and the window
loop over :func:`declarations`; none of them keeps a list of assistants.

Besides the four assistants, three *shared parts* are declared the same way (the audit log,
the thread index, the models folder): they hold data and commands and may be built, but they
have no tab and no model of their own.

Adding an assistant: a package with an ``assistant.py``, one line here (or
:func:`register`), one tab module in ``desktop/tabs/`` (docs/ARCHITECTURE.md, "Adding an
assistant").

This module is at the bottom of the layers: it imports no assistant and no store (the
strings are resolved on first use), so the configuration may ask it for names.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import argparse

    from backends.audit.service import AuditService
    from backends.config import Config
    from backends.models import local
    from backends.models.chat import ChatModel
    from backends.models.embedders import Embedder
    from backends.models.registry import ChatChoice
    from backends.stores.description import Datum

T = TypeVar("T")

#: name -> "module:attr" of its :class:`Assistant` declaration, in the order the window's
#: tabs, the storage map and the CLI show them; every assistant answers with a model of its
#: own (``[models]``, its tab's model picker)
KNOWN: dict[str, str] = {
    "multiagent": "backends.multiagent.assistant:ASSISTANT",
    "memories": "backends.memories.assistant:ASSISTANT",
    "conversations": "backends.conversations.assistant:ASSISTANT",
    "tutor": "backends.tutor.assistant:ASSISTANT",
}

#: the shared parts, declared the same way: data, commands, perhaps a service — no tab, no
#: model, and shown after the assistants
PARTS: dict[str, str] = {
    "audit": "backends.audit.assistant:PART",
    "threads": "backends.threads:PART",
    "models": "backends.model_files.part:PART",
}

_loaded: dict[str, Assistant] = {}
_lock = threading.Lock()


class Service(Protocol):
    """What every built service has: the composition layer closes it at exit."""

    def close(self) -> None: ...


#: how an assistant opens its stores: ``open_store(role, config, **context)`` — the storage
#: registry's :func:`backends.stores.open`, handed in so a test may give another; to the type
#: checker, each role's Protocol (:class:`backends.stores.Opener`)
if TYPE_CHECKING:
    from backends.stores import Opener as StoreOpener
else:
    StoreOpener = Callable[..., Any]


@dataclass(frozen=True)
class Needs:
    """What the composition layer hands an assistant when it builds it (constructor
    injection: an assistant never reaches into the container for more).

    Every model is a callable: nothing is loaded before the assistant first asks.
    """

    #: the configuration at the time it is built
    config: Config
    #: the configured embedder (shared by every assistant)
    embedder: Callable[[], Embedder]
    #: a built-in embedder by its key ("minilm", "use-multilingual"), shared, loaded once
    embedder_named: Callable[[str], Embedder]
    #: this assistant's chat model with its generation settings, loaded on first call (the
    #: user's latest choice: the model picker may change it while the assistant runs)
    chat: Callable[[], ChatChoice]
    #: the key of the model this assistant answers with now
    model: Callable[[], str]
    #: the storage registry's opener
    open_store: StoreOpener
    #: the audit service, for an assistant that declares ``needs=("audit",)``
    audit: Callable[[], AuditService] | None = None

    def chat_model(self) -> ChatModel:
        """The chat model alone (most assistants need no more of :meth:`chat`)."""
        return self.chat().model


class Context(Protocol):
    """What a command handler and a forget hook are given: the running process's
    configuration and its parts (the composition layer's container satisfies this)."""

    @property
    def config(self) -> Config: ...

    @property
    def memory(self) -> local.MemorySource: ...

    @property
    def embedder(self) -> Embedder: ...

    def is_built(self, name: str) -> bool: ...

    def get(self, name: str, kind: type[T]) -> T:
        """The part called ``name``, built on first use and checked to be a ``kind``."""
        ...

    def open_store(self, role: str, **context: Any) -> Any: ...

    def chat_choice_for(self, assistant: str) -> ChatChoice: ...


#: a command's handler: ``handler(args, context) -> exit status``
Handler = Callable[["argparse.Namespace", Context], int]


@dataclass(frozen=True)
class StoreCheck:
    """A row of ``custodia doctor`` for a store that holds this assistant's data: the row's
    name and the datum kind whose store it asks (its engine, where it is, reachable)."""

    label: str
    datum: str


@dataclass(frozen=True)
class HealthCheck:
    """A row of ``custodia doctor`` for an assistant's own health, run only inside the process
    (MA6: every layer touched once): ``probe(context) -> {layer: "ok" or why}``, shown where
    the ``datum`` lives."""

    label: str
    datum: str
    probe: str


@dataclass(frozen=True)
class Assistant:
    """One assistant (or shared part), declared once in its package.

    The callables are ``"module:attr"`` strings, resolved on first use (:func:`resolve`),
    so reading a declaration imports no service, no model and no engine.
    """

    #: the name in ``[models]``, the CLI (``custodia ask <name>``), the desktop's tab registry
    name: str
    #: the title the user sees (marked with ``N_``: translated where shown)
    title: str
    #: the SPEC ids it implements ("PA1–PA5"); "" for a shared part
    spec: str = ""
    #: ``build(needs) -> service``; "" when it has no service of its own
    build: str = ""
    #: its data: a tuple of :class:`~backends.stores.description.Datum`, storage map rows
    data: str = ""
    #: its data's migration steps to the server profile (``custodia migrate``), in order: a
    #: tuple defined with its data, in its package (the migration package's loop runs them)
    migrations: str = ""
    #: ``add_commands(subparsers)``: its subcommands of ``custodia``
    commands: str = ""
    #: ``forget(context, person) -> notes``: what it erases when a person is forgotten (after
    #: the audit log destroyed their key); the notes are told to the user
    forget: str = ""
    #: other parts its service is built with ("audit")
    needs: tuple[str, ...] = ()
    #: the doctor's rows for the stores its data lives in
    checks: tuple[StoreCheck, ...] = ()
    #: the doctor's row for its own health, when it has one
    health: HealthCheck | None = None
    #: the doctor's word for it in "chat model (…)" (lower case; "" : its title)
    label: str = ""

    def datums(self) -> tuple[Datum, ...]:
        data: tuple[Datum, ...] = resolve(self.data) if self.data else ()
        return data

    def builder(self) -> Callable[[Needs], Service]:
        if not self.build:
            raise LookupError(f"{self.name} has no service")
        builder: Callable[[Needs], Service] = resolve(self.build)
        return builder

    def add_commands(self) -> Callable[[Any], None] | None:
        return resolve(self.commands) if self.commands else None

    def forget_hook(self) -> Callable[[Context, str], Sequence[str]] | None:
        return resolve(self.forget) if self.forget else None


def resolve(target: str) -> Any:
    """The object ``"module:attr"`` names (imported now)."""
    module, _, attr = target.partition(":")
    if not attr:
        raise ValueError(f"{target!r} is not 'module:attr'")
    return getattr(importlib.import_module(module), attr)


def register(name: str, target: str, *, part: bool = False, clobber: bool = False) -> None:
    """Add an assistant (or, ``part=True``, a shared part): ``target`` is ``"module:attr"``
    of its :class:`Assistant` — a plugin's or a test's; nothing else to edit."""
    table = PARTS if part else KNOWN
    with _lock:
        if (name in KNOWN or name in PARTS) and not clobber:
            raise ValueError(f"{name!r} is registered already")
        table[name] = target
        _loaded.pop(name, None)


def unregister(name: str) -> None:
    """Remove ``name`` (a test's fake, after the test)."""
    with _lock:
        KNOWN.pop(name, None)
        PARTS.pop(name, None)
        _loaded.pop(name, None)


def get(name: str) -> Assistant:
    """The declaration of ``name`` (imported on first use); ``KeyError`` for an unknown one."""
    with _lock:
        if name in _loaded:
            return _loaded[name]
        target = KNOWN[name] if name in KNOWN else PARTS[name]
    declared = resolve(target)
    if not isinstance(declared, Assistant) or declared.name != name:
        raise TypeError(f"{target} is not the Assistant declaration of {name!r}")
    with _lock:
        _loaded[name] = declared
    return declared


def names() -> tuple[str, ...]:
    """The assistants' names, in order (nothing imported): ``[models]`` keys, the tabs."""
    with _lock:
        return tuple(KNOWN)


def part_names() -> tuple[str, ...]:
    """The shared parts' names, in order (nothing imported)."""
    with _lock:
        return tuple(PARTS)


def assistants() -> list[Assistant]:
    """The assistants' declarations, in order (the tabs, the self-test)."""
    return [get(name) for name in names()]


def declarations() -> list[Assistant]:
    """Every declaration, the assistants then the shared parts (the loops of the storage
    map, the CLI's command table, the doctor, migration, forgetting a person)."""
    return [get(name) for name in (*names(), *part_names())]
