"""One chat turn: the user's message saved, past conversations searched for context (or a
history question answered from them, :mod:`.recall`), the model's answer streamed, judged
(:mod:`backends.answers`), saved and indexed — and what was said kept whatever ends the
answer early.

Apart from the agent (:mod:`.service`) because this is the one long sequence of the
assistant, with its own rules on what is shown and saved; the agent only holds the parts it
uses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import NoReturn

from backends import answers, grounding
from backends.answers import COMPOSED, MODEL, WITHHELD, Answer, DraftStats
from backends.conversations import history as history_answers
from backends.conversations.choices import ModelChoice, ModelPicker
from backends.conversations.errors import TurnFailedError
from backends.conversations.files import Conversation, StoredMessage
from backends.conversations.keychange import HistoryKeys
from backends.conversations.library import ConversationLibrary
from backends.conversations.naming import make_title, now_iso, repair_text, repaired_notice
from backends.conversations.recall import recall
from backends.conversations.search import MessageSearch, SearchHit
from backends.errors import CustodiaEnvironmentError
from backends.grounding import CheckedSentence, Source
from backends.i18n import _
from backends.models.chat import ChatModel, Message, Prompt, ShouldStop

log = logging.getLogger(__name__)

SYSTEM_PROMPT = (
    "You are Custodia's conversation assistant. Answer the user's last message helpfully and "
    "concisely. Passages from the user's earlier conversations may be given as context; use "
    "them only when they are relevant."
)
#: messages of the current conversation sent with each turn
HISTORY_MESSAGES = 20
#: passages from other conversations offered to the model, and how similar they must be
CONTEXT_PASSAGES = 3
MIN_CONTEXT_SCORE = 0.3
PASSAGE_CHARS = 400


def never_stop() -> bool:
    """The default ``should_stop``: nothing stops a turn but its end."""
    return False


@dataclass(frozen=True)
class TurnResult:
    conversation_id: str
    answer: str
    provider: str
    model: str
    user_index: int
    answer_index: int
    context: int
    stopped: bool
    retrieval_only: bool
    #: why past conversations could not be searched for context ("" when they were)
    context_error: str = ""
    #: what was repaired in the message before it was saved ("" when nothing was)
    notice: str = ""
    #: each sentence of the answer checked against the past messages given as context (the
    #: tutor's support check, :mod:`backends.grounding`); ``number`` is 1-based into them
    checked: tuple[CheckedSentence, ...] = ()
    #: the past messages the answer was checked against, as the model was given them (for
    #: a history question: the past messages its ``[n]`` quote)
    context_passages: tuple[str, ...] = ()
    #: the answer shown and how it was made (:mod:`backends.answers`); ``answer`` is its text
    shown: Answer | None = None
    #: the past messages a history answer quotes, by ``[n]`` (conversation id, index)
    quoted: tuple[tuple[str, int], ...] = ()
    #: no draft was asked of the model (its drafts rarely pass): the user may ask for one
    draft_skipped: bool = False


@dataclass(frozen=True)
class _Question:
    """The user's message, saved: where it is, and the model that answers it."""

    conversation: Conversation
    user_index: int
    choice: ModelChoice

    @property
    def conversation_id(self) -> str:
        return self.conversation.id


@dataclass(frozen=True)
class _Streamed:
    """What the model said before its stream ended."""

    answer: str
    stopped: bool
    failure: CustodiaEnvironmentError | None


