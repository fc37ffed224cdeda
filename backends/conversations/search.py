"""Searching past messages: the vector index of them (opened on first use, kept in step with
the files, rebuilt when it is damaged or the embedder changed) and the search over it.

Apart from the agent (:mod:`.service`) because the vectors are derived data with a life of
their own (their store, their lock, their repair); the messages' text always comes from the
files (:mod:`.library`), decrypted here, never from the vector store.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from backends import stores
from backends.assistants import StoreOpener
from backends.config import Config
from backends.conversations.errors import ConversationError, ConversationNotFoundError
from backends.conversations.files import SUFFIX, Conversation
from backends.conversations.library import ConversationLibrary
from backends.conversations.naming import clean_text
from backends.conversations.vectors import (
    SyncReport,
    embeddable,
    pointer_id,
    split_pointer_id,
    sync,
)
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import _
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.stores.vectors import VectorIndex

log = logging.getLogger(__name__)

#: ``(config, embedder, fresh)``: with ``fresh`` the collection is dropped and made anew
VectorFactory = Callable[[Config, Embedder, bool], VectorIndex]
#: hits asked for beyond ``k`` when one conversation is left out (its own messages, up to
#: the turn's thread, would otherwise take the places of the others')
EXCLUDED_MARGIN = 20


def default_vectors(
    config: Config,
    embedder: Embedder,
    fresh: bool = False,
    *,
    open_store: StoreOpener = stores.open,
) -> VectorIndex:
    """Local persistent Chroma under the data dir, or the server at ``config.chroma_url``.

    Only our collection is touched (``fresh`` drops it): the folder or server may hold other
    assistants' collections.
    """
    index: VectorIndex = open_store(
        "vectors",
        config,
        embedder_name=embedder.name,
        dimension=embedder.dimension,
        fresh=fresh,
    )
    return index


@dataclass(frozen=True)
class SearchHit:
    conversation_id: str
    name: str
    date: str
    index: int
    role: str
    text: str
    score: float


class MessageSearch:
    """The vector index of the library's messages, and the search over it; thread-safe."""

    def __init__(
        self,
        config: Config,
        library: ConversationLibrary,
        embedder: Callable[[], Embedder],
        vectors: VectorFactory,
    ) -> None:
        self.config = config
        self.library = library
        self._embedder_factory = embedder
        self._vector_factory = vectors
        self._lock = threading.RLock()
        self._vectors: VectorIndex | None = None

    def embedder(self) -> Embedder:
        return self._embedder_factory()

    def vectors(self) -> VectorIndex:
        """The vector index, opened on first use (a dimension or model mismatch raises)."""
        with self._lock:
            if self._vectors is None:
                self._vectors = self._vector_factory(self.config, self.embedder(), False)
            return self._vectors

    def close(self) -> None:
        with self._lock:
            if self._vectors is not None:
                self._vectors.close()
                self._vectors = None

    # -- kept in step with the files -------------------------------------------------------
    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Index missing messages, drop vectors of gone files/messages (start-up worker).

        A local index Chroma itself can no longer read (its HNSW files torn by a crash) is
        derived data: it is rebuilt from the files instead of failing at every start.
        """
        library = self.library
        with self._lock:
            try:
                return sync(library.files, library.index, self.vectors(), self.embedder(), progress)
            except StoreUnavailableError as err:
                if self.config.chroma_url or "hnsw" not in str(err).lower():
                    raise
                log.warning(_("the local search index is damaged (%s); rebuilding it"), err)
            return self.rebuild(progress)

    def rebuild(self, progress: Progress | None = None) -> SyncReport:
        """Delete the vector index and rebuild it from the files (also after a model change)."""
        with self._lock:
            self.close()
            embedder = self.embedder()
            vectors = self._vector_factory(self.config, embedder, True)
            self._vectors = vectors
            self.library.reconcile()
            return sync(self.library.files, self.library.index, vectors, embedder, progress)

    def index_messages(self, conversation: Conversation, positions: list[int]) -> None:
        """Embed and upsert a few new messages; a failure is logged (the next sync repairs)."""
        try:
            with self._lock:
                vectors = self.vectors()
                texts = [embeddable(conversation.history[i].content) for i in positions]
                matrix = self.embedder().embed_batch(texts)
                vectors.upsert(
                    [pointer_id(conversation.file, i) for i in positions],
                    matrix,
                    [{"file": conversation.file, "index": i} for i in positions],
                )
        except CustodiaEnvironmentError as err:
            log.warning(_("new messages not indexed now (the next start catches up): %s"), err)

    def drop(self, file: str, messages: int) -> None:
        """Drop the vectors of a deleted conversation's ``messages`` (if the index is open)."""
        with self._lock:
            if self._vectors is None:
                return  # not open: the next sync drops them
            try:
                self._vectors.delete([pointer_id(file, i) for i in range(messages)])
            except CustodiaEnvironmentError as err:
                log.warning(_("vectors of %s not dropped now: %s"), file, err)

    # -- the search ------------------------------------------------------------------------
    def search(
        self, query: str, k: int = 10, exclude: str | None = None, min_score: float = 0.05
    ) -> list[SearchHit]:
        """Past messages most similar to ``query``: pointers from the index, text from the
        files (decrypted here). Unreadable or vanished targets are skipped."""
        query = clean_text(query).strip()
        if not query or k <= 0:
            return []
        embedder = self.embedder()
        vectors = self.vectors()
        vector = embedder.embed(embeddable(query))
        exclude_file = f"{exclude}{SUFFIX}" if exclude else None
        want = k + (EXCLUDED_MARGIN if exclude_file else 0)
        out: list[SearchHit] = []
        for hit in vectors.query(vector, want):
            parsed = split_pointer_id(hit.id)
            if parsed is None or parsed[0] == exclude_file or hit.score < min_score:
                continue
            found = self._message(*parsed, hit.score)
            if found is not None:
                out.append(found)
            if len(out) >= k:
                break
        return out

    def _message(self, file: str, position: int, score: float) -> SearchHit | None:
        """The message a vector points at, from its file; None when it cannot be read now
        or is gone."""
        try:
            conversation = self.library.read(file)
        except ConversationNotFoundError:
            return None
        except ConversationError:
            # e.g. chmod 000 since the index saw it (a mode change leaves its stamp as
            # it was): the index learns why, so the search names it as not searched
            self.library.note_unreadable(file)
            return None
        if position >= len(conversation.history):
            return None
        msg = conversation.history[position]
        return SearchHit(
            conversation.id,
            conversation.display_name,
            conversation.date,
            position,
            msg.role,
            msg.content,
            score,
        )
