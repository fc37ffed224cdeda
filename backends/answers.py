"""One answer policy for every assistant (AL1): what a shown sentence is, and who decides it.

A small local model is a fluent guesser, so its text is a *draft* to check, never the answer
on its word. Each assistant first composes an answer from what it holds (quoted notes,
restated memories, past messages) or says it does not know; the model's draft may replace
that composed answer only when it passes. Every shown sentence is one of three kinds:

- :data:`SUPPORTED`: a source the assistant holds states it (the support check of
  :mod:`backends.grounding`); shown with its ``[n]``.
- :data:`OWN`: the model's own words on a question the sources are not for ("a good name for
  a cat"); shown labelled as the model's, never as fact.
- :data:`WITHHELD`: nothing backs it where something should (a question about the user), or
  it parrots (below); not shown as an answer — a UI may list it struck out, with its reason.

The parroting guard (:func:`parroting`, :func:`invented_specifics`) withholds a draft that
repeats an earlier answer of the same thread for a new question, echoes the prompt's own
scaffolding ("The user said earlier:"), or states a phone number, e-mail, URL, date or number
no source holds.

Stable API (the tutor, memories, conversations and multi-agent assistants use it):
:class:`Shown`, :class:`Answer`, :data:`SUPPORTED` / :data:`OWN` / :data:`WITHHELD`,
:data:`COMPOSED` / :data:`GENERATED` / :data:`DONT_KNOW` / :data:`MODEL` (answer modes),
:func:`cite`, :func:`judge_draft`, :func:`draft_passes`, :func:`says_what`, :func:`choose`,
:func:`parroting`,
:func:`echoed_scaffolding`, :func:`repeats_earlier`, :func:`invented_specifics`,
:class:`DraftStats` (per-model draft pass rate, persisted: when low, drafts stop unless the
user asks for one), :func:`render_text` (how a command line prints the three kinds),
:class:`DraftProgress` (a command line's progress while a draft runs: never the draft). Qt-free
and model-free.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from backends import grounding
from backends.grounding import Source
from backends.i18n import gettext_

# -- what a shown sentence is ---------------------------------------------------------------

#: a source states it: shown as fact, cited
SUPPORTED = "supported"
#: the model's own words on a question the sources are not for: shown labelled as the model's
OWN = "own"
#: unsupported where support is needed, or parroted: not shown as an answer
WITHHELD = "withheld"

#: the shown answer was composed from the sources, without the model
COMPOSED = "composed"
#: the model's draft passed (every sentence supported, answers the question): it is shown
GENERATED = "generated"
#: the sources do not hold the answer, and the answer says so ("You haven't told me that")
DONT_KNOW = "dont_know"
#: a question the sources are not for: the model's words, labelled as its own
MODEL = "model"


@dataclass(frozen=True)
class Shown:
    """One sentence of an answer and what it is (:data:`SUPPORTED`, :data:`OWN`,
    :data:`WITHHELD`). ``number``: the 1-based source it cites (0: none)."""

    text: str
    kind: str
    number: int = 0
    #: why it is withheld (or what it is, for people); "" for a plain supported sentence
    reason: str = ""

    @property
    def supported(self) -> bool:
        return self.kind == SUPPORTED

    def display(self) -> str:
        """The sentence with its citation (``[n]`` before the final stop) when it has one."""
        return cite(self.text, self.number) if self.supported and self.number else self.text

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "kind": self.kind,
            "cites": self.number or None,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Answer:
    """What an assistant shows for one question, and how it was made (``mode``)."""

    mode: str
    sentences: tuple[Shown, ...] = ()
    #: one line above the answer saying how it was made, in the question's language
    heading: str = ""
    #: the model's draft ("" when none was asked for)
    draft: str = ""
    #: the draft's sentences as judged (:func:`judge_draft`)
    draft_sentences: tuple[Shown, ...] = ()
    #: why the draft is not the shown answer ("" when it is, or none was asked for)
    reason: str = ""

    @property
    def text(self) -> str:
        """The shown answer as plain text with ``[n]`` citations; withheld sentences left out."""
        return " ".join(s.display() for s in self.sentences if s.kind != WITHHELD)

    @property
    def cited(self) -> tuple[int, ...]:
        return tuple(sorted({s.number for s in self.sentences if s.supported and s.number}))

    @property
    def withheld(self) -> tuple[Shown, ...]:
        """The draft's sentences kept from the user as unsupported or parroted."""
        return tuple(s for s in self.draft_sentences if s.kind == WITHHELD)

    def as_dict(self) -> dict[str, object]:
        return {
            "mode": self.mode,
            "heading": self.heading,
            "answer": self.text,
            "sentences": [s.as_dict() for s in self.sentences],
            "draft": self.draft,
            "draft_sentences": [s.as_dict() for s in self.draft_sentences],
            "reason": self.reason,
        }


