"""CA2 keys: rotation (crash-safe, resumable), the OS keyring and its graceful absence."""

from __future__ import annotations

import json
from collections.abc import Iterator

import keyring
import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError

from backends.conversations.errors import (
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    InvalidKeyError,
    RotationInProgressError,
    WrongKeyError,
)
from backends.conversations.keys import (
    KEYRING_ENTRY,
    KEYRING_SERVICE,
    KeyStore,
    generate_key,
    key_id,
    validate_key,
)
from backends.conversations.rotation import ROTATION_JOURNAL, pending_rotation
from backends.errors import CancelledError
from backends.progress import Progress

from .conftest import MakeAgent, conversation, tree_bytes


class MemoryKeyring(KeyringBackend):
    """An OS keyring stand-in that lives in memory (the real one needs a desktop session)."""

    priority = 1  # type: ignore[assignment]
    #: never picked by keyring's own discovery (it registers every subclass): only by
    #: the fixture below, through ``keyring.set_keyring``
    viable = False  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.data:
            raise PasswordDeleteError(username)
        del self.data[(service, username)]


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


def _key_ids(agent) -> list[str]:
    return sorted(json.loads(p.read_text()).get("key_id", "") for p in agent.folder.glob("*.json"))


def test_setting_a_first_key_encrypts_clear_conversations(
    make_agent: MakeAgent, key: str, no_keyring: None
) -> None:
    agent = make_agent()
    for i in range(3):
        agent.ask(f"clear message {i}")
    status = agent.encryption_status()
    assert not status.encrypted and status.warning and status.clear_files == 3
    report = agent.rotate_key(key)
    assert report.rotated == 3 and not report.failed
    assert _key_ids(agent) == [key_id(key)] * 3
    assert all(b"clear message" not in p.read_bytes() for p in agent.folder.glob("*.json"))
    status = agent.encryption_status()
    # no OS keyring here: the key is kept for this session, and the UI says why
    assert status.encrypted and status.source == "session" and status.clear_files == 0
    assert not status.keyring.usable and "keyring" in status.keyring.reason
    agent.ask("written after the key was set")
    assert len(_key_ids(agent)) == 4 and set(_key_ids(agent)) == {key_id(key)}
    assert len(make_agent(key=key).conversations()) == 4


