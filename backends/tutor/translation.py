"""Spanish questions in the notes' words: the tutor's notes are English, so a question asked
in Spanish is searched and weighed with the English words it stands for.

Its own module (it was the end of :mod:`backends.grounding`) because only the tutor's
retrieval translates: the support check compares English with English. A word goes through
the shipped glossary (``resources/kb/glossary_es.tsv``), else a cognate the notes really use
("warfarina" -> "warfarin", "anafilaxia" -> "anaphylaxis"), else it stays as it is.
"""

from __future__ import annotations

import itertools
import re

from backends.grounding import QUESTION_WORDS_ES, Vocabulary, fold, normal, words

#: Spanish endings and their English cognates ("intoxicación" -> "intoxication")
COGNATES = (
    ("ciones", "tions"),
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


def translate(question: str, glossary: dict[str, str], vocabulary: Vocabulary) -> dict[str, str]:
    """Spanish word -> English words for ``question``: the glossary's, else a cognate the notes
    really use ("warfarina" -> "warfarin"), else nothing (the word stays as it is)."""
    out: dict[str, str] = {}
    for w in words(question):
        if w in glossary:  # "produce make": the first the notes use (else the first)
            choices = glossary[w].split()
            known = [c for c in choices if normal(c) in vocabulary]
            out[w] = (known or choices)[0]
            continue
        if w in QUESTION_WORDS_ES or len(w) < 4:
            continue
        found = _cognate(w, vocabulary)
        if found:
            out[w] = found
    return out


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
    """An English word the notes use that ``word`` is a cognate of, or ""."""
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
