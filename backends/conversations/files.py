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
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import re
import time
import unicodedata
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.fernet import InvalidToken

from backends.conversations.errors import (
    ConversationError,
    ConversationNotFoundError,
    ConversationTooLargeError,
    CorruptConversationError,
    HistoryKeyRequiredError,
    HistoryWrongKeyError,
    InvalidNameError,
    KeyRequiredError,
    RotationInProgressError,
    UnreadableFileError,
    WrongKeyError,
)
from backends.conversations.keys import HistoryCipher, key_id
from backends.errors import StoreUnavailableError
from backends.progress import Progress

FORMAT = "custodia.conversation"
VERSION = 1
SUFFIX = ".json"
ROTATION_JOURNAL = ".rotation.journal"
#: key ids of an earlier history the user chose to set aside (its key was lost): those
#: files are kept untouched, listed as locked, and no longer block new conversations
SET_ASIDE_FILE = ".locked.json"
SET_ASIDE_FORMAT = "custodia.conversations.locked"
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")
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
        path, f"cannot read the file ({err.strerror or err}); it is left untouched"
    )


def too_large(path: Path, size: int) -> ConversationTooLargeError:
    return ConversationTooLargeError(
        path,
        f"the file is {size / 2**20:.1f} MiB, over the {MAX_FILE_BYTES / 2**20:.0f} MiB a "
        "conversation may hold; it is not read, indexed or searched (move it out of the "
        "folder); the file is left untouched",
    )


# -- text that UTF-8 cannot hold ----------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
#: what replaces a character UTF-8 cannot encode (a lone surrogate)
REPLACEMENT = "\ufffd"


def repair_text(text: str) -> tuple[str, int]:
    """``text`` with every lone surrogate replaced by U+FFFD, and how many were replaced.

    Lone surrogates come from bytes that are not UTF-8 (``$'caf\\xe9'`` on a command line
    arrives as ``'caf\\udce9'``) or from a JSON escape such as ``"\\udfff"``; UTF-8 cannot
    encode them, so left in they crash the file, the index and the cipher. A valid pair is
    joined into its character.
    """
    if _SURROGATE.search(text) is None:
        return text, 0
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count(REPLACEMENT) - text.count(REPLACEMENT)


def clean_text(text: str) -> str:
    """:func:`repair_text` without the count (writing and reading: never crash)."""
    return repair_text(text)[0]


def repaired_notice(count: int, what: str) -> str:
    """The notice shown when ``count`` characters of ``what`` were repaired ("" when none)."""
    if not count:
        return ""
    return (
        f"{what}: {count} character(s) that are not valid text (invalid UTF-8 or a lone "
        f"surrogate) replaced by {REPLACEMENT}"
    )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_id() -> str:
    return uuid.uuid4().hex


def is_valid_id(value: str) -> bool:
    return bool(_ID.match(value))


# -- names ------------------------------------------------------------------------------------

#: the longest conversation name, in characters (after tidying)
MAX_NAME = 200


def tidy_name(name: str) -> str:
    """``name`` on one line: whitespace runs (newlines, tabs) become one space, control
    characters (a terminal escape, a NUL) are dropped, the ends are stripped."""
    cleaned = "".join(c for c in clean_text(name) if c.isspace() or unicodedata.category(c) != "Cc")
    return " ".join(cleaned.split())


def check_name(name: str) -> str:
    """The tidied name, or :class:`InvalidNameError` when it is empty or too long."""
    tidied = tidy_name(name)
    if not tidied:
        raise InvalidNameError("a conversation needs a name (it is empty)")
    if len(tidied) > MAX_NAME:
        raise InvalidNameError(
            f"a conversation name is at most {MAX_NAME} characters (this one has {len(tidied)})"
        )
    return tidied


def fit_title(value: object) -> str:
    """A stored title as shown (one line, at most :data:`MAX_NAME`), "" when it is not text
    or empty (then the name is shown; never the "Conversation" placeholder)."""
    if not isinstance(value, str) or not tidy_name(value):
        return ""
    return fit_name(value)


def fit_name(name: str, default: str = "Conversation") -> str:
    """The tidied name cut to :data:`MAX_NAME` with "…" (imports, listings: never refused)."""
    tidied = tidy_name(name) or default
    return tidied if len(tidied) <= MAX_NAME else tidied[: MAX_NAME - 1] + "…"


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


#: the longest title made from a first message (characters)
TITLE_CHARS = 60
_TITLE_LEAD = re.compile(r"^(?:#{1,6}\s+|>\s*)+")
_TITLE_MARKUP = re.compile(r"\*\*|__|`+")
#: how much of a clear file is read to find its title for a listing
TITLE_HEAD_BYTES = 4096


