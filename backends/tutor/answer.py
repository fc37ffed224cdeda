"""What a turn shows as fact (CT9): the support-check policy and the citations.

Given what retrieval found, the answer is chosen here, in one call (:meth:`Answerer.reply`):
the passages are judged (:mod:`backends.tutor.coverage`); a question the notes do not cover
is told so without asking the model; otherwise the chat model's draft (when it is asked
for) is shown only when every sentence of it is supported by a passage sentence and it
answers from the passage that answers the question (:mod:`backends.grounding`); else the
sentences quoted from the passages are. Whatever is shown cites its passages ``[n]``, and
what the audit record holds is composed here too (:func:`audit_record`).

Its own module because this is the tutor's policy on what a student may read as fact; it
calls down (coverage, grounding, the chat model) and never back into the service.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from backends import answers, grounding
from backends.config import Config
from backends.grounding import CheckedSentence, Quote, Source
from backends.i18n import N_, _, number
from backends.models.chat import ChatModel, Prompt, ShouldStop
from backends.tutor import followup
from backends.tutor.coverage import Coverage, Judged
from backends.tutor.indexing import Provider
from backends.tutor.kb import SHARED
from backends.tutor.retrieval import Found, Passage, Retrieval

NOTICE = N_("For study, not for clinical decisions.")  # shown translated; the prompt's is English
SYSTEM_PROMPT = (
    "You are a clinical study tutor for students. Answer the question in two or three short "
    "sentences using only the numbered passages in the context, in the words of the passages. "
    "End every sentence with the number of the passage it comes from in square brackets, like "
    "[1]. If the passages do not answer the question, say that the notes do not cover it. " + NOTICE
)
#: what a small model writes when it starts a new turn of its own: the answer ends there
STOP_SEQUENCES = ("\n\n\n", "\nQuestion:", "\nUser:", "<|im_end|>", "<|endoftext|>")
#: tokens the model may write (an answer is two or three sentences)
MAX_TOKENS = 200
#: words of a passage given to the model (the context must fit a small model's window)
PASSAGE_WORDS = 110

#: what the user is shown, by how it was made (:attr:`Grounding.mode`)
GENERATED = "generated"  # the model's answer: every sentence supported by a cited passage
EXTRACTIVE = "extractive"  # sentences quoted from the passages (the model's failed the check)
NOT_COVERED = "not_covered"  # the notes do not answer the question: nothing is stated

HEADINGS = {
    "en": {
        GENERATED: "Answer — every sentence checked against your notes",
        EXTRACTIVE: "From your notes — quoted, because the model's answer was not supported",
        "retrieval-only": "From your notes — quoted (no chat model is loaded)",
        "stopped": "From your notes — quoted (the model's answer was stopped)",
        "composed": "From your notes — quoted word for word",
        "no-draft": "From your notes — quoted (this model's answers rarely pass the check, so "
        "none was asked for: “Ask the model to rephrase” asks it)",
        NOT_COVERED: "Not covered by your notes",
    },
    "es": {
        GENERATED: "Respuesta — cada frase comprobada con tus notas",
        "generated-english": "Respuesta en inglés, el idioma de tus notas (el modelo no pudo "
        "responder en español) — cada frase comprobada con ellas",
        EXTRACTIVE: "De tus notas — citadas en inglés, el idioma de las notas: el modelo no dio "
        "una respuesta en español respaldada por ellas",
        "retrieval-only": "De tus notas — citadas en inglés, el idioma de las notas (no hay "
        "modelo de chat cargado)",
        "stopped": "De tus notas — citadas en inglés (la respuesta del modelo se detuvo)",
        "composed": "De tus notas — citadas en inglés, el idioma de las notas",
        "no-draft": "De tus notas — citadas en inglés, el idioma de las notas (las respuestas de "
        "este modelo casi nunca pasan la comprobación: «Pedir al modelo que lo reformule» se la "
        "pide)",
        NOT_COVERED: "Tus notas no tratan esta pregunta",
    },
}
NOT_COVERED_TEXT = {
    "en": "Your notes do not cover this question: nothing found in them answers it, so no "
    "answer is given. Check a clinical reference, or import notes on the topic.",
    "es": "Tus notas no tratan esta pregunta: nada de lo encontrado en ellas la responde, así "
    "que no se da ninguna respuesta. Consulta una referencia clínica o importa notas del tema.",
}
#: not covered, but the notes name the question's subject: what they only mention, cited
MENTION_TEXT = {
    "en": "Not covered — your notes only mention {}, without answering this question:",
    "es": "No lo tratan — tus notas solo mencionan {}, sin responder a esta pregunta "
    "(cita en inglés, el idioma de las notas):",
}
#: not covered: the question names a drug, a condition or a procedure no note knows
UNKNOWN_TEXT = {
    "en": "Not covered — your notes do not mention {}: the passages found are about something "
    "else, so no answer is given. Check a clinical reference, or import notes on the topic.",
    "es": "No lo tratan — tus notas no mencionan «{}»: lo encontrado trata de otra cosa, así "
    "que no se da ninguna respuesta. Consulta una referencia clínica o importa notas del tema.",
}
NO_EXTRACT_TEXT = {
    "en": "The passages found do not contain a sentence that answers this question.",
    "es": "Los pasajes encontrados no contienen ninguna frase que responda a esta pregunta.",
}
#: a quote opening with one of these needs its note's title to say what it is about
PRONOUNS = frozenset(["It", "Its", "It's", "They", "Their", "This", "These", "Those", "That"])


@dataclass(frozen=True)
class Grounding:
    """How the shown answer was made and what the support check found (CT9)."""

    mode: str
    #: the question's language ("en" or "es"); the headings and refusals use it
    language: str
    #: the header shown above the answer, in the question's language
    heading: str
    #: the model's own answer, unshown as fact unless ``mode`` is "generated" ("" if not asked)
    generated: str = ""
    #: the model's sentences, each checked against the passages
    sentences: tuple[CheckedSentence, ...] = ()
    #: the extractive answer's quotes (what is shown when ``mode`` is "extractive")
    quotes: tuple[Quote, ...] = ()
    #: share of the question's (rare) words the best passage holds (0 to 1)
    coverage: float = 0.0
    #: why the model's answer is not the one shown ("" when it is, or was not asked)
    reason: str = ""
    #: not covered, but the notes mention the question's subject: what they say of it
    mentions: tuple[Quote, ...] = ()
    #: the subject's words as the mention writes them ("lithium")
    mentioned: str = ""

    @property
    def unsupported(self) -> tuple[CheckedSentence, ...]:
        return tuple(s for s in self.sentences if not s.supported)

    @property
    def covered(self) -> bool:
        return self.mode != NOT_COVERED


@dataclass(frozen=True)
class Reply:
    """A turn's answer, before it is recorded: what :meth:`Answerer.reply` hands back."""

    retrieval: Retrieval
    #: the text shown as fact, with ``[n]`` citations
    answer: str
    cited: tuple[int, ...]
    grounding: Grounding
    model: str
    retrieval_only: bool
    stopped: bool
    #: the audit record's fields (:func:`audit_record`)
    record: dict[str, Any]
    #: what cut the model's stream short (Ctrl+C, a closed pipe): raised once recorded
    interrupted: BaseException | None = None


