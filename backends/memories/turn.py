"""One chat turn of the memory assistant (AL1, AL2), once the assistant has done its store
work: the answer composed from the memories, at once; then the model's draft, streamed,
judged sentence by sentence (:mod:`backends.answers`) and shown in the composed answer's
place only when the memories state what it says. A question not about the user gets the
model's own words, labelled as such.

The assistant (:mod:`backends.memories.service`) recalls the memories and proposes new ones;
this module decides what is said and how it is shown, and touches no store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from backends import answers, grounding
from backends.answers import COMPOSED, MODEL, SUPPORTED, WITHHELD, Answer, DraftStats
from backends.grounding import CheckedSentence, Source
from backends.memories.answer import TEXTS, compose, language, restate
from backends.memories.outcomes import Proposal, RememberOutcome, TokenCallback, TurnResult
from backends.memories.tuning import AssistantSettings
from backends.models.chat import ChatModel, Message, Prompt
from backends.stores.memories import Hit

#: what the model is told (never shown to the user, never translated)
PROMPTS = {
    "memory_label": "[{number}] {text}",
    "draft_system": (
        "You are Custodia, a personal assistant with a long-term memory. The context lists, "
        "numbered, facts the user told you. Answer the user's question in one or two short "
        'sentences, speaking to the user as "you", using only those facts, and cite the '
        "number of the fact you use like [1]. Never add anything they did not tell you."
    ),
    "general_system": "You are Custodia, a helpful assistant. Answer briefly and plainly.",
}

#: what :meth:`Turn.answer` hands the composed answer to, with the memories its numbers cite
AnswerCallback = Callable[[Answer, tuple[Hit, ...]], None]


def draft_key(model: str) -> str:
    """The :class:`DraftStats` key of ``model``'s drafts in the memory assistant."""
    return f"memories:{model}"


def remembered(
    message: str, outcome: RememberOutcome, threshold: float, emit: TokenCallback
) -> TurnResult:
    """The turn of a "remember that …": what became of the fact is the answer."""
    answer = outcome.message()
    emit(answer)
    proposal = outcome.proposal
    return TurnResult(
        message,
        answer,
        remembered=outcome,
        proposals=(proposal,) if proposal else (),
        threshold=threshold,
    )


def noted(
    message: str,
    proposals: tuple[Proposal, ...],
    model: str,
    threshold: float,
    on_answer: AnswerCallback | None,
) -> TurnResult:
    """The turn of a message that told something and asked nothing: no answer to compose,
    nothing to draft — the facts are offered to be remembered."""
    said = TEXTS[language(message)]["offer" if proposals else "known"]
    shown = Answer(COMPOSED, (answers.Shown(said, SUPPORTED, 0),))
    if on_answer is not None:
        on_answer(shown, ())
    return TurnResult(
        message,
        shown.text,
        proposals=proposals,
        model=model,
        threshold=threshold,
        shown=shown,
        about_user=True,
    )


def number_used(
    composed: Answer, recalled: Sequence[Hit], candidates: Sequence[Hit]
) -> tuple[Answer, tuple[Hit, ...]]:
    """The memories shown as used — those recalled, then any other the answer cites — and
    the composed answer with its ``[n]`` numbers pointing into them."""
    used = list(recalled)
    numbers: dict[int, int] = {}
    for number in [s.number for s in composed.sentences if s.number]:
        hit = candidates[number - 1]
        if hit not in used:
            used.append(hit)
        numbers[number] = used.index(hit) + 1
    renumbered = replace(
        composed,
        sentences=tuple(
            replace(s, number=numbers[s.number]) if s.number else s for s in composed.sentences
        ),
    )
    return renumbered, tuple(used)


def model_answer(
    composed: Answer, draft: str, judged: tuple[answers.Shown, ...], lang: str
) -> Answer:
    """A question not about the user: the model's sentences, labelled as its own (or cited,
    when a memory states one); parroted ones withheld."""
    shown = tuple(s for s in judged if s.kind != WITHHELD)
    reason = ""
    if not shown:
        first = next((s.reason for s in judged if s.reason), "it gave no answer")
        reason = f"the model's answer was withheld: {first}"
        note = (
            f"La respuesta del modelo se ha retenido: {first}."
            if lang == "es"
            else f"The model's answer was withheld: {first}."
        )
        shown = (answers.Shown(note, SUPPORTED, 0, reason),)
    return Answer(MODEL, shown, composed.heading, draft, judged, reason)


def shown_text(shown: Answer) -> str:
    """The text of the answer shown: the model's own Markdown, all of it, when it answered a
    question not about the user (a code block ends in no full stop)."""
    if shown.mode == MODEL and shown.draft and not shown.withheld:
        fenced = shown.draft.rstrip().endswith("```")
        return shown.draft if fenced else grounding.complete_sentences(shown.draft)
    return shown.text


