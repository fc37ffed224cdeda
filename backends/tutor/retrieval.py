"""Finding the passages for a question (CT7): understanding it, then three searches, fused.

A question is first *understood*: its language, its English words when it is Spanish
(:mod:`backends.tutor.translation`), the notes' words for its lay words, its entities, and —
when it names nothing of the notes and the thread has an earlier question — the words it
carries over from that one (:mod:`backends.tutor.followup`). Then the user's scopes only are
searched three ways: vector (scope in the ``where`` filter; a Spanish question also by the
second, multilingual vector), keyword (FTS5, :mod:`backends.tutor.keyword`, scope in the SQL)
and graph (the question's entities and their relations, scope in the query); the ranked
lists are fused by reciprocal rank (:mod:`backends.tutor.fusion`).

A method whose store cannot be reached is left out and the retrieval says so
(:attr:`Retrieval.degraded`); the others answer. This module reads the stores through
:class:`~backends.tutor.indexing.Index`; it never judges the passages (that is
:mod:`backends.tutor.answer`'s).
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from backends import grounding
from backends.errors import (
    CancelledError,
    CustodiaEnvironmentError,
    ModelUnavailableError,
    StoreUnavailableError,
)
from backends.failures import split, with_details
from backends.grounding import Source, Vocabulary
from backends.i18n import N_, _
from backends.stores.graph import GraphUnavailableError
from backends.stores.vectors import VectorHit
from backends.text import checked_text
from backends.tutor import aspects, followup, translation
from backends.tutor.fusion import Hit, Reason, rrf
from backends.tutor.indexing import Index
from backends.tutor.kb import scope_filter, scopes_for, user_scope

log = logging.getLogger(__name__)

#: candidates each method contributes to the fusion
CANDIDATES = 20
#: the most passages a turn may cite (each method contributes at most ``CANDIDATES``)
MAX_PASSAGES = CANDIDATES
#: passages given to the chat model (and cited)
CONTEXT_PASSAGES = 5
#: reciprocal rank fusion: K and per-method weights, chosen by two-fold cross-validation on
#: bench/tutor_eval.json (both folds chose the same; docs/BENCHMARKS.md has the held-out
#: figures). The graph is the weakest single method, so it counts less.
FUSION_K = 5
FUSION_WEIGHTS = {"vector": 1.0, "keyword": 1.0, "graph": 0.3, "multilingual": 1.0}
MAX_SEEDS = 8
GLOSSARY_FILE = "glossary_es.tsv"


def _unavailable(sentence: str, problem: str) -> str:
    """Why a retrieval method is out, in the user's language: ``sentence`` (marked with
    ``N_``) and the store's message, its details kept last."""
    main, details = split(problem)
    return with_details(
        _("{sentence} ({problem})").format(sentence=_(sentence), problem=main), details
    )


class TutorError(CustodiaEnvironmentError):
    """A turn that cannot be completed for a reason outside the code (message for the user)."""


class EmptyQuestionError(TutorError):
    """There is no question to answer."""


# -- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Passage:
    """A retrieved chunk as the answer cites it: ``[number] title``."""

    number: int
    chunk_id: str
    doc_id: str
    title: str
    path: str
    scope: str
    text: str
    score: float
    reasons: tuple[Reason, ...]

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(r.method for r in self.reasons)

    def why(self) -> str:
        return "; ".join(r.line() for r in self.reasons)

    def context_line(self, most_words: int = 0) -> str:
        text = self.text
        if most_words and len(text.split()) > most_words:
            text = " ".join(text.split()[:most_words]) + " …"
        return f"[{self.number}] {self.title}: {text}"

    def source_for_check(self) -> Source:
        return Source(self.number, self.title, self.text)

    @property
    def source(self) -> str:
        """Where the passage comes from, for people: the note (shipped) or the file."""
        return self.path


@dataclass(frozen=True)
class GraphView:
    """The entities around a question: its own (``seeds``) and their strongest relations."""

    seeds: tuple[str, ...] = ()
    edges: tuple[tuple[str, str, int], ...] = ()


