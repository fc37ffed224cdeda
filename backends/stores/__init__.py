"""The storage layer: one package per store role, one registry of their implementations.

In the manner of fsspec's ``registry.py``: :data:`REGISTRY` maps a role to its kinds and each
kind to a ``"module:Class"`` string, imported only when that store is opened — so start-up
imports no engine (chromadb, qdrant-client, neo4j, redis, psycopg). :func:`kind_for` is the one
place that reads the configuration to choose an engine; :func:`open` builds the store with
the implementation's ``from_config(config, **context)``. :mod:`backends.services` is the one
caller of :func:`open`; the assistants get their stores through their constructors.

Adding an engine: one module in the role's package (``backends/stores/<role>/<engine>.py``,
a class with ``kind`` and ``from_config``), one line here, one fixtures class in
``tests/backends/stores/<role>/``. See docs/ARCHITECTURE.md.

Every implementation describes itself (:mod:`backends.stores.description`): :func:`describe`
(engine, location — nothing opened), :func:`measure` (items, size, health) and
:func:`checkup` (the doctor's probe) ask the configured one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, overload

if TYPE_CHECKING:
    from backends.config import Config
    from backends.stores.audit_log import AuditLog
    from backends.stores.bus import EventBus
    from backends.stores.description import Description, Measurement, Probed, SelfDescribing
    from backends.stores.graph import Graph
    from backends.stores.memories import MemoryStore
    from backends.stores.sessions import SessionMirror
    from backends.stores.ttl import TTLStore
    from backends.stores.vectors import SemanticMemory, VectorIndex

#: role -> kind -> "module:Class"
REGISTRY: dict[str, dict[str, str]] = {
    "ttl": {
        "memory": "backends.stores.ttl.memory:MemoryTTLStore",
        "redis": "backends.stores.ttl.redis:RedisTTLStore",
    },
    "bus": {
        "memory": "backends.stores.bus.memory:InProcessEventBus",
        "redis": "backends.stores.bus.redis:RedisEventBus",
    },
    "sessions": {
        "sqlite": "backends.stores.sessions.sqlite:SqliteSessionMirror",
    },
    "vectors": {
        "chroma": "backends.stores.vectors.chroma:ChromaVectorIndex",
    },
    "chunks": {
        "chroma": "backends.stores.vectors.chroma:ChromaChunkIndex",
    },
    "semantic": {
        "edge": "backends.stores.vectors.qdrant_edge:EdgeSemanticMemory",
        "qdrant": "backends.stores.vectors.qdrant:QdrantSemanticMemory",
    },
    "memories": {
        "sqlite": "backends.stores.memories.sqlite:SQLiteMemoryStore",
    },
    "audit_log": {
        "sqlite": "backends.stores.audit_log.sqlite:SQLiteAuditLog",
        "postgres": "backends.stores.audit_log.postgres:PostgresAuditLog",
    },
    "graph": {
        "sqlite": "backends.stores.graph.sqlite:SqliteGraph",
        "bolt": "backends.stores.graph.bolt:BoltGraph",
    },
}

#: role -> the kind the configuration names (the only place that reads it to pick an engine)
SELECT: dict[str, Callable[[Config], str]] = {
    "ttl": lambda config: config.cache,
    "bus": lambda config: config.cache,
    "sessions": lambda config: "sqlite",
    "vectors": lambda config: "chroma",
    "chunks": lambda config: "chroma",
    "semantic": lambda config: "qdrant" if config.qdrant_url else "edge",
    "memories": lambda config: "sqlite",
    "audit_log": lambda config: config.audit,
    "graph": lambda config: "bolt" if config.graph == "neo4j" else "sqlite",
}

_loaded: dict[tuple[str, str], type[Any]] = {}


def roles() -> tuple[str, ...]:
    return tuple(REGISTRY)


def implementations(role: str) -> Mapping[str, str]:
    """The kinds of ``role`` and their ``"module:Class"`` (nothing imported)."""
    try:
        return dict(REGISTRY[role])
    except KeyError:
        raise ValueError(f"unknown store role {role!r}; known: {', '.join(REGISTRY)}") from None


def register(role: str, kind: str, target: str, *, clobber: bool = False) -> None:
    """Add an implementation (``"module:Class"``) of ``role``; tests and plug-ins use this."""
    kinds = REGISTRY.setdefault(role, {})
    if kind in kinds and kinds[kind] != target and not clobber:
        raise ValueError(f"{role}: {kind!r} is already {kinds[kind]!r}")
    kinds[kind] = target
    _loaded.pop((role, kind), None)


def get_class(role: str, kind: str) -> type[Any]:
    """The class of ``role``'s ``kind``, imported on first use."""
    key = (role, kind)
    if key not in _loaded:
        target = implementations(role).get(kind)
        if target is None:
            known = ", ".join(implementations(role))
            raise ValueError(f"{role}: no implementation {kind!r}; known: {known}")
        module_name, _, class_name = target.partition(":")
        _loaded[key] = getattr(importlib.import_module(module_name), class_name)
    return _loaded[key]


