"""What a question asks *about* its subject, and whether a passage answers that (issue 24).

"What monitoring does lithium need?" names lithium, which two notes mention once ("Amiodarone,
lithium, high-dose steroids and biotin supplements can alter results"), and asks for its
monitoring, which no note gives. A quote holding the subject's word is then a *mention*, not an
answer: the tutor says "not covered — your notes only mention …" and cites the mention.

A question asks an :data:`ASPECTS` aspect (treatment, monitoring, cause, side effects,
symptoms, diagnosis) when it holds one of its words. A sentence answers it when it holds one
of the aspect's evidence words *and* the question's subject is the sentence's topic: the
subject is in its note's title, or it stands in the sentence before the evidence word ("Gout
is caused by…", not "Gastrointestinal causes are … coeliac disease"). Everything here works
on :func:`backends.grounding.normal` forms, so Spanish questions (read in their English
words) are weighed the same way.

Also here: amounts by kind (a dose is a number with a unit of dose, a duration one with a unit
of time), and the English lay words and drug-name endings a question may use for the notes'
words ("sugar" for glucose, "-pril" for ramipril, lisinopril, enalapril).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from backends.grounding import Quote, Source, Vocabulary, content, fold, normal, words


def _normals(text: str) -> frozenset[str]:
    return frozenset(normal(w) for w in text.split())


@dataclass(frozen=True)
class Aspect:
    """One thing a question may ask about its subject."""

    name: str
    #: question words that ask it (normal forms)
    asks: frozenset[str]
    #: words of a sentence that gives it (normal forms)
    evidence: frozenset[str]


ASPECTS = (
    Aspect(
        "treatment",
        _normals("treat treated treatment treatments manage managed management therapy cure"),
        _normals(
            "treat treated treatment therapy manage managed management give given use used "
            "start started relieve relieved cure first-line reverse reversed stop stopped "
            "antidote replacement "
            # what a patient is given, said by its route or by what they need or receive ("An
            # unconscious patient needs intravenous glucose or intramuscular glucagon" was no
            # answer to "How is hypoglycaemia treated in an unconscious patient?")
            "need needs receive receives administer administered intravenous intramuscular "
            "subcutaneous oral nebulised"
        ),
    ),
    Aspect(
        "monitoring",
        _normals("monitor monitored monitoring"),
        _normals("monitor monitored monitoring check checked measure measured test tests review"),
    ),
    Aspect(
        "cause",
        _normals("cause causes caused"),
        _normals(
            "cause causes caused due result results trigger triggered lead leads come comes "
            "follow follows risk"
        ),
    ),
    Aspect(
        "side effects",
        _normals("side adverse"),
        _normals(
            "side adverse effect effects reaction reactions complication complications risk "
            "cause causes toxicity"
        ),
    ),
    Aspect(
        "symptoms",
        _normals("symptom symptoms"),
        _normals("symptom symptoms sign signs present presents feature features cause causes"),
    ),
    Aspect(
        "diagnosis",
        _normals("diagnosed diagnosis diagnose"),
        _normals(
            "diagnosed diagnosis confirm confirmed confirms test tests show shows measure "
            "measured support supports exclude excludes rule rules"
        ),
    ),
)
#: question words that are neither the subject nor the aspect ("what monitoring does it *need*"),
#: nor which of the aspect's answers is asked ("the *most frequent* cause", "the *usual*
#: causes", "at what *value* is it diagnosed": issue 27 — the rarest word of a subject must
#: be in the answering passage, and "frequent" never is)
GENERIC = _normals(
    "need needs needed require required level levels long course often most more frequent "
    "frequently common commonest usual usually main principal typical typically value values"
)
#: words that ask rather than say: "what is *given*…" (grounding adds "treatment" for it),
#: "how long", "cuánto *tiempo*"
ASKING_WORDS = _normals("give given take taken prescribe prescribed treatment time long often")
#: what a question asking a time says to ask it ("how *soon*", "en cuánto *tiempo*"): a
#: duration answers it, not these words
TIME_WORDS = _normals("time long often soon quickly quick fast")


#: verbs whose question asks for a treatment (grounding adds "treatment" for them): they
#: weigh the passages, but "what is given instead…" asks no treatment *of its subject*
_GIVING = _normals("give given take taken prescribe prescribed")


#: a question opening with these identifies a thing ("which drug class causes a cough?"):
#: it asks for a name, not for an aspect of its subject
_IDENTIFYING = ("which", "cual", "cuales")
#: an aspect word after these is the question's circumstance, not what it asks ("what is
#: given instead when ramipril causes a cough?")
_CLAUSE = frozenset(["when", "if", "because", "after", "before", "cuando", "si", "porque"])


def asked_aspects(asked: Iterable[str], question: str = "", english: str = "") -> list[Aspect]:
    """The aspects the question asks (its own words: "treatment" added for "give" is not).

    ``english``: a Spanish question in English word for word (:attr:`Retrieval.english`):
    its own words and its circumstance are read there, in the words of ``asked`` (issue 27:
    "cuando la warfarina causa…" was compared in Spanish with "cause")."""
    have = set(asked)
    said = words(question)
    read = words(english) if english else said
    own = {normal(w) for w in read} if question else have
    if "treatment" in have and "treatment" not in own and have & _GIVING:
        have.discard("treatment")
    if _identifies(said):
        return []
    for i, w in enumerate(read):
        if w in _CLAUSE:  # what follows is a circumstance
            have -= {normal(x) for x in read[i + 1 :]}
            break
    found = [a for a in ASPECTS if a.asks & have]
    if found and (said[:1] == ["why"] or said[:2] == ["por", "que"]):
        # "why must potassium be monitored…?" asks the reason for it, which a sentence about
        # the subject gives ("… because insulin drives potassium into cells"), naming the
        # monitoring or not (issue 27)
        return [Aspect("reason", frozenset().union(*(a.asks for a in found)), REASONS)]
    return found


#: words of a sentence that gives a reason (:func:`answers_aspect` reads "because", "so" too)
REASONS = _normals("cause causes caused due lead leads drive drives reason")
#: a reason's words that are glue to :func:`content`
_REASON_GLUE = frozenset(["because", "so", "since", "therefore", "thus"])


#: words after "what"/"qué" that make it a question about its subject, not a name asked for
_NOT_A_NAME = frozenset(
    words(
        "is are was were does do did can could should would will may might causes cause "
        "happens happen es son se causa causan produce producen hay pasa puede pueden debe "
        "tratamiento controles control sintomas síntomas causas efectos diagnostico diagnóstico "
        "side adverse symptoms signs monitoring treatment treatments"
    )
)


def _identifies(said: Sequence[str]) -> bool:
    """Whether the question asks for a name ("which drug class…", "in which infection…",
    "¿qué bacteria…?"), not for an aspect of its subject."""
    for i, w in enumerate(said[:2]):
        # "¿cuáles son los síntomas…?" asks "what are the symptoms", not for a name
        if w in _IDENTIFYING and said[i + 1 : i + 2] not in (["es"], ["son"]):
            return True
    return len(said) > 1 and said[0] in ("que", "what") and said[1] not in _NOT_A_NAME


def kind_asked(question: str, asked: Sequence[str]) -> str:
    """The kind of thing a question asking for a name asks ("which *organ* makes CRP?",
    "¿qué *órgano* fabrica…?"): its first content word, as weighed (:attr:`asked`), when it
    follows the opening word; "" for another question."""
    said = words(question)
    if not asked or not _identifies(said):
        return ""
    opener = next(i for i, w in enumerate(said) if w in (*_IDENTIFYING, "que", "what"))
    follows = said[opener + 1 : opener + 2]
    return asked[0] if follows and content(follows[0]) else ""


#: words that open a qualifier of the subject ("a severe asthma attack *in* pregnancy")
_QUALIFYING = frozenset(["in", "during", "en", "durante"])


def qualifiers(question: str) -> list[str]:
    """The words of the question's qualifier phrases ("…treated *in pregnancy*?"): a note
    that never names them does not answer for the subject so qualified."""
    said = words(question)
    out: list[str] = []
    for i, w in enumerate(said):
        if w in _QUALIFYING:
            out += content(" ".join(said[i + 1 : i + 4]))[:1]
    return out


def subject_words(asked: Sequence[str], aspects: Sequence[Aspect]) -> list[str]:
    """The question's words that name what it is about (not what it asks of it)."""
    out = []
    for w in asked:
        if w in GENERIC or any(w in a.asks or w in a.evidence for a in aspects):
            continue
        out.append(w)
    return out


