"""Headless audit commands::

    custodia audit verify [--from-checkpoint] [--checkpoint FILE [--trusted-key HEX]]
    custodia audit export --format csv|jsonl [--output FILE] [--pseudonym P] [--event E]
                          [--since TIME] [--until TIME]
    custodia audit checkpoint [--output FILE]
    custodia audit key
    custodia audit prove SEQ [--checkpoint FILE] --output FILE.tlog-proof
    custodia audit prove --from OLD --to NEW --output FILE
    custodia audit check PROOF --key KEY [--entry FILE]
    custodia audit check PROOF --from OLD --to NEW --key KEY
    custodia audit bootstrap --admin-dsn DSN [--schema S]      (Postgres only)

Every command that reads a log takes ``--data-dir PATH`` (a copy, a mounted backup); a data dir
that is not writable, or ``--read-only``, is opened without writing a byte. ``check`` needs no
data dir at all: the proof files and the verifier key are enough.

``verify`` exits 0 and prints ``OK N records``, or exits 1 naming the first broken sequence.
Bad usage (a malformed time, ``--trusted-key`` without ``--checkpoint``, an output file that
cannot be written) exits 2 before anything is signed or written.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from backends.assistants import Context
from backends.audit.checkpoints import (
    Checkpoint,
    CheckpointError,
    CheckpointRejected,
    OlderCheckpoint,
    export_checkpoint,
    public_key_from_hex,
    read_exported,
    write_private,
)
from backends.audit.proofs import (
    ProofFileError,
    check_consistency,
    check_inclusion,
    hashes_text,
)
from backends.audit.service import (
    EXPORT_FORMATS,
    LOG_FILE,
    AuditService,
    read_only_dir,
)
from backends.audit.verify import verify_chain
from backends.commands import PIPE_CLOSED, silence_stdout
from backends.i18n import N_, _
from backends.progress import Progress
from backends.stores.audit_log import Filter
from backends.stores.audit_log.note import NoteError, Verifier

#: ``YYYY-MM-DD``, optionally followed by ``T`` or a space and ``HH:MM[:SS[.ffffff]]``, and an
#: optional ``Z`` (record times are UTC)
_TIME = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[T ](?P<hm>\d{2}:\d{2})(?::(?P<s>\d{2})(?:\.(?P<f>\d{1,6}))?)?Z?)?"
)
TIME_FORMS = N_("YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] or 'YYYY-MM-DD HH:MM[:SS]' (UTC)")


def record_time(text: str) -> str:
    """A ``--since``/``--until`` value in the records' own time format
    (``YYYY-MM-DDTHH:MM:SS.ffffffZ``, UTC), so that comparing it with record times as text
    compares instants. Accepts :data:`TIME_FORMS`; anything else is an
    ``argparse.ArgumentTypeError`` (exit 2).

    (The inspector's date filter builds ``YYYY-MM-DD`` itself; this normaliser could move next
    to :class:`backends.stores.audit_log.Filter` so every caller shares it.)
    """
    value = text.strip()
    match = _TIME.fullmatch(value)
    if match is None:
        hint = ""
        if re.search(r"[+-]\d{2}:?\d{2}$", value) and len(value) > 10:
            hint = _("; give the time in UTC, without an offset")
        raise argparse.ArgumentTypeError(
            _("{text!r} is not a time: use {forms}").format(text=text, forms=_(TIME_FORMS)) + hint
        )
    hm = match["hm"] or "00:00"
    seconds = match["s"] or "00"
    try:
        datetime.strptime(f"{match['date']} {hm}:{seconds}", "%Y-%m-%d %H:%M:%S")
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("{text!r}: no such date or time").format(text=text)
        ) from None
    fraction = (match["f"] or "").ljust(6, "0")
    return f"{match['date']}T{hm}:{seconds}.{fraction}Z"


def trusted_key(text: str) -> str:
    """argparse type of ``--trusted-key``: an Ed25519 public key as 64 hex digits, or the
    log's note verifier key (what ``custodia audit key`` prints)."""
    try:
        trusted_public_key(text)
    except CheckpointError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text.strip()


