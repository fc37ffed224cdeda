"""The clinical tutor service: what the tab and ``custodia ask tutor`` talk to — a façade.

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

The work is done one idea per module, below this one: :mod:`~backends.tutor.indexing` (the
knowledge base and its derived stores), :mod:`~backends.tutor.retrieval` (understanding the
question, the searches, the fusion) and :mod:`~backends.tutor.answer` (the coverage rule, the
support check's policy, the citations). A question walks down once: :meth:`TutorService.ask`
calls retrieval once, the answer once, the audit log once (tests/backends/tutor/
test_question_walk.py holds it to that).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from backends import answers, stores
from backends.assistants import Needs, StoreOpener
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.failures import failed
from backends.grounding import Vocabulary
from backends.i18n import _
from backends.models.chat import ChatModel, ShouldStop
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.stores.graph import DEFAULT_NAMESPACE, Graph
from backends.stores.vectors import VectorHit, VectorIndex
from backends.tutor.answer import (
    EXTRACTIVE,
    GENERATED,
    HEADINGS,
    NOT_COVERED,
    NOTICE,
    SYSTEM_PROMPT,
    Answerer,
    Grounding,
)
from backends.tutor.coverage import COVERAGE_RULES, LEXICAL_RULE, Coverage, CoverageRule
from backends.tutor.indexing import (
    GRAPH_FILE,
    LOCK_FILE,
    SPANISH_COLLECTION,
    Index,
    IndexingElsewhereError,
    NotesForgotten,
    Provider,
    Status,
    make_graph,
    provide,
    spanish_embedder_for,
)
from backends.tutor.kb import ImportReport, KnowledgeBase, shipped_kb_dir
from backends.tutor.keyword import KeywordIndex
from backends.tutor.retrieval import (
    CANDIDATES,
    CONTEXT_PASSAGES,
    FUSION_K,
    FUSION_WEIGHTS,
    GLOSSARY_FILE,
    MAX_PASSAGES,
    EmptyQuestionError,
    GraphView,
    Passage,
    Retrieval,
    Retriever,
    TutorError,
)

if TYPE_CHECKING:
    from backends.audit.service import AuditService

#: what the façade's callers import from here (the parts' names, kept where they were)
__all__ = [
    "AUDIT_EVENT",
    "CANDIDATES",
    "CONTEXT_PASSAGES",
    "COVERAGE_RULES",
    "EXTRACTIVE",
    "FUSION_K",
    "FUSION_WEIGHTS",
    "GENERATED",
    "GRAPH_FILE",
    "HEADINGS",
    "LEXICAL_RULE",
    "LOCK_FILE",
    "MAX_PASSAGES",
    "NOTICE",
    "NOT_COVERED",
    "SPANISH_COLLECTION",
    "SYSTEM_PROMPT",
    "AuditFailedError",
    "CoverageRule",
    "EmptyQuestionError",
    "GraphView",
    "Grounding",
    "IndexingElsewhereError",
    "NotesForgotten",
    "Passage",
    "Retrieval",
    "Status",
    "Turn",
    "TurnInterrupted",
    "TutorError",
    "TutorService",
    "build",
    "make_graph",
    "shipped_kb_dir",
    "spanish_embedder_for",
]

AUDIT_EVENT = "tutor.turn"
FOLLOW_UP_NOTE = {
    "en": "Read as a follow-up to your earlier question: searched with “{}” from it.",
    "es": "Leída como continuación de tu pregunta anterior: buscada con «{}» de ella.",
}


class AuditFailedError(TutorError):
    """The answer was produced but could not be recorded in the audit log."""


class TurnInterrupted(KeyboardInterrupt):
    """Ctrl+C while the answer was streaming. The turn was still audited, as stopped
    (:attr:`turn`, with the part of the answer streamed so far); then the interrupt goes on."""

    def __init__(self, turn: Turn) -> None:
        super().__init__(f"interrupted; recorded in the audit log as #{turn.audit_seq}")
        self.turn = turn


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


class TutorService:
    """Knowledge base, retrieval (vector + keyword + graph), chat and audit for one app.

    Its parts are public for the tests and benchmarks that look inside: :attr:`index`
    (:class:`~backends.tutor.indexing.Index`), :attr:`retriever`
    (:class:`~backends.tutor.retrieval.Retriever`) and :attr:`answerer`
    (:class:`~backends.tutor.answer.Answerer`).
    """

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
        open_store: StoreOpener = stores.open,
        spanish_embedder: Embedder | Provider[Embedder | None] | None = None,
    ) -> None:
        self.config = config
        self._chat = provide(chat)
        self._audit: Provider[AuditService] = provide(audit)
        self.index = Index(
            config,
            embedder=embedder,
            kb_dir=kb_dir or shipped_kb_dir(),
            graph=graph,
            namespace=namespace,
            open_store=open_store,
            spanish_embedder=spanish_embedder,
        )
        self.retriever = Retriever(self.index, shipped_kb_dir() / GLOSSARY_FILE)
        self.answerer = Answerer(config, Coverage(self.index))

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
        found = self.retriever.find(
            question, user, k, earlier=earlier, earlier_covered=earlier_covered
        )
        reply = self.answerer.reply(
            found,
            self._chat,
            draft=draft,
            on_token=on_token,
            should_stop=should_stop,
            on_retrieved=on_retrieved,
            rephrases=rephrases,
        )
        try:
            entry = self._audit().append(AUDIT_EVENT, user.strip(), **reply.record)
        except CustodiaEnvironmentError as err:
            raise AuditFailedError(
                failed(_("The answer could not be recorded in the audit log"), err)
            ) from err
        turn = Turn(
            question=reply.retrieval.question,
            answer=reply.answer,
            passages=reply.retrieval.passages,
            cited=reply.cited,
            model=reply.model,
            retrieval_only=reply.retrieval_only,
            degraded=reply.retrieval.degraded,
            audit_seq=entry.seq,
            retrieval=reply.retrieval,
            stopped=reply.stopped,
            grounding=reply.grounding,
            rephrases=rephrases,
        )
        if isinstance(reply.interrupted, KeyboardInterrupt):
            raise TurnInterrupted(turn) from reply.interrupted
        if reply.interrupted is not None:
            raise reply.interrupted
        return turn

    def retrieve(
        self,
        question: str,
        user: str | None,
        k: int = CONTEXT_PASSAGES,
        candidates: int = CANDIDATES,
        *,
        follows: str = "",
    ) -> Retrieval:
        """The ``k`` best passages for ``question`` among ``user``'s scopes, fused (CT7; see
        :meth:`Retriever.retrieve`)."""
        return self.retriever.retrieve(question, user, k, candidates, follows=follows)

    @property
    def drafts(self) -> answers.DraftStats:
        """How often each model's drafts passed (``tutor:<model>``), kept in the data dir."""
        return self.answerer.drafts

    def wants_draft(self) -> bool:
        """Whether the chat model's draft is asked for unprompted (its pass rate is known and
        low: no; the composed answer is shown at once)."""
        return self.answerer.wants_draft(self.chat)

    # -- the knowledge base ------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self.index.ready

    def prepare(self, progress: Progress | None = None) -> Status:
        """Import the shipped corpus (idempotent), bring vectors and graph up to date (see
        :meth:`Index.prepare`)."""
        return self.index.prepare(progress)

    def import_path(
        self, path: Path, user: str | None = None, progress: Progress | None = None
    ) -> ImportReport:
        """Import a Markdown/text file or folder into ``user``'s scope (shared when None; see
        :meth:`Index.import_path`)."""
        return self.index.import_path(path, user, progress)

    def forget_user(self, user: str, progress: Progress | None = None) -> NotesForgotten:
        """Delete ``user``'s own notes from the knowledge base, the vectors and the graph (see
        :meth:`Index.forget_user`); the audit log is not touched."""
        return self.index.forget_user(user, progress)

    def status(self) -> Status:
        return self.index.status()

    def users(self) -> list[str]:
        return self.index.users()

    # -- the parts, for those who look inside ------------------------------------------------
    @property
    def kb_dir(self) -> Path:
        """Where the shipped notes and the term list are read from."""
        return self.index.kb_dir

    @kb_dir.setter
    def kb_dir(self, folder: Path) -> None:
        self.index.kb_dir = folder

    @property
    def kb(self) -> KnowledgeBase:
        return self.index.kb

    @property
    def keyword(self) -> KeywordIndex:
        return self.index.keyword

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

    @property
    def chat(self) -> ChatModel:
        return self._chat()

    @property
    def graph(self) -> Graph:
        return self.index.graph

    @property
    def vectors(self) -> VectorIndex:
        return self.index.vectors

    @property
    def spanish_embedder(self) -> Embedder | None:
        return self.index.spanish_embedder

    @property
    def spanish_vectors(self) -> VectorIndex | None:
        return self.index.spanish_vectors

    def vocabulary(self, scopes: Sequence[str]) -> Vocabulary:
        return self.index.vocabulary(scopes)

    @property
    def glossary(self) -> dict[str, str]:
        return self.retriever.glossary

    @property
    def last_where(self) -> dict[str, Any]:
        """The ``where`` filter of the last vector search (the trace shown to testers)."""
        return self.retriever.last_where

    @property
    def last_spanish_where(self) -> dict[str, Any]:
        """The same, of the last second-vector search."""
        return self.retriever.last_spanish_where

    def search_vectors(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        return self.retriever.search_vectors(vector, scopes, k)

    def search_spanish_vectors(
        self, vector: npt.NDArray[np.float32], scopes: Sequence[str], k: int
    ) -> list[VectorHit]:
        return self.retriever.search_spanish_vectors(vector, scopes, k)

    def close(self) -> None:
        self.index.close()


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
        open_store=needs.open_store,
    )