def test_rotation_from_one_key_to_another(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    ids = [agent.ask(f"rotate me {i}").conversation_id for i in range(4)]
    new = generate_key()
    report = agent.rotate_key(new)
    assert (report.rotated, report.already, report.resumed) == (4, 0, False)
    assert set(_key_ids(agent)) == {key_id(new)}
    assert not (agent.folder / ROTATION_JOURNAL).exists()
    with pytest.raises(WrongKeyError):
        make_agent(key=key).load(ids[0])
    assert make_agent(key=new).load(ids[0]).history[0].content == "rotate me 0"


def test_an_interrupted_rotation_is_resumed(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    ids = [agent.ask(f"resumable {i}").conversation_id for i in range(5)]
    new = generate_key()
    progress = Progress()
    progress.callback = lambda done, total, message: progress.cancel() if done == 2 else None
    with pytest.raises(CancelledError):
        agent.rotate_key(new, progress)
    assert pending_rotation(agent.folder) == key_id(new)
    assert agent.encryption_status().rotation_pending == key_id(new)
    assert sorted(_key_ids(agent)) == sorted([key_id(new)] * 2 + [key_id(key)] * 3)
    # this process still holds both keys: everything reads, new writes use the new key
    assert all(agent.load(i).history for i in ids)
    # a restart with only the old key: rotated files say so, the others work
    restarted = make_agent(key=key)
    errors = [r.error for r in restarted.conversations() if r.error]
    assert len(errors) == 2 and all(e.startswith("wrong key") for e in errors)
    with pytest.raises(RotationInProgressError, match=key_id(new)):
        restarted.rotate_key(generate_key())
    report = restarted.rotate_key(new)
    assert report.resumed and report.already == 2 and report.rotated == 3
    assert set(_key_ids(agent)) == {key_id(new)} and not pending_rotation(agent.folder)
    assert [r.error for r in make_agent(key=new).conversations()] == [None] * 5


def test_a_key_set_in_the_app_lives_in_the_os_keyring(
    make_agent: MakeAgent, key: str, memory_keyring: MemoryKeyring
) -> None:
    agent = make_agent(use_keyring=True)
    agent.ask("kept under a keyring key")
    agent.rotate_key(key)
    assert memory_keyring.data[(KEYRING_SERVICE, KEYRING_ENTRY)] == key
    assert len(memory_keyring.data) == 1  # the pending rotation entry is gone
    status = agent.encryption_status()
    assert status.source == "keyring" and status.keyring.usable and not status.warning
    restarted = make_agent(use_keyring=True)  # no CONVERSATIONS_KEY: the keyring has it
    [row] = restarted.conversations()
    assert row.readable and row.encrypted


def test_an_interrupted_rotation_resumes_from_the_keyring(
    make_agent: MakeAgent, key: str, memory_keyring: MemoryKeyring
) -> None:
    agent = make_agent(use_keyring=True)
    for i in range(4):
        agent.ask(f"keyring {i}")
    agent.rotate_key(key)
    new = generate_key()
    progress = Progress()
    progress.callback = lambda done, total, message: progress.cancel() if done == 1 else None
    with pytest.raises(CancelledError):
        agent.rotate_key(new, progress)
    restarted = make_agent(use_keyring=True)  # finds the old key and the pending one
    assert all(r.readable for r in restarted.conversations())
    assert restarted.rotate_key(new).resumed
    assert memory_keyring.data == {(KEYRING_SERVICE, KEYRING_ENTRY): new}


def test_environment_key_wins_and_bad_keys_are_refused(
    make_agent: MakeAgent, key: str, memory_keyring: MemoryKeyring
) -> None:
    memory_keyring.set_password(KEYRING_SERVICE, KEYRING_ENTRY, generate_key())
    assert KeyStore(key).current() == (key, "environment")
    with pytest.raises(InvalidKeyError):
        KeyStore("not-a-fernet-key").current()
    agent = make_agent(key=key)
    with pytest.raises(InvalidKeyError):
        agent.rotate_key("short")
    assert not pending_rotation(agent.folder)


def test_rotation_without_the_current_key_changes_nothing(
    make_agent: MakeAgent, key: str, memory_keyring: MemoryKeyring
) -> None:
    """`rotate-key --generate` with CONVERSATIONS_KEY unset used to encrypt the clear files
    under the new key and leave the encrypted ones under the old one: a split history."""
    encrypted = make_agent(key=key)
    encrypted.ask("under the first key")
    keyless = make_agent(use_keyring=True)  # the keyring is empty too
    keyless.files.write(conversation("in clear", cid="clear"))
    keyless.reconcile()
    before = tree_bytes(keyless.folder)
    with pytest.raises(HistoryKeyRequiredError, match="no current key") as caught:
        keyless.rotate_key(generate_key())
    assert "Nothing was changed" in str(caught.value) and key_id(key) in str(caught.value)
    assert tree_bytes(keyless.folder) == before and memory_keyring.data == {}
    with pytest.raises(HistoryWrongKeyError, match="mistyped"):
        make_agent(key=generate_key()).rotate_key(generate_key())
    assert tree_bytes(keyless.folder) == before
    # giving the existing key unlocks: the clear file joins it, nothing is split
    report = keyless.rotate_key(key)
    assert (report.rotated, report.already, report.failed) == (1, 1, [])
    assert set(_key_ids(keyless)) == {key_id(key)}


def test_malformed_keys_say_which_key_and_what_to_do(memory_keyring: MemoryKeyring) -> None:
    with pytest.raises(InvalidKeyError) as env:
        KeyStore("not-a-fernet-key").current()
    message = str(env.value)
    assert message.startswith(
        "the conversations key set in the environment is not a valid key (44 characters"
    )
    assert message.endswith("(details: CONVERSATIONS_KEY: not a Fernet key)")  # issue 30
    assert "typo" in message and "--generate" not in message  # a new key would not help
    memory_keyring.set_password(KEYRING_SERVICE, KEYRING_ENTRY, "damaged")
    with pytest.raises(InvalidKeyError, match="in the OS keyring"):
        KeyStore("").current()
    with pytest.raises(InvalidKeyError, match=r"^the new key is not a valid key"):
        validate_key("short")


# -- a generated key is saved before any file is under it (issue 14: 1) -------------------------


def test_a_generated_key_is_saved_before_the_first_file_is_rewritten(
    make_agent: MakeAgent, key: str, no_keyring: None
) -> None:
    import stat

    from backends.conversations.keys import PENDING_KEY_FILE

    agent = make_agent(key=key)
    ids = [agent.ask(f"generated {i}").conversation_id for i in range(4)]
    saved = agent.folder / PENDING_KEY_FILE
    new = generate_key()
    seen: dict[str, object] = {}

    def on_saved(where: str) -> None:  # the CLI prints the key here
        seen.update(where=where, kids=_key_ids(agent), key=saved.read_text().strip())
        seen["mode"] = stat.S_IMODE(saved.stat().st_mode)

    progress = Progress()
    progress.callback = lambda done, total, message: progress.cancel() if done == 2 else None
    with pytest.raises(CancelledError):
        agent.rotate_key(new, progress, generated=True, on_key_saved=on_saved)
    assert seen == {"where": str(saved), "kids": [key_id(key)] * 4, "key": new, "mode": 0o600}
    # a restart with the old key alone reads everything: the saved key is found
    restarted = make_agent(key=key)
    assert [r.error for r in restarted.conversations()] == [None] * 4
    assert all(restarted.load(i).history for i in ids)
    assert restarted.saved_pending_key() == (new, str(saved))
    report = restarted.rotate_key(new)
    assert report.resumed and report.already == 2 and report.rotated == 2
    assert not saved.exists() and set(_key_ids(agent)) == {key_id(new)}


def test_a_generated_key_goes_to_the_keyring_when_there_is_one(
    make_agent: MakeAgent, key: str, memory_keyring: MemoryKeyring
) -> None:
    from backends.conversations.keys import KEYRING_PENDING_ENTRY, PENDING_KEY_FILE

    agent = make_agent(key=key, use_keyring=True)
    agent.ask("kept")
    new = generate_key()
    where: list[str] = []

    def on_saved(place: str) -> None:
        where.append(place)
        assert memory_keyring.data[(KEYRING_SERVICE, KEYRING_PENDING_ENTRY)] == new

    agent.rotate_key(new, generated=True, on_key_saved=on_saved)
    assert "OS keyring" in where[0] and not (agent.folder / PENDING_KEY_FILE).exists()
    assert (KEYRING_SERVICE, KEYRING_PENDING_ENTRY) not in memory_keyring.data  # finished


def test_no_place_to_keep_a_generated_key_changes_nothing(
    make_agent: MakeAgent, key: str, no_keyring: None
) -> None:
    from backends.conversations.keys import PENDING_KEY_FILE
    from backends.errors import StoreUnavailableError

    agent = make_agent(key=key)
    agent.ask("kept")
    (agent.folder / PENDING_KEY_FILE).mkdir()  # the key file cannot be written (even as root)
    before = tree_bytes(agent.folder)
    shown: list[str] = []
    with pytest.raises(StoreUnavailableError, match="cannot save the generated key"):
        agent.rotate_key(generate_key(), generated=True, on_key_saved=shown.append)
    assert not shown and tree_bytes(agent.folder) == before  # no journal, nothing rewritten
    assert not (agent.folder / ROTATION_JOURNAL).exists()
