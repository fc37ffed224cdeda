"""Every thread kept and listed (issue 30): the index survives a restart (a new process opens
the same file), titles come from the first message, rename, delete with undo, and erasing a
person removes their threads. A tutor turn keeps only its audit record's number."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from backends.threads import DB_FILE, ThreadIndex, title_from


@pytest.fixture
def index(tmp_path: Path) -> ThreadIndex:
    return ThreadIndex.in_home(tmp_path)


def test_a_memory_chat_is_kept_and_reopened_after_a_restart(tmp_path: Path) -> None:
    index = ThreadIndex.in_home(tmp_path)
    thread = index.create("memories", "me")
    index.add_turn(thread.id, "user", "My sister Ana lives in Lisbon. She is a nurse.")
    index.add_turn(thread.id, "assistant", "Noted: your sister Ana lives in Lisbon.")
    index.close()
    again = ThreadIndex.in_home(tmp_path)  # what a relaunch opens
    listed = again.listed("memories", "me")
    assert [t.title for t in listed] == ["My sister Ana lives in Lisbon."]
    assert listed[0].turns == 2
    turns = again.turns(thread.id)
    assert [t.role for t in turns] == ["user", "assistant"]
    assert turns[1].text == "Noted: your sister Ana lives in Lisbon."


def test_a_tutor_thread_keeps_record_numbers_not_the_words(index: ThreadIndex) -> None:
    thread = index.create("tutor", "ana")
    index.add_turn(thread.id, "user", "Which blood test monitors warfarin?", audit_seq=7)
    assert index.turns(thread.id)[0].text == "" and index.turns(thread.id)[0].audit_seq == 7
    assert index.get(thread.id).title == "Which blood test monitors warfarin?"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="audit record"):
        index.add_turn(thread.id, "user", "no record")


def test_newest_first_rename_delete_undo_purge(index: ThreadIndex) -> None:
    first = index.create("memories", "me", "First")
    second = index.create("memories", "me", "Second")
    index.add_turn(first.id, "user", "used again later")
    assert [t.title for t in index.listed("memories", "me")] == ["First", "Second"]
    index.rename(second.id, "  Holidays   2026 ")
    assert index.get(second.id).title == "Holidays 2026"  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        index.rename(second.id, "   ")
    index.delete(first.id)
    assert [t.title for t in index.listed("memories", "me")] == ["Holidays 2026"]
    index.restore(first.id)
    assert len(index.listed("memories", "me")) == 2
    index.delete(first.id)
    assert index.purge() == 1
    index.restore(first.id)  # too late: purged
    assert [t.id for t in index.listed("memories", "me")] == [second.id]


def test_erasing_a_person_removes_their_threads_and_leaves_no_copy(
    index: ThreadIndex, tmp_path: Path
) -> None:
    thread = index.create("tutor", "carol")
    index.add_turn(thread.id, "user", "Carolsecretquestion about lithium", audit_seq=3)
    kept = index.create("tutor", "ana", "Ana's")
    assert index.forget_person("carol") == 1
    assert [t.id for t in index.listed("tutor")] == [kept.id]
    assert index.turns(thread.id) == []
    index.close()
    with sqlite3.connect(tmp_path / DB_FILE) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob(DB_FILE + "*"))
    assert b"Carolsecretquestion" not in raw  # secure_delete: no copy left in the file


def test_a_forgotten_persons_words_leave_the_wal_at_once(
    index: ThreadIndex, tmp_path: Path
) -> None:
    """secure_delete zeroes the database file's pages, but under WAL the earlier frames stay
    in -wal until a checkpoint: the erasure (and a purge) folds and empties it at once,
    while the index is still open (the window keeps it open all day)."""
    thread = index.create("memories", "carol")
    index.add_turn(thread.id, "user", "Carolsecretmessage about my diagnosis")
    index.forget_person("carol")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob(DB_FILE + "*"))
    assert b"Carolsecretmessage" not in raw
    hidden = index.create("memories", "me")
    index.add_turn(hidden.id, "user", "Deletedsecretmessage I regret")
    index.delete(hidden.id)
    index.purge()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob(DB_FILE + "*"))
    assert b"Deletedsecretmessage" not in raw


def test_a_locked_or_closed_index_is_an_environment_error(
    index: ThreadIndex, tmp_path: Path
) -> None:
    """Another process holding the write lock (or a closed file) is a typed error the window
    can show, never sqlite3's own exception escaping from a slot."""
    from backends.errors import StoreUnavailableError
    from backends.threads import ThreadsUnavailableError

    other = sqlite3.connect(tmp_path / DB_FILE, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ThreadsUnavailableError):
            index.create("memories", "me")
    finally:
        other.execute("ROLLBACK")
        other.close()
    index.close()
    with pytest.raises(StoreUnavailableError):
        index.listed("memories")


def test_titles_from_content() -> None:
    assert title_from("Hello there. Second sentence.") == "Hello there."
    assert title_from("\n\n  first line\nsecond") == "first line"
    long = title_from("word " * 40)
    assert len(long) <= 60 and long.endswith("…") and not long.endswith(" …")
    assert title_from("   ") == "Untitled"


def test_the_threads_are_on_the_storage_map(index: ThreadIndex, tmp_path: Path) -> None:
    from backends.config import Config
    from backends.storage_map import storage_map

    index.create("memories", "me", "One")
    index.delete(index.create("tutor", "ana", "Deleted").id)
    rows = {r.kind: r for r in storage_map(Config(home=tmp_path, embedder="hashing"))}
    assert rows["threads"].items == 1 and rows["threads"].durability == "history"
