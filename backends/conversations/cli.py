"""Headless commands of the conversation agent.

``custodia ask conversations "MESSAGE" [--conversation ID] [--model KEY]``,
``custodia conversations list|show|export|import|search|rename|delete``,
``custodia reindex conversations`` and ``custodia rotate-key``.
"""

from __future__ import annotations

import argparse
import functools
import getpass
import json
import os
import sys
from dataclasses import replace
from pathlib import Path

from backends import answers, failures
from backends.answers import GENERATED, Answer, render_text
from backends.assistants import Context, Handler
from backends.commands import (
    PIPE_CLOSED,
    SubParsers,
    ask_subparsers,
    reindex_subparsers,
    silence_stdout,
)
from backends.conversations import history as history_answers
from backends.conversations import importers
from backends.conversations.errors import HistoryWrongKeyError, TurnFailedError, error_text
from backends.conversations.keychange import EncryptionStatus
from backends.conversations.keys import generate_key, key_id, validate_key
from backends.conversations.naming import fit_name, repair_text, repaired_notice, tidy_name
from backends.conversations.service import ConversationAgent
from backends.conversations.turn import TurnResult
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _
from backends.i18n import number as written
from backends.progress import Progress

#: environment variable read by ``rotate-key`` for the new key (never a command-line argument:
#: arguments are visible to every user of the machine)
NEW_KEY_ENV = "CUSTODIA_NEW_CONVERSATIONS_KEY"
#: ... and for a new passphrase (``rotate-key --passphrase``); else it is asked with getpass
NEW_PASSPHRASE_ENV = "CUSTODIA_NEW_CONVERSATIONS_PASSPHRASE"


class _StdoutClosed(Exception):
    """Whoever read our output went away (``custodia conversations show ID | head``)."""


def _emit(text: str, end: str = "\n") -> None:
    """Write a result to stdout; :class:`_StdoutClosed` when its reader has gone."""
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        raise _StdoutClosed from None


def _quiet_when_stdout_closes(handler: Handler) -> Handler:
    """A closed stdout ends the command quietly with status 141 (no traceback)."""

    @functools.wraps(handler)
    def run(args: argparse.Namespace, context: Context) -> int:
        try:
            return handler(args, context)
        except _StdoutClosed:
            silence_stdout()
            return PIPE_CLOSED

    return run


def _progress() -> Progress:
    """Progress printed on one stderr line when stderr is a terminal."""
    if not sys.stderr.isatty():
        return Progress()

    def show(done: int, total: int, message: str) -> None:
        print(f"\r\033[K{message} {done}/{total}", end="", file=sys.stderr, flush=True)
        if total and done >= total:
            print(file=sys.stderr)

    return Progress(callback=show)


def _agent(context: Context) -> ConversationAgent:
    """The running process's agent, its index reconciled with the files."""
    agent = context.get("conversations", ConversationAgent)
    agent.start()
    return agent


def _sync(agent: ConversationAgent) -> None:
    report = agent.sync_vectors(_progress())
    if report.added or report.dropped:
        print(
            _("search index: {added} message(s) indexed, {dropped} dropped").format(
                added=report.added, dropped=report.dropped
            ),
            file=sys.stderr,
        )


def _warn(message: str) -> None:
    print(f"custodia: {message}", file=sys.stderr)


def _continue_hint(conversation_id: str) -> str:
    return (
        f"conversation {conversation_id} · continue it with: "
        f'custodia ask conversations --conversation {conversation_id} "..."'
    )


# -- handlers ---------------------------------------------------------------------------------


def _own_label() -> str:
    return _("the model's own words, not from your conversations")


def _withheld_label() -> str:
    return _("Withheld from the model's answer (not shown as an answer):")


