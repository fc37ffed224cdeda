"""``custodia ask multiagent`` and ``custodia sessions`` (headless)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backends.cli import main


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
    assert out[-1] == f"session: {session_id} done"
    feed = out[1:-1]
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
    assert report["health"]["sessions SQLite"] == "ok"
    assert report["health"]["semantic memory (qdrant-local)"] == "ok"


def test_resume_and_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "multiagent"]) == 2
    assert main(["ask", "multiagent", "--resume", "nope"]) == 1
    main(["ask", "multiagent", "a task"])
    session_id = capsys.readouterr().out.splitlines()[0].split()[1]
    # A finished session resumes to "done" at once, without new events.
    assert main(["ask", "multiagent", "--resume", session_id]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"session: {session_id}",
        f"session: {session_id} done",
    ]
    with pytest.raises(SystemExit):
        main(["sessions", "--phase", "bogus"])