def trusted_public_key(text: str) -> Ed25519PublicKey:
    if "+" in text:
        try:
            return Verifier.parse(text).public_key
        except NoteError as err:
            raise CheckpointError(_("not a verifier key: {err}").format(err=err)) from None
    return public_key_from_hex(text)


def output_problem(path: Path) -> str:
    """Why a file cannot be written at ``path`` ("" when it can): checked before the work."""
    parent = path.parent
    if path.is_dir():
        return _("{path} is a folder").format(path=path)
    if not parent.is_dir():
        return _("{folder}: no such folder").format(folder=parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        return _("{folder}: the folder is not writable").format(folder=parent)
    return ""


def _usage_error(message: str) -> int:
    print(f"custodia: {message}", file=sys.stderr)
    return 2


def _progress(quiet: bool) -> Progress:
    if quiet or not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, message: str) -> None:
        print(f"\r{message} {done}/{total}", end="", file=sys.stderr, flush=True)

    return Progress(callback=show)


@contextlib.contextmanager
def _opened(args: argparse.Namespace, context: Context) -> Iterator[AuditService]:
    """The audit service of ``--data-dir`` (or the configured one), read-only when asked or
    when the data dir is not writable; closed when the command is done."""
    config = context.config
    data_dir = getattr(args, "data_dir", None)
    if data_dir:
        home = Path(data_dir)
        if not (home / LOG_FILE).exists() and config.audit == "sqlite":
            raise CheckpointError(
                _("{home}: no audit log ({LOG_FILE}) there").format(home=home, LOG_FILE=LOG_FILE)
            )
        config = dataclasses.replace(config, home=home)
    read_only = bool(getattr(args, "read_only", False)) or (
        config.audit == "sqlite" and read_only_dir(config.home)
    )
    # a log from an earlier release gets its Merkle tree on this first start: say how it goes
    progress = _progress(bool(getattr(args, "quiet", False)))
    service = AuditService.open(config, read_only=read_only, progress=progress)
    try:
        yield service
    finally:
        service.close()


def _cmd_verify(args: argparse.Namespace, context: Context) -> int:
    if args.trusted_key and not args.checkpoint:
        return _usage_error(
            _(
                "--trusted-key needs --checkpoint FILE: it names the key that file must be signed "
                "with"
            )
        )
    with _opened(args, context) as service:
        return _verify(args, service)


def _verify(args: argparse.Namespace, service: AuditService) -> int:
    pinned = None
    if args.checkpoint:
        key = trusted_public_key(args.trusted_key) if args.trusted_key else None
        checkpoint = read_exported(Path(args.checkpoint), key or service.signer.public_key)
        if key is not None:
            checkpoint.check(key, service.log.log_id)
        try:
            service.trust.accept(checkpoint)
        except OlderCheckpoint as err:
            # not made the latest (that would hide what came after), but held to the chain:
            # later checkpoints may have been re-signed over a rewrite with the data dir's key
            print(
                _(
                    "checkpoint {checkpoint} (seq {seq}) is older than the latest trusted one "
                    "(seq {seq2}): checking that the chain still holds it"
                ).format(checkpoint=args.checkpoint, seq=checkpoint.seq, seq2=err.latest.seq),
                file=sys.stderr,
            )
        except CheckpointRejected as err:
            print(
                _("REJECTED checkpoint {checkpoint}: {err}").format(
                    checkpoint=args.checkpoint, err=err
                )
            )
            return 1
        pinned = checkpoint
    result = verify_chain(
        service.log,
        service.trust,
        from_checkpoint=args.from_checkpoint,
        progress=_progress(args.quiet),
        pinned=pinned,
    )
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(result.line())
    return 0 if result.ok else 1


