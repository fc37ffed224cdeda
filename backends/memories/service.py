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

import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from backends import answers, grounding
from backends.answers import COMPOSED, MODEL, SUPPORTED, WITHHELD, Answer, DraftStats
from backends.assistants import Needs
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.grounding import CheckedSentence, Source
from backends.i18n import N_, _
from backends.memories.answer import TEXTS, compose, language, restate
from backends.memories.recall import Recall, RecallSettings
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

log = logging.getLogger(__name__)

#: memories were embedded by MiniLM by default until issue 29, by USE since: a data dir of
#: MiniLM memories is re-embedded without asking ("" is a row of unknown model, as the
#: original app wrote them)
UPGRADED_FROM = frozenset({"all-MiniLM-L6-v2", ""})
UPGRADED_TO = "use-multilingual-v3"

STORE_FILE = "memories.sqlite3"

#: Recall threshold (cosine) per embedder family. The hashing test embedder only sees shared
#: words, so related texts score lower than with MiniLM; measured in docs/MEMORIES.md.
RECALL_THRESHOLDS: dict[str, float] = {
    "hashing": 0.28,
    "all-MiniLM-L6-v2": 0.30,
    # keeps 95 % of told facts, passes as many never-told questions as MiniLM's 0.30
    "use-multilingual-v3": 0.25,
}
#: At or above this similarity a new memory is offered as an update of the old one.
NEAR_DUPLICATE_THRESHOLDS: dict[str, float] = {
    "hashing": 0.75,
    "all-MiniLM-L6-v2": 0.85,
    "use-multilingual-v3": 0.85,
}
DEFAULT_RECALL_THRESHOLD = 0.35
#: a store this small is read whole for the composed answer, besides what recall finds
LEXICAL_SCAN = 500
DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.88