class ChatTurns:
    """Takes the turns of every conversation, with the agent's parts."""

    def __init__(
        self,
        library: ConversationLibrary,
        keys: HistoryKeys,
        models: ModelPicker,
        search: MessageSearch,
        draft_stats: DraftStats,
    ) -> None:
        self.library = library
        self.keys = keys
        self.models = models
        self.search = search
        self.draft_stats = draft_stats

    def ask(
        self,
        message: str,
        conversation_id: str | None = None,
        model_key: str | None = None,
        on_token: Callable[[str], None] | None = None,
        should_stop: ShouldStop = never_stop,
        on_saved: Callable[[str], None] | None = None,
        *,
        on_answer: Callable[[Answer, tuple[str, ...]], None] | None = None,
        draft: bool | None = None,
    ) -> TurnResult:
        """One turn (see :meth:`backends.conversations.service.ConversationAgent.ask`)."""
        # text UTF-8 cannot hold (undecodable bytes, lone surrogates) would crash the file,
        # the index and the cipher: repaired here, and the turn says so
        message, repaired = repair_text(message.strip())
        notice = repaired_notice(repaired, "your message")
        if not message:
            raise CustodiaEnvironmentError(_("the message is empty"))
        self.keys.check_writable()
        model, choice = self.models.chat_model(model_key or self.models.configured())
        existing = self.library.load(conversation_id) if conversation_id else None
        current = existing.id if existing else None
        context, context_error = self._context(message, current)
        thread = _thread(existing)
        composed, past = recall(message, current, self.search.search, self.library.load)
        if composed is not None and on_answer is not None:
            on_answer(composed, tuple(_passage(h) for h in past))
        stats_key = f"conversations:{choice.model}"
        ask_model = self._asks_model(composed, draft, model, stats_key)
        question = self._save_question(message, existing, choice)
        if on_saved is not None:
            on_saved(question.conversation_id)
        sent_thread = thread
        if composed is not None:  # the draft is checked against the quoted messages
            context = [_passage(h) for h in past]
            # and asked without the thread: given it, a small model repeats its earlier
            # answers (measured on the memory assistant, docs/BENCHMARKS.md)
            sent_thread = []
        prompt = Prompt(user=message, system=SYSTEM_PROMPT, history=sent_thread, context=context)
        stream = model.stream(prompt, should_stop) if ask_model else iter(())
        streamed = self._stream(stream, question, on_token, should_stop)
        if streamed.failure is not None:
            self._failed(question, streamed.answer, streamed.failure)
        stopped = streamed.stopped or should_stop()
        sources = [Source(i + 1, "", c) for i, c in enumerate(context)]
        checked = (
            ()
            if model.retrieval_only or not context or not streamed.answer
            else tuple(grounding.check_sentences(streamed.answer, sources))
        )
        earlier = [m.content for m in thread if m.role == "assistant"]
        shown, answer = shown_answer(
            message, streamed.answer, composed, sources, earlier, model.retrieval_only, stopped
        )
        if composed is not None and ask_model and not stopped:
            self.draft_stats.record(stats_key, shown.mode == answers.GENERATED)
        writer = None if shown.mode in (answers.GENERATED, MODEL) else "custodia:composed"
        conversation, answer_index = self._save_final(question, answer, stopped, writer)
        self.search.index_messages(conversation, [question.user_index, answer_index])
        return TurnResult(
            conversation_id=question.conversation_id,
            answer=answer,
            provider=choice.provider,
            model=choice.model,
            user_index=question.user_index,
            answer_index=answer_index,
            context=len(context),
            stopped=stopped,
            retrieval_only=model.retrieval_only,
            context_error=context_error,
            notice=notice,
            checked=checked,
            context_passages=tuple(context),
            shown=shown,
            quoted=tuple((h.conversation_id, h.index) for h in past),
            draft_skipped=_draft_skipped(composed, ask_model, model),
        )

    # -- before the model ------------------------------------------------------------------
    def _context(self, message: str, current: str | None) -> tuple[list[str], str]:
        """Passages of other conversations like ``message``, and why none could be had
        ("" when the search worked)."""
        try:
            hits = self.search.search(message, CONTEXT_PASSAGES, exclude=current)
        except CustodiaEnvironmentError as err:
            log.warning(_("no context from past conversations: %s"), err)
            return [], str(err)
        return [_passage(h) for h in hits if h.score >= MIN_CONTEXT_SCORE], ""

    def _asks_model(
        self, composed: Answer | None, draft: bool | None, model: ChatModel, stats_key: str
    ) -> bool:
        """Whether the model is asked at all: always for an ordinary question; for a history
        question, as ``draft`` says, else when the model's drafts pass often enough (never a
        retrieval-only model: the quoted answer is already there)."""
        if composed is None:
            return True
        if model.retrieval_only:
            return False
        if draft is None:
            return composed.mode == COMPOSED and self.draft_stats.should_draft(stats_key)
        return draft

    def _save_question(
        self, message: str, existing: Conversation | None, choice: ModelChoice
    ) -> _Question:
        """The user's message on disk: a new conversation is created with it."""
        with self.library.lock:
            if existing is None:
                conversation = self.library.new(choice.provider, choice.model)
                # titled from its first message; encrypted with the history (CA2)
                conversation.title = make_title(message)
                create = True
            else:
                conversation = self.library.load(existing.id)  # newest version on disk
                create = False
            conversation.history.append(StoredMessage("user", message, now_iso()))
            self.library.save(conversation, create=create)
        return _Question(conversation, len(conversation.history) - 1, choice)

    # -- the model's answer ----------------------------------------------------------------
    def _stream(
        self,
        stream: Iterable[str],
        question: _Question,
        on_token: Callable[[str], None] | None,
        should_stop: ShouldStop,
    ) -> _Streamed:
        """The model's words until the stream ends or ``should_stop()``; a failing model is
        returned, anything else (Ctrl+C, a closed output, a bug) raised once what was said
        is saved."""
        pieces: list[str] = []
        stopped = False
        try:
            for piece in stream:
                pieces.append(piece)
                if on_token is not None:
                    on_token(piece)
                if should_stop():
                    stopped = True
                    break
        except CustodiaEnvironmentError as err:  # the model failed mid-way
            return _Streamed("".join(pieces), stopped, err)
        except BaseException:
            self._keep_interrupted(question, "".join(pieces))
            raise
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        return _Streamed("".join(pieces), stopped, None)

    def _keep_interrupted(self, question: _Question, answer: str) -> None:
        """Ctrl+C, a closed output, a bug: keep what was said, then let it go on (a failure
        while saving is logged, never put in place of the original)."""
        try:
            conversation, indexes = question.conversation, [question.user_index]
            if answer:
                conversation, answer_index = self._save_answer(question, answer, stopped=True)
                indexes.append(answer_index)
            self.search.index_messages(conversation, indexes)
        except Exception:
            log.exception(
                _("conversation %s: could not save the interrupted answer"),
                question.conversation_id,
            )

    def _failed(
        self, question: _Question, answer: str, failure: CustodiaEnvironmentError
    ) -> NoReturn:
        """The model failed mid-way: keep what it said, then :class:`TurnFailedError`."""
        cid = question.conversation_id
        if answer:
            conversation, answer_index = self._save_answer(question, answer, stopped=True)
            self.search.index_messages(conversation, [question.user_index, answer_index])
            kept = _(
                "your message and the partial answer (marked stopped) are saved in "
                "conversation {cid}"
            )
        else:
            self.search.index_messages(question.conversation, [question.user_index])
            kept = _("your message is saved in conversation {cid}")
        said = _("{failure} — {kept}; continue it once the model answers again").format(
            failure=failure, kept=kept.format(cid=cid)
        )
        raise TurnFailedError(said, cid) from failure

    def _save_final(
        self, question: _Question, answer: str, stopped: bool, writer: str | None
    ) -> tuple[Conversation, int]:
        """The answer shown, saved; a failure names the conversation the message is in."""
        try:
            return self._save_answer(question, answer, stopped=stopped, writer=writer)
        except CustodiaEnvironmentError as err:  # e.g. the disk filled up since the message
            cid = question.conversation_id
            raise TurnFailedError(
                _(
                    "the answer could not be saved ({err}) — your message is saved in "
                    "conversation {cid}; ask again once the problem is solved"
                ).format(err=err, cid=cid),
                cid,
            ) from err

    def _save_answer(
        self, question: _Question, answer: str, *, stopped: bool, writer: str | None = None
    ) -> tuple[Conversation, int]:
        """Append the answer (re-reading the newest file first); return it and its index."""
        choice = question.choice
        with self.library.lock:
            conversation = self.library.load(question.conversation_id)
            conversation.history.append(
                StoredMessage(
                    "assistant",
                    answer,
                    now_iso(),
                    writer or f"{choice.provider}:{choice.model}",
                    stopped=stopped,
                )
            )
            conversation.provider, conversation.model = choice.provider, choice.model
            self.library.save(conversation)
            return conversation, len(conversation.history) - 1


