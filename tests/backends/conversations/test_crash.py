"""kill -9 during writes and during a key rotation: every file loads, the index matches."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.config import Config
from backends.conversations.keys import generate_key
from backends.conversations.rotation import ROTATION_JOURNAL

from .conftest import MakeAgent, conversation

ROOT = Path(__file__).resolve().parents[3]


def _child(mode: str, home: Path, **keys: str) -> subprocess.Popen[str]:
    env = dict(os.environ) | keys
    return subprocess.Popen(
        [sys.executable, "-m", "tests.backends.conversations.crash_child", mode, str(home)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def _kill_after_ready(
    proc: subprocess.Popen[str], rng: random.Random, most: float, when: Path | None = None
) -> None:
    """SIGKILL the child a random time after it is ready (or as soon as ``when`` exists)."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", f"child did not start: {line!r}"
    if when is None:
        time.sleep(rng.uniform(0.0, most))
    else:
        deadline = time.monotonic() + 10
        while not when.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.0005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    proc.stdout.close()


def _assert_files_and_index_agree(agent) -> None:
    files = agent.files.scan()
    rows = {r.file: r for r in agent.conversations()}
    assert set(rows) == set(files)
    for name, stamp in files.items():
        conversation, _ = agent.files.read(name)  # every file loads
        row = rows[name]
        assert row.readable and row.messages == len(conversation.history)
        assert row.stamp == stamp and row.name == conversation.display_name
    assert not list(agent.folder.glob("*.json.tmp"))


def _kill_during_writes(make_agent: MakeAgent, config, iterations: int) -> None:
    key = generate_key()
    rng = random.Random(5)
    for _ in range(iterations):
        _kill_after_ready(_child("write", config.home, CRASH_KEY=key), rng, 0.15)
    agent = make_agent(key=key, start=False)
    report = agent.start()
    assert report.unreadable == 0
    _assert_files_and_index_agree(agent)
    assert len(agent.conversations()) >= 1


def test_kill_9_during_writes_10_times(make_agent: MakeAgent, config) -> None:
    _kill_during_writes(make_agent, config, 10)


@pytest.mark.slow
def test_kill_9_during_writes_50_times(make_agent: MakeAgent, config) -> None:
    _kill_during_writes(make_agent, config, 50)


def test_kill_9_during_key_rotation_then_resume(make_agent: MakeAgent, config) -> None:
    key = generate_key()
    seed = make_agent(key=key)
    for i in range(40):
        seed.files.write(conversation(f"conversation {i} " + "text " * 50, "reply"), create=True)
    seed.close()
    rng = random.Random(11)
    interrupted = 0
    journal = config.home / "conversations" / ROTATION_JOURNAL
    for attempt in range(3):
        new = generate_key()
        child = _child("rotate", config.home, CRASH_KEY=key, CRASH_NEW_KEY=new)
        # the first kill lands as soon as the rotation has begun, the others at random
        _kill_after_ready(child, rng, 0.2, journal if attempt == 0 else None)
        interrupted += journal.exists()
        agent = make_agent(key=key)  # a restart with the old key, the user gives the new one
        agent.rotate_key(new)
        key = new
        fresh = make_agent(key=key)
        _assert_files_and_index_agree(fresh)
        assert len(fresh.conversations()) == 40
        assert all(r.encrypted for r in fresh.conversations())
    assert interrupted >= 1  # at least one kill landed inside a rotation


CLI = "import sys; from backends import cli; sys.exit(cli.main(sys.argv[1:]))"


def _cli(home: Path, *args: str, **env: str) -> subprocess.Popen[str]:
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CUSTODIA_") and k != "CONVERSATIONS_KEY"
    }
    base |= {
        "CUSTODIA_HOME": str(home),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
    }
    return subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        cwd=ROOT,
        env=base | env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _rotated(journal: Path) -> int:
    """Files the rotation journal records as done (0 when there is no journal)."""
    try:
        return max(0, len(journal.read_text().splitlines()) - 1)
    except FileNotFoundError:
        return 0