class _AnswerOutput:
    """How one turn's answer reaches stdout: streamed as it comes, or printed once judged;
    a closed stdout stops the copy (the answer is still saved whole)."""

    def __init__(self, message: str) -> None:
        # A draft that must be checked before it is shown — a history answer's, or the
        # model's words on what the user tells (no number, date or name of its own:
        # `history.tells`) — is printed once judged; while it runs, only a word count on a
        # terminal's stderr. The model's words on anything else stream as they come,
        # labelled as its own when done.
        self.streams = not history_answers.history_question(message) and not history_answers.tells(
            message
        )
        self.closed = False
        #: the conversation the message was saved in (empty until it is on disk)
        self.saved: list[str] = []
        #: a history question's answer, shown at once from the past messages
        self.composed: list[Answer] = []
        self.pieces: list[str] = []
        self.progress = answers.DraftProgress(
            _("(the model is writing; it is checked before it is shown) words:")
        )

    def token(self, piece: str) -> None:
        if self.closed:
            return  # the answer is still saved whole; only the copy on stdout stops
        try:
            _emit(piece, end="")
        except _StdoutClosed:
            self.closed = True
            silence_stdout()

    def say(self, text: str) -> None:
        """A result line: a closed stdout ends it quietly."""
        self.token(text + "\n")

    def on_answer(self, answer: Answer, passages: tuple[str, ...]) -> None:
        """A history question: the past messages that answer it, at once."""
        self.composed.append(answer)
        self.token(render_text(answer) + "\n")

    def draft_token(self, piece: str) -> None:
        if self.streams:
            self.pieces.append(piece)
            self.token(piece)
        else:
            self.progress(piece)

    def end_line(self) -> None:
        """End the streamed answer's line (unless stdout is gone)."""
        if self.closed:
            return
        try:
            _emit("")
        except _StdoutClosed:
            self.closed = True
            silence_stdout()

    def show(self, result: TurnResult) -> None:
        """What is said once the answer is judged (see :class:`backends.answers.Answer`)."""
        shown = result.shown
        if shown is None or self.closed:
            return
        if self.streams and not result.retrieval_only:
            # what streamed is the model's own: said so, with what was withheld and why
            self.say(f"({shown.heading})" if shown.heading else "")
            if shown.withheld:
                self._withheld(shown)
        elif not self.composed and not result.retrieval_only:
            # the model's words, once, as the window shows them: checked against a past
            # message (✓ [n]), its own (labelled), or withheld with why
            self.say(render_text(shown, own=_own_label(), withheld=_withheld_label()))
            for number in shown.cited:
                passage = result.context_passages[number - 1]
                self.say(f"  [{number}] {passage.split(']', 1)[0].lstrip('[')}")
        else:
            self._history_answer(shown, result)

    def _history_answer(self, shown: Answer, result: TurnResult) -> None:
        """The past messages a history answer quotes, and what became of the model's draft."""
        for number, (cid, index) in enumerate(result.quoted, 1):
            self.say(
                _("  [{number}] conversation {cid}, message {value}").format(
                    number=number, cid=cid, value=index + 1
                )
            )
        if self.composed and shown.mode == GENERATED:
            self.say(render_text(shown, own=_own_label(), withheld=_withheld_label()))
        elif shown.withheld:
            self._withheld(shown)
        elif shown.draft and shown.reason:
            self.say(_("(The model's draft was not shown: {reason}.)").format(reason=shown.reason))
        if result.draft_skipped:
            self.say(_("(No draft asked of the model: its drafts rarely pass; --rephrase asks.)"))

    def _withheld(self, shown: Answer) -> None:
        self.say(render_text(replace(shown, heading="", sentences=()), withheld=_withheld_label()))

    def stopped_early(self, why: str) -> None:
        """The turn ended before its answer: the line ended, and where the message is."""
        self.progress.done()
        self.end_line()
        _warn(why)


