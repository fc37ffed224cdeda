"""CA1–CA2: one JSON file per conversation, atomic, 0600; only the history encrypted."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from backends.conversations.errors import (
    ConversationNotFoundError,
    CorruptConversationError,
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    InvalidKeyError,
    InvalidNameError,
    KeyRequiredError,
    WrongKeyError,
)
from backends.conversations.files import ConversationFiles, StoredMessage
from backends.conversations.keys import HistoryCipher, generate_key, key_id
from backends.conversations.naming import MAX_NAME, check_name, fit_name, tidy_name
from backends.conversations.rotation import ROTATION_JOURNAL, check_history_keys, rotate

from .conftest import conversation

MARKER = "the heron counts seven lanterns at midnight"


def test_round_trip_without_a_key_is_clear_json(tmp_path: Path) -> None:
    files = ConversationFiles(tmp_path / "conversations")
    original = conversation("hello", MARKER, name="Plain")
    files.write(original, create=True)
    path = files.path(original.id)
    data = json.loads(path.read_text())
    assert data["encrypted"] is False and data["history"][1]["content"] == MARKER
    assert {"id", "name", "date", "provider", "model", "history"} <= set(data)
    loaded, _ = files.read(path.name)
    assert loaded.history == original.history and loaded.name == "Plain" and not loaded.encrypted
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(files.folder.stat().st_mode) == 0o700


def test_round_trip_with_a_key_encrypts_only_the_history(tmp_path: Path) -> None:
    key = generate_key()
    files = ConversationFiles(tmp_path, HistoryCipher([key]))
    original = conversation("hello", MARKER, name="Secret plans")
    files.write(original, create=True)
    raw = files.path(original.id).read_bytes()
    assert MARKER.encode() not in raw and b"hello" not in raw
    data = json.loads(raw)
    assert data["encrypted"] is True and isinstance(data["history"], str)
    assert data["key_id"] == key_id(key)
    # name, date, provider and model stay in clear on purpose (CA2)
    assert data["name"] == "Secret plans" and data["provider"] == "scripted"
    assert data["date"] == original.date and data["model"] == "scripted"
    loaded, _ = files.read(original.file)
    assert loaded.history == original.history and loaded.encrypted


def test_wrong_key_is_a_typed_error_and_the_file_is_untouched(tmp_path: Path) -> None:
    ConversationFiles(tmp_path, HistoryCipher([generate_key()])).write(
        conversation(MARKER, cid="a")
    )
    before = (tmp_path / "a.json").read_bytes()
    other = ConversationFiles(tmp_path, HistoryCipher([generate_key()]))
    with pytest.raises(WrongKeyError, match="another key"):
        other.read("a.json")
    with pytest.raises(KeyRequiredError, match="no key"):
        ConversationFiles(tmp_path).read("a.json")
    assert (tmp_path / "a.json").read_bytes() == before


def test_corrupt_and_truncated_files(tmp_path: Path) -> None:
    key = generate_key()
    files = ConversationFiles(tmp_path, HistoryCipher([key]))
    for cid in ("good", "cut", "token", "garbage", "foreign"):
        files.write(conversation("a", "b", cid=cid))
    raw = (tmp_path / "cut.json").read_bytes()
    (tmp_path / "cut.json").write_bytes(raw[: len(raw) // 2])  # half a file
    data = json.loads((tmp_path / "token.json").read_text())
    data["history"] = data["history"][:-20]  # a truncated token, JSON still valid
    (tmp_path / "token.json").write_text(json.dumps(data))
    (tmp_path / "garbage.json").write_bytes(b"\x00\xff not json")
    (tmp_path / "foreign.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CorruptConversationError, match="not valid JSON"):
        files.read("cut.json")
    with pytest.raises(CorruptConversationError, match="damaged or truncated"):
        files.read("token.json")
    with pytest.raises(CorruptConversationError):
        files.read("garbage.json")
    with pytest.raises(CorruptConversationError, match="not a Custodia conversation"):
        files.read("foreign.json")
    assert files.read("good.json")[0].history[1].content == "b"  # the others keep working
    with pytest.raises(ConversationNotFoundError):
        files.read("missing.json")


def test_create_never_replaces_an_existing_file(tmp_path: Path) -> None:
    files = ConversationFiles(tmp_path)
    files.write(conversation("first", cid="same"), create=True)
    with pytest.raises(FileExistsError):
        files.write(conversation("second", cid="same"), create=True)
    assert files.read("same.json")[0].history[0].content == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["same.json"]  # no temporary left


def test_scan_ignores_temporaries_and_removes_stale_ones(tmp_path: Path) -> None:
    files = ConversationFiles(tmp_path)
    files.write(conversation("x", cid="real"))
    fresh = tmp_path / ".real.1234abcd.tmp"
    stale = tmp_path / ".real.5678abcd.tmp"
    fresh.write_bytes(b"{")
    stale.write_bytes(b"{")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    (tmp_path / "notes.txt").write_text("not a conversation")
    assert list(files.scan()) == ["real.json"]
    assert files.remove_stale_temporaries() == 1
    assert fresh.exists() and not stale.exists()


def test_replacing_a_file_changes_its_stamp(tmp_path: Path) -> None:
    files = ConversationFiles(tmp_path)
    conv = conversation("x", cid="c")
    first = files.write(conv)
    conv.history = conv.history * 2
    second = files.write(conv)
    assert first != second and files.scan()["c.json"] == second


def test_invalid_keys_are_refused() -> None:
    with pytest.raises(InvalidKeyError, match="not a Fernet key"):
        HistoryCipher(["not a key"])
    with pytest.raises(ConversationNotFoundError):
        ConversationFiles(Path("/tmp")).path("../escape")


def test_names_are_one_tidy_line_of_limited_length() -> None:
    assert tidy_name("  Trip\nto\tLisbon \r\n 2025 ") == "Trip to Lisbon 2025"
    assert tidy_name("bell\x07 and \x1b[31mred\x1b[0m") == "bell and [31mred[0m"
    assert check_name("Trip\nplanning") == "Trip planning"
    assert check_name("é" * MAX_NAME) == "é" * MAX_NAME
    with pytest.raises(InvalidNameError, match=f"at most {MAX_NAME} characters .* 5000"):
        check_name("x" * 5000)
    with pytest.raises(InvalidNameError, match="needs a name"):
        check_name(" \n\t\x00 ")
    cut = fit_name("y" * 5000)
    assert len(cut) == MAX_NAME and cut.endswith("…")
    assert fit_name("\n") == "Conversation"


def test_a_stopped_answer_is_marked_in_the_file(tmp_path: Path) -> None:
    files = ConversationFiles(tmp_path)
    conv = conversation("count to ten")
    conv.history.append(StoredMessage("assistant", "one two", "t", "scripted:scripted", True))
    files.write(conv, create=True)
    data = json.loads(files.path(conv.id).read_text())
    assert data["history"][1]["stopped"] is True and "stopped" not in data["history"][0]
    loaded, _ = files.read(conv.file)
    assert [m.stopped for m in loaded.history] == [False, True]


def test_rotation_refuses_a_history_under_a_key_not_given(tmp_path: Path) -> None:
    """Encrypted files and none under a key given: nothing changes (no journal, no file)."""
    old, other, new = generate_key(), generate_key(), generate_key()
    ConversationFiles(tmp_path, HistoryCipher([old])).write(conversation("secret", cid="enc"))
    ConversationFiles(tmp_path).write(conversation("in clear", cid="clear"))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    with pytest.raises(HistoryKeyRequiredError, match="no current key") as no_key:
        rotate(tmp_path, new, [])
    assert no_key.value.key_ids == (key_id(old),) and no_key.value.files == 1
    with pytest.raises(HistoryWrongKeyError, match=key_id(other)):
        rotate(tmp_path, new, [other])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert not (tmp_path / ROTATION_JOURNAL).exists()
    check_history_keys(tmp_path, old, [])  # the existing key given as the new one: fine
    report = rotate(tmp_path, new, [old])
    assert report.rotated == 2 and not report.failed


def test_a_stray_file_under_another_key_does_not_block_rotation(tmp_path: Path) -> None:
    """The rest is under the current key: the stray one is reported and left untouched."""
    current, stray, new = generate_key(), generate_key(), generate_key()
    ConversationFiles(tmp_path, HistoryCipher([current])).write(conversation("mine", cid="a"))
    ConversationFiles(tmp_path, HistoryCipher([stray])).write(conversation("foreign", cid="b"))
    stray_bytes = (tmp_path / "b.json").read_bytes()
    report = rotate(tmp_path, new, [current])
    assert report.rotated == 1 and [name for name, _ in report.failed] == ["b.json"]
    assert (tmp_path / "b.json").read_bytes() == stray_bytes


def test_names_moved_out_of_files_are_still_importable_from_it() -> None:
    """Splitting this module (naming, rotation) kept the old import paths working for the
    callers written before (tests and benches elsewhere)."""
    from backends.conversations import files, naming, rotation

    assert files.pending_rotation is rotation.pending_rotation
    assert files.RotationJournal is rotation.RotationJournal
    assert files.ROTATION_JOURNAL == rotation.ROTATION_JOURNAL
    assert files.now_iso is naming.now_iso and files.MAX_NAME == naming.MAX_NAME
    with pytest.raises(AttributeError):
        _ = files.no_such_name  # type: ignore[attr-defined]