def test_kill_9_during_rotate_key_generate_loses_nothing(
    make_agent: MakeAgent, config: Config
) -> None:
    """``rotate-key --generate`` killed mid-way: the printed (and saved) key opens what was
    re-encrypted, the old key the rest, and ``rotate-key`` finishes with the saved key."""
    from backends.conversations.files import ConversationFiles
    from backends.conversations.keys import PENDING_KEY_FILE, HistoryCipher, key_id

    key = generate_key()
    seed = make_agent(key=key)
    for i in range(300):
        seed.files.write(conversation(f"generated {i} " + "text " * 200, "reply"), create=True)
    seed.close()
    folder = config.home / "conversations"
    journal = folder / ROTATION_JOURNAL
    child = _cli(config.home, "rotate-key", "--generate", CONVERSATIONS_KEY=key)
    deadline = time.monotonic() + 60
    while _rotated(journal) < 1 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    printed, errors = child.communicate()
    assert journal.exists(), f"the kill came after the rotation ended: {errors}"
    new = printed.strip()
    assert len(new) == 44, f"no key was shown before files were rewritten: {printed!r}"
    assert (folder / PENDING_KEY_FILE).read_text().strip() == new
    kids = {json.loads(p.read_text())["key_id"] for p in folder.glob("*.json")}
    assert key_id(new) in kids  # the kill landed after files were re-encrypted
    both = ConversationFiles(folder, HistoryCipher([new, key]))
    for name in both.scan():
        assert both.read(name)[0].history  # every conversation opens with a key the user has
    # the app restarted with the old key reads everything (the saved key is found)
    restarted = make_agent(key=key)
    assert all(r.readable for r in restarted.conversations())
    restarted.close()
    resumed = _cli(config.home, "rotate-key", CONVERSATIONS_KEY=key)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "finishing the unfinished key rotation" in err and out == ""
    assert {json.loads(p.read_text())["key_id"] for p in folder.glob("*.json")} == {key_id(new)}
    assert not journal.exists() and not (folder / PENDING_KEY_FILE).exists()
    assert len(make_agent(key=new).conversations()) == 300


def test_kill_9_during_rotate_key_passphrase_loses_nothing(
    make_agent: MakeAgent, config: Config
) -> None:
    """``rotate-key --passphrase`` killed mid-way: the salt was on disk before the first file
    was rewritten, so the passphrase gives the new key back (it is stored nowhere), the old
    key opens the rest, and the same command again finishes the rotation."""
    from backends.conversations.files import ConversationFiles
    from backends.conversations.keys import KDF_FILE, HistoryCipher, PassphraseFile, key_id

    passphrase = "a long walk to the lighthouse"
    key = generate_key()
    seed = make_agent(key=key)
    for i in range(300):
        seed.files.write(conversation(f"passphrase {i} " + "text " * 200, "reply"), create=True)
    seed.close()
    folder = config.home / "conversations"
    journal = folder / ROTATION_JOURNAL
    env = {"CONVERSATIONS_KEY": key, "CUSTODIA_NEW_CONVERSATIONS_PASSPHRASE": passphrase}
    child = _cli(config.home, "rotate-key", "--passphrase", **env)
    deadline = time.monotonic() + 60
    while _rotated(journal) < 1 and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.0005)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    _, errors = child.communicate()
    assert journal.exists(), f"the kill came after the rotation ended: {errors}"
    new = PassphraseFile(folder / KDF_FILE).unlock(passphrase)  # the passphrase gives it back
    kids = {json.loads(p.read_text())["key_id"] for p in folder.glob("[!.]*.json")}
    assert key_id(new) in kids and key_id(key) in kids  # killed half-way
    assert not any(new.encode() in p.read_bytes() for p in config.home.rglob("*") if p.is_file())
    both = ConversationFiles(folder, HistoryCipher([new, key]))
    for name in both.scan():
        assert both.read(name)[0].history  # every conversation opens with what the user has
    resumed = _cli(config.home, "rotate-key", "--passphrase", **env)
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert "resumed an interrupted rotation" in err and out == ""
    assert {json.loads(p.read_text())["key_id"] for p in folder.glob("[!.]*.json")} == {key_id(new)}
    assert not journal.exists()
    assert len(make_agent(passphrase=passphrase).conversations()) == 300