#: the words that end a sentence's subject ("An acute severe attack *is* recognised…")
_VERBS = frozenset(
    words(
        "is are was were be been being has have had can could may might must should will "
        "would does do did include includes included need needs require requires remains "
        "remain usually often also"
    )
)
#: words that stand in a sentence's subject without naming a topic ("*It* is given…",
#: "*This* causes…", "*Treatment* is…")
_NO_TOPIC = _normals(
    "it its this these that those they their them first second initial usual main standard "
    "most common commonest option options choice"
)


def topic(sentence: str) -> list[str]:
    """The words of ``sentence``'s subject: its content words before its first verb (at
    most the first six words when no verb is found)."""
    said = words(sentence)
    end = next((i for i, w in enumerate(said) if w in _VERBS), None)
    head = said[: end if end is not None and end <= 8 else 6]
    return content(" ".join(head))


def topicless(sentence: str) -> bool:
    """Whether the sentence's subject names nothing but an aspect or a pronoun ("Treatment
    is oxygen…", "It is given…"): it speaks of the topic before it."""
    own = topic(sentence)
    return all(w in _NO_TOPIC or any(w in a.evidence or w in a.asks for a in ASPECTS) for w in own)


#: how many sentences back a topicless sentence's topic is looked for
_BACK = 2


