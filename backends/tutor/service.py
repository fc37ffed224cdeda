"""The clinical tutor service: what the tab and ``custodia ask tutor`` talk to.

One turn: the question is answered from the user's scopes only (the shared corpus and their
own notes): vector (Chroma, scope in the ``where`` filter), keyword (FTS5, scope in the SQL)
and graph (entities of the question and their relations, scope in the query) results are fused
by reciprocal rank; the top passages go to the chat model as numbered, cited context (in
retrieval-only mode the passages themselves are the answer); and one audit record is appended:
the user's pseudonym, the question's and the answer's SHA-256, the retrieved and cited chunk
ids, the model, and — sealed with the user's key, so erasing the user erases it — the question.

If the graph or the vector store cannot be reached the turn goes on with the other methods
and says so (:attr:`Turn.degraded`); the vector index is rebuilt from the knowledge base when
the embedder changed. The shipped corpus is imported on first use
(:meth:`TutorService.prepare`), idempotently, with progress; one process at a time writes the
knowledge base and its derived stores (a lock file in the data dir).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import logging
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from backends import answers, grounding
from backends.assistants import Needs
from backends.config import Config
from backends.errors import (
    CancelledError,
    CustodiaEnvironmentError,
    DimensionMismatchError,
    ModelUnavailableError,
    StoreUnavailableError,
)
from backends.grounding import CheckedSentence, Quote, Source, Vocabulary
from backends.i18n import N_, _
from backends.models.chat import ChatModel, Prompt, ShouldStop
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.services import StoreOpener, open_store
from backends.stores.graph import (
    DEFAULT_NAMESPACE,
    Graph,
    GraphUnavailableError,
    Relation,
)
from backends.stores.vectors import VectorHit, VectorIndex
from backends.text import checked_text
from backends.tutor import aspects, followup, shipped_vectors
from backends.tutor.fusion import Hit, Reason, rrf
from backends.tutor.kb import (
    DB_FILE,
    SHARED,
    ImportReport,
    KnowledgeBase,
    KnowledgeBaseError,
    collect_files,
    load_terms,
    read_document,
    scope_filter,
    scopes_for,
    shipped_documents,
    shipped_kb_dir,
    user_scope,
)
from backends.tutor.keyword import KeywordIndex

if TYPE_CHECKING:
    from backends.audit.service import AuditService
    from backends.services import Services

log = logging.getLogger(__name__)
T = TypeVar("T")
Provider = Callable[[], T]

GRAPH_FILE = "tutor-graph.sqlite3"
#: held (``flock``) by the process writing the knowledge base or its derived stores
LOCK_FILE = "tutor.lock"
#: how long to wait for another process's indexing before giving up
LOCK_WAIT_SECONDS = 600.0
#: a vector store or graph that just failed is not tried again before this many seconds
#: (``ask tutor`` prepares, then retrieves: one attempt, one message, per command)
RETRY_SECONDS = 2.0
AUDIT_EVENT = "tutor.turn"
#: candidates each method contributes to the fusion
CANDIDATES = 20
#: the most passages a turn may cite (each method contributes at most ``CANDIDATES``)
MAX_PASSAGES = CANDIDATES
#: passages given to the chat model (and cited)
CONTEXT_PASSAGES = 5
#: chunks per embedding call: MiniLM pads a batch to its longest text, so small batches of
#: ~100-token chunks are faster (measured: 16 -> 59 ms/chunk, 64 -> 98 ms/chunk on 2 cores)
EMBED_BATCH = 16
#: reciprocal rank fusion: K and per-method weights, chosen by two-fold cross-validation on
#: bench/tutor_eval.json (both folds chose the same; docs/BENCHMARKS.md has the held-out
#: figures). The graph is the weakest single method, so it counts less.
FUSION_K = 5
FUSION_WEIGHTS = {"vector": 1.0, "keyword": 1.0, "graph": 0.3, "multilingual": 1.0}
#: the second vector's collection: the chunks embedded by the multilingual embedder, searched
#: for Spanish questions only (the notes are English; MiniLM is an English model; USE alone
#: answered English worse, so English questions stay on MiniLM: docs/TUTOR.md)
SPANISH_COLLECTION = "tutor_chunks_multilingual"
MAX_SEEDS = 8
NOTICE = N_("For study, not for clinical decisions.")  # shown translated; the prompt's is English
SYSTEM_PROMPT = (
    "You are a clinical study tutor for students. Answer the question in two or three short "
    "sentences using only the numbered passages in the context, in the words of the passages. "
    "End every sentence with the number of the passage it comes from in square brackets, like "
    "[1]. If the passages do not answer the question, say that the notes do not cover it. " + NOTICE
)
#: what a small model writes when it starts a new turn of its own: the answer ends there
STOP_SEQUENCES = ("\n\n\n", "\nQuestion:", "\nUser:", "<|im_end|>", "<|endoftext|>")
#: tokens the model may write (an answer is two or three sentences)
MAX_TOKENS = 200
#: words of a passage given to the model (the context must fit a small model's window)
PASSAGE_WORDS = 110


@dataclass(frozen=True)
class CoverageRule:
    """When the passages found do not answer a question (CT9: the tutor then says so).

    Not covered when the best passage's vector similarity is below ``similarity``; or, when
    the question uses a word the notes never use (its topic, often), below ``unknown``; or
    when the best passage holds less than ``lexical`` of the question's known words
    (idf-weighted), or less than ``unknown_lexical`` of them with an unknown word.
    """

    similarity: float = 0.0
    unknown: float = 0.0
    lexical: float = 0.4
    unknown_lexical: float = 0.0


#: measured per embedder on bench/data/answer_eval.json (bench/bench_answers.py prints the
#: scan; docs/BENCHMARKS.md has the figures). An embedder not measured gets the lexical rule.
COVERAGE_RULES = {"all-MiniLM-L6-v2": CoverageRule(similarity=0.2, unknown=0.5, lexical=0.4)}
LEXICAL_RULE = CoverageRule(lexical=0.4, unknown_lexical=0.7)
#: a question's word named by at most this many passages is its subject, which an uncovered
#: question's answer says the notes only mention ("lithium": in 2 of 227)
MENTION_CHUNKS = 4
#: a question asking for an amount ("what dose…") is not answered by sentences without one
QUANTITY_WORDS = frozenset(
    [
        "dose",
        "doses",
        "dosage",
        "dosing",
        "dosis",
        "much",
        "many",
        "cuanto",
        "cuanta",
        "cuantos",
        "cuantas",
    ]
)
#: a number with a unit of dose, volume, rate or time: what answers "what dose…", "how many days…"
AMOUNT = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:to|-|–|or)?\s*(?:\d+(?:[.,]\d+)?\s*)?"
    r"(?:mg|g|mcg|micrograms?|µg|ng|ml|mL|l|litres?|units?|iu|IU|mmol|mol|kg|mmHg|kPa|bpm|cm|mm|"
    r"seconds?|minutes?|min|hours?|h|days?|weeks?|months?|years?|times|doses?|tablets?|"
    r"puffs?|drops?|%|per\s?cent)(?![^\W\d_])",
)
GLOSSARY_FILE = "glossary_es.tsv"


class TutorError(CustodiaEnvironmentError):
    """A turn that cannot be completed for a reason outside the code (message for the user)."""


class EmptyQuestionError(TutorError):
    """There is no question to answer."""


class AuditFailedError(TutorError):
    """The answer was produced but could not be recorded in the audit log."""


class IndexingElsewhereError(StoreUnavailableError):
    """Another process holds the indexing lock and this caller would not wait."""


class TurnInterrupted(KeyboardInterrupt):
    """Ctrl+C while the answer was streaming. The turn was still audited, as stopped
    (:attr:`turn`, with the part of the answer streamed so far); then the interrupt goes on."""

    def __init__(self, turn: Turn) -> None:
        super().__init__(f"interrupted; recorded in the audit log as #{turn.audit_seq}")
        self.turn = turn


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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

    @property
    def understood(self) -> str:
        """What this question was understood as: the next question of a thread may follow it."""
        return followup.understood(self.question, self.follows)

    @property
    def degraded_methods(self) -> tuple[str, ...]:
        return tuple(line.split(":", 1)[0] for line in self.degraded)


@dataclass(frozen=True)
class _Judged:
    """What a retrieval's passages say to its question (:meth:`TutorService._judge`)."""

    sources: list[Source]
    vocabulary: Vocabulary
    coverage: float
    scored: list[Quote]
    quotes: tuple[Quote, ...]
    covered: bool
    #: not covered, but the notes mention the question's subject: these quotes (cited)
    mentions: tuple[Quote, ...] = ()
    #: the subject's words as the mention writes them ("lithium")
    mentioned: str = ""


