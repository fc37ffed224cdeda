"""The personal memory assistant: a chat that remembers facts about its user (SPEC §2).

Each turn recalls the memories most similar to the message — those at or above a threshold
tuned per embedder — and gives them to the chat model as context. Memories are created
explicitly ("remember that …", or a button on any message in the desktop), and proposed from
what the user says about themselves ("I am…", "my X is…"); a proposal is stored only once the
user confirms it. An exact duplicate is skipped; a near duplicate is never stored silently
nor dropped silently: it comes back as a proposal to update the memory it resembles.

Qt-free: the desktop runs these methods in workers, the CLI calls them directly.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from backends import grounding
from backends.config import Config
from backends.grounding import CheckedSentence, Source
from backends.models.chat import ChatModel, Message, Prompt
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.services import StoreOpener, open_store
from backends.stores.memories import (
    EmptyTextError,
    Hit,
    Memory,
    MemoryNotFoundError,
    MemoryStore,
    StoredMemory,
    StoreStats,
)
from backends.text import checked_text

if TYPE_CHECKING:
    from backends.services import Services

STORE_FILE = "memories.sqlite3"

#: Recall threshold (cosine) per embedder family. The hashing test embedder only sees shared
#: words, so related texts score lower than with MiniLM; measured in docs/MEMORIES.md.
RECALL_THRESHOLDS: dict[str, float] = {"hashing": 0.28, "all-MiniLM-L6-v2": 0.30}
#: At or above this similarity a new memory is offered as an update of the old one.
NEAR_DUPLICATE_THRESHOLDS: dict[str, float] = {"hashing": 0.75, "all-MiniLM-L6-v2": 0.85}
DEFAULT_RECALL_THRESHOLD = 0.35
DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.88

#: The assistant's own words (one catalogue, so a translation can follow).
MESSAGES = {
    "system": (
        "You are Custodia, a personal assistant with a long-term memory. The context lists "
        "facts the user told you in earlier conversations. Use them when they help to answer; "
        "never invent facts about the user. Answer briefly."
    ),
    "memory_label": "The user said earlier: {text}",
    "created": "OK, I will remember that: “{text}”.",
    "duplicate": "I already remember that: “{text}”.",
    "refreshed": "I already remembered that; I have re-indexed it: “{text}”.",
    "near_duplicate": (
        "I already remember something very similar: “{existing}” (similarity {similarity:.2f}). "
        "Shall I update it to “{text}”, or keep both?"
    ),
    "updated": "Updated: “{existing}” is now “{text}”.",
    "limited_recall": (
        "Recall is limited: {stale} of {total} memories were embedded by another model "
        "({others}) and are not searched until they are re-embedded with {model}."
    ),
}

_REMEMBER = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+|would you\s+)?"
    r"(?:remember|note|keep in mind|recuerda|acuérdate de|apunta)"
    r"(?:\s+(?:that|que))?\s*[:,]?\s+(?P<fact>.+?)\s*(?:,?\s*please)?[.!]*\s*$",
    re.IGNORECASE | re.DOTALL,
)
_FIRST_PERSON = re.compile(
    r"^(?:"
    r"i\s+(?:am|was|have|had|live|lived|work|worked|study|studied|like|love|hate|prefer|"
    r"enjoy|dislike|own|speak|grew up|was born|usually|always|never|can't|cannot|"
    r"don't|do not|go|play|drive|use|need|take)\b"
    r"|i'm\b|i've\b"
    r"|my\s+[\w'’ -]{1,40}?\s+(?:is|are|was|were|has|have|lives|works|likes|loves)\b"
    r"|(?:soy|estoy|tengo|vivo|trabajo|estudio|me llamo|me gusta|me encanta|odio|prefiero|"
    r"nací|hablo|no me gusta|no tengo|no soy)\b"
    r"|mis?\s+[\w'’ -]{1,40}?\s+(?:es|son|está|vive|trabaja|se llama)\b"
    r")",
    re.IGNORECASE,
)
_NOT_A_FACT = re.compile(
    r"^(?:i\s+am|i'm)\s+(?:wondering|asking|curious|not sure|trying to|looking for|just)\b"
    r"|^i\s+(?:need|have)\s+(?:to know|a question|you)\b",
    re.IGNORECASE,
)
#: what "remember …" leaves when nothing follows (a pronoun, not a fact)
_NO_FACT = frozenset({"", "that", "this", "it", "que", "eso", "esto"})
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")


def normalise_text(text: str) -> str:
    """How a memory is stored: single spaces, no trailing full stop, capital first letter."""
    cleaned = " ".join(str(text).split()).rstrip(" .")
    return cleaned[:1].upper() + cleaned[1:]


def remember_request(message: str) -> str | None:
    """The fact in "remember that …" (or "recuerda que …"), else None."""
    match = _REMEMBER.match(message)
    if match is None or message.rstrip().endswith("?"):
        return None
    fact = normalise_text(match.group("fact"))
    # "remember that", "remember that:", "remember this 😀": a pronoun or no word at all
    if fact.strip(" \t:;,.!-—–").lower() in _NO_FACT or not re.search(r"\w\w", fact):
        return None
    return fact or None


def factual_statements(message: str) -> list[str]:
    """First-person factual sentences of ``message`` (a simple heuristic, no model)."""
    out: list[str] = []
    for sentence in _SENTENCES.split(message):
        sentence = sentence.strip().strip("\"'“”").strip()
        if not sentence or sentence.endswith("?") or "?" in sentence:
            continue
        words = sentence.split()
        if not 3 <= len(words) <= 40:
            continue
        if _FIRST_PERSON.match(sentence) and not _NOT_A_FACT.match(sentence):
            text = normalise_text(sentence.rstrip("!;"))
            if text and text not in out:
                out.append(text)
    return out


def _family(embedder_name: str) -> str:
    return embedder_name.split("-")[0] if embedder_name.startswith("hashing") else embedder_name


def recall_threshold_for(embedder_name: str) -> float:
    return RECALL_THRESHOLDS.get(_family(embedder_name), DEFAULT_RECALL_THRESHOLD)


def near_duplicate_threshold_for(embedder_name: str) -> float:
    return NEAR_DUPLICATE_THRESHOLDS.get(_family(embedder_name), DEFAULT_NEAR_DUPLICATE_THRESHOLD)


@dataclass(frozen=True)
class AssistantSettings:
    """Tunable knobs; ``None`` thresholds mean "the value measured for this embedder"."""

    recall_threshold: float | None = None
    near_duplicate_threshold: float | None = None
    recall_k: int = 5
    #: previous messages (user and assistant) sent with each turn
    history_messages: int = 8
    max_tokens: int = 256


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
        return MESSAGES[self.status].format(
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

    @property
    def from_memories(self) -> tuple[CheckedSentence, ...]:
        """The answer's sentences that one of the memories used states."""
        return tuple(c for c in self.checked if c.supported)