def contexts(sources: Iterable[Source]) -> dict[tuple[int, str], str]:
    """For each topicless sentence of a passage (:func:`topicless`), the subjects of the
    sentences before it there: "An acute severe attack is recognised by … Life-threatening
    features include … Treatment is oxygen, nebulised salbutamol…" states the treatment of
    the attack though it does not repeat it (issue 24)."""
    out: dict[tuple[int, str], str] = {}
    for source in sources:
        sentences = source.sentences
        for i, sentence in enumerate(sentences):
            if i and topicless(sentence):
                before = sentences[max(0, i - _BACK) : i]
                out[source.number, sentence] = " ".join(" ".join(topic(s)) for s in before)
    return out


def subject_held(sentence: str, title: str, subject: Sequence[str], context: str = "") -> int:
    """How many of the subject's words the sentence, its note's title and its context hold:
    the answer that names more of "severe asthma attack" is the one about it."""
    have = set(content(f"{title} {sentence} {context}"))
    return len(set(subject) & have)


def answers_aspect(
    sentence: str,
    title: str,
    subject: Sequence[str],
    aspects: Sequence[Aspect],
    context: str = "",
    qualified: Sequence[str] = (),
    note: str = "",
) -> bool:
    """Whether ``sentence`` (of the note ``title``; ``context``: the subjects of the sentences
    before it when it names none of its own, :func:`contexts`) gives every asked aspect of the
    subject (``subject``: its words, the rarest first — that one must be named; ``qualified``:
    the subject's :func:`qualifiers`, each named by the sentence's ``note``, its text at
    hand)."""
    said = content(sentence)
    titled = set(content(title)) | set(content(context))
    wanted = set(subject[:1])
    if not wanted & (set(said) | titled):
        return False
    if not set(qualified) <= set(content(f"{title} {note}")) | set(said):
        return False
    # an aspect's word in a sentence's circumstance is not what it says: "anticoagulation when
    # the cause is atrial fibrillation" gives no side effect of clopidogrel (issue 27)
    circumstance = set(content(" ".join(_SENTENCE_CLAUSE.findall(sentence))))
    for aspect in aspects:
        where = [i for i, w in enumerate(said) if w in aspect.evidence and w not in circumstance]
        if not where and aspect.evidence is REASONS and _REASON_GLUE & set(words(sentence)):
            where = [len(said)]  # "… because insulin drives potassium into cells"
        if not where:
            return False
        if set(subject) & titled:  # the note is about the subject
            continue
        first = min(i for i, w in enumerate(said) if w in wanted) if wanted & set(said) else None
        if first is None or first > where[0]:
            return False
    return True


#: a sentence's circumstance: "when …"/"if …" up to the clause's end
_SENTENCE_CLAUSE = re.compile(r"\b(?:when|if|unless|whenever)\b[^,;:.()]*", re.IGNORECASE)


def mention(quotes: Sequence[Quote], subject: Sequence[str]) -> Quote | None:
    """The best quote naming the subject: what the notes only mention."""
    wanted = set(subject)
    for quote in quotes:
        if wanted & set(content(quote.text)):
            return quote
    return None


