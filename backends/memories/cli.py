"""Headless commands of the memory assistant.

``custodia ask memories "MESSAGE"`` runs one turn: the answer composed from the memories at
once (✓ [n]: a memory states it); while the model drafts, only a word count on a terminal's
stderr (erased); then, once, the model's words as judged (its checked answer when every
sentence passed, or its own words labelled, then what was withheld and why) and the memories
used; ``custodia memories list|add|delete|search|reembed`` manage the
memories. Results go to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from typing import Any

from backends.answers import GENERATED, MODEL, Answer, DraftProgress, render_text
from backends.assistants import Context
from backends.commands import SubParsers, ask_subparsers, positive_int
from backends.i18n import N_, _, ngettext
from backends.memories.outcomes import TurnResult
from backends.memories.service import MemoryAssistant
from backends.progress import Progress
from backends.stores.memories import Hit


def add_commands(sub: SubParsers) -> None:
    ask = ask_subparsers(sub).add_parser(
        "memories", help=_("one turn with the personal memory assistant")
    )
    ask.add_argument("message", help=_('what to say ("remember that …" stores a fact)'))
    _recall_options(ask)
    ask.add_argument(
        "--accept", action="store_true", help=_("store the facts it proposes without asking")
    )
    drafts = ask.add_mutually_exclusive_group()
    drafts.add_argument(
        "--rephrase",
        action="store_true",
        help=_("ask the model for a draft even when its drafts rarely pass the check"),
    )
    drafts.add_argument(
        "--no-draft", action="store_true", help=_("only the answer composed from the memories")
    )
    ask.set_defaults(handler=_cmd_ask)

    memories = sub.add_parser("memories", help=_("list, add, delete and search memories"))
    msub = memories.add_subparsers(dest="memories_command", metavar="ACTION", required=True)

    p = msub.add_parser("list", help=_("every memory, most recent first"))
    p.add_argument("--limit", type=positive_int, default=None, help=_("at most this many"))
    p.add_argument("--json", action="store_true", help=_("machine-readable output"))
    p.set_defaults(handler=_cmd_list)

    p = msub.add_parser("add", help=_("remember a fact"))
    p.add_argument("text")
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--force", action="store_true", help=_("keep it even when a very similar memory exists")
    )
    group.add_argument(
        "--replace",
        action="store_true",
        help=_("when a very similar memory exists, update it to this text"),
    )
    p.set_defaults(handler=_cmd_add)

    p = msub.add_parser("delete", help=_("forget a memory (exact text)"))
    p.add_argument("text")
    p.set_defaults(handler=_cmd_delete)

    p = msub.add_parser("search", help=_("the memories most similar to a query"))
    p.add_argument("query")
    _recall_options(
        p,
        default_k=10,
        threshold_help=N_(
            "minimum cosine similarity (default: half the recall threshold tuned "
            "for the embedder, as the panel's search box)"
        ),
    )
    p.add_argument("--json", action="store_true", help=_("machine-readable output"))
    p.set_defaults(handler=_cmd_search)

    p = msub.add_parser("reembed", help=_("re-embed memories written by another embedder"))
    p.set_defaults(handler=_cmd_reembed)


def _similarity(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("{text!r} is not a number").format(text=text)) from None
    if not -1.0 <= value <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(
            _("a cosine similarity is between -1 and 1, not {text}").format(text=text)
        )
    return value


def _recall_options(
    parser: argparse.ArgumentParser,
    default_k: int | None = None,
    threshold_help: str = N_(
        "minimum cosine similarity (default: the value tuned for the embedder)"
    ),
) -> None:
    parser.add_argument(
        "-k",
        type=positive_int,
        default=default_k,
        help=_("how many memories at most (default: 5 / 10)"),
    )
    parser.add_argument("--threshold", type=_similarity, default=None, help=_(threshold_help))


def _memories(context: Context) -> MemoryAssistant:
    return context.get("memories", MemoryAssistant)


def _assistant(context: Context, args: argparse.Namespace) -> MemoryAssistant:
    """The assistant, tuned by the command's ``--threshold`` and ``-k``."""
    assistant = _memories(context)
    threshold = getattr(args, "threshold", None)
    k = getattr(args, "k", None)
    if threshold is not None or k:
        settings = replace(assistant.settings, recall_threshold=threshold)
        if k:
            settings = replace(settings, recall_k=k)
        assistant.use_settings(settings)
    return assistant


def _warn_limited(assistant: MemoryAssistant) -> None:
    status = assistant.status()
    if status.recall_limited:
        print(
            _("note: {limited_recall_message} (custodia memories reembed)").format(
                limited_recall_message=status.limited_recall_message()
            ),
            file=sys.stderr,
        )


def _own_label() -> str:
    return _("the model's own words, not a memory")


def _withheld_label() -> str:
    return _("Withheld from the model's draft (not shown as an answer):")


def _cmd_ask(args: argparse.Namespace, context: Context) -> int:
    assistant = _assistant(context, args)
    _warn_limited(assistant)

    def on_answer(answer: Answer, used: tuple[Hit, ...]) -> None:
        # the composed answer, at once; the model's draft is printed only once judged
        if answer.sentences:
            print(render_text(answer, own=_own_label(), withheld=_withheld_label()), flush=True)

    progress = DraftProgress(
        _("(the model is writing a draft; it is checked before it is shown) words:")
    )
    draft = True if args.rephrase else (False if args.no_draft else None)
    try:
        result = assistant.turn(args.message, on_token=progress, on_answer=on_answer, draft=draft)
    finally:
        progress.done()
    if result.remembered is not None:
        print(result.answer)
    _print_draft(result)
    if result.draft_skipped and not args.no_draft:
        _print_no_draft(result)
    if result.remembered is None:
        print()
        _print_used(result)
    _print_proposals(assistant, result, accept=args.accept)
    return 0


