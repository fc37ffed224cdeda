"""History questions answered from the history (AL1): "What did I decide about the flights?",
"¿Qué me dijo sobre el alquiler?".

No model here. :func:`history_question` decides whether a question asks about what was said
before: about the user (:func:`backends.questions.about_user`), or about what "you" (the
assistant) or "we" said, decided or discussed. :func:`compose` answers it from the past
messages that hold it — each quoted, dated, and named by its conversation, cited ``[n]`` to
the message (the same reading of the question as the memory assistant's: every subject word
of the question stands in the message; words for the act of talking or choosing — "decide",
"say", "dijo", "choose", "book", "elegí" — only rank) — or says "I can't find that in your
conversations". Any other question goes to the model, whose words are labelled as its own.

Guaranteed: a quoted message is a message of the user's history, word for word, with its
date and conversation. Not guaranteed: that the message quoted is the one meant (lexical
matching over the messages search found), nor that an answer spread over two messages is
found whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from backends.answers import COMPOSED, DONT_KNOW, SUPPORTED, Answer, Shown
from backends.grounding import fold
from backends.questions import about_user, answering, held, language

#: what makes a question ask about earlier conversations, besides being about the user
_ASKS_HISTORY = re.compile(
    r"\b(?:did|have|had)\s+(?:i|we|you)\b"
    r"|\byou\s+(?:said|told|advised|suggested|recommended|mentioned)\b"
    r"|\b(?:we|i)\s+(?:discussed|talked|decided|agreed|said|mentioned)\b"
    r"|\blast\s+time\b|\bearlier\b|\bbefore\b"
    r"|\b(?:me\s+)?dij(?:o|e|iste|imos)\b|\bhablamos\b|\bcomenté\b|\bmencioné\b"
    r"|\bdecid(?:í|imos|iste)\b|\bvamos\s+a\b|\bquedamos\b"
    r"|\b(?!qu[eé]\b)\w{2,}é\b",  # "reservé", "compré", "pagué": what I did
    re.IGNORECASE,
)
#: a question about what the assistant said
_ABOUT_ASSISTANT = re.compile(
    r"\byou\s+(?:say|said|tell|told|advise|advised|suggest|suggested|recommend|recommended)\b"
    r"|\bdid\s+you\b|\bme\s+(?:dijiste|aconsejaste|recomendaste|sugeriste)\b",
    re.IGNORECASE,
)
#: words for the act of talking: a question's subject is what was talked about
_TALK_WORDS = (
    "decide decided decision say said tell told mention mentioned discuss discussed talk "
    "talked plan planned advise advised suggest suggested recommend recommended agree "
    "agreed decidi decidimos decidiste dije dijo dijiste dijimos hablamos comente mencione "
    "conte contaste contamos conto cuento comentaste mencionaste hable hablaste"
)
#: words for the act of choosing: "Which hotel did I choose / book / pick?" is about the hotel
#: (a message says "the hotel is the Memmo Alfama", seldom "I chose")
_CHOICE_WORDS = (
    "choose chose chosen pick picked select selected opt opted book booked reserve reserved "
    "settle settled go went buy bought get got take took end ended "
    "elegi elegiste elegimos escogi escogiste escogimos reserve reservaste reservamos "
    "opte optaste optamos compre compraste compramos coger cogi cogimos"
)
TALK = frozenset(_TALK_WORDS.split()) | frozenset(_CHOICE_WORDS.split())
#: Spanish pronouns for whom something was told ("te conté", "le dije", "nos dijo")
_TOLD_TO = frozenset(("te", "le", "les", "nos", "os"))
#: words after which a talk word is a thing ("which book", "the plan"), not the act
_NAMING = frozenset(
    ("which", "what", "the", "a", "an", "my", "our", "your", "that", "this", "el", "la", "mi")
)

TEXTS = {
    "en": {
        "heading": "From your conversations — quoted, dated, linked to the conversation",
        "dont_know_heading": "Not found in your conversations",
        "dont_know": "I can't find that in your conversations.",
        "quote": "{who} on {date}, in “{name}”: “{text}”",
        "you": "You",
        "assistant": "The assistant",
        "model_heading": "The model's own words — not from your conversations",
        "withheld": "The model's answer was withheld: {reason}.",
    },
    "es": {
        "heading": "De tus conversaciones — citado, con fecha y enlace a la conversación",
        "dont_know_heading": "No está en tus conversaciones",
        "dont_know": "No lo encuentro en tus conversaciones.",
        "quote": "{who} el {date}, en «{name}»: «{text}»",
        "you": "Tú",
        "assistant": "El asistente",
        "model_heading": "Palabras del propio modelo — no de tus conversaciones",
        "withheld": "Se retuvo la respuesta del modelo: {reason}.",
    },
}


_ASKING = re.compile(
    r"^\s*(?:¿|what|which|where|when|who|whom|whose|why|how|did|do|does|have|has|had|is|are|"
    r"was|were|can|could|remind|tell\s+me|qu[eé]|cu[aá]l|cu[aá]nd|cu[aá]nt|d[oó]nde|qui[eé]n|"
    r"c[oó]mo|por\s+qu[eé])\b",
    re.IGNORECASE,
)


#: asking for ideas or advice ("what could I give her?", "¿qué le puedo regalar?"): a question
#: for the model, even about the user's life, unless it names the history too
_ASKS_ADVICE = re.compile(
    r"\b(?:what|which|how|where|when)\s+(?:\w+\s+)?(?:could|should|can|shall|might)\s+"
    r"(?:i|we)\b|\b(?:should|could|can|shall)\s+(?:i|we)\b|\bany\s+(?:ideas?|tips?)\b"
    r"|\b(?:can|could|would|will)\s+you\b|\b(?:suggest|recommend|help\s+me|give\s+me)\b"
    r"|\b(?:qu[eé]|c[oó]mo|d[oó]nde|cu[aá]ndo)\s+(?:\w+\s+)?(?:puedo|podr[ií]a|debo|"
    r"deber[ií]a|podemos|debemos)\b|\b(?:alguna|algunas)\s+ideas?\b"
    r"|\b(?:puedes|podr[ií]as|recomi[eé]ndame|sugi[eé]reme|dame|ay[uú]dame)\b",
    re.IGNORECASE,
)


def history_question(question: str) -> bool:
    """Whether ``question`` asks about what was said in earlier conversations: a question
    (not a statement: "My sister lives in Granada" is told, not asked) about the user, or
    about what "you" or "we" said, decided or discussed. Asking for ideas about one's life
    ("My sister turns 40, what could I give her?") is for the model: it was answered "I
    can't find that in your conversations" (issue 30)."""
    if "?" not in question and not _ASKING.search(question):
        return False
    if _ASKS_HISTORY.search(question):
        return True
    return about_user(question) and not _ASKS_ADVICE.search(question)


