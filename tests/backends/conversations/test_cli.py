"""Headless: ``custodia ask conversations``, ``custodia conversations ...``, ``reindex``,
``rotate-key``."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import cli
from backends.conversations.cli import NEW_KEY_ENV
from backends.conversations.files import ConversationFiles
from backends.conversations.keys import generate_key, key_id

from .conftest import FIXTURES, conversation, tree_bytes

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("CUSTODIA_") or name == "CONVERSATIONS_KEY":
            monkeypatch.delenv(name)
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_ask_list_show_and_continue(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "ask", "conversations", "Where do flamingos sleep?")
    assert code == 0
    # the model's words, labelled as its own (issue 24): the same kinds as the window
    assert out.splitlines() == [
        "Scripted answer to: Where do flamingos sleep? (context passages: 0)",
        "(The model's own words — not from your conversations)",
    ]
    cid = err.split("conversation ")[1].split()[0]
    code, out, err = run(capsys, "ask", "conversations", "And eat?", "--conversation", cid)
    assert code == 0 and cid in err
    code, out, _ = run(capsys, "conversations", "list", "--json")
    [row] = json.loads(out)
    assert (row["id"], row["messages"], row["provider"], row["encrypted"]) == (
        cid,
        4,
        "scripted",
        False,
    )
    code, out, _ = run(capsys, "conversations", "show", cid)
    assert "## User" in out and "Where do flamingos sleep?" in out
    code, out, _ = run(capsys, "conversations", "list")
    assert cid in out and "4 msg" in out and "clear" in out


def test_ask_with_another_model(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ask", "conversations", "Flamingos are pink because of carotenoids")
    code, out, err = run(
        capsys, "ask", "conversations", "why are flamingos pink", "--model", "retrieval-only"
    )
    assert code == 0 and out.startswith("[Retrieval-only mode") and "carotenoids" in out
    assert "retrieval-only mode" in err
    code, _, err = run(capsys, "ask", "conversations", "hi", "--model", "nonsense")
    assert code == 1 and "unknown model" in err


def test_import_search_export(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "conversations", "import", str(FIXTURES / "chatgpt_conversations.json")
    )
    assert code == 0 and "imported 2 conversation(s)" in err and "Trip to Lisbon" in out
    code, out, err = run(
        capsys, "conversations", "import", str(FIXTURES / "chatgpt_conversations.json")
    )
    assert code == 0 and "imported 0 conversation(s); 2 already here, skipped" in err
    assert "skipped Trip to Lisbon: already here (the same messages)" in err and out == ""
    code, out, _ = run(capsys, "conversations", "search", "tram Belém", "--json")
    hits = json.loads(out)
    assert hits[0]["name"] == "Trip to Lisbon (imported)" and "Belém" in hits[0]["text"]
    target = tmp_path / "all.md"
    code, _, err = run(
        capsys, "conversations", "export", "--format", "markdown", "--output", str(target)
    )
    assert code == 0 and "plaintext" in err
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert "# Sourdough starter help" in target.read_text()
    code, out, _ = run(capsys, "conversations", "export")
    assert len(json.loads(out)["conversations"]) == 2


def test_rename_and_delete(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "ask", "conversations", "short lived")
    cid = err.split("conversation ")[1].split()[0]
    assert run(capsys, "conversations", "rename", cid, "A better name")[0] == 0
    assert "A better name" in run(capsys, "conversations", "list")[1]
    assert run(capsys, "conversations", "delete", cid)[0] == 2  # needs --yes
    assert run(capsys, "conversations", "delete", cid, "--yes")[0] == 0
    assert json.loads(run(capsys, "conversations", "list", "--json")[1]) == []
    code, _, err = run(capsys, "conversations", "show", cid)
    assert code == 1 and "no such conversation" in err


def test_reindex_rebuilds_the_search_index(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ask", "conversations", "index me")
    code, out, _ = run(capsys, "reindex", "conversations")
    assert code == 0 and "2 message(s) indexed" in out


def test_rotate_key(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(capsys, "ask", "conversations", "encrypt me later")
    code, out, err = run(capsys, "rotate-key", "--generate")
    new = out.strip()
    assert code == 0 and "re-encrypted 1 conversation(s)" in err
    assert "CONVERSATIONS_KEY" in err  # no OS keyring here: the user is told where to put it
    files = list((home / "conversations").glob("*.json"))
    assert json.loads(files[0].read_text())["key_id"] == key_id(new)
    monkeypatch.setenv("CONVERSATIONS_KEY", new)
    newer = generate_key()
    monkeypatch.setenv(NEW_KEY_ENV, newer)
    code, out, err = run(capsys, "rotate-key")
    assert code == 0 and out == "" and "re-encrypted 1" in err
    assert json.loads(files[0].read_text())["key_id"] == key_id(newer)
    monkeypatch.setenv(NEW_KEY_ENV, "not a key")
    code, _, err = run(capsys, "rotate-key")
    assert code == 1 and "not a Fernet key" in err


# -- key safety -------------------------------------------------------------------------------


def _encrypted_home(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, dict[Path, bytes]]:
    """One conversation encrypted by `rotate-key --generate`; CONVERSATIONS_KEY left unset."""
    run(capsys, "ask", "conversations", "kept under the generated key")
    code, out, _ = run(capsys, "rotate-key", "--generate")
    assert code == 0
    monkeypatch.delenv("CONVERSATIONS_KEY", raising=False)
    return out.strip(), tree_bytes(home / "conversations")


def test_rotate_key_generate_without_the_current_key_changes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key, before = _encrypted_home(home, capsys, monkeypatch)
    code, out, err = run(capsys, "rotate-key", "--generate")
    assert code == 1 and out == ""  # no new key printed: none is in use
    assert "no current key" in err and "Set their key in the environment first" in err
    assert "(details: CONVERSATIONS_KEY)" in err  # the variable's name: the details (issue 30)
    assert key_id(key) in err and "Nothing was changed" in err
    assert tree_bytes(home / "conversations") == before
    monkeypatch.setenv("CONVERSATIONS_KEY", key)  # with it, the same command works
    code, out, _ = run(capsys, "rotate-key", "--generate")
    assert code == 0 and len(out.strip()) == 44


def test_ask_refuses_to_write_without_the_key_or_with_a_wrong_one(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key, before = _encrypted_home(home, capsys, monkeypatch)
    code, out, err = run(capsys, "ask", "conversations", "would be written in clear")
    assert code == 1 and out == ""
    assert "conversation history is encrypted" in err and "set its key in the environment" in err
    assert "(details: CONVERSATIONS_KEY)" in err  # the variable's name (issue 30)
    monkeypatch.setenv("CONVERSATIONS_KEY", generate_key())  # a typo'd key
    code, out, err = run(capsys, "ask", "conversations", "would be lost under a typo")
    assert code == 1 and out == "" and "opens none of the 1 encrypted" in err
    assert tree_bytes(home / "conversations") == before
    monkeypatch.setenv("CONVERSATIONS_KEY", key)
    code, out, _ = run(capsys, "ask", "conversations", "with the right key")
    assert code == 0 and "with the right key" in out


def test_search_says_what_could_not_be_read(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _encrypted_home(home, capsys, monkeypatch)
    monkeypatch.setenv("CONVERSATIONS_KEY", generate_key())
    code, out, err = run(capsys, "conversations", "search", "generated key")
    assert code == 0 and out == "" and "Nothing found." in err
    assert "1 conversation(s) could not be read and were not searched (1 wrong key)" in err
    assert "a mistyped key?" in err
    monkeypatch.delenv("CONVERSATIONS_KEY")
    _, _, err = run(capsys, "conversations", "search", "generated key", "--json")
    assert "(1 key required): set CONVERSATIONS_KEY" in err


def test_malformed_keys_are_named_and_the_advice_works(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVERSATIONS_KEY", "not-a-key")
    code, _, err = run(capsys, "rotate-key", "--generate")
    # the variable's and the cipher's names only as the details (issue 30)
    assert code == 1 and err.startswith(
        "custodia: the conversations key set in the environment is not a valid key"
    )
    assert err.rstrip().endswith("(details: CONVERSATIONS_KEY: not a Fernet key)"), err
    assert "--generate" not in err  # it would fail the same way
    monkeypatch.delenv("CONVERSATIONS_KEY")
    monkeypatch.setenv(NEW_KEY_ENV, "not-a-key-either")
    code, out, err = run(capsys, "rotate-key")
    assert code == 1 and out == ""
    assert err.startswith("custodia: the new key set in the environment is not a valid key")
    assert f"(details: {NEW_KEY_ENV}: not a Fernet key)" in err and "--generate" in err
    monkeypatch.delenv(NEW_KEY_ENV)
    assert run(capsys, "rotate-key", "--generate")[0] == 0  # the advice given works


# -- output files and pipes -------------------------------------------------------------------


def test_export_output_errors_are_one_line_and_files_become_private(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "ask", "conversations", "export me")
    existing = tmp_path / "old.json"
    existing.write_text("older export")
    existing.chmod(0o644)
    code, _, err = run(capsys, "conversations", "export", "-o", str(existing))
    assert code == 0 and "mode 0600" in err
    assert stat.S_IMODE(existing.stat().st_mode) == 0o600
    assert json.loads(existing.read_text())["conversations"][0]["history"][0]["content"] == (
        "export me"
    )
    for target, reason in (
        (tmp_path / "nodir" / "x.json", "does not exist"),
        (tmp_path, "is a folder"),
    ):
        code, out, err = run(capsys, "conversations", "export", "-o", str(target))
        assert code == 1 and out == "" and reason in err
        assert err.count("\n") == 1 and "Traceback" not in err


def test_names_are_one_line_and_limited(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, err = run(capsys, "ask", "conversations", "name me")
    cid = err.split("conversation ")[1].split()[0]
    assert run(capsys, "conversations", "rename", cid, "Trip\nto\n\nLisbon")[0] == 0
    code, out, _ = run(capsys, "conversations", "list")
    assert out.count("\n") == 1 and out.rstrip().endswith("Trip to Lisbon")
    code, _, err = run(capsys, "conversations", "rename", cid, "x" * 5000)
    assert code == 1 and "at most 200 characters (this one has 5000)" in err
    assert json.loads(run(capsys, "conversations", "list", "--json")[1])[0]["name"] == (
        "Trip to Lisbon"
    )


def test_a_damaged_index_is_rebuilt_with_a_warning(
    home: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    _, _, err = run(capsys, "ask", "conversations", "survives a damaged index")
    cid = err.split("conversation ")[1].split()[0]
    for suffix in ("-wal", "-shm"):
        Path(f"{home / 'conversations.sqlite3'}{suffix}").unlink(missing_ok=True)
    (home / "conversations.sqlite3").write_bytes(b"garbage" * 500)
    code, out, _ = run(capsys, "conversations", "list")
    assert code == 0 and cid in out
    assert any("moved to conversations.sqlite3.damaged-" in r.getMessage() for r in caplog.records)


# -- real processes: pipes, Ctrl+C, a model dying, two at once ---------------------------------

CLI = "import sys; from backends import cli; sys.exit(cli.main(sys.argv[1:]))"


def _cli(home: Path, *args: str, **env: str) -> subprocess.Popen[bytes]:
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
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _read_until(proc: subprocess.Popen[bytes], marker: bytes, timeout: float = 30) -> bytes:
    """What the child printed on stdout up to ``marker`` (fails after ``timeout`` s)."""
    assert proc.stdout is not None
    got = b""
    deadline = time.monotonic() + timeout
    while marker not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"the child never printed {marker!r}; got {got!r}"
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            assert chunk, f"the child closed stdout early; got {got!r}"
            got += chunk
    return got


def _conversation_id(err: str) -> str:
    found = re.search(r"conversation ([0-9a-f]{32})", err)
    assert found, err
    return found.group(1)


class FakeOllama:
    """A local Ollama stand-in on a real socket: lists one model, streams four words of an
    answer, then hangs (``mode = "hang"``) or resets the connection (``"reset"``)."""

    WORDS = ("Once ", "upon ", "a ", "time ")

    def __init__(self) -> None:
        self.mode = "hang"
        self.stop = threading.Event()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, name="fake-ollama")
        self.thread.start()

    def _serve(self) -> None:
        self.server.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except TimeoutError:
                continue
            with conn:
                self._answer(conn)

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = conn.recv(65536)
            if not chunk:
                return
            request += chunk
        head, _, body = request.partition(b"\r\n\r\n")
        length = re.search(rb"(?i)content-length: *(\d+)", head)
        while length and len(body) < int(length.group(1)):
            body += conn.recv(65536)
        if head.startswith(b"GET /api/tags"):
            payload = json.dumps({"models": [{"name": "tiny:latest"}]}).encode()
            conn.sendall(
                b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(payload)}\r\n\r\n".encode()
                + payload
            )
            return
        conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/x-ndjson\r\n\r\n")
        for word in self.WORDS:
            conn.sendall(json.dumps({"message": {"content": word}, "done": False}).encode() + b"\n")
            time.sleep(0.02)
        if self.mode == "reset":
            time.sleep(0.5)  # the words are read and printed first
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        self.stop.wait(30)  # hang, as a model thinking for a long time

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.server.close()


@pytest.fixture
def ollama() -> Iterator[FakeOllama]:
    server = FakeOllama()
    yield server
    server.close()


def test_ctrl_c_while_streaming_keeps_the_partial_answer(home: Path, ollama: FakeOllama) -> None:
    proc = _cli(
        home,
        "ask",
        "conversations",
        "tell me a long story",
        CUSTODIA_CHAT_MODEL="ollama:tiny",
        CUSTODIA_OLLAMA_URL=ollama.url,
    )
    printed = _read_until(proc, b"time ")
    proc.send_signal(signal.SIGINT)
    out, err_bytes = proc.communicate(timeout=30)
    err = err_bytes.decode()
    assert proc.returncode == 130, err
    assert (printed + out).decode().startswith("Once upon a time")
    cid = _conversation_id(err)
    assert f"--conversation {cid}" in err and "Traceback" not in err
    history = json.loads((home / "conversations" / f"{cid}.json").read_text())["history"]
    assert [(m["role"], m["content"], m.get("stopped", False)) for m in history] == [
        ("user", "tell me a long story", False),
        ("assistant", "Once upon a time ", True),
    ]


def test_a_model_dying_mid_answer_names_the_conversation(home: Path, ollama: FakeOllama) -> None:
    ollama.mode = "reset"
    proc = _cli(
        home,
        "ask",
        "conversations",
        "tell me a story",
        CUSTODIA_CHAT_MODEL="ollama:tiny",
        CUSTODIA_OLLAMA_URL=ollama.url,
    )
    out, err_bytes = proc.communicate(timeout=60)
    err = err_bytes.decode()
    assert proc.returncode == 1, err
    assert out.decode().startswith("Once upon a time") and "Traceback" not in err
    assert "stream broken" in err and "partial answer (marked stopped) are saved" in err
    cid = _conversation_id(err)
    assert f"--conversation {cid}" in err
    history = json.loads((home / "conversations" / f"{cid}.json").read_text())["history"]
    assert [m["content"] for m in history] == ["tell me a story", "Once upon a time "]
    assert history[1]["stopped"] is True


def test_a_closed_stdout_ends_quietly(home: Path) -> None:
    folder = home / "conversations"
    ConversationFiles(folder).write(conversation("x" * 300_000, "y" * 300_000, cid="big"))
    for args in (("conversations", "show", "big"), ("ask", "conversations", "z" * 100_000)):
        proc = _cli(home, *args)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # `| head` that has read enough
        err = proc.stderr.read().decode()
        proc.wait(timeout=60)
        assert proc.returncode == 141 and "Traceback" not in err and "Broken pipe" not in err
    assert "Traceback" not in err and _conversation_id(err)  # the turn was still saved
    assert len(list(folder.glob("*.json"))) == 2


def test_two_asks_at_once_on_a_fresh_data_dir_both_land(home: Path) -> None:
    procs = [_cli(home, "ask", "conversations", f"message number {i}") for i in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err.decode()
    files = sorted((home / "conversations").glob("*.json"))
    assert len(files) == 2
    firsts = {json.loads(f.read_text())["history"][0]["content"] for f in files}
    assert firsts == {"message number 0", "message number 1"}
    listing = _cli(home, "conversations", "list", "--json")
    out, _ = listing.communicate(timeout=60)
    assert sorted(r["messages"] for r in json.loads(out)) == [2, 2]


# -- one bad file fails alone, everywhere (issue 14: 1, 6, 8) ---------------------------------


def _no_dac() -> list[str]:
    """A command prefix under which ``chmod 000`` stops the child even when we are root (the
    sandbox and CI run as root): ``setpriv`` drops the capabilities that override it."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: chmod 000 stops nobody")
    return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def _run_child(home: Path, *args: str, **env: str) -> tuple[int, str, str]:
    """One CLI command in its own process (without root's override of file modes)."""
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
    done = subprocess.run(
        [*_no_dac(), sys.executable, "-c", CLI, *args],
        cwd=ROOT,
        env=base | env,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_an_unreadable_file_is_skipped_with_its_name_everywhere(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key = generate_key()
    monkeypatch.setenv("CONVERSATIONS_KEY", key)
    for text in ("alpha one", "alpha two", "alpha locked"):
        assert run(capsys, "ask", "conversations", text)[0] == 0
    folder = home / "conversations"
    locked = next(  # names are dates: find it by its content
        p
        for p in folder.glob("*.json")
        if "alpha locked" in export_text(home, capsys, p.name[: -len(".json")])
    )
    locked_bytes = locked.read_bytes()
    locked.chmod(0o000)
    try:
        env = {"CONVERSATIONS_KEY": key}
        code, out, err = _run_child(home, "conversations", "search", "alpha", **env)
        assert code == 0 and "alpha one" in out and "alpha two" in out
        assert "1 unreadable" in err and f"not searched: {locked.name}" in err
        code, out, err = _run_child(home, "conversations", "list", **env)
        assert code == 0 and out.count("\n") == 3 and "[cannot read: unreadable" in out
        code, out, err = _run_child(home, "reindex", "conversations", **env)
        assert code == 0 and "1 conversation(s) unreadable" in out
        code, out, err = _run_child(home, "conversations", "export", **env)
        assert code == 1 and len(json.loads(out)["conversations"]) == 2
        assert f"not exported: {locked.name}: cannot read the file" in err
        code, out, err = _run_child(home, "ask", "conversations", "alpha three", **env)
        assert code == 0 and "alpha three" in out
        # a folder named like a conversation and a file that is not one, next to it
        (folder / f"{'d' * 32}.json").mkdir()
        (folder / f"{'e' * 32}.json").write_bytes(b"\xff not json")
        code, out, err = _run_child(home, "rotate-key", "--generate", **env)
        new = out.strip()
        assert code == 1 and len(new) == 44  # the key is shown although files failed
        for name in (locked.name, f"{'d' * 32}.json", f"{'e' * 32}.json"):
            assert f"left untouched (unreadable): {name}" in err
        assert "re-encrypted 3 conversation(s)" in err
    finally:
        locked.chmod(0o600)
    assert locked.read_bytes() == locked_bytes  # never rewritten
    kids = {p.name: json.loads(p.read_text()).get("key_id") for p in folder.glob("*.json")
            if p.is_file() and p.name != f"{'e' * 32}.json"}  # fmt: skip
    assert kids.pop(locked.name) == key_id(key)
    assert set(kids.values()) == {key_id(new)}
    monkeypatch.setenv(NEW_KEY_ENV, new)  # readable again: the old key and the new finish it
    code, _, err = run(capsys, "rotate-key")
    assert code == 1 and "re-encrypted 1 conversation(s), 3 already done" in err
    assert f"left untouched (unreadable): {'e' * 32}.json" in err  # still not a conversation


def export_text(home: Path, capsys: pytest.CaptureFixture[str], cid: str) -> str:
    code, out, _ = run(capsys, "conversations", "show", cid)
    assert code == 0
    return out


def test_an_interrupted_generated_rotation_is_finished_by_the_next_rotate_key(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from backends.config import Config
    from backends.conversations.keys import PENDING_KEY_FILE
    from backends.conversations.service import ConversationAgent
    from backends.errors import CancelledError
    from backends.models.chat import ScriptedChat
    from backends.models.embedders import HashingEmbedder
    from backends.models.registry import ChatChoice
    from backends.progress import Progress

    key = generate_key()
    monkeypatch.setenv("CONVERSATIONS_KEY", key)
    for i in range(4):
        run(capsys, "ask", "conversations", f"rotated later {i}")
    agent = ConversationAgent(
        Config(home=home, embedder="hashing", chat_model="scripted", conversations_key=key),
        embedder=lambda: HashingEmbedder(32),
        chat=lambda: ChatChoice(ScriptedChat()),
        use_keyring=False,
    )
    new = generate_key()
    progress = Progress()
    progress.callback = lambda done, total, message: progress.cancel() if done == 2 else None
    with pytest.raises(CancelledError):
        agent.rotate_key(new, progress, generated=True)
    agent.close()
    saved = home / "conversations" / PENDING_KEY_FILE
    assert saved.read_text().strip() == new and stat.S_IMODE(saved.stat().st_mode) == 0o600
    # every conversation still opens: with the old key or the saved new one
    code, out, _ = run(capsys, "conversations", "list")
    assert code == 0 and "cannot read" not in out and out.count("\n") == 4
    # --generate again (or no key at all) finishes the unfinished one with the saved key
    code, out, err = run(capsys, "rotate-key", "--generate")
    assert code == 0 and out == "" and "finishing the unfinished key rotation" in err
    assert str(saved) in err and "re-encrypted 2 conversation(s), 2 already done" in err
    assert not saved.exists()
    kids = {json.loads(p.read_text())["key_id"] for p in (home / "conversations").glob("*.json")}
    assert kids == {key_id(new)}


def test_text_that_is_not_utf8_never_gives_a_traceback(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = "caf\udce9"  # $'caf\xe9' as Python hands it over (surrogateescape)
    code, out, err = run(capsys, "ask", "conversations", bad)
    assert "Traceback" not in err
    if code == 0:  # repaired with a notice (or refused by the command line, clearly)
        assert "replaced by \ufffd" in err and "caf\ufffd" in out
    else:
        assert "not valid" in err  # the command line refuses it, clearly
    run(capsys, "ask", "conversations", "plain café")
    code, out, err = run(capsys, "conversations", "search", bad)
    assert "Traceback" not in err and (code == 0 or "not valid" in err)
    # a file in the folder holding a lone surrogate (a JSON escape) lists, shows and searches
    hostile = home / "conversations" / f"{'f' * 32}.json"
    hostile.write_text(
        '{"format": "custodia.conversation", "version": 1, "name": "x \\udfff y", '
        '"date": "2025-01-01T00:00:00+00:00", "provider": "p", "model": "m", '
        '"encrypted": false, "history": [{"role": "user", "content": "x \\udfff y"}]}'
    )
    code, out, _ = run(capsys, "conversations", "list")
    assert code == 0 and "x \ufffd y" in out
    assert run(capsys, "conversations", "show", "f" * 32)[0] == 0
    code, out, _ = run(capsys, "conversations", "search", "x y", "--json")
    assert code == 0 and "cannot" not in out


def test_ask_labels_the_models_words_and_withholds_what_it_invents(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tester, issue 24: a message about the user's life got the model's answer printed
    plainly, with invented numbers; the user's own message is a source."""
    code, out, err = run(
        capsys, "ask", "conversations", "My landlord told me the rent goes up to 950 euros."
    )
    assert code == 0
    draft = "Scripted answer to: My landlord told me the rent goes up to 950 euros."
    # "(context passages: 0)": a number no source holds, in what the user told of their life
    assert out.splitlines() == [
        "The model's own words — not from your conversations",
        "  The model's answer was withheld: it states what no source holds: 0.",
        "Withheld from the model's answer (not shown as an answer):",
        f"  ✗ {draft} (context passages: 0) — it states what no source holds: 0",
    ]
    assert draft not in err
