"""What the memory assistant hands back: the values the desktop and the CLI show — a turn's
result, what became of a text to remember, a proposal waiting for the user's yes, how to undo
a change, a search's finding, the panel's status — with the words they are said in.

Plain frozen values, no behaviour beyond describing themselves, so a front end may keep them
(an undo stack, a list of proposals) without holding the assistant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backends.answers import Answer
from backends.grounding import CheckedSentence
from backends.i18n import N_, _
from backends.stores.memories import Hit, Memory, StoredMemory, StoreStats

#: The assistant's own words to the user (one catalogue, so a translation can follow): marked
#: here, translated where they are shown.
MESSAGES = {
    "created": N_("OK, I will remember that: “{text}”."),
    "duplicate": N_("I already remember that: “{text}”."),
    "refreshed": N_("I already remembered that; I have re-indexed it: “{text}”."),
    "near_duplicate": N_(
        "I already remember something very similar: “{existing}” (similarity {similarity:.2f}). "
        "Shall I update it to “{text}”, or keep both?"
    ),
    "updated": N_("Updated: “{existing}” is now “{text}”."),
    "limited_recall": N_(
        "Recall is limited: {stale} of {total} memories were embedded by another model "
        "({others}) and are not searched until they are re-embedded with {model}."
    ),
}

#: receives each piece of the model's draft as it is written
TokenCallback = Callable[[str], None]


@dataclass(frozen=True)
class Proposal:
    """A memory waiting for the user's yes: ``new``, or ``update`` of ``existing``."""

    text: str
    kind: str = "new"  # "new" | "update"
    existing: str = ""
    similarity: float = 0.0
    source: str = "conversation"


@dataclass(frozen=True)
class RememberOutcome:
    """What :meth:`MemoryAssistant.remember` did with a text."""

    text: str
    #: created | duplicate | refreshed | near_duplicate | updated
    status: str
    existing: str = ""
    similarity: float = 0.0
    undo: Undo | None = None
    source: str = "user"

    @property
    def stored(self) -> bool:
        return self.status in ("created", "refreshed", "updated")

    @property
    def proposal(self) -> Proposal | None:
        """For a near duplicate: the update the user is offered."""
        if self.status != "near_duplicate":
            return None
        return Proposal(self.text, "update", self.existing, self.similarity, self.source)

    def message(self) -> str:
        return _(MESSAGES[self.status]).format(
            text=self.text, existing=self.existing, similarity=self.similarity
        )


@dataclass(frozen=True)
class Undo:
    """How to take a change back: delete ``remove``, then put ``restore`` back as it was."""

    description: str
    remove: tuple[str, ...] = ()
    restore: tuple[StoredMemory, ...] = ()


@dataclass(frozen=True)
class TurnResult:
    """One turn: the answer, the memories it used (with similarity) and what to confirm."""

    message: str
    answer: str
    used: tuple[Hit, ...] = ()
    remembered: RememberOutcome | None = None
    proposals: tuple[Proposal, ...] = ()
    retrieval_only: bool = False
    model: str = ""
    threshold: float = 0.0
    #: the user stopped the answer: ``answer`` is what was said until then
    stopped: bool = False
    #: each sentence of a generated answer checked against the memories used (CT9's check,
    #: :mod:`backends.grounding`): ``number`` is the 1-based index into ``used``
    checked: tuple[CheckedSentence, ...] = ()
    #: the answer shown and how it was made (:mod:`backends.answers`): ``answer`` is its text
    shown: Answer | None = None
    #: whether the question was read as being about the user (:func:`answer.about_user`)
    about_user: bool = False
    #: no draft was asked of the model (its drafts rarely pass): the user may ask for one
    draft_skipped: bool = False
    #: the share of this model's drafts that passed so far (None: none judged yet)
    draft_rate: float | None = None

    @property
    def from_memories(self) -> tuple[CheckedSentence, ...]:
        """The answer's sentences that one of the memories used states."""
        return tuple(c for c in self.checked if c.supported)


@dataclass(frozen=True)
class FoundMemory:
    """A memory found by the panel's search: similarity is None for a text-only match."""

    memory: Memory
    similarity: float | None = None
    #: why it was found ("meaning 0.61 · name: Lucía"; "words" for a text match)
    why: str = ""


@dataclass(frozen=True)
class MemoryStatus:
    """What the memory panel shows above the list."""

    stats: StoreStats
    embedder: str
    dimension: int
    recall_threshold: float
    near_duplicate_threshold: float
    #: the memories not searchable were all embedded by the model memories used by default
    #: before (MiniLM): the panel re-embeds them without asking (issue 29)
    reembed_now: bool = False

    @property
    def recall_limited(self) -> bool:
        return self.stats.needs_reembed > 0

    def limited_recall_message(self) -> str:
        if not self.recall_limited:
            return ""
        others = [f"{dim}-d" for dim in sorted(self.stats.other_dimensions)]
        others += sorted(self.stats.other_models)
        if self.stats.unreadable:
            others.append(_("{count} unreadable").format(count=self.stats.unreadable))
        return _(MESSAGES["limited_recall"]).format(
            stale=self.stats.needs_reembed,
            total=self.stats.total,
            others=", ".join(others),
            model=self.embedder,
        )
