"""The derived vector index of past messages (CA4–CA6): Chroma, local or on a server.

Chroma holds, per message, its vector and a *pointer* — id ``"<file>:<index>"`` and metadata
``{"file": "<file>", "index": <index>}`` — never the text: no ``documents``, no text in
metadata, so it is no side channel next to the encrypted history (CA6). A search embeds the
query, finds pointers and loads (and decrypts) the messages from the files locally.

The collection records the embedder's name and dimension in its metadata; opening it with
another embedder is a :class:`~backends.errors.DimensionMismatchError` (other dimension) or an
:class:`~backends.errors.EmbedderMismatchError` (same dimension, other model), never a
silently wrong result — rebuild the index to switch (:meth:`VectorIndex.reset`). The index
itself is the vector role of the storage layer (:mod:`backends.stores.vectors`).

:func:`sync` is what the start-up worker runs: it indexes only the messages whose id is
missing and drops ids whose file or message is gone; re-running it never duplicates
anything (ids are deterministic, CA5). Everything here can be deleted and rebuilt from the
files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Container
from dataclasses import dataclass

from backends.conversations.errors import ConversationError
from backends.conversations.files import Conversation, ConversationFiles
from backends.conversations.index import ConversationIndex, row_for
from backends.i18n import _, number
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.stores.vectors import Pointer, VectorIndex

log = logging.getLogger(__name__)

#: the most characters of one message that are embedded: every embedder truncates far below
#: this (MiniLM at 256 tokens), so a longer message costs no more than this to index
EMBED_CHARS = 16_000


def embeddable(text: str) -> str:
    """What of a message is embedded: its first :data:`EMBED_CHARS` characters (never "")."""
    return text[:EMBED_CHARS] or " "


COLLECTION = "custodia_conversations"
# -- pointers and synchronisation -------------------------------------------------------------


def pointer_id(file: str, index: int) -> str:
    return f"{file}:{index}"


def split_pointer_id(value: str) -> tuple[str, int] | None:
    file, sep, index = value.rpartition(":")
    if not sep or not index.isdigit():
        return None
    return file, int(index)


@dataclass
class SyncReport:
    expected: int = 0
    present: int = 0
    added: int = 0
    dropped: int = 0
    #: vectors of files that exist but cannot be read now (e.g. no key), or that another
    #: process wrote after the index was read: kept, not re-made
    kept: int = 0
    #: files that could not be read while indexing (skipped)
    skipped_files: int = 0
    seconds: float = 0.0


def sync(
    files: ConversationFiles,
    index: ConversationIndex,
    vectors: VectorIndex,
    embedder: Embedder,
    progress: Progress | None = None,
    batch: int = 256,
) -> SyncReport:
    """Make the vectors agree with the (already reconciled) index: add missing, drop gone.

    The expected ids come from the index (``file:i`` for each of its ``messages``); the
    present ones from the vector store itself, so a deleted or stale store is repaired.
    """
    started = time.perf_counter()
    progress = progress or Progress()
    report = SyncReport()
    counts = index.message_counts()
    unreadable = index.unreadable()
    expected = {pointer_id(f, i) for f, n in counts.items() for i in range(n)}
    present = vectors.ids()
    report.expected, report.present = len(expected), len(present)
    missing: dict[str, list[int]] = {}
    for value in expected - present:
        parsed = split_pointer_id(value)
        if parsed is not None:
            missing.setdefault(parsed[0], []).append(parsed[1])
    extra = _extra(present - expected, unreadable, files, index, report)
    adder = _Adder(vectors, embedder, progress, report, sum(len(v) for v in missing.values()))
    progress.start(adder.total, _("indexing past messages"))
    if extra:
        vectors.delete(sorted(extra))
        report.dropped = len(extra)
    for file, positions in sorted(missing.items()):
        progress.check()
        conversation = _readable(files, index, file, report)
        if conversation is None:
            continue
        adder.add(conversation, file, positions)
        if len(adder.pending) >= batch:
            adder.flush()
    adder.flush()
    report.seconds = time.perf_counter() - started
    return report


def _extra(
    unexpected: set[str],
    unreadable: Container[str],
    files: ConversationFiles,
    index: ConversationIndex,
    report: SyncReport,
) -> list[str]:
    """The ids present but not expected that are to be dropped; the vectors of files that
    cannot be read now, or were written meanwhile, are kept (and counted)."""
    extra: list[str] = []
    stale: list[tuple[str, str, int]] = []
    for value in unexpected:
        parsed = split_pointer_id(value)
        if parsed is not None and parsed[0] in unreadable:
            report.kept += 1
        elif parsed is None:
            extra.append(value)
        else:
            stale.append((value, *parsed))
    if not stale:
        return extra
    # Another process may have written since ``expected`` was read (a CLI turn next to
    # this start-up): look again before dropping anything. An id is only dropped when
    # the index, read now, does not expect it and its file did not change since the
    # index last saw it (or is gone).
    counts_now = index.message_counts()
    on_disk = files.scan()
    seen = {file: entry[0] for file, entry in index.stamps().items()}
    for value, file, position in stale:
        if position < counts_now.get(file, 0):
            report.kept += 1  # expected after all: written meanwhile
        elif file in on_disk and seen.get(file) != on_disk[file]:
            report.kept += 1  # changed since the index saw it: the next sync decides
        else:
            extra.append(value)
    return extra


def _readable(
    files: ConversationFiles, index: ConversationIndex, file: str, report: SyncReport
) -> Conversation | None:
    """The conversation in ``file``, or None when it cannot be read now (the index learns
    why: a chmod keeps the file's stamp)."""
    try:
        conversation, _ = files.read(file)
    except ConversationError as err:
        log.info("not indexing %s: %s", file, err)
        report.skipped_files += 1
        row = row_for(files, file)
        if row is not None and row.error is not None:
            index.apply([row])
        return None
    return conversation


class _Adder:
    """Missing messages embedded and added in batches, the progress told after each."""

    def __init__(
        self,
        vectors: VectorIndex,
        embedder: Embedder,
        progress: Progress,
        report: SyncReport,
        total: int,
    ) -> None:
        self.vectors = vectors
        self.embedder = embedder
        self.progress = progress
        self.report = report
        self.total = total
        self.pending: list[tuple[str, str, Pointer]] = []

    def add(self, conversation: Conversation, file: str, positions: list[int]) -> None:
        for i in sorted(positions):
            if i < len(conversation.history):
                text = embeddable(conversation.history[i].content)
                self.pending.append((pointer_id(file, i), text, {"file": file, "index": i}))

    def flush(self) -> None:
        pending = self.pending
        if not pending:
            return
        self.progress.check()
        matrix = self.embedder.embed_many(text for _, text, _ in pending)
        self.vectors.upsert([p[0] for p in pending], matrix, [p[2] for p in pending])
        self.report.added += len(pending)
        self.progress.advance(
            len(pending),
            _("{done} of {total} messages indexed").format(
                done=number(self.report.added), total=number(self.total)
            ),
        )
        pending.clear()