#: a number with a unit of dose: what answers "what dose…"
DOSE = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:to|-|–|or)?\s*(?:\d+(?:[.,]\d+)?\s*)?"
    r"(?:mg|g|mcg|micrograms?|µg|ng|ml|mL|units?|iu|IU|mmol|kg|tablets?|puffs?|drops?)(?![^\W\d_])",
)
#: a number with a unit of time, or a frequency: what answers "how long…", "how often…"
DURATION = re.compile(
    r"\d+(?:[.,]\d+)?\s*(?:to|-|–|or)?\s*(?:\d+(?:[.,]\d+)?\s*)?"
    r"(?:seconds?|minutes?|min|hours?|h|days?|weeks?|months?|years?|times)(?![^\W\d_])"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+"
    r"(?:to\s+\w+\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?)\b"
    r"|\b(?:daily|weekly|monthly|yearly|annual|annually|once|twice)\b"
    # "every" with its time ("every 3 to 5 minutes", "every morning"), not "does not exclude
    # every serious condition" (issue 27: a time question was answered with that)
    r"|\bevery\s+(?:\d+(?:\s*(?:to|-|–|or)\s*\d+)?\s*|other\s+|few\s+)?"
    r"(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|morning|night|evening|dose)\b"
    r"|\b(?:a|per) (?:day|week|month|year)\b",
    re.IGNORECASE,
)


def amount_kind(question: str) -> str:
    """ "dose", "time" or "" — what kind of amount the question asks for."""
    said = words(question)
    if said[:1] in (["why"], ["until"]) or said[:2] in (["por", "que"], ["hasta", "cuando"]):
        return ""  # a reason or a condition ("why are the doses reduced…?")
    text = " ".join(said)
    if re.search(
        r"\bhow (?:long|often|soon|quickly|fast)\b|\bwithin what time\b"
        r"|\bcuanto (?:tiempo|dura|duran|tarda|tardan)\b|\bcada cuanto\b"
        r"|\bcuantas (?:horas|semanas)\b|\bcuantos (?:dias|meses|minutos)\b",
        text,
    ):
        return "time"
    if re.search(r"\b(?:dose|doses|dosage|dosing|dosis)\b", text):
        return "dose"
    return ""


#: English lay words for the notes' words (added to the question's, never replacing them)
LAY = {
    "sugar": "glucose",
    "sugars": "glucose",
    "bug": "bacteria infection",
    "bugs": "bacteria infection",
    "germ": "bacteria",
    "germs": "bacteria",
    "pill": "drug",
    "pills": "drug",
    "tablet": "drug",
    "tablets": "drug",
    "painkiller": "analgesic",
    "painkillers": "analgesic",
    "overactive": "hyperthyroidism",
    "underactive": "hypothyroidism",
    "thinner": "anticoagulant",
    "thinners": "anticoagulant",
}


def lay_words(question: str, vocabulary: Vocabulary) -> dict[str, str]:
    """The notes' words for the question's lay words the notes never use ("sugar" ->
    "glucose"), as a translation: word as written -> the notes' words."""
    out: dict[str, str] = {}
    for w in words(question):
        if w in LAY and normal(w) not in vocabulary:
            out[w] = LAY[w]
    return out


_ENDING = re.compile(r"(?:(?<=\s)|^)-([^\W\d_]{3,})\b|\bending in\s+-?([^\W\d_]{3,})\b")


def endings(question: str, vocabulary: Vocabulary) -> dict[str, str]:
    """The notes' words a question names by their ending ("a drug ending in -pril": ramipril,
    lisinopril, enalapril; most frequent first, at most five), as a translation."""
    translation: dict[str, str] = {}
    for match in _ENDING.finditer(question.casefold()):
        suffix = match.group(1) or match.group(2)
        out: list[str] = []
        found = [
            (sum(spelled.values()), spelling)
            for spelled in vocabulary.spellings.values()
            for spelling in spelled
            if spelling.endswith(suffix) and spelling != suffix and len(spelling) > len(suffix) + 2
        ]
        for _, spelling in sorted(found, key=lambda f: (-f[0], f[1]))[:5]:
            if spelling not in out:
                out.append(spelling)
        if out:
            translation[suffix] = " ".join(out)
    return translation


def alternatives(question: str, vocabulary: Vocabulary) -> list[frozenset[str]]:
    """The notes' words each drug-name ending of the question stands for (:func:`endings`),
    as groups weighed as one word (:data:`backends.grounding.Alternatives`)."""
    return [
        frozenset(normal(w) for w in names.split())
        for names in endings(question, vocabulary).values()
        if len(names.split()) > 1
    ]


