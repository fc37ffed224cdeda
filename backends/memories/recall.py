"""Recall as a person would: meaning first, then who and what the question is about.

A bare cosine over one embedder misses paraphrases whose words are not the fact's ("Which city
is my sibling based in?" for "My sister Lucía lives in Valencia") and is led astray by facts
about the same person. This pipeline, each part switchable (:class:`RecallSettings`) so the
benchmark shows what it adds (``bench/bench_memories.py``, docs/MEMORIES.md "Recall"):

1. **Query expansion by entities** — the people the stored facts name by relation ("my sister
   Lucía", "mi jefa se llama Priya") form an index (:mod:`.entities`, kept in step with the
   store); "my sibling" in a question adds "Lucía" to the text that is embedded, and "Lucía"
   in a question adds "sister". The question and its expansion are embedded in one call.
2. **First pass** — the primary embedder's cosine over every searchable memory (the store's
   one pass over its matrix): the best ``candidates``, plus the best memories that name a
   person the query is about.
3. **Second embedder** — a second model's cosine over the candidates only (their vectors kept
   in the store's ``memory_signal`` table, computed when missing), fused with the first by
   adding the two cosines, each standardised over the candidates. Used only where that model
   understands both texts (MiniLM: English); it embeds the question on the other core while
   the first pass runs.
4. **Re-ranking by entities** — a bonus for a memory that names who the question is about
   (accents folded: "Lucia" finds "Lucía"), and one for a memory that holds what the question
   asks for (a date for "when", a person for "who", a place for "where", a number for
   "how much").

Every hit says why it was found (:attr:`RecallHit.why`). Qt-free.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from backends.i18n import N_, _, number
from backends.memories.entities import (
    EntityIndex,
    _bare,
    _relations_named,
    _words,
    about,
    asks_for,
    first_person,
    fold,
    holds,
    language,
    names,
    persons,
    relations,
    topics,
    words_of,
)
from backends.models.embedders import Embedder
from backends.stores.memories import Hit, MemoryStore

__all__ = [
    "BARE",
    "EntityIndex",
    "Recall",
    "RecallHit",
    "RecallSettings",
    "asks_for",
    "fold",
    "holds",
    "language",
    "names",
    "persons",
    "relations",
]

#: why a hit was found, in the user's language (the words built here are shown as they are)
_KIND_LABEL = {
    "date": N_("has a date"),
    "person": N_("has a person"),
    "place": N_("has a place"),
    "number": N_("has a number"),
}

# -- the pipeline ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallSettings:
    """Which parts run, and their weights (measured in docs/MEMORIES.md "Recall")."""

    #: candidates the first pass hands to re-ranking
    candidates: int = 30
    #: add the names of the people a query is about to the text embedded
    expand: bool = True
    #: ...unless there are more than this many (a relation that stands for that many people
    #: says nothing about which one: "my friend" among dozens of friends)
    expand_limit: int = 6
    #: fuse the second embedder's cosine (when there is one and it reads both texts)
    second: bool = True
    #: bonus for naming who the question is about
    entities: bool = True
    #: bonus for holding what the question asks for (a date for "when"...)
    answer_kind: bool = True
    #: how the two embedders are fused: "z" (each cosine standardised over the candidates,
    #: then averaged) or "rank" (reciprocal rank, the first session's)
    fusion: str = "z"
    #: weight of the second embedder against the first (1: equal)
    second_weight: float = 1.0
    #: the second embedder reads the question with the names the expansion added
    second_expanded: bool = True
    #: bonus for a memory about a relation the question asks about without naming anyone by
    #: it ("married", "my cousin's wife"), besides the one for the names
    topics: bool = True
    #: bonus for a memory about the user alone (no one else named, no relation) when the
    #: question is about no one else and asks for no person
    self_subject: bool = True
    #: bonuses, in standard deviations of the candidates' scores ("z"), or in reciprocal
    #: ranks at rank 1 ("rank"); chosen on the tuning sets (docs/MEMORIES.md "Recall")
    entity_weight: float = 0.5
    kind_weight: float = 1.5
    #: reciprocal-rank constant ("rank" fusion): small, so the first places weigh most
    rank_constant: float = 5.0
    #: languages the second embedder reads (MiniLM is English only)
    second_languages: tuple[str, ...] = ("en",)

    def without(self, *parts: str) -> RecallSettings:
        changes: dict[str, Any] = dict.fromkeys(parts, False)
        return replace(self, **changes)


BARE = RecallSettings(
    expand=False,
    second=False,
    entities=False,
    answer_kind=False,
    topics=False,
    self_subject=False,
)


@dataclass(frozen=True)
class RecallHit(Hit):
    """A recalled memory: its primary cosine (``similarity``), its fused ``score`` and why."""

    score: float = 0.0
    reasons: tuple[str, ...] = field(default=())


class _Aside:
    """A call run in a thread of its own while the caller goes on (the second embedder
    embeds the question on the other core while the first pass runs); :meth:`result`
    waits for it. A daemon thread per search: no pool outlives its users."""

    def __init__(self, fn: Callable[[], list[np.ndarray]]) -> None:
        self._fn = fn
        self._value: list[np.ndarray] = []
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="recall-second", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as err:  # handed to the caller by result()
            self._error = err

    def result(self) -> list[np.ndarray]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


class Recall:
    """The recall pipeline over one store (its embedder's vectors) and an optional second
    embedder whose vectors live beside them in the store's ``memory_signal`` table."""

    #: the vectors of the last questions (a turn recalls twice: what is shown, and more
    #: candidates for the composed answer)
    QUERY_CACHE = 64
    #: memories naming the people asked about are scored one by one up to this many
    NAMED_LOOKUP = 2_000

    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        second: Embedder | None = None,
        settings: RecallSettings | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.second = second
        self.settings = settings or RecallSettings()
        self.entities = EntityIndex()
        self._queries: dict[tuple[str, str], np.ndarray] = {}
        self._queries_lock = threading.Lock()

    def warm(self) -> None:
        """Build what recall derives from the store now (the entity index), waiting for it:
        for a worker that opens the store, so that no search pays for it."""
        self.entities.refresh(self.store, wait=True)

    def _embed(self, embedder: Embedder, texts: list[str]) -> list[np.ndarray]:
        with self._queries_lock:
            found = [self._queries.get((embedder.name, t)) for t in texts]
        missing = list(dict.fromkeys(t for t, v in zip(texts, found, strict=True) if v is None))
        if missing:
            computed = dict(zip(missing, embedder.embed_batch(missing), strict=True))
            with self._queries_lock:
                for t, v in computed.items():
                    self._queries[(embedder.name, t)] = v
                while len(self._queries) > self.QUERY_CACHE:
                    self._queries.pop(next(iter(self._queries)))
            found = [v if v is not None else computed[t] for t, v in zip(texts, found, strict=True)]
        return [v for v in found if v is not None]

    def forget_queries(self) -> None:
        """Drop the cached question vectors (the benchmark times every search afresh)."""
        with self._queries_lock:
            self._queries.clear()

    def search(
        self,
        query: str,
        k: int = 10,
        threshold: float | None = None,
        settings: RecallSettings | None = None,
    ) -> list[RecallHit]:
        """The ``k`` memories that best answer ``query``, best first; with ``threshold``, only
        those whose cosine (the embedder's, not the fused score) is at least that."""
        s = settings or self.settings
        if k <= 0 or not query.strip():
            return []
        text, people, asked = self._question(query, s)
        second = self._second_for(query, s)
        pending: _Aside | None = None
        if second is not None:  # on the other core, while the first pass runs here
            asked_text = text if s.second_expanded else query
            pending = _Aside(lambda: self._embed(second, [asked_text]))
        if text == query:
            vector = plain = self._embed(self.embedder, [query])[0]
        else:  # one call: the question with the names added, and as asked
            vector, plain = self._embed(self.embedder, [text, query])
        pool = max(s.candidates, k)
        cosine = {h.text: h.similarity for h in self.store.search(vector, k=pool)}
        if s.entities and people:  # memories naming them, wherever their cosine put them
            cosine.update(self._named(vector, people, pool, cosine))
        if not cosine:
            if pending is not None:
                pending.result()
            return []
        texts = list(cosine)
        first = np.array([cosine[t] for t in texts], dtype=np.float32)
        # what is shown and compared with the threshold: the cosine with the question as
        # asked (the names added to it make every memory naming them look closer)
        asked_cosine = cosine if text == query else self.store.similarities(plain, texts)
        meaning = _("meaning {0}")
        reasons: list[list[str]] = [
            [meaning.format(number(asked_cosine.get(t, 0.0), 2))] for t in texts
        ]
        score = _z(first) if s.fusion == "z" else 2.0 / (s.rank_constant + _ranks(first))
        if pending is not None and second is not None:
            self._fuse(second, pending.result()[0], texts, first, score, reasons, s)
        self._rerank(query, texts, people, asked, score, reasons, s)
        return _best(texts, asked_cosine, score, reasons, k, threshold)

    def _rerank(
        self,
        query: str,
        texts: Sequence[str],
        people: set[str],
        asked: set[str],
        score: np.ndarray,
        reasons: list[list[str]],
        s: RecallSettings,
    ) -> None:
        """Add to ``score`` the bonuses for who and what the question is about: the people
        and relations it names, the user, and the kind of answer it asks for."""
        unit = 1.0 if s.fusion == "z" else 1.0 / (s.rank_constant + 1)
        topic = topics(query) if s.entities and s.topics else frozenset()
        named_any = bool(people or asked or topic)
        if s.entities and named_any:
            _boost_named(texts, people, asked, topic, score, reasons, s.entity_weight * unit)
        kind = asks_for(query)
        if s.self_subject and kind != "person" and (first_person(query) or not named_any):
            # a question about the user ("What am I called?", "When did Daniel and I get
            # married?"): the memories about the user alone are about its subject too
            known = self.entities.people()
            for i, t in enumerate(texts):
                if _about_the_user(t, known):
                    score[i] += s.entity_weight * unit
                    reasons[i].append(_("about you"))
        if kind is not None and s.answer_kind:
            for i, t in enumerate(texts):
                if kind in holds(t, people):
                    score[i] += s.kind_weight * unit
                    reasons[i].append(_(_KIND_LABEL[kind]))

    def _question(self, query: str, s: RecallSettings) -> tuple[str, set[str], set[str]]:
        """The text embedded for ``query`` (with the names its relations stand for, when
        ``s.expand``), the people it names or implies, and the relations it asks about."""
        people: set[str] = set()
        asked: set[str] = set()
        if s.expand or s.entities or s.answer_kind or s.self_subject:
            self.entities.refresh(self.store)
            people, asked = self.entities.expand(query)
        text = query
        if s.expand:
            extra = sorted(p for p in people if p not in fold(query))
            if extra and len(extra) <= s.expand_limit:
                text = f"{query} ({', '.join(p.title() for p in extra)})"
        return text, people, asked

    def _second_for(self, query: str, s: RecallSettings) -> Embedder | None:
        """The second embedder when it is to re-rank ``query`` (it reads its language)."""
        if not s.second or self.second is None:
            return None
        return self.second if language(query) in s.second_languages else None

    def _named(
        self, vector: np.ndarray, people: set[str], pool: int, have: Mapping[str, float]
    ) -> dict[str, float]:
        """The best ``pool`` memories (by cosine) naming any of ``people`` not in ``have``;
        none when more than :attr:`NAMED_LOOKUP` name them (a name that common says little
        about which memory is meant: the first pass's best stand)."""
        named = self.entities.naming(people, self.NAMED_LOOKUP)
        if not named:
            return {}
        found = self.store.similarities(vector, [t for t in named if t not in have])
        best = sorted(found.items(), key=lambda item: (-item[1], item[0]))[:pool]
        return dict(best)

    def _fuse(
        self,
        second: Embedder,
        q: np.ndarray,
        texts: Sequence[str],
        first: np.ndarray,
        score: np.ndarray,
        reasons: list[list[str]],
        s: RecallSettings,
    ) -> None:
        """Fuse the second embedder's cosine into ``score`` where it reads the memory."""
        languages = set(s.second_languages) | {""}
        readable = [i for i, t in enumerate(texts) if language(t) in languages]
        if not readable:
            return
        vectors = self.signal_vectors([texts[i] for i in readable])
        other = np.array([float(vectors[texts[i]] @ q) for i in readable], dtype=np.float32)
        if s.fusion == "z":
            # the average of the two standardised cosines, over the memories both read (a
            # memory only the first reads keeps its own: no signal is not a bad signal)
            w = s.second_weight
            score[readable] = (_z(first[readable]) + w * _z(other)) / (1.0 + w)
        else:
            c = s.rank_constant
            score[readable] = 1.0 / (c + _ranks(first[readable])) + 1.0 / (c + _ranks(other))
        for j, i in enumerate(readable):
            reasons[i].append(f"{_short(second.name)} {number(other[j], 2)}")

    def signal_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The second embedder's vectors of ``texts``: stored ones, the rest computed and kept."""
        second = self.second
        assert second is not None
        found = self.store.signal_vectors(second.name, texts)
        found = {t: v for t, v in found.items() if v.shape[0] == second.dimension}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            computed = second.embed_many(missing)
            pairs = list(zip(missing, computed, strict=True))
            self.store.put_signal_vectors(second.name, pairs)
            found.update(pairs)
        return found


def _boost_named(
    texts: Sequence[str],
    people: set[str],
    asked: set[str],
    topic: frozenset[str],
    score: np.ndarray,
    reasons: list[list[str]],
    bonus: float,
) -> None:
    """Raise the memories that name the people asked about, or the relation asked; and,
    once more, those about a relation the question asks about without naming anyone by it
    ("Who is my cousin married to?": "Javier's wife"; not "my wife": the user's own)."""
    for i, t in enumerate(texts):
        hit_names = sorted(people & words_of(t))
        named = sorted(asked & _relations_named(t))
        if hit_names or named:
            score[i] += bonus
        if hit_names:
            shown = [_display(t, p) for p in hit_names[:2]]
            reasons[i].append(_("name: {0}").format(", ".join(shown)))
        elif named:
            reasons[i].append(_("about: {0}").format(", ".join(named[:2])))
        if topic:
            on_topic = sorted(topic & about(t))
            if on_topic:
                score[i] += bonus
                reasons[i].append(_("about: {0}").format(", ".join(on_topic[:2])))


def _about_the_user(text: str, known: set[str]) -> bool:
    """Whether a memory is about the user alone: it names no relation ("my sister"), no
    person by a cue ("called Priya", "Dr. Patel") and no one the memories name by relation."""
    return not (_relations_named(text) or persons(text) or words_of(text) & known)


def _best(
    texts: Sequence[str],
    asked_cosine: Mapping[str, float],
    score: np.ndarray,
    reasons: list[list[str]],
    k: int,
    threshold: float | None,
) -> list[RecallHit]:
    """The ``k`` best by fused score whose cosine reaches ``threshold``."""
    out: list[RecallHit] = []
    for i in np.argsort(-score, kind="stable"):
        similarity = float(asked_cosine.get(texts[i], 0.0))
        if threshold is not None and similarity < threshold:
            continue
        why = " · ".join(reasons[i])
        out.append(RecallHit(texts[i], similarity, why, float(score[i]), tuple(reasons[i])))
        if len(out) == k:
            break
    return out


def _z(values: np.ndarray) -> np.ndarray:
    """Standardised: 0 for the candidates' mean, 1 per standard deviation (a single
    candidate, or all equal: 0)."""
    values = values.astype(np.float64)
    spread = float(values.std())
    if spread < 1e-9:
        return np.zeros_like(values)
    return (values - float(values.mean())) / spread


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 for the largest value, 2 for the next... (ties keep their order)."""
    order = np.argsort(-values, kind="stable")
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def _short(model: str) -> str:
    return {"all-MiniLM-L6-v2": "MiniLM", "use-multilingual-v3": "USE"}.get(model, model)


def _display(text: str, folded_name: str) -> str:
    """The name as the memory spells it ("lucia" -> "Lucía")."""
    for word in _words(text):
        if fold(_bare(word)) == folded_name:
            return _bare(word)
    return folded_name.title()
