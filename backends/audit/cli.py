"""Headless audit commands::

    custodia audit verify [--from-checkpoint] [--checkpoint FILE]
    custodia audit export --format csv|jsonl [--output FILE] [--pseudonym P] [--event E]
    custodia audit checkpoint [--output FILE]
    custodia audit bootstrap --admin-dsn DSN [--schema S]      (Postgres only)
    custodia forget PERSON

``verify`` exits 0 and prints ``OK N records``, or exits 1 naming the first broken sequence.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from backends.audit.checkpoints import (
    CheckpointRejected,
    export_checkpoint,
    public_key_from_hex,
    read_exported,
)
from backends.audit.log import Filter
from backends.audit.service import EXPORT_FORMATS, AuditService, get_service
from backends.progress import Progress
from backends.services import Services


def _progress(quiet: bool) -> Progress:
    if quiet or not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, message: str) -> None:
        print(f"\r{message} {done}/{total}", end="", file=sys.stderr, flush=True)

    return Progress(callback=show)


def _cmd_verify(args: argparse.Namespace, services: Services) -> int:
    service = get_service(services)
    if args.checkpoint:
        checkpoint = read_exported(Path(args.checkpoint))
        if args.trusted_key:
            checkpoint.check(public_key_from_hex(args.trusted_key), service.log.log_id)
        try:
            service.trust.accept(checkpoint)
        except CheckpointRejected as err:
            print(f"REJECTED checkpoint {args.checkpoint}: {err}")
            return 1
    result = service.verify(from_checkpoint=args.from_checkpoint, progress=_progress(args.quiet))
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(result.line())
    return 0 if result.ok else 1


def _cmd_export(args: argparse.Namespace, services: Services) -> int:
    service = get_service(services)
    flt = Filter(
        pseudonym=args.pseudonym or "",
        event_type=args.event or "",
        since=args.since or "",
        until=args.until or "",
    )
    if args.output:
        count = service.export_file(Path(args.output), args.format, flt)
        print(f"exported {count} records to {args.output}", file=sys.stderr)
    else:
        count = service.export(sys.stdout, args.format, flt)
    return 0


def _cmd_checkpoint(args: argparse.Namespace, services: Services) -> int:
    service: AuditService = get_service(services)
    checkpoint = service.checkpoint()
    print(
        f"checkpoint seq {checkpoint.seq} head {checkpoint.head} signed by key {checkpoint.key_id}"
    )
    if args.output:
        export_checkpoint(checkpoint, Path(args.output), service.signer.public_key)
        print(f"exported to {args.output}: keep it somewhere the database is not")
    return 0


def _cmd_bootstrap(args: argparse.Namespace, services: Services) -> int:
    from backends.audit.postgres_log import bootstrap

    done = bootstrap(args.admin_dsn, schema=args.schema, timeout=services.config.network_timeout)
    print(
        f"schema {done.schema} ready; roles {done.roles.owner} (owner), {done.roles.app} "
        f"(application), {done.roles.maintenance} (maintenance)"
    )
    print(f"application DSN (set CUSTODIA_POSTGRES_DSN): {done.app_dsn}")
    print(f"maintenance DSN (checkpoints): {done.maintenance_dsn}")
    return 0


def _cmd_forget(args: argparse.Namespace, services: Services) -> int:
    pseudonym = get_service(services).forget(args.person)
    if pseudonym is None:
        print(f"no key for {args.person!r}: nothing to forget")
        return 1
    print(f"forgot {pseudonym}: its key is destroyed; its records stay in the chain, unreadable")
    return 0


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    audit = sub.add_parser("audit", help="the tamper-evident audit log: verify, export, checkpoint")
    commands = audit.add_subparsers(dest="audit_command", metavar="ACTION", required=True)

    p = commands.add_parser("verify", help="verify the hash chain and the signed checkpoints")
    p.add_argument(
        "--from-checkpoint",
        action="store_true",
        help="verify only what was appended since the latest trusted checkpoint",
    )
    p.add_argument("--checkpoint", metavar="FILE", help="first trust this exported checkpoint")
    p.add_argument(
        "--trusted-key", metavar="HEX", help="public key the --checkpoint must be signed with"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(handler=_cmd_verify)

    p = commands.add_parser("export", help="export the records (CSV or JSON lines)")
    p.add_argument("--format", choices=EXPORT_FORMATS, required=True)
    p.add_argument("--output", metavar="FILE", help="file to write (default: stdout)")
    p.add_argument("--pseudonym")
    p.add_argument("--event", help="event type")
    p.add_argument("--since", help="from this time (inclusive), e.g. 2025-01-31")
    p.add_argument("--until", help="before this time (exclusive)")
    p.set_defaults(handler=_cmd_export)

    p = commands.add_parser("checkpoint", help="verify, then sign and store a checkpoint")
    p.add_argument("--output", metavar="FILE", help="also export it to FILE")
    p.set_defaults(handler=_cmd_checkpoint)

    p = commands.add_parser("bootstrap", help="create the Postgres schema and the three roles")
    p.add_argument("--admin-dsn", required=True, help="DSN of a role that may create roles")
    p.add_argument("--schema", default="custodia_audit")
    p.set_defaults(handler=_cmd_bootstrap)

    p = sub.add_parser("forget", help="erase a person: destroy their key (crypto-shredding)")
    p.add_argument("person", metavar="PERSON")
    p.set_defaults(handler=_cmd_forget)
