"""``custodia ask multiagent`` and ``custodia sessions`` (headless)."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from backends import config
from backends.cli import build_parser, main
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.multiagent.service import SESSIONS_FILE, MultiAgentService
from backends.multiagent.sessions import SessionStore
from backends.services import Services
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore
from backends.stores.vectors import MemoryItem
from backends.stores.vectors.qdrant import QdrantSemanticMemory
from backends.stores.vectors.qdrant_edge import EdgeSemanticMemory
from tests.backends.multiagent.conftest import REPLIES
from tests.backends.multiagent.elsewhere import CHILD_REPLIES, RunningElsewhere, stored_row
from tests.backends.multiagent.test_coordinator import HookedChat


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    for var in ("CUSTODIA_PROFILE", "CUSTODIA_REDIS_URL", "CUSTODIA_QDRANT_URL"):
        monkeypatch.delenv(var, raising=False)
    return home


def test_ask_prints_the_feed_and_the_session_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "multiagent", "Write", "python code to parse CSV"]) == 0
    out = capsys.readouterr().out.splitlines()
    session_id = re.fullmatch(r"session: ([0-9a-f]{32})", out[0]).group(1)  # type: ignore[union-attr]
    # the scripted model writes no code: nothing was run, and the status says so
    assert out[-1] == f"session: {session_id} unverified draft"
    verdict = out.index(
        "verification: unverified draft — nothing in it could be checked (no code): the "
        "model's draft"
    )
    assert (
        out[verdict + 1]
        == "  step 1 (coder): unverified draft — not verifiable: no code in the answer"
    )
    feed = out[1:verdict]
    assert re.match(r"\d\d:\d\d:\d\d #1 +\[planning\] session_started: Write python code", feed[0])
    assert any("[working] coder expert_result:" in line for line in feed)
    assert "[done] session_finished" in feed[-1]
    seqs = [int(re.search(r"#(\d+)", line).group(1)) for line in feed]  # type: ignore[union-attr]
    assert seqs == list(range(1, len(feed) + 1))


def test_sessions_lists_newest_first_and_filters_by_phase(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["ask", "multiagent", "first task"])
    main(["ask", "multiagent", "second task"])
    capsys.readouterr()
    assert main(["sessions"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[-2:] for line in lines] == [["second", "task"], ["first", "task"]]
    assert main(["sessions", "--phase", "working"]) == 0
    assert capsys.readouterr().out.strip() == "no sessions in phase working"
    assert main(["sessions", "--phase", "done", "--json", "--health"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [s["task"] for s in report["sessions"]] == ["second task", "first task"]
    # finished, and what it is worth: nothing in a scripted answer without code was run
    assert [(s["phase"], s["status"]) for s in report["sessions"]] == [
        ("done", "unverified draft")
    ] * 2
    assert report["health"]["sessions SQLite"] == "ok"
    assert report["health"]["semantic memory (qdrant-edge)"] == "ok"


def test_resume_and_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "multiagent"]) == 2
    assert main(["ask", "multiagent", "--resume", "nope"]) == 1
    assert main(["ask", "multiagent", "--resume", "nope", "and a new task"]) == 2
    assert "not both" in capsys.readouterr().err
    main(["ask", "multiagent", "a task"])
    session_id = capsys.readouterr().out.splitlines()[0].split()[1]
    # A finished session resumes to its end at once, without new events.
    assert main(["ask", "multiagent", "--resume", session_id]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        out[0] == f"session: {session_id}" and out[-1] == f"session: {session_id} unverified draft"
    )
    assert out[1].startswith("verification: unverified draft") and len(out) <= 4
    with pytest.raises(SystemExit):
        main(["sessions", "--phase", "bogus"])


# -- one run per session across processes ------------------------------------------------------


def stored(home: Path, session_id: str) -> tuple[float, str, dict[str, Any]]:
    """The session's row as another program would read it: (updated_at, phase, data)."""
    updated_at, phase, data = stored_row(home, session_id)
    return updated_at, phase, json.loads(data)


def session_line(out: str, session_id: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith(session_id)]
    assert len(lines) == 1, out
    return lines[0]