def make_title(message: str) -> str:
    """A short title from a first message: its first line, cut at a word near
    :data:`TITLE_CHARS` with "…"; "" when nothing is left."""
    text = tidy_name(message.strip().splitlines()[0] if message.strip() else "")
    # Markdown emphasis and code marks, a heading's or quote's lead: not part of a title
    text = _TITLE_MARKUP.sub("", _TITLE_LEAD.sub("", text)).strip()
    if len(text) <= TITLE_CHARS:
        return text
    cut = text[: TITLE_CHARS - 1]
    space = cut.rfind(" ")
    if space >= TITLE_CHARS // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"


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
            f"{len(conversation.history)} messages, over the {MAX_MESSAGES} a conversation "
            "may hold: not saved (start a new conversation)",
        )


def _fsync_dir(folder: Path) -> None:
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
            raise StoreUnavailableError(f"{self.folder}: cannot create folder: {err}") from err

    def path(self, conversation_id: str) -> Path:
        if not is_valid_id(conversation_id):
            raise ConversationNotFoundError(conversation_id, "not a conversation id")
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
            raise StoreUnavailableError(f"{self.folder}: cannot list: {err}") from err
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
            raise ConversationNotFoundError(path, "no such conversation") from None
        except OSError as err:
            if is_file_error(err):  # this file only: it fails alone, like a corrupt one
                raise file_unreadable(path, err) from None
            raise StoreUnavailableError(f"{path}: cannot read: {err}") from err
        return self.decode(path, raw), stamp

    def load(self, conversation_id: str) -> Conversation:
        return self.read(self.path(conversation_id).name)[0]

    @staticmethod
    def parse(path: Path, raw: bytes) -> dict[str, Any]:
        """The clear JSON object of a file (no decryption), or CorruptConversationError."""
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise CorruptConversationError(path, f"not valid JSON ({err})") from None
        except RecursionError:
            raise CorruptConversationError(path, "JSON nested too deeply") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise CorruptConversationError(path, "not a Custodia conversation file")
        version = data.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise CorruptConversationError(
                path, f"format version {version!r} is newer than this Custodia knows ({VERSION})"
            )
        for key in ("name", "date", "provider", "model"):
            if not isinstance(data.get(key), str):
                raise CorruptConversationError(path, f"field {key!r} is missing or not text")
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
                raise CorruptConversationError(path, "the encrypted history is not a token")
            history_raw = self._decrypt(path, history_field, kid)
        else:
            history_raw = history_field
        if not isinstance(history_raw, list):
            raise CorruptConversationError(path, "the history is not a list of messages")
        if len(history_raw) > MAX_MESSAGES:
            raise ConversationTooLargeError(
                path,
                f"{len(history_raw)} messages, over the {MAX_MESSAGES} a conversation may "
                "hold; it is not indexed or searched; the file is left untouched",
            )
        try:
            history = [StoredMessage.from_json(m) for m in history_raw]
        except ValueError as err:
            raise CorruptConversationError(path, f"bad message in history: {err}") from None
        title = ""
        title_field = data.get("title")
        title_token = ""
        if isinstance(title_field, str) and title_field:
            if encrypted:
                title_token = title_field
                try:
                    title_raw = self._decrypt(path, title_field, kid)
                except ConversationError as err:  # the history opened: only the title is lost
                    logging.getLogger(__name__).warning("%s: title not read: %s", path.name, err)
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
                path, "the history is encrypted and no key is set (CONVERSATIONS_KEY or the app)"
            )
        if kid is not None and not cipher.knows(kid):
            raise WrongKeyError(
                path,
                f"the history is encrypted with another key (key id {kid}; the key set here "
                f"has id {cipher.primary_id}). Set the right key; the file is left untouched.",
            )
        try:
            plaintext = cipher.decrypt(token, kid)
        except (InvalidToken, UnicodeEncodeError):
            if kid is None:
                raise WrongKeyError(
                    path, "the history cannot be decrypted with the key set here"
                ) from None
            raise CorruptConversationError(
                path,
                "the encrypted history is damaged or truncated (the key is right); "
                "the file is left untouched",
            ) from None
        try:
            return json.loads(plaintext.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise CorruptConversationError(path, "the decrypted history is not JSON") from None

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
                f"it would be {len(payload) / 2**20:.1f} MiB, over the "
                f"{MAX_FILE_BYTES / 2**20:.0f} MiB a conversation may hold: not saved "
                "(start a new conversation)",
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
            _fsync_dir(self.folder)
            return FileStamp.of(os.stat(final))
        except FileExistsError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        except OSError as err:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise StoreUnavailableError(f"{final}: cannot write: {err}") from err

    def delete(self, conversation_id: str) -> None:
        path = self.path(conversation_id)
        try:
            path.unlink()
        except FileNotFoundError:
            raise ConversationNotFoundError(path, "no such conversation") from None
        except OSError as err:
            raise StoreUnavailableError(f"{path}: cannot delete: {err}") from err
        _fsync_dir(self.folder)

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


# -- key rotation -----------------------------------------------------------------------------


@dataclass
class RotationReport:
    rotated: int = 0
    already: int = 0
    #: files that could not be read (wrong key, corrupt): left untouched, listed here
    failed: list[tuple[str, str]] = field(default_factory=list)
    resumed: bool = False


class RotationJournal:
    """``.rotation.journal``: a header line naming the new key id, then one line per file done.

    Appended with ``fsync`` after each file, so an interrupted rotation resumes where it
    stopped; each file is itself replaced atomically, so it is always under one key or the
    other. The key id in every file is the ground truth; the journal makes resuming cheap and
    tells a start-up that a rotation is unfinished.
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / ROTATION_JOURNAL

    def read(self) -> tuple[str, set[str]] | None:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StoreUnavailableError(f"{self.path}: cannot read: {err}") from err
        try:
            header = json.loads(lines[0])
            new_kid = str(header["new_key_id"])
        except (IndexError, ValueError, KeyError, TypeError):
            return None  # a header torn by a crash: nothing was rotated under it yet
        return new_kid, {line.strip() for line in lines[1:] if line.strip()}

    def begin(self, new_kid: str) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(
                fd, (json.dumps({"new_key_id": new_kid, "started": now_iso()}) + "\n").encode()
            )
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.path)
        _fsync_dir(self.path.parent)

    def mark(self, file: str) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, (file + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def finish(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        _fsync_dir(self.path.parent)


def pending_rotation(folder: Path) -> str:
    """The new key id of an unfinished rotation, or ""."""
    state = RotationJournal(folder).read()
    return state[0] if state else ""


def set_aside_key_ids(folder: Path) -> frozenset[str]:
    """Key ids of the earlier histories set aside here (``.locked.json``); empty when none.

    A damaged marker counts as none: the files it named are then locked again (refused, as
    before), never rewritten.
    """
    try:
        data = json.loads((folder / SET_ASIDE_FILE).read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != SET_ASIDE_FORMAT:
            return frozenset()
        return frozenset(str(item["key_id"]) for item in data["locked"])
    except FileNotFoundError:
        return frozenset()
    except (OSError, ValueError, KeyError, TypeError) as err:
        logging.getLogger(__name__).warning("%s is unreadable (%s); ignored", SET_ASIDE_FILE, err)
        return frozenset()


def set_aside(folder: Path, key_ids: Iterable[str], files: int) -> None:
    """Record ``key_ids`` as an earlier history kept aside (atomically, 0600, fsync'd)."""
    from backends.conversations.keys import write_private

    known = set(set_aside_key_ids(folder))
    items = [{"key_id": k} for k in sorted(known | set(key_ids))]
    text = json.dumps(
        {
            "format": SET_ASIDE_FORMAT,
            "version": 1,
            "since": now_iso(),
            "files": files,
            "locked": items,
        },
        indent=1,
    )
    write_private(folder / SET_ASIDE_FILE, text + "\n", what="the locked history's record")


def _key_list(key_ids: Iterable[str]) -> str:
    return ", ".join(sorted(key_ids)) or "none recorded"


def check_history_keys(
    folder: Path, new_key: str, old_keys: Sequence[str], ignore: Iterable[str] = ()
) -> None:
    """Refuse a rotation that would split the history across keys.

    When encrypted conversations exist and **none** of them is under the new key or one of
    ``old_keys`` (the current and pending keys), the key they are under is not set here:
    re-encrypting the rest under a new key would leave the folder needing two keys (and
    switching to the new one would lock those files out). :class:`HistoryKeyError`, before
    anything is changed. A stray file under another key while the rest is under a key set
    here is not refused: rotation reports it and leaves it untouched, as before.

    Cheap: files are read (their clear JSON, no decryption) only until the first one under
    a key given here — usually the first encrypted file. Files under a key id in ``ignore``
    (an earlier history set aside) are left out: rotation leaves them untouched.
    """
    ignored = set(ignore) | set(set_aside_key_ids(folder))
    cipher = HistoryCipher([new_key, *old_keys])
    files = ConversationFiles(folder, cipher)
    foreign: dict[str, int] = {}
    for name, stamp in sorted(files.scan().items()):
        path = folder / name
        if stamp.size > MAX_FILE_BYTES:
            continue  # not read at all: rotation reports it and leaves it alone
        try:
            data = files.parse(path, path.read_bytes())
        except (OSError, CorruptConversationError):
            continue  # not a key question: rotation reports it and leaves it alone
        if not data.get("encrypted"):
            continue
        kid = data.get("key_id") if isinstance(data.get("key_id"), str) else None
        if kid is not None and cipher.knows(kid):
            return
        if kid is not None and kid in ignored:
            continue
        token = data.get("history")
        if kid is None and isinstance(token, str):
            try:
                cipher.decrypt(token, None)
                return
            except (InvalidToken, UnicodeEncodeError):
                pass
        foreign[kid or "(none)"] = foreign.get(kid or "(none)", 0) + 1
    if not foreign:
        return
    count = sum(foreign.values())
    ids = _key_list(foreign)
    todo = (
        f"Set CONVERSATIONS_KEY to their key first (or give that key in “Set key…” in the app); "
        f"if it is lost for good, move those files out of {folder} first. Nothing was changed."
    )
    if not old_keys:
        raise HistoryKeyRequiredError(
            f"{count} conversation(s) are already encrypted (key id {ids}) and no current key "
            "is set here: a new key now would encrypt the rest under another key and split "
            f"the history across two keys. {todo}",
            tuple(sorted(foreign)),
            count,
        )
    raise HistoryWrongKeyError(
        f"the current key (key id {_key_list(key_id(k) for k in old_keys)}) opens none of "
        f"the {count} encrypted conversation(s) (key id {ids}): a wrong or mistyped key? A new "
        f"key now would split the history across keys. {todo}",
        tuple(sorted(foreign)),
        count,
    )


def rotate(
    folder: Path, new_key: str, old_keys: list[str], progress: Progress | None = None
) -> RotationReport:
    """Re-encrypt every readable file under ``new_key`` (clear files get encrypted too).

    Resumable: run it again with the same new key after a crash or a cancel. A different new
    key while a rotation is unfinished is refused (:class:`RotationInProgressError`).
    Unreadable files are reported and never rewritten. When encrypted files exist and none
    is under one of the keys given, nothing is changed (:func:`check_history_keys`).
    """
    progress = progress or Progress()
    new_kid = key_id(new_key)
    journal = RotationJournal(folder)
    report = RotationReport()
    state = journal.read()
    if state is not None and state[0] != new_kid:
        raise RotationInProgressError(
            f"a key rotation to key id {state[0]} is unfinished; run it again with that key to "
            f"resume it (this key has id {new_kid}); when its key was saved (a generated key, "
            "or the OS keyring), `custodia rotate-key` without a new key finishes it"
        )
    check_history_keys(folder, new_key, old_keys)
    done: set[str] = set()
    if state is None:
        journal.begin(new_kid)
    else:
        report.resumed = True
        done = state[1]
    files = ConversationFiles(folder, HistoryCipher([new_key, *old_keys]))
    names = sorted(files.scan())
    for stray in files.strays():  # a folder named x.json: not a conversation, never touched
        report.failed.append((stray, "not a regular file; left untouched"))
    progress.start(len(names), "re-encrypting conversations")
    for name in names:
        progress.check()
        if name in done:
            report.already += 1
            progress.advance(1, name)
            continue
        try:
            conversation, _ = files.read(name)
        except ConversationNotFoundError:
            progress.advance(1, name)
            continue
        except ConversationError as err:  # wrong key, corrupt, no permission, too large
            report.failed.append((name, err.detail))
            progress.advance(1, name)
            continue
        if conversation.encrypted and conversation.key_id == new_kid:
            report.already += 1
        else:
            try:
                files.write(conversation)
            except ConversationError as err:  # too large once encrypted: left as it was
                report.failed.append((name, err.detail))
                progress.advance(1, name)
                continue
            report.rotated += 1
        journal.mark(name)
        progress.advance(1, name)
    journal.finish()
    return report


def iter_conversations(files: ConversationFiles) -> Iterator[Conversation]:
    """Every readable conversation (unreadable ones skipped), sorted by file name."""
    for name in sorted(files.scan()):
        try:
            yield files.read(name)[0]
        except ConversationError:  # unreadable, corrupt, wrong key, too large, gone
            continue
