"""``custodia ask tutor``, ``custodia kb import`` and ``custodia kb stats``, headless."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends import cli
from backends.audit.service import AuditService
from backends.config import Config
from backends.models.chat import ScriptedChat
from backends.models.registry import CHAT_FACTORIES
from tests.backends.tutor.conftest import write_note
from tests.harness.servers import free_port

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def home(tmp_path: Path, small_kb: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith("CUSTODIA_"):
            monkeypatch.delenv(key)
    home = tmp_path / "home"
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "retrieval-only")
    # a few shipped notes instead of the whole corpus, to stay quick
    monkeypatch.setattr("backends.tutor.service.shipped_kb_dir", lambda: small_kb)
    return home


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(args))
    except SystemExit as exit_:  # argparse refusing the arguments
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_prints_the_cited_passages_and_is_audited(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "ask", "tutor", "Which test monitors warfarin?", "--user", "ana")
    assert code == 0
    assert out.startswith("From your notes — quoted (no chat model is loaded)\n")
    assert "warfarin [1]" in out.lower()
    assert "Sources:" in out and " *[1] " in out and "found by: " in out
    assert "kb/notes/" in out
    assert "Audit record #1" in err and "not for clinical decisions" in err
    code, out, _ = run(
        capsys,
        "ask",
        "tutor",
        "What is the first treatment of anaphylaxis?",
        "--user",
        "ana",
        "--json",
    )
    data = json.loads(out)
    assert data["audit_seq"] == 2 and data["retrieval_only"] and data["passages"]
    assert data["mode"] == "extractive" and data["quotes"] and data["covered"] is True
    assert data["answer"].count("[") == len(data["quotes"]) and data["cited"]
    assert data["passages"][0]["found_by"][0]["method"] in {"vector", "keyword", "graph"}
    audit = AuditService.open(Config(home=home))
    try:
        assert audit.verify().ok and len(list(audit.entries())) == 2
    finally:
        audit.close()
    assert run(capsys, "ask", "tutor", "Anything?", "--user", "  ")[0] == 2
    assert run(capsys, "ask", "tutor", "   ", "--user", "ana")[0] == 2  # like a blank user


def test_import_and_stats(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ward"
    write_note(folder, "rota.md", "Ward rota", "Zebrafish rota: warfarin clinic on Mondays.")
    code, out, _ = run(capsys, "kb", "import", str(folder), "--user", "ana")
    assert code == 0 and out.startswith("Imported into ana's notes: 1 added")
    code, out, _ = run(capsys, "kb", "import", str(folder), "--user", "ana")
    assert "0 added, 0 updated, 1 unchanged" in out
    code, out, _ = run(capsys, "kb", "stats")
    assert code == 0 and "user:ana: 1 documents, 1 chunks" in out and "graph (sqlite):" in out
    code, out, _ = run(capsys, "kb", "stats", "--json")
    stats = json.loads(out)
    assert stats["users"] == ["ana"] and stats["vectors"] == stats["chunks"]
    assert stats["graph"]["ok"] and stats["graph"]["relations"] > 0
    code, out, _ = run(capsys, "ask", "tutor", "zebrafish rota", "--user", "bob", "--json")
    assert all(p["scope"] == "shared" for p in json.loads(out)["passages"])
    code, _, err = run(capsys, "kb", "import", str(tmp_path / "missing"))
    assert code == 1 and "no such file or folder" in err


def audit_records(home: Path) -> list:
    audit = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        return list(audit.entries())
    finally:
        audit.close()


@pytest.mark.parametrize("k", ["-3", "-1", "0", "21", "abc", "2.5"])
def test_k_must_be_a_positive_whole_number(
    home: Path, capsys: pytest.CaptureFixture[str], k: str
) -> None:
    code, out, err = run(capsys, "ask", "tutor", "warfarin?", "--user", "ana", "-k", k)
    assert code == 2 and "argument -k" in err and out == ""
    assert not (home / "audit.sqlite3").exists()  # refused before anything ran


def test_k_is_the_number_of_passages(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "ask", "tutor", "warfarin INR?", "--user", "ana", "-k", "2", "--json"
    )
    assert code == 0 and len(json.loads(out)["passages"]) == 2


@pytest.mark.parametrize("user", ["", "   "])
def test_import_with_a_blank_user_is_refused_not_shared(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], user: str
) -> None:
    note = write_note(tmp_path / "n", "rota.md", "Ward rota", "Zebrafish rota on Mondays.")
    code, out, err = run(capsys, "kb", "import", str(note), "--user", user)
    assert code == 2 and "argument --user" in err and "cannot name a user" in err
    code, out, _ = run(capsys, "kb", "stats", "--json")
    stats = json.loads(out)
    assert stats["documents"] == stats["scopes"]["shared"]["documents"]  # only the shipped
    code, out, _ = run(capsys, "ask", "tutor", "zebrafish rota", "--user", "bob", "--json")
    assert "Ward rota" not in {p["title"] for p in json.loads(out)["passages"]}
    # left out, it is the shared corpus, as documented
    code, out, _ = run(capsys, "kb", "import", str(note))
    assert code == 0 and out.startswith("Imported into the shared corpus")


def test_import_of_unreadable_and_empty_files(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00")
    code, out, err = run(capsys, "kb", "import", str(bad), "--user", "ana")
    assert code == 1 and out == ""
    assert "cannot read: " in err and "not UTF-8" in err and "nothing was imported" in err
    empty = tmp_path / "empty.md"
    empty.write_text("", encoding="utf-8")
    code, out, err = run(capsys, "kb", "import", str(empty), "--user", "ana")
    assert code == 0 and "0 added" in out and "1 skipped (empty)" in out
    assert "skipped: " in err and "empty" in err
    folder = tmp_path / "mixed"
    write_note(folder, "good.md", "Good", "Zebrafish rota on Mondays.")
    (folder / "bad.md").write_bytes(b"\xff\xfe\x00")
    code, out, err = run(capsys, "kb", "import", str(folder), "--user", "ana")
    assert code == 0 and "1 added" in out and "1 unreadable" in out and "not UTF-8" in err
    (tmp_path / "none").mkdir()
    code, _, err = run(capsys, "kb", "import", str(tmp_path / "none"), "--user", "ana")
    assert code == 1 and "no Markdown or text files" in err
    code, out, _ = run(capsys, "kb", "stats", "--json")
    assert json.loads(out)["scopes"]["user:ana"] == {"documents": 1, "chunks": 1}


class InterruptedChat(ScriptedChat):
    """Streams two words, then Ctrl+C (the KeyboardInterrupt SIGINT raises mid-stream)."""

    def stream(self, prompt, should_stop=lambda: False):  # type: ignore[no-untyped-def]
        yield "Warfarin is "
        yield "monitored "
        raise KeyboardInterrupt


def test_ctrl_c_mid_answer_is_audited_as_stopped_then_exits_130(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setitem(CHAT_FACTORIES, "scripted", lambda config, arg: InterruptedChat())
    code, out, err = run(capsys, "ask", "tutor", "Which test monitors warfarin?", "--user", "ana")
    assert code == 130
    # the stopped draft is shown as the model's, never as fact; the notes are quoted instead
    assert out.startswith("From your notes — quoted (the model's answer was stopped)")
    assert "not shown as fact (the model's answer was stopped" in out
    assert "Warfarin is monitored" in out.split("not shown as fact")[1]
    assert "recorded in the audit log as #1 (stopped)" in err and "custodia: interrupted" in err
    (record,) = audit_records(home)
    assert record.event_type == "tutor.turn" and record.data["stopped"] is True
    assert record.data["chunks"]


def test_sigint_to_the_process_mid_answer_is_audited(tmp_path: Path, small_kb: Path) -> None:
    """A real ``custodia ask tutor`` process, a slow model streaming, a real SIGINT."""
    home = tmp_path / "home"
    script = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "import backends.tutor.service as tutor\n"
        "tutor.shipped_kb_dir = lambda: Path(sys.argv[1])\n"
        "from backends.models.chat import ScriptedChat\n"
        "from backends.models.registry import register_chat_model\n"
        "class Slow(ScriptedChat):\n"
        "    def stream(self, prompt, should_stop=lambda: False):\n"
        "        for i in range(1200):\n"
        "            yield f'word{i} '\n"
        "            if i == 3:\n"
        "                print('STREAMING', file=sys.stderr, flush=True)\n"
        "            time.sleep(0.05)\n"
        "register_chat_model('scripted', lambda config, arg: Slow())\n"
        "from desktop.cli import main\n"
        "sys.exit(main(sys.argv[2:]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(CUSTODIA_HOME=str(home), CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="scripted")
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(small_kb), "ask", "tutor", "warfarin?", "--user", "ana"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert proc.stderr is not None
    streamed = b""  # the draft is not printed as an answer: the model says when it streams
    deadline = time.monotonic() + 60
    while b"STREAMING" not in streamed and time.monotonic() < deadline:
        streamed += os.read(proc.stderr.fileno(), 64)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    stderr = err.decode()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "(stopped)" in stderr and "custodia: interrupted" in stderr
    (record,) = audit_records(home)
    assert record.data["stopped"] is True
    shown = out.decode()
    assert "the model's answer was stopped" in shown and "✗ word0 word1 word2 word3" in shown
    assert "answer_sha256" not in record.data  # what was shown is sealed, not hashed in clear


def test_a_data_dir_that_cannot_be_created_is_a_clean_error(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("CUSTODIA_HOME", str(blocker / "custodia"))
    code, out, err = run(capsys, "ask", "tutor", "warfarin?", "--user", "ana")
    assert code == 1 and out == ""
    assert err.startswith("custodia: ") and "cannot create the data folder" in err
    assert "Traceback" not in err


def test_chroma_server_down_degrades_and_stats_say_so(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home.mkdir()
    (home / "custodia.toml").write_text("network_timeout = 0.5\n", encoding="utf-8")
    monkeypatch.setenv("CUSTODIA_CHROMA_URL", f"http://127.0.0.1:{free_port()}")
    code, out, err = run(capsys, "ask", "tutor", "Which test monitors warfarin?", "--user", "ana")
    assert code == 0 and "Sources:" in out
    assert "note: degraded retrieval — vector: vector search is unavailable" in err
    assert err.count("note: degraded") == 1 and "Audit record #1" in err
    assert audit_records(home)[0].data["degraded"] == ["vector"]
    code, out, _ = run(capsys, "kb", "stats")
    assert code == 0 and "vectors unavailable — Chroma server http://127.0.0.1:" in out
    assert "graph (sqlite):" in out and "relations" in out
    code, out, _ = run(capsys, "kb", "stats", "--json")
    stats = json.loads(out)
    assert (
        code == 0
        and stats["vector"]["ok"] is False
        and "not reachable" in stats["vector"]["message"]
    )
    assert stats["graph"]["ok"] is True and stats["chunks"] > 0


def test_two_processes_on_a_fresh_data_dir_both_succeed(tmp_path: Path) -> None:
    """`ask tutor` and `kb stats` started together on a fresh data dir (the whole shipped
    corpus): both seed it, one after the other, and neither fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="retrieval-only")
    for attempt in range(3):
        env["CUSTODIA_HOME"] = str(tmp_path / f"home{attempt}")
        commands = [
            ["ask", "tutor", "Which test monitors warfarin?", "--user", "ana"],
            ["kb", "stats", "--json"],
        ]
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "desktop.cli", *args],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=ROOT,
            )
            for args in commands
        ]
        results = [(p, *p.communicate(timeout=120)) for p in procs]
        for proc, _, err in results:
            assert proc.returncode == 0, err
        stats = json.loads(results[1][1])
        assert stats["documents"] >= 40 and stats["vectors"] == stats["chunks"]


