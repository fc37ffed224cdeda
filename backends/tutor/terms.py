"""The tutor's entities: the curated term list (``resources/kb/terms.txt``) and a whole-word
matcher over it.

Its own module because the entities are one idea shared by three others: the knowledge base
records which chunks mention which entity (the graph's relations), retrieval finds a
question's entities (the graph's seeds, the notes' names for lay words) and the answer
weighs a sentence by the question's entities it names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Term:
    name: str
    aliases: tuple[str, ...]


class Terms:
    """The curated entity list (``terms.txt``) and a whole-word matcher over it.

    Matching ignores case, except for aliases written in capitals (acronyms such as ``AF``),
    which match only in capitals. At one position the longest alias wins.
    """

    def __init__(self, terms: Sequence[Term]) -> None:
        self.terms = tuple(terms)
        folded: dict[str, str] = {}
        exact: dict[str, str] = {}
        for term in self.terms:
            for alias in (term.name, *term.aliases):
                if len(alias) > 1 and alias.isupper():
                    exact.setdefault(alias, term.name)
                else:
                    folded.setdefault(alias.casefold(), term.name)
        self._folded = folded
        self._exact = exact
        self._folded_re = _alternation(folded, re.IGNORECASE)
        self._exact_re = _alternation(exact, 0)
        self._each: list[tuple[re.Pattern[str], str]] | None = None

    @classmethod
    def load(cls, path: Path) -> Terms:
        terms: list[Term] = []
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            names = [part.strip() for part in line.split("|") if part.strip()]
            terms.append(Term(names[0], tuple(names[1:])))
        return cls(terms)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.terms]

    def find(self, text: str, *, nested: bool = False) -> list[str]:
        """Canonical names mentioned in ``text``, in order of first mention, each once.

        With ``nested``, terms inside a longer match count too ("paracetamol overdose" also
        names "paracetamol"): for short texts such as questions.
        """
        if nested:
            return self._find_nested(text)
        hits: list[tuple[int, int, str]] = []
        if self._folded_re is not None:
            for m in self._folded_re.finditer(text):
                hits.append((m.start(), -len(m.group(0)), self._folded[m.group(0).casefold()]))
        if self._exact_re is not None:
            for m in self._exact_re.finditer(text):
                hits.append((m.start(), -len(m.group(0)), self._exact[m.group(0)]))
        return _ordered(hits)

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where ``text`` names an entity: ``(start, end, canonical name)``, left to right,
        the longest alias at a position, never overlapping."""
        hits: list[tuple[int, int, str]] = []
        for pattern, names, fold in (
            (self._folded_re, self._folded, True),
            (self._exact_re, self._exact, False),
        ):
            if pattern is None:
                continue
            for m in pattern.finditer(text):
                found = m.group(0)
                hits.append((m.start(), m.end(), names[found.casefold() if fold else found]))
        out: list[tuple[int, int, str]] = []
        for start, end, name in sorted(hits, key=lambda h: (h[0], h[0] - h[1])):
            if not out or start >= out[-1][1]:
                out.append((start, end, name))
        return out

    def _find_nested(self, text: str) -> list[str]:
        if self._each is None:
            self._each = [
                (re.compile(rf"(?<!\w){re.escape(alias)}(?!\w)", flags), name)
                for aliases, flags in ((self._folded, re.IGNORECASE), (self._exact, 0))
                for alias, name in aliases.items()
            ]
        hits = []
        for pattern, name in self._each:
            m = pattern.search(text)
            if m:
                hits.append((m.start(), -len(m.group(0)), name))
        return _ordered(hits)


def _ordered(hits: list[tuple[int, int, str]]) -> list[str]:
    out: list[str] = []
    for _, _, name in sorted(hits):
        if name not in out:
            out.append(name)
    return out


def _alternation(aliases: dict[str, str], flags: int) -> re.Pattern[str] | None:
    if not aliases:
        return None
    ordered = sorted(aliases, key=len, reverse=True)
    body = "|".join(re.escape(a) for a in ordered)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", flags)
