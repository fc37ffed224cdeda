"""The personal memory assistant: a chat that remembers facts about its user (SPEC §2) — the
façade the desktop tab and the CLI talk to.

Each turn recalls the memories most similar to the message — those at or above a threshold
tuned per embedder (:mod:`~backends.memories.tuning`) — and gives them to the chat model as
context (:mod:`~backends.memories.turn`). Memories are created explicitly ("remember that …",
or a button on any message in the desktop), and proposed from what the user says about
themselves (:mod:`~backends.memories.facts`); a proposal is stored only once the user
confirms it. An exact duplicate is skipped; a near duplicate is never stored silently nor
dropped silently: it comes back as a proposal to update the memory it resembles.

This module keeps the memories (their store, recall over them, creating and changing them)
and builds the assistant from :class:`~backends.assistants.Needs` (:func:`build`). Qt-free:
the desktop runs these methods in workers, the CLI calls them directly.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from backends import answers, stores
from backends.answers import Answer, DraftStats
from backends.assistants import Needs, StoreOpener
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _
from backends.memories import turn as turns
from backends.memories.facts import factual_statements, normalise_text, remember_request
from backends.memories.outcomes import (
    FoundMemory,
    MemoryStatus,
    Proposal,
    RememberOutcome,
    TokenCallback,
    TurnResult,
    Undo,
)
from backends.memories.recall import Recall, RecallSettings
from backends.memories.tuning import (
    AssistantSettings,
    near_duplicate_threshold_for,
    recall_threshold_for,
)
from backends.models.chat import ChatModel, Message
from backends.models.embedders import Embedder, MiniLMEmbedder, UniversalSentenceEncoder
from backends.progress import Progress
from backends.stores.memories import (
    EmptyTextError,
    Hit,
    Memory,
    MemoryNotFoundError,
    MemoryStore,
)
from backends.text import checked_text

log = logging.getLogger(__name__)

#: memories were embedded by MiniLM by default until issue 29, by USE since: a data dir of
#: MiniLM memories is re-embedded without asking ("" is a row of unknown model, as the
#: original app wrote them)
UPGRADED_FROM = frozenset({"all-MiniLM-L6-v2", ""})
UPGRADED_TO = "use-multilingual-v3"

STORE_FILE = "memories.sqlite3"

#: a store this small is read whole for the composed answer, besides what recall finds
LEXICAL_SCAN = 500


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
        open_store: StoreOpener = stores.open,
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

    def use_settings(self, settings: AssistantSettings) -> None:
        """From the next call on, answer with ``settings`` (``custodia ask memories
        --threshold/-k`` tunes the assistant its process built; the stored memories and the
        loaded models stay as they are)."""
        self.settings = settings

    def open(self) -> MemoryStatus:
        """Build the store, load its matrix and derive recall's entity index now (the desktop
        does it in a worker), so that no search of the tab waits for them."""
        self.store.load()
        self.recaller.warm()
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
                    log.warning(_("memories: no second embedder for recall: %s"), err)
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
                checked_text(message, N_("the message")),
                k=self.settings.recall_k if k is None else k,
                threshold=self.recall_threshold if threshold is None else threshold,
            )
        )

    def search(self, query: str, k: int = 10, threshold: float | None = None) -> list[Hit]:
        """The same recall over the memories (no threshold unless given)."""
        return list(self.recaller.search(checked_text(query, N_("the search")), k, threshold))

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
        text = normalise_text(checked_text(text, N_("the memory")))
        if not text:
            raise EmptyTextError(_("a memory needs some text"))
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
        undo = (
            Undo(_("remember “{text}”").format(text=text), remove=(text,))
            if result.created
            else None
        )
        return RememberOutcome(text, result.status, undo=undo, source=source)

    def update(self, existing: str, new_text: str, source: str = "user") -> RememberOutcome:
        """Replace ``existing`` by ``new_text`` (an accepted near-duplicate proposal, or an
        edit in the panel). Undoable."""
        new_text = normalise_text(checked_text(new_text, N_("the memory")))
        if not new_text:
            raise EmptyTextError(_("a memory needs some text"))
        previous = self.store.update(existing, new_text, self.embedder.embed(new_text))
        undo = Undo(
            _("edit “{text}”").format(text=existing), remove=(new_text,), restore=(previous,)
        )
        if new_text == existing:
            undo = Undo(_("edit “{text}”").format(text=existing), restore=(previous,))
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
        previous = self.store.delete(checked_text(text, N_("the memory")))
        if previous is None and normalise_text(text) != text:
            previous = self.store.delete(normalise_text(text))
        if previous is None:
            raise MemoryNotFoundError(text)
        return Undo(_("delete “{text}”").format(text=text), restore=(previous,))

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
        return turns.draft_key(model)

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
        message = checked_text(message, N_("the message")).strip()
        if not message:
            raise EmptyTextError(_("the message is empty"))
        emit = on_token or (lambda piece: None)
        fact = remember_request(message)
        if fact is not None:
            outcome = self.remember(fact, source="remember")
            return turns.remembered(message, outcome, self.recall_threshold, emit)
        chat = self.chat
        if "?" not in message and factual_statements(message):
            proposals = tuple(self.propose(message))
            return turns.noted(message, proposals, chat.name, self.recall_threshold, on_answer)
        recalled, candidates = self._candidates(message)
        answered = turns.Turn(
            message,
            chat,
            self.settings,
            self.draft_stats,
            threshold=self.recall_threshold,
            history=history,
            emit=emit,
            stop=should_stop or (lambda: False),
            earlier_drafts=earlier_drafts,
        ).answer(recalled, candidates, draft=draft, on_answer=on_answer)
        return replace(answered, proposals=tuple(self.propose(message)))

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


def build(needs: Needs) -> MemoryAssistant:
    """The memory assistant, built from what the composition layer hands it."""
    primary, second = embedders_for(needs)
    return MemoryAssistant(
        needs.config.path(STORE_FILE),
        primary,
        needs.chat_model,
        None,
        config=needs.config,
        open_store=needs.open_store,
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
    builtin = (MiniLMEmbedder.name, UniversalSentenceEncoder.name)

    def primary() -> Embedder:
        configured = needs.embedder()
        if configured.name not in builtin:
            return configured
        try:
            return needs.embedder_named("use-multilingual")
        except CustodiaEnvironmentError as err:  # the wheel missing: MiniLM alone, as before
            log.warning(_("memories: the multilingual embedder cannot load: %s"), err)
            return configured

    def second() -> Embedder | None:
        if needs.embedder().name not in builtin:
            return None
        return needs.embedder_named("minilm")

    return primary, second
