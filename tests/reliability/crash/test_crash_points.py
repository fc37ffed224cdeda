"""Every kill point, not random ones: the small files Custodia writes with plain syscalls.

Random kills rarely land in a window of two syscalls. For the files written with ``os``
calls — the audit signing key, the trusted checkpoints, the migration journal, the key
rotation journal, a conversation file, custodia.toml — a forked child runs the write and
SIGKILLs itself at the *n*-th call of one syscall (``open``, ``write``, ``fdopen``,
``fsync``, ``close``, ``replace``, ``rename``, ``link``, ``unlink``), for every *n* the write
makes. After each death the parent opens what is on disk the way the app does at start: it
must load, and hold either the old content or the new.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import Figures

SYSCALLS = ("open", "write", "fdopen", "fsync", "close", "replace", "rename", "link", "unlink")


def _die_at(name: str, n: int) -> None:
    """In the child: the n-th call of ``os.<name>`` kills the process instead."""
    original = getattr(os, name)
    calls = [0]

    def deadly(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        if calls[0] == n:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(os, name, deadly)


def _count_calls(action: Callable[[], Any], name: str) -> int:
    """How many times ``action`` calls ``os.<name>`` (in a child, to leave no trace)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        original = getattr(os, name)
        calls = [0]

        def counting(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return original(*args, **kwargs)

        code = 0
        try:
            setattr(os, name, counting)
            action()
            setattr(os, name, original)
            os.write(write, str(calls[0]).encode())
        except BaseException:
            code = 1
        os._exit(code)
    os.close(write)
    _, status = os.waitpid(pid, 0)
    data = os.read(read, 64)
    os.close(read)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "the write itself failed"
    return int(data or b"0")


def _kill_during(action: Callable[[], Any], name: str, n: int) -> bool:
    """Run ``action`` in a child that dies at the n-th ``os.<name>``; True if it died."""
    pid = os.fork()
    if pid == 0:
        try:
            _die_at(name, n)
            action()
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def _every_kill_point(
    prepare: Callable[[], None],
    action: Callable[[], Any],
    check: Callable[[], None],
    figures: Figures,
    label: str,
) -> None:
    points = 0
    for name in SYSCALLS:
        prepare()
        calls = _count_calls(action, name)
        for n in range(1, calls + 1):
            prepare()
            assert _kill_during(action, name, n)
            check()  # what the app does at the next start
            points += 1
    assert points > 0
    figures.record("crash points", label, kill_points=points, survived=points)


def _fresh(path: Path) -> None:
    for p in sorted(path.parent.glob(path.name + "*")):
        p.unlink()
    for p in path.parent.glob("." + path.name + "*"):
        p.unlink()


def test_the_audit_signing_key(home: Path, figures: Figures) -> None:
    from backends.audit.checkpoints import Signer

    key = home / "audit-signing.key"

    def check() -> None:
        Signer.load_or_create(key)  # a torn key would lock the audit log for good
        _fresh(key)

    _every_kill_point(lambda: _fresh(key), lambda: Signer.load_or_create(key), check, figures,
                      "audit signing key (first start)")  # fmt: skip


def test_the_trusted_checkpoints(home: Path, figures: Figures) -> None:
    from backends.audit.checkpoints import Signer, TrustStore

    signer = Signer.load_or_create(home / "audit-signing.key")
    trust = TrustStore(home / "audit-checkpoints.jsonl", signer.public_key)
    trust.accept(signer.sign("log", 1, "a" * 64))
    saved = trust.path.read_bytes()

    def prepare() -> None:
        trust.path.write_bytes(saved)

    def check() -> None:
        seqs = [c.seq for c in trust.all("log")]  # every line's signature re-checked
        assert seqs in ([1], [1, 2]), seqs

    _every_kill_point(prepare, lambda: trust.accept(signer.sign("log", 2, "b" * 64)), check,
                      figures, "trusted checkpoints (append)")  # fmt: skip


def test_the_migration_journal(home: Path, figures: Figures) -> None:
    from backends.migrate import Journal

    path = home / "migration-journal.json"

    def prepare() -> None:
        journal = Journal(path)
        journal.begin({"redis": "x"}, resume=False)

    def action() -> None:
        journal = Journal.load(path)
        journal.step("audit log").update(state="running", copied=500)
        journal.save()

    def check() -> None:
        journal = Journal.load(path)
        assert journal.unfinished
        assert journal.step("audit log").get("copied") in (None, 500)

    _every_kill_point(prepare, action, check, figures, "migration journal")


def test_a_conversation_file_and_the_rotation_journal(home: Path, figures: Figures) -> None:
    from backends.conversations.files import (
        Conversation,
        ConversationFiles,
        RotationJournal,
        StoredMessage,
    )
    from backends.conversations.keys import HistoryCipher, generate_key

    folder = home / "conversations"
    files = ConversationFiles(folder, HistoryCipher([generate_key()]))
    one = Conversation("c" * 32, "n", "d", "p", "m", [StoredMessage("user", "old")])
    two = Conversation("c" * 32, "n", "d", "p", "m", [StoredMessage("user", "new")])

    def prepare() -> None:
        files.write(one)

    def check() -> None:
        names = sorted(files.scan())
        assert names == ["c" * 32 + ".json"]
        assert files.read(names[0])[0].history[0].content in ("old", "new")

    _every_kill_point(prepare, lambda: files.write(two), check, figures, "conversation file")

    journal = RotationJournal(folder)

    def begin_check() -> None:
        state = journal.read()
        assert state is None or state[0] == "kid"
        journal.path.unlink(missing_ok=True)

    _every_kill_point(lambda: journal.path.unlink(missing_ok=True),
                      lambda: journal.begin("kid"), begin_check, figures,
                      "key rotation journal")  # fmt: skip


def test_custodia_toml(home: Path, figures: Figures) -> None:
    from dataclasses import replace

    from backends import config as config_module
    from backends.config import Config

    base = Config(home=home, embedder="hashing", chat_model="scripted")

    def check() -> None:
        loaded = config_module.load({}, home=home)
        assert loaded.chat_model in ("scripted", "retrieval-only")

    _every_kill_point(lambda: config_module.save(base),
                      lambda: config_module.save(replace(base, chat_model="retrieval-only")),
                      check, figures, "custodia.toml")  # fmt: skip


@pytest.fixture(autouse=True)
def _fork_is_safe_here() -> None:
    if not hasattr(os, "fork"):
        pytest.skip("needs fork()")