#: The assistant's own words (one catalogue, so a translation can follow).
MESSAGES = {
    "system": (
        "You are Custodia, a personal assistant with a long-term memory. The context lists "
        "facts the user told you in earlier conversations. Use them when they help to answer; "
        "never invent facts about the user. Answer briefly."
    ),
    "memory_label": "[{number}] {text}",
    "draft_system": (
        "You are Custodia, a personal assistant with a long-term memory. The context lists, "
        "numbered, facts the user told you. Answer the user's question in one or two short "
        'sentences, speaking to the user as "you", using only those facts, and cite the '
        "number of the fact you use like [1]. Never add anything they did not tell you."
    ),
    "general_system": "You are Custodia, a helpful assistant. Answer briefly and plainly.",
    # said to the user: marked here, translated where they are shown
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
#: a full stop after a title or an abbreviation ("Dr. Smith", "e.g.") ends no sentence
_SENTENCES = re.compile(
    r"(?<![DJMS]r\.)(?<!Mrs\.)(?<!Ms\.)(?<!Prof\.)(?<!Dra\.)(?<!Sra\.)(?<!\b\w\.\w\.)"
    r"(?<=[.!?;])\s+|\n+"
)


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
    #: previous messages (user and assistant) sent with the model's draft; 0: none. A small
    #: model given the thread repeats its earlier answers (measured: docs/BENCHMARKS.md)
    history_messages: int = 0
    max_tokens: int = 256
    #: memories looked at for the composed answer (recall below the threshold included)
    answer_candidates: int = 10


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
        draft_stats: DraftStats | None = None,
        second_embedder: Callable[[], Embedder | None] | None = None,
        recall_settings: RecallSettings | None = None,
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
        #: a second model that re-ranks recall's candidates (None: the embedder alone)
        self._second_factory = second_embedder or (lambda: None)
        self._recall_settings = recall_settings
        self._recall: Recall | None = None
        #: how often each model's drafts pass (a cache file in the data dir)
        self.draft_stats = (
            draft_stats
            if draft_stats is not None
            else DraftStats(self._config.path(answers.STATS_FILE))
        )

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
            self._recall = None
            if self._store is not None:
                self._store.close()
                self._store = None

    # -- recall ----------------------------------------------------------------------------
    @property
    def recaller(self) -> Recall:
        """The recall pipeline (backends.memories.recall) over this store."""
        store = self.store
        with self._lock:
            if self._recall is None or self._recall.store is not store:
                second: Embedder | None = None
                try:
                    second = self._second_factory()
                except CustodiaEnvironmentError as err:  # recall still works without it
                    log.warning("memories: no second embedder for recall: %s", err)
                self._recall = Recall(
                    store, self._embedder_or_build(), second, self._recall_settings
                )
            return self._recall

    def _embedder_or_build(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._embedder_factory()
        return self._embedder

    def recall(
        self, message: str, k: int | None = None, threshold: float | None = None
    ) -> list[Hit]:
        """The memories relevant to ``message``: top ``k`` at or above the threshold, each
        with why it was found (``Hit.why``)."""
        return list(
            self.recaller.search(
                checked_text(message, "the message"),
                k=self.settings.recall_k if k is None else k,
                threshold=self.recall_threshold if threshold is None else threshold,
            )
        )

    def search(self, query: str, k: int = 10, threshold: float | None = None) -> list[Hit]:
        """The same recall over the memories (no threshold unless given)."""
        return list(self.recaller.search(checked_text(query, "the search"), k, threshold))

    def find(self, query: str, limit: int = 200) -> list[FoundMemory]:
        """The panel's search box: recalled memories first (with similarity and why), then
        text matches. An empty query lists the most recent memories."""
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
                found.append(FoundMemory(memory, hit.similarity, hit.why))
                seen.add(memory.text)
        for memory in store.find_text(query, limit=limit):
            if memory.text not in seen and len(found) < limit:
                found.append(FoundMemory(memory, why="words"))
                seen.add(memory.text)
        return found

    def recent(self, limit: int | None = None) -> list[Memory]:
        """Memories, most recently changed first."""
        return self.store.list(limit=limit)

    def status(self) -> MemoryStatus:
        embedder = self.embedder
        stats = self.store.stats()
        return MemoryStatus(
            stats,
            embedder.name,
            embedder.dimension,
            self.recall_threshold,
            self.near_duplicate_threshold,
            reembed_now=embedder.name == UPGRADED_TO
            and stats.needs_reembed > 0
            and not stats.unreadable
            and set(stats.stale_models) <= UPGRADED_FROM,
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
    def draft_key(self, model: str) -> str:
        """The :class:`DraftStats` key of ``model``'s drafts in this assistant."""
        return f"memories:{model}"

    def turn(
        self,
        message: str,
        history: Sequence[Message] = (),
        on_token: TokenCallback | None = None,
        should_stop: Callable[[], bool] | None = None,
        *,
        on_answer: Callable[[Answer, tuple[Hit, ...]], None] | None = None,
        draft: bool | None = None,
        earlier_drafts: Sequence[str] = (),
    ) -> TurnResult:
        """Answer ``message`` (AL1, AL2).

        The answer composed from the memories goes to ``on_answer`` at once (with the
        memories its ``[n]`` number); then the model's draft streams to ``on_token`` and is
        shown in its place only when every sentence of it is stated by a memory
        (:mod:`backends.answers`). ``draft``: True asks the model whatever its pass rate ("Ask
        the model to rephrase"), False never; None: unless this model's drafts rarely pass,
        or the user was never told the answer. A question not about the user gets the
        model's words, labelled as its own. ``earlier_drafts``: the model's earlier drafts in
        this thread, shown or not (a draft repeating one for a new question is withheld).
        "Remember that …" stores the fact instead (no model call)."""
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
        chat = self.chat
        if "?" not in message and factual_statements(message):
            # the user told something, asked nothing: no answer to compose, nothing to draft
            proposals = tuple(self.propose(message))
            said = TEXTS[language(message)]["offer" if proposals else "known"]
            noted = Answer(COMPOSED, (answers.Shown(said, SUPPORTED, 0),))
            if on_answer is not None:
                on_answer(noted, ())
            return TurnResult(
                message,
                noted.text,
                proposals=proposals,
                model=chat.name,
                threshold=self.recall_threshold,
                shown=noted,
                about_user=True,
            )
        recalled, candidates = self._candidates(message)
        composed = compose(
            message,
            [h.text for h in candidates],
            [h.similarity for h in candidates],
            retrieval_only=chat.retrieval_only,
            recalled=len(recalled),
        )
        # the memories shown as used: those recalled, then any other the answer cites
        used = list(recalled)
        numbers: dict[int, int] = {}
        for number in [s.number for s in composed.sentences if s.number]:
            hit = candidates[number - 1]
            if hit not in used:
                used.append(hit)
            numbers[number] = used.index(hit) + 1
        composed = replace(
            composed,
            sentences=tuple(
                replace(s, number=numbers[s.number]) if s.number else s for s in composed.sentences
            ),
        )
        if on_answer is not None:
            on_answer(composed, tuple(used))
        key = self.draft_key(chat.name)
        wanted = draft
        if wanted is None:
            wanted = composed.mode == MODEL or (
                composed.mode == COMPOSED and self.draft_stats.should_draft(key)
            )
        skipped = composed.mode == COMPOSED and not wanted and not chat.retrieval_only
        shown = composed
        draft_text = ""
        stopped = False
        checked: tuple[CheckedSentence, ...] = ()
        if wanted and not chat.retrieval_only:
            draft_text, stopped = self._draft(chat, message, history, used, composed, emit, stop)
            sources = [
                Source(i + 1, "", f"{h.text}. {restate(h.text)}") for i, h in enumerate(used)
            ]
            earlier = [m.content for m in history if m.role == "assistant"]
            earlier += list(earlier_drafts)
            needs_support = composed.mode != MODEL
            judged = answers.judge_draft(
                draft_text,
                sources,
                question=message,
                earlier=earlier,
                needs_support=needs_support,
            )
            checked = tuple(grounding.check_sentences(draft_text, sources)) if used else ()
            if composed.mode == MODEL:  # stopped too: what it said stays, as its own words
                shown = self._model_answer(composed, draft_text, judged, language(message))
            elif stopped:
                reason = "the model's draft was stopped before it finished"
                shown = replace(composed, draft=draft_text, draft_sentences=judged, reason=reason)
            else:
                lang_texts = TEXTS[language(message)]
                # the draft must say what a memory of the composed answer says, not only
                # something true ("Elena, your sister Elena")
                cited = set(composed.cited)
                shown = answers.choose(
                    composed,
                    draft_text,
                    judged,
                    answers_question=composed.mode == COMPOSED
                    and any(
                        s.supported
                        and s.number in cited
                        and answers.says_what(s.text, restate(used[s.number - 1].text))
                        for s in judged
                    ),
                    heading=lang_texts["generated_heading"],
                )
                self.draft_stats.record(key, shown.mode == answers.GENERATED)
        proposals = tuple(self.propose(message))
        text = shown.text
        if shown.mode == MODEL and shown.draft and not shown.withheld:
            # its own Markdown, all of it (a code block ends in no full stop)
            fenced = shown.draft.rstrip().endswith("```")
            text = shown.draft if fenced else grounding.complete_sentences(shown.draft)
        return TurnResult(
            message,
            text,
            used=tuple(used),
            proposals=proposals,
            retrieval_only=chat.retrieval_only,
            model=chat.name,
            threshold=self.recall_threshold,
            stopped=stopped,
            checked=checked,
            shown=shown,
            about_user=composed.mode != MODEL,
            draft_skipped=skipped,
            draft_rate=self.draft_stats.rate(key),
        )

    def _candidates(self, message: str) -> tuple[tuple[Hit, ...], tuple[Hit, ...]]:
        """The recalled memories, and the candidates the composed answer looks at: those,
        closer misses (half the threshold), and — in a store of at most
        :data:`LEXICAL_SCAN` memories — every memory (a paraphrase may share no meaning an
        embedder sees: "What can't I eat?" / "I'm allergic to peanuts")."""
        recalled = tuple(self.recall(message))
        more = self.recall(
            message,
            k=max(self.settings.answer_candidates, self.settings.recall_k),
            threshold=self.recall_threshold / 2,
        )
        seen = {h.text for h in recalled}
        candidates = list(recalled)
        for hit in more:
            if hit.text not in seen:
                candidates.append(hit)
                seen.add(hit.text)
        everything = self.store.list(limit=LEXICAL_SCAN + 1)
        if len(everything) <= LEXICAL_SCAN:
            candidates += [Hit(m.text, 0.0) for m in everything if m.text not in seen]
        return recalled, tuple(candidates)

    def _draft(
        self,
        chat: ChatModel,
        message: str,
        history: Sequence[Message],
        used: Sequence[Hit],
        composed: Answer,
        emit: TokenCallback,
        stop: Callable[[], bool],
    ) -> tuple[str, bool]:
        """The model's draft (streamed to ``emit``) and whether it was stopped."""
        keep = self.settings.history_messages
        personal = composed.mode != MODEL
        prompt = Prompt(
            user=message,
            system=MESSAGES["draft_system" if personal else "general_system"],
            history=tuple(history)[-keep:] if keep else (),
            context=[
                MESSAGES["memory_label"].format(number=i + 1, text=restate(h.text))
                for i, h in enumerate(used)
            ]
            if personal
            else [],
            max_tokens=self.settings.max_tokens,
        )
        pieces: list[str] = []
        for piece in chat.stream(prompt, stop):
            pieces.append(piece)
            emit(piece)
        return "".join(pieces).strip(), stop()

    @staticmethod
    def _model_answer(
        composed: Answer, draft: str, judged: tuple[answers.Shown, ...], lang: str
    ) -> Answer:
        """A question not about the user: the model's sentences, labelled as its own (or
        cited, when a memory states one); parroted ones withheld."""
        shown = tuple(s for s in judged if s.kind != WITHHELD)
        reason = ""
        if not shown:
            first = next((s.reason for s in judged if s.reason), "it gave no answer")
            reason = f"the model's answer was withheld: {first}"
            note = (
                f"La respuesta del modelo se ha retenido: {first}."
                if lang == "es"
                else f"The model's answer was withheld: {first}."
            )
            shown = (answers.Shown(note, SUPPORTED, 0, reason),)
        return Answer(MODEL, shown, composed.heading, draft, judged, reason)


def get_service(services: Services, settings: AssistantSettings | None = None) -> MemoryAssistant:
    """The one :class:`MemoryAssistant` of these services (built on first use, closed at exit).

    ``settings`` apply only when this call builds it.
    """
    primary, second = memory_embedders(services)
    return services.service(
        "memories",
        lambda: MemoryAssistant(
            services.config.path(STORE_FILE),
            primary,
            lambda: services.chat_for("memories"),
            settings,
            config=services.config,
            second_embedder=second,
        ),
        MemoryAssistant.close,
    )


def memory_embedders(
    services: Services,
) -> tuple[Callable[[], Embedder], Callable[[], Embedder | None]]:
    """The memories' embedder and the second one that re-ranks recall (both lazy).

    With the built-in models (``minilm``, the default, or ``use-multilingual``) memories are
    embedded by the multilingual Universal Sentence Encoder — a fact told in Spanish is found
    by a Spanish or an English question — and MiniLM re-ranks English recall (docs/MEMORIES.md
    "Recall"). Any other embedder (hashing, Ollama) serves alone, as configured. A data dir
    whose memories were embedded by MiniLM keeps them (PA3) until they are re-embedded.
    """
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder
    from backends.models.registry import create_embedder

    def named(key: str) -> Embedder:
        configured = services.embedder
        if configured.name == {"minilm": MiniLMEmbedder.name}.get(
            key, UniversalSentenceEncoder.name
        ):
            return configured
        config = replace(services.config, embedder=key)
        return services.service(f"embedder:{key}", lambda: create_embedder(config))

    builtin = (MiniLMEmbedder.name, UniversalSentenceEncoder.name)

    def primary() -> Embedder:
        configured = services.embedder
        if configured.name not in builtin:
            return configured
        try:
            return named("use-multilingual")
        except CustodiaEnvironmentError as err:  # the wheel missing: MiniLM alone, as before
            log.warning("memories: the multilingual embedder cannot load: %s", err)
            return configured

    def second() -> Embedder | None:
        configured = services.embedder
        if configured.name not in builtin:
            return None
        return named("minilm")

    return primary, second


def build(needs: Needs) -> MemoryAssistant:
    """The memory assistant, built from what the composition layer hands it."""
    primary, second = embedders_for(needs)
    return MemoryAssistant(
        needs.config.path(STORE_FILE),
        primary,
        needs.chat_model,
        None,
        config=needs.config,
        second_embedder=second,
    )


def embedders_for(needs: Needs) -> tuple[Callable[[], Embedder], Callable[[], Embedder | None]]:
    """The memories' embedder and the second one that re-ranks recall (both lazy).

    With the built-in models (``minilm``, the default, or ``use-multilingual``) memories are
    embedded by the multilingual Universal Sentence Encoder — a fact told in Spanish is found
    by a Spanish or an English question — and MiniLM re-ranks English recall (docs/MEMORIES.md
    "Recall"). Any other embedder (hashing, Ollama) serves alone, as configured. A data dir
    whose memories were embedded by MiniLM keeps them (PA3) until they are re-embedded.
    """
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder

    builtin = (MiniLMEmbedder.name, UniversalSentenceEncoder.name)

    def primary() -> Embedder:
        configured = needs.embedder()
        if configured.name not in builtin:
            return configured
        try:
            return needs.embedder_named("use-multilingual")
        except CustodiaEnvironmentError as err:  # the wheel missing: MiniLM alone, as before
            log.warning("memories: the multilingual embedder cannot load: %s", err)
            return configured

    def second() -> Embedder | None:
        if needs.embedder().name not in builtin:
            return None
        return needs.embedder_named("minilm")

    return primary, second
