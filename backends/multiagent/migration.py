"""The multi-agent assistant's data on the way to the server profile (``custodia migrate``):
its steps, declared beside its data (:mod:`backends.multiagent.data`).

Sessions: the durable mirror stays SQLite (MA1 in both profiles); those written in the last
24 h are copied to the Redis L2 with the TTL they have left. Tickets and the feed: nothing to
copy (30-minute hand-offs and pub/sub messages live in the running process). Semantic memory:
its points (vector + payload, same ids) are copied to the Qdrant server when ``qdrant_url``
is set.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from backends import stores
from backends.config import Config
from backends.i18n import N_, _
from backends.migrate_steps import (
    COPY,
    NOTHING,
    STAYS,
    Migratable,
    MigrationRun,
    Step,
    StepProgress,
    http_probe,
    probe,
)
from backends.multiagent import MultiAgentService
from backends.multiagent.service import SESSIONS_FILE
from backends.progress import Progress

if TYPE_CHECKING:
    from backends.stores.sessions import SessionMirror
    from backends.stores.ttl import TTLStore
    from backends.stores.vectors import SemanticMemory


def _sessions_file(config: Config) -> Path:
    return config.path(SESSIONS_FILE)


def _mirror(run: MigrationRun, config: Config) -> SessionMirror | None:
    """The session mirror, read-only; None when it was never created."""
    path = _sessions_file(config)
    if not path.exists():
        return None
    mirror: SessionMirror = run.open_store("sessions", config, path=path, read_only=True)
    return mirror


def _plan_sessions(run: MigrationRun, declared: Migratable) -> Step:
    cfg = run.config
    source = f"SQLite {_sessions_file(cfg)}"
    if not run.moves(declared):
        return Step(
            declared.step, STAYS, source, source, detail=_("no Redis configured (redis_url)")
        )
    mirror = _mirror(run, cfg)
    recent = 0
    if mirror is not None:
        try:
            recent = len(mirror.recent())
        finally:
            mirror.close()
    step = Step(
        declared.step,
        COPY,
        source,
        f"Redis L2 {run.fingerprint[declared.server]}",
        items=recent,
        detail=_(
            "sessions of the last 24 h (with the TTL they have left); the durable mirror "
            "stays SQLite"
        ),
    )
    if run.dry_run:
        step.problem = probe(lambda: _l2(run).ping())
    return step


def _l2(run: MigrationRun) -> TTLStore:
    store: TTLStore = run.open_store("ttl", run.target)
    run.cleanup.append(store.close)
    return store


def _run_sessions(run: MigrationRun, step: Step) -> None:
    mirror = _mirror(run, run.config)
    if mirror is None:
        return
    try:
        sub = StepProgress(run.progress, step.name)
        step.done = mirror.copy_to(_l2(run), sub.progress)
    finally:
        mirror.close()


def _plan_tickets(run: MigrationRun, declared: Migratable) -> Step:
    where = "Redis" if run.moves(declared) else _("in-process")
    return Step(
        declared.step,
        NOTHING,
        _("in-process TTL store -> {where}").format(where=where),
        where,
        detail=_("30-minute hand-offs in the running process; new ones go to the new store"),
    )


def _plan_feed(run: MigrationRun, declared: Migratable) -> Step:
    where = "Redis pub/sub" if run.moves(declared) else _("in-process bus")
    return Step(
        declared.step,
        NOTHING,
        _("in-process bus -> {where}").format(where=where),
        where,
        detail=_("events are not stored by the bus; each session keeps its own"),
    )


def _local_memory(run: MigrationRun) -> tuple[SemanticMemory, bool]:
    """The local semantic memory, and whether it was opened here (else it is the process's
    own: only one process may hold it)."""
    role = SEMANTIC.role
    if stores.kind_for(role, run.config) == stores.kind_for(role, run.source):
        return run.process.get("multiagent", MultiAgentService).memory(), False
    memory: SemanticMemory = run.open_store("semantic", run.source, embedder=run.process.embedder)
    return memory, True


def _plan_semantic(run: MigrationRun, declared: Migratable) -> Step:
    cfg = run.config
    source = f"qdrant-edge {cfg.qdrant_edge_path}"
    url = run.fingerprint[declared.server]
    if not url or not (cfg.qdrant_edge_path.exists() or cfg.qdrant_path.exists()):
        reason = (
            _(
                "no Qdrant server configured (qdrant_url); no Qdrant server ships for these "
                "machines, so this path is untested here"
            )
            if not url
            else _("nothing stored locally")
        )
        return Step(declared.step, STAYS, source, source, detail=reason)
    step = Step(declared.step, COPY, source, _("Qdrant server {url}").format(url=url))
    if run.dry_run:
        step.problem = probe(lambda: http_probe(run.target, url, "/"))
    memory, owned = _local_memory(run)
    try:
        step.items = sum(s.points for s in memory.status())
        problems = [s.problem for s in memory.status() if s.problem]
        if problems:
            step.problem = problems[0]
    finally:
        if owned:
            memory.close()
    return step


def copy_semantic_memory(
    source: SemanticMemory, target: SemanticMemory, progress: Progress | None = None
) -> int:
    """Copy every point (same id, vector and payload) of ``source`` into ``target``: the
    role's own :meth:`~backends.stores.vectors.SemanticCopy.copy_to` (upserts: idempotent)."""
    return source.copy_to(target, progress)


def _run_semantic(run: MigrationRun, step: Step) -> None:
    memory, owned = _local_memory(run)
    try:
        server: SemanticMemory = run.open_store(
            "semantic", run.target, embedder=run.process.embedder
        )
        try:
            sub = StepProgress(run.progress, step.name)
            step.done = copy_semantic_memory(memory, server, sub.progress)
        finally:
            server.close()
    finally:
        if owned:
            memory.close()


SESSIONS = Migratable(N_("sessions"), "ttl", "redis", _plan_sessions, _run_sessions)
SEMANTIC = Migratable(N_("semantic memory"), "semantic", "qdrant", _plan_semantic, _run_semantic)

#: the multi-agent assistant's steps, in the plan's order
STEPS: tuple[Migratable, ...] = (
    SESSIONS,
    Migratable(N_("tickets"), "ttl", "redis", _plan_tickets),
    Migratable(N_("feed"), "bus", "redis", _plan_feed),
    SEMANTIC,
)
