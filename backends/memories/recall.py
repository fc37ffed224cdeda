"""Recall as a person would: meaning first, then who and what the question is about.

A bare cosine over one embedder misses paraphrases whose words are not the fact's ("Which city
is my sibling based in?" for "My sister Lucía lives in Valencia") and is led astray by facts
about the same person. This pipeline, each part switchable (:class:`RecallSettings`) so the
benchmark shows what it adds (``bench/bench_memories.py``, docs/MEMORIES.md "Recall"):

1. **Query expansion by entities** — the people the stored facts name by relation ("my sister
   Lucía", "mi jefa se llama Priya") form a small index; "my sibling" in a question adds
   "Lucía" to the text that is embedded, and "Lucía" in a question adds "sister".
2. **First pass** — the primary embedder's cosine over every searchable memory (the store's
   matrix): the best ``candidates``, plus the memories that name a person the query is about.
3. **Second embedder, fused by rank** — a second model's cosine over the candidates only
   (vectors kept in the store's ``memory_signal`` table, computed when missing), fused by
   reciprocal rank. Used only where that model understands both texts (MiniLM: English).
4. **Re-ranking by entities** — a bonus for a memory that names who the question is about
   (accents folded: "Lucia" finds "Lucía"), and one for a memory that holds what the question
   asks for (a date for "when", a person for "who", a place for "where", a number for
   "how much").

Every hit says why it was found (:attr:`RecallHit.why`). Qt-free.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from backends.models.embedders import Embedder
from backends.stores.memories import Hit, MemoryStore

# -- words -----------------------------------------------------------------------------------


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: a relation a fact names a person by -> the words for it (English and Spanish)
RELATIONS: dict[str, tuple[str, ...]] = {
    "mother": ("mother", "mum", "mom", "madre", "mamá"),
    "father": ("father", "dad", "padre", "papá"),
    "sister": ("sister", "hermana"),
    "brother": ("brother", "hermano"),
    "daughter": ("daughter", "hija"),
    "son": ("son", "hijo"),
    "husband": ("husband", "marido", "esposo"),
    "wife": ("wife", "esposa", "mujer"),
    "partner": ("partner", "boyfriend", "girlfriend", "pareja", "novio", "novia"),
    "grandmother": ("grandmother", "grandma", "abuela"),
    "grandfather": ("grandfather", "grandpa", "abuelo"),
    "cousin": ("cousin", "primo", "prima"),
    "uncle": ("uncle", "tío"),
    "aunt": ("aunt", "tía"),
    "nephew": ("nephew", "sobrino"),
    "niece": ("niece", "sobrina"),
    "friend": ("friend", "amigo", "amiga"),
    "neighbour": ("neighbour", "neighbor", "vecino", "vecina"),
    "boss": ("boss", "manager", "jefe", "jefa"),
    "colleague": ("colleague", "coworker", "compañero", "compañera"),
    "landlord": ("landlord", "landlady", "casero", "casera"),
    "dentist": ("dentist", "dentista"),
    "doctor": ("doctor", "gp", "médico", "médica"),
    "therapist": ("therapist", "counsellor", "terapeuta", "psicólogo", "psicóloga"),
    "teacher": ("teacher", "tutor", "profesor", "profesora", "maestro", "maestra"),
    "dog": ("dog", "perro", "perra"),
    "cat": ("cat", "gato", "gata"),
}
#: words only a question uses for a relation (a fact's "a boy called Sami" is not a son)
QUERY_RELATIONS: dict[str, tuple[str, ...]] = {
    "sibling": ("sibling", "siblings", "hermanos"),
    "spouse": ("spouse", "esposos", "cónyuge"),
    "child": ("child", "children", "kid", "kids", "hijos"),
    "son": ("boy", "niño"),
    "daughter": ("girl", "niña"),
    "grandmother": ("gran", "granny", "nan", "abuelita"),
    "grandfather": ("grandad", "abuelito"),
    "mother": ("mummy", "mommy", "mami"),
    "father": ("daddy", "papi"),
    "boss": ("superior",),
    "dog": ("pet", "mascota"),
}
#: a wide relation covers narrower ones
WIDER = {
    "sibling": ("sister", "brother"),
    "spouse": ("husband", "wife", "partner"),
    "child": ("son", "daughter"),
}
_NAME_CUES = re.compile(
    r"\b(?:called|named|name is|se llama|se llaman|llamad[oa]s?|dr|dra|mr|mrs|ms|doctora?)\b"
)
_NOT_NAMES = _set(
    "i my mi mis tu the a an la el los las un una what which who when where how why is are do "
    "does did can if until dr dra mr mrs ms doctor doctora soy tengo me en si cual que quien "
    "cuando donde como hay por para ok yes no"
)
_MONTHS = (
    "january february march april may june july august september october november december "
    "enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre "
    "diciembre"
)
_DAYS = (
    "monday tuesday wednesday thursday friday saturday sunday lunes martes miercoles jueves "
    "viernes sabado domingo"
)
_CALENDAR = frozenset(_MONTHS.split()) | frozenset(_DAYS.split()) | {d + "s" for d in _DAYS.split()}
_NUMBER_WORDS = _set(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "sixty seventy eighty ninety hundred thousand uno dos tres cuatro cinco seis siete ocho "
    "nueve diez once doce veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa "
    "cien mil"
)
_DATE = re.compile(
    r"\b(?:19|20)\d\d\b|\b\d{1,2}(?::\d\d)?\s*(?:am|pm|h)\b|\b\d{1,2}:\d\d\b"
    r"|\b(?:next|last|every|this)\s+(?:week|month|year|summer|winter|spring|autumn|fall|"
    r"morning|evening|night)\b|\b(?:cada|proximo|proxima|pasado|pasada)\s+(?:semana|mes|ano|"
    r"verano|invierno|primavera|otono|manana|noche)\b|\ba las\b|\bbirthday\b|\bcumple"
)
_PLACE = re.compile(
    r"\b(?:in|at|from|near|to|en|de|a|desde|cerca de)\s+(?:the\s+|la\s+|el\s+)?[A-ZÁÉÍÓÚÑ]"
)
#: what a question asks for, by its first words
_ASKS = (
    (
        re.compile(
            r"^\W*(?:when|until when|what year|since when|cu[aá]ndo|hasta cu[aá]ndo|"
            r"desde cu[aá]ndo|qu[eé] a[nñ]o|qu[eé] d[ií]a)\b",
            re.I,
        ),
        "date",
    ),
    (
        re.compile(
            r"^\W*(?:who|whom|whose|qui[eé]n(?:es)?|a qui[eé]n|con qui[eé]n|de qui[eé]n)\b"
            r"|\bwho\b",
            re.I,
        ),
        "person",
    ),
    (
        re.compile(
            r"^\W*(?:where|which city|what city|what country|d[oó]nde|ad[oó]nde|"
            r"en qu[eé] (?:ciudad|pa[ií]s))\b",
            re.I,
        ),
        "place",
    ),
    (
        re.compile(
            r"^\W*(?:how much|how many|how old|what time|cu[aá]nt[oa]s?|qu[eé] edad|"
            r"a qu[eé] hora)\b",
            re.I,
        ),
        "number",
    ),
)
_KIND_LABEL = {"date": "a date", "person": "a person", "place": "a place", "number": "a number"}

_EN_WORDS = _set(
    "the a an is are was were my i you what which who when where how do does did of in on at "
    "to and with for have has it that this"
)
_ES_WORDS = _set(
    "el la los las un una es son está mi mis yo tu qué cuál quién cuándo dónde cómo de en a y "
    "con para por que se me le del al muy"
)

_ES_FOLDED = frozenset(
    "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
    for w in _ES_WORDS
)

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+")


@functools.lru_cache(maxsize=65_536)
def fold(text: str) -> str:
    """Lower case without accents: "Lucía" and "lucia" are the same name."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _relation_table(*tables: dict[str, tuple[str, ...]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for table in tables:
        for relation, words in table.items():
            for word in words:
                out[fold(word)] = relation
    return out