def _cmd_export(args: argparse.Namespace, context: Context) -> int:
    if args.since and args.until and args.since >= args.until:
        return _usage_error(
            _("--since ({since}) must be before --until ({until})").format(
                since=args.since, until=args.until
            )
        )
    if args.output and (problem := output_problem(Path(args.output))):
        return _usage_error(_("cannot write the export: {problem}").format(problem=problem))
    with _opened(args, context) as service:
        return _export(args, service)


def _export(args: argparse.Namespace, service: AuditService) -> int:
    if args.reveal and service.read_only:
        return _usage_error(
            _("--reveal records the disclosure in the log, which a read-only copy cannot take")
        )
    flt = Filter(
        pseudonym=args.pseudonym or "",
        event_type=args.event or "",
        since=args.since or "",
        until=args.until or "",
    )
    if args.output:
        count = service.export_file(Path(args.output), args.format, flt, reveal=args.reveal)
        print(
            _("exported {count} records to {output}").format(count=count, output=args.output),
            file=sys.stderr,
        )
    else:
        try:
            count = service.export(sys.stdout, args.format, flt, reveal=args.reveal)
            sys.stdout.flush()  # a reader that left is noticed here, not at exit
        except BrokenPipeError:  # `custodia audit export … | head`: stop quietly
            silence_stdout()
            return PIPE_CLOSED
    return 0


def _cmd_checkpoint(args: argparse.Namespace, context: Context) -> int:
    if args.output and (problem := output_problem(Path(args.output))):
        return _usage_error(
            _("cannot write the checkpoint file: {problem}; nothing was signed").format(
                problem=problem
            )
        )
    with _opened(args, context) as service:
        return _checkpoint(args, service)


def _checkpoint(args: argparse.Namespace, service: AuditService) -> int:
    if service.read_only:
        return _usage_error(_("a read-only copy cannot take a checkpoint (it would be stored)"))
    checkpoint = service.checkpoint()
    print(
        _("checkpoint seq {seq} head {head} signed by key {key_id}").format(
            seq=checkpoint.seq, head=checkpoint.head, key_id=checkpoint.key_id
        )
    )
    if args.output:
        try:
            export_checkpoint(checkpoint, Path(args.output), service.signer.public_key)
        except CheckpointError as err:
            print(
                _(
                    "custodia: the checkpoint at seq {seq} was made, trusted and stored, but not "
                    "written to {output}: {err}. Run `custodia audit checkpoint --output FILE` "
                    "again to export one."
                ).format(seq=checkpoint.seq, output=args.output, err=err),
                file=sys.stderr,
            )
            return 1
        print(
            _("exported to {output}: keep it somewhere the database is not").format(
                output=args.output
            )
        )
    return 0


def _cmd_key(args: argparse.Namespace, context: Context) -> int:
    with _opened(args, context) as service:
        print(service.verifier_key())
    return 0


def _cmd_prove(args: argparse.Namespace, context: Context) -> int:
    consistency = args.from_checkpoint or args.to_checkpoint
    if consistency and not (args.from_checkpoint and args.to_checkpoint):
        return _usage_error(_("a consistency proof needs both --from OLD and --to NEW"))
    if consistency and (args.seq is not None or args.checkpoint):
        return _usage_error(_("give either SEQ [--checkpoint FILE] or --from OLD --to NEW"))
    if not consistency and args.seq is None:
        return _usage_error(_("give SEQ (an inclusion proof) or --from OLD --to NEW"))
    if problem := output_problem(Path(args.output)):
        return _usage_error(_("cannot write the proof: {problem}").format(problem=problem))
    with _opened(args, context) as service:
        return _prove(args, service)