#: what the user is shown, by how it was made (:attr:`Grounding.mode`)
GENERATED = "generated"  # the model's answer: every sentence supported by a cited passage
EXTRACTIVE = "extractive"  # sentences quoted from the passages (the model's failed the check)
NOT_COVERED = "not_covered"  # the notes do not answer the question: nothing is stated

HEADINGS = {
    "en": {
        GENERATED: "Answer — every sentence checked against your notes",
        EXTRACTIVE: "From your notes — quoted, because the model's answer was not supported",
        "retrieval-only": "From your notes — quoted (no chat model is loaded)",
        "stopped": "From your notes — quoted (the model's answer was stopped)",
        "composed": "From your notes — quoted word for word",
        "no-draft": "From your notes — quoted (this model's answers rarely pass the check, so "
        "none was asked for: “Ask the model to rephrase” asks it)",
        NOT_COVERED: "Not covered by your notes",
    },
    "es": {
        GENERATED: "Respuesta — cada frase comprobada con sus notas",
        "generated-english": "Respuesta en inglés, el idioma de sus notas (el modelo no pudo "
        "responder en español) — cada frase comprobada con ellas",
        EXTRACTIVE: "De sus notas — citadas en inglés, el idioma de las notas: el modelo no dio "
        "una respuesta en español respaldada por ellas",
        "retrieval-only": "De sus notas — citadas en inglés, el idioma de las notas (no hay "
        "modelo de chat cargado)",
        "stopped": "De sus notas — citadas en inglés (la respuesta del modelo se detuvo)",
        "composed": "De sus notas — citadas en inglés, el idioma de las notas",
        "no-draft": "De sus notas — citadas en inglés, el idioma de las notas (las respuestas de "
        "este modelo casi nunca pasan la comprobación: «Pedir al modelo que lo reformule» se la "
        "pide)",
        NOT_COVERED: "Sus notas no tratan esta pregunta",
    },
}
NOT_COVERED_TEXT = {
    "en": "Your notes do not cover this question: nothing found in them answers it, so no "
    "answer is given. Check a clinical reference, or import notes on the topic.",
    "es": "Sus notas no tratan esta pregunta: nada de lo encontrado en ellas la responde, así "
    "que no se da ninguna respuesta. Consulte una referencia clínica o importe notas del tema.",
}
FOLLOW_UP_NOTE = {
    "en": "Read as a follow-up to your earlier question: searched with “{}” from it.",
    "es": "Leída como continuación de su pregunta anterior: buscada con «{}» de ella.",
}
#: not covered, but the notes name the question's subject: what they only mention, cited
MENTION_TEXT = {
    "en": "Not covered — your notes only mention {}, without answering this question:",
    "es": "No lo tratan — sus notas solo mencionan {}, sin responder a esta pregunta "
    "(cita en inglés, el idioma de las notas):",
}
NO_EXTRACT_TEXT = {
    "en": "The passages found do not contain a sentence that answers this question.",
    "es": "Los pasajes encontrados no contienen ninguna frase que responda a esta pregunta.",
}


@dataclass(frozen=True)
class Grounding:
    """How the shown answer was made and what the support check found (CT9)."""

    mode: str
    #: the question's language ("en" or "es"); the headings and refusals use it
    language: str
    #: the header shown above the answer, in the question's language
    heading: str
    #: the model's own answer, unshown as fact unless ``mode`` is "generated" ("" if not asked)
    generated: str = ""
    #: the model's sentences, each checked against the passages
    sentences: tuple[CheckedSentence, ...] = ()
    #: the extractive answer's quotes (what is shown when ``mode`` is "extractive")
    quotes: tuple[Quote, ...] = ()
    #: share of the question's (rare) words the best passage holds (0 to 1)
    coverage: float = 0.0
    #: why the model's answer is not the one shown ("" when it is, or was not asked)
    reason: str = ""
    #: not covered, but the notes mention the question's subject: what they say of it
    mentions: tuple[Quote, ...] = ()
    #: the subject's words as the mention writes them ("lithium")
    mentioned: str = ""

    @property
    def unsupported(self) -> tuple[CheckedSentence, ...]:
        return tuple(s for s in self.sentences if not s.supported)

    @property
    def covered(self) -> bool:
        return self.mode != NOT_COVERED


@dataclass(frozen=True)
class Turn:
    question: str
    #: the answer shown as fact, with ``[n]`` citations (:attr:`grounding` says how it was made)
    answer: str
    passages: tuple[Passage, ...]
    #: numbers of the passages the shown answer cites
    cited: tuple[int, ...]
    model: str
    retrieval_only: bool
    degraded: tuple[str, ...]
    audit_seq: int
    retrieval: Retrieval
    stopped: bool = False
    grounding: Grounding | None = None
    #: the audit record of the composed answer this turn asked the model to reword (0: none)
    rephrases: int = 0

    @property
    def generated(self) -> str:
        """The model's own answer (checked; shown as fact only in "generated" mode)."""
        return self.grounding.generated if self.grounding else self.answer

    @property
    def follow_up_note(self) -> str:
        """How a follow-up was read ("" when the question was read alone), in its language."""
        carried = self.retrieval.carried
        if not carried:
            return ""
        return FOLLOW_UP_NOTE.get(self.retrieval.language, FOLLOW_UP_NOTE["en"]).format(carried)


@dataclass(frozen=True)
class Status:
    documents: int
    chunks: int
    entities: int
    vectors: int
    users: tuple[str, ...]
    by_scope: dict[str, tuple[int, int]]
    graph_kind: str
    graph_ok: bool
    graph_message: str
    graph_relations: int
    embedder: str
    imported: ImportReport | None = None
    #: the second vector's embedder, searched for Spanish questions ("" when there is none)
    spanish_embedder: str = ""
    spanish_vectors: int = 0
    #: why the second vector is unusable ("" when it is fine or there is none)
    spanish_message: str = ""
    seconds: float = 0.0
    #: False when the vector store could not be reached or brought up to date
    vector_ok: bool = True
    vector_message: str = ""


@dataclass(frozen=True)
class NotesForgotten:
    """What :meth:`TutorService.forget_user` removed, and what it could not reach yet."""

    user: str
    scope: str
    documents: int
    chunks: int
    #: a sentence per derived store that could not be reached (cleaned at its next sync)
    pending: tuple[str, ...] = field(default=())


# -- the service --------------------------------------------------------------------------------


def make_graph(
    config: Config, namespace: str = DEFAULT_NAMESPACE, open_store: StoreOpener = open_store
) -> Graph:
    """The graph the configuration names: embedded SQLite, or a Bolt server (Neo4j)."""
    graph: Graph = open_store("graph", config, path=config.path(GRAPH_FILE), namespace=namespace)
    return graph


def spanish_embedder_for(config: Config) -> Embedder | None:
    """The second vector's embedder ``tutor_spanish_embedder`` names: ``auto`` is the
    multilingual USE beside MiniLM (measured: docs/TUTOR.md) and none beside another embedder
    (the tests' hashing one); none either when it is the main embedder itself."""
    from dataclasses import replace as replaced

    from backends.models.registry import create_embedder

    choice = config.tutor_spanish_embedder
    if choice == "auto":
        choice = "use-multilingual" if config.embedder == "minilm" else "none"
    if choice in ("none", "", config.embedder):
        return None
    return create_embedder(replaced(config, embedder=choice))


def _lazy(value: T | Provider[T]) -> Provider[T]:
    """A provider for ``value``: itself when it is one (a callable), else a constant."""
    if callable(value):
        return value
    return lambda: value


