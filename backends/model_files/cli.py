"""``custodia models``: the models dialog's list, add, remove and choose, headless::

    custodia models list [--json]                      every model, whether it can chat, why not
    custodia models add FILE [--link] [--json]         copy (or link) a .gguf into the models folder
    custodia models remove NAME [--yes] [--json]       unlink a link, or delete a copy
    custodia models use NAME [--assistant A] [--json]  answer with it from the next answer
    custodia models find [--json] [--link NAME]        GGUF files other apps keep on this computer

The checks and messages are the dialog's (backends/models/manage.py). Exit 0 on success, 1 when
the model cannot be used or the file cannot be added or removed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from backends import assistants
from backends.assistants import Context
from backends.commands import SubParsers
from backends.failures import explain
from backends.i18n import N_, _, number
from backends.models import discovery, local, manage
from backends.progress import Progress


def add_commands(sub: SubParsers) -> None:
    parser = sub.add_parser("models", help=_("list, add, remove and choose the chat models"))
    models = parser.add_subparsers(dest="models_command", metavar=_("ACTION"), required=True)

    p = models.add_parser("list", help=_("every model, whether it can chat, and why not"))
    p.add_argument("--json", action="store_true", help=_("machine-readable list"))
    p.set_defaults(handler=_cmd_list)

    p = models.add_parser("add", help=_("copy (or link) a .gguf file into the models folder"))
    p.add_argument("path", metavar="FILE", type=Path, help=_("the .gguf file"))
    p.add_argument(
        "--link",
        action="store_true",
        help=_("link it where it is instead of copying (moving the original breaks the link)"),
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable result"))
    p.set_defaults(handler=_cmd_add)

    p = models.add_parser("remove", help=_("unlink a linked model, or delete a copied one"))
    p.add_argument("name", help=_("the model's name (as `custodia models list` shows it)"))
    p.add_argument("--yes", action="store_true", help=_("do not ask for confirmation"))
    p.add_argument("--json", action="store_true", help=_("machine-readable result"))
    p.set_defaults(handler=_cmd_remove)

    p = models.add_parser("use", help=_("answer with this model from the next answer on"))
    p.add_argument("name", help=_("the model's name (as `custodia models list` shows it)"))
    p.add_argument(
        "--assistant",
        choices=assistants.names(),
        default="",
        help=_("only this assistant (default: every assistant)"),
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable result"))
    p.set_defaults(handler=_cmd_use)

    p = models.add_parser(
        "find", help=_("GGUF files kept by LM Studio, Jan, GPT4All, llama.cpp or Ollama")
    )
    p.add_argument(
        "--link",
        metavar="NAME",
        default="",
        help=_("link this one into the models folder (nothing is copied or downloaded)"),
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable list"))
    p.set_defaults(handler=_cmd_find)


def _fail(args: argparse.Namespace, message: str) -> int:
    if args.json:
        print(json.dumps({"ok": False, "error": message}, ensure_ascii=False))
    else:
        print(f"custodia: {message}", file=sys.stderr)
    return 1


#: the assistants as the window titles them (``used_by`` has their keys: ``--json``)
TITLES = {
    "tutor": N_("clinical tutor"),
    "memories": N_("memories"),
    "conversations": N_("conversations"),
    "multiagent": N_("multi-agent"),
}


def _done(args: argparse.Namespace, message: str, **extra: object) -> int:
    if args.json:
        print(json.dumps({"ok": True, "message": message, **extra}, ensure_ascii=False))
    else:
        print(message)
    return 0


def _cmd_list(args: argparse.Namespace, context: Context) -> int:
    memory = context.memory()
    listed = manage.entries(context.config, memory)
    if args.json:
        print(
            json.dumps(
                {
                    "memory": {"total": memory.total, "available": memory.available},
                    "folders": [
                        str(f)
                        for f in local.model_folders(
                            context.config.home, context.config.model_folders
                        )
                    ],
                    "models": [e.to_json() for e in listed],
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    print(
        _("This machine: {available} of memory available of {total}.").format(
            available=local.human_size(memory.available), total=local.human_size(memory.total)
        )
    )
    width = max(len(e.name) for e in listed)
    for entry in listed:
        size = local.human_size(entry.info.file_size) if entry.info else ""
        needs = (
            _("needs {needed} at {context} tokens").format(
                needed=local.human_size(entry.needed), context=number(entry.context)
            )
            if entry.info
            else ""
        )
        used = (
            _("used by {assistants}").format(
                assistants=", ".join(_(TITLES.get(a, a)) for a in entry.used_by)
            )
            if entry.used_by
            else ""
        )
        linked = _("linked") if entry.linked else ""
        extra = "; ".join(t for t in (size, needs, linked, used) if t)
        print(f"  {entry.name:<{width}}  {entry.status}" + (f"  ({extra})" if extra else ""))
        if entry.reason:
            print(f"  {'':<{width}}  {entry.reason}")
        elif entry.context_note:
            print(
                f"  {'':<{width}}  "
                + _("context limited to {count} tokens: {why}").format(
                    count=number(entry.context), why=entry.context_note
                )
            )
    return 0


def _printer(json_output: bool) -> Progress:
    last = [-1]

    def show(done: int, total: int, message: str) -> None:
        percent = done * 100 // max(total, 1)
        if not json_output and sys.stderr.isatty() and percent != last[0]:
            last[0] = percent
            print(f"\r{message} {percent}%", end="", file=sys.stderr, flush=True)

    return Progress(callback=show)


def _cmd_add(args: argparse.Namespace, context: Context) -> int:
    try:
        path = manage.add(context.config, args.path, link=args.link, progress=_printer(args.json))
    except local.GGUFError as err:
        return _fail(args, _("not added — {reason}").format(reason=err))
    if not args.json and sys.stderr.isatty() and not args.link:
        print(file=sys.stderr)
    entry = manage.find_entry(context.config, str(path), context.memory())
    message = _("Added {name}: {status}.").format(name=entry.name, status=entry.status)
    if entry.reason:
        message += " " + entry.reason
    return _done(args, message, model=entry.to_json())


def _cmd_remove(args: argparse.Namespace, context: Context) -> int:
    config = context.config
    try:
        entry = manage.find_entry(config, args.name, context.memory())
    except local.GGUFError as err:
        return _fail(args, str(err).removeprefix(f"{err.path}: "))
    if not args.yes:
        if not sys.stdin.isatty():
            return _fail(args, _("not removed: add --yes to remove {name}").format(name=entry.name))
        question = (
            _("Remove the link to {name}? The file itself stays where it is. [y/N] ")
            if entry.linked
            else _("Delete {name} from the models folder? [y/N] ")
        ).format(name=entry.name)
        # "s"/"sí" too: the question may be asked in Spanish ("[s/N]")
        if input(question).strip().lower() not in ("y", "yes", "s", "si", "sí"):
            return _fail(args, _("not removed"))
    try:
        removed = manage.remove(config, entry)
    except local.GGUFError as err:
        return _fail(args, _("not removed — {reason}").format(reason=err.args[0]))
    except OSError as err:
        return _fail(args, _("not removed — {reason}").format(reason=explain(err)))
    manage.purge(removed)
    return _done(args, removed.message(), moved=list(removed.moved))


def _cmd_use(args: argparse.Namespace, context: Context) -> int:
    config = context.config
    try:
        entry = manage.find_entry(config, args.name, context.memory())
        manage.use(config, entry, args.assistant)
    except local.GGUFError as err:
        return _fail(args, _("not chosen — {reason}").format(reason=_strip(err)))
    who = args.assistant.capitalize() if args.assistant else _("Every assistant")
    return _done(
        args,
        _("{who} answers with {name} from the next answer.").format(who=who, name=entry.name),
        key=entry.key,
    )


def _strip(err: local.GGUFError) -> str:
    return str(err).removeprefix(f"{err.path}: ")


def _cmd_find(args: argparse.Namespace, context: Context) -> int:
    config = context.config
    memory = context.memory()
    found = discovery.find(memory=memory)
    if args.link:
        try:
            chosen = discovery.pick(found, args.link)
            path = discovery.link(config, chosen)
        except local.GGUFError as err:
            return _fail(args, _("not linked — {reason}").format(reason=_strip(err)))
        return _done(
            args,
            _("Linked {name} into the models folder ({path}); nothing was copied.").format(
                name=chosen.name, path=path
            ),
            path=str(path),
        )
    best = discovery.best_fits(found, memory)
    if args.json:
        print(
            json.dumps(
                {
                    "found": [f.to_json() for f in found],
                    "best": {a: f.name for a, f in best.items()},
                },
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    if not found:
        print(
            _("No GGUF files found in the folders of LM Studio, Jan, GPT4All, llama.cpp or Ollama.")
        )
        return 0
    for item in found:
        mark = "*" if item in best.values() else " "
        print(f"{mark} {item.name}  [{item.app}]  {item.status}")
        print(f"    {item.path}")
    if best:
        print()
        for assistant, item in best.items():
            print(
                _("Best fit for the {assistant}: {name} (needs {needed})").format(
                    assistant=assistant, name=item.name, needed=local.human_size(item.needed)
                )
            )
        print(_("Use one with: custodia models find --link NAME"))
    return 0