class Answerer:
    """The tutor's answer policy over one index (see the module doc)."""

    def __init__(self, config: Config, coverage: Coverage) -> None:
        self.config = config
        self.coverage = coverage
        #: per model, how often its drafts pass the check (AL1: below the floor, none is
        #: asked for unless the user asks); a cache in the data dir
        self._drafts: answers.DraftStats | None = None

    @property
    def drafts(self) -> answers.DraftStats:
        """How often each model's drafts passed (``tutor:<model>``), kept in the data dir."""
        if self._drafts is None:
            self._drafts = answers.DraftStats(self.config.path(answers.STATS_FILE))
        return self._drafts

    def wants_draft(self, chat: ChatModel) -> bool:
        """Whether the chat model's draft is asked for unprompted (its pass rate is known and
        low: no; the composed answer is shown at once)."""
        return not chat.retrieval_only and self.drafts.should_draft(f"tutor:{chat.name}")

    def judge(self, retrieval: Retrieval) -> Judged:
        """What the passages say to the question (:meth:`Coverage.judge`)."""
        return self.coverage.judge(retrieval)

    def reply(
        self,
        found: Found,
        chat_model: Provider[ChatModel],
        *,
        draft: bool | None = None,
        on_token: Callable[[str], None] | None = None,
        should_stop: ShouldStop | None = None,
        on_retrieved: Callable[[Retrieval], None] | None = None,
        rephrases: int = 0,
    ) -> Reply:
        """The answer to what was found (the policy of :meth:`TutorService.ask`): the reading
        of the question its passages answer, then the model's draft or the quotes.

        ``on_retrieved`` gets the passages before the model is loaded or asked; ``on_token``
        the draft as it streams. A stream cut by Ctrl+C or a closed pipe is judged as
        stopped and its exception handed back (:attr:`Reply.interrupted`), to be raised once
        the turn is recorded.
        """
        retrieval, judged = self._reading(found)
        if on_retrieved is not None:
            on_retrieved(retrieval)
        chat = chat_model()
        lang = retrieval.language
        stop = should_stop or (lambda: False)
        drafting = judged.covered and not chat.retrieval_only
        if drafting and draft is None:
            drafting = self.wants_draft(chat)
        elif drafting:
            drafting = bool(draft)
        pieces: list[str] = []
        interrupted: BaseException | None = None
        if drafting:
            interrupted = _stream(chat, _prompt(retrieval), stop, on_token, pieces)
        stopped = interrupted is not None or stop()
        checked = _ground("".join(pieces), judged, lang, chat, stopped)
        checked = _no_echoes(checked, retrieval.asked)
        if judged.covered and not chat.retrieval_only and not drafting:
            # composed first (the tab asks for the draft next), or no draft: this model's
            # rarely pass
            heading = HEADINGS[lang]["composed" if draft is False else "no-draft"]
            checked = replace(checked, heading=heading, reason=N_("no draft was asked for"))
        elif drafting and not stopped:
            self.drafts.record(f"tutor:{chat.name}", checked.mode == GENERATED)
        answer, cited = shown(checked, lang, {p.number: p.title for p in retrieval.passages})
        record = audit_record(retrieval, checked, answer, cited, chat, stopped, rephrases)
        return Reply(
            retrieval=retrieval,
            answer=answer,
            cited=cited,
            grounding=checked,
            model=chat.name,
            retrieval_only=bool(chat.retrieval_only),
            stopped=stopped,
            record=record,
            interrupted=interrupted,
        )

    def _reading(self, found: Found) -> tuple[Retrieval, Judged]:
        """The question read alone, or as the thread's follow-up when that reading's passages
        answer it (:func:`followup.keeps_thread`), each with its judgement."""
        judged = self.judge(found.retrieval)
        if found.in_thread is not None:
            in_thread = self.judge(found.in_thread)
            if followup.keeps_thread(found.how, covered_in_thread=in_thread.covered):
                return found.in_thread, in_thread
        return found.retrieval, judged