@dataclass(frozen=True)
class Retrieval:
    question: str
    user: str
    scopes: tuple[str, ...]
    passages: tuple[Passage, ...]
    #: each method's ranked chunk ids (the candidates fused)
    methods: dict[str, list[str]]
    graph: GraphView
    #: a sentence per method that could not run (empty when all three ran)
    degraded: tuple[str, ...]
    #: the exact filters and parameters each method's query carried
    trace: dict[str, Any]
    seconds: float = 0.0
    #: the question's language ("en" or "es")
    language: str = "en"
    #: the question's content words the passages are weighed by (Spanish ones in English)
    asked: tuple[str, ...] = ()
    #: the earlier question of the thread this one was read as a follow-up to ("": none)
    follows: str = ""
    #: the words of ``follows`` searched and weighed with this question's
    carried: str = ""
    #: a Spanish question in the notes' language, word for word (:func:`translation.english`)
    english: str = ""
    #: the vector similarity of :attr:`english` to the best of :attr:`passages` (0: not
    #: Spanish, or the vectors are down): the coverage floor, measured on English
    #: questions, reads it for a Spanish question put wholly in English (issue 27)
    english_similarity: float = 0.0

    @property
    def understood(self) -> str:
        """What this question was understood as: the next question of a thread may follow it."""
        return followup.understood(self.question, self.follows)

    @property
    def degraded_methods(self) -> tuple[str, ...]:
        return tuple(line.split(":", 1)[0] for line in self.degraded)


@dataclass(frozen=True)
class Found:
    """What :meth:`Retriever.find` found: the question read alone and, when it may follow
    the thread's earlier question, read as that follow-up too — the answer keeps the
    follow-up reading only when its passages answer it (:func:`followup.keeps_thread`)."""

    retrieval: Retrieval
    in_thread: Retrieval | None = None
    #: how the question points back (:func:`followup.kind`; "" when not read in the thread)
    how: str = ""


@dataclass(frozen=True)
class _Understood:
    """A question as it is searched: its language, words and entities."""

    question: str
    scopes: tuple[str, ...]
    language: str
    #: the question with the carried words of the earlier one
    read: str
    asked: tuple[str, ...]
    #: what the keyword and vector searches look for (English and canonical names added)
    search: str
    seeds: list[str]
    carried: str
    #: a Spanish question in English, word for word ("" for an English one)
    english: str = ""


@dataclass
class _Lists:
    """The ranked lists of the methods that ran, and why the others could not."""

    lists: dict[str, list[Hit]] = field(default_factory=dict)
    down: dict[str, str] = field(default_factory=dict)
    trace: dict[str, Any] = field(default_factory=dict)