class Turn:
    """One question answered from the memories the assistant found for it."""

    def __init__(
        self,
        message: str,
        chat: ChatModel,
        settings: AssistantSettings,
        draft_stats: DraftStats,
        *,
        threshold: float,
        history: Sequence[Message] = (),
        emit: TokenCallback = lambda piece: None,
        stop: Callable[[], bool] = lambda: False,
        earlier_drafts: Sequence[str] = (),
    ) -> None:
        self.message = message
        self.chat = chat
        self.settings = settings
        self.draft_stats = draft_stats
        self.threshold = threshold
        self.history = tuple(history)
        self.emit = emit
        self.stop = stop
        #: the model's earlier drafts in this thread, shown or not (a draft repeating one
        #: for a new question is withheld)
        self.earlier_drafts = tuple(earlier_drafts)

    def answer(
        self,
        recalled: Sequence[Hit],
        candidates: Sequence[Hit],
        *,
        draft: bool | None = None,
        on_answer: AnswerCallback | None = None,
    ) -> TurnResult:
        """The composed answer (to ``on_answer`` at once), then — when ``draft`` asks for it,
        or (None) unless this model's drafts rarely pass — the model's draft, judged. The
        result has no proposals: the assistant adds them."""
        chat, message = self.chat, self.message
        composed = compose(
            message,
            [h.text for h in candidates],
            [h.similarity for h in candidates],
            retrieval_only=chat.retrieval_only,
            recalled=len(recalled),
        )
        composed, used = number_used(composed, recalled, candidates)
        if on_answer is not None:
            on_answer(composed, used)
        key = draft_key(chat.name)
        wanted = draft
        if wanted is None:
            wanted = composed.mode == MODEL or (
                composed.mode == COMPOSED and self.draft_stats.should_draft(key)
            )
        skipped = composed.mode == COMPOSED and not wanted and not chat.retrieval_only
        shown, stopped = composed, False
        checked: tuple[CheckedSentence, ...] = ()
        if wanted and not chat.retrieval_only:
            shown, stopped, checked = self._drafted(composed, used, key)
        return TurnResult(
            message,
            shown_text(shown),
            used=used,
            retrieval_only=chat.retrieval_only,
            model=chat.name,
            threshold=self.threshold,
            stopped=stopped,
            checked=checked,
            shown=shown,
            about_user=composed.mode != MODEL,
            draft_skipped=skipped,
            draft_rate=self.draft_stats.rate(key),
        )

    def _drafted(
        self, composed: Answer, used: tuple[Hit, ...], key: str
    ) -> tuple[Answer, bool, tuple[CheckedSentence, ...]]:
        """The answer shown once the model drafted, whether it was stopped, and the draft's
        sentences checked against the memories used."""
        draft_text, stopped = self._draft(used, composed)
        sources = [Source(i + 1, "", f"{h.text}. {restate(h.text)}") for i, h in enumerate(used)]
        earlier = [m.content for m in self.history if m.role == "assistant"]
        earlier += list(self.earlier_drafts)
        judged = answers.judge_draft(
            draft_text,
            sources,
            question=self.message,
            earlier=earlier,
            needs_support=composed.mode != MODEL,
        )
        checked = tuple(grounding.check_sentences(draft_text, sources)) if used else ()
        if composed.mode == MODEL:  # stopped too: what it said stays, as its own words
            return (
                model_answer(composed, draft_text, judged, language(self.message)),
                stopped,
                checked,
            )
        if stopped:
            reason = "the model's draft was stopped before it finished"
            shown = replace(composed, draft=draft_text, draft_sentences=judged, reason=reason)
            return shown, stopped, checked
        # the draft must say what a memory of the composed answer says, not only something
        # true ("Elena, your sister Elena")
        cited = set(composed.cited)
        shown = answers.choose(
            composed,
            draft_text,
            judged,
            answers_question=composed.mode == COMPOSED
            and any(
                s.supported
                and s.number in cited
                and answers.says_what(s.text, restate(used[s.number - 1].text))
                for s in judged
            ),
            heading=TEXTS[language(self.message)]["generated_heading"],
        )
        self.draft_stats.record(key, shown.mode == answers.GENERATED)
        return shown, stopped, checked

    def _draft(self, used: Sequence[Hit], composed: Answer) -> tuple[str, bool]:
        """The model's draft (streamed to ``emit``) and whether it was stopped."""
        keep = self.settings.history_messages
        personal = composed.mode != MODEL
        prompt = Prompt(
            user=self.message,
            system=PROMPTS["draft_system" if personal else "general_system"],
            history=self.history[-keep:] if keep else (),
            context=[
                PROMPTS["memory_label"].format(number=i + 1, text=restate(h.text))
                for i, h in enumerate(used)
            ]
            if personal
            else [],
            max_tokens=self.settings.max_tokens,
        )
        pieces: list[str] = []
        for piece in self.chat.stream(prompt, self.stop):
            pieces.append(piece)
            self.emit(piece)
        return "".join(pieces).strip(), self.stop()
