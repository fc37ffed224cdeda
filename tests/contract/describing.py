"""What every role's suite asks of each implementation about itself (issue 17): it describes
itself without opening anything (engine, label, location, address) and measures what it holds
through the running instance (``running``), read-only for a file.

Not collected by pytest (no ``test_`` prefix); the role suites call these."""

from __future__ import annotations

from pathlib import Path

from backends import stores
from backends.config import Config
from backends.stores.description import OK, Measurement, Probed, SelfDescribing


def config(home: Path) -> Config:
    """A configuration whose data dir is ``home``; the servers' addresses are only described
    (a server store is measured through its running instance, never through these)."""
    return Config(
        home=home,
        embedder="hashing",
        chat_model="scripted",
        redis_url="redis://127.0.0.1:6379/0",
        postgres_dsn="postgresql://custodia@127.0.0.1:5432/custodia",
        neo4j_uri="bolt://127.0.0.1:7687",
    )


def registered(store: object) -> bool:
    """``store``'s class is an implementation in the registry (not a view over one, such as a
    semantic-memory collection seen as a vector index: its memory describes itself)."""
    target = f"{type(store).__module__}:{type(store).__qualname__}"
    return any(target in stores.implementations(role).values() for role in stores.roles())


def check_description(store: object, cfg: Config, **context: object) -> type[SelfDescribing]:
    """``store``'s class says what it is and where, as plain text, without opening anything."""
    cls = type(store)
    assert issubclass(cls, SelfDescribing), f"{cls.__name__} does not describe itself"
    for text in (
        cls.engine_for(cfg),
        cls.label_for(cfg),
        cls.locate(cfg, **context),
        cls.address(cfg, **context),
    ):
        assert isinstance(text, str) and text.strip(), cls.__name__
    assert isinstance(cls.SHARED, bool) and isinstance(cls.PRODUCT, str)
    assert isinstance(cls.created(cfg, **context), bool)
    return cls


def measure(store: object, cfg: Config, **context: object) -> Measurement:
    """``store`` measured through itself: a healthy count, a size when it has one."""
    assert isinstance(store, SelfDescribing), f"{type(store).__name__} does not describe itself"
    running: SelfDescribing = store
    cls = check_description(running, cfg, **context)
    measured = cls.measure(cfg, running=lambda: running, **context)
    assert isinstance(measured, Measurement)
    assert measured.health == OK, measured.health
    assert measured.items is None or measured.items >= 0
    assert measured.size_bytes is None or measured.size_bytes >= 0
    return measured


def check_probe(store: object, cfg: Config, **context: object) -> None:
    """An embedded store's probe passes (a server's is asked with its own configuration)."""
    cls = check_description(store, cfg, **context)
    if not cls.SHARED:
        assert isinstance(cls.checkup(cfg, **context), Probed)
