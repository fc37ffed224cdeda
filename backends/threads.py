"""Every thread kept and listed: the tutor's threads and the memory chats, reopened after a
restart, renamed, deleted with undo (issue 30).

The index is history (a SQLite file in WAL mode, ``threads.sqlite3`` in the data dir, with
``secure_delete`` so a deleted row leaves no copy in the file). What it holds depends on the
datum's class:

* a **tutor thread** is history whose content lives sealed in the audit log: the index keeps
  only the thread's title and the audit sequence numbers of its turns — the question and the
  answer are read back from the person's records when the thread is reopened;
* a **memory chat** is history too, kept here: its messages, in order.

A deleted thread is hidden at once and can be restored until :meth:`ThreadIndex.purge` deletes
it for good (the window purges when it closes). Erasing a person deletes every thread of
theirs (:meth:`ThreadIndex.forget_person`), title and messages included.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from backends import failures
from backends.assistants import Assistant, Context, Needs
from backends.errors import StoreUnavailableError
from backends.i18n import N_, _
from backends.stores.description import HISTORY, Datum, Measurement, Place, Running, sqlite_count

if TYPE_CHECKING:
    from backends.config import Config

DB_FILE = "threads.sqlite3"
#: the assistants that keep threads, as the index names them
ASSISTANTS = ("tutor", "memories")
#: the longest title kept (a title made from a message is cut at a word)
MAX_TITLE = 60

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    assistant TEXT NOT NULL,
    person TEXT NOT NULL,
    title TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    deleted REAL
);
CREATE INDEX IF NOT EXISTS threads_list ON threads (assistant, person, updated);
CREATE TABLE IF NOT EXISTS turns (
    thread TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    audit_seq INTEGER,
    PRIMARY KEY (thread, position)
);
"""


@dataclass(frozen=True)
class Thread:
    """One thread as the sidebar lists it."""

    id: str
    assistant: str
    person: str
    title: str
    created: float
    updated: float
    turns: int


@dataclass(frozen=True)
class Turn:
    """One turn of a thread: a message (memory chats) or an audit record's number (tutor)."""

    position: int
    role: str
    text: str
    audit_seq: int | None


def title_from(text: str) -> str:
    """A thread's title from its first message: its first sentence, cut at a word (a
    tutor thread's title is the one piece of its question kept outside the audit log; erasing
    the person deletes it with the thread)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    first = re.split(r"(?<=[.!?])\s", " ".join(lines[0].split()))[0] if lines else ""
    if len(first) <= MAX_TITLE:
        return first or "Untitled"
    cut = first[: MAX_TITLE - 1].rsplit(" ", 1)[0]
    return (cut or first[: MAX_TITLE - 1]) + "…"


_P = ParamSpec("_P")
_R = TypeVar("_R")

#: how long a write waits for another process holding the file's write lock (the window
#: calls the index from its slots: a short wait, then a message, never a frozen window)
BUSY_TIMEOUT_S = 2.0


class ThreadsUnavailableError(StoreUnavailableError):
    """The thread index cannot be read or written (locked by another process, disk full,
    damaged, closed): the chat goes on, the list says why."""


def _environment(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """SQLite's own errors leave the index as :class:`ThreadsUnavailableError`."""

    @wraps(method)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except sqlite3.Error as err:
            raise ThreadsUnavailableError(
                failures.failed(_("the list of threads cannot be used"), err)
            ) from err

    return guarded


