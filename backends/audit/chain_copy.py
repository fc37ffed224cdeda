"""The audit log's copy to Postgres (``custodia migrate``): record by record, never a merge.

The same ``seq, record, hash`` rows, each batch inside ``pg_advisory_xact_lock`` (the
storage role's :meth:`~backends.stores.audit_log.AuditLog.copy_to`); the chain is verified on
both sides before and after; a non-empty server log is copied into only when it is this
chain's own prefix, linked by the migration journal (an interrupted copy resumes). After the
copy a checkpoint of the server log at the copied head is signed and trusted — the link
between the two logs. The schema and roles are bootstrapped when missing, with the admin DSN.
"""

from __future__ import annotations

from typing import Final

from backends.audit.checkpoints import Signer, TrustStore
from backends.audit.service import CHECKPOINTS_FILE, LOG_FILE, SIGNING_KEY_FILE
from backends.audit.verify import VerifyResult, verify_chain
from backends.config import Config, redact_url
from backends.i18n import _
from backends.migrate_steps import (
    AuditMergeRefused,
    BrokenChainError,
    JSONDict,
    MigrationRun,
    Step,
    StepProgress,
    dsn_url,
)
from backends.stores.audit_log import AuditLog, AuditLogError, ChainChanged, NotAPrefix

#: the store role of the log
ROLE: Final = "audit_log"


def source_log(run: MigrationRun) -> AuditLog:
    """The embedded log (the embedded profile's, in the data dir)."""
    source: AuditLog = run.open_store(ROLE, run.source, path=run.config.path(LOG_FILE))
    return source


def trust(config: Config) -> tuple[Signer, TrustStore]:
    """The data dir's signing key (made when missing) and trust file."""
    signer = Signer.load_or_create(config.path(SIGNING_KEY_FILE))
    return signer, TrustStore(config.path(CHECKPOINTS_FILE), signer.public_key)


def existing_trust(config: Config) -> TrustStore | None:
    """The trust store when a signing key exists (the dry run creates nothing)."""
    path = config.path(SIGNING_KEY_FILE)
    if not path.exists():
        return None
    return TrustStore(config.path(CHECKPOINTS_FILE), Signer.load(path).public_key)


def open_target_log(
    run: MigrationRun, *, bootstrap_if_missing: bool
) -> tuple[AuditLog | None, str]:
    """The server log (bootstrapped when missing and allowed) and what was done."""

    def target_log() -> AuditLog:
        opened: AuditLog = run.open_store(
            ROLE, run.target, schema=run.options.schema, path=run.target.path(LOG_FILE)
        )
        return opened

    try:
        return target_log(), ""
    except AuditLogError as err:
        if "bootstrap" not in str(err) and "does not exist" not in str(err):
            raise
        if not bootstrap_if_missing:
            return None, _(
                "the audit schema {schema!r} and its roles will be created (bootstrap) with "
                "the admin DSN"
            ).format(schema=run.options.schema)
    done = _bootstrap(run)
    return target_log(), done


def _bootstrap(run: MigrationRun) -> str:
    # lazy: psycopg and the Postgres engine, needed only when the log moves to a server
    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 — lazy: psycopg

    from backends.stores.audit_log.postgres import (  # noqa: PLC0415 — lazy: psycopg
        Roles,
        bootstrap,
        redact_dsn,
    )

    roles = run.options.roles or Roles()
    admin = run.options.admin_dsn or run.target.postgres_dsn
    configured = conninfo_to_dict(run.target.postgres_dsn)
    keep = configured.get("password") if configured.get("user") == roles.app else None
    result = bootstrap(
        admin,
        roles=roles,
        schema=run.options.schema,
        app_password=str(keep) if keep else None,
        timeout=run.target.network_timeout,
    )
    note = _(
        "bootstrapped the audit schema {schema!r} and roles {owner}/{app}/{maintenance} "
        "with {admin}"
    ).format(
        schema=result.schema,
        owner=roles.owner,
        app=roles.app,
        maintenance=roles.maintenance,
        admin=redact_dsn(admin),
    )
    if configured.get("user") != roles.app:
        note += "; " + _(
            "the configured DSN is not the application role — set postgres_dsn to {dsn} "
            "(its password was generated now: run `custodia audit bootstrap --admin-dsn …` "
            "again to set a new one you keep)"
        ).format(dsn=redact_url(dsn_url(result.app_dsn)))
    run.notes.append(note)
    return note


def _refused(target_log: AuditLog, seq: int) -> AuditMergeRefused:
    return AuditMergeRefused(
        _(
            "the server audit log ({location}) already holds {seq} records that are not a "
            "copy started by this migration: refusing to merge two chains. Point "
            "postgres_dsn at an empty database (or schema)."
        ).format(location=target_log.location, seq=seq)
    )