@dataclass(frozen=True)
class PastMessage:
    """A message of the history, as search found it."""

    conversation_id: str
    name: str
    date: str
    role: str
    text: str
    similarity: float = 0.0


#: how this module's own answers begin: quoting them again would quote a quote
_OWN_ANSWER = (
    tuple(
        t["quote"].split("{")[0] + who for t in TEXTS.values() for who in (t["you"], t["assistant"])
    )
    + tuple(t["dont_know"] for t in TEXTS.values())
    + tuple(t["withheld"].split(":")[0] for t in TEXTS.values())
)


#: where a message's sentences and clauses part: "…next week, what could I give her?"
_SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
_QUESTION_CLAUSE = re.compile(
    r",\s*(?:and\s+|y\s+)?(?=(?:what|which|how|where|when|who|why|should|could|can|would|do|"
    r"does|did|is|are|any|qu[eé]|c[oó]mo|d[oó]nde|cu[aá]ndo|qui[eé]n|por\s+qu[eé])\b)",
    re.IGNORECASE,
)


def told_part(text: str) -> str:
    """What a message of the user's tells, its questions left out: "My sister Elena turns 40
    next week, what could I give her?" tells "My sister Elena turns 40 next week" ("" for a
    message that only asks)."""
    kept: list[str] = []
    for sentence in _SENTENCES.split(text.strip()):
        if "¿" in sentence:
            sentence = sentence.split("¿", 1)[0]
        elif sentence.rstrip().endswith("?"):
            parts = _QUESTION_CLAUSE.split(sentence, maxsplit=1)
            sentence = parts[0] if len(parts) > 1 else ""
        sentence = sentence.strip(" ,;:")
        if sentence:
            kept.append(sentence)
    return " ".join(kept)


def _evidence(message: PastMessage, about_assistant: bool = False) -> bool:
    """Whether a past message can answer a question: not one of this module's own answers (a
    quote of a quote); of the user's, one that tells something (:func:`told_part`) — or, for
    "what did you tell me about …", one that asked the assistant something (its reply is
    quoted after it), never an earlier history question."""
    text = message.text.strip()
    if message.role == "assistant":
        return not text.startswith(_OWN_ANSWER)
    if "?" not in text and "¿" not in text:
        return True
    if told_part(text):
        return True
    return about_assistant and not history_question(text)