def shown_answer(
    message: str,
    draft: str,
    composed: Answer | None,
    sources: list[Source],
    earlier: list[str],
    retrieval_only: bool,
    stopped: bool,
) -> tuple[Answer, str]:
    """The answer shown and the text saved for it (:mod:`backends.answers`): a history
    answer (``composed``) or the model's draft in its place when every sentence is stated by
    a quoted message; else the model's own words, labelled, what it invents withheld."""
    if composed is None:
        return _model_answer(message, draft, sources, earlier, retrieval_only)
    if not draft:
        return composed, composed.text
    judged = answers.judge_draft(draft, sources, question=message, earlier=earlier)
    if stopped:
        reason = "the model's draft was stopped before it finished"
        held_back = replace(composed, draft=draft, draft_sentences=judged, reason=reason)
        return held_back, held_back.text
    cited = set(composed.cited)
    shown = answers.choose(
        composed,
        draft,
        judged,
        answers_question=any(
            s.supported
            and s.number in cited
            and answers.says_what(s.text, sources[s.number - 1].text, missing=2)
            for s in judged
        ),
    )
    return shown, shown.text


def _model_answer(
    message: str, draft: str, sources: list[Source], earlier: list[str], retrieval_only: bool
) -> tuple[Answer, str]:
    """The model's own answer to an ordinary question, and the text saved for it."""
    if retrieval_only:  # its passages, labelled by the model itself
        return Answer(MODEL, (), "", draft), draft
    # what the user tells ("the hotel is the Memmo Alfama"), of their own life ("My
    # landlord told me the rent goes up to 950 euros"): the model may comment, not add
    # numbers, dates or names
    judged = answers.judge_draft(
        draft,
        sources,
        question=message,
        earlier=earlier,
        needs_support=False,
        specifics=history_answers.tells(message),
    )
    kept = tuple(s for s in judged if s.kind != WITHHELD)
    texts = history_answers.TEXTS[history_answers.language(message)]
    heading = texts["model_heading"]
    if judged and not kept:
        first = next((s.reason for s in judged if s.reason), "")
        note = texts["withheld"].format(reason=first)
        shown = Answer(MODEL, (answers.Shown(note, answers.SUPPORTED, 0),), heading, draft, judged)
        return shown, note
    shown = Answer(MODEL, kept, heading, draft, judged)
    if any(s.kind == WITHHELD for s in judged):
        return shown, shown.text
    return shown, draft  # all of it, Markdown and all


def _thread(existing: Conversation | None) -> list[Message]:
    """The current conversation's last messages, as the model is given them."""
    return [
        Message(m.role, m.content)
        for m in (existing.history if existing else [])[-HISTORY_MESSAGES:]
        if m.role in ("system", "user", "assistant")
    ]


def _draft_skipped(composed: Answer | None, ask_model: bool, model: ChatModel) -> bool:
    """No draft was asked for a history answer that could have had one."""
    return (
        composed is not None
        and composed.mode == COMPOSED
        and not ask_model
        and not model.retrieval_only
    )


def _passage(hit: SearchHit) -> str:
    text = " ".join(hit.text.split())
    if len(text) > PASSAGE_CHARS:
        text = text[: PASSAGE_CHARS - 1] + "…"
    return f"[{hit.name}, {hit.date[:10]}] {hit.role}: {text}"