@dataclass(frozen=True)
class FoundMemory:
    """A memory found by the panel's search: similarity is None for a text-only match."""

    memory: Memory
    similarity: float | None = None


@dataclass(frozen=True)
class MemoryStatus:
    """What the memory panel shows above the list."""

    stats: StoreStats
    embedder: str
    dimension: int
    recall_threshold: float
    near_duplicate_threshold: float

    @property
    def recall_limited(self) -> bool:
        return self.stats.needs_reembed > 0

    def limited_recall_message(self) -> str:
        if not self.recall_limited:
            return ""
        others = [f"{dim}-d" for dim in sorted(self.stats.other_dimensions)]
        others += sorted(self.stats.other_models)
        if self.stats.unreadable:
            others.append(f"{self.stats.unreadable} unreadable")
        return MESSAGES["limited_recall"].format(
            stale=self.stats.needs_reembed,
            total=self.stats.total,
            others=", ".join(others),
            model=self.embedder,
        )


TokenCallback = Callable[[str], None]


class MemoryAssistant:
    """The service the desktop tab and the CLI talk to. Thread-safe; models load lazily."""

    def __init__(
        self,
        store_path: Path,
        embedder: Callable[[], Embedder],
        chat: Callable[[], ChatModel],
        settings: AssistantSettings | None = None,
        *,
        config: Config | None = None,
        open_store: StoreOpener = open_store,
    ) -> None:
        self.store_path = Path(store_path)
        #: the configuration the store is chosen by (the data dir of ``store_path`` if none)
        self._config = config if config is not None else Config(home=self.store_path.parent)
        self._open_store = open_store
        self.settings = settings or AssistantSettings()
        self._embedder_factory = embedder
        self._chat_factory = chat
        self._lock = threading.Lock()
        self._store: MemoryStore | None = None
        self._embedder: Embedder | None = None

    # -- lazily built pieces ---------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = self._embedder_factory()
            return self._embedder

    @property
    def store(self) -> MemoryStore:
        embedder = self.embedder
        with self._lock:
            if self._store is None:
                self._store = self._open_store(
                    "memories",
                    self._config,
                    path=self.store_path,
                    dimension=embedder.dimension,
                    embedder_name=embedder.name,
                )
            return self._store

    @property
    def chat(self) -> ChatModel:
        return self._chat_factory()

    @property
    def recall_threshold(self) -> float:
        if self.settings.recall_threshold is not None:
            return self.settings.recall_threshold
        return recall_threshold_for(self.embedder.name)

    @property
    def near_duplicate_threshold(self) -> float:
        if self.settings.near_duplicate_threshold is not None:
            return self.settings.near_duplicate_threshold
        return near_duplicate_threshold_for(self.embedder.name)

    def open(self) -> MemoryStatus:
        """Build the store and load its matrix now (the desktop does it in a worker)."""
        self.store.load()
        return self.status()

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    # -- recall ----------------------------------------------------------------------------
    def recall(
        self, message: str, k: int | None = None, threshold: float | None = None
    ) -> list[Hit]:
        """The memories relevant to ``message``: top ``k`` at or above the threshold."""
        vector = self.embedder.embed(checked_text(message, "the message"))
        return self.store.search(
            vector,
            k=self.settings.recall_k if k is None else k,
            threshold=self.recall_threshold if threshold is None else threshold,
        )

    def search(self, query: str, k: int = 10, threshold: float | None = None) -> list[Hit]:
        """Semantic search over the memories (no threshold unless given)."""
        vector = self.embedder.embed(checked_text(query, "the search"))
        return self.store.search(vector, k=k, threshold=threshold)

    def find(self, query: str, limit: int = 200) -> list[FoundMemory]:
        """The panel's search box: similar memories first (with similarity), then text
        matches. An empty query lists the most recent memories."""
        query = query.strip()
        store = self.store
        if not query:
            return [FoundMemory(m) for m in store.list(limit=limit)]
        found: list[FoundMemory] = []
        seen: set[str] = set()
        floor = self.recall_threshold / 2
        for hit in self.search(query, k=min(limit, 50), threshold=floor):
            memory = store.get(hit.text)
            if memory is not None:
                found.append(FoundMemory(memory, hit.similarity))
                seen.add(memory.text)
        for memory in store.find_text(query, limit=limit):
            if memory.text not in seen and len(found) < limit:
                found.append(FoundMemory(memory))
                seen.add(memory.text)
        return found

    def recent(self, limit: int | None = None) -> list[Memory]:
        """Memories, most recently changed first."""
        return self.store.list(limit=limit)

    def status(self) -> MemoryStatus:
        embedder = self.embedder
        return MemoryStatus(
            self.store.stats(),
            embedder.name,
            embedder.dimension,
            self.recall_threshold,
            self.near_duplicate_threshold,
        )

    # -- creating and changing memories ----------------------------------------------------
    def remember(self, text: str, source: str = "user", force: bool = False) -> RememberOutcome:
        """Store ``text`` unless it is already known.

        Exact duplicate: skipped. Near duplicate (similarity at or above the near-duplicate
        threshold): not stored, returned as ``near_duplicate`` so the user can choose to
        :meth:`update` the old memory or keep both (``force=True``).
        """
        text = normalise_text(checked_text(text, "the memory"))
        if not text:
            raise EmptyTextError("a memory needs some text")
        store = self.store
        vector = self.embedder.embed(text)
        existing = store.get(text)
        if existing is not None and existing.searchable:
            return RememberOutcome(text, "duplicate", text, 1.0, source=source)
        if existing is None and not force:
            nearest = store.nearest(vector)
            if nearest is not None and nearest.similarity >= self.near_duplicate_threshold:
                return RememberOutcome(
                    text, "near_duplicate", nearest.text, nearest.similarity, source=source
                )
        result = store.add(text, vector, source=source)
        undo = Undo(f"remember “{text}”", remove=(text,)) if result.created else None
        return RememberOutcome(text, result.status, undo=undo, source=source)

    def update(self, existing: str, new_text: str, source: str = "user") -> RememberOutcome:
        """Replace ``existing`` by ``new_text`` (an accepted near-duplicate proposal, or an
        edit in the panel). Undoable."""
        new_text = normalise_text(checked_text(new_text, "the memory"))
        if not new_text:
            raise EmptyTextError("a memory needs some text")
        previous = self.store.update(existing, new_text, self.embedder.embed(new_text))
        undo = Undo(f"edit “{existing}”", remove=(new_text,), restore=(previous,))
        if new_text == existing:
            undo = Undo(f"edit “{existing}”", restore=(previous,))
        return RememberOutcome(new_text, "updated", existing, undo=undo, source=source)

    def accept(self, proposal: Proposal, keep_both: bool = False) -> RememberOutcome:
        """The user said yes to a proposal (``keep_both``: store it beside the similar one)."""
        if proposal.kind == "update" and not keep_both:
            return self.update(proposal.existing, proposal.text, source=proposal.source)
        return self.remember(proposal.text, source=proposal.source, force=keep_both)

    def delete(self, text: str) -> Undo:
        """Delete a memory; the returned :class:`Undo` puts it back exactly as it was.

        ``text`` as stored, or as typed when it was added ("my dog is Rex." finds the
        memory stored as "My dog is Rex")."""
        previous = self.store.delete(checked_text(text, "the memory"))
        if previous is None and normalise_text(text) != text:
            previous = self.store.delete(normalise_text(text))
        if previous is None:
            raise MemoryNotFoundError(text)
        return Undo(f"delete “{text}”", restore=(previous,))

    def undo(self, undo: Undo) -> None:
        store = self.store
        for text in undo.remove:
            store.delete(text)
        for stored in undo.restore:
            store.restore(stored)

    def reembed(self, progress: Progress | None = None) -> int:
        """Re-embed every memory the current embedder cannot search (cancellable)."""
        embedder = self.embedder
        return self.store.reembed(
            embedder.embed_batch, progress, batch_size=min(max(embedder.batch_size, 16), 256)
        )

    # -- proposals -------------------------------------------------------------------------
    def propose(self, message: str) -> list[Proposal]:
        """Facts the user stated about themselves that are not stored yet: ``new``
        proposals, or ``update`` proposals when a very similar memory exists."""
        statements = factual_statements(message)
        if not statements:
            return []
        store = self.store
        vectors = self.embedder.embed_batch(statements)
        out: list[Proposal] = []
        for text, vector in zip(statements, vectors, strict=True):
            existing = store.get(text)
            if existing is not None and existing.searchable:
                continue  # exact duplicate: nothing to ask
            nearest = store.nearest(vector)
            if nearest is not None and nearest.similarity >= self.near_duplicate_threshold:
                if nearest.similarity >= 0.9999:
                    continue  # same vector, different spelling of the same text
                out.append(Proposal(text, "update", nearest.text, nearest.similarity))
            else:
                out.append(Proposal(text))
        return out

    # -- a chat turn -----------------------------------------------------------------------
    def turn(
        self,
        message: str,
        history: Sequence[Message] = (),
        on_token: TokenCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> TurnResult:
        """Answer ``message``: recall, prompt the chat model, stream its tokens to
        ``on_token``; propose the facts it states. "Remember that …" stores the fact
        instead (no model call)."""
        message = checked_text(message, "the message").strip()
        if not message:
            raise EmptyTextError("the message is empty")
        emit = on_token or (lambda piece: None)
        stop = should_stop or (lambda: False)
        fact = remember_request(message)
        if fact is not None:
            outcome = self.remember(fact, source="remember")
            answer = outcome.message()
            emit(answer)
            proposal = outcome.proposal
            return TurnResult(
                message,
                answer,
                remembered=outcome,
                proposals=(proposal,) if proposal else (),
                threshold=self.recall_threshold,
            )
        used = tuple(self.recall(message))
        chat = self.chat
        keep = self.settings.history_messages
        prompt = Prompt(
            user=message,
            system=MESSAGES["system"],
            history=tuple(history)[-keep:] if keep else (),
            context=[MESSAGES["memory_label"].format(text=h.text) for h in used],
            max_tokens=self.settings.max_tokens,
        )
        pieces: list[str] = []
        for piece in chat.stream(prompt, stop):
            pieces.append(piece)
            emit(piece)
        stopped = stop()
        proposals = tuple(self.propose(message))
        answer = "".join(pieces).strip()
        # which sentences a memory states: the rest is the model's own (general knowledge or
        # a guess), never to be read as something the user said
        checked = (
            ()
            if chat.retrieval_only or not used
            else tuple(
                grounding.check_sentences(
                    answer, [Source(i + 1, "", h.text) for i, h in enumerate(used)]
                )
            )
        )
        return TurnResult(
            message,
            answer,
            used=used,
            proposals=proposals,
            retrieval_only=chat.retrieval_only,
            model=chat.name,
            threshold=self.recall_threshold,
            stopped=stopped,
            checked=checked,
        )


def get_service(services: Services, settings: AssistantSettings | None = None) -> MemoryAssistant:
    """The one :class:`MemoryAssistant` of these services (built on first use, closed at exit).

    ``settings`` apply only when this call builds it.
    """
    return services.service(
        "memories",
        lambda: MemoryAssistant(
            services.config.path(STORE_FILE),
            lambda: services.embedder,
            lambda: services.chat_for("memories"),
            settings,
            config=services.config,
        ),
        MemoryAssistant.close,
    )