def _matching_text(message: PastMessage) -> str:
    """What a past message is matched on: its conversation's name ("Rome trip": "the hotel
    will be …") and what it says (of the user's, what it tells when it tells something)."""
    text = message.text
    if message.role == "user":
        text = told_part(text) or text
    return f"{message.name}. {text}"


def is_evidence(message: PastMessage) -> bool:
    """Whether ``message`` may be quoted at all (a reply quoted after the user's message)."""
    return _evidence(message, about_assistant=True)


def _question_for_matching(question: str) -> str:
    """The question without its talking words ("What did I decide about the flights?" is
    about the flights)."""
    kept: list[str] = []
    previous = ""
    for word in question.split():
        folded = fold(word.strip("¿?¡!.,"))
        if folded in _TOLD_TO:
            continue  # "¿Qué te conté …?": whom it was told to is not what it was about
        if folded not in TALK or previous in _NAMING:
            kept.append(word)
        previous = folded
    return " ".join(kept)


_STATES = re.compile(
    r"\b(?:is|are|was|were|will|has|have|had|'s|es|son|está|están|era|eran|fue|será|tiene|"
    r"tienen|hay)\b",
    re.IGNORECASE,
)


def tells(message: str) -> bool:
    """Whether the model's words on ``message`` may add no number, date or name of their
    own (:func:`backends.answers.judge_draft` ``specifics``): the user tells something —
    a statement, not a question or a request ("Also, the hotel is the Memmo Alfama …"; not
    "talk for a long time") — or speaks of their own life ("My landlord told me the rent
    goes up to 950 euros")."""
    if about_user(message):
        return True
    asking = "?" in message or bool(_ASKING.search(message))
    # a statement says what something is ("talk for a long time" asks for words: not one)
    return not asking and bool(_STATES.search(message))


def about_assistant(question: str) -> bool:
    """Whether ``question`` asks what the assistant said ("What did you advise …?")."""
    return bool(_ABOUT_ASSISTANT.search(question))


def quote(message: PastMessage, lang: str) -> str:
    """``message`` quoted: who wrote it, when, in which conversation, word for word."""
    texts = TEXTS[lang]
    who = texts["you"] if message.role == "user" else texts["assistant"]
    said = " ".join(message.text.split())
    return texts["quote"].format(who=who, date=message.date[:10], name=message.name, text=said)


def not_found(question: str) -> Answer:
    """ "I can't find that in your conversations", in the question's language."""
    texts = TEXTS[language(question)]
    return Answer(DONT_KNOW, (Shown(texts["dont_know"], SUPPORTED, 0),), texts["dont_know_heading"])


def compose(question: str, found: Sequence[PastMessage], most: int = 2) -> Answer:
    """The past messages that answer ``question`` quoted (numbers 1-based into ``found``),
    or "I can't find that in your conversations"."""
    lang = language(question)
    texts = TEXTS[lang]
    about_assistant = bool(_ABOUT_ASSISTANT.search(question))
    usable = [i for i, m in enumerate(found) if _evidence(m, about_assistant)]
    # a message is read with its conversation's name ("Rome trip": "the hotel will be …")
    matches = answering(
        _question_for_matching(question),
        [_matching_text(found[i]) for i in usable],
        [found[i].similarity for i in usable],
        most=len(usable),
    )
    matches = [replace(m, index=usable[m.index]) for m in matches]
    # what the user said is the history; what the assistant said answers only a question
    # about it ("What did you tell me about Vueling?") or when nothing the user said does
    users = [m for m in matches if found[m.index].role == "user"]
    if users and not about_assistant:
        matches = users
    elif not about_assistant and about_user(question):
        # nothing the user said answers a question about their own life: an earlier answer
        # of the model ("Your sister lives in Paris") is not evidence of it (found by review)
        matches = []
    elif about_assistant:  # what the assistant said first
        matches.sort(key=lambda m: found[m.index].role == "user")
    # "What did I decide about …": a message saying what was decided ranks first
    matching = set(_question_for_matching(question).split())
    talk = [w for w in question.split() if w not in matching]
    if talk:
        matches.sort(key=lambda m: -held(found[m.index].text, talk))
    matches = matches[:most]
    if not matches:
        return not_found(question)
    sentences = [
        Shown(quote(found[match.index], lang), SUPPORTED, match.index + 1) for match in matches
    ]
    return Answer(COMPOSED, tuple(sentences), texts["heading"])