def asked_forms(
    asked: Iterable[str], question: str = "", english: str = ""
) -> list[frozenset[str]]:
    """The forms of each word the question asks an aspect with, as groups weighed as one word
    (:data:`backends.grounding.Alternatives`): "How is anaphylaxis *treated*?" is answered by
    "The first and most important *treatment* is …" — "treat" and "treatment" are one word
    here (they were not: the definition was quoted and the question refused)."""
    have = set(asked)
    groups: list[frozenset[str]] = []
    for aspect in asked_aspects(asked, question, english):
        if aspect.name == "reason":
            continue
        for word in sorted(aspect.asks & have):
            # the word's own forms only ("treatment" for "treat"), not its synonyms: a
            # sentence naming "therapies" is no more the answer than before
            forms = frozenset(x for x in aspect.asks if x.startswith(word) or word.startswith(x))
            if len(forms) > 1 and forms not in groups:
                groups.append(forms)
    return groups


#: endings of Spanish words that name a condition or a drug ("apendicitis", "omeprazol")
_TERM = re.compile(
    r"(?:itis|osis|iasis|emia|oma|patia|algia|ectomia|scopia|grafia|plejia|"
    r"azol|cilina|micina|pril|sartan|mab|olol|pina|zina|ona)$"
)


def term_like(word: str, question: str) -> bool:
    """Whether a Spanish word the glossary could not translate names a condition or a drug
    (its ending, or a capital inside the question): a topic, not a word of the question."""
    folded = fold(word)
    # an ending after at least three letters: "zona", "toma" are everyday words, not a
    # "-oma" or "-ona" term (issue 27: they made two answerable questions "not covered")
    ending = _TERM.search(folded)
    if ending and ending.start() >= 3:
        return True
    return bool(
        re.search(rf"(?<!^)(?<![¿¡])\b{re.escape(word[:1].upper() + word[1:])}\b", question)
    )


#: an amount written in words ("four to six hours", "three months"): the notes often do
WORD_AMOUNT = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|a few)\s+"
    r"(?:to\s+\w+\s+)?(?:or more\s+)?(?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|"
    r"times|units?|doses?|tablets?)\b",
    re.IGNORECASE,
)


#: endings of English words that name a drug, a condition or a procedure ("morphine",
#: "cocaine", "benzodiazepine", "meningitis", "opioid", "haemodialysis", "naloxone")
_ENGLISH_TERM = re.compile(
    r"(?:itis|osis|iasis|aemia|emia|oma|pathy|algia|ectomy|otomy|scopy|graphy|plegia|lysis|"
    r"uria|ine|oid|oids|pam|lam|zole|mycin|cillin|pril|sartan|olol|statin|mab|olone|isone|"
    r"asone|oxone|adone|ism|ia|pox|ines)$"
)
#: everyday English words with those endings
_NOT_TERMS = frozenset(
    words(
        "medicine medicines routine routines machine machines define determine examine combine "
        "genuine engine online baseline guideline guidelines deadline decline outline "
        "criteria media via void avoid avoids organism mechanism"
    )
)


def english_term(word: str, question: str) -> bool:
    """Whether an English word of the question names a drug, a condition or a procedure: its
    ending (after a stem of three letters), an acronym of three capitals or more ("CPR",
    "HIV"), or a capital inside the question ("Parkinson's")."""
    folded = fold(word)
    ending = _ENGLISH_TERM.search(folded)
    if ending and ending.start() >= 3 and folded not in _NOT_TERMS:
        return True
    if len(word) >= 3 and re.search(rf"\b{re.escape(word.upper())}\b", question):
        return True
    return bool(
        re.search(rf"(?<!^)(?<![¿¡])\b{re.escape(word[:1].upper() + word[1:])}\b", question)
    )


#: more endings of Spanish drugs and procedures, read only for a word no note knows
#: ("cocaína", "morfina", "opioides", "hemodiálisis")
_SPANISH_TERM = re.compile(r"(?:ina|inas|oide|oides|lisis)$")
_NOT_SPANISH_TERMS = frozenset(words("medicina medicinas rutina rutinas oficina cocina esquina"))


def names_a_term(word: str, question: str, language: str, english: str = "") -> bool:
    """Whether a word of the question names a drug, a condition or a procedure: ``word`` as
    written (:func:`english_term`; a Spanish word left untranslated, :func:`term_like` and
    the endings of Spanish drugs), or, given ``english`` (a Spanish question word for word in
    English, :attr:`Retrieval.english`), the English it was translated into."""
    if language != "es" or english:
        return english_term(word, english or question)
    folded = fold(word)
    extra = _SPANISH_TERM.search(folded)
    if extra and extra.start() >= 4 and folded not in _NOT_SPANISH_TERMS:
        return True
    return term_like(word, question) or term_like(folded.rstrip("s"), question)
