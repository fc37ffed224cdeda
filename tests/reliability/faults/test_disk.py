"""A read-only data dir and a full disk, for every assistant and the audit log.

Each fault: writes fail with a typed, clear error (the multi-agent sessions, by design MA6,
never raise: the SQLite layer shows degraded and keeps the sessions pending); what was stored
stays readable; nothing stored before is lost; and once the fault clears, the *same* open
service writes again — no restart needed.

The means (tmpfs remounted read-only, chmod, chattr, a filled tmpfs or RLIMIT_FSIZE) are in
tests/reliability/faults/filesystems.py and are recorded with the figures.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.conversations.service import ConversationAgent
from backends.errors import CustodiaEnvironmentError
from backends.memories.service import MemoryAssistant
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.models.registry import ChatChoice
from backends.multiagent.service import MultiAgentService
from backends.stores.sessions import Session
from tests.reliability.conftest import Figures
from tests.reliability.faults.filesystems import FullDisk, ReadOnly, tmpfs

EMBEDDER = HashingEmbedder(32)


@pytest.fixture
def mounted_home(tmp_path: Path) -> Iterator[tuple[Path, bool]]:
    home = tmp_path / "home"
    with tmpfs(home, size="12m") as mounted:
        yield home, mounted


def _config(home: Path) -> Config:
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


class Apps:
    """Every assistant opened on one data dir, the way the app builds them."""

    def __init__(self, home: Path) -> None:
        cfg = _config(home)
        self.memories = MemoryAssistant(home / "memories.sqlite3", lambda: EMBEDDER, ScriptedChat)
        self.conversations = ConversationAgent(
            cfg,
            embedder=lambda: EMBEDDER,
            chat=lambda: ChatChoice(ScriptedChat()),
            use_keyring=False,
        )
        self.multiagent = MultiAgentService(
            cfg, embedder=lambda: EMBEDDER, chat=ScriptedChat, retry_after=0
        )
        self.audit = AuditService.open(cfg, checkpoint_every=0)

    def close(self) -> None:
        for close in (
            self.memories.close,
            self.conversations.close,
            self.multiagent.close,
            self.audit.close,
        ):
            with contextlib.suppress(CustodiaEnvironmentError):
                close()


def _seed(home: Path) -> dict[str, Any]:
    apps = Apps(home)
    try:
        apps.memories.remember("I am allergic to penicillin")
        cid = apps.conversations.ask("first question").conversation_id
        session = apps.multiagent.sessions.save(Session.new("first session"))
        apps.audit.append("tutor.turn", "ana", personal={"q": "x"}, n=1)
        return {"conversation": cid, "session": session.session_id}
    finally:
        apps.close()


def _writes(apps: Apps, seeded: dict[str, Any], n: int) -> list[tuple[str, Callable[[], Any]]]:
    return [
        ("memories", lambda: apps.memories.remember(f"My dog number {n} is called Rex")),
        ("conversations", lambda: apps.conversations.ask(f"question {n}", seeded["conversation"])),
        ("audit", lambda: apps.audit.append("tutor.turn", None, n=n)),
    ]


def _reads(apps: Apps, seeded: dict[str, Any]) -> None:
    """What must keep working while the fault lasts."""
    assert [m.text for m in apps.memories.recent()][-1] == "I am allergic to penicillin"
    assert apps.memories.search("I am allergic to penicillin", k=1)[0].similarity > 0.99
    conversation = apps.conversations.load(seeded["conversation"])
    assert conversation.history[0].content == "first question"
    assert apps.audit.verify().ok
    assert apps.multiagent.session(seeded["session"]) is not None


def _after(apps: Apps, seeded: dict[str, Any], recovered: int) -> None:
    """Everything from before is there; the writes after recovery too."""
    texts = {m.text for m in apps.memories.recent()}
    assert "I am allergic to penicillin" in texts
    assert f"My dog number {recovered} is called Rex" in texts
    history = [m.content for m in apps.conversations.load(seeded["conversation"]).history]
    assert history[0] == "first question" and f"question {recovered}" in history
    result = apps.audit.verify()
    assert result.ok and result.head.seq >= 2


def test_a_read_only_data_dir(mounted_home: tuple[Path, bool], figures: Figures) -> None:
    """The app starts on a read-only data dir (restored read-only, read-only media...).

    SQLite in WAL mode cannot open a database whose folder is read-only (it must create the
    -wal and -shm files), so opening a store is where the typed error comes; the multi-agent
    sessions degrade instead (MA6). Once the folder is writable, opening again works.
    """
    home, mounted = mounted_home
    seeded = _seed(home)
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    fault = ReadOnly(home, mounted)
    if not fault.available:
        pytest.skip("no way to make a directory read-only for root here (mount, chattr)")
    fault.on()
    try:
        cfg = _config(home)
        opens: list[tuple[str, Callable[[], Any]]] = [
            ("memories", lambda: MemoryAssistant(home / "memories.sqlite3", lambda: EMBEDDER,
                                                 ScriptedChat).remember("My dog is called Rex")),
            ("conversations", lambda: ConversationAgent(
                cfg, embedder=lambda: EMBEDDER, chat=lambda: ChatChoice(ScriptedChat()),
                use_keyring=False).ask("question 2", seeded["conversation"])),
            ("audit", lambda: AuditService.open(cfg).append("tutor.turn", None, n=2)),
        ]  # fmt: skip
        for name, action in opens:
            with pytest.raises(CustodiaEnvironmentError) as caught:
                action()
            assert str(caught.value).strip(), name
            assert "read" in str(caught.value).lower() or "open" in str(caught.value).lower()
            figures.add("faults", f"read-only data dir: {name}", "refused")
        sessions = MultiAgentService(
            cfg, embedder=lambda: EMBEDDER, chat=ScriptedChat, retry_after=0
        )
        saved = sessions.sessions.save(Session.new("while read-only"))  # never raises (MA6)
        assert sessions.health()["sessions SQLite"].startswith("degraded")
        assert sessions.session(saved.session_id) is not None  # lives on in L1
        after = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
        assert after == before  # nothing stored changed
        fault.off()
        sessions.sessions.save(saved)  # the same object recovers
        assert sessions.sessions.pending_sqlite == 0
        assert sessions.health()["sessions SQLite"] == "ok"
        sessions.close()
        apps = Apps(home)  # and every store opens again
        try:
            for _, write in _writes(apps, seeded, 3):
                write()
            _after(apps, seeded, 3)
            assert apps.multiagent.session(saved.session_id) is not None
        finally:
            apps.close()
    finally:
        fault.off()
    figures.record("faults", "read-only data dir", how=fault.how, survived=True)


def test_a_full_disk(mounted_home: tuple[Path, bool], figures: Figures) -> None:
    home, mounted = mounted_home
    seeded = _seed(home)
    apps = Apps(home)
    fault = FullDisk(home, mounted)
    try:
        _reads(apps, seeded)
        fault.on()
        try:
            big = "x" * 300_000  # bigger than any free page the files still hold
            for name, _ in _writes(apps, seeded, 2):
                with pytest.raises(CustodiaEnvironmentError) as caught:
                    if name == "memories":
                        apps.memories.remember(f"My dog number 2 is called Rex {big}")
                    elif name == "conversations":
                        apps.conversations.ask(f"question 2 {big}", seeded["conversation"])
                    else:
                        apps.audit.append("tutor.turn", None, n=2, padding=big)
                assert str(caught.value).strip(), name
                figures.add("faults", f"full disk: {name}", "refused writes")
            session = Session.new("while full")
            session.data["padding"] = big
            apps.multiagent.sessions.save(session)
            assert apps.multiagent.sessions.pending_sqlite >= 1
            _reads(apps, seeded)
        finally:
            fault.off()
        for _, write in _writes(apps, seeded, 3):
            write()
        apps.multiagent.sessions.save(apps.multiagent.session(session.session_id))  # type: ignore[arg-type]
        assert apps.multiagent.sessions.pending_sqlite == 0
        _after(apps, seeded, 3)
    finally:
        fault.off()
        apps.close()
    reopened = Apps(home)  # and after a restart, nothing is damaged
    try:
        _after(reopened, seeded, 3)
        assert reopened.multiagent.session(session.session_id) is not None
    finally:
        reopened.close()
    figures.record("faults", "full disk", how=fault.how, survived=True)


def _cap(conn: Any) -> None:
    """SQLite's own "disk is full": no page beyond the ones the file has now."""
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages}")