_FACT_RELATION = _relation_table(RELATIONS)
_QUERY_RELATION = _relation_table(RELATIONS, QUERY_RELATIONS)


def _bare(word: str) -> str:
    """The word without a possessive 's ("Marco's" -> "Marco")."""
    return re.sub(r"['’]s?$", "", word)


def names(text: str) -> list[str]:
    """Capitalised words past the first that are not question or calendar words: the
    people, places and things a text names, folded ("Lucía" -> "lucia")."""
    out: list[str] = []
    for index, word in enumerate(_words(text)):
        word = _bare(word)
        if index == 0 or not word[:1].isupper():
            continue
        folded = fold(word)
        if folded in _NOT_NAMES or folded in _CALENDAR or len(folded) < 2:
            continue
        if folded not in out:
            out.append(folded)
    return out


def relations(fact: str) -> set[tuple[str, str]]:
    """(relation, folded name) pairs a fact states: "my sister Lucía", "my mother's name is
    Carmen", "mi jefa se llama Priya", "Leo's best friend is a boy called Sami"."""
    words = _words(fact)
    out: set[tuple[str, str]] = set()
    for index, word in enumerate(words):
        relation = _FACT_RELATION.get(fold(_bare(word)))
        if relation is None:
            continue
        following = words[index + 1 : index + 7]
        if following and following[0][:1].isupper():  # "my sister Lucía"
            name = fold(_bare(following[0]))
            if name not in _NOT_NAMES:
                out.add((relation, name))
                continue
        tail = " ".join(fold(w) for w in following)
        cue = _NAME_CUES.search(tail)
        if cue:  # "my mother's name is Carmen", "mi jefa se llama Priya"
            rest = _words(tail[cue.end() :])
            original = following[len(following) - len(rest) :] if rest else []
            if original and original[0][:1].isupper():
                out.add((relation, fold(_bare(original[0]))))
    return out


