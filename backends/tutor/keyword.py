"""Keyword retrieval: SQLite FTS5 with bm25 over the knowledge base's chunks.

The question becomes an FTS5 query of quoted words joined by ``OR`` (stop words dropped, the
porter stemmer does the rest); it is a *bound parameter*, as are the user's scopes, which are
filtered inside the same SQL statement (CT6's rule, applied here too). The title column weighs
more than the text: a question naming a topic finds that topic's note first.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from backends import failures
from backends.errors import StoreUnavailableError
from backends.i18n import _
from backends.tutor.kb import KnowledgeBase

TITLE_WEIGHT = 4.0
TEXT_WEIGHT = 1.0

#: the one statement keyword search runs; everything variable is a parameter
SEARCH_SQL = (
    "SELECT c.chunk_id AS chunk_id, bm25(chunks_fts, :title_weight, :text_weight) AS score "
    "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
    "WHERE chunks_fts MATCH :query "
    "AND c.scope IN (SELECT value FROM json_each(:scopes)) "
    "ORDER BY score LIMIT :k"
)

_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers him his how i if in into is it its itself just me more
    most my no nor not now of off on once only or other our out over own same she should so
    some such than that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with would you your
    tell explain describe give list name mean means meant define defined used use using
    patient patients someone person people usually often typically common commonly main
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

#: Spanish function and question words: never searched for
_STOP_ES = """
    a al algo como con cual cuales cuando cuanto cuanta cuantos cuantas de del desde donde el
    ella ellas ellos en entre es esta este esto estos estas fue ha hay la las le les lo los mas
    muy no o para pero por porque que quien se ser si sin sobre son su sus tambien te tiene un
    una uno unos unas y ya qué cuál cuáles cómo cuándo cuánto dónde más sí también está están
"""
STOP_WORDS_ES = frozenset(_STOP_ES.split())
#: the shortest Spanish stem searched as a prefix ("control"* finds "controla", "controlan")
MIN_STEM = 5

_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(question: str, spanish: str = "") -> str:
    """``"word" OR "word" ...`` from the question's content words ("" when there are none).

    ``spanish``: the question's Spanish words, also searched by their Snowball stem as a
    prefix (``"anticoagul"*`` finds "anticoagulantes" and "anticoagulación"); the index folds
    accents (``remove_diacritics 2``), so "analisis" finds "análisis"."""
    words: list[str] = []
    for word in _WORD.findall(question.lower()):
        if word in STOP_WORDS or word in STOP_WORDS_ES or (len(word) < 2 and not word.isdigit()):
            continue
        if word not in words:
            words.append(word)
    terms = [f'"{w}"' for w in words[:32]]
    for stem in spanish_stems(spanish):
        if f'"{stem}"*' not in terms:
            terms.append(f'"{stem}"*')
    return " OR ".join(terms[:48])


def spanish_stems(text: str) -> list[str]:
    """Snowball Spanish stems of ``text``'s content words (at least :data:`MIN_STEM` letters)."""
    if not text:
        return []
    stemmer = _spanish_stemmer()
    out: list[str] = []
    for word in _WORD.findall(text.lower()):
        if word in STOP_WORDS_ES or word.isdigit():
            continue
        stem = stemmer.stemWord(word)
        if len(stem) >= MIN_STEM and stem not in out:
            out.append(stem)
    return out[:16]


@functools.cache
def _spanish_stemmer() -> Any:
    import snowballstemmer  # noqa: PLC0415 — lazy: only Spanish questions need the stemmer

    return snowballstemmer.stemmer("spanish")


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: str
    #: bm25 relevance, larger is better (FTS5's score negated)
    score: float


class KeywordIndex:
    """FTS5 search over :class:`KnowledgeBase` chunks, filtered by scope in the query."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        #: the parameters of the last search (for the trace shown to testers and in docs)
        self.last_parameters: dict[str, Any] = {}

    def search(
        self, question: str, scopes: Sequence[str], k: int, *, spanish: str = ""
    ) -> list[KeywordHit]:
        """The ``k`` best chunks among ``scopes``; ``spanish``: the question's Spanish words,
        searched by their stems too (:func:`fts_query`)."""
        query = fts_query(question, spanish)
        params: dict[str, Any] = {
            "query": query,
            "scopes": json.dumps(list(scopes)),
            "k": int(k),
            "title_weight": TITLE_WEIGHT,
            "text_weight": TEXT_WEIGHT,
        }
        self.last_parameters = params
        if not query or k <= 0 or not scopes:
            return []
        try:
            with self.kb.lock:
                rows = self.kb.conn.execute(SEARCH_SQL, params).fetchall()
        except sqlite3.Error as err:
            raise StoreUnavailableError(
                failures.failed(
                    _("{path}: the keyword search failed").format(path=self.kb.path), err
                )
            ) from err
        return [KeywordHit(r[0], -float(r[1])) for r in rows]
