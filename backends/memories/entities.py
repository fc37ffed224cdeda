"""Who and what a memory or a question is about: people by relation, names, answer kinds.

The words recall reads besides the embedders' meaning (backends.memories.recall): the people
the facts name by relation ("my sister Lucía", "mi jefa se llama Priya"), the names a text
holds (accents folded: "Lucia" is "Lucía"), what a question asks for (a date for "when"...),
and the language of a text. :class:`EntityIndex` keeps them for every searchable memory,
updated incrementally as the store changes. Qt-free.
"""

from __future__ import annotations

import functools
import re
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable

from backends.stores.memories import MemoryStore

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
#: words for what makes a relation rather than for a person in it ("married", "boda"): a
#: question using them asks about that relation (whose, the question says) without naming
#: anyone by it, and a fact using them is about it
TOPICS: dict[str, frozenset[str]] = {
    "spouse": _set(
        "marry married marries marrying marriage wedding weddings wed wedded engaged "
        "engagement fiance fiancee honeymoon divorce divorced "
        "casado casada casados casadas casarse casar casarnos casarme casamos casaron "
        "boda bodas matrimonio prometido prometida compromiso divorcio divorciado "
        "divorciada"
    ),
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
    "cuando donde como hay por para ok yes no i'm i’m i've i’ve i'd i’d i'll i’ll"
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

#: the commonest little words of each language (none that is a word of the other: "a",
#: "no", "me", "son", "come" are left out)
_EN_WORDS = _set(
    "the an is are was were be been am my mine i you your he she it its his her him they them "
    "their we us our what which who whom whose when where why how do does did have has had of "
    "in on at to from by with for about into after before and or but not never can could would "
    "should will may might must this that these those there here than then so if because very "
    "just also some any all each every more most much many other only too get got like i'm "
    "i've i'd don't doesn't didn't can't won't isn't it's since until while"
)
_ES_WORDS = _set(
    "el la los las lo un una unos unas es está están estoy estás era fue ser soy eres somos mi "
    "mis tu tus su sus yo tú él ella qué cuál cuáles quién quiénes cuándo dónde adónde cómo "
    "cuánto cuánta cuántos cuántas de del al en y o pero con sin para por que se te le les nos "
    "muy más menos también ya hay tengo tiene tienen hace desde hasta sobre entre cada todo "
    "todos este esta estos estas ese esa eso cuando donde porque sí nuestro nuestra nuestros "
    "nuestras mí"
)

_ES_FOLDED = frozenset(
    "".join(c for c in unicodedata.normalize("NFKD", w) if not unicodedata.combining(c))
    for w in _ES_WORDS
)

_ACCENTED = re.compile(r"[ñáéíóú]")
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
_TOPIC = _relation_table({r: tuple(w) for r, w in TOPICS.items()})
_RELATION_WORDS = frozenset(_TOPIC) | frozenset(_QUERY_RELATION)


def _bare(word: str) -> str:
    """The word without a possessive 's ("Marco's" -> "Marco")."""
    if word[-2:] in ("'s", "’s"):
        return word[:-2]
    if word[-1:] in ("'", "’"):
        return word[:-1]
    return word


def names(text: str) -> list[str]:
    """Capitalised words past the first that are not question or calendar words: the
    people, places and things a text names, folded ("Lucía" -> "lucia")."""
    return _names_in(_words(text))


def _names_in(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words[1:]:
        if not word[:1].isupper():
            continue
        folded = fold(_bare(word))
        if folded in _NOT_NAMES or folded in _CALENDAR or len(folded) < 2:
            continue
        if folded not in out:
            out.append(folded)
    return out


def relations(fact: str) -> set[tuple[str, str]]:
    """(relation, folded name) pairs a fact states: "my sister Lucía", "my mother's name is
    Carmen", "mi jefa se llama Priya", "Leo's best friend is a boy called Sami"."""
    return _relations_in(_words(fact))


_TITLES = _set("mr mrs ms dr dra doctor doctora")
#: words before a relation that make it someone else's ("his wife", "su marido")
_OTHERS = _set("his her their its whose su sus")
#: words after a relation that name whose it is ("la mujer de Javier", "the wife of Javier")
_OF = _set("of de del")
_MINE = _set("my mi mis")


def _someone_elses(words: list[str], index: int) -> bool:
    """Whether the relation at ``words[index]`` is another person's, not the user's:
    "Leo's best friend", "Javier's wife", "his wife", "su marido", "la mujer de Javier"."""
    for before in reversed(words[max(0, index - 3) : index]):  # "Leo's best friend"
        folded, bare = fold(before), _bare(before)
        if folded in _OTHERS:
            return True
        owner = fold(bare)
        possessive = bare != before and owner not in _NOT_NAMES
        if possessive and (bare[:1].isupper() or owner in _QUERY_RELATION):
            return True  # a name's or a relation's: "Leo's", "my cousin's"
        if folded in _NOT_NAMES:  # "my", "the", "mi": the relation's own determiner
            break
    after = words[index + 1 : index + 3]  # "la mujer de Javier", "the wife of my cousin"
    return (
        len(after) == 2
        and fold(after[0]) in _OF
        and (after[1][:1].isupper() or fold(after[1]) in _MINE)
    )


def _relations_in(words: list[str], anyones: bool = False) -> set[tuple[str, str]]:
    """The user's relations the words state (with ``anyones``, other people's too)."""
    out: set[tuple[str, str]] = set()
    for index, word in enumerate(words):
        if word[:1].isdigit():
            continue
        relation = _FACT_RELATION.get(fold(_bare(word)))
        if relation is None or (not anyones and _someone_elses(words, index)):
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
            while original[1:] and fold(original[0]) in _TITLES:  # "called Mr. Ito"
                original = original[1:]
            if original and original[0][:1].isupper():
                out.add((relation, fold(_bare(original[0]))))
    return out


def scan(text: str) -> tuple[frozenset[tuple[str, str]], tuple[str, ...]]:
    """:func:`relations` and :func:`names` of a text, its words split once (what the entity
    index reads of each memory)."""
    words = _words(text)
    return frozenset(_relations_in(words)), tuple(_names_in(words))


@functools.lru_cache(maxsize=65_536)
def _relations_named(text: str) -> frozenset[str]:
    """The relations a text mentions by word ("my mum" -> mother)."""
    words = map(fold, map(_bare, _words(text)))
    return frozenset(_FACT_RELATION[w] for w in words if w in _FACT_RELATION)


def topics(question: str) -> frozenset[str]:
    """The relations a question asks about without naming anyone by them: another person's
    ("my cousin's wife", "el marido de Lucía") and those its words for a relation's making
    stand for ("married", "boda"), with the narrower ones they cover."""
    if not (_RELATION_WORDS & words_of(question)):  # most texts: no word to look at
        return frozenset()
    words = _words(question)
    found: set[str] = set()
    for index, word in enumerate(words):
        folded = fold(_bare(word))
        if folded in _TOPIC:
            found.add(_TOPIC[folded])
        elif folded in _QUERY_RELATION and _someone_elses(words, index):
            found.add(_QUERY_RELATION[folded])
    for relation in list(found):
        found.update(WIDER.get(relation, ()))
    return frozenset(found)


@functools.lru_cache(maxsize=65_536)
def about(text: str) -> frozenset[str]:
    """What :func:`topics` finds in a fact: another person's relations ("Javier's wife"),
    and those its words for a relation's making stand for ("our wedding" -> spouse)."""
    return topics(text)


_FIRST_PERSON = re.compile(
    r"\b(?:I|I['’]m|I['’]ve|I['’]d|me|we|us|myself|ourselves|yo|nosotros|nosotras|nos)\b"
)


def first_person(question: str) -> bool:
    """Whether a question's subject includes the user ("When did Daniel and I get
    married?"), not only their possessions and people ("my cousin")."""
    return _FIRST_PERSON.search(question) is not None


def asks_for(question: str) -> str | None:
    """What a question asks for: "date", "person", "place", "number" or None."""
    for pattern, kind in _ASKS:
        if pattern.search(question):
            return kind
    return None


@functools.lru_cache(maxsize=65_536)
def persons(fact: str) -> frozenset[str]:
    """The people a fact names (folded): by relation (the user's or another's: "Javier's
    wife Elena"), or after "called", "Dr."..."""
    words = _words(fact)
    found = {name for _, name in _relations_in(words, anyones=True)}
    for index, word in enumerate(words[:-1]):
        if _NAME_CUES.fullmatch(fold(word).rstrip(".")) and words[index + 1][:1].isupper():
            found.add(fold(_bare(words[index + 1])))
    return frozenset(found - _NOT_NAMES)


@functools.lru_cache(maxsize=65_536)
def named(fact: str) -> frozenset[str]:
    """The people a fact gives a name to (folded): "my boss is called Priya", "mi jefa se
    llama Priya", "my landlord is Mr. Schmidt" — it says who someone is."""
    words = _words(fact)
    folded = [fold(w) for w in words]
    found: set[str] = set()
    for index in range(len(words) - 1):
        one = folded[index]
        two = " ".join(folded[index : index + 2])
        if _NAME_CUES.fullmatch(two):
            following = words[index + 2 : index + 4]
        elif _NAME_CUES.fullmatch(one):
            following = words[index + 1 : index + 3]
        else:
            continue
        while following[1:] and fold(following[0]) in _TITLES:
            following = following[1:]
        if following and following[0][:1].isupper():
            found.add(fold(_bare(following[0])))
    return frozenset(found - _NOT_NAMES)


def holds(fact: str, known: Iterable[str] = ()) -> set[str]:
    """What kinds of answer a fact holds (a date, a person, a place, a number); a person
    counts when it is not one of ``known`` (who the question is about already), or when
    the fact gives its name ("my boss is called Priya" answers "Who is my boss?", though
    the question's relation already found Priya)."""
    kinds = set(_kinds(fact))
    if persons(fact) - set(known) or named(fact):
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


@functools.lru_cache(maxsize=65_536)
def language(text: str) -> str:
    """ "en", "es" or "" (unsure), by the commonest little words: enough to know whether an
    English-only model can read a text."""
    words = [fold(w) for w in _words(text)]
    english = sum(w in _EN_WORDS for w in words)
    spanish = sum(w in _ES_FOLDED for w in words)
    if re.search(r"[¿¡]", text):
        spanish += 2
    # accents in lower-case words ("alérgica", "niño"), not in names ("Lucía")
    spanish += sum(1 for w in _words(text) if w.islower() and _ACCENTED.search(w))
    if english > spanish:
        return "en"
    if spanish > english:
        return "es"
    return ""


@functools.lru_cache(maxsize=65_536)
def words_of(text: str) -> frozenset[str]:
    """The text's words, folded and without a possessive 's: what a name is looked up in."""
    return frozenset(fold(_bare(w)) for w in _words(text))


def _changed(before: list[str], after: list[str]) -> tuple[set[str], set[str]]:
    """(removed, added) between two readings of the store's texts, each text once in each.

    Compared place by place (blocks of references in C, identity first), so a store that
    appends adds, fills a deleted row with its last one and rewrites an updated row in place
    costs a pass over references, not a hash of every text; any other order is still right,
    only slower.
    A text at the same place in both is unchanged; every other one is in ``was`` or ``now``,
    and is removed when only in ``was``, added when only in ``now``."""
    common = min(len(before), len(after))
    moved: list[int] = []
    for start in range(0, common, 4096):  # whole blocks compared in C, by identity first
        stop = min(common, start + 4096)
        if before[start:stop] != after[start:stop]:
            moved.extend(i for i in range(start, stop) if before[i] != after[i])
    was = {before[i] for i in moved}
    now = {after[i] for i in moved}
    was.update(before[common:])
    now.update(after[common:])
    return was - now, now - was


class EntityIndex:
    """Who the memories name, by relation (``sister -> {lucia}``), and which memories name
    each name (``lucia -> {texts}``).

    Derived from the searchable texts and kept in step with the store: when its generation
    moves, only the texts added or removed since are read (a set difference; no text is read
    twice). The first build over a large store (more than :attr:`INLINE` texts: about a
    second at 100,000) runs in a background thread, so no search waits for it; until it is
    done recall goes without names (:meth:`ready` says so). Above :attr:`LIMIT` texts there
    is no index at all.
    """

    #: above this many memories the index is not built: recall goes without query
    #: expansion and name look-up
    LIMIT = 200_000
    #: up to this many new texts are read in the search that needs them; more, in a thread
    INLINE = 20_000

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._generation = -1
        #: text -> (the (relation, name) pairs it states, the names it holds)
        self._texts: dict[str, tuple[frozenset[tuple[str, str]], tuple[str, ...]]] = {}
        self._pairs: Counter[tuple[str, str]] = Counter()
        self.by_relation: dict[str, set[str]] = {}
        self.by_name: dict[str, set[str]] = {}
        #: everyone named by relation (derived from by_relation when asked, then kept)
        self._people: set[str] | None = None
        self._builder: threading.Thread | None = None
        #: the store's texts as last read, in its order (what the next read is compared with)
        self._order: list[str] = []
        #: how many texts have been read (tests check that a change reads only its own)
        self.learnt = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._texts)

    def ready(self) -> bool:
        """False while a background build runs (or before any refresh)."""
        with self._lock:
            return self._generation >= 0 and self._builder is None

    def refresh(self, store: MemoryStore, wait: bool = False) -> bool:
        """Bring the index to the store's current texts; True when it is up to date. With
        ``wait``, a large first build runs here instead of in a thread."""
        with self._lock:
            builder = self._builder
        if builder is not None:
            if not wait:
                return False
            builder.join()
        store.load()  # loaded first: the generation read next is that of the texts read
        generation = store.generation
        with self._lock:
            if generation == self._generation:
                return True
        texts = store.searchable_texts()
        with self._lock:
            if len(texts) > self.LIMIT:
                self._clear()
                self._generation = generation
                return False
            gone, added = _changed(self._order, texts)
            self._order = texts
            for text in gone:
                self._forget(text)
            if len(added) <= self.INLINE or wait:
                self._learn_all(added)
                self._generation = generation
                return True
            self._generation = generation
            self._builder = threading.Thread(
                target=self._build, args=(list(added),), name="memory-entities", daemon=True
            )
            self._builder.start()
            return False

    def wait(self) -> None:
        """Until a background build is done (the benchmark, a worker warming up)."""
        with self._lock:
            builder = self._builder
        if builder is not None:
            builder.join()

    def _build(self, texts: list[str]) -> None:
        try:
            for start in range(0, len(texts), 500):
                # read outside the lock, added under it: a search waits for 500 additions at
                # most, and is let in between blocks (a lock released and taken again at
                # once would keep it out until the end)
                block = [(text, scan(text)) for text in texts[start : start + 500]]
                with self._lock:
                    for text, found in block:
                        if text not in self._texts:
                            self._add(text, found)
                time.sleep(0)
        finally:
            with self._lock:
                self._builder = None

    def _clear(self) -> None:
        self._order, self._texts, self._pairs = [], {}, Counter()
        self.by_relation, self.by_name = {}, {}
        self._people = None

    def _learn_all(self, texts: Iterable[str]) -> None:
        for text in texts:
            if text not in self._texts:
                self._learn(text)

    def _learn(self, text: str) -> None:
        self._add(text, scan(text))

    def _add(self, text: str, read: tuple[frozenset[tuple[str, str]], tuple[str, ...]]) -> None:
        found, mentioned = read
        self._texts[text] = read
        self.learnt += 1
        if found:
            self._people = None
        for pair in found:
            self._pairs[pair] += 1
            self.by_relation.setdefault(pair[0], set()).add(pair[1])
        for name in mentioned:
            self.by_name.setdefault(name, set()).add(text)

    def _forget(self, text: str) -> None:
        found, mentioned = self._texts.pop(text, (frozenset(), ()))
        if found:
            self._people = None
        for pair in found:
            self._pairs[pair] -= 1
            if self._pairs[pair] <= 0:
                del self._pairs[pair]
                self.by_relation.get(pair[0], set()).discard(pair[1])
        for name in mentioned:
            named = self.by_name.get(name)
            if named is not None:
                named.discard(text)
                if not named:
                    del self.by_name[name]

    def expand(self, query: str) -> tuple[set[str], set[str]]:
        """The names a query is about (its own and those of the user's relations it names)
        and the relations it names (its own and those of the names it names); a relation of
        someone else ("my cousin's wife") names no one by it (see :func:`topics`)."""
        mentioned = set(names(query))
        words = _words(query)
        asked = {
            _QUERY_RELATION[w]
            for i, w in enumerate(map(fold, map(_bare, words)))
            if w in _QUERY_RELATION and not _someone_elses(words, i)
        }
        for relation in list(asked):
            asked.update(WIDER.get(relation, ()))
        people = set(mentioned)
        with self._lock:
            for relation in asked:
                people |= self.by_relation.get(relation, set())
            for relation, found in self.by_relation.items():
                if mentioned & found:
                    asked.add(relation)
        return people, asked

    def people(self) -> set[str]:
        """Everyone the memories name by relation (folded)."""
        with self._lock:
            if self._people is None:
                self._people = set().union(*self.by_relation.values())
            return self._people

    def naming(self, people: Iterable[str], limit: int) -> list[str] | None:
        """The memories naming any of ``people`` (sorted), or None when more than ``limit``
        do (then they are too common a name to look up one by one)."""
        out: set[str] = set()
        with self._lock:
            for name in people:
                out |= self.by_name.get(name, set())
                if len(out) > limit:
                    return None
        return sorted(out)
