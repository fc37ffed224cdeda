"""Typed errors of the conversation agent. All are environment errors: shown, never fatal.

A problem with one conversation file (wrong key, corrupt JSON, truncated token) is raised for
that conversation only; listing, search and the other conversations keep working, and the
file is never rewritten by Custodia while it cannot be read.
"""

from __future__ import annotations

from pathlib import Path

from backends.errors import CustodiaEnvironmentError
from backends.errors import EmbedderMismatchError as EmbedderMismatchError
from backends.i18n import N_, _

#: the reasons a conversation cannot be read, as the index keeps them (English, counted by
#: name) and as a person reads them (translated where shown: :func:`error_text`)
REASONS = (
    N_("unreadable"), N_("not found"), N_("corrupt"), N_("too large"), N_("key required"),
    N_("wrong key"),
)  # fmt: skip


def error_text(error: str) -> str:
    """An index row's error (``"wrong key: the history is …"``) in the user's words: the
    reason translated, the message after it as it was written (already translated)."""
    reason, colon, rest = error.partition(": ")
    if reason in REASONS:
        return _(reason) + colon + rest
    return error


class ConversationError(CustodiaEnvironmentError):
    """Something is wrong with one conversation file; ``path`` names it."""

    #: short machine-readable reason, shown in listings ("wrong key", "corrupt", ...)
    reason = "unreadable"

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{Path(path).name}: {message}")
        self.path = Path(path)
        self.detail = message


class ConversationNotFoundError(ConversationError):
    reason = "not found"


class CorruptConversationError(ConversationError):
    """Not valid JSON, not our format, or a history token that is damaged or truncated."""

    reason = "corrupt"


class UnreadableFileError(ConversationError):
    """The file cannot be opened or read (no permission, an I/O error on that file): like a
    corrupt one, it fails alone and is never rewritten."""

    reason = "unreadable"


class ConversationTooLargeError(ConversationError):
    """The file is over the size or message limit: reading (and indexing) it would cost
    minutes, so it is left alone, untouched, and named (``files.MAX_FILE_BYTES``)."""

    reason = "too large"


class KeyRequiredError(ConversationError):
    """The history is encrypted and no key is configured."""

    reason = "key required"


class WrongKeyError(ConversationError):
    """The history is encrypted with a key other than the configured one(s)."""

    reason = "wrong key"


class InvalidKeyError(CustodiaEnvironmentError):
    """A key that is not a Fernet key (32 url-safe base64-encoded bytes)."""


class RotationInProgressError(CustodiaEnvironmentError):
    """An interrupted key rotation must be resumed with the same new key first."""


class InvalidNameError(CustodiaEnvironmentError):
    """A conversation name that is empty or longer than the limit (after tidying)."""


class HistoryKeyError(CustodiaEnvironmentError):
    """The encrypted history here is under a key that is not set: writing (or rotating) now
    would put conversations under another key than the rest. Nothing was written.

    ``key_ids`` are the key ids of the encrypted files that the keys set here do not open,
    ``files`` how many such files there are.
    """

    def __init__(self, message: str, key_ids: tuple[str, ...] = (), files: int = 0) -> None:
        super().__init__(message)
        self.key_ids = key_ids
        self.files = files


class HistoryKeyRequiredError(HistoryKeyError):
    """The history is encrypted and no key is set: a new message would be written in clear."""


class HistoryWrongKeyError(HistoryKeyError):
    """A key is set, but it opens none of the encrypted conversations (a wrong or mistyped
    key): a new message would be written under a key nothing else uses."""


class TurnFailedError(CustodiaEnvironmentError):
    """The chat model failed during a turn. The user's message — and whatever the model had
    said, marked stopped — is saved in ``conversation_id``, so the turn can be continued."""

    def __init__(self, message: str, conversation_id: str) -> None:
        super().__init__(message)
        self.conversation_id = conversation_id