def _prove(args: argparse.Namespace, service: AuditService) -> int:
    key = service.signer.public_key
    try:
        if args.from_checkpoint or args.to_checkpoint:
            old = read_exported(Path(args.from_checkpoint), key)
            new = read_exported(Path(args.to_checkpoint), key)
            for c in (old, new):
                c.check(key, service.log.log_id)
            hashes = service.prove_consistency(old, new)
            write_private(Path(args.output), hashes_text(hashes))
            print(
                _("consistency proof {seq} -> {seq2} ({len} hashes) written to {output}").format(
                    seq=old.seq, seq2=new.seq, len=len(hashes), output=args.output
                )
            )
            return 0
        checkpoint = None
        if args.checkpoint:
            checkpoint = read_exported(Path(args.checkpoint), key)
            checkpoint.check(key, service.log.log_id)
        proof = service.prove(args.seq, checkpoint)
    except CheckpointRejected as err:
        print(_("REJECTED {err}").format(err=err))
        return 1
    write_private(Path(args.output), proof.text())
    size = (checkpoint.seq if checkpoint else None) or _size_of(proof.checkpoint)
    print(
        _(
            "inclusion proof of record {seq} in the tree of {size} records ({len} hashes) written "
            "to {output}"
        ).format(seq=args.seq, size=size, len=len(proof.path), output=args.output)
    )
    print(
        _("check it with: custodia audit check {output} --key '{verifier_key}'").format(
            output=args.output, verifier_key=service.verifier_key()
        )
    )
    return 0


def _size_of(note: str) -> int:
    return Checkpoint.peek_note(note).size


