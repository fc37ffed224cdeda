"""One JSON file per conversation: the complete source of truth (CA1, CA2).

A file looks like this (``history`` is a list when no key is set)::

    {"format": "custodia.conversation", "version": 1, "id": "…", "name": "…",
     "date": "2025-05-01T09:30:00+00:00", "provider": "ollama", "model": "llama3.2",
     "encrypted": true, "key_id": "3f1c…", "history": "gAAAAAB…"}

Only ``history`` (the messages, their times and the model that wrote each answer) is
encrypted; name, date, provider and model stay in clear on purpose, so a listing never needs
the key. A conversation is titled from its first message: that ``title`` comes from the
history, so it is encrypted with it (a token under the same key) and the clear ``name`` stays
the date until the user renames it; in a clear history the title is in clear like the rest.

Writes are atomic: a private temporary file in the same folder, ``fsync``, ``rename`` over
the old file, ``fsync`` of the folder. A crash leaves the old file or the new one, never half
of either. New files are linked into place (``os.link``), which fails instead of replacing
an existing conversation. Files are 0600, the folder 0700.

A file that cannot be read raises a :class:`ConversationError` subclass for that file only,
and Custodia never writes over it.

This module reads and writes one file at a time; what a conversation is called and how its
text is repaired is :mod:`.naming`, re-encrypting the whole history under a new key
:mod:`.rotation` (their names stay importable from here).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.fernet import InvalidToken

from backends import failures
from backends.conversations.errors import (
    ConversationError,
    ConversationNotFoundError,
    ConversationTooLargeError,
    CorruptConversationError,
    KeyRequiredError,
    UnreadableFileError,
    WrongKeyError,
)
from backends.conversations.keys import HistoryCipher
from backends.conversations.naming import MAX_NAME as MAX_NAME
from backends.conversations.naming import REPLACEMENT as REPLACEMENT
from backends.conversations.naming import TITLE_CHARS as TITLE_CHARS
from backends.conversations.naming import check_name as check_name
from backends.conversations.naming import clean_text, fit_title, is_valid_id
from backends.conversations.naming import fit_name as fit_name
from backends.conversations.naming import make_title as make_title
from backends.conversations.naming import new_id as new_id
from backends.conversations.naming import now_iso as now_iso
from backends.conversations.naming import repair_text as repair_text
from backends.conversations.naming import repaired_notice as repaired_notice
from backends.conversations.naming import tidy_name as tidy_name
from backends.errors import StoreUnavailableError
from backends.i18n import _, number

FORMAT = "custodia.conversation"
VERSION = 1
SUFFIX = ".json"
ROLES = ("system", "user", "assistant", "tool")

log = logging.getLogger(__name__)

#: the largest conversation file read, written or imported, and the most messages in one:
#: a hostile file dropped into the folder costs one ``stat`` instead of minutes of parsing
#: and embedding at the next start (read at call time, so a test can lower them)
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_MESSAGES = 20_000

#: errors of opening or reading one file that say nothing about the folder: that file fails
#: alone, like a corrupt one (a full table of descriptors or no memory is the environment)
_FILE_ERRNOS = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EISDIR,
        errno.ELOOP,
        errno.EIO,
        errno.ENXIO,
        errno.ENODEV,
        errno.EINVAL,
        errno.EFBIG,
        errno.EOVERFLOW,
        errno.ENAMETOOLONG,
    }
)


def is_file_error(err: OSError) -> bool:
    """Whether ``err`` is about one file (skip it) rather than the whole folder."""
    return err.errno in _FILE_ERRNOS


def file_unreadable(path: Path, err: OSError) -> UnreadableFileError:
    return UnreadableFileError(
        path,
        failures.with_details(
            _("cannot read the file; it is left untouched"), str(err.strerror or err)
        ),
    )


def too_large(path: Path, size: int) -> ConversationTooLargeError:
    return ConversationTooLargeError(
        path,
        _(
            "the file is {size} MiB, over the {most} MiB a conversation may hold; it is not "
            "read, indexed or searched (move it out of the folder); the file is left untouched"
        ).format(size=number(size / 2**20, 1), most=number(MAX_FILE_BYTES / 2**20)),
    )


@dataclass
class StoredMessage:
    role: str
    content: str
    time: str = ""
    #: the model that wrote an assistant message ("provider:model"), "" otherwise
    model: str = ""
    #: an answer cut short (Stop, Ctrl+C, the model failing mid-way): what was said is kept
    stopped: bool = False

    def to_json(self) -> dict[str, str | bool]:
        out: dict[str, str | bool] = {
            "role": clean_text(self.role),
            "content": clean_text(self.content),
            "time": clean_text(self.time),
        }
        if self.model:
            out["model"] = clean_text(self.model)
        if self.stopped:
            out["stopped"] = True
        return out

    @classmethod
    def from_json(cls, data: Any) -> StoredMessage:
        if not isinstance(data, dict):
            raise ValueError("a message is not an object")
        role, content = data.get("role"), data.get("content")
        if not isinstance(role, str) or not isinstance(content, str):
            raise ValueError("a message lacks a text role or content")
        when = data.get("time", "")
        model = data.get("model", "")
        return cls(
            clean_text(role),
            clean_text(content),
            clean_text(when) if isinstance(when, str) else "",
            clean_text(str(model or "")),
            data.get("stopped") is True,
        )


@dataclass
class Conversation:
    id: str
    name: str
    date: str
    provider: str
    model: str
    history: list[StoredMessage] = field(default_factory=list)
    #: how the file was stored when it was read (for the status line and rotation)
    encrypted: bool = False
    key_id: str = ""
    #: a title made from the first message (plaintext here; in the file it is encrypted
    #: with the history); "" once the user named the conversation
    title: str = ""
    #: the ``title`` field exactly as read from an encrypted file (its token, under the
    #: file's own key): what the index keeps for it
    title_token: str = field(default="", compare=False, repr=False)

    @property
    def file(self) -> str:
        return self.id + SUFFIX

    @property
    def display_name(self) -> str:
        """What the user sees: the title from the first message, else the name."""
        return self.title or self.name


#: how much of a clear file is read to find its title for a listing
TITLE_HEAD_BYTES = 4096


@dataclass(frozen=True)
class FileStamp:
    """What changes whenever a file is replaced: inode (atomic rename), mtime, size."""

    ino: int
    mtime_ns: int
    size: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStamp:
        return cls(st.st_ino, st.st_mtime_ns, st.st_size)


def check_size(path: Path, conversation: Conversation) -> None:
    """:class:`ConversationTooLargeError` when ``conversation`` holds more messages than a
    file may (it would be written, then never read again)."""
    if len(conversation.history) > MAX_MESSAGES:
        raise ConversationTooLargeError(
            path,
            _(
                "{count} messages, over the {most} a conversation may hold: not saved (start a "
                "new conversation)"
            ).format(count=number(len(conversation.history)), most=number(MAX_MESSAGES)),
        )


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class ConversationFiles:
    """The folder of conversation files, read and written with an optional cipher."""

    def __init__(self, folder: Path, cipher: HistoryCipher | None = None) -> None:
        self.folder = folder
        self.cipher = cipher

    def ensure(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            raise StoreUnavailableError(
                failures.failed(
                    _("{folder}: the folder cannot be created").format(folder=self.folder), err
                )
            ) from err

    def path(self, conversation_id: str) -> Path:
        if not is_valid_id(conversation_id):
            raise ConversationNotFoundError(conversation_id, _("not a conversation id"))
        return self.folder / (conversation_id + SUFFIX)

    # -- listing ---------------------------------------------------------------------------
    def strays(self) -> list[str]:
        """Names that look like conversation files but are not regular files (a folder
        named ``x.json``, a symlink, a FIFO): never read or written, reported by rotation."""
        out: list[str] = []
        try:
            entries = os.scandir(self.folder)
        except OSError:
            return out
        with entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(SUFFIX) or not is_valid_id(name[: -len(SUFFIX)]):
                    continue
                with contextlib.suppress(OSError):
                    if not entry.is_file(follow_symlinks=False):
                        out.append(name)
        return sorted(out)

    def scan(self) -> dict[str, FileStamp]:
        """``{file name: stamp}`` for every conversation file (temporaries excluded)."""
        out: dict[str, FileStamp] = {}
        try:
            entries = os.scandir(self.folder)
        except FileNotFoundError:
            return out
        except OSError as err:
            raise StoreUnavailableError(
                failures.failed(
                    _("{folder}: the folder cannot be listed").format(folder=self.folder), err
                )
            ) from err
        with entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(SUFFIX) or not is_valid_id(name[: -len(SUFFIX)]):
                    continue
                try:
                    if entry.is_file(follow_symlinks=False):
                        out[name] = FileStamp.of(entry.stat(follow_symlinks=False))
                except FileNotFoundError:  # removed meanwhile
                    continue
        return out

    # -- reading ---------------------------------------------------------------------------
    def read(self, file: str) -> tuple[Conversation, FileStamp]:
        """The conversation in ``file`` and the stamp of exactly the bytes that were read."""
        path = self.folder / file
        try:
            with open(path, "rb") as fh:
                stamp = FileStamp.of(os.fstat(fh.fileno()))
                if stamp.size > MAX_FILE_BYTES:
                    raise too_large(path, stamp.size)
                raw = fh.read(MAX_FILE_BYTES + 1)  # it may grow after the fstat
                if len(raw) > MAX_FILE_BYTES:
                    raise too_large(path, len(raw))
        except FileNotFoundError:
            raise ConversationNotFoundError(path, _("no such conversation")) from None
        except OSError as err:
            if is_file_error(err):  # this file only: it fails alone, like a corrupt one
                raise file_unreadable(path, err) from None
            raise StoreUnavailableError(
                failures.failed(_("{path}: cannot be read").format(path=path), err)
            ) from err
        return self.decode(path, raw), stamp

    def load(self, conversation_id: str) -> Conversation:
        return self.read(self.path(conversation_id).name)[0]

    @staticmethod
    def parse(path: Path, raw: bytes) -> dict[str, Any]:
        """The clear JSON object of a file (no decryption), or CorruptConversationError."""
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise CorruptConversationError(
                path, failures.with_details(_("not valid JSON"), str(err))
            ) from None
        except RecursionError:
            raise CorruptConversationError(path, _("JSON nested too deeply")) from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CorruptConversationError(path, _("not a Custodia conversation file"))
        version = data.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise CorruptConversationError(
                path,
                _("format version {version!r} is newer than this Custodia knows ({known})").format(
                    version=version, known=VERSION
                ),
            )
        for key in ("name", "date", "provider", "model"):
            if not isinstance(data.get(key), str):
                raise CorruptConversationError(
                    path, _("field {key!r} is missing or not text").format(key=key)
                )
            data[key] = clean_text(data[key])  # a "\\udfff" escape: never into the index
        if isinstance(data.get("key_id"), str):
            data["key_id"] = clean_text(data["key_id"])
        return data

    def header(self, file: str) -> dict[str, Any] | None:
        """The clear fields of a file, or None when even those cannot be read."""
        path = self.folder / file
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                return None  # not worth reading for a listing: its row says why
            data = self.parse(path, path.read_bytes())
        except (OSError, CorruptConversationError):
            return None
        kid = data.get("key_id")
        title = data.get("title")
        return {k: data[k] for k in ("name", "date", "provider", "model")} | {
            "encrypted": bool(data.get("encrypted")),
            "key_id": kid if isinstance(kid, str) else "",
            "title": clean_text(title) if isinstance(title, str) else "",
        }

    def decode(self, path: Path, raw: bytes) -> Conversation:
        data = self.parse(path, raw)
        history_field = data.get("history")
        encrypted = bool(data.get("encrypted"))
        kid = data.get("key_id") if isinstance(data.get("key_id"), str) else None
        if encrypted:
            if not isinstance(history_field, str):
                raise CorruptConversationError(path, _("the encrypted history is not a token"))
            history_raw = self._decrypt(path, history_field, kid)
        else:
            history_raw = history_field
        if not isinstance(history_raw, list):
            raise CorruptConversationError(path, _("the history is not a list of messages"))
        if len(history_raw) > MAX_MESSAGES:
            raise ConversationTooLargeError(
                path,
                _(
                    "{count} messages, over the {most} a conversation may hold; it is not "
                    "indexed or searched; the file is left untouched"
                ).format(count=number(len(history_raw)), most=number(MAX_MESSAGES)),
            )
        try:
            history = [StoredMessage.from_json(m) for m in history_raw]
        except ValueError as err:
            raise CorruptConversationError(
                path, failures.with_details(_("a message of the history is damaged"), str(err))
            ) from None
        title = ""
        title_field = data.get("title")
        title_token = ""
        if isinstance(title_field, str) and title_field:
            if encrypted:
                title_token = title_field
                try:
                    title_raw = self._decrypt(path, title_field, kid)
                except ConversationError as err:  # the history opened: only the title is lost
                    logging.getLogger(__name__).warning(_("%s: title not read: %s"), path.name, err)
                    title_raw, title_token = "", ""
                title = fit_title(title_raw)
            else:
                title = fit_title(title_field)
        return Conversation(
            id=path.name[: -len(SUFFIX)] if path.name.endswith(SUFFIX) else str(data.get("id")),
            name=data["name"],
            date=data["date"],
            provider=data["provider"],
            model=data["model"],
            history=history,
            encrypted=encrypted,
            key_id=kid or "",
            title=title,
            title_token=title_token,
        )

    def _decrypt(self, path: Path, token: str, kid: str | None) -> Any:
        cipher = self.cipher
        if cipher is None:
            raise KeyRequiredError(
                path,
                failures.with_details(
                    _("the history is encrypted and no key is set (in the app or the environment)"),
                    "CONVERSATIONS_KEY",
                ),
            )
        if kid is not None and not cipher.knows(kid):
            raise WrongKeyError(
                path,
                _(
                    "the history is encrypted with another key (key id {kid}; the key set here "
                    "has id {primary}). Set the right key; the file is left untouched."
                ).format(kid=kid, primary=cipher.primary_id),
            )
        try:
            plaintext = cipher.decrypt(token, kid)
        except (InvalidToken, UnicodeEncodeError):
            if kid is None:
                raise WrongKeyError(
                    path, _("the history cannot be decrypted with the key set here")
                ) from None
            raise CorruptConversationError(
                path,
                _(
                    "the encrypted history is damaged or truncated (the key is right); "
                    "the file is left untouched"
                ),
            ) from None
        try:
            return json.loads(plaintext.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise CorruptConversationError(path, _("the decrypted history is not JSON")) from None

    # -- writing ---------------------------------------------------------------------------
    def writes_encrypted(self) -> bool:
        """New writes are encrypted (a key is set, not only keys that read)."""
        return self.cipher is not None and self.cipher.can_encrypt

    def index_title(self, conversation: Conversation, *, written: bool = False) -> str:
        """The title as the index may hold it: the token of an encrypted file, never a
        plaintext title (the index holds no message text, CA3): "" for a clear one, whose
        title :meth:`head_title` reads from the file's first lines instead.

        For a file just ``written`` the token is made under the primary key (the file's);
        for a file read, it is the file's own token (under the file's key)."""
        if written:
            return self.stored_title(conversation) if self.writes_encrypted() else ""
        return conversation.title_token if conversation.encrypted else ""

    def head_title(self, file: str) -> str:
        """The clear ``title`` of ``file`` from its first few KiB (written before the
        history), or "" — cheap enough to list thousands of conversations."""
        try:
            with open(self.folder / file, "rb") as fh:
                head = fh.read(TITLE_HEAD_BYTES).decode("utf-8", "ignore")
        except OSError:
            return ""
        at = head.find('\n "title": ')
        end = head.find('\n "history": ')
        if at < 0 or (0 <= end < at):
            return ""
        try:
            value, _ = json.JSONDecoder().raw_decode(head, at + len('\n "title": '))
        except ValueError:
            return ""
        return fit_title(value)

    def stored_title(self, conversation: Conversation) -> str:
        """The ``title`` field as it is written: a token under the primary key when the
        history is encrypted (it comes from a message), the text otherwise; "" for none."""
        if not conversation.title:
            return ""
        if self.cipher is not None and self.writes_encrypted():
            text = json.dumps(clean_text(conversation.title), ensure_ascii=False)
            return self.cipher.encrypt(text.encode("utf-8"))[1]
        return clean_text(conversation.title)

    def encode(self, conversation: Conversation) -> bytes:
        history: Any = [m.to_json() for m in conversation.history]
        data: dict[str, Any] = {
            "format": FORMAT,
            "version": VERSION,
            "id": conversation.id,
            "name": clean_text(conversation.name),
            "date": clean_text(conversation.date),
            "provider": clean_text(conversation.provider),
            "model": clean_text(conversation.model),
            "encrypted": False,
        }
        if conversation.title:
            data["title"] = self.stored_title(conversation)
        if self.cipher is not None and self.writes_encrypted():
            plaintext = json.dumps(history, ensure_ascii=False, separators=(",", ":"))
            kid, token = self.cipher.encrypt(plaintext.encode("utf-8"))
            data["encrypted"] = True
            data["key_id"] = kid
            history = token
        data["history"] = history
        return (json.dumps(data, ensure_ascii=False, indent=1) + "\n").encode("utf-8")

    def write(self, conversation: Conversation, *, create: bool = False) -> FileStamp:
        """Atomically replace (or, with ``create``, add) the file; return its new stamp.

        With ``create`` an existing file is never replaced: :class:`FileExistsError`.
        """
        self.ensure()
        final = self.path(conversation.id)
        check_size(final, conversation)
        payload = self.encode(conversation)
        if len(payload) > MAX_FILE_BYTES:
            raise ConversationTooLargeError(
                final,
                _(
                    "it would be {size} MiB, over the {most} MiB a conversation may hold: not "
                    "saved (start a new conversation)"
                ).format(size=number(len(payload) / 2**20, 1), most=number(MAX_FILE_BYTES / 2**20)),
            )
        tmp = self.folder / f".{conversation.id}.{uuid.uuid4().hex[:8]}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                view = memoryview(payload)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            if create:
                os.link(tmp, final)  # fails with FileExistsError: never replaces
                os.unlink(tmp)
            else:
                os.replace(tmp, final)
            fsync_dir(self.folder)
            return FileStamp.of(os.stat(final))
        except FileExistsError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        except OSError as err:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise StoreUnavailableError(
                failures.failed(_("{path}: the file cannot be written").format(path=final), err)
            ) from err

    def delete(self, conversation_id: str) -> None:
        path = self.path(conversation_id)
        try:
            path.unlink()
        except FileNotFoundError:
            raise ConversationNotFoundError(path, _("no such conversation")) from None
        except OSError as err:
            raise StoreUnavailableError(
                failures.failed(_("{path}: the file cannot be deleted").format(path=path), err)
            ) from err
        fsync_dir(self.folder)

    def remove_stale_temporaries(self, older_than: float = 3600.0) -> int:
        """Remove temporaries left by a crash (older than ``older_than`` s: not in flight)."""
        removed = 0
        limit = time.time() - older_than
        for path in self.folder.glob(".*.tmp"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < limit:
                    path.unlink()
                    removed += 1
        return removed


def iter_conversations(files: ConversationFiles) -> Iterator[Conversation]:
    """Every readable conversation (unreadable ones skipped), sorted by file name."""
    for name in sorted(files.scan()):
        try:
            yield files.read(name)[0]
        except ConversationError:  # unreadable, corrupt, wrong key, too large, gone
            continue


#: names that moved to :mod:`.rotation` when this module was split, still importable from
#: here for the callers written before (the tests, the benches)
_ROTATION_NAMES = frozenset(
    {
        "ROTATION_JOURNAL",
        "SET_ASIDE_FILE",
        "SET_ASIDE_FORMAT",
        "RotationJournal",
        "RotationReport",
        "check_history_keys",
        "pending_rotation",
        "rotate",
        "set_aside",
        "set_aside_key_ids",
    }
)


def __getattr__(name: str) -> Any:
    """A name of :mod:`.rotation`, looked up there when first asked for here (PEP 562)."""
    if name in _ROTATION_NAMES:
        from backends.conversations import rotation  # noqa: PLC0415 — lazy: it imports this module

        return getattr(rotation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