def test_forget_then_forget_user_removes_a_users_notes(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    note = write_note(tmp_path / "ana", "rota.md", "Ana rota", "Zebrafish rota: warfarin clinic.")
    assert run(capsys, "kb", "import", str(note), "--user", "ana")[0] == 0
    assert run(capsys, "ask", "tutor", "zebrafish rota", "--user", " ana ")[0] == 0
    code, out, _ = run(capsys, "forget", " ana ")  # stripped, as `ask` and `kb import` do
    assert code == 0 and out.startswith("forgot p-")
    assert "ana's own imported notes remain in the tutor (1 documents" in out
    assert "custodia kb forget-user ana" in out
    code, out, err = run(capsys, "kb", "forget-user", "ana")
    assert code == 0 and out.startswith("Deleted ana's own notes: 1 documents, 1 passages")
    assert "custodia forget NAME" in err and "Chroma may keep traces" in err
    code, out, _ = run(capsys, "kb", "stats", "--json")
    stats = json.loads(out)
    assert stats["users"] == [] and "user:ana" not in stats["scopes"]
    assert stats["vectors"] == stats["chunks"]
    code, out, _ = run(capsys, "forget", "ana")
    assert code == 1 and "no key" in out and "remain" not in out  # nothing left to mention
    assert run(capsys, "kb", "forget-user", "  ")[0] == 2