class Retriever:
    """The tutor's retrieval over one :class:`Index` (see the module doc)."""

    def __init__(self, index: Index, glossary_path: Path) -> None:
        self.index = index
        self._glossary_path = glossary_path
        self._glossary: dict[str, str] | None = None
        #: the ``where`` filter of the last vector search (the trace shown to testers)
        self.last_where: dict[str, Any] = {}
        #: the same, of the last second-vector search
        self.last_spanish_where: dict[str, Any] = {}

    @property
    def glossary(self) -> dict[str, str]:
        """Spanish -> English words for questions asked in Spanish (the notes are English)."""
        if self._glossary is None:
            try:
                text = self._glossary_path.read_text("utf-8")
                self._glossary = translation.load_glossary(text)
            except OSError as err:
                log.warning(_("tutor: no Spanish glossary (%s): Spanish questions match less"), err)
                self._glossary = {}
        return self._glossary

    # -- a question, alone or in its thread ---------------------------------------------------
    def find(
        self,
        question: str,
        user: str,
        k: int = CONTEXT_PASSAGES,
        *,
        earlier: str = "",
        earlier_covered: bool | None = None,
    ) -> Found:
        """The passages for a turn's question (``user`` must name a scope): read alone, and
        also as a follow-up of ``earlier`` when it names nothing of the notes ("and in
        children?") and may point back (see :meth:`TutorService.ask`)."""
        user_scope(user)  # a valid user name, or ScopeError before anything runs
        retrieval = self.retrieve(question, user, k)
        if earlier.strip() and not retrieval.graph.seeds:
            how = followup.kind(retrieval.question, names_entity=False)
            if followup.tries_thread(how, earlier_covered=earlier_covered is not False):
                again = self.retrieve(question, user, k, follows=earlier.strip())
                return Found(retrieval, again, how)
        return Found(retrieval)

    def retrieve(
        self,
        question: str,
        user: str | None,
        k: int = CONTEXT_PASSAGES,
        candidates: int = CANDIDATES,
        *,
        follows: str = "",
    ) -> Retrieval:
        """The ``k`` best passages for ``question`` among ``user``'s scopes, fused (CT7).

        ``follows``: the earlier question of the thread (as it was understood) this one is read
        as a follow-up to — its words are searched and weighed with this question's
        (:mod:`backends.tutor.followup`).

        A vector store or graph that cannot be reached (or brought up to date) leaves its
        method out: the retrieval is *degraded* (:attr:`Retrieval.degraded` says which and
        why) and the other methods answer.
        """
        started = time.perf_counter()
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_PASSAGES:
            raise ValueError(
                _("k must be a whole number from 1 to {most}, not {k}").format(
                    most=MAX_PASSAGES, k=repr(k)
                )
            )
        question = checked_text(question, N_("the question")).strip()
        if not question:
            raise EmptyQuestionError(_("Type a question first: the question is empty."))
        scopes = scopes_for(user)
        if not self.index.ready:
            self.index.prepare()
        understood = self._understand(question, scopes, follows)
        found = _Lists()
        self._vector_search(understood, candidates, found)
        if understood.language == "es":
            self._spanish_search(understood, candidates, found)
        self._keyword_search(understood, candidates, found)
        view = self._graph_list(understood, candidates, found)
        ran = _(" and ").join(_(m) for m in found.lists if m not in found.down)
        degraded = [
            f"{m}: "
            + _("{why}; answered from {methods} retrieval only").format(why=why, methods=ran)
            for m, why in found.down.items()
        ]
        trace = found.trace
        trace["graph"] = {
            "seeds": list(understood.seeds),
            "scopes": list(scopes),
            "kind": self.index.graph.kind,
        }
        for method, hits in found.lists.items():
            trace[method]["ids"] = [h.chunk_id for h in hits]
        passages = self._fused(found.lists, scopes, k)
        return Retrieval(
            question=question,
            user=user or "",
            scopes=scopes,
            passages=passages,
            methods={m: [h.chunk_id for h in hits] for m, hits in found.lists.items()},
            graph=view,
            degraded=tuple(degraded),
            trace=trace,
            seconds=time.perf_counter() - started,
            language=understood.language,
            asked=understood.asked,
            follows=follows if understood.carried else "",
            carried=understood.carried,
            english=understood.english,
            english_similarity=self._english_similarity(understood, passages, candidates, found),
        )

    # -- understanding -----------------------------------------------------------------------
    def _understand(self, question: str, scopes: tuple[str, ...], follows: str) -> _Understood:
        vocabulary = self.index.vocabulary(scopes)
        lang = grounding.language(question)
        carried = followup.carried(question, follows) if follows else ""
        read = f"{question} {carried}".strip()
        if lang == "es":
            words = translation.translate(read, self.glossary, vocabulary, self._acronyms())
        else:  # lay words and drug-name endings, in the notes' words
            words = self._lay(read, vocabulary)
        # a follow-up is weighed by its own words: the carried ones find the earlier note (and
        # name its entities, which a quote must name), but "and in children?" is answered only
        # by a sentence about children, not by the antidote's sentence the earlier one matched
        asked = tuple(grounding.question_words(self._in_notes_words(question), words))
        # a Spanish question is searched with its English words too (the notes are English)
        search = " ".join([read, *(w for w in dict.fromkeys(words.values()) if w)])
        # the question's entities by their canonical names too: "heart attack" is searched as
        # "acute coronary syndrome", the note's own words (resources/kb/terms.txt)
        seeds = self.index.kb.terms.find(search, nested=True)[:MAX_SEEDS]
        named = [s for s in seeds if s.casefold() not in search.casefold()]
        search = " ".join([search, *named])
        english = translation.english(read, words) if lang == "es" else ""
        return _Understood(question, scopes, lang, read, asked, search, seeds, carried, english)

    def _acronyms(self) -> list[tuple[str, ...]]:
        """The names of each entity a Spanish acronym may stand for ("C-reactive protein",
        "CRP"; "ACE inhibitors", "ACE inhibitor", …)."""
        return [(t.name, *t.aliases) for t in self.index.kb.terms.terms]

    def _in_notes_words(self, question: str) -> str:
        """``question`` with the notes' name of each entity it calls by a lay name that shares
        no word with it: "what do you give for a heart attack?" is weighed as one about "acute
        coronary syndrome" too (the note never says "heart attack"); "diabetes" is not
        widened to "type 2 diabetes"."""
        extra = []
        for start, end, name in self.index.kb.terms.spans(question):
            if not set(grounding.content(question[start:end])) & set(grounding.content(name)):
                extra.append(name)
        return " ".join([question, *extra])

    @staticmethod
    def _lay(question: str, vocabulary: Vocabulary) -> dict[str, str]:
        """The notes' words for an English question's lay words the notes never use and its
        drug-name endings ("sugar" -> glucose, "-pril" -> ramipril lisinopril enalapril)."""
        return {**aspects.lay_words(question, vocabulary), **aspects.endings(question, vocabulary)}

    # -- the searches ------------------------------------------------------------------------
    def search_vectors(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        """The ``k`` nearest chunks among ``scopes`` only: the filter is part of the query
        (CT6); :attr:`last_where` keeps it (the trace shown to testers)."""
        where = scope_filter(scopes)
        self.last_where = where
        if k <= 0 or not scopes:
            return []
        return self.index.vectors.query(vector, k, where=where)

    def search_spanish_vectors(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        """The ``k`` nearest chunks by the second vector among ``scopes`` only: the filter is
        part of the query (CT6), as in :meth:`search_vectors`; :attr:`last_spanish_where`
        keeps it. A vector of another dimension raises :class:`DimensionMismatchError`."""
        where = scope_filter(scopes)
        self.last_spanish_where = where
        index = self.index.spanish_vectors
        if index is None or k <= 0 or not scopes:
            return []
        return index.query(vector, k, where=where)

    def _vector_search(self, understood: _Understood, candidates: int, found: _Lists) -> None:
        error = self.index.vectors_problem()
        if not error:
            try:
                query = self.index.embedder.embed(understood.search)
                hits = self.search_vectors(query, understood.scopes, candidates)
                found.lists["vector"] = [
                    Hit(h.id, h.score, f"similarity {h.score:.2f}") for h in hits
                ]
            except (StoreUnavailableError, ModelUnavailableError) as err:
                error = str(err)
                self.index.vectors_failed(error)
        if error:
            found.down["vector"] = _unavailable(N_("vector search is unavailable"), error)
            found.lists["vector"] = []
        found.trace["vector"] = {"where": self.last_where if self.index.vectors_open else {}}

    def _english_similarity(
        self,
        understood: _Understood,
        passages: Sequence[Passage],
        candidates: int,
        found: _Lists,
    ) -> float:
        """The first vector's similarity of a Spanish question's English words to the best
        passage found (0 for an English question, or with the vectors down): the vector
        search reads the question as asked, and MiniLM reads Spanish poorly."""
        if not understood.english or "vector" in found.down or not passages:
            return 0.0
        try:
            query = self.index.embedder.embed(understood.english)
            hits = self.search_vectors(query, understood.scopes, candidates)
        except (StoreUnavailableError, ModelUnavailableError):
            return 0.0
        ids = {p.chunk_id for p in passages}
        return max((h.score for h in hits if h.id in ids), default=0.0)

    def _spanish_search(self, understood: _Understood, candidates: int, found: _Lists) -> None:
        """The second vector's ranked list (method ``multilingual``) for a Spanish question:
        the question as asked (its Spanish words, no glossary: the multilingual embedder
        places them near the English notes), the scopes inside the query. Nothing without a
        second vector; an unusable one leaves the method out (degraded) and the rest answers."""
        error = ""
        try:
            embedder = self.index.spanish_embedder
            if embedder is None:
                return
            error = self.index.spanish_problem()
            if not error:
                vector = embedder.embed(understood.read)
                hits = self.search_spanish_vectors(vector, understood.scopes, candidates)
                found.lists["multilingual"] = [
                    Hit(h.id, h.score, f"similarity {h.score:.2f}") for h in hits
                ]
        except CancelledError:
            raise
        except CustodiaEnvironmentError as err:
            error = str(err)
            self.index.spanish_failed(error)
        if error:
            found.down["multilingual"] = _unavailable(
                N_("multilingual vector search is unavailable"), error
            )
            found.lists["multilingual"] = []
        found.trace["multilingual"] = {"where": self.last_spanish_where}

    def _keyword_search(self, understood: _Understood, candidates: int, found: _Lists) -> None:
        keyword = self.index.keyword
        spanish = understood.read if understood.language == "es" else ""
        hits = keyword.search(understood.search, understood.scopes, candidates, spanish=spanish)
        found.lists["keyword"] = [Hit(h.chunk_id, h.score, f"bm25 {h.score:.2f}") for h in hits]
        params = dict(keyword.last_parameters)
        found.trace["keyword"] = {
            "query": params.get("query", ""),
            "scopes": json.loads(params.get("scopes", "[]")),
        }

    def _graph_list(self, understood: _Understood, candidates: int, found: _Lists) -> GraphView:
        view = GraphView(tuple(understood.seeds), ())
        problem = self.index.graph_problem()
        if not problem:
            try:
                hits, view = self._graph_search(understood.seeds, understood.scopes, candidates)
                found.lists["graph"] = hits
            except GraphUnavailableError as err:
                problem = str(err)
        if problem:
            self.index.graph_failed(problem)
            found.down["graph"] = _unavailable(N_("the graph is unavailable"), problem)
            found.lists["graph"] = []
        return view

    def _graph_search(
        self, seeds: Sequence[str], scopes: Sequence[str], candidates: int
    ) -> tuple[list[Hit], GraphView]:
        """Chunks behind the relations of the question's entities, best first.

        A chunk is a source of a relation when it mentions both entities. Chunks that are
        sources of relations of *more* of the question's entities come first (they mention
        them all); among them, the higher the mean weight of those relations, the better —
        a chunk that mentions a question entity together with the things it is most often
        mentioned with is *about* it, where a passing mention among unrelated terms is not
        (measured in bench/bench_tutor.py: better than summing weights or counting
        relations). Two question entities with no relation of their own are joined by the
        shortest path between them (≤ 3 hops); its chunks come after, the path as reason.
        """
        if not seeds:
            return [], GraphView()
        graph = self.index.graph
        seed_set = set(seeds)
        neighbours = graph.neighbours(seeds, scopes, limit=400)
        covered: dict[str, set[str]] = defaultdict(set)
        total: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        best: dict[str, tuple[int, str]] = {}
        direct: set[frozenset[str]] = set()
        for n in neighbours:
            if n.target in seed_set:
                direct.add(frozenset((n.source, n.target)))
            for chunk in n.sources:
                covered[chunk] |= {n.source, n.target} & seed_set
                total[chunk] += n.weight
                count[chunk] += 1
                if chunk not in best or n.weight > best[chunk][0]:
                    best[chunk] = (n.weight, f"{n.source} — {n.target}")
        path_edges, via_path = self._paths(seeds, scopes, direct, covered)
        mean = {c: total[c] / count[c] for c in covered}
        ranked = sorted(covered, key=lambda c: (-len(covered[c]), -mean[c], c))
        hits = [Hit(c, len(covered[c]) + mean[c] / 1000, best[c][1]) for c in ranked]
        hits += [Hit(c, 0.0, f"path {line}") for c, line in sorted(via_path.items())]
        # the view: relations among the question's entities, then each one's strongest ones
        edges: dict[frozenset[str], tuple[str, str, int]] = {}
        per_seed: dict[str, int] = defaultdict(int)
        for n in neighbours:
            key = frozenset((n.source, n.target))
            if key in edges:
                continue
            if n.target in seed_set or per_seed[n.source] < 6:
                edges[key] = (n.source, n.target, n.weight)
                per_seed[n.source] += 1
        for x, y, w in path_edges:
            edges.setdefault(frozenset((x, y)), (x, y, w))
        return hits[:candidates], GraphView(tuple(seeds), tuple(edges.values()))

    def _paths(
        self,
        seeds: Sequence[str],
        scopes: Sequence[str],
        direct: set[frozenset[str]],
        covered: dict[str, set[str]],
    ) -> tuple[list[tuple[str, str, int]], dict[str, str]]:
        """The shortest paths joining two of the question's first entities that have no
        relation of their own: their edges, and each chunk only a path reaches, with it."""
        path_edges: list[tuple[str, str, int]] = []
        via_path: dict[str, str] = {}
        for a, b in itertools.combinations(list(seeds)[:4], 2):
            if frozenset((a, b)) in direct:
                continue
            path = self.index.graph.path(a, b, scopes)
            if path is None:
                continue
            for (x, y), sources, w in zip(
                itertools.pairwise(path.names), path.sources, path.weights, strict=False
            ):
                path_edges.append((x, y, w))
                for chunk in sources:
                    if chunk not in covered:
                        via_path.setdefault(chunk, path.line())
        return path_edges, via_path

    # -- fusion ------------------------------------------------------------------------------
    def _fused(
        self, lists: dict[str, list[Hit]], scopes: tuple[str, ...], k: int
    ) -> tuple[Passage, ...]:
        fused = rrf(lists, k=FUSION_K, weights=FUSION_WEIGHTS, limit=k)
        chunks = self.index.kb.chunks(f.chunk_id for f in fused)
        passages: list[Passage] = []
        for f in fused:
            chunk = chunks.get(f.chunk_id)
            if chunk is None:  # a derived store ahead of the knowledge base: skip, resync later
                continue
            if chunk.scope not in scopes:  # the filters are in the queries: this is a bug
                raise RuntimeError(f"scope leak: {chunk.chunk_id} is not in {scopes}")
            passages.append(
                Passage(
                    len(passages) + 1,
                    chunk.chunk_id,
                    chunk.doc_id,
                    chunk.title,
                    chunk.path,
                    chunk.scope,
                    chunk.text,
                    f.score,
                    tuple(f.reasons),
                )
            )
        return tuple(passages)
