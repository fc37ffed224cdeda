"""A data dir written by main just before issue 26 (6a85bd8) opens unchanged.

``tests/fixtures/datadir-0.2/`` was written by that commit's own services
(``tests/fixtures/make_datadir_0_2.py`` says how): three memories (one in Spanish), one
encrypted conversation, a multi-agent session run to its end, the tutor's knowledge base and
graph after one question asked as Ana, the audit log with its pseudonym and signing keys, and
two threads (a memory chat, a tutor thread). The large derived stores (vector folders) are not
in it: they are rebuilt from these.

Every part is opened here the way the app opens it after the refactor — ``services.get(name,
kind)``, built from the registry — on a copy; every datum reads back, the storage map finds
every store healthy, and opening rewrites none of the history or provable files.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.audit import AuditService
from backends.config import Config
from backends.conversations import ConversationAgent
from backends.memories import MemoryAssistant
from backends.multiagent import MultiAgentService
from backends.services import Services
from backends.storage_map import storage_map
from backends.threads import ThreadIndex
from backends.tutor import TutorService

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "datadir-0.2"
#: the key the generator encrypted the conversation history under (a test key)
CONVERSATIONS_KEY = "VV2F5pV6n4kq_u9wwI6jwtdn1dj_B5Zo9cVIdMOcbXI="
MEMORIES = {
    "Ana's appointment is on Tuesday",
    "The clinic closes at 18:00",
    "La farmacia abre a las nueve",
}
CONVERSATION = "4bccdee421f1410db29b96485dfd020e"
SESSION = "c9b10145b1544de2819368fe36300648"
MEMORY_CHAT = "332a735fabed42109617ec699fe2ce52"
TUTOR_THREAD = "9dfcc80617d64d56a7c2b4e290c6d3b1"
TUTOR_QUESTION = "What is the antidote for warfarin?"
#: the files opening may rewrite. Only the conversations' index (recomputable): it keeps each
#: JSON file's inode and mtime, which a copy changes, so the file is read again and its row
#: rewritten. Opening may also add empty lock files (``*.migrate-lock``); nothing else is
#: added or removed.
REWRITTEN_ON_OPEN = {"conversations.sqlite3"}
#: the stores whose schema moved on since 0.2, with the ``user_version`` they reach and the
#: tables that hold the user's data, which the migration must leave row for row as they were
#: (issue 29: migration 5 gives the memories a ``store_id`` for their int8 snapshot)
MIGRATED_ON_OPEN = {"memories.sqlite3": (5, ("vectores", "memory_meta", "memory_signal"))}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(FIXTURE, home)
    for path in home.rglob("*"):  # git keeps no modes: as the app made them
        path.chmod(0o700 if path.is_dir() else 0o600)
    return home


@pytest.fixture
def config(home: Path) -> Config:
    return Config(
        home=home, embedder="hashing", chat_model="scripted", conversations_key=CONVERSATIONS_KEY
    )


@pytest.fixture
def services(config: Config) -> Iterator[Services]:
    services = Services(config)
    yield services
    services.close()


def _rows(path: Path, tables: tuple[str, ...]) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in tables}
    finally:
        conn.close()


def _user_version(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _digests(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file()
    }


def test_the_fixture_is_the_layout_of_0_2() -> None:
    assert sorted(_digests(FIXTURE)) == [
        "audit-keys.sqlite3",
        "audit-signing.key",
        "audit.sqlite3",
        "conversations.sqlite3",
        f"conversations/{CONVERSATION}.json",
        "memories.sqlite3",
        "multiagent.sqlite3",
        "threads.sqlite3",
        "tutor-graph.sqlite3",
        "tutor.sqlite3",
    ]
    assert sum(path.stat().st_size for path in FIXTURE.rglob("*")) < 3_000_000


def test_the_memories_read_back(services: Services) -> None:
    memories = services.get("memories", MemoryAssistant)
    assert {memory.text for memory in memories.recent()} == MEMORIES
    stats = memories.status().stats
    assert (stats.total, stats.searchable, stats.unreadable) == (3, 3, 0)
    assert not memories.status().reembed_now
    (hit,) = memories.search("La farmacia abre a las nueve", k=1)
    assert hit.text == "La farmacia abre a las nueve"


def test_the_conversation_reads_back(services: Services) -> None:
    agent = services.get("conversations", ConversationAgent)
    agent.start()
    (row,) = agent.conversations()
    assert (row.file, row.name, row.messages, row.encrypted, row.error) == (
        f"{CONVERSATION}.json",
        "What did I decide about the flights?",
        2,
        True,
        None,
    )
    conversation = agent.load(CONVERSATION)
    assert [(m.role, m.content) for m in conversation.history] == [
        ("user", "What did I decide about the flights?"),
        ("assistant", "I can't find that in your conversations."),
    ]


def test_the_multiagent_session_reads_back(services: Services) -> None:
    multiagent = services.get("multiagent", MultiAgentService)
    (session,) = multiagent.list_sessions(durable=True)
    assert session.session_id == SESSION
    assert (session.task, session.phase, session.model) == (
        "write a haiku about storage",
        "done",
        "scripted",
    )
    assert session.data["result"].startswith("# write a haiku about storage")
    events = session.data["events"]
    assert len(events) == 17 and [e["seq"] for e in events] == list(range(1, 18))
    assert events[0]["kind"] == "session_started"


def test_the_tutor_knowledge_base_reads_back(services: Services) -> None:
    tutor = services.get("tutor", TutorService)
    status = tutor.status()
    assert (status.documents, status.chunks, status.entities) == (59, 227, 134)
    assert status.by_scope == {"shared": (59, 227)}
    assert tutor.graph.counts().relations == {"shared": 1621}
    chunk = tutor.kb.chunks(["kb/warfarin#1-a7cce878"])["kb/warfarin#1-a7cce878"]
    assert chunk.text.startswith("Its full effect takes several days")


def test_the_audit_log_verifies_and_reveals_for_ana(services: Services) -> None:
    audit = services.get("audit", AuditService)
    result = audit.verify()
    assert result.ok and result.records == 1
    (entry,) = audit.entries()
    assert entry.event_type == "tutor.turn" and entry.pseudonym == audit.pseudonym_of("ana")
    assert entry.data["chunks"][0] == "kb/warfarin#1-a7cce878"
    revealed = audit.reveal(entry)
    assert revealed.status == "sealed" and revealed.personal is not None
    assert revealed.personal["question"] == TUTOR_QUESTION
    assert revealed.personal["heading"] == "Not covered by your notes"


def test_the_threads_and_their_turns_read_back(services: Services) -> None:
    threads = services.get("threads", ThreadIndex)
    (chat,) = threads.listed("memories", "ana")
    assert (chat.id, chat.title, chat.turns) == (MEMORY_CHAT, "When is Ana's appointment?", 2)
    assert [(t.role, t.text, t.audit_seq) for t in threads.turns(MEMORY_CHAT)] == [
        ("user", "When is Ana's appointment?", None),
        ("assistant", "On Tuesday [1].", None),
    ]
    (asked,) = threads.listed("tutor", "ana")
    assert (asked.id, asked.title, asked.turns) == (TUTOR_THREAD, TUTOR_QUESTION, 1)
    assert [(t.role, t.text, t.audit_seq) for t in threads.turns(TUTOR_THREAD)] == [("user", "", 1)]


def test_every_store_is_healthy_and_opening_rewrites_no_history(home: Path, config: Config) -> None:
    before = _digests(home)
    rows_before = {
        name: _rows(home / name, tables) for name, (_, tables) in MIGRATED_ON_OPEN.items()
    }
    services = Services(config)
    try:
        services.get("memories", MemoryAssistant).recent()
        services.get("conversations", ConversationAgent).start()
        services.get("multiagent", MultiAgentService).list_sessions(durable=True)
        services.get("tutor", TutorService).status()
        audit = services.get("audit", AuditService)
        assert audit.verify().ok
        services.get("threads", ThreadIndex).listed("tutor")
        rows = storage_map(config, services)
        assert [(row.kind, row.health) for row in rows if not row.ok] == []
        items = {row.kind: row.items for row in rows}
        assert (items["memories"], items["conversations"], items["sessions"]) == (3, 1, 1)
        assert (items["knowledge base"], items["graph"], items["threads"]) == (227, 1621, 2)
        assert (items["audit log"], items["pseudonym keys"]) == (1, 1)
    finally:
        services.close()
    after = _digests(home)
    added = set(after) - set(before)
    assert all(name.endswith(".migrate-lock") for name in added), added
    assert set(before) <= set(after)
    changed = {name for name in before if after[name] != before[name]}
    assert changed <= REWRITTEN_ON_OPEN | set(MIGRATED_ON_OPEN)
    for name, (version, tables) in MIGRATED_ON_OPEN.items():
        assert _user_version(home / name) == version
        assert _rows(home / name, tables) == rows_before[name]
