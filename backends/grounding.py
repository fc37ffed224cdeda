"""Answers as evidence (CT9): every sentence shown as fact stands in a passage it cites.

A small local model is a fluent guesser. It may be handed the right note and still say
something else, so nothing it writes is shown as fact on its word. This module does three
things, none of them with the chat model:

- :func:`check_sentences` splits an answer into sentences and looks, for each one, for a
  single sentence of a retrieved passage that *states* it: every content word and number of
  the answer's sentence must stand in that passage sentence (after light stemming, number
  words read as digits, and a few abbreviations expanded), with the same polarity (a "not"
  or "never" on one side only is a contradiction). Words of the passage's own title may be
  left implicit ("the antidote [for paracetamol]"). A sentence that passes is *supported* and
  cites that passage; any other is *unsupported* and is never shown as fact.
- :func:`extract` composes the extractive answer: the passage sentences that best answer the
  question (its words, weighted by how rare they are in the notes), quoted with ``[n]``.
  It is right by construction: it only quotes.
- :func:`coverage` tells whether the passages answer the question at all: the share of the
  question's rare words that the best passage holds. Below a threshold measured on
  bench/data/answer_eval.json, the notes do not cover the question.

The check is lexical. It guarantees that every word and number of a shown sentence stands in
one sentence of the cited passage, with the same polarity; it does not parse meaning, so a
sentence that only rearranges its source's words ("A monitors B" from "B monitors A") could
pass. docs/TUTOR.md says this to clinicians.

What language a question is in is told here (:func:`language`); putting a Spanish question in
the notes' English words is the tutor's (:mod:`backends.tutor.translation`).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from backends.i18n import N_, gettext_

# -- words ----------------------------------------------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: function words and the words an answer uses to talk about its sources: never evidence
STOPWORDS = _wordset(
    """
    a about above after again against also am an and are as at be because been before
    being below between both but by can could did do does doing down during either else
    etc for from further had has have having he her here hers herself him himself his how
    i if in into is it its itself just let me more much must my myself nor now of off on
    or other our ours ourselves out over own per same she should so such than
    that the their theirs them themselves then there these they this those through thus to too
    under until up upon us very via was we were what when where whether which while who whom
    whose why will with within would you your yours yourself yourselves
    may might often usually generally typically commonly mainly especially particularly
    important importantly key main basically essentially simply really actually indeed
    according passage passages note notes context source sources text document documents
    answer question based provided stated says say said mentioned mention described
    following however therefore also furthermore moreover additionally overall summary
    yes okay ok well like one's people patient patients person someone do done does
    """
)

#: Spanish glue ("El hermano vive en Sevilla" says what "Mi hermano vive en Sevilla" says);
#: "son" is left out: it is an English word too
STOPWORDS_ES = _wordset(
    """
    el la los las un una unos unas de del al en y e o u que es con para por se lo le les su
    sus mi mis tu tus muy ya este esta estos estas ese esa
    """
)

#: a word that turns a statement into its opposite
NEGATORS = _wordset("not no never without cannot none nor neither nothing unable")

#: number words read as digits ("eight hours" = "8 hours")
NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "fifteen": "15",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "once": "1",
    "twice": "2",
    "single": "1",
    "double": "2",
}

#: abbreviations an answer may use for a word its source spells out (one word each way)
SYNONYMS = {
    "iv": "intravenous",
    "im": "intramuscular",
    "sc": "subcutaneous",
    "po": "oral",
    "orally": "oral",
    "intravenously": "intravenous",
    "intramuscularly": "intramuscular",
    "subcutaneously": "subcutaneous",
    "epinephrine": "adrenaline",
    "acetaminophen": "paracetamol",
    "hypoglycemia": "hypoglycaemia",
    "anemia": "anaemia",
    "edema": "oedema",
    "ischemia": "ischaemia",
    "ischemic": "ischaemic",
    "hemorrhage": "haemorrhage",
    "hemoglobin": "haemoglobin",
    "tumor": "tumour",
    "color": "colour",
    "n-acetylcysteine": "acetylcysteine",
    # one word, several forms
    "commonest": "common",
    "anaemic": "anaemia",
    "anemic": "anaemia",
    "diagnosis": "diagnosed",
    "diagnoses": "diagnosed",
    "diagnose": "diagnosed",
    "diagnostic": "diagnosed",
    # irregular forms
    "used": "use",
    "uses": "use",
    "using": "use",
    "given": "give",
    "gave": "give",
    "taken": "take",
    "took": "take",
    "shown": "show",
    "made": "make",
    "done": "do",
    "seen": "see",
    "written": "write",
    "worse": "bad",
    "worst": "bad",
    "better": "good",
    "best": "good",
    "lower": "low",
    "lowest": "low",
    "higher": "high",
    "highest": "high",
    "raised": "raise",
    "rising": "rise",
}

_WORD = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
_CITATION = re.compile(r"\s*\[(\d{1,2})\](?:\s*\[(\d{1,2})\])*")


def fold(text: str) -> str:
    """Lower case without accents: what two spellings of one word have in common."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def stem(word: str) -> str:
    """A light English stem: enough for "kidneys"/"kidney", "treated"/"treat" and
    "caused"/"causes"/"cause" (a final "e" goes too)."""
    word = _suffix(word)
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


