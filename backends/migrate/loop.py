"""The migration's loop: plan, then run, every declared step, in the registry's order.

The steps are the owners' (``backends/<owner>/migration.py``'s ``STEPS``), named by each
declaration's ``migrations`` (:mod:`backends.assistants`); this loop keeps no list of them.
A dry run (:func:`plan_migration`) reads and probes, and writes nothing anywhere; a run
(:func:`migrate`) records each finished step in the journal, so running again after an
interruption or a cancel finishes the job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from backends import assistants
from backends.assistants import Context
from backends.config import Config
from backends.errors import CancelledError
from backends.i18n import _
from backends.migrate.journal import JOURNAL_FILE, Journal
from backends.migrate_steps import (
    JSONDict,
    Migratable,
    MigrateOptions,
    MigrationError,
    MigrationRun,
    Step,
    StepRun,
    target_config,
    target_fingerprint,
)
from backends.progress import Progress

log = logging.getLogger(__name__)


@dataclass
class MigrationPlan:
    """What the migration would do (a dry run) or did (a run), step by step."""

    steps: list[Step]
    dry_run: bool = True
    resumed: bool = False  # a journal of an unfinished migration was found
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[str]:
        return [f"{_(s.name)}: {s.problem}" for s in self.steps if s.problem]

    @property
    def total(self) -> int:
        return sum(s.items for s in self.steps if s.works)

    def step(self, name: str) -> Step:
        for s in self.steps:
            if s.name == name:
                return s
        raise KeyError(name)

    def lines(self) -> list[str]:
        """The plan's rows, their names and actions in columns as wide as the user's
        language needs."""
        names = max((len(_(s.name)) for s in self.steps), default=0)
        actions = max((len(_(s.action)) for s in self.steps), default=0)
        out = [s.line(names, actions) for s in self.steps]
        out.extend(self.notes)
        return out

    def to_dict(self) -> JSONDict:
        return {
            "dry_run": self.dry_run,
            "resumed": self.resumed,
            "problems": self.problems,
            "notes": self.notes,
            "steps": [asdict(s) for s in self.steps],
        }


def declared_steps() -> list[Migratable]:
    """Every datum kind the migration knows: each declaration's steps, in the registry's
    order (the assistants, then the shared parts)."""
    steps: list[Migratable] = []
    for declared in assistants.declarations():
        if declared.migrations:
            steps.extend(assistants.resolve(declared.migrations))
    return steps


def _planned(run: MigrationRun) -> list[tuple[Step, Migratable]]:
    return [(declared.plan(run, declared), declared) for declared in declared_steps()]


def _require_server_target(target: Config) -> None:
    fingerprint = target_fingerprint(target)
    if not any(fingerprint[declared.server] for declared in declared_steps() if declared.server):
        raise MigrationError(
            _(
                "no server is configured: set redis_url, postgres_dsn, neo4j_uri, qdrant_url "
                "or chroma_url (Settings, custodia.toml or CUSTODIA_* variables) first"
            )
        )


def plan_migration(
    process: Context,
    options: MigrateOptions | None = None,
    progress: Progress | None = None,
    servers: Config | None = None,
) -> MigrationPlan:
    """The dry run: what would be copied, rebuilt or left, with counts and reachability.

    ``servers``: the configuration naming the servers (default: the process's own; the
    window passes the one saved in Settings, which takes effect only at restart). Writes
    nothing anywhere (no bootstrap, no journal, no collection).
    """
    options = options or MigrateOptions()
    config = process.config
    target = target_config(servers or config)
    _require_server_target(target)
    journal = Journal.load(config.path(JOURNAL_FILE))
    run = MigrationRun(config, target, process, options, progress or Progress(), journal, True)
    try:
        steps = [step for step, _declared in _planned(run)]
    finally:
        run.close()
    resumed = journal.unfinished and journal.target() == target_fingerprint(target)
    return MigrationPlan(steps, dry_run=True, resumed=resumed, notes=run.notes)


def migrate(
    process: Context,
    options: MigrateOptions | None = None,
    progress: Progress | None = None,
    servers: Config | None = None,
) -> MigrationPlan:
    """Copy the embedded data to the configured servers; resumable; returns what was done.

    Raises :class:`~backends.errors.CancelledError` when ``progress`` is cancelled (run again
    to resume), :class:`~backends.migrate_steps.AuditMergeRefused` for a non-empty server
    log, other :class:`~backends.migrate_steps.MigrationError` or
    :class:`~backends.errors.StoreUnavailableError` for the rest.
    """
    options = options or MigrateOptions()
    progress = progress or Progress()
    config = process.config
    target = target_config(servers or config)
    _require_server_target(target)
    journal = Journal.load(config.path(JOURNAL_FILE))
    fingerprint = target_fingerprint(target)
    resume = journal.unfinished and journal.target() == fingerprint
    run = MigrationRun(config, target, process, options, progress, journal, False)
    try:
        planned = _planned(run)
        plan = MigrationPlan(
            [s for s, _declared in planned], dry_run=False, resumed=resume, notes=run.notes
        )
        journal.begin(fingerprint, resume)
        progress.start(plan.total, _("migrating to the servers"))
        for step, declared in planned:
            progress.check()
            _run_step(run, step, declared, resume)
        journal.finish()
    finally:
        run.close()
    return plan


def _run_step(run: MigrationRun, step: Step, declared: Migratable, resume: bool) -> None:
    progress, journal = run.progress, run.journal
    runner: StepRun | None = declared.run
    if runner is None or not step.works:
        step.state = "unchanged"
        return
    state = journal.step(step.name)
    if resume and state.get("state") == "done" and not declared.reentered:
        step.state = "done earlier"
        progress.advance(step.items, _("{step}: done earlier").format(step=_(step.name)))
        return
    state["state"] = "running"
    journal.save()
    before = progress.done
    try:
        runner(run, step)
    except CancelledError:
        log.info("migration cancelled during %s; run it again to resume", step.name)
        raise
    rest = step.items - (progress.done - before)
    if rest > 0:
        progress.advance(rest, _(step.name))
    step.state = "done"
    state.update(state="done", finished=time.time(), done=step.done)
    journal.save()


def iter_lines(plan: MigrationPlan) -> Iterator[str]:
    yield from plan.lines()
    for problem in plan.problems:
        yield _("problem: {problem}").format(problem=problem)
