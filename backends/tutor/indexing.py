"""The tutor's index: the knowledge base and the stores derived from it, kept in step.

The knowledge base (SQLite) is the source of truth; the chunk vectors (role ``chunks``, and a
second collection for Spanish questions), the keyword index and the graph are derived from
it. This module opens them on first use, imports the shipped corpus (:meth:`Index.prepare`,
idempotently, with progress) and a user's own notes, forgets a user's notes, and brings the
derived stores up to date — one process at a time (a lock file in the data dir).

A vector store or graph that cannot be reached does not stop anything: its failure is kept
(:meth:`Index.status` says it) and retrieval asks again, at most every
:data:`RETRY_SECONDS` (:meth:`Index.vectors_problem` and its siblings). It sits below
retrieval and the answer (both read through it) and calls neither.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from backends import failures, stores
from backends.assistants import StoreOpener
from backends.config import Config
from backends.errors import (
    CancelledError,
    CustodiaEnvironmentError,
    DimensionMismatchError,
    ModelUnavailableError,
    StoreUnavailableError,
)
from backends.grounding import Vocabulary
from backends.i18n import _
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.stores.graph import DEFAULT_NAMESPACE, Graph, GraphUnavailableError, Relation
from backends.stores.vectors import VectorIndex
from backends.tutor import shipped_vectors
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
    shipped_documents,
    user_scope,
)
from backends.tutor.keyword import KeywordIndex

log = logging.getLogger(__name__)
T = TypeVar("T")
#: a part given as itself or as a callable that makes it on first use
Provider = Callable[[], T]

GRAPH_FILE = "tutor-graph.sqlite3"
#: held (``flock``) by the process writing the knowledge base or its derived stores
LOCK_FILE = "tutor.lock"
#: how long to wait for another process's indexing before giving up
LOCK_WAIT_SECONDS = 600.0
#: a vector store or graph that just failed is not tried again before this many seconds
#: (``ask tutor`` prepares, then retrieves: one attempt, one message, per command)
RETRY_SECONDS = 2.0
#: chunks per embedding call: MiniLM pads a batch to its longest text, so small batches of
#: ~100-token chunks are faster (measured: 16 -> 59 ms/chunk, 64 -> 98 ms/chunk on 2 cores)
EMBED_BATCH = 16
#: the second vector's collection: the chunks embedded by the multilingual embedder, searched
#: for Spanish questions only (the notes are English; MiniLM is an English model; USE alone
#: answered English worse, so English questions stay on MiniLM: docs/TUTOR.md)
SPANISH_COLLECTION = "tutor_chunks_multilingual"


class IndexingElsewhereError(StoreUnavailableError):
    """Another process holds the indexing lock and this caller would not wait."""


def provide(value: T | Provider[T]) -> Provider[T]:
    """A provider for ``value``: itself when it is one (a callable), else a constant."""
    if callable(value):
        return value
    return lambda: value


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    """What :meth:`Index.forget_user` removed, and what it could not reach yet."""

    user: str
    scope: str
    documents: int
    chunks: int
    #: a sentence per derived store that could not be reached (cleaned at its next sync)
    pending: tuple[str, ...] = field(default=())


def make_graph(
    config: Config, namespace: str = DEFAULT_NAMESPACE, open_store: StoreOpener = stores.open
) -> Graph:
    """The graph the configuration names: embedded SQLite, or a Bolt server (Neo4j)."""
    graph: Graph = open_store("graph", config, path=config.path(GRAPH_FILE), namespace=namespace)
    return graph


def spanish_embedder_for(config: Config) -> Embedder | None:
    """The second vector's embedder ``tutor_spanish_embedder`` names: ``auto`` is the
    multilingual USE beside MiniLM (measured: docs/TUTOR.md) and none beside another embedder
    (the tests' hashing one); none either when it is the main embedder itself."""
    from backends.models.registry import create_embedder  # noqa: PLC0415 — lazy: the model registry, only when a second embedder is built

    choice = config.tutor_spanish_embedder
    if choice == "auto":
        choice = "use-multilingual" if config.embedder == "minilm" else "none"
    if choice in ("none", "", config.embedder):
        return None
    return create_embedder(replace(config, embedder=choice))


class Index:
    """The knowledge base and its derived stores for one data dir (see the module doc)."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Embedder | Provider[Embedder],
        kb_dir: Path,
        graph: Graph | Provider[Graph] | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        open_store: StoreOpener = stores.open,
        spanish_embedder: Embedder | Provider[Embedder | None] | None = None,
    ) -> None:
        self.config = config
        self.kb_dir = kb_dir
        self._open_store = open_store
        self._embedder = provide(embedder)
        #: the second vector (Spanish questions only); None: no second vector
        self._spanish_provider: Provider[Embedder | None] = (
            (lambda: None) if spanish_embedder is None else provide(spanish_embedder)
        )
        self._spanish: Embedder | None = None
        self._spanish_known = False
        self._spanish_vectors: VectorIndex | None = None
        self._spanish_synced = False
        self._spanish_message = ""
        self._graph_provider: Provider[Graph] = (
            (lambda: make_graph(config, namespace, open_store)) if graph is None else provide(graph)
        )
        self._lock = threading.RLock()
        self._kb: KnowledgeBase | None = None
        self._keyword: KeywordIndex | None = None
        self._vectors: VectorIndex | None = None
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

    # -- parts, built on first use ----------------------------------------------------------
    def _ensure_home(self) -> None:
        try:
            self.config.home.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            said = _("{path}: cannot create the data folder").format(path=self.config.home)
            raise StoreUnavailableError(failures.failed(said, err)) from err

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
                self._vectors = self._open_vectors(
                    "", embedder_name=embedder.name, dimension=embedder.dimension
                )
            return self._vectors

    @property
    def vectors_open(self) -> bool:
        """Whether :attr:`vectors` was opened (a search's trace says its filter only then)."""
        return self._vectors is not None

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
                self._spanish_vectors = self._open_vectors(
                    "multilingual ",
                    embedder_name=embedder.name,
                    dimension=embedder.dimension,
                    collection=SPANISH_COLLECTION,
                )
            return self._spanish_vectors

    def _open_vectors(self, which: str, **context: Any) -> VectorIndex:
        try:
            vectors: VectorIndex = self._open_store("chunks", self.config, **context)
        except DimensionMismatchError as err:  # another dimension or embedder
            log.info("tutor: %s; rebuilding the %svector index", err, which)
            vectors = self._open_store("chunks", self.config, fresh=True, **context)
        return vectors

    @property
    def ready(self) -> bool:
        return self._ready

    def vocabulary(self, scopes: Sequence[str]) -> Vocabulary:
        """Word statistics of the notes in ``scopes`` (one scope's words never weigh another
        user's questions), recounted when a scope's notes changed."""
        counts = self.kb.stats().by_scope
        merged = Vocabulary()
        for scope in scopes:
            key = counts.get(scope, (0, 0))
            cached = self._vocabularies.get(scope)
            if cached is None or cached[0] != key:
                texts = [f"{c.title}\n{c.text}" for c in self.kb.all_chunks(scope)]
                cached = (key, Vocabulary.of(texts))
                self._vocabularies[scope] = cached
            merged.update(cached[1])
        return merged

    # -- one writer at a time ----------------------------------------------------------------
    @contextlib.contextmanager
    def indexing(self, progress: Progress | None = None, wait: bool = True) -> Iterator[None]:
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
                said = _("{path}: cannot open the tutor's lock file").format(path=path)
                raise StoreUnavailableError(failures.failed(said, err)) from err
            try:
                self._take_lock(fd, path, progress, wait)
                self._lock_fd = fd
                try:
                    yield
                finally:
                    self._lock_fd = None
            finally:
                os.close(fd)  # releases the lock

    @staticmethod
    def _take_lock(fd: int, path: Path, progress: Progress, wait: bool) -> None:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if not wait:  # a question does not queue behind an indexing run
                    raise IndexingElsewhereError(
                        _("another Custodia process is indexing the knowledge base")
                    ) from None
                if not told:
                    log.info("tutor: waiting for another process to finish indexing")
                    progress.start(0, _("waiting for another Custodia process (indexing)"))
                    told = True
                if time.monotonic() > deadline:
                    raise StoreUnavailableError(
                        _(
                            "{path}: another Custodia process has been indexing the tutor's "
                            "knowledge base for {seconds} s; try again when it is done"
                        ).format(path=path, seconds=f"{LOCK_WAIT_SECONDS:.0f}")
                    ) from None
                progress.check()
                time.sleep(0.05)

    # -- prepare, import, forget -------------------------------------------------------------
    def prepare(self, progress: Progress | None = None) -> Status:
        """Import the shipped corpus (idempotent), bring vectors and graph up to date.

        A vector store or graph that cannot be reached does not stop it: the status says so
        and retrieval runs degraded (each later turn tries them again).
        """
        progress = progress or Progress()
        started = time.perf_counter()
        with self._lock, self.indexing(progress):
            report = self.kb.import_documents(
                shipped_documents(self.kb_dir), progress, scope=SHARED, prune_source="shipped"
            )
            self._try_sync_vectors(progress)
            self._try_sync_spanish(progress)
            self._try_sync_graph(progress)
            self._ready = True
            status = self.status()
        return replace(status, imported=report, seconds=time.perf_counter() - started)

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
        with self._lock, self.indexing(progress):
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
        with self._lock, self.indexing(progress):
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

    # -- bringing the derived stores up to date ---------------------------------------------
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
            self.spanish_failed(str(err))
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

    # -- what a search may use now -----------------------------------------------------------
    def vectors_problem(self) -> str:
        """Why vector search cannot run now ("" when it can): a store that missed an import
        or was down is brought up to date first — unless it failed moments ago, or another
        process is indexing (a question does not wait for it)."""
        if self._vectors_synced:
            return ""
        if time.monotonic() < self._retry_at["vector"]:
            return self._vector_message
        try:
            with self.indexing(wait=False):
                if not self._try_sync_vectors(Progress()):
                    return self._vector_message
        except IndexingElsewhereError as err:
            return str(err)
        return ""

    def vectors_failed(self, message: str) -> None:
        """A vector search failed: the next one brings the store up to date first."""
        self._vectors_synced = False
        self._vector_message = message

    def spanish_problem(self) -> str:
        """:meth:`vectors_problem` for the second vector (raises the environment error of an
        embedder or store that cannot be opened: see :meth:`spanish_failed`)."""
        if self._spanish_synced:
            return ""
        if time.monotonic() < self._retry_at["multilingual"]:
            return self._spanish_message
        try:
            with self.indexing(wait=False):
                if not self._try_sync_spanish(Progress()):
                    return self._spanish_message
        except IndexingElsewhereError as err:
            return str(err)
        return ""

    def spanish_failed(self, message: str) -> None:
        """The second vector failed: not tried again for :data:`RETRY_SECONDS`."""
        self._spanish_synced = False
        self._spanish_message = message
        self._retry_at["multilingual"] = time.monotonic() + RETRY_SECONDS

    def graph_problem(self) -> str:
        """:meth:`vectors_problem` for the graph."""
        if self._graph_synced:
            return ""
        if time.monotonic() < self._retry_at["graph"]:
            return self._graph_message
        try:
            with self.indexing(wait=False):
                if not self._try_sync_graph(Progress()):
                    return self._graph_message
        except IndexingElsewhereError as err:
            return str(err)
        return ""

    def graph_failed(self, message: str) -> None:
        """The graph failed (or could not be brought up to date): the next search tries again."""
        self._graph_synced = False
        self._graph_message = message

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

    def close(self) -> None:
        with self._lock:
            for part in (self._vectors, self._spanish_vectors, self._graph, self._kb):
                if part is None:
                    continue
                try:
                    part.close()
                except Exception:
                    log.exception(_("tutor: error while closing %s"), type(part).__name__)
            self._vectors = self._spanish_vectors = self._graph = self._kb = None
            self._ready = False