def _prompt(retrieval: Retrieval) -> Prompt:
    return Prompt(
        user=retrieval.question,
        system=SYSTEM_PROMPT,
        context=[p.context_line(PASSAGE_WORDS) for p in retrieval.passages],
        max_tokens=MAX_TOKENS,
        # no temperature here: the tutor's low default (0.1) comes from its generation
        # settings, which the user may change (backends/models/settings.py)
        stop=STOP_SEQUENCES,
    )


def _stream(
    chat: ChatModel,
    prompt: Prompt,
    stop: ShouldStop,
    on_token: Callable[[str], None] | None,
    pieces: list[str],
) -> BaseException | None:
    """Stream the model's draft into ``pieces``; what cut it short, if anything: Ctrl+C
    (``KeyboardInterrupt``) or the reader of a pipe leaving (``BrokenPipeError``)."""
    interrupted: BaseException | None = None
    stream = chat.stream(prompt, stop)
    try:
        for piece in stream:
            pieces.append(piece)
            if on_token is not None:
                try:
                    on_token(piece)
                except BrokenPipeError as err:  # the reader left (`ask tutor | head`)
                    interrupted = err
                    break
    except KeyboardInterrupt as err:  # Ctrl+C mid-answer: still one record, as stopped
        interrupted = err
    finally:  # a generator left early releases what it holds (a model's lock) now
        close = getattr(stream, "close", None)
        if callable(close):
            close()
    return interrupted


