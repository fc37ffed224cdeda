"""The conversation agent's data on the way to the server profile (``custodia migrate``): its
steps, declared beside its data (:mod:`backends.conversations.data`).

The JSON files stay (CA1: the source of truth in every profile); the SQLite index is
reconciled with them (rebuilt where it differs); the vectors are re-embedded from the files
into the Chroma server when ``chroma_url`` is set (deterministic ids: a rerun never
duplicates).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from backends.config import Config
from backends.conversations import ConversationAgent
from backends.conversations.service import FOLDER, INDEX_FILE
from backends.conversations.vectors import sync
from backends.i18n import N_, _
from backends.migrate_steps import (
    NOTHING,
    REBUILD,
    STAYS,
    Migratable,
    MigrationRun,
    Step,
    StepProgress,
    count,
    http_probe,
    probe,
)

if TYPE_CHECKING:
    from backends.stores.vectors import VectorIndex


def _folder(config: Config) -> Path:
    return config.path(FOLDER)


def _index_file(config: Config) -> Path:
    return config.path(INDEX_FILE)


def _agent(run: MigrationRun) -> ConversationAgent:
    """The running process's own agent (it holds the index)."""
    return run.process.get("conversations", ConversationAgent)


def _json_files(folder: Path) -> str:
    """Where the conversations' JSON files are, as the plan shows it."""
    return _("JSON files {folder}").format(folder=folder)


def _plan_conversations(run: MigrationRun, declared: Migratable) -> Step:
    files = _json_files(_folder(run.config))
    return Step(
        declared.step,
        STAYS,
        files,
        files,
        detail=_("the files are the source of truth in every profile (CA1)"),
    )


def _plan_index(run: MigrationRun, declared: Migratable) -> Step:
    path = _index_file(run.config)
    folder = _folder(run.config)
    files = sum(1 for _file in folder.glob("*.json")) if folder.exists() else 0
    return Step(
        declared.step,
        REBUILD if files else NOTHING,
        _json_files(folder),
        f"SQLite {path}",
        items=files,
        detail=_("reconciled with the files (rows that differ are rebuilt); stays SQLite (CA3)"),
    )


def _run_index(run: MigrationRun, step: Step) -> None:
    sub = StepProgress(run.progress, step.name)
    report = _agent(run).reconcile(sub.progress)
    step.done = step.items
    step.detail = _(
        "{files} files: {unchanged} unchanged, {reread} re-read, {removed} rows removed, "
        "{unreadable} unreadable now"
    ).format(
        files=report.files,
        unchanged=report.unchanged,
        reread=report.reread,
        removed=report.removed,
        unreadable=report.unreadable,
    )


def _plan_vectors(run: MigrationRun, declared: Migratable) -> Step:
    cfg = run.config
    source = _json_files(_folder(cfg))
    url = run.fingerprint[declared.server]
    if not url:
        return Step(
            declared.step,
            STAYS,
            f"Chroma local {cfg.chroma_path}",
            f"Chroma local {cfg.chroma_path}",
            detail=_("no Chroma server configured (chroma_url)"),
        )
    # the messages the conversation index knows (read-only: the dry run writes nothing)
    messages = count(
        _index_file(cfg),
        "SELECT coalesce(sum(messages), 0) FROM conversations WHERE error IS NULL",
    )
    step = Step(
        declared.step,
        REBUILD,
        source,
        _("Chroma server {url}").format(url=url),
        items=messages,
        detail=_(
            "re-embedded from the files and upserted (ids file:index; a rerun adds only what "
            "is missing)"
        ),
    )
    if run.dry_run:
        step.problem = probe(lambda: http_probe(run.target, url, "/api/v2/heartbeat"))
    return step


def _run_vectors(run: MigrationRun, step: Step) -> None:
    agent = _agent(run)
    agent.reconcile()
    embedder = run.process.embedder
    server: VectorIndex = run.open_store(
        "vectors",
        run.target,
        embedder_name=embedder.name,
        dimension=embedder.dimension,
    )
    try:
        sub = StepProgress(run.progress, step.name)
        report = sync(agent.files, agent.index, server, embedder, sub.progress)
        step.done = report.added
        step.detail = _("{added} added, {present} already there, {dropped} dropped").format(
            added=report.added, present=report.present, dropped=report.dropped
        )
    finally:
        server.close()


VECTORS = Migratable(N_("conversation vectors"), "vectors", "chroma", _plan_vectors, _run_vectors)

#: the conversation agent's steps, in the plan's order
STEPS: tuple[Migratable, ...] = (
    Migratable(N_("conversations"), "", "", _plan_conversations),
    Migratable(N_("conversation index"), "", "", _plan_index, _run_index),
    VECTORS,
)
