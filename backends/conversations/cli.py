"""Headless commands of the conversation agent.

``custodia ask conversations "MESSAGE" [--conversation ID] [--model KEY]``,
``custodia conversations list|show|export|import|search|rename|delete``,
``custodia reindex conversations`` and ``custodia rotate-key``.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path

from backends.cli import ask_subparsers
from backends.conversations import importers
from backends.conversations.agent import ConversationAgent, get_service
from backends.conversations.keys import generate_key
from backends.errors import CustodiaEnvironmentError
from backends.progress import Progress
from backends.services import Services

#: environment variable read by ``rotate-key`` for the new key (never a command-line argument:
#: arguments are visible to every user of the machine)
NEW_KEY_ENV = "CUSTODIA_NEW_CONVERSATIONS_KEY"

SubParsers = argparse._SubParsersAction


def _progress() -> Progress:
    """Progress printed on one stderr line when stderr is a terminal."""
    if not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, message: str) -> None:
        print(f"\r\033[K{message} {done}/{total}", end="", file=sys.stderr, flush=True)
        if total and done >= total:
            print(file=sys.stderr)

    return Progress(callback=show)


def _agent(services: Services) -> ConversationAgent:
    agent = get_service(services)
    agent.start()
    return agent


def _sync(agent: ConversationAgent) -> None:
    report = agent.sync_vectors(_progress())
    if report.added or report.dropped:
        print(
            f"search index: {report.added} message(s) indexed, {report.dropped} dropped",
            file=sys.stderr,
        )


# -- handlers ---------------------------------------------------------------------------------


def _cmd_ask(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    try:
        _sync(agent)
    except CustodiaEnvironmentError as err:  # search context is optional: the turn goes on
        print(f"custodia: past conversations not searchable: {err}", file=sys.stderr)

    def token(piece: str) -> None:
        sys.stdout.write(piece)
        sys.stdout.flush()

    result = agent.ask(args.message, args.conversation, args.model, on_token=token)
    print()
    label = " (retrieval-only mode)" if result.retrieval_only else ""
    print(
        f"conversation {result.conversation_id} · {result.provider}:{result.model}{label}",
        file=sys.stderr,
    )
    return 0


def _cmd_list(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    rows = agent.conversations()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": r.id,
                        "name": r.name,
                        "date": r.date,
                        "provider": r.provider,
                        "model": r.model,
                        "messages": r.messages,
                        "encrypted": r.encrypted,
                        "path": r.path,
                        "error": r.error,
                    }
                    for r in rows
                ],
                indent=1,
                ensure_ascii=False,
            )
        )
        return 0
    for r in rows:
        count = "?" if r.messages is None else str(r.messages)
        lock = "encrypted" if r.encrypted else "clear"
        line = f"{r.id}  {r.date[:16]:16}  {r.provider}:{r.model}  {count:>4} msg  {lock}  {r.name}"
        if r.error:
            line += f"  [cannot read: {r.error}]"
        print(line)
    if not rows:
        print("No conversations yet.", file=sys.stderr)
    return 0


def _cmd_show(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    text, _ = importers.export(agent, [args.id], args.format)
    print(text)
    return 0


def _cmd_export(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    text, problems = importers.export(agent, args.ids or None, args.format, _progress())
    for problem in problems:
        print(f"custodia: not exported: {problem}", file=sys.stderr)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        importers.write_private(Path(args.output), text)
        print(f"exported to {args.output} (plaintext, mode 0600)", file=sys.stderr)
    return 1 if problems else 0


def _cmd_import(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    result = importers.import_file(agent, Path(args.path), _progress())
    for conversation_id, name in result.imported:
        print(f"{conversation_id}  {name}")
    for skipped in result.skipped:
        print(f"custodia: skipped {skipped}", file=sys.stderr)
    print(
        f"imported {len(result.imported)} conversation(s)"
        + (f", {result.renamed} under a new id (theirs was taken)" if result.renamed else ""),
        file=sys.stderr,
    )
    return 0


def _cmd_search(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    _sync(agent)
    hits = agent.search(args.query, args.k)
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "conversation": h.conversation_id,
                        "name": h.name,
                        "date": h.date,
                        "index": h.index,
                        "role": h.role,
                        "score": round(h.score, 4),
                        "text": h.text,
                    }
                    for h in hits
                ],
                indent=1,
                ensure_ascii=False,
            )
        )
        return 0
    for h in hits:
        text = " ".join(h.text.split())
        print(f"{h.score:.3f}  {h.conversation_id}:{h.index}  {h.name} · {h.role}: {text[:160]}")
    if not hits:
        print("Nothing found.", file=sys.stderr)
    return 0


def _cmd_rename(args: argparse.Namespace, services: Services) -> int:
    _agent(services).rename(args.id, args.name)
    return 0


def _cmd_delete(args: argparse.Namespace, services: Services) -> int:
    if not args.yes:
        print("custodia: deleting cannot be undone; add --yes to confirm", file=sys.stderr)
        return 2
    _agent(services).delete(args.id)
    return 0


def _cmd_reindex(args: argparse.Namespace, services: Services) -> int:
    agent = _agent(services)
    report = agent.rebuild_vectors(_progress())
    print(
        f"search index rebuilt: {report.added} message(s) indexed"
        + (f", {report.skipped_files} conversation(s) unreadable" if report.skipped_files else "")
    )
    return 0


def _cmd_rotate_key(args: argparse.Namespace, services: Services) -> int:
    new_key = os.environ.get(NEW_KEY_ENV, "").strip()
    generated = False
    if not new_key and args.generate:
        new_key, generated = generate_key(), True
    if not new_key:
        if not sys.stdin.isatty():
            print(
                f"custodia: give the new key in {NEW_KEY_ENV}, or use --generate",
                file=sys.stderr,
            )
            return 2
        new_key = getpass.getpass("New conversations key (Fernet): ").strip()
    agent = _agent(services)
    before = agent.encryption_status()
    report = agent.rotate_key(new_key, _progress())
    if generated:
        print(new_key)
        print(
            "(the new key; keep it safe — without it the history cannot be read)", file=sys.stderr
        )
    print(
        f"re-encrypted {report.rotated} conversation(s)"
        + (f", {report.already} already done" if report.already else "")
        + (" (resumed an interrupted rotation)" if report.resumed else ""),
        file=sys.stderr,
    )
    for name, reason in report.failed:
        print(f"custodia: left untouched (unreadable): {name}: {reason}", file=sys.stderr)
    after = agent.encryption_status()
    if after.source != "keyring":
        where = "set CONVERSATIONS_KEY to the new key before the next start"
        if before.source == "keyring" or not after.keyring.usable:
            where += f" ({after.keyring.reason})"
        print(f"custodia: {where}", file=sys.stderr)
    return 1 if report.failed else 0


# -- wiring -----------------------------------------------------------------------------------


def _reindex_subparsers(sub: SubParsers) -> SubParsers:
    """``custodia reindex <assistant>``: shared with other assistants, created once."""
    existing = sub.choices.get("reindex") if hasattr(sub, "choices") else None
    if existing is not None:
        for action in existing._actions:
            if isinstance(action, argparse._SubParsersAction):
                return action
    parser = sub.add_parser("reindex", help="rebuild an assistant's derived search index")
    return parser.add_subparsers(dest="index", metavar="ASSISTANT", required=True)


def add_commands(sub: SubParsers) -> None:
    p = ask_subparsers(sub).add_parser(
        "conversations", help="one turn with the conversation agent (streamed)"
    )
    p.add_argument("message", help="what to say")
    p.add_argument("--conversation", metavar="ID", help="continue this conversation")
    p.add_argument(
        "--model",
        metavar="KEY",
        help="chat model: the configured one (default), retrieval-only, scripted, "
        "ollama:<model>, openai:<model>",
    )
    p.set_defaults(handler=_cmd_ask)

    conv = sub.add_parser("conversations", help="list, export, import and search conversations")
    csub = conv.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = csub.add_parser("list", help="every conversation (from the index)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_list)
    p = csub.add_parser("show", help="print one conversation")
    p.add_argument("id")
    p.add_argument("--format", choices=importers.FORMATS, default="markdown")
    p.set_defaults(handler=_cmd_show)
    p = csub.add_parser("export", help="export conversations (all without ids) as plaintext")
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--format", choices=importers.FORMATS, default="json")
    p.add_argument("--output", "-o", metavar="FILE", help="write here (0600) instead of stdout")
    p.set_defaults(handler=_cmd_export)
    p = csub.add_parser(
        "import", help="import a Custodia export or file, or a ChatGPT conversations.json/.zip"
    )
    p.add_argument("path")
    p.set_defaults(handler=_cmd_import)
    p = csub.add_parser("search", help="search past messages (decrypted locally)")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help="how many hits (default 10)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_cmd_search)
    p = csub.add_parser("rename", help="rename a conversation")
    p.add_argument("id")
    p.add_argument("name")
    p.set_defaults(handler=_cmd_rename)
    p = csub.add_parser("delete", help="delete a conversation")
    p.add_argument("id")
    p.add_argument("--yes", action="store_true", help="confirm")
    p.set_defaults(handler=_cmd_delete)

    p = _reindex_subparsers(sub).add_parser(
        "conversations", help="delete and rebuild the conversations' search index from the files"
    )
    p.set_defaults(handler=_cmd_reindex)

    p = sub.add_parser(
        "rotate-key",
        help=f"re-encrypt every conversation under a new key (from {NEW_KEY_ENV}, a prompt, "
        "or --generate); resumable",
    )
    p.add_argument("--generate", action="store_true", help="generate the new key and print it")
    p.set_defaults(handler=_cmd_rotate_key)