def _ground(generated: str, judged: Judged, lang: str, chat: ChatModel, stopped: bool) -> Grounding:
    """Which answer is shown, and why (see :meth:`Answerer.reply`)."""
    headings = HEADINGS[lang]
    covered_by, sources = judged.coverage, judged.sources
    quotes = checked_quotes(judged.quotes, sources)
    if not judged.covered:
        return Grounding(
            NOT_COVERED,
            lang,
            headings[NOT_COVERED],
            coverage=covered_by,
            mentions=judged.mentions,
            mentioned=judged.mentioned,
        )
    if chat.retrieval_only:
        return Grounding(
            EXTRACTIVE, lang, headings["retrieval-only"], quotes=quotes, coverage=covered_by
        )
    text = grounding.complete_sentences(generated)
    sentences = tuple(grounding.check_sentences(text, sources))
    reason = _why_not_shown(sentences, judged.scored, sources, stopped)
    if not reason:
        # the notes are English, so a checked answer is English: a Spanish question is
        # told so in its own language rather than answered as if in it
        heading = headings[GENERATED if lang == "en" else "generated-english"]
        return Grounding(GENERATED, lang, heading, generated, sentences, quotes, covered_by)
    heading = headings["stopped" if stopped else EXTRACTIVE]
    return Grounding(EXTRACTIVE, lang, heading, generated, sentences, quotes, covered_by, reason)


def checked_quotes(quotes: Sequence[Quote], sources: Sequence[Source]) -> tuple[Quote, ...]:
    """The quotes the support check finds in the passage each cites: a quote is shown as fact
    only when it passes the check the shown answer is held to (CT9; issue 27: a quoted
    sentence once failed its own re-check)."""
    by_number = {s.number: s for s in sources}
    return tuple(
        q
        for q in quotes
        if q.number in by_number
        and all(c.supported for c in grounding.check_sentences(q.text, [by_number[q.number]]))
    )


def _why_not_shown(
    sentences: tuple[CheckedSentence, ...],
    scored: Sequence[Quote],
    sources: Sequence[Source],
    stopped: bool,
) -> str:
    """Why the model's checked draft is not the answer shown ("" when it is)."""
    unsupported = [s for s in sentences if not s.supported]
    if stopped:
        return N_("the model's answer was stopped before it finished")
    if not sentences:
        return N_("the model gave no answer")
    if unsupported:
        return N_("{bad} of {count} sentences not found in the passages").format(
            bad=len(unsupported), count=len(sentences)
        )
    if not grounding.answers_the_question(sentences, scored, sources):
        return N_("the model's answer does not come from the passage that answers the question")
    return ""


#: the one reason of :func:`_why_not_shown` with numbers in it (the others are messages as
#: they are)
_COUNTED = re.compile(r"(\d+) of (\d+) sentences not found in the passages")


def reason_text(reason: str) -> str:
    """Why the model's answer was not shown (a :class:`Grounding`'s ``reason``, kept in
    English), in the language messages are in now: the command and the tab say it alike."""
    if counted := _COUNTED.fullmatch(reason):
        return _("{bad} of {count} sentences not found in the passages").format(
            bad=number(int(counted[1])), count=number(int(counted[2]))
        )
    return _(reason) if reason else ""


def _no_echoes(checked: Grounding, asked: Sequence[str]) -> Grounding:
    """A "supported" sentence that only repeats the question ("Sepsis signs.") is no answer:
    it is marked unsupported, and a model's answer made of such sentences is not shown."""
    if not checked.sentences:
        return checked
    sentences = tuple(
        replace(s, supported=False, reason=N_("it only repeats the question"))
        if s.supported and grounding.restates(s, asked)
        else s
        for s in checked.sentences
    )
    if sentences == checked.sentences:
        return checked
    if checked.mode != GENERATED or any(s.supported for s in sentences):
        return replace(checked, sentences=sentences)  # a shown answer leaves its echoes out
    heading = HEADINGS[checked.language][EXTRACTIVE]
    reason = N_("the model's answer only repeats the question")
    return replace(checked, mode=EXTRACTIVE, heading=heading, sentences=sentences, reason=reason)


# -- citations ---------------------------------------------------------------------------------


def _cite(sentence: str, number: int) -> str:
    """``sentence`` with ``[number]`` before its final stop: "... acetylcysteine [1]."."""
    text = sentence.rstrip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{number}]{text[-1]}"
    return f"{text} [{number}]"


def _needs_title(title: str, text: str) -> bool:
    """A quote says nothing without its note's title when it does not name it."""
    return bool(title) and not set(grounding.content(title)) <= set(grounding.content(text))


