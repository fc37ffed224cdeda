"""Spanish questions in the notes' words: the tutor's notes are English, so a question asked
in Spanish is searched and weighed with the English words it stands for.

Its own module (it was the end of :mod:`backends.grounding`) because only the tutor's
retrieval translates: the support check compares English with English. A word goes through
the shipped glossary (``resources/kb/glossary_es.tsv``), by its form or by its Snowball stem
("vigilan" as "vigilar"); a Spanish function word is glue (:data:`GLUE`, "paciente" too: its
English is glue); an acronym written in Spanish order is the notes' one ("PCR" -> "CRP"); else
a cognate the notes really use ("warfarina" -> "warfarin", "amoxicilina" -> "amoxicillin",
"betalactamasa" -> "beta lactamase"), or a glossary word cut short ("electro"); else the word
stays as it is (issue 27: the held-out set's refusals were mostly such words).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Sequence

from backends.grounding import QUESTION_WORDS_ES, Vocabulary, fold, normal, words

#: Spanish endings and their English cognates ("intoxicación" -> "intoxication")
COGNATES = (
    ("ciones", "tions"),
    ("asa", "ase"),  # enzymes: "peroxidasa", "betalactamasa"
    ("orio", "ory"),
    ("oria", "ory"),
    ("ario", "ary"),
    ("aria", "ary"),
    ("encia", "ence"),
    ("encia", "ency"),
    ("ancia", "ance"),
    ("ancia", "ancy"),
    ("ando", "ating"),  # a gerund: "rotando" -> rotating
    ("cion", "tion"),
    ("sion", "sion"),
    ("emia", "aemia"),
    ("emia", "emia"),
    ("ina", "ine"),
    ("ina", "in"),
    ("ismo", "ism"),
    ("ico", "ic"),
    ("ica", "ic"),
    ("icos", "ics"),
    ("osis", "osis"),
    ("itis", "itis"),
    ("ia", "ia"),
    ("ia", "y"),
    ("dad", "ty"),
    ("mente", "ly"),
    ("oso", "ous"),
    ("osa", "ous"),
    ("ivo", "ive"),
    ("iva", "ive"),
    ("ante", "ant"),
    ("ente", "ent"),
    ("ar", "ate"),
    ("ia", "is"),
    ("ia", "ism"),
    ("ar", "ary"),
    ("ado", "ated"),
    ("ada", "ated"),
    ("ol", "ole"),
    ("o", ""),
    ("a", ""),
    ("e", ""),
    ("os", "s"),
    ("as", "s"),
    ("", ""),
)


def load_glossary(text: str) -> dict[str, str]:
    """``spanish<TAB>english`` lines (``#`` comments) as a folded dictionary."""
    glossary: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#") or "\t" not in line:
            continue
        spanish, english = line.split("\t", 1)
        glossary[fold(spanish.strip())] = english.strip().casefold()
    return glossary


#: Spanish function words, the forms of its auxiliary verbs and the words for a person (whose
#: English is glue too: "patient", "someone"): no topic of a question (Snowball's Spanish
#: stop list, folded, and a few more)
_GLUE = """
    algo alguien algun alguna algunas alguno algunos ante antes aquel aquella aquellas aquellos
    aqui asi aun cada casi contra cosa cosas cual cuales cuyo demas desde donde el ella ellas
    ello ellos esa esas ese eso esos esta estaba estabais estaban estabamos estabas estad
    estada estadas estais estamos estan estando estar estara estaran estaras
    estare estareis estaremos estaria estariais estariamos estarian estarias estas este esteis
    estemos esten estes esto estos estoy estuve estuvieron estuvimos estuviste estuvo fue fuera
    fueran fueron fui gente habeis haber habia habian habido habiendo habra habran habria
    habrian han has hasta hay haya hayan he hemos hube hubo la las le les lo los me mi mia mias
    mio mios mis mucha muchas mucho muchos muy nada nadie ni ningun ninguna ninguno nos
    nosotras nosotros nuestra nuestras nuestro nuestros os otra otras otro otros paciente
    pacientes persona personas poca pocas poco pocos porque pues quien quienes sea sean ser
    sera seran seria serian siendo sido soy su sus suya suyas suyo suyos tal tambien tan tanta
    tantas tanto tantos te tendra tendran tenemos tener tenga tengan tengo tenia tenian ti
    tiene tienen toda todas todo todos tu tus tuve tuvo usted ustedes vez veces vosotras
    vosotros vuestra vuestro yo
    hacer hace hacen hacerle hacerse hacerlo hacerla hecho haciendo hizo ir va van vamos
    suele suelen soler solia
    """
GLUE = frozenset(_GLUE.split())
#: glossary keys that are verbs (their stems reach every form: "vigilan", "pone")
_INFINITIVE = re.compile(r"(?:ar|er|ir)$")
#: the shortest stem of a glossary word that is not a verb by which its other forms are found
_NOUN_STEM = 5
#: English prefixes Spanish writes joined where the notes hyphenate ("anti-inflammatory")
_PREFIXES = (
    ("anti", "anti"),
    ("beta", "beta"),
    ("alfa", "alpha"),
    ("pre", "pre"),
    ("post", "post"),
    ("auto", "auto"),
    ("intra", "intra"),
    ("extra", "extra"),
    ("micro", "micro"),
    ("macro", "macro"),
)


def translate(
    question: str,
    glossary: dict[str, str],
    vocabulary: Vocabulary,
    acronyms: Iterable[Sequence[str]] = (),
) -> dict[str, str]:
    """Spanish word -> English words for ``question`` (see the module doc): "" for glue.

    ``acronyms``: the names of each of the notes' entities (the entity list's lines), for a
    Spanish acronym written in Spanish order ("PCR": proteína C reactiva, "CRP")."""
    out: dict[str, str] = {}
    capitals = {fold(t) for t in re.findall(r"(?<!\w)[A-ZÁÉÍÓÚÑ]{2,6}(?!\w)", question)}
    stems = _glossary_stems(tuple(sorted(glossary.items())))
    known = list(acronyms)
    for w in words(question):
        if w in out:
            continue
        if w in glossary:  # "produce make": the first the notes use (else the first)
            out[w] = _gloss(glossary[w], vocabulary)
            continue
        if w in QUESTION_WORDS_ES:
            continue
        if w in GLUE:
            out[w] = ""
            continue
        if w in capitals:
            found = _acronym(w, known)
            if found:
                out[w] = found
            continue
        if len(w) < 4:
            continue
        stemmed = stems.get(_stem(w))
        found = (
            _cognate(w, vocabulary)
            or (_gloss(stemmed, vocabulary) if stemmed else "")
            or _compound(w, vocabulary)
            or _clipped(w, glossary, vocabulary)
        )
        if found:
            out[w] = found
    return out


#: Spanish question and function words in English, for a question read in English
FUNCTION_WORDS = {
    "que": "what",
    "cual": "which",
    "cuales": "which",
    "como": "how",
    "cuando": "when",
    "donde": "where",
    "quien": "who",
    "por": "for",
    "para": "for",
    "porque": "because",
    "no": "not",
    "con": "with",
    "sin": "without",
    "en": "in",
    "de": "of",
    "del": "of the",
    "al": "to the",
    "a": "to",
    "entre": "between",
    "tras": "after",
    "durante": "during",
    "hasta": "until",
    "si": "if",
    "y": "and",
    "e": "and",
    "o": "or",
    "u": "or",
    "el": "the",
    "la": "the",
    "los": "the",
    "las": "the",
    "un": "a",
    "una": "a",
    "es": "is",
    "son": "are",
    "hay": "there is",
    "puede": "can",
    "pueden": "can",
    "debe": "must",
    "deben": "must",
    "mas": "more",
    "muy": "very",
}


def english(question: str, translated: dict[str, str]) -> str:
    """``question`` in English word for word: each word as translated (glue left out), a
    function word as English says it, any other as it is ("¿Cuándo no se debe dar
    nitrofurantoína?" -> "when not must give nitrofurantoin")."""
    out = []
    for w in words(question):
        said = translated[w] if w in translated else FUNCTION_WORDS.get(w, w)
        if said and (w in translated or w in FUNCTION_WORDS or w not in QUESTION_WORDS_ES):
            out.append(said)
    return " ".join(out)


def _gloss(entry: str, vocabulary: Vocabulary) -> str:
    """A glossary entry's English: the first of its words the notes use (else the first)."""
    choices = entry.split()
    known = [c for c in choices if normal(c) in vocabulary]
    return (known or choices)[0]


@functools.cache
def _stemmer() -> object:
    import snowballstemmer  # noqa: PLC0415 — lazy: only Spanish questions need it

    return snowballstemmer.stemmer("spanish")


def _stem(word: str) -> str:
    return str(_stemmer().stemWord(word))  # type: ignore[attr-defined]


@functools.lru_cache(maxsize=8)
def _glossary_stems(entries: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The glossary by its words' Snowball stems: a verb's by its stem (at least three
    letters: "pon" for "poner"), another word's by a stem of at least :data:`_NOUN_STEM`
    letters; a stem two entries of other meanings share is left out."""
    out: dict[str, str] = {}
    clashing: set[str] = set()
    for spanish, meaning in entries:
        stem = _stem(spanish)
        if len(stem) < (3 if _INFINITIVE.search(spanish) else _NOUN_STEM):
            continue
        if stem in out and normal(out[stem].split()[0]) != normal(meaning.split()[0]):
            clashing.add(stem)
        out.setdefault(stem, meaning)
    return {stem: meaning for stem, meaning in out.items() if stem not in clashing}


def _acronym(word: str, terms: Iterable[Sequence[str]]) -> str:
    """The notes' name whose acronym has the letters of a Spanish one in another order
    (Spanish puts the adjective after the noun: "PCR" is "CRP", "IECA" is "ACE inhibitor",
    ACEI), when only one entity has them (``terms``: each entity's names)."""
    found = []
    for names in terms:
        matching = [
            name
            for name in names
            if fold(acronym := _initials(name)) != word and sorted(fold(acronym)) == sorted(word)
        ]
        if matching:
            found.append(matching[0])
    return found[0] if len(found) == 1 and len(word) > 2 else ""


def _initials(name: str) -> str:
    """A name's acronym: itself in capitals ("CRP"), else its words' initials, an acronym in
    it kept whole ("C-reactive protein": CRP; "ACE inhibitor": ACEI)."""
    if name.isupper():
        return name
    parts = [p for p in re.split(r"[\s-]+", name) if p]
    return "".join(p if p.isupper() else p[0] for p in parts).upper() if len(parts) > 1 else ""


def _compound(word: str, vocabulary: Vocabulary) -> str:
    """A word Spanish writes joined where the notes hyphenate: "betalactamasa" -> "beta
    lactamase", "antiinflamatorio" -> "anti inflammatory" (the rest a cognate they use)."""
    for spanish, prefix in _PREFIXES:
        rest = word[len(spanish) :]
        if word.startswith(spanish) and len(rest) >= 5:
            found = _cognate(rest, vocabulary)
            if found:
                return f"{prefix} {found}" if normal(prefix) in vocabulary else found
    return ""


def _clipped(word: str, glossary: dict[str, str], vocabulary: Vocabulary) -> str:
    """A word cut short, as speech does ("el electro": electrocardiograma): the English of
    the glossary words it begins, when they all mean one thing."""
    if len(word) < 5:
        return ""
    meant = {
        _gloss(meaning, vocabulary)
        for spanish, meaning in glossary.items()
        if spanish.startswith(word) and len(spanish) >= len(word) + 3
    }
    return meant.pop() if len(meant) == 1 else ""


def _spellings(word: str) -> list[str]:
    """``word`` and its English-looking spellings: "f" as "ph" (anafilaxia), without the "e"
    Spanish puts before "s" + consonant (estatina)."""
    out = [word]
    if "f" in word:
        out.append(word.replace("f", "ph"))
    if re.match(r"es[bcdfgklmnpqrtvz]", word):
        out += [s[1:] for s in list(out)]
    # Greek spellings English keeps and Spanish drops: "hipo"/"hiper" (hypo-, hyper-), "tiro"
    # (thyro-), "gluc" (glyc-), "i" for "y" ("acetilcisteína" -> acetylcysteine; issue 27)
    for spanish, english in GREEK:
        out += [s.replace(spanish, english) for s in out if spanish in s]
    # English doubles a consonant Spanish writes once: "amoxicilina" (amoxicillin),
    # "inflamatorio" (inflammatory), "diferencia" (difference) — one at a time, long words
    if len(word) >= 7:
        for s in list(out):
            out += [
                s[: i + 1] + s[i:]
                for i in range(1, len(s) - 1)
                if s[i] in "bcdfglmnprst" and s[i - 1] in "aeiou" and s[i + 1] in "aeiou"
            ]
    if 0 < word.count("i") <= 3:
        for s in list(out):
            places = [i for i, c in enumerate(s) if c == "i"]
            for chosen in itertools.chain.from_iterable(
                itertools.combinations(places, n) for n in range(1, len(places) + 1)
            ):
                out.append("".join("y" if i in chosen else c for i, c in enumerate(s)))
    return list(dict.fromkeys(out))


GREEK = (
    ("hipo", "hypo"),
    ("hiper", "hyper"),
    ("tiro", "thyro"),
    ("gluc", "glyc"),
    ("trom", "throm"),
    ("tera", "thera"),
    ("tora", "thora"),
)


def _cognate(word: str, vocabulary: Vocabulary) -> str:
    """An English word the notes use that ``word`` (or its singular) is a cognate of, or ""."""
    found = _cognate_of(word, vocabulary)
    if not found and word.endswith("s") and len(word) > 5:
        found = _cognate_of(word[:-1], vocabulary)
    return found


def _cognate_of(word: str, vocabulary: Vocabulary) -> str:
    for spelling in _spellings(word):
        for ending, english in COGNATES:
            if ending and not spelling.endswith(ending):
                continue
            candidate = (spelling[: len(spelling) - len(ending)] if ending else spelling) + english
            if len(candidate) >= 3 and normal(candidate) in vocabulary:
                # the notes' own spelling: "warfarina" -> "warfarin", not "warfarine" (which
                # the entity matcher does not know)
                return vocabulary.spelling(candidate)
    return ""