@functools.lru_cache(maxsize=65_536)
def _relations_named(text: str) -> frozenset[str]:
    """The relations a text mentions by word ("my mum" -> mother)."""
    words = map(fold, map(_bare, _words(text)))
    return frozenset(_FACT_RELATION[w] for w in words if w in _FACT_RELATION)


def asks_for(question: str) -> str | None:
    """What a question asks for: "date", "person", "place", "number" or None."""
    for pattern, kind in _ASKS:
        if pattern.search(question):
            return kind
    return None


@functools.lru_cache(maxsize=65_536)
def persons(fact: str) -> frozenset[str]:
    """The people a fact names (folded): by relation, or after "called", "Dr."..."""
    found = {name for _, name in relations(fact)}
    words = _words(fact)
    for index, word in enumerate(words[:-1]):
        if _NAME_CUES.fullmatch(fold(word).rstrip(".")) and words[index + 1][:1].isupper():
            found.add(fold(_bare(words[index + 1])))
    return frozenset(found - _NOT_NAMES)


def holds(fact: str, known: Iterable[str] = ()) -> set[str]:
    """What kinds of answer a fact holds (a date, a person, a place, a number); a person
    only counts when it is not one of ``known`` (who the question is about already)."""
    kinds = set(_kinds(fact))
    if persons(fact) - set(known):
        kinds.add("person")
    return kinds


@functools.lru_cache(maxsize=65_536)
def _kinds(fact: str) -> frozenset[str]:
    folded = fold(fact)
    words = set(_words(folded))
    kinds: set[str] = set()
    if words & _CALENDAR or _DATE.search(folded):
        kinds.add("date")
    if re.search(r"\d", folded) or words & _NUMBER_WORDS:
        kinds.add("number")
    if _PLACE.search(fact):
        kinds.add("place")
    return frozenset(kinds)


def language(text: str) -> str:
    """ "en", "es" or "" (unsure), by the commonest little words: enough to know whether an
    English-only model can read a text."""
    words = [fold(w) for w in _words(text)]
    english = sum(w in _EN_WORDS for w in words)
    spanish = sum(w in _ES_FOLDED for w in words)
    if re.search(r"[ñ¿¡áéíóú]", text.lower()):
        spanish += 2
    if english > spanish:
        return "en"
    if spanish > english:
        return "es"
    return ""