def kind_for(role: str, config: Config) -> str:
    """The kind of ``role`` the configuration names."""
    implementations(role)
    return SELECT[role](config)


def _open(role: str, config: Config, *, kind: str | None = None, **context: Any) -> object:
    """The store of ``role`` the configuration names (or of ``kind``: a migration copies from
    one engine to another), built by its ``from_config``.

    ``context`` is what the role needs beyond the configuration (a file, a namespace, the
    embedder's name and dimension); every implementation of a role takes the same."""
    chosen = kind if kind is not None else kind_for(role, config)
    store: object = get_class(role, chosen).from_config(config, **context)
    return store


def describe(role: str, config: Config, **context: Any) -> Description:
    """The configured store of ``role``: its kind, engine and where it keeps its data.

    ``context`` is the role's (a file for the embedded engines); nothing is opened."""
    from backends.stores.description import Description  # noqa: PLC0415 — lazy: the registry imports no store module

    chosen = kind_for(role, config)
    cls: type[SelfDescribing] = get_class(role, chosen)
    return Description(
        role,
        chosen,
        cls.engine_for(config),
        cls.locate(config, **context),
        label=cls.label_for(config),
        address=cls.address(config, **context),
        product=cls.PRODUCT,
        shared=cls.shared_for(config),
    )


def measure(
    role: str, config: Config, *, running: Callable[[], Any] | None = None, **context: Any
) -> Measurement:
    """What the configured store of ``role`` holds now (see :mod:`backends.stores.description`):
    not created yet while an embedded store has no file; read-only otherwise; ``running`` is
    the instance the process holds, for a store only one process may open."""
    from backends.stores.description import NOT_CREATED_YET  # noqa: PLC0415 — lazy: the registry imports no store module

    cls: type[SelfDescribing] = get_class(role, kind_for(role, config))
    if not cls.created(config, **context):
        return NOT_CREATED_YET
    return cls.measure(config, running=running, **context)


def created(role: str, config: Config, **context: Any) -> bool:
    """False while the configured embedded store of ``role`` has no file or folder yet."""
    cls: type[SelfDescribing] = get_class(role, kind_for(role, config))
    return cls.created(config, **context)


def checkup(role: str, config: Config, **context: Any) -> Probed:
    """The doctor's probe of the configured store of ``role`` (raises why it is unusable)."""
    cls: type[SelfDescribing] = get_class(role, kind_for(role, config))
    return cls.checkup(config, **context)


class Opener(Protocol):
    """What :data:`open` is, as a type — one overload per role: the store a role names is its
    Protocol (a role registered at run time, named by a plain ``str``, is only an ``object``).
    The assistants get an opener by injection (``Needs.open_store``) and keep these types."""

    @overload
    def __call__(
        self, role: Literal["ttl"], config: Config, *, kind: str | None = None, **context: Any
    ) -> TTLStore: ...
    @overload
    def __call__(
        self, role: Literal["bus"], config: Config, *, kind: str | None = None, **context: Any
    ) -> EventBus: ...
    @overload
    def __call__(
        self, role: Literal["sessions"], config: Config, *, kind: str | None = None, **context: Any
    ) -> SessionMirror: ...
    @overload
    def __call__(
        self,
        role: Literal["vectors", "chunks"],
        config: Config,
        *,
        kind: str | None = None,
        **context: Any,
    ) -> VectorIndex: ...
    @overload
    def __call__(
        self, role: Literal["semantic"], config: Config, *, kind: str | None = None, **context: Any
    ) -> SemanticMemory: ...
    @overload
    def __call__(
        self, role: Literal["memories"], config: Config, *, kind: str | None = None, **context: Any
    ) -> MemoryStore: ...
    @overload
    def __call__(
        self, role: Literal["audit_log"], config: Config, *, kind: str | None = None, **context: Any
    ) -> AuditLog: ...
    @overload
    def __call__(
        self, role: Literal["graph"], config: Config, *, kind: str | None = None, **context: Any
    ) -> Graph: ...
    @overload
    def __call__(
        self, role: str, config: Config, *, kind: str | None = None, **context: Any
    ) -> object: ...
    def __call__(
        self, role: str, config: Config, *, kind: str | None = None, **context: Any
    ) -> object: ...


#: the store of ``role`` the configuration names (see :func:`_open`); to the type checker, each
#: role's Protocol (:class:`Opener`)
open: Opener = cast(Opener, _open)
