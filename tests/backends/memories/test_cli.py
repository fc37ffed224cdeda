"""``custodia ask memories`` and ``custodia memories ...``, headless."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith("CUSTODIA_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_prints_the_answer_and_the_memories_used(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "ask", "memories", "remember that my dog is called Rex")
    assert code == 0 and "My dog is called Rex" in out
    code, out, _ = run(capsys, "ask", "memories", "What is my dog called?")
    assert code == 0
    # the answer composed from the memory, cited; the scripted draft names a number no
    # memory holds ("context passages: 1"): withheld, with why
    assert "✓ Your dog is called Rex [1]." in out
    assert "✗ Scripted answer to: What is my dog called? (context passages: 1)" in out
    assert "Memories used (similarity ≥ 0.28 recalled; others cited):" in out
    assert "0.56  My dog is called Rex" in out


def test_ask_with_a_threshold_and_proposals(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "memories", "add", "My dog is called Rex")
    _, out, _ = run(capsys, "ask", "memories", "What is my blood type?", "--threshold", "0.9")
    assert "Memories used: none" in out and "You haven't told me that." in out
    _, out, _ = run(capsys, "ask", "memories", "I live in Valencia. How are you?")
    assert 'custodia memories add "I live in Valencia"' in out
    _, out, _ = run(capsys, "ask", "memories", "I live in Valencia.", "--accept")
    assert "I will remember that" in out
    _, out, _ = run(capsys, "memories", "list")
    assert out.splitlines() == ["I live in Valencia", "My dog is called Rex"]


def test_add_list_search_delete(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "memories", "add", "I am allergic to penicillin")[0] == 0
    code, out, _ = run(capsys, "memories", "add", "I am allergic to penicillin")
    assert code == 0 and "already remember" in out
    code, out, _ = run(capsys, "memories", "search", "allergic penicillin", "--json")
    hits = json.loads(out)
    assert hits[0]["text"] == "I am allergic to penicillin" and hits[0]["similarity"] > 0.3
    code, out, _ = run(capsys, "memories", "list", "--json")
    (memory,) = json.loads(out)
    assert memory["source"] == "cli" and memory["dimension"] == 384 and memory["searchable"]
    assert run(capsys, "memories", "delete", "I am allergic to penicillin")[0] == 0
    code, _, err = run(capsys, "memories", "delete", "I am allergic to penicillin")
    assert code == 1 and "no such memory" in err
    assert run(capsys, "memories", "list")[1] == ""


def test_near_duplicates_need_a_choice(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "memories", "add", "I live in Valencia")
    code, out, err = run(capsys, "memories", "add", "I live in Valencia, Spain")
    assert code == 1 and "very similar" in out and "--replace" in err
    code, out, _ = run(capsys, "memories", "add", "--replace", "I live in Valencia, Spain")
    assert code == 0 and "Updated" in out
    code, _, _ = run(capsys, "memories", "add", "--force", "I live in Valencia")
    assert code == 0
    _, out, _ = run(capsys, "memories", "list")
    assert sorted(out.splitlines()) == ["I live in Valencia", "I live in Valencia, Spain"]


def test_reembed_after_an_embedder_change(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "memories", "add", "My dog is called Rex")
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing:64")
    code, out, err = run(capsys, "memories", "search", "dog")
    assert code == 0 and out == "" and "Recall is limited: 1 of 1" in err
    code, out, _ = run(capsys, "memories", "reembed")
    assert code == 0 and "Re-embedded 1 memories with hashing-64" in out
    code, out, err = run(capsys, "memories", "search", "dog called")
    assert "My dog is called Rex" in out and "limited" not in err


def test_ask_is_headless(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(
        CUSTODIA_HOME=str(tmp_path), CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="scripted"
    )
    code = (
        "import sys; from desktop.cli import main; "
        "rc = main(['ask', 'memories', 'remember that I play the cello']); "
        "assert 'PySide6' not in sys.modules, 'headless command imported Qt'; sys.exit(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "I play the cello" in result.stdout


def test_search_shows_only_similar_memories_and_list_counts(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for fact in ["My dog is called Rex", "I am allergic to penicillin", "I live in Valencia"]:
        run(capsys, "memories", "add", fact)
    code, out, _ = run(capsys, "memories", "search", "my dog Rex")
    assert code == 0 and out.splitlines()[0].endswith("My dog is called Rex")
    assert "penicillin" not in out  # unrelated memories stay out (no negative similarities)
    code, out, err = run(capsys, "memories", "list", "--limit", "2")
    assert code == 0 and len(out.splitlines()) == 2 and "(2 of 3 memories)" in err
    _, _, err = run(capsys, "memories", "list")
    assert "(3 memories)" in err


@pytest.mark.parametrize(
    "args",
    [
        ("memories", "list", "--limit", "0"),
        ("memories", "list", "--limit", "9223372036854775808"),
        ("memories", "search", "dog", "-k", "-1"),
        ("ask", "memories", "hi", "-k", "0"),
        ("ask", "memories", "hi", "--threshold", "nan"),
        ("memories", "search", "dog", "--threshold", "5"),
    ],
)
def test_nonsense_counts_and_thresholds_are_usage_errors(
    home: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(list(args))
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert any(m in err for m in ("must be a positive integer", "at most", "between -1 and 1")), err


def test_remember_that_alone_stores_nothing_and_delete_accepts_the_typed_text(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for nothing in ("Remember that", "Remember that:", "remember that,", "Remember that 😀"):
        code, _, _ = run(capsys, "ask", "memories", nothing)
        assert code == 0, nothing
    assert run(capsys, "memories", "list")[1] == ""
    run(capsys, "memories", "add", "my dog is called Rex.")
    code, out, _ = run(capsys, "memories", "delete", "my dog is called Rex.")
    assert code == 0 and out.strip() == "Forgot “My dog is called Rex”."
    assert run(capsys, "memories", "list")[1] == ""


def test_ask_prints_the_draft_once_after_it_is_judged(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tester, issue 24: the draft was printed on stderr before it was checked, then again
    under "Withheld"; "--no-draft" on a fresh data dir printed "? of its drafts passed"."""
    run(capsys, "memories", "add", "My dentist appointment is on March 14th")
    code, out, err = run(capsys, "ask", "memories", "When is my dentist appointment?", "--rephrase")
    assert code == 0
    draft = "Scripted answer to: When is my dentist appointment?"
    assert (out + err).count(draft) == 1  # listed once, under what was withheld
    assert out.index("✓ Your dentist appointment is on March 14th [1].") < out.index(draft)
    assert "checked before it is shown" not in out + err  # stderr is no terminal here
    _, out, err = run(capsys, "ask", "memories", "When is my dentist appointment?", "--no-draft")
    assert "?" not in out.replace("appointment?", "") and "drafts passed" not in out
