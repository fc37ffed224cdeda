"""The audit log's data on the way to the server profile (``custodia migrate``): its steps,
declared beside its data (:mod:`backends.audit.data`).

The log is copied to Postgres record by record (:mod:`backends.audit.chain_copy`). The trust
file and the signing key stay local (they must live outside the database). The pseudonym keys
stay in the data dir; beside a server log they move on first use, wrapped under a desktop-only
key (CT4, CT11).
"""

from __future__ import annotations

from backends.audit.chain_copy import (
    copy_chain,
    existing_trust,
    open_target_log,
    resume_point,
    source_log,
)
from backends.audit.service import CHECKPOINTS_FILE, KEYS_FILE, LOG_FILE
from backends.audit.verify import verify_chain
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _
from backends.migrate_steps import (
    COPY,
    NOTHING,
    STAYS,
    AuditMergeRefused,
    Migratable,
    MigrationRun,
    Step,
)
from backends.stores.audit_log import AuditLog


def _plan_audit(run: MigrationRun, declared: Migratable) -> Step:
    path = run.config.path(LOG_FILE)
    source = f"SQLite {path}"
    if not run.moves(declared):
        return Step(declared.step, STAYS, source, source, detail=_("no Postgres configured"))
    step = Step(
        declared.step,
        COPY,
        source,
        f"Postgres {run.fingerprint[declared.server]}",
        detail=_(
            "record by record (seq, record, hash), chain verified on both sides before and after"
        ),
    )
    if not path.exists():
        step.action, step.detail = NOTHING, _("no embedded audit log")
        return step
    log = source_log(run)
    try:
        step.items = log.head().seq
        if run.dry_run:
            _probe_copy(run, step, log)
    finally:
        log.close()
    return step


def _probe_copy(run: MigrationRun, step: Step, log: AuditLog) -> None:
    """The dry run: the embedded chain verifies, the server log is reachable and empty (or
    this chain's own prefix, to be resumed); what is wrong becomes the step's problem."""
    result = verify_chain(log, existing_trust(run.config))
    if not result.ok:
        step.problem = _("the embedded chain is broken: {result}").format(result=result.line())
        return
    try:
        target_log, note = open_target_log(run, bootstrap_if_missing=False)
    except CustodiaEnvironmentError as err:
        step.problem = str(err)
        return
    if target_log is None:
        step.detail += f"; {note}"
        return
    try:
        resume_from = resume_point(run, log, target_log)
        if resume_from:
            step.items -= resume_from
            step.detail += "; " + _("resuming after seq {seq}").format(seq=resume_from)
    except AuditMergeRefused as err:
        step.problem = str(err)
    finally:
        target_log.close()


def _plan_checkpoints(run: MigrationRun, declared: Migratable) -> Step:
    path = run.config.path(CHECKPOINTS_FILE)
    detail = _("the trust file and the signing key stay outside any database")
    if run.moves(AUDIT):
        detail += "; " + _(
            "after the copy, a checkpoint of the server log at the copied head is signed"
        )
    local = _("local {path}").format(path=path)
    return Step(declared.step, STAYS, local, local, detail=detail)


def _plan_keys(run: MigrationRun, declared: Migratable) -> Step:
    path = run.config.path(KEYS_FILE)
    return Step(
        declared.step,
        STAYS,
        f"SQLite {path}",
        f"SQLite {path}",
        detail=_(
            "on a server log they move beside it on first use, wrapped under audit-log.kek, a "
            "key only the desktops hold (CT4, CT11; docs/AUDIT.md)"
        ),
    )


#: the audit copy resumes by itself: its journal state is re-entered on a resume
AUDIT = Migratable(
    N_("audit log"), "audit_log", "postgres", _plan_audit, copy_chain, reentered=True
)

#: the audit log's steps, in the plan's order
STEPS: tuple[Migratable, ...] = (
    AUDIT,
    Migratable(N_("checkpoints"), "", "", _plan_checkpoints),
    Migratable(N_("pseudonym keys"), "", "", _plan_keys),
)