class EntityIndex:
    """Who the memories name, by relation: ``sister -> {lucia}``; name -> memories naming it.

    Derived from the searchable texts and refreshed when the store's generation moves (only
    the texts added or removed are looked at again)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._generation = -1
        self._relations: dict[str, set[tuple[str, str]]] = {}
        self._names: dict[str, list[str]] = {}
        self.by_relation: dict[str, set[str]] = {}
        self.by_name: dict[str, set[str]] = {}

    #: above this many memories the index is not built (reading them all would take
    #: seconds): recall then goes without query expansion and name look-up
    LIMIT = 200_000

    def refresh(self, store: MemoryStore) -> None:
        with self._lock:
            generation = store.generation
            if generation == self._generation:
                return
            texts = store.searchable_texts()
            if len(texts) > self.LIMIT:
                self._relations, self._names = {}, {}
                self.by_relation, self.by_name = {}, {}
                self._generation = generation
                return
            current = set(texts)
            for gone in [t for t in self._names if t not in current]:
                self._forget(gone)
            for text in texts:
                if text not in self._names:
                    self._learn(text)
            self._generation = store.generation if store.generation == generation else -1

    def _learn(self, text: str) -> None:
        found = relations(text)
        mentioned = names(text)
        self._relations[text] = found
        self._names[text] = mentioned
        for relation, name in found:
            self.by_relation.setdefault(relation, set()).add(name)
        for name in mentioned:
            self.by_name.setdefault(name, set()).add(text)

    def _forget(self, text: str) -> None:
        for relation, name in self._relations.pop(text, set()):
            still = any((relation, name) in r for r in self._relations.values())
            if not still:
                self.by_relation.get(relation, set()).discard(name)
        for name in self._names.pop(text, []):
            self.by_name.get(name, set()).discard(text)

    def expand(self, query: str) -> tuple[set[str], set[str]]:
        """The names a query is about (its own and those of the relations it names) and the
        relations it names (its own and those of the names it names)."""
        with self._lock:
            mentioned = set(names(query))
            words = [fold(_bare(w)) for w in _words(query)]
            asked = {_QUERY_RELATION[w] for w in words if w in _QUERY_RELATION}
            for relation in list(asked):
                asked.update(WIDER.get(relation, ()))
            people = set(mentioned)
            for relation in asked:
                people |= self.by_relation.get(relation, set())
            for relation, found in self.by_relation.items():
                if mentioned & found:
                    asked.add(relation)
            return people, asked

    def naming(self, people: Iterable[str], limit: int) -> list[str]:
        with self._lock:
            out: list[str] = []
            for name in sorted(people):
                for text in sorted(self.by_name.get(name, ())):
                    if text not in out:
                        out.append(text)
                        if len(out) >= limit:
                            return out
            return out


# -- the pipeline ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallSettings:
    """Which parts run, and their weights (measured in docs/MEMORIES.md "Recall")."""

    #: candidates the first pass hands to re-ranking
    candidates: int = 30
    #: add the names of the people a query is about to the text embedded
    expand: bool = True
    #: fuse the second embedder's ranking (when there is one and it reads both texts)
    second: bool = True
    #: bonus for naming who the question is about
    entities: bool = True
    #: bonus for holding what the question asks for (a date for "when"...)
    answer_kind: bool = True
    #: reciprocal-rank constant: small, so the first places weigh most
    rank_constant: float = 5.0
    entity_weight: float = 0.5
    kind_weight: float = 0.5
    #: languages the second embedder reads (MiniLM is English only)
    second_languages: tuple[str, ...] = ("en",)

    def without(self, *parts: str) -> RecallSettings:
        changes: dict[str, Any] = dict.fromkeys(parts, False)
        return replace(self, **changes)


BARE = RecallSettings(expand=False, second=False, entities=False, answer_kind=False)


@dataclass(frozen=True)
class RecallHit(Hit):
    """A recalled memory: its primary cosine (``similarity``), its fused ``score`` and why."""

    score: float = 0.0
    reasons: tuple[str, ...] = field(default=())


class Recall:
    """The recall pipeline over one store (its embedder's vectors) and an optional second
    embedder whose vectors live beside them in the store's ``memory_signal`` table."""

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
        #: the vectors of the last questions (a turn recalls twice: what is shown, and more
        #: candidates for the composed answer)
        self._queries: dict[tuple[str, str], np.ndarray] = {}
        self._queries_lock = threading.Lock()

    QUERY_CACHE = 64

    def _embed(self, embedder: Embedder, texts: list[str]) -> list[np.ndarray]:
        with self._queries_lock:
            found = [self._queries.get((embedder.name, t)) for t in texts]
        missing = [t for t, v in zip(texts, found, strict=True) if v is None]
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
        if text == query:
            vector = plain = self._embed(self.embedder, [query])[0]
        else:
            vector, plain = self._embed(self.embedder, [text, query])
        pool = max(s.candidates, k)
        hits = self.store.search(vector, k=pool)
        cosine = {h.text: h.similarity for h in hits}
        if s.entities and people:  # memories naming them, wherever their cosine put them
            named = [t for t in self.entities.naming(people, pool) if t not in cosine]
            cosine.update(self.store.similarities(vector, named))
        if not cosine:
            return []
        texts = list(cosine)
        first = np.array([cosine[t] for t in texts], dtype=np.float32)
        # what is shown and compared with the threshold: the cosine with the question as
        # asked (the names added to it make every memory naming them look closer)
        asked_cosine = cosine if text == query else self.store.similarities(plain, texts)
        score = 2.0 / (s.rank_constant + _ranks(first))
        reasons: list[list[str]] = [[f"meaning {asked_cosine.get(t, 0.0):.2f}"] for t in texts]
        if s.second and self.second is not None:
            self._fuse(text, query, texts, first, score, reasons, s)
        if s.entities and (people or asked):
            _boost_named(texts, people, asked, score, reasons, s)
        kind = asks_for(query) if s.answer_kind else None
        if kind is not None:
            for i, t in enumerate(texts):
                if kind in holds(t, people):
                    score[i] += s.kind_weight / (s.rank_constant + 1)
                    reasons[i].append(f"has {_KIND_LABEL[kind]}")
        return _best(texts, asked_cosine, score, reasons, k, threshold)

    def _question(self, query: str, s: RecallSettings) -> tuple[str, set[str], set[str]]:
        """The text embedded for ``query`` (with the names its relations stand for, when
        ``s.expand``), the people it names or implies, and the relations it asks about."""
        people: set[str] = set()
        asked: set[str] = set()
        if s.expand or s.entities or s.answer_kind:
            self.entities.refresh(self.store)
            people, asked = self.entities.expand(query)
        text = query
        if s.expand:
            extra = sorted(p for p in people if p not in fold(query))
            if extra:
                text = f"{query} ({', '.join(p.title() for p in extra)})"
        return text, people, asked

    def _fuse(
        self,
        text: str,
        query: str,
        texts: Sequence[str],
        first: np.ndarray,
        score: np.ndarray,
        reasons: list[list[str]],
        s: RecallSettings,
    ) -> None:
        """Reciprocal-rank fusion with the second embedder, where it reads both texts."""
        second = self.second
        assert second is not None
        languages = set(s.second_languages)
        if language(query) not in languages:
            return
        readable = [i for i, t in enumerate(texts) if language(t) in languages | {""}]
        if not readable:
            return
        vectors = self.signal_vectors([texts[i] for i in readable])
        q = self._embed(second, [text])[0]
        other = np.array([float(vectors[texts[i]] @ q) for i in readable], dtype=np.float32)
        ranks = _ranks(other)
        c = s.rank_constant
        first_ranks = _ranks(first[readable])
        for j, i in enumerate(readable):
            # both rankings over the same readable candidates, each weighing half
            score[i] = 1.0 / (c + first_ranks[j]) + 1.0 / (c + ranks[j])
            reasons[i].append(f"{_short(second.name)} {other[j]:.2f}")

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
    score: np.ndarray,
    reasons: list[list[str]],
    s: RecallSettings,
) -> None:
    """Raise the memories that name the people asked about, or the relation asked."""
    for i, t in enumerate(texts):
        folded = fold(t)
        hit_names = [p for p in sorted(people) if re.search(rf"\b{re.escape(p)}\b", folded)]
        about = sorted(asked & _relations_named(t))
        if hit_names or about:
            score[i] += s.entity_weight / (s.rank_constant + 1)
        if hit_names:
            shown = [_display(t, p) for p in hit_names[:2]]
            reasons[i].append("name: " + ", ".join(shown))
        elif about:
            reasons[i].append("about: " + ", ".join(about[:2]))


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
