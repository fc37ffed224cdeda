"""The storage map shows true counts: each row is checked against the store itself.

The data dir is filled by the scripted user journey (one of everything), plus a person
erased, a checkpoint and a second session, so no count is a trivial 0 or 1.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from backends import stores
from backends.config import Config
from backends.services import Services
from backends.storage_map import (
    DATA,
    DURABILITY,
    HISTORY,
    KINDS,
    NOT_CREATED,
    OK,
    PROVABLE,
    RECOMPUTABLE,
    StorageRow,
    dir_size,
    file_size,
    format_table,
    storage_map,
    to_json,
)
from tests.journeys.script import run_journey, tutor_available
from tests.parts import audit_service, conversations_service, memories_service, multiagent_service

#: the seed's rule, datum by datum
EXPECTED_CLASS = {
    "sessions": HISTORY,
    "tickets": RECOMPUTABLE,
    "feed": RECOMPUTABLE,
    "semantic memory": RECOMPUTABLE,
    "memories": HISTORY,
    "conversations": HISTORY,
    "conversation index": RECOMPUTABLE,
    "conversation vectors": RECOMPUTABLE,
    "knowledge base": HISTORY,
    "knowledge base vectors": RECOMPUTABLE,
    "graph": RECOMPUTABLE,
    "audit log": PROVABLE,
    "checkpoints": PROVABLE,
    "pseudonym keys": HISTORY,
    "threads": HISTORY,
    "models": HISTORY,
}


def _config(home: Path) -> Config:
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    home = tmp_path_factory.mktemp("map") / "home"
    home.mkdir(mode=0o700)
    services = Services(_config(home))
    run_journey(services)
    multiagent_service(services).ask("Summarise the CSV dialects")
    audit = audit_service(services)
    audit.append("tutor.turn", person="someone-else", personal={"question": "q"})
    audit.forget("someone-else")
    audit.checkpoint()
    yield services
    services.close()


def _rows(services: Services) -> dict[str, StorageRow]:
    rows = storage_map(services.config, services)
    assert [r.kind for r in rows] == list(KINDS)
    return {r.kind: r for r in rows}


def test_every_count_is_the_stores_own(filled: Services) -> None:
    cfg = filled.config
    rows = _rows(filled)
    for kind, row in rows.items():
        assert row.durability == EXPECTED_CLASS[kind], kind
        if kind in ("models", "threads"):  # the journey adds no model file, keeps no thread
            assert row.health == NOT_CREATED, row.health
        elif tutor_available() or row.assistant != "clinical tutor":
            assert row.health == OK, (kind, row.health)

    multiagent = multiagent_service(filled)
    sessions = multiagent.list_sessions()
    assert rows["sessions"].items == len(sessions) == 2
    assert rows["tickets"].items == len(multiagent.live_tickets()) > 0
    assert rows["feed"].items == sum(len(s.events) for s in sessions) > 20
    memory = multiagent.memory_status()
    assert rows["semantic memory"].items == sum(s.points for s in memory) > 0

    assert rows["memories"].items == memories_service(filled).store.count() == 1

    agent = conversations_service(filled)
    assert rows["conversations"].items == len(agent.conversations()) == 2
    assert rows["conversation index"].items == len(agent.index.rows()) == 2
    assert rows["conversation vectors"].items == agent.vectors().count() == 4

    if tutor_available():
        from tests.parts import tutor_service

        status = tutor_service(filled).status()
        assert rows["knowledge base"].items == status.chunks > 0
        assert rows["knowledge base vectors"].items == status.vectors == status.chunks
        assert rows["graph"].items == status.graph_relations > 0
        assert f"{status.documents} documents" in rows["knowledge base"].note

    audit = audit_service(filled)
    assert rows["audit log"].items == audit.log.count() == audit.log.head().seq >= 3
    assert rows["checkpoints"].items == len(audit.trust.all()) == 1
    people = {e.pseudonym for e in audit.entries() if e.pseudonym}
    erased = {p for p in people if audit.keys.is_erased(p)}
    assert len(erased) == 1
    assert rows["pseudonym keys"].items == len(people) - len(erased)
    assert rows["pseudonym keys"].note.startswith("erased: 1 ")

    # Sizes are the files' own (with their -wal/-shm), folders summed.
    assert rows["memories"].size_bytes == file_size(cfg.path("memories.sqlite3")) > 0
    assert rows["audit log"].size_bytes == file_size(cfg.path("audit.sqlite3")) > 0
    json_bytes = sum(p.stat().st_size for p in cfg.path("conversations").glob("*.json"))
    assert rows["conversations"].size_bytes == json_bytes
    assert rows["semantic memory"].size_bytes == dir_size(cfg.qdrant_edge_path) > 0


def test_a_fresh_data_dir_is_measured_without_creating_anything(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    home.mkdir(mode=0o700)
    services = Services(_config(home))
    try:
        rows = _rows(services)
    finally:
        services.close()
    assert os.listdir(home) == []
    for row in rows.values():
        assert row.items in (0, None), row.kind
        assert row.ok or row.assistant == "clinical tutor"
    assert rows["memories"].health == NOT_CREATED
    assert rows["audit log"].health == NOT_CREATED


def test_unreachable_servers_and_bad_files_are_health_messages(tmp_path: Path) -> None:
    home = tmp_path / "broken"
    home.mkdir(mode=0o700)
    (home / "memories.sqlite3").write_bytes(b"this is not a database" * 100)
    cfg = replace(
        _config(home),
        profile="server",
        redis_url="redis://127.0.0.1:9/0",
        postgres_dsn="postgresql://nobody@127.0.0.1:9/none",
        network_timeout=1.0,
    ).validated()
    services = Services(cfg)
    try:
        rows = _rows(services)
    finally:
        services.close()
    assert "cannot read" in rows["memories"].health and rows["memories"].items is None
    assert not rows["tickets"].ok and "Redis" in rows["tickets"].health
    assert not rows["audit log"].ok and rows["audit log"].engine.startswith("Postgres")
    assert rows["conversations"].health == NOT_CREATED  # the rest still measured


def test_table_and_json(filled: Services) -> None:
    rows = storage_map(filled.config, filled)
    table = format_table(rows)
    for kind in KINDS:
        assert kind in table
    assert "provable" in table and "recomputable" in table
    data = json.loads(to_json(filled.config, rows))
    assert [r["kind"] for r in data["rows"]] == list(KINDS)
    assert all("if_lost" in r and "durability" in r for r in data["rows"])


def test_each_datum_is_declared_once_by_its_owner(tmp_path: Path) -> None:
    """The map is a loop over the assistants' declarations: every kind once, each held by a
    registry role (described by its store) or placed by its owner, none measured here."""
    cfg = _config(tmp_path)
    assert tuple(d.kind for d in DATA) == KINDS and len(set(KINDS)) == len(KINDS) == 16
    for datum in DATA:
        assert datum.durability in DURABILITY and datum.if_lost and datum.unit
        assert datum.role or datum.place is not None, datum.kind
        if datum.role:
            assert datum.role in stores.roles(), datum.kind
            described = stores.describe(datum.role, cfg, **datum.context(cfg))
            assert described.engine and described.location, datum.kind
    assert os.listdir(tmp_path) == []  # describing opened nothing


def test_sizes_are_what_the_disk_holds_not_apparent_sizes(tmp_path: Path) -> None:
    """qdrant-edge maps sparse files: the map said 453 MB where ``du`` said 848 KB."""
    folder = tmp_path / "sparse"
    folder.mkdir()
    with (folder / "page_0.dat").open("wb") as fh:
        fh.write(b"x" * 4096)
        fh.truncate(400 << 20)  # 400 MB apparent, one page written
    assert (folder / "page_0.dat").stat().st_size == 400 << 20
    assert dir_size(folder) < 1 << 20
    assert file_size(folder / "page_0.dat") < 1 << 20


def test_the_models_folder_is_on_the_map(tmp_path: Path) -> None:
    from tests.backends.models.gguf_files import write_gguf

    home = tmp_path / "home"
    (home / "models").mkdir(parents=True, mode=0o700)
    write_gguf(home / "models" / "copied.gguf")
    (home / "models" / "linked.gguf").symlink_to(write_gguf(tmp_path / "elsewhere.gguf"))
    services = Services(_config(home))
    try:
        row = _rows(services)["models"]
    finally:
        services.close()
    assert row.ok and row.items == 2 and row.where == str(home / "models")
    assert row.size_bytes == file_size(home / "models" / "copied.gguf")
    assert "1 copied, 1 linked" in row.note