def test_a_migration_on_a_full_disk_is_a_typed_error(home: Path) -> None:
    from backends.errors import StoreUnavailableError
    from backends.stores.engines.sqlite import connect, migrate

    conn = connect(home / "m.sqlite3")
    _cap(conn)
    big = "CREATE TABLE t(x);\nINSERT INTO t SELECT zeroblob(100000) FROM (SELECT 1 UNION SELECT 2)"
    with pytest.raises(StoreUnavailableError, match="full"):
        migrate(conn, [("big", big)])
    conn.execute("PRAGMA max_page_count=1073741823")
    assert migrate(conn, [("big", big)]) == 1  # space again: it applies
    conn.close()


def test_an_audit_append_on_a_full_disk_is_a_typed_error(home: Path) -> None:
    from backends.stores.audit_log import AuditLogError

    service = AuditService.open(_config(home), checkpoint_every=0)
    try:
        service.append("tutor.turn", None, n=1)
        _cap(service.log._conn)  # type: ignore[attr-defined]
        with pytest.raises(AuditLogError, match="full"):
            service.append("tutor.turn", None, n=2, padding="x" * 200_000)
        service.log._conn.execute("PRAGMA max_page_count=1073741823")  # type: ignore[attr-defined]
        assert service.append("tutor.turn", None, n=3).seq == 2
        assert service.verify().ok
    finally:
        service.close()
