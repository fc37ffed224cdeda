"""Headless commands of the clinical tutor::

    custodia ask tutor "QUESTION" --user NAME [-k 5] [--json]
    custodia kb import PATH [--user NAME]
    custodia kb stats [--json]

``ask tutor`` streams the answer, then lists the cited sources and why each was found; a
degraded retrieval (graph server down) is said on stderr. Every turn is audited. ``kb import``
adds Markdown/text files (a file or a folder) to NAME's own scope, or to the shared corpus
without ``--user``; re-importing unchanged files changes nothing. Results go to stdout,
progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from backends.progress import Progress
from backends.services import Services
from backends.tutor.kb import SHARED, user_scope
from backends.tutor.tutor import NOTICE, Status, Turn, get_service


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from backends.cli import ask_subparsers

    ask = ask_subparsers(sub).add_parser(
        "tutor", help="ask the clinical tutor (cited answers from the study notes; audited)"
    )
    ask.add_argument("question", help="a clinical study question")
    ask.add_argument(
        "--user", required=True, help="who asks: their own notes are searched too; audited"
    )
    ask.add_argument("-k", type=int, default=5, help="passages to retrieve and cite (default 5)")
    ask.add_argument("--json", action="store_true", help="machine-readable output")
    ask.set_defaults(handler=_cmd_ask)

    kb = sub.add_parser("kb", help="the clinical tutor's knowledge base")
    ksub = kb.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    p = ksub.add_parser("import", help="import Markdown/text notes (a file or a folder)")
    p.add_argument("path", help="a .md/.markdown/.txt file, or a folder of them")
    p.add_argument(
        "--user",
        default="",
        help="import into this user's own scope (default: the shared corpus, seen by everyone)",
    )
    p.set_defaults(handler=_cmd_import)
    p = ksub.add_parser("stats", help="documents, chunks, entities, vectors and graph")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=_cmd_stats)


def _progress() -> Progress:
    if not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, message: str) -> None:
        print(f"\r\x1b[K{message} {done}/{total}", end="", file=sys.stderr, flush=True)

    return Progress(callback=show)


def _end_progress() -> None:
    if sys.stderr.isatty():
        print("\r\x1b[K", end="", file=sys.stderr, flush=True)


def _cmd_ask(args: argparse.Namespace, services: Services) -> int:
    try:
        user_scope(args.user)
    except ValueError as err:
        print(f"custodia: {err}", file=sys.stderr)
        return 2
    tutor = get_service(services)
    if not tutor.ready:
        tutor.prepare(_progress())
        _end_progress()
    stream = not args.json

    def on_token(piece: str) -> None:
        if stream:
            print(piece, end="", flush=True)

    turn = tutor.ask(args.question, args.user, on_token=on_token, k=args.k)
    if args.json:
        print(json.dumps(_turn_json(turn), ensure_ascii=False, indent=2))
    else:
        print()
        _print_sources(turn)
    for line in turn.degraded:
        print(f"note: degraded retrieval — {line}", file=sys.stderr)
    print(f"({NOTICE} Audit record #{turn.audit_seq}.)", file=sys.stderr)
    return 0


def _print_sources(turn: Turn) -> None:
    if not turn.passages:
        print("\nNo passage of the notes matched this question.")
        return
    print("\nSources:")
    for p in turn.passages:
        mark = "*" if p.number in turn.cited else " "
        print(f" {mark}[{p.number}] {p.title} — {p.source} ({p.chunk_id})")
        print(f"      found by: {p.why()}")
    if not turn.retrieval_only and not turn.cited:
        print("(the answer cites none of them by number)")


def _turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "question": turn.question,
        "answer": turn.answer,
        "model": turn.model,
        "retrieval_only": turn.retrieval_only,
        "cited": list(turn.cited),
        "degraded": list(turn.degraded),
        "audit_seq": turn.audit_seq,
        "passages": [
            {
                "number": p.number,
                "chunk_id": p.chunk_id,
                "title": p.title,
                "source": p.source,
                "scope": p.scope,
                "score": p.score,
                "found_by": [
                    {"method": r.method, "rank": r.rank, "score": r.score, "detail": r.detail}
                    for r in p.reasons
                ],
                "text": p.text,
            }
            for p in turn.passages
        ],
    }


def _cmd_import(args: argparse.Namespace, services: Services) -> int:
    user = args.user.strip()
    if user:
        try:
            user_scope(user)
        except ValueError as err:
            print(f"custodia: {err}", file=sys.stderr)
            return 2
    tutor = get_service(services)
    report = tutor.import_path(Path(args.path).expanduser(), user or None, _progress())
    _end_progress()
    where = f"{user}'s notes" if user else "the shared corpus (seen by every user)"
    print(f"Imported into {where}: {report.line()}")
    for reason in report.skipped:
        print(f"  skipped: {reason}", file=sys.stderr)
    status = tutor.status()
    if not status.graph_ok:
        print(f"note: the graph was not updated: {status.graph_message}", file=sys.stderr)
    return 0


def _status_json(status: Status) -> dict[str, Any]:
    return {
        "documents": status.documents,
        "chunks": status.chunks,
        "entities": status.entities,
        "vectors": status.vectors,
        "users": list(status.users),
        "scopes": {s: {"documents": d, "chunks": c} for s, (d, c) in status.by_scope.items()},
        "graph": {
            "kind": status.graph_kind,
            "ok": status.graph_ok,
            "relations": status.graph_relations,
            "message": status.graph_message,
        },
        "embedder": status.embedder,
    }


def _cmd_stats(args: argparse.Namespace, services: Services) -> int:
    tutor = get_service(services)
    status = tutor.prepare(_progress())
    _end_progress()
    if args.json:
        print(json.dumps(_status_json(status), indent=2, ensure_ascii=False))
        return 0
    print(
        f"{status.documents} documents, {status.chunks} chunks, {status.entities} entities, "
        f"{status.vectors} vectors ({status.embedder})"
    )
    for scope, (docs, chunks) in sorted(status.by_scope.items()):
        label = "shared corpus" if scope == SHARED else scope
        print(f"  {label}: {docs} documents, {chunks} chunks")
    graph = f"graph ({status.graph_kind}): "
    if status.graph_ok:
        print(graph + f"{status.graph_relations} relations")
    else:
        print(graph + f"unavailable — {status.graph_message}")
    return 0