def test_a_session_running_in_another_process_is_refused_then_resumes_after_a_kill(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = {
        "CUSTODIA_HOME": str(home),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
    }
    with RunningElsewhere(env, start="Parse CSV files", block_at=3) as other:
        session_id = other.session_id
        before = stored(home, session_id)
        assert before[1] == "working"  # the planner and the researcher are done, the coder runs

        assert main(["ask", "multiagent", "--resume", session_id]) == 1
        err = capsys.readouterr().err
        assert (
            f"session {session_id} is running in another Custodia process (pid {other.pid}); "
            "wait for it or stop it"
        ) in err
        assert stored(home, session_id) == before  # not touched: no event, no save

        assert main(["sessions"]) == 0
        line = session_line(capsys.readouterr().out, session_id)
        assert f"working (running in another process, pid {other.pid})" in line
        assert main(["sessions", "--json"]) == 0
        (row,) = json.loads(capsys.readouterr().out)["sessions"]
        assert (row["phase"], row["state"], row["pid"]) == (
            "working",
            "running elsewhere",
            other.pid,
        )

        other.kill()  # kill -9 mid-run: the kernel drops its lock

        assert main(["sessions"]) == 0
        assert "working (interrupted)" in session_line(capsys.readouterr().out, session_id)
        assert stored(home, session_id) == before

    assert main(["ask", "multiagent", "--resume", session_id]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"session: {session_id} unverified draft"
    _, phase, data = stored(home, session_id)
    assert phase == "done"
    # The first process' work is kept (not redone, not overwritten) and the feed goes on
    # from where it stopped, numbered once.
    assert data["steps"][0]["result"] == CHILD_REPLIES[1]
    assert data["events"][: len(before[2]["events"])] == before[2]["events"]
    assert [e["seq"] for e in data["events"]] == list(range(1, len(data["events"]) + 1))
    assert main(["sessions"]) == 0
    line = session_line(capsys.readouterr().out, session_id)
    assert " unverified draft " in line and "interrupted" not in line


def test_sessions_shows_interrupted_sessions_like_the_tab(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(home / SESSIONS_FILE))
    crashed = Session.new("left by a killed process")
    crashed.phase = "reviewing"
    store.save(crashed)
    failed = Session.new("failed, nobody runs it")
    failed.phase = "failed"
    store.save(failed)
    store.close()
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "reviewing (interrupted)" in session_line(out, crashed.session_id)
    failed_line = session_line(out, failed.session_id)
    assert " failed " in failed_line and "(" not in failed_line
    assert main(["sessions", "--json"]) == 0
    states = {r["task"]: r["state"] for r in json.loads(capsys.readouterr().out)["sessions"]}
    assert states == {"left by a killed process": "interrupted", "failed, nobody runs it": None}


# -- an unreadable sessions database is an error, never "no sessions" -------------------------


@pytest.mark.parametrize("damage", ["corrupt", "a folder"])
def test_sessions_fails_naming_the_file_when_the_database_cannot_be_read(
    home: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    main(["ask", "multiagent", "a task worth keeping"])
    capsys.readouterr()
    path = home / SESSIONS_FILE
    if damage == "corrupt":
        path.write_bytes(b"this is not a database" * 100)
    else:
        path.unlink()
        path.mkdir()  # something else sits where the file should be
    assert main(["sessions"]) == 1
    captured = capsys.readouterr()
    assert "no sessions" not in captured.out
    assert captured.out == ""
    assert f"cannot read the multi-agent sessions database {path}" in captured.err
    assert main(["sessions", "--json"]) == 1
    assert capsys.readouterr().out == ""
    if damage == "corrupt":
        assert path.read_bytes() == b"this is not a database" * 100  # left as it was


# -- option validation ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "three"])
def test_sessions_rejects_a_limit_that_is_not_positive(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["sessions", "--limit", value])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--limit: must be a positive integer" in err and "no sessions" not in err


def test_sessions_limit(capsys: pytest.CaptureFixture[str]) -> None:
    main(["ask", "multiagent", "first task"])
    main(["ask", "multiagent", "second task"])
    capsys.readouterr()
    assert main(["sessions", "--limit", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].endswith("second task")


# -- re-embedding after a model change -----------------------------------------------------------


def test_reindex_multiagent_re_embeds_the_memory_after_a_model_change(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = QdrantSemanticMemory(HashingEmbedder(64), path=home / "qdrant")
    old.add("agent_results", MemoryItem("parse csv with the csv module", "old", "coder"))
    old.add("code_patterns", MemoryItem("import csv", "old", "coder"))
    old.close()

    assert main(["ask", "multiagent", "Parse CSV files"]) == 1
    captured = capsys.readouterr()
    assert "Re-embed to switch models" in captured.err
    assert "custodia reindex multiagent" in captured.err
    session_id = captured.out.splitlines()[0].split()[1]

    assert main(["reindex", "multiagent"]) == 0
    captured = capsys.readouterr()
    assert "re-embedding 2 item(s) of semantic memory: hashing-64 (64-d) → hashing-384" in (
        captured.err
    )
    assert "2/2 " in captured.err  # progress
    assert captured.out.strip() == (
        "Re-embedded 2 item(s) of semantic memory with hashing-384 (384-d)."
    )
    assert not (home / "qdrant").exists()  # the local-mode folder moved over (issue 19)
    memory = EdgeSemanticMemory(HashingEmbedder(384), path=home / "qdrant-edge")
    try:
        memory.check()  # no mismatch any more
        hits = memory.search("agent_results", "parse csv", session="old")
    finally:
        memory.close()
    assert [h.text for h in hits] == ["parse csv with the csv module"]

    assert main(["ask", "multiagent", "--resume", session_id]) == 0  # the failed run goes on
    assert capsys.readouterr().out.splitlines()[-1] == f"session: {session_id} unverified draft"


def test_reindex_is_shared_with_the_conversations_command() -> None:
    parser = build_parser()
    assert parser.parse_args(["reindex", "multiagent"]).handler.__module__ == (
        "backends.multiagent.cli"
    )
    assert parser.parse_args(["reindex", "conversations"]).handler.__module__ == (
        "backends.conversations.cli"
    )


# -- Ctrl-C ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_in_a_terminal(capsys: pytest.CaptureFixture[str], presses: int) -> None:
    """Once: the run cancels itself, saved ``cancelled`` under its lock. Twice: it stops at
    once, left in its phase — interrupted, resumable."""

    def press_ctrl_c(call: int) -> None:
        if call == 2:  # the researcher
            for _ in range(presses):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.05)  # delivered here, between two presses

    services = Services(config.load(), chat=HookedChat(list(REPLIES), press_ctrl_c))
    try:
        args = build_parser().parse_args(["ask", "multiagent", "Parse CSV files"])
        assert args.handler(args, services) == 130
        captured = capsys.readouterr()
        session_id = captured.out.splitlines()[0].split()[1]
        session = services.get("multiagent", MultiAgentService).session(session_id)
    finally:
        services.close()
    assert session is not None
    err = captured.err
    if presses == 1:
        assert f"session: {session_id} cancelled (resume with --resume)" in err
        assert session.phase == "cancelled"
        assert session.events[-1]["kind"] == "session_finished"
    else:
        assert f"session: {session_id} interrupted (resume with --resume)" in err
        assert session.phase == "working"
        assert session.events[-1]["kind"] != "session_finished"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    assert main(["ask", "multiagent", "--resume", session_id]) == 0


def test_ask_prints_what_was_verified(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The user's own tests (--tests FILE) run against the team's code; the terminal shows
    each test, passed or failed, and the status — exit 1 for failed verification."""
    tests = tmp_path / "test_add.py"
    tests.write_text("def test_adds():\n    assert add(2, 3) == 5\n", encoding="utf-8")
    wrong = "```python\ndef add(a, b):\n    return a - b\n```"
    right = "```python\ndef add(a, b):\n    return a + b\n```"
    for replies, code, status in (
        ([wrong, wrong], 1, "failed verification"),
        ([wrong, right], 0, "verified"),
    ):
        chat = ScriptedChat(replies=["1. coder: write add", *replies, "Review."])
        services = Services(config.load(), chat=chat)
        try:
            argv = ["ask", "multiagent", "--tests", str(tests), "Write add(a, b) in Python"]
            args = build_parser().parse_args(argv)
            assert args.handler(args, services) == code
        finally:
            services.close()
        out = capsys.readouterr().out.splitlines()
        session_id = out[0].split()[1]
        assert out[-1] == f"session: {session_id} {status}"
        verdict = next(i for i, line in enumerate(out) if line.startswith("verification: "))
        assert out[verdict].startswith(f"verification: {status} — ")
        assert out[verdict + 1].startswith(f"  step 1 (coder): {status} — ")
        assert out[verdict + 1].endswith(", 2 attempts")
        assert out[verdict + 2].startswith("    tests: the tests you attached; sandbox: no network")
        mark = "✓" if status == "verified" else "✗"
        assert out[verdict + 3].startswith(f"    {mark} test_adds  ")
        assert any("[working] coder retry:" in line for line in out)
        assert any("[working] verification: Step 1:" in line for line in out)
