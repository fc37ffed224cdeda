"""Headless commands: ``custodia doctor``, ``custodia ask ...`` and friends.

Each assistant package contributes its subcommands through ``add_commands(subparsers)``;
the desktop entry point hands every argument list that names a command to :func:`main`.
Progress is printed to stderr, results to stdout. Exit codes: 0 ok, 1 a check or command
failed for an environment reason (message printed), 2 bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from backends import __version__, assistants, config, doctor, i18n, terminal_log
from backends.assistants import Handler
from backends.commands import (
    PIPE_CLOSED,
    silence_stdout,
)
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _
from backends.services import Services
from backends.storage_map import format_table, storage_map
from backends.text import OUTPUT_ERRORS, bad_character, printable, printable_message

#: the composition layer's own commands (the storage map and the migration), after those the
#: declared assistants and parts add (:mod:`backends.assistants`)
OWN_COMMANDS: tuple[str, ...] = ("backends.migrate_cli:add_commands",)


def _cmd_doctor(args: argparse.Namespace, services: Services) -> int:
    checks = []
    for check in doctor.run(services.config, services):
        checks.append(check)
        if not args.json:
            print(check.line(), flush=True)
    if args.storage and not args.json:
        print(
            "\n"
            + _("Storage map:")
            + "\n"
            + format_table(storage_map(services.config, services))
            + "\n"
        )
    if args.json:
        print(doctor.report_json(services.config, checks))
    elif doctor.healthy(checks):
        print(_("Everything this configuration needs is usable."))
    else:
        print(_("Some stores or models this configuration needs are not usable (see above)."))
    return 0 if doctor.healthy(checks) else 1


def _cmd_forget(args: argparse.Namespace, services: Services) -> int:
    """Erase a person: the audit log destroys their key (crypto-shredding), then every
    declared part that keeps something of theirs erases it or says what remains."""
    person = args.person.strip()  # as `ask tutor --user` and `kb import --user` use it
    if not person:
        print("custodia: " + _("PERSON is empty"), file=sys.stderr)
        return 2
    pseudonym = forget_person(services, person)
    if pseudonym is None:
        print(_("no key for {person!r}: nothing to forget").format(person=person))
    else:
        print(
            _(
                "forgot {pseudonym}: its key is destroyed; its records stay in the chain, "
                "unreadable"
            ).format(pseudonym=pseudonym)
        )
    for line in forget_hooks(services, person):
        print(line)
    return 1 if pseudonym is None else 0


def forget_person(services: Services, person: str) -> str | None:
    """Destroy ``person``'s key in the audit log; their pseudonym, or None when there was no
    key (nothing to forget)."""
    from backends.audit import AuditService  # noqa: PLC0415 — lazy: only this command needs it

    return services.get("audit", AuditService).forget(person)


def forget_hooks(services: Services, person: str) -> list[str]:
    """Every declared part's erasure of ``person`` (the loop over the registry's hooks):
    what each says remains, for the user."""
    lines: list[str] = []
    for declared in assistants.declarations():
        hook = declared.forget_hook()
        if hook is not None:
            lines.extend(hook(services, person))
    return lines


def install_language(environ: Mapping[str, str] | None = None) -> str:
    """The commands speak the ``language`` setting (``CUSTODIA_LANGUAGE``, custodia.toml;
    ``"system"``: ``LANG``/``LC_MESSAGES``), installed before any help text is made. A
    configuration that does not load still gets its error in the language asked for."""
    env = os.environ if environ is None else environ
    try:
        setting = config.load(env).language
    except CustodiaEnvironmentError:
        setting = env.get("CUSTODIA_LANGUAGE", "system").strip()
    return i18n.install(i18n.resolve(setting, env))


#: the placeholders the commands' usage shows (metavars; else the option's or argument's
#: name), marked for the catalogue: :class:`Formatter` shows them in the user's language
METAVARS = (
    N_("ACTION"), N_("ADMIN_DSN"), N_("ASSISTANT"), N_("COMMAND"), N_("EVENT"), N_("FILE"),
    N_("ID"), N_("K"), N_("KEY"), N_("LIMIT"), N_("NAME"), N_("NEW"), N_("OLD"), N_("PATH"),
    N_("PERSON"), N_("PROOF"), N_("PSEUDONYM"), N_("QUESTION"), N_("SCHEMA"), N_("SEQ"),
    N_("SESSION_ID"), N_("THRESHOLD"), N_("TIME"), N_("USER"), N_("id"), N_("message"),
    N_("name"), N_("path"), N_("query"), N_("question"), N_("task"), N_("text"),
)  # fmt: skip


_PLACEHOLDERS = frozenset(METAVARS)


def placeholder(name: str) -> str:
    """``name`` in the installed language when it is one of :data:`METAVARS`; anything else
    (a subcommand's name, which argparse lists as a metavar too) is typed, so never
    translated: ``memories`` as a storage word is "recuerdos", as a command it stays."""
    return _(name) if name in _PLACEHOLDERS else name


class Formatter(argparse.HelpFormatter):
    """argparse's help, with the placeholders (``FILE``, ``question``) in the installed
    language; the arguments themselves (options, choices, subcommands) are unchanged."""

    def _get_default_metavar_for_optional(self, action: argparse.Action) -> str:
        return placeholder(action.dest.upper())

    def _get_default_metavar_for_positional(self, action: argparse.Action) -> str:
        return placeholder(action.dest)

    def _metavar_formatter(
        self, action: argparse.Action, default_metavar: str
    ) -> Callable[[int], tuple[str, ...]]:
        metavar = action.metavar
        if isinstance(metavar, str):
            action = copy.copy(action)
            action.metavar = placeholder(metavar)
        return super()._metavar_formatter(action, default_metavar)


class Parser(argparse.ArgumentParser):
    """Every parser of the commands (subcommands are made of the same class) formats its
    help with :class:`Formatter`, and names a placeholder in its errors as its usage does
    ("argumento COMANDO", never "argumento COMMAND" under "uso: … COMANDO")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def _parse_known_args(self, *args: Any, **kwargs: Any) -> tuple[argparse.Namespace, list[str]]:
        with self._positionals_named_as_shown():
            try:
                return super()._parse_known_args(*args, **kwargs)
            except argparse.ArgumentError as err:
                if err.argument_name:
                    err.argument_name = placeholder(err.argument_name)
                raise

    @contextlib.contextmanager
    def _positionals_named_as_shown(self) -> Iterator[None]:
        """While parsing, each positional's metavar is its placeholder in the user's
        language: argparse names missing arguments by it ("se requieren los siguientes
        argumentos: pregunta"), and the usage printed with the error shows the same word."""
        changed: list[tuple[argparse.Action, str | tuple[str, ...] | None]] = []
        for action in self._actions:
            name = action.dest if action.metavar is None else action.metavar
            if not action.option_strings and isinstance(name, str) and name in _PLACEHOLDERS:
                changed.append((action, action.metavar))
                action.metavar = placeholder(name)
        try:
            yield
        finally:
            for action, metavar in changed:
                action.metavar = metavar


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="custodia",
        description=_("Custodia: four offline AI assistants. Without a command, opens the window."),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"custodia {__version__}",
        help=_("show the version number and exit"),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("doctor", help=_("check every configured store and model"))
    p.add_argument("--json", action="store_true", help=_("machine-readable report"))
    p.add_argument("--storage", action="store_true", help=_("also print the storage map"))
    p.set_defaults(handler=_cmd_doctor)
    for declared in assistants.declarations():
        add = declared.add_commands()
        if add is not None:
            add(sub)
    for target in OWN_COMMANDS:
        assistants.resolve(target)(sub)
    p = sub.add_parser("forget", help=_("erase a person: destroy their key (crypto-shredding)"))
    p.add_argument("person", metavar="PERSON")
    p.set_defaults(handler=_cmd_forget)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Private files whoever creates them (Chroma and Qdrant make theirs 0644/0755 otherwise).
    os.umask(0o077)
    terminal_log.install()  # warnings in the user's words, as the messages are
    install_language()
    try:  # Ctrl+C while the commands' modules are still being imported
        parser = build_parser()
    except KeyboardInterrupt:
        print("custodia: " + _("interrupted"), file=sys.stderr)
        return 130
    _never_fail_on_undecodable_output()
    args = parser.parse_args(argv)
    if problem := undecodable_argument(parser, args):
        print(f"custodia: {problem}", file=sys.stderr)
        return 2
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        cfg = config.load()
    except CustodiaEnvironmentError as err:
        problem = printable_message(str(err))
        print("custodia: " + _("configuration error: {0}").format(problem), file=sys.stderr)
        return 2
    services = Services(cfg)
    try:
        return handler(args, services)
    except CustodiaEnvironmentError as err:
        print(f"custodia: {printable_message(str(err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("custodia: " + _("interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `custodia … | head`: the reader left; stop quietly, as other Unix tools do
        silence_stdout()
        return PIPE_CLOSED
    finally:
        services.close()


#: arguments that name files: a name with bytes that are not UTF-8 is still a name (Linux
#: allows any bytes), so these are taken as they are and shown with escapes
PATH_DESTS = frozenset({"path", "output", "checkpoint"})
PATH_METAVARS = frozenset({"FILE", "FOLDER", "PATH", "DIR"})


def _chosen_actions(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> Iterator[argparse.Action]:
    """The arguments of ``parser`` and of the subcommands ``args`` chose."""
    for action in parser._actions:
        yield action
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                yield from _chosen_actions(chosen, args)


def undecodable_argument(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str:
    """A usage message for the first text argument that is not valid UTF-8 ("" if none).

    Python hands undecodable bytes of ``argv`` over as lone surrogates; caught here, once for
    every command, before a handler hashes, stores or prints them (issue 14: tracebacks).
    """
    names: dict[str, str] = {}
    paths: set[str] = set(PATH_DESTS)
    for action in _chosen_actions(parser, args):
        name = action.option_strings[0] if action.option_strings else None
        if name is None:
            metavar = action.metavar if isinstance(action.metavar, str) else None
            name = metavar or action.dest.upper()
        names.setdefault(action.dest, name)
        if action.metavar in PATH_METAVARS or action.type is Path:
            paths.add(action.dest)
    for dest, value in sorted(vars(args).items()):
        if dest in paths:
            continue
        for item in value if isinstance(value, list | tuple) else [value]:
            if isinstance(item, str) and (problem := bad_character(item)):
                return _(
                    "argument {name}: {value!r} is not valid UTF-8 text ({problem}); "
                    "give it in UTF-8"
                ).format(name=names.get(dest, dest), value=printable(item), problem=problem)
    return ""


def _never_fail_on_undecodable_output() -> None:
    """Print a file name with undecodable bytes with escapes (``caf\\xe9.md``, never
    ``caf\\udce9.md``), never fail on it: names of files may hold any bytes."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, io.UnsupportedOperation):
                reconfigure(errors=OUTPUT_ERRORS)