def _print_draft(result: TurnResult) -> None:
    """The model's words, once judged: checked and cited, or labelled as its own; else what
    was withheld of them, or why they were not shown."""
    shown = result.shown
    if shown is None or not (shown.draft or shown.mode == MODEL):
        return
    if shown.mode in (GENERATED, MODEL):
        print(render_text(shown, own=_own_label(), withheld=_withheld_label()))
    elif shown.withheld:
        print(render_text(replace(shown, heading="", sentences=()), withheld=_withheld_label()))
    elif shown.reason:
        print(_("(The model's draft was not shown: {reason}.)").format(reason=shown.reason))


def _print_no_draft(result: TurnResult) -> None:
    if result.draft_rate is None:
        print(_("(No draft asked of {model}; --rephrase asks for one.)").format(model=result.model))
    else:
        print(
            _(
                "(No draft asked of {model}: {rate} of its drafts passed the check; "
                "--rephrase asks for one.)"
            ).format(model=result.model, rate=f"{result.draft_rate:.0%}")
        )


def _print_used(result: TurnResult) -> None:
    if result.used:
        print(
            _("Memories used (similarity ≥ {threshold:.2f} recalled; others cited):").format(
                threshold=result.threshold
            )
        )
        for number, hit in enumerate(result.used, 1):
            print(f"  [{number}] {hit.similarity:5.2f}  {hit.text}")
    else:
        print(
            _("Memories used: none (none reached similarity {threshold:.2f})").format(
                threshold=result.threshold
            )
        )


def _print_proposals(assistant: MemoryAssistant, result: TurnResult, *, accept: bool) -> None:
    """Each fact the turn proposes: stored (``--accept``), or the command that stores it."""
    for proposal in result.proposals:
        if accept:
            outcome = assistant.accept(proposal)
            print(outcome.message())
        elif proposal.kind == "update":
            print(
                _(
                    "Similar to “{existing}” ({similarity:.2f}); to update it: custodia memories "
                    "add --replace {dumps}"
                ).format(
                    existing=proposal.existing,
                    similarity=proposal.similarity,
                    dumps=json.dumps(proposal.text, ensure_ascii=False),
                )
            )
        else:
            print(
                _("Proposed memory; to keep it: custodia memories add {dumps}").format(
                    dumps=json.dumps(proposal.text, ensure_ascii=False)
                )
            )


def _memory_dict(memory: Any, similarity: float | None = None) -> dict[str, Any]:
    out = asdict(memory)
    if similarity is not None:
        out["similarity"] = round(similarity, 4)
    return out


def _cmd_list(args: argparse.Namespace, context: Context) -> int:
    assistant = _memories(context)
    memories = assistant.recent(limit=args.limit)
    if args.json:
        print(json.dumps([_memory_dict(m) for m in memories], ensure_ascii=False, indent=1))
        return 0
    for memory in memories:
        flag = (
            ""
            if memory.searchable
            else "  "
            + _("[not searchable: {dimension}-d, {embedder}]").format(
                dimension=memory.dimension, embedder=memory.embedder or _("unknown model")
            )
        )
        print(f"{memory.text}{flag}")
    total = assistant.store.count()
    if len(memories) < total:
        shown = ngettext("({shown} of {total} memory)", "({shown} of {total} memories)", total)
    else:
        shown = ngettext("({total} memory)", "({total} memories)", total)
    print(shown.format(shown=len(memories), total=total), file=sys.stderr)
    _warn_limited(assistant)
    return 0


def _cmd_add(args: argparse.Namespace, context: Context) -> int:
    assistant = _memories(context)
    outcome = assistant.remember(args.text, source="cli", force=args.force)
    if outcome.status == "near_duplicate" and args.replace:
        outcome = assistant.update(outcome.existing, outcome.text, source="cli")
    print(outcome.message())
    if outcome.status == "near_duplicate":
        print(_("Use --replace to update it, or --force to keep both."), file=sys.stderr)
        return 1
    return 0


def _cmd_delete(args: argparse.Namespace, context: Context) -> int:
    assistant = _memories(context)
    undo = assistant.delete(args.text)  # MemoryNotFoundError: printed, exit 1
    forgotten = undo.restore[0].memory.text if undo.restore else args.text
    print(_("Forgot “{forgotten}”.").format(forgotten=forgotten))
    return 0


def _cmd_search(args: argparse.Namespace, context: Context) -> int:
    assistant = _memories(context)
    threshold = args.threshold
    if threshold is None:
        threshold = assistant.recall_threshold / 2  # what the panel's search box shows
    hits = assistant.search(args.query, k=args.k or 10, threshold=threshold)
    if args.json:
        print(
            json.dumps(
                [
                    {"text": h.text, "similarity": round(h.similarity, 4), "why": h.why}
                    for h in hits
                ],
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        for hit in hits:
            print(f"{hit.similarity:5.2f}  {hit.text}")
            if hit.why:  # why recall found it, under it
                print(f"       {hit.why}")
        if not hits:
            print(_("No memories found."), file=sys.stderr)
    _warn_limited(assistant)
    return 0


def _cmd_reembed(args: argparse.Namespace, context: Context) -> int:
    assistant = _memories(context)

    def report(done: int, total: int, message: str) -> None:
        print(f"\r{done}/{total} {message}", end="", file=sys.stderr, flush=True)

    count = assistant.reembed(Progress(callback=report))
    print(file=sys.stderr)
    print(
        _("Re-embedded {count} memories with {name}.").format(
            count=count, name=assistant.embedder.name
        )
    )
    return 0