def _text_of(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ProofFileError(
            _("cannot read the {what} {path}: {err}").format(what=what, path=path, err=err)
        ) from None


def _cmd_check(args: argparse.Namespace, context: Context) -> int:
    """Offline: the files and the key, nothing else (no data dir, database or configuration)."""
    if bool(args.from_checkpoint) != bool(args.to_checkpoint):
        return _usage_error(_("a consistency check needs both --from OLD and --to NEW"))
    key = args.key
    if Path(key).is_file():
        key = _text_of(key, "key file").strip()
    try:
        if args.from_checkpoint:
            if args.entry:
                return _usage_error(_("--entry goes with an inclusion proof, not --from/--to"))
            checked = check_consistency(
                _text_of(args.from_checkpoint, "checkpoint"),
                _text_of(args.to_checkpoint, "checkpoint"),
                _text_of(args.proof, "proof"),
                key,
            )
        else:
            entry = None
            if args.entry:
                try:
                    entry = Path(args.entry).read_bytes()
                except OSError as err:
                    raise ProofFileError(
                        _("cannot read the record {entry}: {err}").format(entry=args.entry, err=err)
                    ) from None
                if entry.endswith(b"\n"):  # a record's text never ends with a newline
                    entry = entry[:-1]
            checked = check_inclusion(_text_of(args.proof, "proof"), key, entry)
    except ProofFileError as err:
        print(_("FAILED {err}").format(err=err))
        return 1
    print(checked.line)
    return 0


def _cmd_bootstrap(args: argparse.Namespace, context: Context) -> int:
    # lazy: psycopg and the Postgres engine, for this one command
    from backends.stores.audit_log.postgres import bootstrap  # noqa: PLC0415 — lazy: psycopg

    done = bootstrap(args.admin_dsn, schema=args.schema, timeout=context.config.network_timeout)
    print(
        _(
            "schema {schema} ready; roles {owner} (owner), {app} (application), {maintenance} "
            "(maintenance)"
        ).format(
            schema=done.schema,
            owner=done.roles.owner,
            app=done.roles.app,
            maintenance=done.roles.maintenance,
        )
    )
    print(_("application DSN (set CUSTODIA_POSTGRES_DSN): {app_dsn}").format(app_dsn=done.app_dsn))
    print(
        _("maintenance DSN (checkpoints): {maintenance_dsn}").format(
            maintenance_dsn=done.maintenance_dsn
        )
    )
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    audit = sub.add_parser(
        "audit", help=_("the tamper-evident audit log: verify, export, checkpoint, prove")
    )
    commands = audit.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument(
        "--data-dir",
        metavar="PATH",
        help=_("the data dir to read (a copy, a mounted backup) instead of the configured one"),
    )
    where.add_argument(
        "--read-only",
        action="store_true",
        help=_("write not a byte to the data dir (automatic when it is not writable)"),
    )

    p = commands.add_parser(
        "verify", parents=[where], help=_("verify the hash chain and the signed checkpoints")
    )
    p.add_argument(
        "--from-checkpoint",
        action="store_true",
        help=_("verify only what was appended since the latest trusted checkpoint"),
    )
    p.add_argument("--checkpoint", metavar="FILE", help=_("first trust this exported checkpoint"))
    p.add_argument(
        "--trusted-key",
        metavar="KEY",
        type=trusted_key,
        help=_(
            "public key the --checkpoint must be signed with: 64 hex digits or the verifier "
            "key `custodia audit key` prints (needs --checkpoint)"
        ),
    )
    p.add_argument("--quiet", action="store_true", help=_("no progress on stderr"))
    p.set_defaults(handler=_cmd_verify)

    p = commands.add_parser(
        "export", parents=[where], help=_("export the records (CSV or JSON lines)")
    )
    p.add_argument("--format", choices=EXPORT_FORMATS, required=True)
    p.add_argument("--output", metavar="FILE", help=_("file to write (default: stdout)"))
    p.add_argument("--pseudonym")
    p.add_argument("--event", help=_("event type"))
    p.add_argument(
        "--since",
        metavar="TIME",
        type=record_time,
        help=_("from this time (inclusive): {forms}").format(forms=_(TIME_FORMS)),
    )
    p.add_argument(
        "--until", metavar="TIME", type=record_time, help=_("before this time (exclusive)")
    )
    p.add_argument(
        "--reveal",
        action="store_true",
        help=_(
            "for an authorised reviewer: add a 'personal' column with the decrypted fields "
            "(the tutor's question and the answer shown); the disclosure is itself recorded in "
            "the audit log"
        ),
    )
    p.set_defaults(handler=_cmd_export)

    p = commands.add_parser(
        "checkpoint", parents=[where], help=_("verify, then sign and store a checkpoint")
    )
    p.add_argument("--output", metavar="FILE", help=_("also write it to FILE (a C2SP signed note)"))
    p.set_defaults(handler=_cmd_checkpoint)

    p = commands.add_parser(
        "key", parents=[where], help=_("print the log's verifier key (for `audit check`)")
    )
    p.set_defaults(handler=_cmd_key)

    p = commands.add_parser(
        "prove",
        parents=[where],
        help=_("write an inclusion proof (tlog-proof) of a record, or a consistency proof"),
    )
    p.add_argument("seq", metavar="SEQ", type=int, nargs="?", help=_("the record to prove"))
    p.add_argument(
        "--checkpoint", metavar="FILE", help=_("prove against this checkpoint (default: a new one)")
    )
    p.add_argument("--from", dest="from_checkpoint", metavar="OLD", help=_("older checkpoint file"))
    p.add_argument("--to", dest="to_checkpoint", metavar="NEW", help=_("newer checkpoint file"))
    p.add_argument("--output", metavar="FILE", required=True, help=_("the proof file to write"))
    p.set_defaults(handler=_cmd_prove)

    p = commands.add_parser(
        "check", help=_("verify a proof file offline, with the verifier key alone")
    )
    p.add_argument("proof", metavar="PROOF", help=_("a .tlog-proof, or a consistency proof file"))
    p.add_argument(
        "--key", required=True, metavar="KEY", help=_("the verifier key (or a file holding it)")
    )
    p.add_argument("--entry", metavar="FILE", help=_("the record's text, as exported"))
    p.add_argument("--from", dest="from_checkpoint", metavar="OLD", help=_("older checkpoint file"))
    p.add_argument("--to", dest="to_checkpoint", metavar="NEW", help=_("newer checkpoint file"))
    p.set_defaults(handler=_cmd_check)

    p = commands.add_parser("bootstrap", help=_("create the Postgres schema and the three roles"))
    p.add_argument("--admin-dsn", required=True, help=_("DSN of a role that may create roles"))
    p.add_argument("--schema", default="custodia_audit")
    p.set_defaults(handler=_cmd_bootstrap)
