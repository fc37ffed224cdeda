"""The stored conversations: their files (the source of truth) and the SQLite index of them,
kept in step, with a small cache of the files last read.

Apart from the agent (:mod:`.service`) because every other part — the key change, the chat
turn, the search — reads and writes conversations through it, and none of them needs to
know how the index is kept right: a damaged index is moved aside and rebuilt from the files
(:meth:`ConversationLibrary.recovering`). No key, no model, no vectors here.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from backends.conversations.errors import ConversationError, ConversationNotFoundError
from backends.conversations.files import Conversation, ConversationFiles, FileStamp
from backends.conversations.index import (
    ConversationIndex,
    IndexDamagedError,
    IndexRow,
    ReconcileReport,
    reconcile,
    row_for,
)
from backends.conversations.keys import HistoryCipher
from backends.conversations.naming import check_name, fit_title, new_id, now_iso, tidy_name
from backends.errors import CustodiaEnvironmentError
from backends.i18n import _, date_time
from backends.progress import Progress

log = logging.getLogger(__name__)

T = TypeVar("T")

#: how many conversations read from their files are kept (decrypted) in memory
CACHED_CONVERSATIONS = 64
#: how many fresh ids are tried for an imported conversation whose id is taken
FREE_ID_TRIES = 100


class ConversationLibrary:
    """The folder of conversation files and their index; thread-safe (:attr:`lock`).

    ``files`` comes with its cipher set (the key change replaces it through
    :meth:`use_cipher`); the index at ``index_path`` is opened here, and rebuilt from the
    files when it had to be moved aside.
    """

    def __init__(self, files: ConversationFiles, index_path: Path) -> None:
        self.files = files
        self.folder = files.folder
        #: held around every write, and around a read-modify-write of one conversation
        self.lock = threading.RLock()
        self._cache: OrderedDict[tuple[str, FileStamp], Conversation] = OrderedDict()
        #: titles of clear conversations read from their files, by file version
        self._titles: dict[tuple[str, FileStamp], str] = {}
        self.index = ConversationIndex(index_path, self.folder)
        if self.index.recovered is not None:
            self.reconcile()  # the damaged index was moved aside: rebuild it from the files

    # -- the index kept right ---------------------------------------------------------------
    def reconcile(self, progress: Progress | None = None) -> ReconcileReport:
        with self.lock:
            return self.recovering(lambda: reconcile(self.files, self.index, progress))

    def recovering(self, action: Callable[[], T]) -> T:
        """``action()``; when the index turns out damaged, it is moved aside, rebuilt from
        the files (it is derived data) and ``action`` runs again."""
        try:
            return action()
        except IndexDamagedError as err:
            log.warning(_("the conversation index is damaged (%s); rebuilding it"), err)
            with self.lock:
                self.index.reset()
                reconcile(self.files, self.index)
            return action()

    def rows(self) -> list[IndexRow]:
        """The index rows as stored (names not replaced by titles)."""
        return self.recovering(self.index.rows)

    def note_unreadable(self, file: str) -> None:
        """Record in the index why ``file`` cannot be read now (logged when that fails)."""
        try:
            row = row_for(self.files, file)
            if row is not None:
                self.recovering(lambda: self.index.apply([row]))
        except CustodiaEnvironmentError as err:
            log.warning(_("%s: cannot record that it is unreadable: %s"), file, err)

    def close(self) -> None:
        with self.lock:
            self.index.close()

    # -- the cipher ------------------------------------------------------------------------
    def use_cipher(self, cipher: HistoryCipher | None) -> None:
        """Read and write with ``cipher`` from now on (what was cached is read again)."""
        with self.lock:
            self.files.cipher = cipher
            self._cache.clear()

    # -- reading ---------------------------------------------------------------------------
    def conversations(self) -> list[IndexRow]:
        """The index rows, each ``name`` the one the user sees: a title made from the first
        message (decrypted here when the history is encrypted: the index holds the token
        only), else the stored name."""
        rows = self.rows()
        cipher = self.files.cipher
        out: list[IndexRow] = []
        seen: dict[tuple[str, FileStamp], str] = {}
        for row in rows:
            title = ""
            if row.readable and not row.encrypted:
                # a clear title is not in the index (no message text there, CA3): from
                # the file's first lines, once per version of the file
                cache_key = (row.file, row.stamp)
                cached = self._titles.get(cache_key)
                title = self.files.head_title(row.file) if cached is None else cached
                seen[cache_key] = title
            elif row.title and cipher is not None and cipher.knows(row.key_id):
                with contextlib.suppress(Exception):
                    text = json.loads(cipher.decrypt(row.title, row.key_id).decode("utf-8"))
                    title = fit_title(text)
            out.append(replace(row, name=title) if title else row)
        with self.lock:
            self._titles = seen
        return out

    def load(self, conversation_id: str) -> Conversation:
        """The conversation (decrypted), or a typed error for this conversation only."""
        file = self.files.path(conversation_id).name
        return self.read(file)

    def read(self, file: str) -> Conversation:
        """The conversation in ``file`` (a copy: the cache keeps its own)."""
        try:
            stamp = FileStamp.of((self.folder / file).stat())
        except FileNotFoundError:
            raise ConversationNotFoundError(self.folder / file, _("no such conversation")) from None
        except OSError as err:
            raise ConversationError(self.folder / file, str(err)) from err
        with self.lock:
            cached = self._cache.get((file, stamp))
            if cached is not None:
                self._cache.move_to_end((file, stamp))
                return _copy(cached)
        conversation, stamp = self.files.read(file)
        with self.lock:
            self._cache[(file, stamp)] = conversation
            while len(self._cache) > CACHED_CONVERSATIONS:
                self._cache.popitem(last=False)
        return _copy(conversation)

    # -- writing ---------------------------------------------------------------------------
    def new(self, provider: str, model: str, name: str = "") -> Conversation:
        """A new conversation, not saved yet (the name tidied and checked). The default name
        is the date: names stay in clear (CA2), so they are never derived from the
        (encrypted) messages."""
        when = now_iso()
        return Conversation(
            id=new_id(),
            name=check_name(name) if tidy_name(name) else _default_name(when),
            date=when,
            provider=provider,
            model=model,
        )

    def save(self, conversation: Conversation, *, create: bool = False) -> None:
        """Write the file (atomically) and its index row."""
        stamp = self.files.write(conversation, create=create)
        cipher = self.files.cipher
        row = IndexRow(
            file=conversation.file,
            name=conversation.name,
            date=conversation.date,
            provider=conversation.provider,
            model=conversation.model,
            path=str(self.folder / conversation.file),
            messages=len(conversation.history),
            encrypted=self.files.writes_encrypted(),
            key_id=cipher.primary_id if cipher and self.files.writes_encrypted() else "",
            error=None,
            stamp=stamp,
            title=self.files.index_title(conversation, written=True),
        )
        self.recovering(lambda: self.index.apply([row]))

    def save_new(self, conversation: Conversation) -> tuple[str, bool]:
        """Store ``conversation`` under its id, or under a fresh one when that is taken
        (never overwriting). Returns ``(id, renamed)``."""
        renamed = False
        with self.lock:
            for _attempt in range(FREE_ID_TRIES):
                try:
                    self.save(conversation, create=True)
                    return conversation.id, renamed
                except FileExistsError:
                    conversation = replace(conversation, id=new_id())
                    renamed = True
        raise ConversationError(conversation.id, _("could not find a free conversation id"))

    def rename(self, conversation_id: str, name: str) -> Conversation:
        """Rename; the name is put on one line (whitespace tidied), at most ``MAX_NAME``
        characters, else :class:`InvalidNameError` and nothing changes."""
        name = check_name(name)
        with self.lock:
            conversation = self.load(conversation_id)  # refuses unreadable files
            conversation.name = name
            conversation.title = ""  # the user's name replaces the one made from a message
            self.save(conversation)
        return conversation

    def delete(self, conversation_id: str) -> tuple[str, int]:
        """Delete the file and its row; returns ``(file, messages it had)`` (its vectors
        are the caller's to drop)."""
        with self.lock:
            file = self.files.path(conversation_id).name
            row = self.recovering(lambda: self.index.get(file))
            self.files.delete(conversation_id)
            self.recovering(lambda: self.index.apply([], [file]))
        return file, (row.messages or 0) if row else 0


def _copy(conversation: Conversation) -> Conversation:
    return replace(conversation, history=list(conversation.history))


def _default_name(when: str) -> str:
    try:
        stamp = datetime.fromisoformat(when).astimezone()
    except ValueError:
        return _("Conversation")
    return _("Conversation {date}").format(date=date_time(stamp))
