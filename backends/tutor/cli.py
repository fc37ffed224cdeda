"""Headless commands of the clinical tutor::

    custodia ask tutor "QUESTION" --user NAME [-k 5] [--json]
    custodia kb import PATH [--user NAME]
    custodia kb forget-user NAME
    custodia kb stats [--json]

``ask tutor`` prints the checked answer (CT9: how it was made, the answer shown as fact, the
model's own answer with each unsupported sentence marked when it is not the one shown), then
lists the cited sources and why each was found; a
degraded retrieval (graph or vector store down) is said on stderr. Every turn is audited, a
turn stopped by Ctrl+C too (as stopped; exit 130). ``kb import`` adds Markdown/text files (a
file or a folder) to NAME's own scope, or to the shared corpus when ``--user`` is left out;
re-importing unchanged files changes nothing. ``kb forget-user`` deletes NAME's own notes
from the knowledge base and its derived stores. Results go to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from backends.assistants import Context
from backends.commands import SubParsers, ask_subparsers
from backends.i18n import _, number, speaking
from backends.progress import Progress
from backends.tutor.answer import GENERATED, NOTICE, reason_text
from backends.tutor.indexing import Status
from backends.tutor.kb import SHARED, ScopeError, collect_files, user_scope
from backends.tutor.retrieval import CONTEXT_PASSAGES, MAX_PASSAGES
from backends.tutor.service import Turn, TurnInterrupted, TutorService


def passages_count(text: str) -> int:
    """argparse type of ``-k``: a whole number from 1 to :data:`MAX_PASSAGES`."""
    try:
        value = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("{text!r} is not a whole number").format(text=text)
        ) from None
    if not 1 <= value <= MAX_PASSAGES:
        raise argparse.ArgumentTypeError(
            _("must be from 1 to {most} passages, not {value}").format(
                most=MAX_PASSAGES, value=value
            )
        )
    return value


def question_text(text: str) -> str:
    """argparse type of the question: not blank (a usage error, exit 2, like a blank user)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(_("the question is empty: type a question"))
    return text


def user_name(text: str) -> str:
    """argparse type of ``--user`` / NAME: a valid user name, stripped (never blank)."""
    try:
        user_scope(text)
    except ScopeError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text.strip()


def add_commands(sub: SubParsers) -> None:
    ask = ask_subparsers(sub).add_parser(
        "tutor", help=_("ask the clinical tutor (cited answers from the study notes; audited)")
    )
    ask.add_argument("question", type=question_text, help=_("a clinical study question"))
    ask.add_argument(
        "--user",
        required=True,
        type=user_name,
        help=_("who asks: their own notes are searched too; audited"),
    )
    ask.add_argument(
        "-k",
        type=passages_count,
        default=CONTEXT_PASSAGES,
        help=_("passages to retrieve and cite, 1 to {most} (default {default})").format(
            most=MAX_PASSAGES, default=CONTEXT_PASSAGES
        ),
    )
    ask.add_argument(
        "--after",
        metavar="QUESTION",
        type=question_text,
        default=None,
        help=_("the earlier question this one follows up ('and in children?' is read with it)"),
    )
    ask.add_argument("--json", action="store_true", help=_("machine-readable output"))
    ask.set_defaults(handler=_cmd_ask)

    kb = sub.add_parser("kb", help=_("the clinical tutor's knowledge base"))
    ksub = kb.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    p = ksub.add_parser("import", help=_("import Markdown/text notes (a file or a folder)"))
    p.add_argument("path", help=_("a .md/.markdown/.txt file, or a folder of them"))
    p.add_argument(
        "--user",
        type=user_name,
        default=None,
        help=_("import into this user's own scope (left out: the shared corpus, seen by everyone)"),
    )
    p.set_defaults(handler=_cmd_import)
    p = ksub.add_parser(
        "forget-user",
        help=_("delete a user's own imported notes (knowledge base, vectors, graph)"),
    )
    p.add_argument("user", metavar="NAME", type=user_name, help=_("whose notes to delete"))
    p.set_defaults(handler=_cmd_forget_user)
    p = ksub.add_parser("stats", help=_("documents, chunks, entities, vectors and graph"))
    p.add_argument("--json", action="store_true", help=_("machine-readable output"))
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


