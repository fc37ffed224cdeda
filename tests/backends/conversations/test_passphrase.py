"""Issue 20: a passphrase for the conversations key, a new history beside a locked one, and
conversations titled from their first message (real files, real Scrypt)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from backends import cli
from backends.conversations import importers, keys
from backends.conversations.errors import HistoryKeyRequiredError, InvalidKeyError
from backends.conversations.keys import (
    KDF_FILE,
    KdfEntry,
    NoPassphraseError,
    PassphraseFile,
    WrongPassphraseError,
    derive_key,
    key_id,
)
from backends.conversations.naming import TITLE_CHARS, make_title
from backends.conversations.rotation import SET_ASIDE_FILE

from .conftest import MakeAgent, tree_bytes

PASSPHRASE = "correct horse battery staple"


# -- the KDF ----------------------------------------------------------------------------------


def test_scrypt_parameters_cost_a_measurable_fraction_of_a_second(tmp_path: Path) -> None:
    """The shipped parameters are memory-hard (128 MiB) and slow enough to matter: measured
    here 0.31–0.42 s on 2 cores. Asserted loosely (a loaded box is slower, never faster)."""
    assert (keys.SCRYPT_N, keys.SCRYPT_R, keys.SCRYPT_P) == (2**17, 8, 1)
    assert 128 * keys.SCRYPT_R * keys.SCRYPT_N == 128 * 2**20  # bytes of memory per derivation
    entry = KdfEntry("", os.urandom(16), keys.SCRYPT_N, keys.SCRYPT_R, keys.SCRYPT_P)
    started = time.perf_counter()
    key = derive_key(PASSPHRASE, entry)
    assert time.perf_counter() - started > 0.1
    assert len(key) == 44 and keys.validate_key(key) == key


def test_the_salt_and_check_value_are_stored_never_the_key(tmp_path: Path) -> None:
    store = PassphraseFile(tmp_path / KDF_FILE)
    key = store.add(PASSPHRASE)
    raw = (tmp_path / KDF_FILE).read_text()
    data = json.loads(raw)
    [entry] = data["entries"]
    assert entry["kdf"] == "scrypt" and entry["n"] == 2**17 and entry["key_id"] == key_id(key)
    assert key not in raw and PASSPHRASE not in raw
    assert oct((tmp_path / KDF_FILE).stat().st_mode & 0o777) == "0o600"
    assert store.unlock(PASSPHRASE) == key  # the same key again from the passphrase
    # NFC: the same passphrase typed as decomposed characters derives the same key
    accented = PassphraseFile(tmp_path / "other.json")
    k1 = accented.add("contraseña de prueba")
    assert accented.unlock("contrasen\u0303a de prueba") == k1


def test_a_wrong_passphrase_is_a_clear_error_before_any_file_is_read(tmp_path: Path) -> None:
    store = PassphraseFile(tmp_path / KDF_FILE)
    with pytest.raises(NoPassphraseError, match="no passphrase has been set"):
        store.unlock(PASSPHRASE)
    store.add(PASSPHRASE)
    with pytest.raises(WrongPassphraseError, match="wrong passphrase"):
        store.unlock("correct horse battery stapler")
    with pytest.raises(InvalidKeyError, match="at least 8 characters"):
        store.add("short")


@pytest.mark.parametrize(
    "entry",
    [
        {},
        {"kdf": "scrypt", "key_id": "x", "salt": "AAAA", "n": 3, "r": 8, "p": 1},
        # a hostile file must not make a derivation take minutes or gigabytes
        {"kdf": "scrypt", "key_id": "x", "salt": "AAAA", "n": 2**20, "r": 1024, "p": 1},
        {"kdf": "scrypt", "key_id": "x", "salt": "not base64!", "n": 2**10, "r": 8, "p": 1},
    ],
)
def test_a_damaged_kdf_file_is_named(tmp_path: Path, entry: dict[str, object]) -> None:
    data = {"format": "custodia.conversations.kdf", "entries": [entry]}
    (tmp_path / KDF_FILE).write_text(json.dumps(data))
    with pytest.raises(Exception, match="is damaged"):
        PassphraseFile(tmp_path / KDF_FILE).unlock(PASSPHRASE)


def test_a_passphrase_encrypts_the_history_and_opens_it_after_a_restart(
    make_agent: MakeAgent,
) -> None:
    agent = make_agent()
    cid = agent.ask("The lighthouse keeper counts gulls").conversation_id
    key = agent.key_from_passphrase(PASSPHRASE, new=True)
    assert (agent.folder / KDF_FILE).exists()  # before any file is rewritten
    report = agent.rotate_key(key, passphrase=True)
    assert report.rotated == 1
    status = agent.encryption_status()
    assert status.encrypted and status.source == "passphrase"
    assert status.passphrase_key_ids == (key_id(key),)
    data = json.loads((agent.folder / f"{cid}.json").read_text())
    assert data["encrypted"] and data["key_id"] == key_id(key)
    # the derived key is written nowhere: not in the data dir, not as a rotation key
    home = agent.config.home
    assert not any(key.encode() in b for b in tree_bytes(home).values())
    assert not (agent.folder / keys.PENDING_KEY_FILE).exists()
    agent.close()
    # a restart without the passphrase: locked, and the status says a passphrase opens it
    locked = make_agent()
    status = locked.encryption_status()
    assert status.key_problem and status.passphrase_needed
    # with CONVERSATIONS_PASSPHRASE it opens
    opened = make_agent(passphrase=PASSPHRASE)
    assert opened.encryption_status().source == "environment_passphrase"
    assert opened.load(cid).history[0].content == "The lighthouse keeper counts gulls"
    # ... and a mistyped one is named as such, not as a decryption failure
    with pytest.raises(WrongPassphraseError, match="CONVERSATIONS_PASSPHRASE"):
        make_agent(passphrase="correct horse battery stable")


def test_rotate_key_passphrase_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.startswith("CUSTODIA_") or name.startswith("CONVERSATIONS_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")

    def run(*args: str) -> tuple[int, str, str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    code, _, err = run("ask", "conversations", "Tide tables for the harbour")
    cid = err.split("conversation ")[1].split()[0]
    # a generated key without a keyring: the command says a passphrase needs none
    monkeypatch.setenv("CUSTODIA_NEW_CONVERSATIONS_KEY", keys.generate_key())
    code, _, err = run("rotate-key")
    assert code == 0 and "rotate-key --passphrase`, which needs no keyring" in err
    monkeypatch.setenv("CONVERSATIONS_KEY", os.environ["CUSTODIA_NEW_CONVERSATIONS_KEY"])
    monkeypatch.delenv("CUSTODIA_NEW_CONVERSATIONS_KEY")
    monkeypatch.setenv("CUSTODIA_NEW_CONVERSATIONS_PASSPHRASE", PASSPHRASE)
    code, out, err = run("rotate-key", "--passphrase")
    assert code == 0, err
    assert "re-encrypted 1 conversation(s) under the passphrase's key" in err
    assert "CONVERSATIONS_PASSPHRASE" in err and out == ""  # no key printed: none to keep
    data = json.loads((tmp_path / "conversations" / f"{cid}.json").read_text())
    assert data["encrypted"] is True
    monkeypatch.delenv("CUSTODIA_NEW_CONVERSATIONS_PASSPHRASE")
    monkeypatch.delenv("CONVERSATIONS_KEY")  # it would take precedence
    monkeypatch.setenv("CONVERSATIONS_PASSPHRASE", PASSPHRASE)
    code, out, _ = run("conversations", "show", cid)
    assert code == 0 and "Tide tables for the harbour" in out
    monkeypatch.setenv("CONVERSATIONS_PASSPHRASE", "not the passphrase at all")
    code, out, err = run("conversations", "show", cid)
    assert code == 1 and "wrong passphrase" in err and "Traceback" not in err


# -- a new history beside a locked one --------------------------------------------------------


def _locked_history(make_agent: MakeAgent, key: str) -> tuple[list[str], dict[Path, bytes]]:
    old = make_agent(key=key)
    ids = [old.ask(f"Old secret number {i}").conversation_id for i in range(3)]
    old.close()
    return ids, tree_bytes(old.folder)


@pytest.mark.parametrize("encrypted", [True, False])
def test_a_new_history_keeps_the_old_files_untouched_and_locked(
    make_agent: MakeAgent, key: str, encrypted: bool
) -> None:
    ids, before = _locked_history(make_agent, key)
    agent = make_agent()  # restarted without the key
    with pytest.raises(HistoryKeyRequiredError):
        agent.ask("refused while the history is locked")
    new_key = keys.generate_key() if encrypted else None
    made = agent.start_new_history(new_key)
    assert made.locked == 3 and made.locked_key_ids == (key_id(key),)
    assert (agent.folder / SET_ASIDE_FILE).exists()
    turn = agent.ask("A fresh start after losing the key")
    data = json.loads((agent.folder / f"{turn.conversation_id}.json").read_text())
    assert data["encrypted"] is encrypted
    status = agent.encryption_status()
    assert status.locked == 3 and not status.key_problem and status.unreadable == 0
    # not one byte of the old files changed
    for path, data_bytes in before.items():
        if path.suffix == ".json":
            assert path.read_bytes() == data_bytes
    # a restart: still locked, still not blocking
    if new_key:
        agent.close()
        agent = make_agent(key=new_key)
    assert agent.key_problem() is None
    # the old key given back: the old conversations are readable again, nothing rewritten
    outcome = agent.use_key(key)
    assert outcome.rotation is None and outcome.unlocked == 3
    assert agent.load(ids[0]).history[0].content == "Old secret number 0"
    # ... and listed by their titles again (decrypted with their own key)
    assert sorted(r.name for r in agent.conversations() if r.key_id == key_id(key)) == [
        f"Old secret number {i}" for i in range(3)
    ]
    assert agent.encryption_status().locked == 0
    for path, data_bytes in before.items():
        if path.suffix == ".json":
            assert path.read_bytes() == data_bytes
    # new conversations still go to the new history
    again = agent.ask("Still the new history")
    data = json.loads((agent.folder / f"{again.conversation_id}.json").read_text())
    assert data["encrypted"] is encrypted
    if new_key:
        assert data["key_id"] == key_id(new_key)


def test_a_new_history_is_refused_when_nothing_is_locked(make_agent: MakeAgent) -> None:
    agent = make_agent()
    with pytest.raises(Exception, match="no conversation is locked"):
        agent.start_new_history(keys.generate_key())
    assert not (agent.folder / SET_ASIDE_FILE).exists()


def test_a_rotation_after_a_new_history_leaves_the_locked_files_alone(
    make_agent: MakeAgent, key: str
) -> None:
    _, before = _locked_history(make_agent, key)
    agent = make_agent()
    agent.start_new_history(None)  # continue unencrypted
    agent.ask("Written in clear after the key was lost")
    report = agent.rotate_key(keys.generate_key())  # was refused: "split the history"
    assert report.rotated == 1 and len(report.failed) == 3
    for path, data_bytes in before.items():
        if path.suffix == ".json":
            assert path.read_bytes() == data_bytes


# -- titles from the first message ------------------------------------------------------------


def test_make_title() -> None:
    assert make_title("  What is a  good\tsourdough ratio?\nthanks") == (
        "What is a good sourdough ratio?"
    )
    long = make_title("word " * 40)
    assert len(long) <= TITLE_CHARS and long.endswith("…") and "  " not in long
    assert make_title("   ") == ""
    assert make_title("## Show me **bold** and `code`, snake_case") == (
        "Show me bold and code, snake_case"
    )


def test_an_encrypted_title_never_reaches_clear_text(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    cid = agent.ask("Marmalade recipes from my grandmother").conversation_id
    [row] = agent.conversations()
    assert row.name == "Marmalade recipes from my grandmother"
    agent.close()
    for path, data in tree_bytes(agent.config.home).items():
        assert b"Marmalade" not in data, path  # not in the file, the index, Chroma
    raw = json.loads((agent.folder / f"{cid}.json").read_text())
    assert raw["name"].startswith("Conversation ") and raw["title"].startswith("gAAAA")
    # without the key the list shows the clear name (the date), never the token
    keyless = make_agent()
    [row] = keyless.conversations()
    assert row.name.startswith("Conversation ")
    # a rename replaces the title; an existing name (a file without title) is unchanged
    again = make_agent(key=key)
    again.rename(cid, "Jam")
    assert [r.name for r in again.conversations()] == ["Jam"]
    assert "title" not in json.loads((again.folder / f"{cid}.json").read_text())


def test_a_title_survives_a_key_rotation(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent()
    agent.ask("Harbour seals in winter")
    agent.rotate_key(key)
    [row] = agent.conversations()
    assert row.name == "Harbour seals in winter" and row.encrypted


def test_exports_and_imports_carry_the_title(make_agent: MakeAgent, tmp_path: Path) -> None:
    agent = make_agent()
    agent.ask("Knots every sailor should know")
    text, _ = importers.export(agent, None, "markdown")
    assert text.startswith("# Knots every sailor should know")


def test_a_damaged_title_loses_the_title_only(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    cid = agent.ask("Lighthouses of Galicia").conversation_id
    path = agent.folder / f"{cid}.json"
    data = json.loads(path.read_text())
    data["title"] = data["title"][:-8]  # a token cut short
    path.write_text(json.dumps(data))
    again = make_agent(key=key)
    conversation = again.load(cid)
    assert conversation.history[0].content == "Lighthouses of Galicia"
    assert conversation.display_name == data["name"]  # the date: the title is lost, not all
