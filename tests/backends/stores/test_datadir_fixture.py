"""A data dir written by main before the storage layer (05c1b56) opens unchanged.

``tests/fixtures/datadir-0.1/`` was written by that commit's own classes (the memories, the
multi-agent sessions, the audit log with its keys and signing key, the tutor's graph, one
conversation file; the derived vector stores are rebuilt from these, so they are not in it).
Every store is opened here the way the app opens it now — through the registry — on a copy,
and every datum reads back; the files are not rewritten by opening them.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from backends.audit import AuditService
from backends.config import Config
from backends.conversations.files import ConversationFiles
from backends.models.embedders import HashingEmbedder
from backends.services import open_store

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "datadir-0.1"
MEMORIES = {"Ana's appointment is on Tuesday", "The clinic closes at 18:00", "Bob prefers tea"}


@pytest.fixture
def config(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    for path in home.rglob("*"):  # git keeps no modes: as the app made them
        path.chmod(0o700 if path.is_dir() else 0o600)
    return Config(home=home)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_fixture_is_the_old_layout() -> None:
    names = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*") if p.is_file())
    assert names == [
        "audit-keys.sqlite3",
        "audit-signing.key",
        "audit.sqlite3",
        "conversations/11111111111111111111111111111111.json",
        "memories.sqlite3",
        "multiagent.sqlite3",
        "tutor-graph.sqlite3",
    ]


def test_the_memories_read_back(config: Config) -> None:
    embedder = HashingEmbedder(32)
    store = open_store(
        "memories",
        config,
        path=config.path("memories.sqlite3"),
        dimension=embedder.dimension,
        embedder_name=embedder.name,
    )
    try:
        assert {m.text for m in store.list()} == MEMORIES
        assert store.stats().needs_reembed == 0
        hits = store.search(embedder.embed("Bob prefers tea"), k=1)
        assert hits[0].text == "Bob prefers tea"
    finally:
        store.close()


def test_the_multiagent_session_reads_back(config: Config) -> None:
    mirror = open_store("sessions", config, path=config.path("multiagent.sqlite3"))
    try:
        session = mirror.load("0" * 32)
    finally:
        mirror.close()
    assert session is not None
    assert (session.task, session.phase, session.model) == (
        "write a haiku about storage",
        "done",
        "scripted",
    )
    assert session.data["result"] == "Five seven five."
    assert session.data["events"] == [{"seq": 1, "text": "planned"}]


def test_the_audit_log_verifies_and_its_sealed_fields_open(config: Config) -> None:
    service = AuditService.open(config)
    try:
        result = service.verify()
        assert result.ok and result.records == 2
        entries = list(service.entries())
        assert [e.event_type for e in entries] == ["tutor.turn", "kb.import"]
        assert entries[0].data["passages"] == 2 and entries[1].data["documents"] == 1
        revealed = service.reveal(entries[0])
        assert revealed.status == "sealed"
        assert revealed.personal == {"question": "what is the antidote?"}
    finally:
        service.close()
    key = "audit-signing.key"
    assert _digest(config.path(key)) == _digest(FIXTURE / key)  # the same signing key


def test_the_tutor_graph_reads_back(config: Config) -> None:
    graph = open_store("graph", config, path=config.path("tutor-graph.sqlite3"))
    try:
        counts = graph.counts()
        assert counts.entities == 3
        assert counts.relations == {"shared": 1, "user:ana": 1}
        near = graph.neighbours(["paracetamol"], ["shared"])
        assert [(n.target, n.weight, n.sources) for n in near] == [
            ("acetylcysteine", 3, ("c1", "c2"))
        ]
        assert graph.neighbours(["paracetamol"], ["shared", "user:ana"])[-1].target == "warfarin"
    finally:
        graph.close()


def test_the_conversation_reads_back(config: Config) -> None:
    conversation = ConversationFiles(config.path("conversations")).load("1" * 32)
    assert conversation.name == "First conversation"
    assert [(m.role, m.content) for m in conversation.history] == [
        ("user", "hello there"),
        ("assistant", "General Kenobi"),
    ]
