"""The clinical tutor's data on the way to the server profile (``custodia migrate``): its
steps, declared beside its data (:mod:`backends.tutor.data`).

The knowledge base's chunks stay SQLite (with their FTS5 keyword index); their vectors are
re-embedded into the Chroma server when ``chroma_url`` is set; the graph is rebuilt on the
Bolt server from the chunks (per scope, by digest). Both rebuilds are the tutor's own
:meth:`~backends.tutor.service.TutorService.prepare`, run once on the target stores.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from backends.audit import AuditService
from backends.config import Config
from backends.i18n import N_, _
from backends.migrate_steps import (
    NOTHING,
    REBUILD,
    STAYS,
    Migratable,
    MigrationError,
    MigrationRun,
    Step,
    StepProgress,
    count,
    http_probe,
    probe,
)
from backends.stores.graph import DEFAULT_NAMESPACE, Graph
from backends.tutor import Status, TutorService
from backends.tutor.indexing import GRAPH_FILE
from backends.tutor.kb import DB_FILE


class ProbedGraph(Graph, Protocol):
    """A graph that says which server answers (every allow-listed adapter)."""

    def probe(self) -> str: ...


@dataclass
class _Target:
    """The tutor on the target stores (same knowledge base file), made once per run."""

    tutor: TutorService
    #: the target's graph, when the graph moves
    graph: ProbedGraph | None
    prepared: bool = False


def _kb_file(config: Config) -> Path:
    return config.path(DB_FILE)


def _graph_file(config: Config) -> Path:
    return config.path(GRAPH_FILE)


def _chunks(config: Config) -> int:
    """Chunks in the knowledge base, read-only."""
    return count(_kb_file(config), "SELECT count(*) FROM chunks")


def _relations(config: Config) -> int:
    """Relations of the application's namespace in the embedded graph, read-only."""
    return count(
        _graph_file(config), "SELECT count(*) FROM relations WHERE ns = ?", (DEFAULT_NAMESPACE,)
    )


def _no_audit() -> AuditService:
    raise MigrationError("the migration never writes tutor turns")


def _open_target(run: MigrationRun) -> _Target:
    target = run.target
    graph: ProbedGraph | None = None
    if run.moves(GRAPH):
        opened = run.open_store(
            "graph",
            target,
            path=_graph_file(target),
            namespace=run.options.graph_namespace,
            driver=run.options.bolt_driver,
        )
        graph = cast(ProbedGraph, opened)  # every server adapter says which server answers
    process = run.process
    tutor = TutorService(
        target,
        embedder=lambda: process.embedder,
        chat=lambda: process.chat_choice_for("tutor").model,
        audit=_no_audit,
        graph=graph,
        namespace=run.options.graph_namespace,
    )
    run.cleanup.append(tutor.close)
    return _Target(tutor, graph)


def _target(run: MigrationRun) -> _Target:
    return run.once("tutor", lambda: _open_target(run))


def _target_graph(run: MigrationRun) -> ProbedGraph:
    graph = _target(run).graph
    if graph is None:
        raise MigrationError("the graph stays where it is")
    return graph


def _prepare(run: MigrationRun, step: Step) -> Status:
    target = _target(run)
    if not target.prepared:
        sub = StepProgress(run.progress, step.name)
        target.tutor.prepare(sub.progress)
        target.prepared = True
    return target.tutor.status()


def _run_vectors(run: MigrationRun, step: Step) -> None:
    status = _prepare(run, step)
    if status.vectors != status.chunks:
        raise MigrationError(
            _("the Chroma server holds {vectors} of the {chunks} chunk vectors").format(
                vectors=status.vectors, chunks=status.chunks
            )
        )
    step.done = status.vectors
    step.detail = _("{vectors} vectors for {chunks} chunks on the server").format(
        vectors=status.vectors, chunks=status.chunks
    )


def _run_graph(run: MigrationRun, step: Step) -> None:
    status = _prepare(run, step)
    if not status.graph_ok:
        raise MigrationError(
            _("the graph could not be rebuilt: {reason}").format(reason=status.graph_message)
        )
    step.done = status.graph_relations
    step.detail = _(
        "{relations} relations, {entities} entities on the Bolt server (rebuilt per scope; "
        "a scope whose digest matches is skipped on a rerun)"
    ).format(relations=status.graph_relations, entities=status.entities)


def _plan_knowledge_base(run: MigrationRun, declared: Migratable) -> Step:
    kb = f"SQLite {_kb_file(run.config)}"
    return Step(
        declared.step,
        STAYS,
        kb,
        kb,
        detail=_("chunks and the FTS5 keyword index are SQLite in every profile"),
    )


def _plan_vectors(run: MigrationRun, declared: Migratable) -> Step:
    cfg = run.config
    kb = f"SQLite {_kb_file(cfg)}"
    url = run.fingerprint[declared.server]
    if not url:
        local_chroma = f"Chroma local {cfg.chroma_path}"
        return Step(
            declared.step,
            STAYS,
            local_chroma,
            local_chroma,
            detail=_("no Chroma server configured (chroma_url)"),
        )
    chunks = _chunks(cfg)
    step = Step(
        declared.step,
        REBUILD if chunks else NOTHING,
        kb,
        _("Chroma server {url}").format(url=url),
        items=chunks,
        detail=_("re-embedded from the chunks into the server's tutor_chunks collection"),
    )
    if run.dry_run and chunks:
        step.problem = probe(lambda: http_probe(run.target, url, "/api/v2/heartbeat"))
    return step


def _plan_graph(run: MigrationRun, declared: Migratable) -> Step:
    cfg = run.config
    if not run.moves(declared):
        graph_file = f"SQLite {_graph_file(cfg)}"
        return Step(
            declared.step,
            STAYS,
            graph_file,
            graph_file,
            detail=_("no Bolt server configured (neo4j_uri)"),
        )
    chunks = _chunks(cfg)
    step = Step(
        declared.step,
        REBUILD if chunks else NOTHING,
        f"SQLite {_kb_file(cfg)}",
        f"Bolt {run.fingerprint[declared.server]}",
        items=_relations(cfg),
        detail=_("rebuilt from the knowledge base's co-occurring terms, in batches of ≤ 50"),
    )
    if run.dry_run and chunks:
        step.problem = probe(lambda: _target_graph(run).probe())
    return step


GRAPH = Migratable(N_("graph"), "graph", "neo4j", _plan_graph, _run_graph)

#: the clinical tutor's steps, in the plan's order
STEPS: tuple[Migratable, ...] = (
    Migratable(N_("knowledge base"), "", "", _plan_knowledge_base),
    Migratable(N_("knowledge base vectors"), "chunks", "chroma", _plan_vectors, _run_vectors),
    GRAPH,
)