@contextmanager
def _one_interrupt() -> Iterator[None]:
    """Ctrl+C raises ``KeyboardInterrupt`` once; a second one while the interrupted turn is
    being audited is ignored, so the record is written before exiting (only possible in
    the main thread; elsewhere nothing changes)."""
    interrupted = False

    def handler(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupted
        if interrupted:
            return
        interrupted = True
        raise KeyboardInterrupt

    try:
        previous: Callable[[int, FrameType | None], Any] | int | None = signal.signal(
            signal.SIGINT, handler
        )
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(
            signal.SIGINT, previous if previous is not None else signal.default_int_handler
        )


def _cmd_ask(args: argparse.Namespace, context: Context) -> int:
    tutor = context.get("tutor", TutorService)
    if not tutor.ready:
        tutor.prepare(_progress())
        _end_progress()
    # the model's draft is not an answer: it is checked before anything is shown (CT9), so
    # the terminal shows only that the model is writing, on stderr
    drafted = [0]
    show_draft = sys.stderr.isatty()

    def on_token(piece: str) -> None:
        drafted[0] += len(piece.split())
        if show_draft:
            print(
                "\r\x1b[K"
                + _(
                    "the model is drafting an answer ({words} words; it is checked "
                    "against the notes before it is shown)"
                ).format(words=drafted[0]),
                end="",
                file=sys.stderr,
                flush=True,
            )

    try:
        with _one_interrupt():
            turn = tutor.ask(
                args.question, args.user, on_token=on_token, k=args.k, earlier=args.after or ""
            )
    except TurnInterrupted as stopped:
        _end_progress()
        if not args.json:
            with speaking(stopped.turn.retrieval.language):
                _print_answer(stopped.turn)
        print(
            "custodia: "
            + _("stopped; the turn was recorded in the audit log as #{seq} (stopped)").format(
                seq=stopped.turn.audit_seq
            ),
            file=sys.stderr,
        )
        raise
    _end_progress()
    if args.json:
        print(json.dumps(_turn_json(turn), ensure_ascii=False, indent=2))
    # the answer's frame speaks the question's language, as its heading does (issue 27)
    with speaking(turn.retrieval.language):
        if not args.json:
            _print_answer(turn)
            _print_sources(turn)
        for line in turn.degraded:
            method, colon, why = line.partition(": ")  # "graph: why" (method stays English)
            shown = f"{_(method)}: {why}" if colon else line
            print(_("note: degraded retrieval — {0}").format(shown), file=sys.stderr)
        print(
            "(" + _(NOTICE) + " " + _("Audit record #{seq}.").format(seq=turn.audit_seq) + ")",
            file=sys.stderr,
        )
    return 0


def _print_answer(turn: Turn) -> None:
    """The heading (how the answer was made), the answer shown as fact, then the model's own
    answer when it is not the one shown, each unsupported sentence marked."""
    g = turn.grounding
    if g is None:
        print(turn.answer)
        return
    if turn.follow_up_note:
        print(f"({turn.follow_up_note})")
    print(g.heading)
    print(turn.answer)
    if g.mode == GENERATED or not g.sentences:
        return
    print(
        "\n"
        + _("The model's answer, not shown as fact ({reason}):").format(
            reason=reason_text(g.reason)
        )
    )
    for sentence in g.sentences:
        if sentence.supported:
            print(f"  ✓ {sentence.text} [{sentence.number}]")
        else:
            print(f"  ✗ {sentence.text}")
            print("      " + _("unsupported by your notes: {0}").format(sentence.reason_text()))


def _print_sources(turn: Turn) -> None:
    if not turn.passages:
        print("\n" + _("No passage of the notes matched this question."))
        return
    print("\n" + _("Sources:"))
    for p in turn.passages:
        mark = "*" if p.number in turn.cited else " "
        print(f" {mark}[{p.number}] {p.title} — {p.source} ({p.chunk_id})")
        print("      " + _("found by: {0}").format(p.why()))
    if turn.grounding is not None and not turn.grounding.covered:
        print(_("(none of them answers the question: the notes do not cover it)"))


def _turn_json(turn: Turn) -> dict[str, Any]:
    return {
        "question": turn.question,
        "follows": turn.retrieval.follows,
        "carried": turn.retrieval.carried,
        "answer": turn.answer,
        **_grounding_json(turn),
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


def _grounding_json(turn: Turn) -> dict[str, Any]:
    g = turn.grounding
    if g is None:
        return {}
    return {
        "heading": g.heading,
        "mode": g.mode,
        "language": g.language,
        "covered": g.covered,
        "coverage": round(g.coverage, 3),
        "generated": g.generated,
        "why_not_generated": g.reason,
        "sentences": [c.as_dict() for c in g.sentences],
        "quotes": [{"cites": q.number, "text": q.text} for q in g.quotes],
    }


def _cmd_import(args: argparse.Namespace, context: Context) -> int:
    user: str | None = args.user  # None: the shared corpus; never "" (refused by user_name)
    path = Path(args.path).expanduser()
    if not collect_files(path):
        print(
            "custodia: " + _("{path}: no Markdown or text files to import").format(path=path),
            file=sys.stderr,
        )
        return 1
    tutor = context.get("tutor", TutorService)
    report = tutor.import_path(path, user, _progress())
    _end_progress()
    where = (
        _("{user}'s notes").format(user=user)
        if user is not None
        else _("the shared corpus (seen by every user)")
    )
    for reason in report.unreadable:
        print("  " + _("cannot read: {0}").format(reason), file=sys.stderr)
    for reason in report.skipped:
        print("  " + _("skipped: {0}").format(reason), file=sys.stderr)
    if report.unreadable and not report.imported and not report.removed:
        print("custodia: " + _("nothing was imported into {0}").format(where), file=sys.stderr)
        return 1
    print(_("Imported into {where}: {what}").format(where=where, what=report.line()))
    if report.changed:
        status = tutor.status()
        if not status.vector_ok:
            print(
                _("note: the vector store was not updated: {0}").format(status.vector_message),
                file=sys.stderr,
            )
        if not status.graph_ok:
            print(
                _("note: the graph was not updated: {0}").format(status.graph_message),
                file=sys.stderr,
            )
    return 0


def _cmd_forget_user(args: argparse.Namespace, context: Context) -> int:
    done = context.get("tutor", TutorService).forget_user(args.user, _progress())
    _end_progress()
    print(
        _(
            "Deleted {user}'s own notes: {documents} documents, {chunks} passages "
            "(knowledge base, keyword index, vectors, graph)"
        ).format(user=done.user, documents=done.documents, chunks=done.chunks)
    )
    for line in done.pending:
        print(
            _(
                "note: {line} — what it still holds of {scope} is removed when it is next "
                "reachable (run this command again, or any tutor command)"
            ).format(line=line, scope=done.scope),
            file=sys.stderr,
        )
    if done.documents and not context.config.chroma_url:
        print(
            _(
                "note: Chroma may keep traces of the deleted vectors in its own files under "
                "{folder} until it compacts them; for a complete removal, delete that folder "
                "while Custodia is closed (it is rebuilt at the next start)"
            ).format(folder=context.config.chroma_path),
            file=sys.stderr,
        )
    print(
        _("The audit log is not changed: `custodia forget NAME` erases the person there."),
        file=sys.stderr,
    )
    return 0


def _status_json(status: Status) -> dict[str, Any]:
    return {
        "documents": status.documents,
        "chunks": status.chunks,
        "entities": status.entities,
        "vectors": status.vectors,
        "users": list(status.users),
        "scopes": {s: {"documents": d, "chunks": c} for s, (d, c) in status.by_scope.items()},
        "vector": {"ok": status.vector_ok, "message": status.vector_message},
        "graph": {
            "kind": status.graph_kind,
            "ok": status.graph_ok,
            "relations": status.graph_relations,
            "message": status.graph_message,
        },
        "embedder": status.embedder,
        "spanish_vectors": {
            "embedder": status.spanish_embedder,
            "count": status.spanish_vectors,
            "message": status.spanish_message,
        },
    }


def _cmd_stats(args: argparse.Namespace, context: Context) -> int:
    tutor = context.get("tutor", TutorService)
    status = tutor.prepare(_progress())
    _end_progress()
    if args.json:
        print(json.dumps(_status_json(status), indent=2, ensure_ascii=False))
        return 0
    vectors = (
        _("{count} vectors ({embedder})").format(
            count=number(status.vectors), embedder=status.embedder
        )
        if status.vector_ok
        else _("vectors unavailable — {0}").format(status.vector_message)
    )
    print(
        _("{documents} documents, {chunks} chunks, {entities} entities, ").format(
            documents=number(status.documents),
            chunks=number(status.chunks),
            entities=number(status.entities),
        )
        + vectors
    )
    for scope, (docs, chunks) in sorted(status.by_scope.items()):
        label = _("shared corpus") if scope == SHARED else scope
        print(
            "  "
            + _("{label}: {documents} documents, {chunks} chunks").format(
                label=label, documents=number(docs), chunks=number(chunks)
            )
        )
    if status.spanish_message:
        print(_("multilingual vectors unavailable — {0}").format(status.spanish_message))
    elif status.spanish_embedder:
        print(
            _("Spanish questions also: {count} vectors ({embedder})").format(
                count=number(status.spanish_vectors), embedder=status.spanish_embedder
            )
        )
    graph = _("graph ({kind}): ").format(kind=status.graph_kind)
    if status.graph_ok:
        print(graph + _("{count} relations").format(count=number(status.graph_relations)))
    else:
        print(graph + _("unavailable — {0}").format(status.graph_message))
    return 0
