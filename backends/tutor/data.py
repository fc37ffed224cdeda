"""The clinical tutor's data, declared once (the storage map's rows): the knowledge base (its
source of truth), the chunks' vectors and the graph derived from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from backends import stores
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _, number
from backends.stores.description import (
    HISTORY,
    NEEDS_SERVICES,
    NOT_CREATED_YET,
    OK,
    RECOMPUTABLE,
    Datum,
    Measurement,
    Place,
    Running,
    scalar,
    sqlite_count,
)
from backends.tutor.indexing import GRAPH_FILE
from backends.tutor.kb import DB_FILE
from backends.tutor.service import TutorService

if TYPE_CHECKING:
    from collections.abc import Callable

    from backends.config import Config
    from backends.stores.graph import Graph
    from backends.stores.vectors import VectorIndex

ASSISTANT = N_("clinical tutor")


def _kb_place(config: Config) -> Place:
    return Place(N_("SQLite (chunks + FTS5)"), str(config.path(DB_FILE)))


def _kb(config: Config, process: Running | None) -> Measurement:
    path = config.path(DB_FILE)
    measured = sqlite_count(path, "SELECT count(*) FROM chunks")
    if measured.health != OK:
        return measured
    documents = scalar(path, "SELECT count(*) FROM documents")
    mine = scalar(path, "SELECT count(*) FROM documents WHERE scope LIKE 'user:%'")
    note = _("{documents} documents, {mine} imported by users").format(
        documents=number(int(documents or 0)), mine=number(int(mine or 0))
    )
    return replace(measured, note=note)


def _vectors(config: Config, process: Running | None) -> Measurement:
    if not stores.created("chunks", config):
        return NOT_CREATED_YET
    if process is None:
        raise CustodiaEnvironmentError(NEEDS_SERVICES)
    embedder = process.embedder
    vectors: VectorIndex = process.open_store(
        "chunks", embedder_name=embedder.name, dimension=embedder.dimension
    )
    try:
        measured = stores.measure("chunks", config, running=lambda: vectors)
    finally:
        vectors.close()
    if measured.size_bytes is None:  # a server's own disk
        return measured
    return replace(
        measured, size_bytes=None, note=N_("size: counted with the conversation vectors")
    )


def _graph_file(config: Config) -> Mapping[str, object]:
    return {"path": config.path(GRAPH_FILE)}


def _graph(config: Config, process: Running | None) -> Measurement:
    running: Callable[[], Graph] | None = None
    if process is not None:  # the tutor's own driver, for a server
        service = process
        running = lambda: service.get("tutor", TutorService).graph  # noqa: E731
    return stores.measure("graph", config, running=running, **_graph_file(config))


DATA = (
    Datum(
        N_("knowledge base"),
        ASSISTANT,
        HISTORY,
        N_("chunks"),
        N_("the shipped notes are imported again; documents you imported are lost"),
        _kb,
        place=_kb_place,
    ),
    Datum(
        N_("knowledge base vectors"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("vectors"),
        N_("rebuilt from the knowledge base chunks (automatically, at the tutor's next start)"),
        _vectors,
        role="chunks",
    ),
    Datum(
        N_("graph"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("relations"),
        N_("rebuilt from the knowledge base (terms that co-occur in a chunk)"),
        _graph,
        role="graph",
        context=_graph_file,
    ),
)
