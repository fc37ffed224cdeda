from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from backends import cli, doctor
from backends.config import Config


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(monkeypatch: pytest.MonkeyPatch, home: Path, **extra: str) -> None:
    for var in list(__import__("os").environ):
        if var.startswith("CUSTODIA_") and var not in ("CUSTODIA_REQUIRE_SERVERS",):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    for key, value in extra.items():
        monkeypatch.setenv(key, value)


def test_embedded_report_lists_every_store_and_model(tmp_path: Path) -> None:
    cfg = Config(home=tmp_path, embedder="hashing", chat_model="scripted")
    checks = list(doctor.run(cfg))
    roles = [c.role for c in checks]
    assert roles[:2] == ["data dir", "sessions/tickets/feed"]
    assert {
        "audit log",
        "graph",
        "semantic memory",
        "vector index",
        "embedder",
        "chat model",
    } <= set(roles)
    assert doctor.healthy(checks)
    embedder = next(c for c in checks if c.role == "embedder")
    assert embedder.details["dimension"] == 384
    ollama = next(c for c in checks if c.role == "ollama")
    assert not ollama.required  # detected, never required


@pytest.mark.model
def test_doctor_json_lists_bundled_embedder_and_chat_model_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's 'done when': network blocked (suite-wide), real bundled models."""
    _env(monkeypatch, tmp_path)
    code = cli.main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    by_role = {c["role"]: c for c in report["checks"]}
    assert by_role["embedder"]["kind"] == "all-MiniLM-L6-v2"
    assert by_role["embedder"]["details"]["dimension"] == 384
    assert by_role["chat model"]["ok"]
    assert by_role["chat model"]["kind"]
    assert code == 0 and report["ok"] is True


def test_required_server_down_fails_with_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _free_port()
    _env(
        monkeypatch,
        tmp_path,
        CUSTODIA_PROFILE="server",
        CUSTODIA_REDIS_URL=f"redis://127.0.0.1:{port}/0",
        CUSTODIA_EMBEDDER="hashing",
        CUSTODIA_CHAT_MODEL="scripted",
    )
    code = cli.main(["doctor"])
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL" in out and "Redis not reachable" in out


def test_bad_configuration_exits_2_naming_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _env(monkeypatch, tmp_path, CUSTODIA_PROFILE="cloud")
    assert cli.main(["doctor"]) == 2
    assert "profile" in capsys.readouterr().err


@pytest.mark.server
def test_server_profile_against_real_servers(
    tmp_path: Path,
    redis_url: str,
    postgres_dsn: str,
    bolt_uri: str,
    bolt_driver: object,
    falkordb_server: Any,
) -> None:
    cfg = Config(
        home=tmp_path,
        profile="server",
        redis_url=redis_url,
        postgres_dsn=postgres_dsn,
        neo4j_uri=bolt_uri,
        embedder="hashing",
        chat_model="scripted",
    ).validated()
    try:
        checks = {c.role: c for c in doctor.run(cfg)}
    finally:
        falkordb_server.absorb_bolt_hang()  # doctor opened and closed its own Bolt driver
    assert checks["sessions/tickets/feed"].kind == "redis" and checks["sessions/tickets/feed"].ok
    assert checks["sessions/tickets/feed"].version
    assert checks["audit log"].kind == "postgres" and checks["audit log"].ok
    assert checks["audit log"].version.startswith(("15", "16", "17"))
    assert checks["graph"].kind == "neo4j", checks["graph"].reason
    assert checks["graph"].ok, checks["graph"].reason


def test_each_store_row_is_the_configured_stores_own_description(tmp_path: Path) -> None:
    """The store rows come from the stores (their label and address); planning opens none."""
    home = tmp_path / "home"
    cfg = Config(home=home, embedder="hashing", chat_model="scripted")
    rows = {c.role: (c.kind, c.where) for c, _probe in doctor.plan(cfg)}
    assert rows["sessions/tickets/feed"] == ("in-process", "memory")
    assert rows["audit log"] == ("sqlite", str(cfg.path("audit.sqlite3")))
    assert rows["graph"] == ("sqlite", str(cfg.path("tutor-graph.sqlite3")))
    assert rows["semantic memory"] == ("qdrant-edge", str(cfg.qdrant_edge_path))
    assert rows["vector index"] == ("chroma-local", str(cfg.chroma_path))
    server = Config(
        home=home,
        profile="server",
        redis_url="redis://:secret@127.0.0.1:6390/0",
        postgres_dsn="postgresql://custodia:secret@127.0.0.1:5439/custodia",
        neo4j_uri="bolt://127.0.0.1:7699",
        qdrant_url="http://127.0.0.1:6339",
        chroma_url="http://127.0.0.1:8009",
        embedder="hashing",
        chat_model="scripted",
    ).validated()
    rows = {c.role: (c.kind, c.where) for c, _probe in doctor.plan(server)}
    assert rows["sessions/tickets/feed"][0] == "redis"
    assert rows["audit log"][0] == "postgres"
    assert "secret" not in rows["sessions/tickets/feed"][1] + rows["audit log"][1]
    assert rows["graph"] == ("neo4j", "bolt://127.0.0.1:7699")
    assert rows["semantic memory"] == ("qdrant", "http://127.0.0.1:6339")
    assert rows["vector index"] == ("chroma", "http://127.0.0.1:8009")
    assert not home.exists()  # describing opened nothing


def test_the_chat_model_row_names_the_model_as_everywhere_else(tmp_path: Path) -> None:
    """The row says what the models dialog, the window and `custodia models list` say
    (``friendly_name``), never the runtime's own name; ``kind`` in ``--json`` stays the
    runtime's."""
    from backends.models.manage import friendly_name

    cfg = Config(home=tmp_path, embedder="hashing", chat_model="scripted")
    chat = next(c for c in doctor.run(cfg) if c.role == "chat model")
    assert chat.kind != friendly_name("scripted")
    assert chat.kind_text() == friendly_name("scripted")
    assert friendly_name("scripted") in chat.line()
