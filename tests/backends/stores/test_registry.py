"""The storage registry: lazy, complete, and every implementation builds from a Config."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from backends import stores
from backends.config import Config

ROOT = Path(__file__).resolve().parents[3]
#: roles whose implementations describe themselves to the storage map
DESCRIBED = ("ttl", "bus", "graph", "audit_log")


def test_importing_the_registry_imports_no_store_and_no_engine() -> None:
    code = (
        "import sys; import backends.stores, backends.services\n"
        "loaded = [m for m in sys.modules if m.startswith('backends.stores.')\n"
        "          or m.split('.')[0] in ('chromadb', 'qdrant_client', 'qdrant_edge', 'redis',\n"
        "                                  'neo4j', 'psycopg')]\n"
        "print(loaded)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("role", "kind"), [(r, k) for r in stores.roles() for k in stores.implementations(r)]
)
def test_every_implementation_is_importable_and_builds_from_a_config(role: str, kind: str) -> None:
    cls = stores.get_class(role, kind)
    assert callable(getattr(cls, "from_config", None)), f"{role}:{kind} has no from_config"
    if role in DESCRIBED:
        assert isinstance(cls.ENGINE, str) and cls.ENGINE


def test_the_configuration_chooses_the_kind(tmp_path: Path) -> None:
    embedded = Config(home=tmp_path)
    server = Config(
        home=tmp_path,
        profile="server",
        redis_url="redis://127.0.0.1:1/0",
        postgres_dsn="postgresql://u@127.0.0.1:1/db",
        neo4j_uri="bolt://127.0.0.1:1",
    )
    assert [stores.kind_for(r, embedded) for r in ("ttl", "bus", "audit_log", "graph")] == [
        "memory",
        "memory",
        "sqlite",
        "sqlite",
    ]
    assert [stores.kind_for(r, server) for r in ("ttl", "bus", "audit_log", "graph")] == [
        "redis",
        "redis",
        "postgres",
        "bolt",
    ]
    graph = stores.describe("graph", embedded, path=tmp_path / "g.sqlite3")
    assert (graph.kind, graph.engine, graph.location) == (
        "sqlite",
        "SQLite (recursive CTEs)",
        str(tmp_path / "g.sqlite3"),
    )
    assert stores.describe("audit_log", server).location == "postgresql://u@127.0.0.1:1/db"


def test_unknown_roles_and_kinds_are_named() -> None:
    with pytest.raises(ValueError, match="unknown store role 'nope'"):
        stores.implementations("nope")
    with pytest.raises(ValueError, match="no implementation 'nope'"):
        stores.get_class("ttl", "nope")


def test_register_adds_one_implementation_and_refuses_to_clobber() -> None:
    stores.register("ttl", "test-memory", "backends.stores.ttl.memory:MemoryTTLStore")
    try:
        assert stores.get_class("ttl", "test-memory").kind == "memory"
        with pytest.raises(ValueError, match="already"):
            stores.register("ttl", "test-memory", "backends.stores.ttl.redis:RedisTTLStore")
    finally:
        del stores.REGISTRY["ttl"]["test-memory"]
