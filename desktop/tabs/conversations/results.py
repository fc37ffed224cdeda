"""What the conversations tab's jobs hand back to the GUI thread.

Every backend call of the tab runs in the worker pool and returns (or streams) one of these
frozen values; a panel's ``_on_<result>`` slot draws it. Qt-free, so a job never touches a
widget.
"""

from __future__ import annotations

from dataclasses import dataclass

from backends.answers import MODEL, Answer
from backends.conversations import (
    Conversation,
    ConversationAgent,
    EncryptionStatus,
    IndexRow,
    ModelChoice,
    SearchHit,
    TurnResult,
)


@dataclass(frozen=True)
class Started:
    """The first reading of the history: its rows, its encryption, the models to offer."""

    rows: list[IndexRow]
    status: EncryptionStatus
    choices: list[ModelChoice]


@dataclass(frozen=True)
class Listing:
    """The list and the encryption status after a change, and what to say about it."""

    rows: list[IndexRow]
    status: EncryptionStatus
    note: str = ""
    #: the current conversation's name after a rename (tidied by the agent)
    title: str = ""


@dataclass(frozen=True)
class Opened:
    """A conversation read to be shown (``serial`` tells a stale one from the last asked)."""

    serial: int
    #: None when the file is gone (deleted outside this tab): ``conversation_id`` says which
    conversation: Conversation | None
    highlight: int | None
    conversation_id: str
    #: why it cannot be opened now (damaged, wrong key since it was listed), else ""
    error: str = ""


@dataclass(frozen=True)
class Found:
    """Search hits (``serial`` tells a stale search from the last one)."""

    serial: int
    hits: list[SearchHit]
    #: "3 wrong key"...: conversations that could not be read, so were not searched
    unsearched: str = ""
    #: a refresh of shown hits (after a rename...): the status line is left as it is
    quiet: bool = False


@dataclass(frozen=True)
class Saved:
    """Streamed by a chat job once the user's message is on disk (its conversation id)."""

    conversation_id: str


@dataclass(frozen=True)
class Composed:
    """Streamed by a chat job for a history question: its answer from the past messages."""

    answer: Answer
    passages: tuple[str, ...]


@dataclass(frozen=True)
class Indexed:
    """The search index synchronised or rebuilt."""

    note: str
    #: set when the index belongs to another embedder: the user is offered a rebuild
    mismatch: str = ""


@dataclass(frozen=True)
class Refused:
    """A passphrase the store refused: what the dialog says, and the store's own words."""

    message: str
    details: str


def listing(agent: ConversationAgent, note: str = "", title: str = "") -> Listing:
    """The agent's list and status now (read inside a job)."""
    return Listing(agent.conversations(), agent.encryption_status(), note, title)


def own_policy(result: TurnResult) -> bool:
    """Whether an answer is drawn by its kinds (a history answer, or the model's with some
    sentence withheld); else the model's answer is marked as CT9 checked it."""
    shown = result.shown
    return shown is not None and (shown.mode != MODEL or bool(shown.withheld))