def shown(checked: Grounding, lang: str, titles: dict[int, str]) -> tuple[str, tuple[int, ...]]:
    """The text shown as fact and the passages it cites: the model's sentences each with the
    passage that supports it, or the quotes (each note's title before its first quote when the
    sentence does not name it), or (not covered) the refusal with no citation."""
    if checked.mode == NOT_COVERED:
        return _refusal(checked, lang, titles)
    if checked.mode == GENERATED:
        supported = [s for s in checked.sentences if s.supported]
        parts = [_cite(s.text, s.number) for s in supported]
        return " ".join(parts), tuple(sorted({s.number for s in supported}))
    if not checked.quotes:
        return NO_EXTRACT_TEXT[lang], ()
    parts = []
    named: set[str] = set()
    for q in checked.quotes:
        # "Its main use is monitoring warfarin" says nothing without its note's title
        title = titles.get(q.number, "")
        needs_title = _needs_title(title, q.text) or bool(
            title and q.text.split(" ", 1)[0] in PRONOUNS  # "It is classified by …"
        )
        text = f"{title}: {q.text}" if needs_title and title not in named else q.text
        named.add(title)
        parts.append(_cite(text, q.number))
    return " ".join(parts), tuple(sorted({q.number for q in checked.quotes}))


def _refusal(checked: Grounding, lang: str, titles: dict[int, str]) -> tuple[str, tuple[int, ...]]:
    """Not covered: the refusal, or what the notes only mention of the subject, cited."""
    if not checked.mentions:
        if checked.mentioned:  # a subject no note knows
            return UNKNOWN_TEXT.get(lang, UNKNOWN_TEXT["en"]).format(checked.mentioned), ()
        return NOT_COVERED_TEXT[lang], ()
    parts = []
    for q in checked.mentions:
        title = titles.get(q.number, "")
        quoted = f"“{title}: {q.text}”" if _needs_title(title, q.text) else f"“{q.text}”"
        parts.append(_cite(quoted, q.number))
    written = [
        w
        for w in grounding.words(checked.mentions[0].text)
        if grounding.normal(w) == checked.mentioned
    ]
    head = MENTION_TEXT.get(lang, MENTION_TEXT["en"]).format(
        written[0] if written else checked.mentioned
    )
    return " ".join([head, *parts]), tuple(sorted({q.number for q in checked.mentions}))


def _clear_chunk(passage: Passage) -> str:
    return passage.chunk_id if passage.scope == SHARED else "own"


def audit_record(
    retrieval: Retrieval,
    checked: Grounding,
    answer: str,
    cited: tuple[int, ...],
    chat: ChatModel,
    stopped: bool,
    rephrases: int,
) -> dict[str, Any]:
    """The fields of a turn's audit record (``AuditService.append``'s keywords)."""
    by_number = {p.number: p for p in retrieval.passages}
    return {
        # what was asked and what the student was shown, sealed with their key: a
        # reviewer reads it in the inspector, and erasing the person shreds it (CT9)
        "personal": {
            "question": retrieval.question,
            # the earlier question this one was read as a follow-up to ("" if none)
            "follows": retrieval.follows,
            "answer": answer,
            "heading": checked.heading,
            "language": retrieval.language,
            "generated": checked.generated,
            "unsupported": [c.text for c in checked.unsupported],
            # every sentence of the model's answer as the check judged it
            "model_sentences": [c.as_dict() for c in checked.sentences],
            # the user's own notes: ids derived from their name and file, so sealed
            "own_chunks": [p.chunk_id for p in retrieval.passages if p.scope != SHARED],
        },
        # shared chunk ids in clear; a user's own note only as "own" (its id is sealed
        # above: it is derived from their name and path, and could be confirmed)
        "chunks": [_clear_chunk(p) for p in retrieval.passages],
        "cited": [_clear_chunk(by_number[n]) for n in cited],
        "model": chat.name,
        "retrieval_only": bool(chat.retrieval_only),
        "degraded": list(retrieval.degraded_methods),
        "stopped": stopped,
        # the record of the composed answer this turn asked the model to reword
        "rephrases": rephrases or None,
        "grounding": {
            "mode": checked.mode,
            "covered": checked.covered,
            "coverage": round(checked.coverage, 3),
            "sentences": len(checked.sentences),
            "unsupported": len(checked.unsupported),
        },
    }
