"""``custodia doctor`` against a real Neo4j 5 (issue 18): the graph row names the server's
version and edition, and a refused password or a server that is down is said as such (the
probe goes through the graph store, so it reports the store's typed errors)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from backends import doctor
from backends.config import Config
from tests.harness.servers import Neo4jServer, free_port

pytestmark = pytest.mark.server


def _config(home: Path, server: Neo4jServer) -> Config:
    user, password = server.auth
    return Config(
        home=home,
        profile="server",
        neo4j_uri=server.uri,
        neo4j_user=user,
        neo4j_password=password,
        embedder="hashing",
        chat_model="scripted",
    ).validated()


def _graph_check(cfg: Config) -> doctor.Check:
    checks = {c.role: c for c in doctor.run(cfg)}
    return checks["graph"]


def test_the_graph_row_names_neo4j_version_and_edition(
    tmp_path: Path, neo4j_server: Neo4jServer
) -> None:
    check = _graph_check(_config(tmp_path, neo4j_server))
    assert check.ok, check.reason
    assert check.kind == "neo4j"
    assert check.version == f"{neo4j_server.version} community"
    assert check.details["dialect"] == "neo4j-5"
    assert f"neo4j v{neo4j_server.version} community @ bolt://127.0.0.1:" in check.line()


def test_a_refused_password_and_a_server_down_are_named(
    tmp_path: Path, neo4j_server: Neo4jServer
) -> None:
    cfg = _config(tmp_path, neo4j_server)
    refused = _graph_check(replace(cfg, neo4j_password="not-the-password"))
    assert not refused.ok and "refused user 'neo4j'" in refused.reason, refused.reason
    down = _graph_check(replace(cfg, neo4j_uri=f"bolt://127.0.0.1:{free_port()}"))
    assert not down.ok and "not reachable" in down.reason, down.reason


def test_a_database_that_does_not_exist_is_named(tmp_path: Path, neo4j_server: Neo4jServer) -> None:
    cfg = _config(tmp_path, neo4j_server)
    missing = _graph_check(replace(cfg, neo4j_database="nosuchdb").validated())
    assert not missing.ok and "no database 'nosuchdb'" in missing.reason, missing.reason
    named = _graph_check(replace(cfg, neo4j_database="neo4j").validated())
    assert named.ok, named.reason


def test_a_database_name_is_checked_with_the_configuration(tmp_path: Path) -> None:
    from backends.errors import ConfigError

    for bad in ("No Such DB", "x", "1abc", "a" * 64, "db;drop"):
        with pytest.raises(ConfigError, match="neo4j_database"):
            Config(home=tmp_path, neo4j_database=bad).validated()
    assert Config(home=tmp_path, neo4j_database="custodia-graph.v1").validated()