class ThreadIndex:
    """The threads of every assistant and person in one SQLite file (thread-safe)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA secure_delete=ON")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.executescript(_SCHEMA)

    @classmethod
    def in_home(cls, home: Path) -> ThreadIndex:
        return cls(Path(home) / DB_FILE)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    # -- threads ---------------------------------------------------------------------------
    @_environment
    def create(self, assistant: str, person: str, title: str = "") -> Thread:
        """A new, empty thread (titled by its first message when no title is given)."""
        if assistant not in ASSISTANTS:
            raise ValueError(f"unknown assistant {assistant!r}")
        now = time.time()
        thread = Thread(uuid.uuid4().hex, assistant, person, title, now, now, 0)
        with self._tx() as db:
            db.execute(
                "INSERT INTO threads (id, assistant, person, title, created, updated) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (thread.id, assistant, person, title, now, now),
            )
        return thread

    @_environment
    def listed(self, assistant: str, person: str | None = None) -> list[Thread]:
        """The threads not deleted, the most recently used first."""
        sql = (
            "SELECT t.id, t.assistant, t.person, t.title, t.created, t.updated, "
            "(SELECT count(*) FROM turns WHERE thread = t.id) FROM threads t "
            "WHERE t.assistant = ? AND t.deleted IS NULL"
        )
        parameters: list[object] = [assistant]
        if person is not None:
            sql += " AND t.person = ?"
            parameters.append(person)
        sql += " ORDER BY t.updated DESC, t.created DESC"
        with self._lock:
            rows = self._conn.execute(sql, parameters).fetchall()
        return [Thread(*row) for row in rows]

    @_environment
    def get(self, thread_id: str) -> Thread | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT t.id, t.assistant, t.person, t.title, t.created, t.updated, "
                "(SELECT count(*) FROM turns WHERE thread = t.id) FROM threads t "
                "WHERE t.id = ? AND t.deleted IS NULL",
                (thread_id,),
            ).fetchone()
        return Thread(*row) if row else None

    @_environment
    def rename(self, thread_id: str, title: str) -> None:
        title = " ".join(title.split())[:200]
        if not title:
            raise ValueError("a thread's title cannot be empty")
        with self._tx() as db:
            db.execute("UPDATE threads SET title = ? WHERE id = ?", (title, thread_id))

    @_environment
    def delete(self, thread_id: str) -> None:
        """Hide the thread (:meth:`restore` brings it back until :meth:`purge`)."""
        with self._tx() as db:
            db.execute("UPDATE threads SET deleted = ? WHERE id = ?", (time.time(), thread_id))

    @_environment
    def restore(self, thread_id: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE threads SET deleted = NULL WHERE id = ?", (thread_id,))

    @_environment
    def purge(self) -> int:
        """Delete the hidden threads for good; how many."""
        with self._tx() as db:
            count = int(db.execute("DELETE FROM threads WHERE deleted IS NOT NULL").rowcount)
        self._scrub()
        return count

    @_environment
    def forget_person(self, person: str) -> int:
        """Every thread of ``person``, in every assistant, deleted for good; how many."""
        with self._tx() as db:
            count = int(db.execute("DELETE FROM threads WHERE person = ?", (person,)).rowcount)
        self._scrub()
        return count

    def _scrub(self) -> None:
        """``secure_delete`` zeroes the pages in the database file, but under WAL the old
        pages stay in ``-wal`` until a checkpoint: fold it back and empty it now."""
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @_environment
    def people(self, assistant: str) -> list[str]:
        """Whose threads ``assistant`` keeps (hidden ones included)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT DISTINCT person FROM threads WHERE assistant = ? ORDER BY person",
                (assistant,),
            ).fetchall()
        return [str(row[0]) for row in rows]

    # -- turns -----------------------------------------------------------------------------
    @_environment
    def add_turn(
        self, thread_id: str, role: str, text: str = "", audit_seq: int | None = None
    ) -> Turn:
        """Append a turn; the first user message titles an untitled thread. A tutor turn
        keeps only its ``audit_seq`` (its text is sealed in the audit log)."""
        with self._tx() as db:
            row = db.execute(
                "SELECT assistant, title FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
            if row is None:
                raise KeyError(thread_id)
            assistant, title = row
            if assistant == "tutor":
                if audit_seq is None:
                    raise ValueError("a tutor turn is kept as its audit record's number")
                stored = ""
            else:
                stored = text
            position = db.execute(
                "SELECT coalesce(max(position), -1) + 1 FROM turns WHERE thread = ?",
                (thread_id,),
            ).fetchone()[0]
            db.execute(
                "INSERT INTO turns (thread, position, role, text, audit_seq) "
                "VALUES (?, ?, ?, ?, ?)",
                (thread_id, position, role, stored, audit_seq),
            )
            changes: dict[str, object] = {"updated": time.time()}
            if not title and role == "user" and text.strip():
                changes["title"] = title_from(text)
            assignments = ", ".join(f"{k} = ?" for k in changes)
            db.execute(
                f"UPDATE threads SET {assignments} WHERE id = ?",
                (*changes.values(), thread_id),
            )
        return Turn(position, role, stored, audit_seq)

    @_environment
    def replace_turns(self, thread_id: str, messages: list[tuple[str, str]]) -> None:
        """A memory chat's messages as they are now (an edit or a regenerated answer
        replaces what followed); the first user message titles an untitled thread."""
        with self._tx() as db:
            row = db.execute("SELECT title FROM threads WHERE id = ?", (thread_id,)).fetchone()
            if row is None:
                raise KeyError(thread_id)
            db.execute("DELETE FROM turns WHERE thread = ?", (thread_id,))
            db.executemany(
                "INSERT INTO turns (thread, position, role, text) VALUES (?, ?, ?, ?)",
                [(thread_id, n, role, text) for n, (role, text) in enumerate(messages)],
            )
            title = row[0] or next((title_from(t) for r, t in messages if r == "user"), "")
            db.execute(
                "UPDATE threads SET title = ?, updated = ? WHERE id = ?",
                (title, time.time(), thread_id),
            )

    @_environment
    def drop_last_turn(self, thread_id: str) -> None:
        """Forget the thread's last turn (a rephrased answer replaces the one it rewords)."""
        with self._tx() as db:
            db.execute(
                "DELETE FROM turns WHERE thread = ? AND position = "
                "(SELECT max(position) FROM turns WHERE thread = ?)",
                (thread_id, thread_id),
            )

    @_environment
    def turns(self, thread_id: str) -> list[Turn]:
        with self._lock:
            rows = self._conn.execute(
                "SELECT position, role, text, audit_seq FROM turns WHERE thread = ? "
                "ORDER BY position",
                (thread_id,),
            ).fetchall()
        return [Turn(*row) for row in rows]


def build(needs: Needs) -> ThreadIndex:
    """The process's thread index (one per data dir, closed with the services)."""
    return ThreadIndex.in_home(needs.config.home)


def forget_person(context: Context, person: str) -> list[str]:
    """Erasing ``person``: their threads, in every assistant, deleted for good (an index
    never created holds none: nothing is created to find out)."""
    if context.is_built("threads") or context.config.path(DB_FILE).exists():
        context.get("threads", ThreadIndex).forget_person(person)
    return []


def _measure(config: Config, process: Running | None) -> Measurement:
    return sqlite_count(config.path(DB_FILE), "SELECT count(*) FROM threads WHERE deleted IS NULL")


def _place(config: Config) -> Place:
    return Place(N_("SQLite (WAL, secure_delete)"), str(config.path(DB_FILE)))


DATA = (
    Datum(
        N_("threads"),
        N_("tutor, memories"),
        HISTORY,
        N_("threads"),
        N_(
            "the list of past threads and the memory chats' messages are lost (the tutor's "
            "questions "
            "and answers stay sealed in the audit log)"
        ),
        _measure,
        place=_place,
    ),
)


#: the thread index, a shared part declared once (see :mod:`backends.assistants`)
PART = Assistant(
    name="threads",
    title=N_("Threads"),
    build="backends.threads:build",
    data="backends.threads:DATA",
    forget="backends.threads:forget_person",
)