def _suffix(word: str) -> str:
    for suffix, keep in (
        ("ically", "ic"),
        ("ously", "ous"),
        ("ies", "y"),
        ("ied", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("edly", ""),
        ("ed", ""),
        ("ly", ""),
        ("es", "e"),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            return word[: len(word) - len(suffix)] + keep
    return word


_AMERICAN = (
    (re.compile(r"(?<!a)emi(a|c)$"), r"aemi\1"),  # hyperkalemia, anemic
    (re.compile(r"^hem(?=[aeo])"), "haem"),  # hemorrhage, hemoglobin
    (re.compile(r"^edem"), "oedem"),
    (re.compile(r"^esophag"), "oesophag"),
    (re.compile(r"^ischem"), "ischaem"),
    (re.compile(r"^pediatr"), "paediatr"),
    (re.compile(r"^(tum|col|behavi)or"), r"\1our"),
)


def british(word: str) -> str:
    """The notes' spelling of an American one ("hyperkalemia" -> "hyperkalaemia")."""
    for pattern, replacement in _AMERICAN:
        word = pattern.sub(replacement, word)
    return word


def normal(word: str) -> str:
    """The form two tokens are compared in: folded, a synonym resolved, British spelling, a
    number word as digits, stemmed."""
    word = british(fold(word).replace(",", "."))
    word = SYNONYMS.get(word, word)
    word = NUMBER_WORDS.get(word, word)
    return word if word[0].isdigit() else stem(word)


#: an ordinal's ending is no word of its own ("March 14th" is March 14)
_ORDINAL = re.compile(r"(?<=\d)(?:st|nd|rd|th|º|ª)\b", re.IGNORECASE)


def words(text: str) -> list[str]:
    """Every token of ``text`` (folded), in order."""
    text = _ORDINAL.sub("", text.replace("-", " ").replace("/", " "))
    return [fold(w) for w in _WORD.findall(text)]


def content(text: str) -> list[str]:
    """The normalised content words of ``text``: what a sentence says, without the glue."""
    out = []
    for w in words(text):
        glue = w in STOPWORDS or w in STOPWORDS_ES or w in NEGATORS
        if glue or (len(w) == 1 and not w.isdigit()):
            continue
        n = normal(w)
        if n not in STOPWORDS:  # "mainly" is "main": glue too
            out.append(n)
    return out


_TOKEN_OR_MARK = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+(?:'[^\W\d_]+)?|[,;:.!?()]", re.UNICODE)
#: words that end a negation's reach ("does not irritate the stomach, and is safe")
_SCOPE_ENDS = _wordset(", ; : . ! ? ( ) and but or while whereas because which although")
#: how many content words a negation reaches
_SCOPE_WORDS = 6


def negated(text: str) -> bool:
    return any(w in NEGATORS or w.endswith("n't") for w in words(text))


#: words that forbid what their clause names: "NSAIDs are avoided", "beta blockers are
#: contraindicated in asthma" deny "NSAIDs can be given" as surely as a "not" does
FORBIDDING = _wordset(
    """
    avoid avoided avoids avoiding contraindicated contraindication contraindications withhold
    withheld withholding stop stopped stopping omit omitted discontinue discontinued unsafe
    harmful dangerous
    """
)
_CLAUSE = re.compile(r"[,;:.!?()]")


def forbidden_words(text: str) -> set[str]:
    """The content words of every clause of ``text`` that holds a :data:`FORBIDDING` word."""
    out: set[str] = set()
    for clause in _CLAUSE.split(text):
        if any(w in FORBIDDING for w in words(clause)):
            out |= set(content(clause))
    return out


def negated_words(text: str) -> set[str]:
    """The normalised content words inside the reach of a negation in ``text``: "not
    first-line treatments" negates {first, line, treatment}; the reach ends at punctuation, a
    conjunction, or after :data:`_SCOPE_WORDS` content words."""
    out: set[str] = set()
    reach = 0
    for token in _TOKEN_OR_MARK.findall(text.replace("-", " ").replace("/", " ")):
        t = fold(token)
        if t in NEGATORS or t.endswith("n't"):
            reach = _SCOPE_WORDS
            continue
        if t in _SCOPE_ENDS:
            reach = 0
            continue
        if reach and t not in STOPWORDS and (len(t) > 1 or t.isdigit()):
            out.add(normal(t))
            reach -= 1
    return out


# -- sentences ------------------------------------------------------------------------------

_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "dr.", "approx.", "cf.", "no.", "fig.", "al.")
_BOUNDARY = re.compile(r"(?<=[.!?;])\s+(?=[\"'(\[¿¡]?[A-Z0-9ÁÉÍÓÚÑ])|\n\s*\n|\n\s*[-*•]\s+")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, each stripped, Markdown headings and bullets dropped.

    A semicolon before a capital or a digit ends a sentence too ("… inferior; V1 to V4 …").
    """
    text = re.sub(r"^\s*#+\s.*$", "", text, flags=re.MULTILINE)
    out: list[str] = []
    for piece in _BOUNDARY.split(text):
        piece = " ".join(piece.split()).strip(" -*•")
        if not piece:
            continue
        if out and out[-1].casefold().endswith(_ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}"
            continue
        if piece.endswith(";"):  # "X; Y": X is a sentence of its own
            piece = piece[:-1].rstrip() + "."
        out.append(piece)
    return out


def strip_citations(sentence: str) -> tuple[str, tuple[int, ...]]:
    """The sentence without its ``[n]`` marks, and the numbers it cited."""
    numbers = tuple(int(n) for n in re.findall(r"\[(\d{1,2})\]", sentence))
    text = " ".join(_CITATION.sub(" ", sentence).split())
    return re.sub(r"\s+([.,;:!?])", r"\1", text), numbers


def complete_sentences(text: str) -> str:
    """``text`` cut after its last finished sentence (a stream stopped by the token budget
    ends mid-word); all of it when no sentence finished."""
    stripped = text.rstrip()
    if not stripped or stripped[-1] in ".!?)]\"'":
        return stripped
    ends = [m.end() for m in re.finditer(r"[.!?](?:\s*\[\d{1,2}\])*(?=\s|$)", stripped)]
    return stripped[: ends[-1]] if ends else stripped


# -- sources --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A numbered passage an answer may cite."""

    number: int
    title: str
    text: str

    @property
    def sentences(self) -> list[str]:
        return split_sentences(self.text)


@dataclass
class Vocabulary:
    """How rare each word is in the notes (inverse document frequency over chunks)."""

    documents: int = 0
    frequency: Counter[str] = field(default_factory=Counter)
    #: how the notes write each word (normal form -> its written forms, counted)
    spellings: dict[str, Counter[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, texts: Iterable[str]) -> Vocabulary:
        vocabulary = cls()
        for text in texts:
            vocabulary.documents += 1
            vocabulary.frequency.update(set(content(text)))
            for w in words(text):
                if w not in STOPWORDS and len(w) > 2:
                    vocabulary.spellings.setdefault(normal(w), Counter())[w] += 1
        return vocabulary

    def update(self, other: Vocabulary) -> None:
        """Add ``other``'s counts (the vocabularies of several scopes as one)."""
        self.documents += other.documents
        self.frequency.update(other.frequency)
        for form, spelled in other.spellings.items():
            self.spellings.setdefault(form, Counter()).update(spelled)

    def spelling(self, word: str) -> str:
        """How the notes most often write ``word`` (a word of the same normal form), or
        ``word`` itself: "warfarine" is written "warfarin" there."""
        spelled = self.spellings.get(normal(word))
        return spelled.most_common(1)[0][0] if spelled else word

    def __contains__(self, word: str) -> bool:
        return word in self.frequency

    def idf(self, word: str) -> float:
        """Rare words weigh more; a word the notes never use weighs most."""
        n = max(self.documents, 1)
        return math.log((n + 1) / (self.frequency.get(word, 0) + 0.5))


# -- the support check ----------------------------------------------------------------------


@dataclass(frozen=True)
class CheckedSentence:
    """One sentence of an answer and what the check found for it."""

    text: str
    supported: bool
    #: the passage that states it (supported), or the closest one (unsupported); 0: none
    number: int = 0
    #: the passage sentence that states it, or the closest one
    evidence: str = ""
    #: the words of the sentence that its evidence does not hold
    missing: tuple[str, ...] = ()
    #: why it is unsupported, for people ("" when supported); English (``--json``): shown
    #: with :meth:`reason_text`
    reason: str = ""

    def reason_text(self) -> str:
        """:attr:`reason` in the language messages are in now."""
        head = NOT_IN_CLOSEST.partition("{")[0]
        if self.reason.startswith(head):
            return gettext_(NOT_IN_CLOSEST).format(words=self.reason[len(head) :])
        return gettext_(self.reason) if self.reason else ""

    def as_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "supported": self.supported,
            "cites": self.number if self.supported else None,
            "evidence": self.evidence,
            "reason": self.reason,
        }


#: why a sentence is unsupported (``reason``), marked here and translated where shown
NOTHING_STATED = N_("it states nothing the notes could support")
NO_PASSAGE = N_("no passage was found to check it against")
NOT_IN_CLOSEST = N_("not in the closest passage sentence: {words}")
OPPOSITE = N_("the closest passage sentence says the opposite (a negation differs)")


def _dangling(text: str) -> bool:
    """A negation that reaches no word (:func:`negated_words`): "not, as often thought, …"."""
    return negated(text) and not negated_words(text)


def _check_one(sentence: str, sources: Sequence[Source]) -> CheckedSentence:
    said, _ = strip_citations(sentence)
    wanted = content(said)
    if not wanted:  # nothing to check: a greeting, "Yes." — not a statement of fact
        return CheckedSentence(said, False, reason=NOTHING_STATED)
    wanted_set = set(wanted)
    # polarity is read alike on both sides: what a negation (or a forbidding word) reaches
    # among the sentence's words — "… present but not where or why" negates no word, and
    # was once "the opposite" of itself (issue 27); a negation that reaches no word at all
    # ("is not, as often thought, safe") must be matched by a negation on the other side
    polarity = bool(negated_words(said) & wanted_set)
    forbidding = bool(forbidden_words(said) & wanted_set)
    said_negated, said_dangling = negated(said), _dangling(said)
    best: tuple[int, int, str, tuple[str, ...]] | None = None  # (missing, number, text, miss)
    for source in sources:
        implicit = set(content(source.title))
        for candidate in source.sentences:
            have = set(content(candidate))
            missing = tuple(dict.fromkeys(w for w in wanted if w not in have))
            missing_explicit = tuple(w for w in missing if w not in implicit)
            # a negation counts where it reaches the sentence's words ("no improvement" does
            # not negate "adrenaline into the thigh")
            reached, candidate_negated = negated_words(candidate), negated(candidate)
            dangling = said_dangling or (candidate_negated and not reached)
            flips = (
                bool(reached & wanted_set) != polarity
                or bool(forbidden_words(candidate) & wanted_set) != forbidding
                or (dangling and candidate_negated != said_negated)
            )
            score = len(missing_explicit) + (len(wanted) if flips else 0)
            if best is None or score < best[0]:
                best = (score, source.number, candidate, missing_explicit)
            if score == 0:
                return CheckedSentence(said, True, source.number, candidate)
    if best is None:
        return CheckedSentence(said, False, reason=NO_PASSAGE)
    _, number, evidence, missing = best
    if missing:
        surface = {normal(w): w for w in reversed(words(said))}  # the words as written
        shown = [surface.get(w, w) for w in missing[:6]]
        reason = NOT_IN_CLOSEST.format(words=", ".join(shown))
    else:
        reason = OPPOSITE
    return CheckedSentence(said, False, number, evidence, missing, reason)


def check_sentences(answer: str, sources: Sequence[Source]) -> list[CheckedSentence]:
    """Each sentence of ``answer``, supported by a passage sentence or not (module doc)."""
    return [
        _check_one(s, sources)
        for s in split_sentences(answer)
        # "1. [3]", "Yes." state nothing to check: a sentence has a word, not only numbers
        if any(not w[0].isdigit() for w in content(strip_citations(s)[0]))
    ]


def restates(sentence: CheckedSentence, asked: Sequence[str]) -> bool:
    """A sentence that says nothing beyond the question ("Sepsis signs.") is not an answer,
    however true. (Its note's title may be the answer: "The INR monitors warfarin.")"""
    return set(content(sentence.text)) <= set(asked)


# -- the extractive answer ------------------------------------------------------------------


@dataclass(frozen=True)
class Quote:
    """A passage sentence quoted as (part of) the answer."""

    number: int
    text: str
    score: float


#: what a question's verb asks for, in the notes' word: "what do you give for X?" asks for
#: X's treatment, which a note states as "treatment is …" (the question's own word is kept)
ASKS_FOR = {"give": "treatment", "prescribe": "treatment", "take": "treatment"}


def question_words(question: str, translate: dict[str, str] | None = None) -> list[str]:
    """The question's content words, each once; Spanish words through ``translate``."""
    out: list[str] = []
    asks_for = {normal(verb): normal(word) for verb, word in ASKS_FOR.items()}
    for w in words(question):
        w = (translate or {}).get(w, w)
        for part in words(w):  # a translation is read as the notes' words ("C-reactive")
            if part in STOPWORDS or part in NEGATORS or part in QUESTION_WORDS_ES:
                continue
            if len(part) == 1 and not part.isdigit():
                continue
            n = normal(part)
            for form in (n, asks_for.get(n)):
                if form is not None and form not in out:
                    out.append(form)
    return out


#: words of the question that are one word of it said several ways (the names "-pril"
#: stands for: ramipril, lisinopril, enalapril), each group weighed as one word
Alternatives = Sequence[frozenset[str]]


def _overlap(
    asked: Sequence[str],
    text: str,
    vocabulary: Vocabulary,
    alternatives: Alternatives = (),
    given: frozenset[str] = frozenset(),
) -> float:
    """The idf-weighted share of the question's words that ``text`` holds (a group of
    ``alternatives`` counts once, held when one of it is: a sentence naming three drugs
    "-pril" stands for does not outweigh the one saying what the question asks of them;
    ``given``: words counted as held)."""
    if not asked:
        return 0.0
    have = set(content(text)) | given
    grouped = {w for group in alternatives for w in group}
    total = sum(vocabulary.idf(w) for w in asked if w not in grouped)
    held = sum(vocabulary.idf(w) for w in asked if w not in grouped and w in have)
    for group in alternatives:
        weight = max((vocabulary.idf(w) for w in group if w in asked), default=0.0)
        total += weight
        held += weight if group & have else 0.0
    return held / total if total > 0 else 0.0


#: how many of the question's entities a text names (title and sentence together)
About = Callable[[str], int]


def score_sentences(
    asked: Sequence[str],
    sources: Sequence[Source],
    vocabulary: Vocabulary,
    passages: int = 5,
    about: About | None = None,
    alternatives: Alternatives = (),
    forms: Alternatives = (),
) -> list[Quote]:
    """Every sentence of the best ``passages`` sources, scored by how well it answers the
    question, best first.

    ``forms``: groups of one word's forms ("treat", "treatment", "therapy"), weighed as one
    word like ``alternatives`` but held only by a sentence saying one of them — never given
    to every sentence of a note that names one (as a drug group its note names is).

    A sentence scores by the share of the question's (rare) words it holds, its passage's
    title and words as context: a sentence saying "The antidote, intravenous acetylcysteine,
    ..." in the Paracetamol note answers "antidote for paracetamol overdose" though it does
    not repeat "paracetamol". Lower-ranked passages and negated sentences score a little less.

    With ``about`` (the question names entities: "amoxicillin"), a sentence that names none of
    them, title included, is not an answer at all ("Levothyroxine has a long half-life" for
    "the half-life of amoxicillin"), and one naming more of them scores more.
    """
    scored: list[Quote] = []
    for rank, source in enumerate(sources[:passages]):
        context = _overlap(
            asked, source.title + " " + source.text, vocabulary, [*alternatives, *forms]
        )
        # a group its note names is its subject, matched: each of its sentences holds it,
        # and the one saying what is asked of it leads ("-pril … in pregnancy")
        there = set(content(" ".join(s.text for s in sources if s.title == source.title)))
        given = frozenset(w for group in alternatives if group & there for w in group)
        alternatives_and_forms = [*alternatives, *forms]
        for sentence in source.sentences:
            if len(content(sentence)) < 3:
                continue
            named = about(f"{source.title}. {sentence}") if about is not None else 1
            if not named:
                continue
            own = _overlap(
                asked, source.title + " " + sentence, vocabulary, alternatives_and_forms, given
            )
            own += 0.15 * (named - 1)
            # what is not done answers a question less than what is ("antihistamines are not
            # first-line" after "adrenaline is the first-line treatment")
            score = own + 0.25 * context - 0.05 * rank - (0.1 if negated(sentence) else 0.0)
            scored.append(Quote(source.number, sentence, score))
    scored.sort(key=lambda q: -q.score)
    return scored


#: a sentence scoring at least this share of the best one answers the question too
CLOSE_TO_BEST = 0.75


def extract(
    asked: Sequence[str],
    sources: Sequence[Source],
    vocabulary: Vocabulary,
    *,
    most: int = 3,
    passages: int = 5,
    about: About | None = None,
    alternatives: Alternatives = (),
    forms: Alternatives = (),
) -> list[Quote]:
    """The sentences that answer the question best (:func:`score_sentences`): the best one,
    the next sentence of its passage when it goes on with the same words, then others that
    score close to the best; never one sentence twice (chunks overlap)."""
    scored = score_sentences(asked, sources, vocabulary, passages, about, alternatives, forms)
    if not scored:
        return []
    following: dict[tuple[int, str], str] = {}  # (passage, sentence) -> the next one there
    for source in sources[:passages]:
        sentences = source.sentences
        for i in range(len(sentences) - 1):
            following[source.number, sentences[i]] = sentences[i + 1]
    best = scored[0]
    chosen = [best]
    # the best sentence's next one often completes it ("… a hypersensitivity reaction." "The
    # risk is higher with HLA-B*58:01."): it comes along when it goes on with the same words
    after = following.get((best.number, best.text))
    if after and set(content(after)) & (set(content(best.text)) | set(asked)):
        chosen.append(Quote(best.number, after, best.score))
    for quote in scored[1:]:
        if len(chosen) >= most:
            break
        if quote.score >= CLOSE_TO_BEST * best.score and not any(
            _same(quote.text, c.text) for c in chosen
        ):
            chosen.append(quote)
    return chosen


def _same(a: str, b: str) -> bool:
    """One sentence, whatever the chunk boundaries did to it (one holds the other)."""
    x, y = " ".join(content(a)), " ".join(content(b))
    return x in y or y in x


def answers_the_question(
    checked: Sequence[CheckedSentence], scored: Sequence[Quote], sources: Sequence[Source]
) -> bool:
    """Whether a supported answer says what the best passage sentences say: one of its
    sentences is stated by a sentence scoring close to the best (:func:`score_sentences`)."""
    if not scored:
        return False
    titles = {s.number: s.title for s in sources}
    best = [
        Source(q.number, titles.get(q.number, ""), q.text)
        for q in scored
        if q.score >= CLOSE_TO_BEST * scored[0].score
    ]
    return any(c.supported and _check_one(c.text, best).supported for c in checked)


def coverage(asked: Sequence[str], sources: Sequence[Source], vocabulary: Vocabulary) -> float:
    """How well the best passage holds the question's words that the notes use (0 to 1; rare
    words weigh more). Words the notes never use are the coverage rule's other input."""
    known = [w for w in asked if w in vocabulary]
    best = 0.0
    for source in sources:
        best = max(best, _overlap(known, source.title + " " + source.text, vocabulary))
    return best


# -- languages ------------------------------------------------------------------------------

#: Spanish question words: not content
QUESTION_WORDS_ES = _wordset(
    """
    que qué cual cuál cuales cuáles como cómo cuando cuándo donde dónde quien quién por para
    porque el la los las lo un una unos unas de del al en y o u a con sin se su sus es son
    esta este estos estas ese esa eso hay ser debe deben puede pueden mas más muy tiene tienen
    le les me mi tu nos ante bajo entre hacia hasta segun según sobre tras durante si no ya
    cada todo toda todos todas otro otra otros otras mismo misma se usa usan
    """
)

_SPANISH_MARKS = _wordset(
    """
    que qué cuál cuáles cómo cuándo dónde por para porque el la los las del es son una un se
    con sin debe hay tiene cuanto cuánto qui quién
    """
)
_ENGLISH_MARKS = _wordset(
    "the what which how why when is are does do of for with in a an should who can"
)


def english_marks(text: str) -> int:
    """How many English function words ``text`` has (none: "Hola", "ok", a name)."""
    return sum(w.casefold() in _ENGLISH_MARKS for w in _WORD.findall(text))


def language(text: str) -> str:
    """``"es"`` or ``"en"``: the language of a question, by its function words (and ¿ ñ)."""
    tokens = [w.casefold() for w in _WORD.findall(text)]
    spanish = sum(t in _SPANISH_MARKS for t in tokens) + 2 * ("¿" in text or "ñ" in text.lower())
    english = sum(t in _ENGLISH_MARKS for t in tokens)
    return "es" if spanish > english else "en"
