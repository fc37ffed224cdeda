"""Headless commands for the storage map and the migration::

    custodia storage [--json]                                  the storage map
    custodia migrate --to server [--dry-run] [--admin-dsn DSN] [--switch] [--json]

``migrate`` exits 0 when everything was copied (or, with ``--dry-run``, when nothing would
stop it), 1 when a store refused or failed (message printed; run it again to resume), 130 when
interrupted (Ctrl+C stops after the current batch; run it again to resume).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from types import FrameType

from backends.assistants import Context
from backends.errors import CancelledError
from backends.i18n import _
from backends.migrate import (
    MigrateOptions,
    MigrationPlan,
    migrate,
    plan_migration,
    switch_to_server,
)
from backends.progress import Progress
from backends.storage_map import format_table, healthy, storage_map, to_json

ADMIN_DSN_ENV = "CUSTODIA_POSTGRES_ADMIN_DSN"


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "storage", help=_("the storage map: every datum kind, its engine, count, size, health")
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable map"))
    p.set_defaults(handler=_cmd_storage)

    p = sub.add_parser(
        "migrate",
        help=_("copy the embedded data to the configured servers (resumable)"),
        description=(
            _(
                "Copies the embedded data to the servers configured in custodia.toml or the "
                "CUSTODIA_* variables (Redis, Postgres, Bolt, Chroma/Qdrant servers). Nothing "
                "embedded is deleted. Interrupted or cancelled: run it again to resume."
            )
        ),
    )
    p.add_argument("--to", choices=["server"], required=True, help=_("the target profile"))
    p.add_argument(
        "--dry-run",
        action="store_true",
        help=_("say what would be copied or rebuilt; write nothing"),
    )
    p.add_argument(
        "--admin-dsn",
        default="",
        help=_(
            "Postgres role allowed to create the audit schema and roles when they are missing "
            "(default: ${variable}, else the configured postgres_dsn)"
        ).format(variable=ADMIN_DSN_ENV),
    )
    p.add_argument(
        "--switch",
        action="store_true",
        help=_("after a successful copy, set profile = server in custodia.toml"),
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable plan or report"))
    p.set_defaults(handler=_cmd_migrate)


def _cmd_storage(args: argparse.Namespace, context: Context) -> int:
    rows = storage_map(context.config, context)
    if args.json:
        print(to_json(context.config, rows))
    else:
        print(
            _("Profile: {profile} — data dir {home}").format(
                profile=context.config.profile, home=context.config.home
            )
        )
        print(format_table(rows))
        for row in rows:
            if row.note:
                print(f"  {_(row.kind)}: {_(row.note)}")
    return 0 if healthy(rows) else 1


def _printer(quiet: bool) -> Progress:
    last = [-1]

    def show(done: int, total: int, message: str) -> None:
        percent = int(done * 100 / total) if total else 100
        if percent != last[0] or not sys.stderr.isatty():
            last[0] = percent
            end = "\r" if sys.stderr.isatty() else "\n"
            print(f"[{percent:3d}%] {message}"[:100].ljust(100), end=end, file=sys.stderr)

    return Progress() if quiet else Progress(callback=show)


def _cmd_migrate(args: argparse.Namespace, context: Context) -> int:
    options = MigrateOptions(admin_dsn=args.admin_dsn or os.environ.get(ADMIN_DSN_ENV, ""))
    if args.dry_run:
        return _dry_run(args, context, options)
    progress = _printer(args.json)
    previous = signal.getsignal(signal.SIGINT)

    def on_interrupt(signum: int, frame: FrameType | None) -> None:
        print(_("\nstopping after the current batch…"), file=sys.stderr)
        progress.cancel()

    signal.signal(signal.SIGINT, on_interrupt)
    try:
        report = migrate(context, options, progress)
    except CancelledError:
        print(_("\ncustodia: migration interrupted; run it again to resume"), file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    _print_report(args, report)
    if args.switch:
        print(
            _("profile = server written to {switch_to_server}; restart").format(
                switch_to_server=switch_to_server(context.config.home)
            )
        )
    elif context.config.profile != "server":
        print(_("Set profile = server (Settings, or --switch) and restart to use the servers."))
    return 0


def _dry_run(args: argparse.Namespace, context: Context, options: MigrateOptions) -> int:
    """``--dry-run``: the plan, its problems; exit 1 when one would stop the migration."""
    plan = plan_migration(context, options)
    if args.json:
        print(json.dumps(plan.to_dict(), indent=2))
    else:
        print(_("Dry run — nothing is written. The migration would:"))
        for line in plan.lines():
            print(f"  {line}")
        if plan.resumed:
            print(_("An unfinished migration to these servers will be resumed."))
        for problem in plan.problems:
            print(_("problem: {problem}").format(problem=problem))
    return 1 if plan.problems else 0


def _print_report(args: argparse.Namespace, report: MigrationPlan) -> None:
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return
    print(_("Migration finished:"))
    for step in report.steps:
        print(f"  [{_(step.state):>12}] {step.line()}")
    for note in report.notes:
        print(_("note: {note}").format(note=note))