def cite(sentence: str, number: int) -> str:
    """``sentence`` with ``[number]`` before its final stop: "... Valencia [1]."."""
    text = sentence.rstrip()
    if text and text[-1] in ".!?":
        return f"{text[:-1]} [{number}]{text[-1]}"
    return f"{text} [{number}]"


# -- the parroting guard --------------------------------------------------------------------

#: the prompt's own scaffolding, which a small model copies into its answer
SCAFFOLDING = re.compile(
    r"\b(?:the\s+)?user\s+(?:said|asked|replied|wrote|told\s+(?:you|me))(?:\s+earlier)?\s*:"
    r"|\bthe\s+user\s+(?:said|told\s+(?:you|me))\s+earlier\b"
    r"|\brelevant\s+context\s*:|\bcontext\s*:|\bsystem\s*:|\bassistant\s*:|\buser\s*:"
    r"|\byou\s+are\s+custodia\b|\bpassages?\s+from\s+the\s+user"
    r"|\bel\s+usuario\s+(?:dijo|preguntó|respondió)\b",
    re.IGNORECASE,
)
_PHONE = re.compile(r"(?<![\w.])\+?\d[\d\s().-]{6,}\d(?!\w|[.,]\d)")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_URL = re.compile(r"\b(?:https?://|www\.)\S+|\b[\w-]+\.(?:com|org|net|gov|es|io)\b", re.I)
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "enero",
    "febrero",
    "marzo",
    "abril",
    "mayo",
    "junio",
    "julio",
    "agosto",
    "septiembre",
    "setiembre",
    "octubre",
    "noviembre",
    "diciembre",
]
_DATE = re.compile(
    r"\b\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:de\s+)?(?:" + "|".join(_MONTHS) + r")\b"
    r"|\b(?:" + "|".join(_MONTHS) + r")\s+\d{1,2}(?:st|nd|rd|th)?\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def echoed_scaffolding(text: str) -> str:
    """The prompt scaffolding ``text`` copies ("The user said earlier:"), or ""."""
    match = SCAFFOLDING.search(text)
    return match.group(0).strip() if match else ""


#: capitalised words that name no one ("I", days and months are dates, checked as dates)
_NOT_NAMES = frozenset(
    ["I", "I'm", "I've", "I'd", "I'll", "OK", "Ok", "Mr", "Mrs", "Ms", "Dr"]
    + [m.capitalize() for m in _MONTHS]
    + ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
)
#: words a sentence opens with before a comma that address no one
_OPENER_WORDS = """
    sorry unfortunately hello hi hey thanks great sure first second finally instead otherwise
    still meanwhile honestly alright siento hola gracias claro bueno pues primero además
    embargo
    """
_OPENERS = (
    grounding.STOPWORDS
    | grounding.STOPWORDS_ES
    | frozenset(grounding.fold(w) for w in _OPENER_WORDS.split())
)
_CAPITALISED = re.compile(r"(?<![\w'’])([A-ZÁÉÍÓÚÑ][a-záéíóúñü]{2,})\b(,?)")


def invented_names(text: str, sources: Iterable[str]) -> list[str]:
    """The names of ``text`` no source holds: a capitalised word inside a sentence, or one
    opening it and followed by a comma (the model addressing someone: "Sinisa, I'm
    sorry…")."""
    held = grounding.fold(" ".join(sources))
    out: list[str] = []
    for match in _CAPITALISED.finditer(text):
        word, comma = match.groups()
        before = text[: match.start()].rstrip(' \t"“«(*')
        opening = not before or before[-1] in ".!?:;\n"
        if word in _NOT_NAMES or (opening and not comma):
            continue
        if opening and grounding.fold(word) in _OPENERS:  # "However, …", "Sorry, …"
            continue
        if not re.search(rf"\b{re.escape(grounding.fold(word))}\b", held):
            out.append(word)
    return list(dict.fromkeys(out))


def invented_specifics(
    text: str, sources: Iterable[str], *, numbers: bool = True, names: bool = False
) -> list[str]:
    """The phone numbers, e-mails, URLs, dates and numbers of ``text`` that none of
    ``sources`` (the memories, messages, notes — and the question) holds. ``numbers=False``
    leaves dates and plain numbers out (the model's own words on a general question: "a leap
    year has 366 days"); contact details are never the model's to give. ``names``: people's
    and places' names too (:func:`invented_names`), for what the user said about their own
    life."""
    sources = list(sources)
    held = " ".join(sources)
    held_folded = grounding.fold(held)
    held_numbers = {_digits(n) for n in _NUMBER.findall(held)}
    held_phones = [_digits(m) for m in _PHONE.findall(held)]
    out: list[str] = []
    rest = text
    for pattern in (_EMAIL, _URL, _PHONE, _DATE) if numbers else (_EMAIL, _URL, _PHONE):
        for match in pattern.findall(rest):
            found = match if isinstance(match, str) else match[0]
            if pattern in (_EMAIL, _URL):
                if grounding.fold(found).rstrip(".,;") not in held_folded:
                    out.append(found)
            elif pattern is _PHONE:
                if not any(_digits(found) in phone for phone in held_phones):
                    out.append(found.strip())
            elif grounding.fold(found) not in held_folded:
                dated = _NUMBER.findall(found)
                if not dated or any(_digits(n) not in held_numbers for n in dated):
                    out.append(found)
            rest = rest.replace(found, " ")
    for number in _NUMBER.findall(rest) if numbers else ():
        if _digits(number) not in held_numbers:
            out.append(number)
    return out + (invented_names(text, sources) if names else [])


def repeats_earlier(answer: str, earlier: Sequence[str], question: str = "") -> bool:
    """Whether ``answer`` says again what an earlier answer of the thread said (most of its
    content words, or the same opening), for a new question. The words of ``question`` do
    not count towards it: an answer that takes up the new question's words is about that
    question (asked about similar things, two right answers share those words)."""
    whole = grounding.content(answer)
    if not whole:
        return False
    asked = set(grounding.content(question)) if question else set()
    mine = [w for w in whole if w not in asked]
    opening = " ".join(mine[:8])
    for before in earlier:
        if grounding.content(before) == whole:  # the same words again ("Elena is in Spain.")
            return True
        theirs = [w for w in grounding.content(before) if w not in asked]
        if len(mine) < 3 or len(theirs) < 3:
            continue
        shared = len(set(mine) & set(theirs)) / len(set(mine) | set(theirs))
        if shared >= 0.6 or (len(mine) >= 8 and opening == " ".join(theirs[:8])):
            return True
    return False


def parroting(
    draft: str,
    *,
    sources: Iterable[str] = (),
    earlier: Sequence[str] = (),
    question: str = "",
    numbers: bool = True,
) -> str:
    """Why ``draft`` parrots (as a whole), for people, or "" when it does not
    (``numbers``: as in :func:`invented_specifics`)."""
    if repeats_earlier(draft, earlier, question):
        return "it repeats an earlier answer of this conversation for a new question"
    echoed = echoed_scaffolding(draft)
    if echoed:
        return f"it copies the prompt (“{echoed}”)"
    invented = invented_specifics(draft, [*sources, question], numbers=numbers)
    if invented:
        return "it states what no source holds: " + ", ".join(invented[:3])
    return ""


# -- judging a draft ------------------------------------------------------------------------


def judge_draft(
    draft: str,
    sources: Sequence[Source],
    *,
    question: str = "",
    earlier: Sequence[str] = (),
    needs_support: bool = True,
    specifics: bool = False,
) -> tuple[Shown, ...]:
    """Each sentence of the model's ``draft``, judged: :data:`SUPPORTED` (a source states it
    and it does not parrot), else :data:`WITHHELD` when ``needs_support`` (a question the
    sources are for: about the user, their notes, their history) or when it parrots, else
    :data:`OWN`. A draft that repeats an earlier answer is withheld whole. ``specifics``:
    even where the model's own words are allowed, a number, date or name no source (the
    question included) holds is withheld — the user told something about their life ("My
    landlord told me the rent goes up to 950 euros"), and the model must not add to it."""
    text = grounding.complete_sentences(draft)
    if not text:
        return ()
    texts = [s.text for s in sources]
    if repeats_earlier(text, earlier, question):
        reason = gettext_("it repeats an earlier answer of this conversation for a new question")
        return tuple(
            Shown(grounding.strip_citations(s)[0], WITHHELD, reason=reason)
            for s in grounding.split_sentences(text)
        )
    out: list[Shown] = []
    checked = {c.text: c for c in grounding.check_sentences(text, sources)} if sources else {}
    for sentence in grounding.split_sentences(text):
        said, _ = grounding.strip_citations(sentence)
        echoed = echoed_scaffolding(said)
        invented = invented_specifics(
            said, [*texts, question], numbers=needs_support or specifics, names=specifics
        )
        c = checked.get(said)
        if echoed:
            reason = gettext_("it copies the prompt (“{echoed}”)").format(echoed=echoed)
            out.append(Shown(said, WITHHELD, reason=reason))
        elif invented:
            reason = gettext_("it states what no source holds: {words}").format(
                words=", ".join(invented[:3])
            )
            out.append(Shown(said, WITHHELD, reason=reason))
        elif c is not None and c.supported:
            out.append(Shown(said, SUPPORTED, c.number))
        elif needs_support:
            reason = (
                c.reason_text() if c is not None and c.reason else gettext_("no source states it")
            )
            out.append(Shown(said, WITHHELD, reason=reason))
        else:
            out.append(Shown(said, OWN, reason=gettext_("the model's own words")))
    return tuple(out)


def says_what(sentence: str, source: str, *, missing: int = 1) -> bool:
    """Whether ``sentence`` says what ``source`` says: it holds all of ``source``'s content
    words but ``missing`` ("Your sister Elena lives in Valencia" says what "My sister Elena
    lives in Valencia with her husband" says; "Elena, your sister Elena" does not: a true
    sentence that leaves the answer out)."""
    have = set(grounding.content(sentence))
    wanted = set(grounding.content(source))
    return len(wanted - have) <= missing


def draft_passes(sentences: Sequence[Shown]) -> bool:
    """A draft may replace the composed answer: it has sentences and every one is supported."""
    return bool(sentences) and all(s.supported for s in sentences)


def choose(
    composed: Answer,
    draft: str,
    sentences: Sequence[Shown],
    *,
    answers_question: bool = True,
    heading: str = "",
) -> Answer:
    """The answer to show once the draft is judged: the draft when it passes and answers the
    question (mode :data:`GENERATED`), else ``composed`` with the draft and why it lost."""
    sentences = tuple(sentences)
    reason = ""
    if not sentences:
        reason = gettext_("the model gave no answer")
    elif not draft_passes(sentences):
        bad = [s for s in sentences if not s.supported]
        reason = gettext_("{bad} of {count} sentences not supported").format(
            bad=len(bad), count=len(sentences)
        )
        first = next((s.reason for s in bad if s.reason), "")
        reason += f" ({first})" if first else ""
    elif not answers_question:
        reason = gettext_("the model's answer does not say what answers the question")
    if reason:
        return replace(composed, draft=draft, draft_sentences=sentences, reason=reason)
    return Answer(GENERATED, sentences, heading or composed.heading, draft, sentences)


# -- printing -------------------------------------------------------------------------------

#: how a terminal marks each kind of sentence (the tabs use ✓ [n], grey italics, struck out)
MARKS = {SUPPORTED: "✓", OWN: "·", WITHHELD: "✗"}


def render_text(
    answer: Answer,
    *,
    own: str = "the model's own words, not from your sources",
    withheld: str = "Withheld from the model's draft (not shown as an answer):",
) -> str:
    """``answer`` for a terminal: its heading, each sentence marked by kind (✓ with its
    ``[n]``, · for the model's own words, with ``own``), then the draft's withheld sentences
    with why. A sentence the assistant states itself ("You haven't told me that.") is plain."""
    lines = [answer.heading] if answer.heading else []
    for s in answer.sentences:
        # one line per sentence: a draft's line breaks would leave bare lines between a
        # sentence and its citation
        text = " ".join(s.text.split())
        if s.kind == SUPPORTED:
            lines.append(
                f"  {MARKS[SUPPORTED]} {' '.join(s.display().split())}" if s.number else f"  {text}"
            )
        elif s.kind == OWN and answer.mode == MODEL and answer.heading:
            lines.append(f"  {MARKS[OWN]} {text}")  # the heading says whose words they are
        elif s.kind == OWN:
            lines.append(f"  {MARKS[OWN]} {text}  ({own})")
    held = answer.withheld
    if held:
        lines.append(withheld)
        lines += [f"  {MARKS[WITHHELD]} {' '.join(s.text.split())} — {s.reason}" for s in held]
    return "\n".join(lines)


class DraftProgress:
    """The model's draft while it runs, for a command line: one line on stderr saying how
    many words it has written, erased when it ends — the draft itself is printed only once
    judged (:func:`render_text`), never before. Nothing at all when stderr is not a terminal.
    ``label`` is in the user's language ("the model is writing a draft…")."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.words = 0
        self._shown = False
        try:
            self._tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self._tty = False

    def __call__(self, piece: str) -> None:
        self.words += len(piece.split())
        if self._tty:
            self.stream.write(f"\r{self.label} {self.words}")
            self.stream.flush()
            self._shown = True

    def done(self) -> None:
        """Erase the progress line (the judged answer is printed next)."""
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False


# -- how often a model's drafts pass --------------------------------------------------------

STATS_FILE = "draft_stats.json"


@dataclass
class _Tally:
    drafts: int = 0
    passed: int = 0


@dataclass
class DraftStats:
    """Per model (a key like ``"memories:smollm2"``): how many drafts were judged and how
    many passed. When a model's rate is low, drafts stop being generated (the composed answer
    alone is shown at once) unless the user asks ("Ask the model to rephrase").

    Kept in a small JSON file in the data dir — cache class: losing it only means the drafts
    are tried again until the rate is known. ``path=None`` keeps it in memory (tests)."""

    path: Path | None = None
    #: drafts judged before a rate decides anything
    min_drafts: int = 5
    #: below this pass rate, drafts are not generated unless asked for
    low_rate: float = 0.2
    _tallies: dict[str, _Tally] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.path is not None:
            self._tallies = _load(self.path)

    def record(self, key: str, passed: bool) -> None:
        with self._lock:
            tally = self._tallies.setdefault(key, _Tally())
            tally.drafts += 1
            tally.passed += int(passed)
            if self.path is not None:
                _save(self.path, self._tallies)

    def counts(self, key: str) -> tuple[int, int]:
        """``(passed, drafts)`` for ``key``."""
        with self._lock:
            tally = self._tallies.get(key, _Tally())
            return tally.passed, tally.drafts

    def rate(self, key: str) -> float | None:
        """The share of ``key``'s drafts that passed; None before any."""
        passed, drafts = self.counts(key)
        return passed / drafts if drafts else None

    def should_draft(self, key: str) -> bool:
        """Generate a draft unprompted: not yet known, or its drafts pass often enough."""
        passed, drafts = self.counts(key)
        return drafts < self.min_drafts or passed / drafts >= self.low_rate

    def reset(self, key: str) -> None:
        with self._lock:
            self._tallies.pop(key, None)
            if self.path is not None:
                _save(self.path, self._tallies)


def _load(path: Path) -> dict[str, _Tally]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # a cache: missing or torn, it starts again
    out: dict[str, _Tally] = {}
    if isinstance(raw, dict):
        for key, value in raw.items():
            if isinstance(value, dict):
                drafts, passed = value.get("drafts"), value.get("passed")
                if isinstance(drafts, int) and isinstance(passed, int) and 0 <= passed <= drafts:
                    out[str(key)] = _Tally(drafts, passed)
    return out


def _save(path: Path, tallies: dict[str, _Tally]) -> None:
    data = {k: {"drafts": t.drafts, "passed": t.passed} for k, t in sorted(tallies.items())}
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".draft_stats.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1)
        os.replace(tmp, path)
    except OSError:
        # a cache that cannot be written is only a cache: drafts go on being tried
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