def _cmd_ask(args: argparse.Namespace, context: Context) -> int:
    agent = _agent(context)
    agent.check_writable()  # before the search index is touched: the key is wrong anyway
    try:
        _sync(agent)
    except CustodiaEnvironmentError as err:  # search context is optional: the turn goes on
        _warn(_("past conversations not searchable: {0}").format(err))
    output = _AnswerOutput(args.message)
    draft = True if args.rephrase else (False if args.no_draft else None)
    try:
        result = agent.ask(
            args.message,
            args.conversation,
            args.model,
            on_token=output.draft_token,
            on_saved=output.saved.append,
            on_answer=output.on_answer,
            draft=draft,
        )
    except KeyboardInterrupt:
        if not output.saved:
            output.stopped_early("interrupted; nothing was saved")
            return 130
        output.stopped_early(
            "interrupted — what was said is kept (a cut-short answer is marked stopped)"
        )
        print(_continue_hint(output.saved[0]), file=sys.stderr)
        return 130
    except TurnFailedError as err:
        output.stopped_early(str(err))
        print(_continue_hint(err.conversation_id), file=sys.stderr)
        return 1
    except BaseException:
        output.progress.done()
        if output.saved:  # the message is on disk whatever went wrong: say where
            output.end_line()
            print(_continue_hint(output.saved[0]), file=sys.stderr)
        raise
    output.progress.done()
    if output.pieces:
        output.end_line()
    if result.notice:
        _warn(result.notice)
    output.show(result)
    label = " (retrieval-only mode)" if result.retrieval_only else ""
    print(
        _("conversation {conversation_id} · {provider}:{model}{label}").format(
            conversation_id=result.conversation_id,
            provider=result.provider,
            model=result.model,
            label=label,
        ),
        file=sys.stderr,
    )
    return PIPE_CLOSED if output.closed else 0


def _cmd_list(args: argparse.Namespace, context: Context) -> int:
    agent = _agent(context)
    rows = agent.conversations()
    if args.json:
        _emit(
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
        lock = _("encrypted") if r.encrypted else _("clear")
        # one line per conversation, whatever a hand-edited file holds
        name = fit_name(r.name)
        line = f"{r.id}  {r.date[:16]:16}  {r.provider}:{r.model}  {count:>4} msg  {lock}  {name}"
        if r.error:
            line += "  [" + _("cannot read: {0}").format(tidy_name(error_text(r.error))) + "]"
        _emit(line)
    if not rows:
        print(_("No conversations yet."), file=sys.stderr)
    return 0


def _cmd_show(args: argparse.Namespace, context: Context) -> int:
    agent = _agent(context)
    text, _ = importers.export(agent, [args.id], args.format)
    _emit(text)
    return 0


def _cmd_export(args: argparse.Namespace, context: Context) -> int:
    target = None if args.output in (None, "-") else Path(args.output)
    if target is not None:
        importers.check_target(target)  # before any work: a folder, a missing folder
    agent = _agent(context)
    text, problems = importers.export(agent, args.ids or None, args.format, _progress())
    for problem in problems:
        _warn(_("not exported: {0}").format(problem))
    if target is None:
        _emit(text, end="")
    else:
        importers.write_private(target, text)
        print(
            _("exported to {target} (plaintext, mode 0600)").format(target=target), file=sys.stderr
        )
    return 1 if problems else 0


def _cmd_import(args: argparse.Namespace, context: Context) -> int:
    agent = _agent(context)
    result = importers.import_file(agent, Path(args.path), _progress())
    for conversation_id, name in result.imported:
        _emit(f"{conversation_id}  {name}")
    for skipped in result.skipped:
        _warn(_("skipped {0}").format(skipped))
    for duplicate in result.duplicates:
        _warn(_("skipped {0}: already here (the same messages)").format(duplicate))
    for notice in result.notices:
        _warn(notice)
    for failed in result.failed:
        _warn(_("not imported: {0}").format(failed))
    print(
        f"imported {len(result.imported)} conversation(s)"
        + (f", {result.renamed} under a new id (theirs was taken)" if result.renamed else "")
        + (f"; {len(result.duplicates)} already here, skipped (above)" if result.duplicates else "")
        + (f"; {len(result.failed)} not imported (above)" if result.failed else ""),
        file=sys.stderr,
    )
    return 1 if result.failed else 0


def _unsearched_note(agent: ConversationAgent) -> str:
    """How many conversations could not be read (so were not searched), why, and what to do;
    "" when every one was searched."""
    reasons = agent.unreadable_reasons()
    if not reasons:
        return ""
    total = sum(reasons.values())
    why = ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items()))
    hints: list[str] = []
    if "key required" in reasons:
        hints.append(_("set CONVERSATIONS_KEY to their key to search them"))
    if "wrong key" in reasons:
        problem = agent.key_problem()
        hint = _("they are encrypted under another key than the one set here")
        if isinstance(problem, HistoryWrongKeyError):
            hint += " " + _("(theirs: key id {ids}; a mistyped key?)").format(
                ids=", ".join(problem.key_ids)
            )
        hints.append(hint)
    if set(reasons) - {"key required", "wrong key"}:
        hints.append(_("`custodia conversations list` says why for each"))
    names = sorted(r.file for r in agent.conversations() if not r.readable)
    more = len(names) - 5
    shown = ", ".join(names[:5])
    if more > 0:
        shown += " " + _("and {more} more").format(more=more)
    return (
        _("{total} conversation(s) could not be read and were not searched ({why}): ").format(
            total=total, why=why
        )
        + "; ".join(hints)
        + (" — " + _("not searched: {shown}").format(shown=shown) if shown else "")
    )