def resume_point(run: MigrationRun, source: AuditLog, target_log: AuditLog) -> int:
    """Seq already copied (0 for an empty server log); refuses anything but our own prefix:
    the journal's link must name both logs, and the server log must be this chain's prefix."""
    head = target_log.head()
    if head.seq == 0:
        return 0
    link = run.journal.audit_link
    ours = (
        link.get("source_log_id") == source.log_id
        and link.get("target_log_id") == target_log.log_id
    )
    if not ours:
        raise _refused(target_log, head.seq)
    try:
        return source.resume_point(target_log)
    except NotAPrefix as err:
        raise _refused(target_log, head.seq) from err


def verified(
    log_: AuditLog, trusted: TrustStore | None, where: str, copy_of: str | None = None
) -> VerifyResult:
    """The chain's verification, or :class:`BrokenChainError` saying ``where``; ``copy_of``:
    the source's id, as the journal linked it, for the server's copy."""
    result = verify_chain(log_, trusted, copy_of=copy_of)
    if not result.ok:
        raise BrokenChainError(f"{where}: {result.line()}")
    return result


def copy_chain(run: MigrationRun, step: Step) -> None:
    """The audit log step's work: the copy, verified before and after, then the checkpoint."""
    signer, trusted = trust(run.config)
    source = source_log(run)
    target_log: AuditLog | None = None
    try:
        # Before: the embedded chain verifies (with its trusted checkpoints).
        before = verified(source, trusted, _("the embedded audit chain is broken; not copying it"))
        target_log, _note = open_target_log(run, bootstrap_if_missing=True)
        assert target_log is not None
        start = resume_point(run, source, target_log)
        if start:
            verified(
                target_log,
                trusted,
                _("the server audit chain is broken; not continuing"),
                copy_of=source.log_id,
            )
        state = run.journal.step(step.name)
        run.journal.audit_link.update(source_log_id=source.log_id, target_log_id=target_log.log_id)
        state["copied_seq"] = start
        run.journal.save()
        _copy(run, step, source, target_log, state, start, before.head.seq)
        _verify_after(run, step, source, target_log, state, before.head.seq, (signer, trusted))
    finally:
        if target_log is not None:
            target_log.close()
        source.close()


def _copy(
    run: MigrationRun,
    step: Step,
    source: AuditLog,
    target_log: AuditLog,
    state: JSONDict,
    start: int,
    until: int,
) -> None:
    def copied(seq: int) -> None:  # each committed batch, before the progress moves
        state["copied_seq"] = seq
        run.journal.save()

    sub = StepProgress(run.progress, step.name)
    try:
        step.done = source.copy_to(
            target_log,
            sub.progress,
            after=start,
            until=until,
            batch=run.options.audit_batch,
            copied=copied,
        )
    except NotAPrefix as err:
        raise AuditMergeRefused(
            _(
                "the server audit log changed during the copy (head seq {head}, expected "
                "{expected}): someone else is appending; stopped"
            ).format(head=err.head.seq, expected=err.expected.seq)
        ) from err
    except ChainChanged as err:
        raise BrokenChainError(
            _("the embedded audit chain changed while copying (seq {seq}); stopped").format(
                seq=err.seq
            )
        ) from err


def _verify_after(
    run: MigrationRun,
    step: Step,
    source: AuditLog,
    target_log: AuditLog,
    state: JSONDict,
    until: int,
    keys: tuple[Signer, TrustStore],
) -> None:
    """After: both chains verify and the copy ends on the same head, which is signed."""
    signer, trusted = keys
    copied_log = verified(
        target_log, trusted, _("the copied audit chain does not verify"), copy_of=source.log_id
    )
    again = verified(source, trusted, _("the embedded audit chain no longer verifies"))
    mine = source.get(copied_log.head.seq) if copied_log.head.seq else None
    if copied_log.head.seq != until or (mine is not None and mine.hash != copied_log.head.hash):
        raise BrokenChainError(
            _("the server log ends at seq {server}, the embedded copy at {until}").format(
                server=copied_log.head.seq, until=until
            )
        )
    if copied_log.head.seq:
        checkpoint = signer.sign(target_log.log_id, copied_log.head.seq, copied_log.head.hash)
        trusted.accept(checkpoint)
        if target_log.stores_checkpoints:
            target_log.add_checkpoint(checkpoint)
        state["checkpoint"] = {"seq": checkpoint.seq, "head": checkpoint.head}
    step.detail = _(
        "{records} records on the server, both chains verified (embedded: {embedded}); head "
        "{head}… signed as a checkpoint of the server log {log}"
    ).format(
        records=copied_log.records,
        embedded=again.records,
        head=copied_log.head.hash[:12],
        log=target_log.log_id,
    )