class TutorService:
    """Knowledge base, retrieval (vector + keyword + graph), chat and audit for one app."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Embedder | Provider[Embedder],
        chat: ChatModel | Provider[ChatModel],
        audit: AuditService | Provider[AuditService],
        graph: Graph | Provider[Graph] | None = None,
        kb_dir: Path | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        open_store: StoreOpener = open_store,
        spanish_embedder: Embedder | Provider[Embedder | None] | None = None,
    ) -> None:
        self.config = config
        self._open_store = open_store
        self._embedder = _lazy(embedder)
        #: the second vector (Spanish questions only); None: no second vector
        self._spanish_provider: Provider[Embedder | None] = (
            (lambda: None) if spanish_embedder is None else _lazy(spanish_embedder)
        )
        self._spanish: Embedder | None = None
        self._spanish_known = False
        self._spanish_vectors: VectorIndex | None = None
        self._spanish_synced = False
        self._spanish_message = ""
        self._chat = _lazy(chat)
        self._audit: Provider[AuditService] = _lazy(audit)
        self._graph_provider: Provider[Graph] = (
            (lambda: make_graph(config, namespace, open_store)) if graph is None else _lazy(graph)
        )
        self.kb_dir = kb_dir or shipped_kb_dir()
        self._lock = threading.RLock()
        self._kb: KnowledgeBase | None = None
        self._keyword: KeywordIndex | None = None
        self._vectors: VectorIndex | None = None
        #: the ``where`` filter of the last vector search (the trace shown to testers)
        self.last_where: dict[str, Any] = {}
        #: the same, of the last second-vector search
        self.last_spanish_where: dict[str, Any] = {}
        self._graph: Graph | None = None
        self._graph_synced = False
        self._graph_message = ""
        self._vectors_synced = False
        self._vector_message = ""
        #: ``time.monotonic()`` before which a failed store is not tried again
        self._retry_at = {"vector": 0.0, "graph": 0.0, "multilingual": 0.0}
        #: the descriptor holding :data:`LOCK_FILE` while this process indexes (else None)
        self._lock_fd: int | None = None
        self._ready = False
        #: scope -> (its (documents, chunks) when counted, its word statistics)
        self._vocabularies: dict[str, tuple[tuple[int, int], Vocabulary]] = {}
        self._glossary: dict[str, str] | None = None
        #: per model, how often its drafts pass the check (AL1: below the floor, none is
        #: asked for unless the user asks); a cache in the data dir
        self._drafts: answers.DraftStats | None = None

    @property
    def drafts(self) -> answers.DraftStats:
        """How often each model's drafts passed (``tutor:<model>``), kept in the data dir."""
        if self._drafts is None:
            self._drafts = answers.DraftStats(self.config.path(answers.STATS_FILE))
        return self._drafts

    def wants_draft(self) -> bool:
        """Whether the chat model's draft is asked for unprompted (its pass rate is known and
        low: no; the composed answer is shown at once)."""
        chat = self.chat
        return not chat.retrieval_only and self.drafts.should_draft(f"tutor:{chat.name}")

    @classmethod
    def from_services(cls, services: Services) -> TutorService:
        from backends.audit.service import get_service as audit_service

        return cls(
            services.config,
            embedder=lambda: services.embedder,
            spanish_embedder=lambda: spanish_embedder_for(services.config),
            chat=lambda: services.chat_for("tutor"),
            audit=lambda: audit_service(services),
        )

    # -- parts, built on first use ----------------------------------------------------------
    def _ensure_home(self) -> None:
        try:
            self.config.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            raise StoreUnavailableError(
                f"{self.config.home}: cannot create the data folder: {err.strerror or err}"
            ) from err

    @property
    def kb(self) -> KnowledgeBase:
        with self._lock:
            if self._kb is None:
                self._ensure_home()
                self._kb = KnowledgeBase(self.config.path(DB_FILE), load_terms(self.kb_dir))
                self._keyword = KeywordIndex(self._kb)
            return self._kb

    @property
    def keyword(self) -> KeywordIndex:
        self.kb  # noqa: B018 (opens it)
        assert self._keyword is not None
        return self._keyword

    @property
    def embedder(self) -> Embedder:
        return self._embedder()

    @property
    def chat(self) -> ChatModel:
        return self._chat()

    @property
    def graph(self) -> Graph:
        with self._lock:
            if self._graph is None:
                self._graph = self._graph_provider()
            return self._graph

    @property
    def vectors(self) -> VectorIndex:
        """The chunk vectors (role ``chunks``): a vector index whose payload is each chunk's
        ``scope`` and ``doc``; built by another embedder, it is rebuilt (``fresh``)."""
        with self._lock:
            if self._vectors is None:
                embedder = self.embedder
                context = {"embedder_name": embedder.name, "dimension": embedder.dimension}
                try:
                    vectors: VectorIndex = self._open_store("chunks", self.config, **context)
                except DimensionMismatchError as err:  # another dimension or embedder
                    log.info("tutor: %s; rebuilding the vector index", err)
                    vectors = self._open_store("chunks", self.config, fresh=True, **context)
                self._vectors = vectors
            return self._vectors

    @property
    def spanish_embedder(self) -> Embedder | None:
        """The second vector's embedder (None: Spanish questions use the first vector only).
        Built once; one that cannot load is an environment error, raised each time asked."""
        with self._lock:
            if not self._spanish_known:
                self._spanish = self._spanish_provider()
                self._spanish_known = True
            return self._spanish

    @property
    def spanish_vectors(self) -> VectorIndex | None:
        """The second vector's chunk vectors (collection :data:`SPANISH_COLLECTION`, same
        payload as :attr:`vectors`); another embedder's collection is rebuilt (``fresh``), as
        the first one is: both are derived from the knowledge base."""
        with self._lock:
            embedder = self.spanish_embedder
            if embedder is None:
                return None
            if self._spanish_vectors is None:
                context = {
                    "embedder_name": embedder.name,
                    "dimension": embedder.dimension,
                    "collection": SPANISH_COLLECTION,
                }
                try:
                    vectors: VectorIndex = self._open_store("chunks", self.config, **context)
                except DimensionMismatchError as err:
                    log.info("tutor: %s; rebuilding the multilingual vector index", err)
                    vectors = self._open_store("chunks", self.config, fresh=True, **context)
                self._spanish_vectors = vectors
            return self._spanish_vectors

    def search_spanish_vectors(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        """The ``k`` nearest chunks by the second vector among ``scopes`` only: the filter is
        part of the query (CT6), as in :meth:`search_vectors`; :attr:`last_spanish_where`
        keeps it. A vector of another dimension raises :class:`DimensionMismatchError`."""
        where = scope_filter(scopes)
        self.last_spanish_where = where
        index = self.spanish_vectors
        if index is None or k <= 0 or not scopes:
            return []
        return index.query(vector, k, where=where)

    def search_vectors(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        """The ``k`` nearest chunks among ``scopes`` only: the filter is part of the query
        (CT6); :attr:`last_where` keeps it (the trace shown to testers)."""
        where = scope_filter(scopes)
        self.last_where = where
        if k <= 0 or not scopes:
            return []
        return self.vectors.query(vector, k, where=where)

    # -- indexing ----------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._ready

    @contextlib.contextmanager
    def _indexing(self, progress: Progress | None = None, wait: bool = True) -> Iterator[None]:
        """Hold the data dir's indexing lock: one process at a time writes the knowledge
        base, the vectors and the graph (``ask tutor`` and ``kb stats`` started together on
        a fresh data dir would otherwise both seed it). Re-entrant within this service;
        waiting for another process is cancellable through ``progress``."""
        progress = progress or Progress()
        with self._lock:
            if self._lock_fd is not None:
                yield
                return
            self._ensure_home()
            path = self.config.path(LOCK_FILE)
            try:
                fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            except OSError as err:
                raise StoreUnavailableError(
                    f"{path}: cannot open the tutor's lock file: {err.strerror or err}"
                ) from err
            try:
                deadline = time.monotonic() + LOCK_WAIT_SECONDS
                told = False
                while True:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                        break
                    except BlockingIOError:
                        if not wait:  # a question does not queue behind an indexing run
                            raise IndexingElsewhereError(
                                "another Custodia process is indexing the knowledge base"
                            ) from None
                        if not told:
                            log.info("tutor: waiting for another process to finish indexing")
                            progress.start(0, "waiting for another Custodia process (indexing)")
                            told = True
                        if time.monotonic() > deadline:
                            raise StoreUnavailableError(
                                f"{path}: another Custodia process has been indexing the "
                                f"tutor's knowledge base for {LOCK_WAIT_SECONDS:.0f} s; "
                                "try again when it is done"
                            ) from None
                        progress.check()
                        time.sleep(0.05)
                self._lock_fd = fd
                try:
                    yield
                finally:
                    self._lock_fd = None
            finally:
                os.close(fd)  # releases the lock

    def prepare(self, progress: Progress | None = None) -> Status:
        """Import the shipped corpus (idempotent), bring vectors and graph up to date.

        A vector store or graph that cannot be reached does not stop it: the status says so
        and retrieval runs degraded (each later turn tries them again).
        """
        progress = progress or Progress()
        started = time.perf_counter()
        with self._lock, self._indexing(progress):
            report = self.kb.import_documents(
                shipped_documents(self.kb_dir), progress, scope=SHARED, prune_source="shipped"
            )
            self._try_sync_vectors(progress)
            self._try_sync_spanish(progress)
            self._try_sync_graph(progress)
            self._ready = True
            status = self.status()
        return _with(status, imported=report, seconds=time.perf_counter() - started)

    def import_path(
        self, path: Path, user: str | None = None, progress: Progress | None = None
    ) -> ImportReport:
        """Import a Markdown/text file or folder into ``user``'s scope (shared when None).

        An empty ``user`` is a :class:`~backends.tutor.kb.ScopeError`, never the shared
        corpus. Files that cannot be read are listed in ``unreadable``, files with nothing
        to import (empty, a title only) in ``skipped``; the rest is imported. A file
        imported before and now empty has its passages removed.
        """
        progress = progress or Progress()
        scope = SHARED if user is None else user_scope(user)
        report = ImportReport(scope=scope)
        docs = []
        emptied: list[str] = []
        for file in collect_files(Path(path)):
            try:
                doc = read_document(file, scope)
            except KnowledgeBaseError as err:
                report.unreadable.append(str(err))
                continue
            if not doc.text.strip():
                report.skipped.append(f"{file}: empty, nothing to import")
                emptied.append(doc.doc_id)
                continue
            docs.append(doc)
        with self._lock, self._indexing(progress):
            if not self._ready:
                self.prepare(progress)
            done = self.kb.import_documents(docs, progress, scope=scope)
            gone = [doc_id for doc_id in emptied if self.kb.has_document(doc_id)]
            done.chunks_removed += self.kb.remove_documents(gone)
            done.removed += len(gone)
            done.skipped, done.unreadable = report.skipped, report.unreadable
            if done.changed:
                self._try_sync_vectors(progress)
                self._try_sync_spanish(progress)
                self._try_sync_graph(progress, scopes=[scope])
        return done

    def forget_user(self, user: str, progress: Progress | None = None) -> NotesForgotten:
        """Delete ``user``'s own notes from the knowledge base, the vectors and the graph.

        The audit log is not touched (``custodia forget`` erases the person there). A
        derived store that cannot be reached now is listed in ``pending``: it is cleaned
        when it is next brought up to date. Running it again is harmless.
        """
        scope = user_scope(user)
        pending: list[str] = []
        with self._lock, self._indexing(progress):
            documents, chunk_ids = self.kb.delete_scope(scope)
            try:
                # every vector of the scope, whatever the ids: the filter is in the delete
                self.vectors.delete(where=scope_filter([scope]))
            except (StoreUnavailableError, ModelUnavailableError) as err:
                self._vectors_synced = False
                self._vector_message = str(err)
                pending.append(f"vector store: {err}")
            try:
                spanish = self.spanish_vectors
                if spanish is not None:
                    spanish.delete(where=scope_filter([scope]))
            except (StoreUnavailableError, ModelUnavailableError) as err:
                self._spanish_synced = False
                self._spanish_message = str(err)
                pending.append(f"multilingual vector store: {err}")
            try:
                self.graph.forget_scope(scope)
            except GraphUnavailableError as err:
                self._graph_synced = False
                self._graph_message = str(err)
                pending.append(f"graph: {err}")
        return NotesForgotten(user.strip(), scope, documents, len(chunk_ids), tuple(pending))

    def _try_sync_vectors(self, progress: Progress) -> bool:
        """:meth:`_sync_vectors`; False (and the reason kept) when the store is unusable."""
        try:
            self._sync_vectors(progress)
        except (StoreUnavailableError, ModelUnavailableError) as err:
            log.info("tutor: vector store unavailable: %s", err)
            self._vectors_synced = False
            self._vector_message = str(err)
            self._retry_at["vector"] = time.monotonic() + RETRY_SECONDS
            return False
        self._vectors_synced = True
        self._vector_message = ""
        return True

    def _try_sync_spanish(self, progress: Progress) -> bool:
        """Bring the second vector up to date (nothing when there is none); False (and the
        reason kept) when it is unusable: Spanish questions then use the other methods."""
        try:
            vectors = self.spanish_vectors
            embedder = self.spanish_embedder
            if vectors is not None and embedder is not None:
                self._sync_index(
                    vectors, embedder, progress, _("embedding the knowledge base (multilingual)")
                )
        except CancelledError:
            self._spanish_synced = False
            raise
        except CustodiaEnvironmentError as err:  # the store, the model, its configuration
            log.info("tutor: multilingual vectors unavailable: %s", err)
            self._spanish_synced = False
            self._spanish_message = str(err)
            self._retry_at["multilingual"] = time.monotonic() + RETRY_SECONDS
            return False
        self._spanish_synced = True
        self._spanish_message = ""
        return True

    def _sync_vectors(self, progress: Progress) -> None:
        self._sync_index(self.vectors, self.embedder, progress, "embedding the knowledge base")

    def _sync_index(
        self, vectors: VectorIndex, embedder: Embedder, progress: Progress, label: str
    ) -> None:
        """Embed the chunks ``vectors`` misses (the shipped ones from the precomputed file
        when it was made by ``embedder``), in batches: an interrupted run resumes where it
        stopped; drop the ones the knowledge base lost."""
        expected = self.kb.chunk_ids()
        present = vectors.ids()
        extra = sorted(present - expected)
        missing = sorted(expected - present)
        if extra:
            vectors.delete(extra)
        if not missing:
            return
        progress.start(len(missing), label)
        chunks = self.kb.chunks(missing)
        shipped = any(i.startswith("kb/") for i in missing)
        known = shipped_vectors.load(self.kb_dir, embedder) if shipped else {}
        ready = [i for i in missing if i in known and i in chunks]
        for start in range(0, len(ready), 500):
            batch = [chunks[i] for i in ready[start : start + 500]]
            vectors.upsert(
                [c.chunk_id for c in batch],
                np.vstack([known[c.chunk_id] for c in batch]),
                [c.vector_payload() for c in batch],
            )
            progress.advance(len(batch), label)
        todo = [i for i in missing if i not in known]
        for start in range(0, len(todo), EMBED_BATCH):
            progress.check()
            batch = [chunks[i] for i in todo[start : start + EMBED_BATCH] if i in chunks]
            matrix = embedder.embed_batch([c.indexed_text for c in batch])
            vectors.upsert(
                [c.chunk_id for c in batch],
                matrix,
                [c.vector_payload() for c in batch],
            )
            progress.advance(len(batch), label)

    def _try_sync_graph(self, progress: Progress, scopes: Sequence[str] | None = None) -> bool:
        try:
            self._sync_graph(progress, scopes)
        except GraphUnavailableError as err:
            log.info("tutor: graph unavailable: %s", err)
            self._graph_synced = False
            self._graph_message = str(err)
            self._retry_at["graph"] = time.monotonic() + RETRY_SECONDS
            return False
        if scopes is None:  # a one-scope sync leaves the rest as it was (e.g. a pending forget)
            self._graph_synced = True
            self._graph_message = ""
        return True

    def _sync_graph(self, progress: Progress, scopes: Sequence[str] | None = None) -> None:
        graph = self.graph
        kb = self.kb
        wanted = list(scopes) if scopes is not None else kb.scopes()
        if scopes is None:  # scopes the graph still has but the knowledge base lost
            for lost in [s for s in graph.counts().relations if s not in wanted]:
                graph.forget_scope(lost)
        for scope in wanted:
            relations = [
                Relation(e.a, e.b, e.scope, e.weight, e.sources) for e in kb.co_occurrences(scope)
            ]
            digest = sha256(json.dumps([list(r.__dict__.values()) for r in relations]))
            if graph.digest(scope) != digest:
                graph.replace_scope(scope, relations, digest, progress)

    # -- status ------------------------------------------------------------------------------
    def status(self) -> Status:
        kb = self.kb
        stats = kb.stats()
        relations = 0
        graph_ok = self._graph_synced
        message = self._graph_message
        if graph_ok:
            try:
                relations = sum(self.graph.counts().relations.values())
            except GraphUnavailableError as err:
                graph_ok, message = False, str(err)
        vectors = 0
        vector_ok = self._vectors_synced
        vector_message = self._vector_message
        if vector_ok and self._vectors is not None:
            try:
                vectors = self._vectors.count()
            except StoreUnavailableError as err:
                vector_ok, vector_message = False, str(err)
        spanish_count = 0
        if self._spanish_synced and self._spanish_vectors is not None:
            try:
                spanish_count = self._spanish_vectors.count()
            except StoreUnavailableError:
                spanish_count = 0
        return Status(
            documents=stats.documents,
            chunks=stats.chunks,
            entities=stats.entities,
            vectors=vectors,
            users=tuple(sorted(kb.users())),
            by_scope=stats.by_scope,
            graph_kind=self.graph.kind,
            graph_ok=graph_ok,
            graph_message=message,
            graph_relations=relations,
            embedder=self.embedder.name,
            vector_ok=vector_ok,
            vector_message=vector_message,
            spanish_embedder=self._spanish.name if self._spanish is not None else "",
            spanish_vectors=spanish_count,
            spanish_message=self._spanish_message,
        )

    def users(self) -> list[str]:
        return sorted(self.kb.users())

    # -- what the answer is checked with --------------------------------------------------
    def vocabulary(self, scopes: Sequence[str]) -> Vocabulary:
        """Word statistics of the notes in ``scopes`` (one scope's words never weigh another
        user's questions), recounted when a scope's notes changed."""
        counts = self.kb.stats().by_scope
        merged = Vocabulary()
        for scope in scopes:
            key = counts.get(scope, (0, 0))
            cached = self._vocabularies.get(scope)
            if cached is None or cached[0] != key:
                texts = (f"{c.title}\n{c.text}" for c in self.kb.all_chunks(scope))
                cached = (key, Vocabulary.of(texts))
                self._vocabularies[scope] = cached
            merged.update(cached[1])
        return merged

    @property
    def glossary(self) -> dict[str, str]:
        """Spanish -> English words for questions asked in Spanish (the notes are English)."""
        if self._glossary is None:
            path = shipped_kb_dir() / GLOSSARY_FILE
            try:
                self._glossary = grounding.load_glossary(path.read_text("utf-8"))
            except OSError as err:
                log.warning("tutor: no Spanish glossary (%s): Spanish questions match less", err)
                self._glossary = {}
        return self._glossary

    # -- retrieval ---------------------------------------------------------------------------
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
            raise ValueError(f"k must be a whole number from 1 to {MAX_PASSAGES}, not {k!r}")
        question = checked_text(question, "the question").strip()
        if not question:
            raise EmptyQuestionError("Type a question first: the question is empty.")
        scopes = scopes_for(user)
        if not self._ready:
            self.prepare()
        vocabulary = self.vocabulary(scopes)
        lang = grounding.language(question)
        carried = followup.carried(question, follows) if follows else ""
        read = f"{question} {carried}".strip()
        if lang == "es":
            translation = grounding.translate(read, self.glossary, vocabulary)
        else:  # lay words and drug-name endings, in the notes' words
            translation = self._lay(read, vocabulary)
        # a follow-up is weighed by its own words: the carried ones find the earlier note (and
        # name its entities, which a quote must name), but "and in children?" is answered only
        # by a sentence about children, not by the antidote's sentence the earlier one matched
        asked = tuple(grounding.question_words(self._in_notes_words(question), translation))
        # a Spanish question is searched with its English words too (the notes are English)
        search = " ".join([read, *dict.fromkeys(translation.values())])
        # the question's entities by their canonical names too: "heart attack" is searched as
        # "acute coronary syndrome", the note's own words (resources/kb/terms.txt)
        seeds = self.kb.terms.find(search, nested=True)[:MAX_SEEDS]
        named = [s for s in seeds if s.casefold() not in search.casefold()]
        search = " ".join([search, *named])
        #: method -> why it could not run
        down: dict[str, str] = {}
        lists: dict[str, list[Hit]] = {}
        trace: dict[str, Any] = {}

        vector_error = ""
        if not self._vectors_synced:  # it missed an import, or was down: try again
            if time.monotonic() < self._retry_at["vector"]:
                vector_error = self._vector_message
            else:
                try:
                    with self._indexing(wait=False):
                        if not self._try_sync_vectors(Progress()):
                            vector_error = self._vector_message
                except IndexingElsewhereError as err:
                    vector_error = str(err)
        if not vector_error:
            try:
                query = self.embedder.embed(search)
                vector_hits = self.search_vectors(query, scopes, candidates)
                lists["vector"] = [
                    Hit(h.id, h.score, f"similarity {h.score:.2f}") for h in vector_hits
                ]
            except (StoreUnavailableError, ModelUnavailableError) as err:
                self._vectors_synced = False
                self._vector_message = vector_error = str(err)
        if vector_error:
            down["vector"] = f"vector search is unavailable ({vector_error})"
            lists["vector"] = []
        trace["vector"] = {"where": self.last_where if self._vectors else {}}
        if lang == "es":
            self._spanish_search(read, scopes, candidates, lists, down, trace)

        keyword_hits = self.keyword.search(
            search, scopes, candidates, spanish=read if lang == "es" else ""
        )
        lists["keyword"] = [Hit(h.chunk_id, h.score, f"bm25 {h.score:.2f}") for h in keyword_hits]
        params = dict(self.keyword.last_parameters)
        trace["keyword"] = {
            "query": params.get("query", ""),
            "scopes": json.loads(params.get("scopes", "[]")),
        }

        view = GraphView(tuple(seeds), ())
        try:
            if not self._graph_synced:
                if time.monotonic() < self._retry_at["graph"]:
                    raise GraphUnavailableError(self._graph_message)
                try:
                    with self._indexing(wait=False):
                        if not self._try_sync_graph(Progress()):
                            raise GraphUnavailableError(self._graph_message)
                except IndexingElsewhereError as err:
                    raise GraphUnavailableError(str(err)) from None
            lists["graph"], view = self._graph_search(seeds, scopes, candidates)
        except GraphUnavailableError as err:
            self._graph_synced = False
            self._graph_message = str(err)
            down["graph"] = f"the graph is unavailable ({err})"
            lists["graph"] = []
        ran = " and ".join(m for m in lists if m not in down)
        degraded = [f"{m}: {why}; answered from {ran} retrieval only" for m, why in down.items()]
        trace["graph"] = {"seeds": list(seeds), "scopes": list(scopes), "kind": self.graph.kind}
        for method, hits in lists.items():
            trace[method]["ids"] = [h.chunk_id for h in hits]

        fused = rrf(lists, k=FUSION_K, weights=FUSION_WEIGHTS, limit=k)
        chunks = self.kb.chunks(f.chunk_id for f in fused)
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
        return Retrieval(
            question=question,
            user=user or "",
            scopes=scopes,
            passages=tuple(passages),
            methods={m: [h.chunk_id for h in hits] for m, hits in lists.items()},
            graph=view,
            degraded=tuple(degraded),
            trace=trace,
            seconds=time.perf_counter() - started,
            language=lang,
            asked=asked,
            follows=follows if carried else "",
            carried=carried,
        )

    def _spanish_search(
        self,
        read: str,
        scopes: Sequence[str],
        candidates: int,
        lists: dict[str, list[Hit]],
        down: dict[str, str],
        trace: dict[str, Any],
    ) -> None:
        """The second vector's ranked list (method ``multilingual``) for a Spanish question:
        the question as asked (its Spanish words, no glossary: the multilingual embedder
        places them near the English notes), the scopes inside the query. Nothing without a
        second vector; an unusable one leaves the method out (degraded) and the rest answers."""
        error = ""
        try:
            if self.spanish_embedder is None:
                return
            if not self._spanish_synced:
                if time.monotonic() < self._retry_at["multilingual"]:
                    error = self._spanish_message
                else:
                    try:
                        with self._indexing(wait=False):
                            if not self._try_sync_spanish(Progress()):
                                error = self._spanish_message
                    except IndexingElsewhereError as err:
                        error = str(err)
            if not error:
                embedder = self.spanish_embedder
                assert embedder is not None
                hits = self.search_spanish_vectors(embedder.embed(read), scopes, candidates)
                lists["multilingual"] = [
                    Hit(h.id, h.score, f"similarity {h.score:.2f}") for h in hits
                ]
        except CancelledError:
            raise
        except CustodiaEnvironmentError as err:
            self._spanish_synced = False
            self._spanish_message = error = str(err)
            self._retry_at["multilingual"] = time.monotonic() + RETRY_SECONDS
        if error:
            down["multilingual"] = f"multilingual vector search is unavailable ({error})"
            lists["multilingual"] = []
        trace["multilingual"] = {"where": self.last_spanish_where}

    def _in_notes_words(self, question: str) -> str:
        """``question`` with the notes' name of each entity it calls by a lay name that shares
        no word with it: "what do you give for a heart attack?" is weighed as one about "acute
        coronary syndrome" too (the note never says "heart attack"); "diabetes" is not
        widened to "type 2 diabetes"."""
        extra = []
        for start, end, name in self.kb.terms.spans(question):
            if not set(grounding.content(question[start:end])) & set(grounding.content(name)):
                extra.append(name)
        return " ".join([question, *extra])

    @staticmethod
    def _lay(question: str, vocabulary: Vocabulary) -> dict[str, str]:
        """The notes' words for an English question's lay words the notes never use and its
        drug-name endings ("sugar" -> glucose, "-pril" -> ramipril lisinopril enalapril)."""
        return {**aspects.lay_words(question, vocabulary), **aspects.endings(question, vocabulary)}

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
        graph = self.graph
        seed_set = set(seeds)
        neighbours = graph.neighbours(seeds, scopes, limit=400)
        covered: dict[str, set[str]] = defaultdict(set)
        total: dict[str, float] = defaultdict(float)
        count: dict[str, int] = defaultdict(int)
        best: dict[str, tuple[int, str]] = {}
        direct: set[frozenset[str]] = set()
        for n in neighbours:
            both = n.target in seed_set
            if both:
                direct.add(frozenset((n.source, n.target)))
            for chunk in n.sources:
                covered[chunk] |= {n.source, n.target} & seed_set
                total[chunk] += n.weight
                count[chunk] += 1
                if chunk not in best or n.weight > best[chunk][0]:
                    best[chunk] = (n.weight, f"{n.source} — {n.target}")
        path_edges: list[tuple[str, str, int]] = []
        via_path: dict[str, str] = {}
        for a, b in itertools.combinations(list(seeds)[:4], 2):
            if frozenset((a, b)) in direct:
                continue
            path = graph.path(a, b, scopes)
            if path is None:
                continue
            for (x, y), sources, w in zip(
                itertools.pairwise(path.names), path.sources, path.weights, strict=False
            ):
                path_edges.append((x, y, w))
                for chunk in sources:
                    if chunk not in covered:
                        via_path.setdefault(chunk, path.line())
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

    # -- a turn ------------------------------------------------------------------------------
    def ask(
        self,
        question: str,
        user: str,
        *,
        on_token: Callable[[str], None] | None = None,
        should_stop: ShouldStop | None = None,
        k: int = CONTEXT_PASSAGES,
        on_retrieved: Callable[[Retrieval], None] | None = None,
        earlier: str = "",
        earlier_covered: bool | None = None,
        draft: bool | None = None,
        rephrases: int = 0,
    ) -> Turn:
        """Retrieve, answer with citations, check the answer, append exactly one audit record.

        ``earlier``: the thread's last question as it was understood (the last turn's
        ``retrieval.understood``); a question that names nothing of the notes ("and in
        children?") is then read as its follow-up (:mod:`backends.tutor.followup`), and the
        turn says so (:attr:`Retrieval.follows`). ``earlier_covered``: whether the notes
        covered the earlier question (None: taken as covered — ``--after`` says the user means
        a follow-up); after one they did not, only a question that points back is read with it.

        ``draft``: ask the chat model for its draft (True: "Ask the model to rephrase"; None:
        when :meth:`wants_draft` — a model whose drafts rarely pass is not asked, and the
        composed answer is the turn's at once). Each draft judged is counted for its model.
        ``rephrases``: the audit record of the composed answer this turn asks the model to
        reword (the tab shows the composed turn at once, audited, then asks for the draft as
        a turn of its own, which replaces it on screen only when it passes).

        ``on_retrieved`` gets the passages as soon as they are found (the tab shows the
        sources while the model writes).

        What is shown as fact is evidence (CT9, :mod:`backends.grounding`): when the passages
        do not cover the question, the tutor says so and does not ask the model; otherwise the
        model's answer is shown only when every sentence of it is supported by a passage
        sentence (and it answers from the passage that answers the question); else the
        extractive answer (sentences quoted from the passages) is shown, with the model's
        answer beside it, its unsupported sentences marked. ``on_token`` receives the model's
        draft as it streams — a draft, not an answer.

        A turn stopped by ``should_stop`` is audited with ``stopped`` set. So is one
        interrupted by Ctrl+C (``KeyboardInterrupt``) while the answer streams: the part
        streamed so far is recorded, then :class:`TurnInterrupted` (a ``KeyboardInterrupt``
        carrying the turn) is raised; a ``BrokenPipeError`` from ``on_token`` (the reader of
        a pipe left) is recorded the same way and raised again. Before the model is asked
        (retrieval), an interrupt or a failure writes nothing.
        """
        user_scope(user)  # a valid user name, or ScopeError before anything runs
        retrieval = self.retrieve(question, user, k)
        judged = self._judge(retrieval)
        if earlier.strip() and not retrieval.graph.seeds:
            how = followup.kind(retrieval.question, names_entity=False)
            if followup.tries_thread(how, earlier_covered=earlier_covered is not False):
                again = self.retrieve(question, user, k, follows=earlier.strip())
                judged_again = self._judge(again)
                if followup.keeps_thread(how, covered_in_thread=judged_again.covered):
                    retrieval, judged = again, judged_again
        if on_retrieved is not None:
            on_retrieved(retrieval)
        chat = self.chat
        lang = retrieval.language
        sources = judged.sources
        covered_by, scored, quotes = judged.coverage, judged.scored, judged.quotes
        covered = judged.covered

        stop = should_stop or (lambda: False)
        pieces: list[str] = []
        interrupted: BaseException | None = None
        drafting = covered and not chat.retrieval_only
        if drafting and draft is None:
            drafting = self.wants_draft()
        elif drafting:
            drafting = bool(draft)
        if drafting:
            prompt = Prompt(
                user=retrieval.question,
                system=SYSTEM_PROMPT,
                context=[p.context_line(PASSAGE_WORDS) for p in retrieval.passages],
                max_tokens=MAX_TOKENS,
                # no temperature here: the tutor's low default (0.1) comes from its generation
                # settings, which the user may change (backends/models/settings.py)
                stop=STOP_SEQUENCES,
            )
            stream = chat.stream(prompt, stop)
            try:
                for piece in stream:
                    pieces.append(piece)
                    if on_token is not None:
                        try:
                            on_token(piece)
                        except BrokenPipeError as err:  # the reader left (`ask tutor | head`)
                            interrupted = err
                            break
            except KeyboardInterrupt as err:  # Ctrl+C mid-answer: still one record, as stopped
                interrupted = err
            finally:  # a generator left early releases what it holds (a model's lock) now
                close = getattr(stream, "close", None)
                if callable(close):
                    close()
        stopped = interrupted is not None or stop()
        checked = self._ground(
            "".join(pieces),
            sources,
            quotes,
            scored,
            covered_by,
            lang,
            chat,
            covered,
            stopped,
            judged.mentions,
            judged.mentioned,
        )
        checked = _no_echoes(checked, retrieval.asked)
        if covered and not chat.retrieval_only and not drafting:
            # composed first (the tab asks for the draft next), or no draft: this model's
            # rarely pass
            heading = HEADINGS[lang]["composed" if draft is False else "no-draft"]
            checked = replace(checked, heading=heading, reason=N_("no draft was asked for"))
        elif drafting and not stopped:
            self.drafts.record(f"tutor:{chat.name}", checked.mode == GENERATED)
        answer, cited = _shown(checked, lang, {p.number: p.title for p in retrieval.passages})
        by_number = {p.number: p for p in retrieval.passages}
        try:
            entry = self._audit().append(
                AUDIT_EVENT,
                user.strip(),
                # what was asked and what the student was shown, sealed with their key: a
                # reviewer reads it in the inspector, and erasing the person shreds it (CT9)
                personal={
                    "question": retrieval.question,
                    # the earlier question this one was read as a follow-up to ("" if none)
                    "follows": retrieval.follows,
                    "answer": answer,
                    "heading": checked.heading,
                    "language": lang,
                    "generated": checked.generated,
                    "unsupported": [c.text for c in checked.unsupported],
                    # every sentence of the model's answer as the check judged it
                    "model_sentences": [c.as_dict() for c in checked.sentences],
                    # the user's own notes: ids derived from their name and file, so sealed
                    "own_chunks": [p.chunk_id for p in retrieval.passages if p.scope != SHARED],
                },
                # shared chunk ids in clear; a user's own note only as "own" (its id is sealed
                # above: it is derived from their name and path, and could be confirmed)
                chunks=[_clear_chunk(p) for p in retrieval.passages],
                cited=[_clear_chunk(by_number[n]) for n in cited],
                model=chat.name,
                retrieval_only=bool(chat.retrieval_only),
                degraded=list(retrieval.degraded_methods),
                stopped=stopped,
                # the record of the composed answer this turn asked the model to reword
                rephrases=rephrases or None,
                grounding={
                    "mode": checked.mode,
                    "covered": checked.covered,
                    "coverage": round(checked.coverage, 3),
                    "sentences": len(checked.sentences),
                    "unsupported": len(checked.unsupported),
                },
            )
        except CustodiaEnvironmentError as err:
            raise AuditFailedError(
                f"The answer could not be recorded in the audit log: {err}"
            ) from err
        turn = Turn(
            question=retrieval.question,
            answer=answer,
            passages=retrieval.passages,
            cited=cited,
            model=chat.name,
            retrieval_only=bool(chat.retrieval_only),
            degraded=retrieval.degraded,
            audit_seq=entry.seq,
            retrieval=retrieval,
            stopped=stopped,
            grounding=checked,
            rephrases=rephrases,
        )
        if isinstance(interrupted, KeyboardInterrupt):
            raise TurnInterrupted(turn) from interrupted
        if interrupted is not None:
            raise interrupted
        return turn

    def _judge(self, retrieval: Retrieval) -> _Judged:
        """What the passages say to the question: its coverage, the scored passage sentences,
        the extractive answer, and whether the notes cover it at all."""
        sources = [p.source_for_check() for p in retrieval.passages]
        vocabulary = self.vocabulary(retrieval.scopes)
        covered_by = grounding.coverage(retrieval.asked, sources, vocabulary)
        about = self._about(retrieval)
        # the names "-pril" stands for weigh as one word (issue 24: the cough sentence, not
        # the one listing ramipril, lisinopril and enalapril)
        alike = aspects.alternatives(retrieval.question, vocabulary)
        scored = grounding.score_sentences(
            retrieval.asked, sources, vocabulary, about=about, alternatives=alike
        )
        quotes = tuple(
            grounding.extract(retrieval.asked, sources, vocabulary, about=about, alternatives=alike)
        )
        quotes = _with_amount(retrieval.question, quotes, sources)
        covered = self._covers(retrieval, vocabulary, covered_by, quotes)
        if not covered:
            # a rare word of the question that a passage names: what the notes only mention
            subject = aspects.subject_words(
                retrieval.asked, aspects.asked_aspects(retrieval.asked, retrieval.question)
            )
            # (only when the notes know every word of the subject: "acute appendicitis" is
            # not mentioned by "acute kidney injury")
            all_known = all(w in vocabulary for w in subject)
            rare = [w for w in subject if 0 < vocabulary.frequency.get(w, 0) <= MENTION_CHUNKS]
            rare.sort(key=vocabulary.idf, reverse=True)
            named = aspects.mention((*quotes, *scored), rare[:1]) if rare and all_known else None
            if named is None:
                return _Judged(sources, vocabulary, covered_by, scored, quotes, False)
            return _Judged(
                sources, vocabulary, covered_by, scored, quotes, False, (named,), rare[0]
            )
        # what the question asks of its subject (its dose, monitoring, cause…) must be said
        # of it: a passing mention is no answer (issue 24: lithium's monitoring)
        asked_aspects = aspects.asked_aspects(retrieval.asked, retrieval.question)
        if not asked_aspects:
            return _Judged(sources, vocabulary, covered_by, scored, quotes, True)
        subject = aspects.subject_words(retrieval.asked, asked_aspects)
        if not subject:
            return _Judged(sources, vocabulary, covered_by, scored, quotes, True)
        # the subject's rarest word the notes know must be in a quoted passage: symptoms of
        # hypothyroidism do not answer "the symptoms of Addison's disease"
        known = [w for w in subject if w in vocabulary]
        if known:
            rarest = max(known, key=vocabulary.idf)
            subject = [rarest, *(w for w in subject if w != rarest)]
            quoted = {q.number for q in quotes}
            held: set[str] = set()
            for p in retrieval.passages:
                if p.number in quoted:
                    held |= set(grounding.content(f"{p.title} {p.text}"))
            if rarest not in held:
                return _Judged(sources, vocabulary, covered_by, scored, quotes, False)
        titles = {p.number: p.title for p in retrieval.passages}
        # a sentence naming no topic of its own ("Treatment is oxygen…") speaks of the one
        # before it; the answer naming most of the subject leads (issue 24: "severe asthma
        # attack" is not answered by the asthma note's stepwise treatment)
        leads = aspects.contexts(sources)
        context = {q: leads.get((q.number, q.text), "") for q in (*quotes, *scored)}
        # "…in pregnancy": a note that never names it does not answer for it
        qualified = [w for w in aspects.qualifiers(retrieval.question) if w in subject]
        notes: dict[str, str] = {}
        for source in sources:
            notes[source.title] = f"{notes.get(source.title, '')} {source.text}"
        answering = [
            q
            for q in (*quotes, *scored)
            if aspects.answers_aspect(
                q.text,
                titles.get(q.number, ""),
                subject,
                asked_aspects,
                context[q],
                qualified,
                notes.get(titles.get(q.number, ""), ""),
            )
        ]
        naming = {
            q: aspects.subject_held(q.text, titles.get(q.number, ""), subject, context[q])
            for q in answering
        }
        answering.sort(key=lambda q: -naming[q])
        if answering:
            first = answering[0]
            if first not in quotes:  # the sentence that answers it leads
                quotes = (first, *(q for q in quotes if q.text != first.text))[:3]
            return _Judged(sources, vocabulary, covered_by, scored, quotes, True)
        named = aspects.mention((*quotes, *scored), subject[:1])
        if named is None:
            return _Judged(sources, vocabulary, covered_by, scored, quotes, False)
        return _Judged(sources, vocabulary, covered_by, scored, quotes, False, (named,), subject[0])

    def _about(self, retrieval: Retrieval) -> grounding.About | None:
        """How many of the question's entities a text names (None: the question names none)."""
        seeds = set(retrieval.graph.seeds)
        if not seeds:
            return None
        terms = self.kb.terms
        return lambda text: len(seeds & set(terms.find(text, nested=True)))

    def _covers(
        self,
        retrieval: Retrieval,
        vocabulary: Vocabulary,
        covered_by: float,
        quotes: tuple[Quote, ...],
    ) -> bool:
        """Whether the passages answer the question (:class:`CoverageRule`)."""
        if not retrieval.passages or not quotes:
            return False
        similarities = [
            r.score for p in retrieval.passages for r in p.reasons if r.method == "vector"
        ]
        rule = COVERAGE_RULES.get(self.embedder.name, LEXICAL_RULE)
        if not similarities:  # the vector store is down: the words alone decide
            rule = LEXICAL_RULE
        similarity = max(similarities, default=0.0)
        unknown = any(w not in vocabulary for w in retrieval.asked)
        if retrieval.language == "es":
            # a Spanish word the glossary and the cognate rules could not put in the notes'
            # words says nothing of the notes ("valora", "plazo"): only one shaped like a
            # term ("apendicitis", "omeprazol", a name) is a topic the notes may lack
            # — or, with no measured similarity to weigh it (the lexical rule: an embedder
            # not calibrated, or the vectors down), any untranslated word when the question
            # names nothing the notes know ("¿Qué controles necesita el litio?")
            said = {grounding.normal(w): w for w in grounding.words(retrieval.question)}
            untranslated = [w for w in retrieval.asked if w not in vocabulary]
            unknown = any(
                aspects.term_like(said.get(w, w), retrieval.question) for w in untranslated
            )
            if rule is LEXICAL_RULE and untranslated and not retrieval.graph.seeds:
                return False
        if similarity < rule.similarity or covered_by < rule.lexical:
            return False
        if unknown and (similarity < rule.unknown or covered_by < rule.unknown_lexical):
            return False
        # the best quote must say something the question asks beyond its note's subject:
        # "Amoxicillin is a broad-spectrum penicillin" does not answer "the half-life of
        # amoxicillin" (found by a QA pass)
        titles = {p.number: p.title for p in retrieval.passages}
        best = quotes[0]
        subject = set(grounding.content(titles.get(best.number, "")))
        # (the verbs of asking — "what is *given* …", "¿qué se *administra*…?" — and "how
        # long / cuánto tiempo" ask: a question with nothing else beyond its subject is not
        # held to this, though a quote holding them still counts)
        beyond = [w for w in retrieval.asked if w not in subject]
        if retrieval.language == "es":  # an untranslated word is in no English quote
            beyond = [w for w in beyond if w in vocabulary]
        asks_more = [w for w in beyond if w not in aspects.ASKING_WORDS]
        if asks_more and not set(beyond) & set(grounding.content(best.text)):
            return False
        asked_words = grounding.words(retrieval.question)
        # "why are the doses reduced…?" asks for a reason, "until when is the dose increased?"
        # for a condition (a target level), not an amount
        asks_amount = asked_words[:1] not in (["why"], ["until"]) and asked_words[:2] not in (
            ["por", "que"],
            ["hasta", "cuando"],
        )
        asks_amount = asks_amount and any(w in QUANTITY_WORDS for w in asked_words)
        # an amount is a number with its unit: "avoided when the eGFR is below 45" gives no
        # dose of nitrofurantoin (a near miss of the evaluation set); a dose has a unit of
        # dose ("4.5 hours" is no dose of alteplase), "how long…" a unit of time
        kind = aspects.amount_kind(retrieval.question)
        if kind == "dose" and not any(aspects.DOSE.search(q.text) for q in quotes):
            return False
        if kind == "time" and not any(aspects.DURATION.search(q.text) for q in quotes):
            return False
        stated = any(AMOUNT.search(q.text) or aspects.WORD_AMOUNT.search(q.text) for q in quotes)
        return not (asks_amount and not stated)

    @staticmethod
    def _ground(
        generated: str,
        sources: Sequence[Source],
        quotes: tuple[Quote, ...],
        scored: Sequence[Quote],
        covered_by: float,
        lang: str,
        chat: ChatModel,
        covered: bool,
        stopped: bool,
        mentions: tuple[Quote, ...] = (),
        mentioned: str = "",
    ) -> Grounding:
        """Which answer is shown, and why (see :meth:`ask`)."""
        headings = HEADINGS[lang]
        if not covered:
            return Grounding(
                NOT_COVERED,
                lang,
                headings[NOT_COVERED],
                coverage=covered_by,
                mentions=mentions,
                mentioned=mentioned,
            )
        if chat.retrieval_only:
            return Grounding(
                EXTRACTIVE, lang, headings["retrieval-only"], quotes=quotes, coverage=covered_by
            )
        text = grounding.complete_sentences(generated)
        sentences = tuple(grounding.check_sentences(text, sources))
        unsupported = [s for s in sentences if not s.supported]
        reason = ""
        if stopped:
            reason = N_("the model's answer was stopped before it finished")
        elif not sentences:
            reason = N_("the model gave no answer")
        elif unsupported:
            reason = N_("{bad} of {count} sentences not found in the passages").format(
                bad=len(unsupported), count=len(sentences)
            )
        elif not grounding.answers_the_question(sentences, scored, sources):
            reason = N_(
                "the model's answer does not come from the passage that answers the question"
            )
        if not reason:
            # the notes are English, so a checked answer is English: a Spanish question is
            # told so in its own language rather than answered as if in it
            heading = headings[GENERATED if lang == "en" else "generated-english"]
            return Grounding(GENERATED, lang, heading, generated, sentences, quotes, covered_by)
        heading = headings["stopped" if stopped else EXTRACTIVE]
        return Grounding(
            EXTRACTIVE, lang, heading, generated, sentences, quotes, covered_by, reason
        )

    def close(self) -> None:
        with self._lock:
            for part in (self._vectors, self._spanish_vectors, self._graph, self._kb):
                if part is None:
                    continue
                try:
                    part.close()
                except Exception:
                    log.exception("tutor: error while closing %s", type(part).__name__)
            self._vectors = self._spanish_vectors = self._graph = self._kb = None
            self._ready = False


#: a quote opening with one of these needs its note's title to say what it is about
PRONOUNS = frozenset(["It", "Its", "It's", "They", "Their", "This", "These", "Those", "That"])


def _with_amount(
    question: str, quotes: tuple[Quote, ...], sources: Sequence[Source]
) -> tuple[Quote, ...]:
    """For a question asking a dose or a time, the quotes with the next sentence of a quote
    when it gives one and no quote does: "¿Cuánto tiempo se mantiene la anticoagulación…?"
    quoted "Treatment is anticoagulation…" and left out "It continues for at least three
    months" (issue 27)."""
    kind = aspects.amount_kind(question)
    if not kind or not quotes:
        return quotes
    pattern = aspects.DOSE if kind == "dose" else aspects.DURATION
    if any(pattern.search(q.text) for q in quotes):
        return quotes
    by_number = {s.number: s for s in sources}
    for quote in quotes:
        source = by_number.get(quote.number)
        sentences = source.sentences if source is not None else []
        if quote.text in sentences:
            after = sentences[sentences.index(quote.text) + 1 : sentences.index(quote.text) + 2]
            if after and pattern.search(after[0]):
                return (*quotes, Quote(quote.number, after[0], quote.score))
    return quotes


def _clear_chunk(passage: Passage) -> str:
    return passage.chunk_id if passage.scope == SHARED else "own"


def _no_echoes(checked: Grounding, asked: Sequence[str]) -> Grounding:
    """A "supported" sentence that only repeats the question ("Sepsis signs.") is no answer:
    it is marked unsupported, and a model's answer made of such sentences is not shown."""
    if not checked.sentences:
        return checked
    sentences = tuple(
        replace(s, supported=False, reason=N_("it only repeats the question"))
        if s.supported and grounding.restates(s, asked)
        else s
        for s in checked.sentences
    )
    if sentences == checked.sentences:
        return checked
    if checked.mode != GENERATED or any(s.supported for s in sentences):
        return replace(checked, sentences=sentences)  # a shown answer leaves its echoes out
    heading = HEADINGS[checked.language][EXTRACTIVE]
    reason = N_("the model's answer only repeats the question")
    return replace(checked, mode=EXTRACTIVE, heading=heading, sentences=sentences, reason=reason)


def _cite(sentence: str, number: int) -> str:
    """``sentence`` with ``[number]`` before its final stop: "... acetylcysteine [1]."."""
    text = sentence.rstrip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{number}]{text[-1]}"
    return f"{text} [{number}]"


def _shown(checked: Grounding, lang: str, titles: dict[int, str]) -> tuple[str, tuple[int, ...]]:
    """The text shown as fact and the passages it cites: the model's sentences each with the
    passage that supports it, or the quotes (each note's title before its first quote when the
    sentence does not name it), or (not covered) the refusal with no citation."""
    if checked.mode == NOT_COVERED:
        if not checked.mentions:
            return NOT_COVERED_TEXT[lang], ()
        parts = []
        for q in checked.mentions:
            title = titles.get(q.number, "")
            needs_title = title and not set(grounding.content(title)) <= set(
                grounding.content(q.text)
            )
            parts.append(_cite(f"“{title}: {q.text}”" if needs_title else f"“{q.text}”", q.number))
        written = [
            w
            for w in grounding.words(checked.mentions[0].text)
            if grounding.normal(w) == checked.mentioned
        ]
        head = MENTION_TEXT.get(lang, MENTION_TEXT["en"]).format(
            written[0] if written else checked.mentioned
        )
        return " ".join([head, *parts]), tuple(sorted({q.number for q in checked.mentions}))
    if checked.mode == GENERATED:
        shown = [s for s in checked.sentences if s.supported]
        parts = [_cite(s.text, s.number) for s in shown]
        numbers = [s.number for s in shown]
    else:
        if not checked.quotes:
            return NO_EXTRACT_TEXT[lang], ()
        parts = []
        named: set[str] = set()
        for q in checked.quotes:
            # "Its main use is monitoring warfarin" says nothing without its note's title
            title = titles.get(q.number, "")
            needs_title = title and (
                not set(grounding.content(title)) <= set(grounding.content(q.text))
                or q.text.split(" ", 1)[0] in PRONOUNS  # "It is classified by …"
            )
            text = f"{title}: {q.text}" if needs_title and title not in named else q.text
            named.add(title)
            parts.append(_cite(text, q.number))
        numbers = [q.number for q in checked.quotes]
    return " ".join(parts), tuple(sorted(set(numbers)))


def _with(status: Status, **changes: Any) -> Status:
    return replace(status, **changes)


def get_service(services: Services) -> TutorService:
    """Transitional: the tutor part of ``services`` (see :mod:`backends.assistants`)."""
    return services.get("tutor", TutorService)


def build(needs: Needs) -> TutorService:
    """The tutor, built from what the composition layer hands it (the audit service too)."""
    audit = needs.audit
    if audit is None:
        raise ValueError("the tutor is declared with needs=('audit',)")
    return TutorService(
        needs.config,
        embedder=needs.embedder,
        spanish_embedder=lambda: spanish_embedder_for(needs.config),
        chat=needs.chat_model,
        audit=audit,
    )