def _cmd_search(args: argparse.Namespace, context: Context) -> int:
    agent = _agent(context)
    _sync(agent)
    notice = repaired_notice(repair_text(args.query)[1], "the query")
    if notice:
        _warn(notice)
    hits = agent.search(args.query, args.k)
    if args.json:
        _emit(
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
    else:
        for h in hits:
            text = " ".join(h.text.split())
            _emit(
                f"{h.score:.3f}  {h.conversation_id}:{h.index}  {fit_name(h.name)} · "
                f"{h.role}: {text[:160]}"
            )
        if not hits:
            print(_("Nothing found."), file=sys.stderr)
    note = _unsearched_note(agent)
    if note:
        _warn(note)
    return 0


def _cmd_rename(args: argparse.Namespace, context: Context) -> int:
    _agent(context).rename(args.id, args.name)
    return 0


def _cmd_delete(args: argparse.Namespace, context: Context) -> int:
    if not args.yes:
        _warn(_("deleting cannot be undone; add --yes to confirm"))
        return 2
    _agent(context).delete(args.id)
    return 0


def _cmd_reindex(args: argparse.Namespace, context: Context) -> int:
    agent = _agent(context)
    report = agent.rebuild_vectors(_progress())
    unreadable = sorted(r.file for r in agent.conversations() if not r.readable)
    _emit(
        _("search index rebuilt: {added} message(s) indexed").format(added=report.added)
        + (
            ", " + _("{count} conversation(s) unreadable").format(count=len(unreadable))
            if unreadable
            else ""
        )
    )
    if unreadable:  # named, like a search names what it could not search
        _warn(_("not indexed (unreadable): {0}").format(", ".join(unreadable)))
    return 0


def _cmd_rotate_key(args: argparse.Namespace, context: Context) -> int:
    new_key = os.environ.get(NEW_KEY_ENV, "").strip()
    if new_key:  # checked first, and named: it is not "the conversations key"
        new_key = validate_key(
            new_key,
            N_("the new key set in the environment"),
            N_("fix it, or unset it and use `custodia rotate-key --generate` to have one made"),
            NEW_KEY_ENV,
        )
    agent = _agent(context)  # a malformed CONVERSATIONS_KEY is reported here, by name
    generated = False
    if args.passphrase:
        return _rotate_to_passphrase(agent)
    # an unfinished rotation whose new key is kept here: finish it with that key
    resume, kept_in = ("", "") if new_key else agent.saved_pending_key()
    if resume:
        new_key = resume
        print(
            _(
                "finishing the unfinished key rotation with its new key (key id {key_id}), kept "
                "in {kept_in}"
            ).format(key_id=key_id(resume), kept_in=kept_in),
            file=sys.stderr,
        )
    if not new_key and args.generate:
        new_key, generated = generate_key(), True
    if not new_key:
        if not sys.stdin.isatty():
            # the variable's name is the details (issue 30)
            _warn(
                failures.with_details(
                    _("give the new key in the environment, or use --generate"), NEW_KEY_ENV
                )
            )
            return 2
        new_key = validate_key(
            getpass.getpass(_("New conversations key: ")),
            N_("the new key typed"),
            N_("type it again, or use --generate to have one made"),
        )
    before = agent.encryption_status()

    def show(where: str) -> None:
        """The generated key, shown once it is saved and before any file is under it."""
        if not generated:
            return
        _emit(new_key)
        said = _("the new key; keep it safe — without it the history cannot be read")
        if where:
            said += "; " + _("until the rotation is finished it is also kept in {0}").format(where)
        print(f"({said})", file=sys.stderr)

    # refused, before anything changes, when the history is under a key not set here
    report = agent.rotate_key(new_key, _progress(), generated=generated, on_key_saved=show)
    print(
        _("re-encrypted {count} conversation(s)").format(count=written(report.rotated))
        + (", " + _("{count} already done").format(count=report.already) if report.already else "")
        + (" " + _("(resumed an interrupted rotation)") if report.resumed else ""),
        file=sys.stderr,
    )
    for name, reason in report.failed:
        _warn(_("left untouched (unreadable): {name}: {reason}").format(name=name, reason=reason))
    _advise_where_kept(before, agent.encryption_status())
    return 1 if report.failed else 0


def _advise_where_kept(before: EncryptionStatus, after: EncryptionStatus) -> None:
    """After a rotation: what to do so the next start has the new key, unless the OS
    keyring keeps it."""
    if after.source == "keyring":
        return
    where = _("set the new key in the environment before the next start")
    if before.source == "keyring" or not after.keyring.usable:
        reason, details = failures.split(_(after.keyring.reason))
        where += f" ({reason})"
    else:
        details = ""
    if not after.keyring.usable:  # nothing keeps it here: a passphrase needs no keyring
        where += "; " + _("or use `custodia rotate-key --passphrase`, which needs no keyring")
    # the variable's name is the details (issue 30)
    _warn(failures.with_details(where, "; ".join(filter(None, ("CONVERSATIONS_KEY", details)))))


def _rotate_to_passphrase(agent: ConversationAgent) -> int:
    """``rotate-key --passphrase``: the new key is derived from a passphrase (Scrypt); its
    salt is saved in ``conversations/.kdf.json`` before any file is rewritten, the key
    itself nowhere. Later starts take the passphrase from CONVERSATIONS_PASSPHRASE."""
    passphrase = os.environ.get(NEW_PASSPHRASE_ENV, "")
    if not passphrase:
        if not sys.stdin.isatty():
            _warn(
                failures.with_details(
                    _("give the new passphrase in the environment, or run this in a terminal"),
                    NEW_PASSPHRASE_ENV,
                )
            )
            return 2
        passphrase = getpass.getpass(_("New passphrase for the conversations: "))
        if getpass.getpass(_("The same passphrase again: ")) != passphrase:
            _warn(_("the two passphrases differ; nothing was changed"))
            return 2
    print(_("deriving the key from the passphrase (about half a second)…"), file=sys.stderr)
    new_key = agent.key_from_passphrase(passphrase, new=True)
    report = agent.rotate_key(new_key, _progress(), passphrase=True)
    print(
        _("re-encrypted {count} conversation(s) under the passphrase's key (key id {id})").format(
            count=report.rotated, id=key_id(new_key)
        )
        + (", " + _("{count} already done").format(count=report.already) if report.already else "")
        + (" " + _("(resumed an interrupted rotation)") if report.resumed else ""),
        file=sys.stderr,
    )
    for name, reason in report.failed:
        _warn(_("left untouched (unreadable): {name}: {reason}").format(name=name, reason=reason))
    _warn(
        failures.with_details(
            _(
                "set the passphrase in the environment (and unset the key there) for the next "
                "start; the key is never stored, the passphrase gives it back"
            ),
            "CONVERSATIONS_PASSPHRASE; CONVERSATIONS_KEY",
        )
    )
    return 1 if report.failed else 0


# -- wiring -----------------------------------------------------------------------------------


def add_commands(sub: SubParsers) -> None:
    p = ask_subparsers(sub).add_parser(
        "conversations", help=_("one turn with the conversation agent (streamed)")
    )
    p.add_argument("message", help=_("what to say"))
    p.add_argument("--conversation", metavar="ID", help=_("continue this conversation"))
    p.add_argument(
        "--model",
        metavar="KEY",
        help=_(
            "chat model: the configured one (default), retrieval-only, scripted, "
            "ollama:<model>, openai:<model>"
        ),
    )
    drafts = p.add_mutually_exclusive_group()
    drafts.add_argument(
        "--rephrase",
        action="store_true",
        help=_(
            "for a history question, ask the model for a draft even when its drafts rarely pass"
        ),
    )
    drafts.add_argument(
        "--no-draft",
        action="store_true",
        help=_("for a history question, only the past messages that answer it"),
    )
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_ask))

    conv = sub.add_parser("conversations", help=_("list, export, import and search conversations"))
    csub = conv.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = csub.add_parser("list", help=_("every conversation (from the index)"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_list))
    p = csub.add_parser("show", help=_("print one conversation"))
    p.add_argument("id")
    p.add_argument("--format", choices=importers.FORMATS, default="markdown")
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_show))
    p = csub.add_parser("export", help=_("export conversations (all without ids) as plaintext"))
    p.add_argument("ids", nargs="*", metavar="ID")
    p.add_argument("--format", choices=importers.FORMATS, default="json")
    p.add_argument("--output", "-o", metavar="FILE", help=_("write here (0600) instead of stdout"))
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_export))
    p = csub.add_parser(
        "import", help=_("import a Custodia export or file, or a ChatGPT conversations.json/.zip")
    )
    p.add_argument("path")
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_import))
    p = csub.add_parser("search", help=_("search past messages (decrypted locally)"))
    p.add_argument("query")
    p.add_argument("-k", type=int, default=10, help=_("how many hits (default 10)"))
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_search))
    p = csub.add_parser("rename", help=_("rename a conversation"))
    p.add_argument("id")
    p.add_argument("name")
    p.set_defaults(handler=_cmd_rename)
    p = csub.add_parser("delete", help=_("delete a conversation"))
    p.add_argument("id")
    p.add_argument("--yes", action="store_true", help=_("confirm"))
    p.set_defaults(handler=_cmd_delete)

    p = reindex_subparsers(sub).add_parser(
        "conversations", help=_("delete and rebuild the conversations' search index from the files")
    )
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_reindex))

    p = sub.add_parser(
        "rotate-key",
        help=_(
            "re-encrypt every conversation under a new key (from {variable}, a prompt, "
            "or --generate); resumable"
        ).format(variable=NEW_KEY_ENV),
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument("--generate", action="store_true", help=_("generate the new key and print it"))
    how.add_argument(
        "--passphrase",
        action="store_true",
        help=_(
            "derive the new key from a passphrase (from {variable} or a prompt; "
            "Scrypt, salt in conversations/.kdf.json, the key itself is never stored)"
        ).format(variable=NEW_PASSPHRASE_ENV),
    )
    p.set_defaults(handler=_quiet_when_stdout_closes(_cmd_rotate_key))
