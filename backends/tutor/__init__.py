"""The clinical tutor (SPEC CT5–CT7, CT9): hybrid retrieval over a local knowledge base, audited.

``kb`` (the shipped corpus, the importer, chunking and the SQLite store of chunks), ``terms``
(the entities), ``keyword`` (SQLite FTS5, bm25), ``fusion`` (reciprocal rank fusion),
``indexing`` (the knowledge base and its derived stores kept in step), ``retrieval`` (the
question understood and searched), ``coverage`` and ``answer`` (what is shown as fact, cited),
``service`` (the façade) and ``cli``; its chunk vectors and its graph are roles of the storage
layer (:mod:`backends.stores.vectors`, :mod:`backends.stores.graph`). See docs/TUTOR.md.

The public surface — what the desktop uses: :class:`TutorService` (built by
:func:`backends.tutor.service.build` from the composition layer's needs) and the value types it
returns.
"""

from backends.tutor.answer import reason_text
from backends.tutor.data import DATA
from backends.tutor.kb import ImportReport
from backends.tutor.service import (
    EXTRACTIVE,
    GENERATED,
    NOT_COVERED,
    GraphView,
    Status,
    Turn,
    TutorService,
)

__all__ = [
    "DATA",
    "EXTRACTIVE",
    "GENERATED",
    "NOT_COVERED",
    "GraphView",
    "ImportReport",
    "Status",
    "Turn",
    "TutorService",
    "reason_text",
]
