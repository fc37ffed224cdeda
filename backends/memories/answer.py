"""The memory assistant's composed answer (AL2): what the user told it, restated to them.

No model here; the question is read by :mod:`backends.questions`. For a question:

1. :func:`about_user` decides whether it asks about the user (a first-person possessive, or a
   first-person subject that is not asking for advice; measured on
   bench/data/memory_answer_eval.json).
2. :func:`answering` finds the memories that answer it: every *subject* word of the question
   stands in one memory (directly, by stem, or through :data:`RELATED` words), and the kind
   of answer asked for when it can be recognised. A memory holding only some is *close*.
3. :func:`compose` restates those memories to the user (:func:`restate`: "my sister" →
   "your sister", "I'm allergic" → "you're allergic", "mi hermana" → "tu hermana", "soy
   alérgico" → "eres alérgico"), each cited ``[n]``; a question about the user that no
   memory answers gets "You haven't told me that", with the closest memory when there is one;
   any other question is left to the model, whose words are then labelled as its own.

What is guaranteed: a sentence of the composed answer is a memory, restated; nothing about the
user is stated that no memory says. Not guaranteed: that the memory chosen is the one the
user meant (the word lists are small and lexical), nor a perfect restatement of Spanish verbs
outside :data:`ES_VERBS` (those memories are quoted as told instead).
"""

from __future__ import annotations

from collections.abc import Sequence

from backends.answers import COMPOSED, DONT_KNOW, MODEL, SUPPORTED, Answer, Shown
from backends.questions import (
    ES_VERBS,
    RELATED,
    about_user,
    answering,
    asked,
    is_spanish,
    language,
    matches,
    restate,
)

__all__ = [
    "ES_VERBS",
    "RELATED",
    "TEXTS",
    "about_user",
    "answering",
    "asked",
    "compose",
    "language",
    "matches",
    "restate",
]


# -- the composed answer --------------------------------------------------------------------

TEXTS = {
    "en": {
        "heading": "From what you told me — each sentence cites the memory it restates",
        "dont_know_heading": "Not something you told me",
        "dont_know": "You haven't told me that.",
        "closest": "The closest thing you told me:",
        "model_heading": "Not about what you told me — the model's own words, not a memory",
        "no_model": "This question is not about what you told me, and no chat model is "
        "loaded to answer it.",
        "generated_heading": "From what you told me — the model's words, each checked "
        "against a memory",
        "offer": "You told me something about yourself: I can remember it (see the proposal).",
        "known": "I already remember that.",
        "told": "You told me:",
    },
    "es": {
        "heading": "De lo que me has contado — cada frase cita el recuerdo que repite",
        "dont_know_heading": "No es algo que me hayas contado",
        "dont_know": "No me lo has contado.",
        "closest": "Lo más parecido que me contaste:",
        "model_heading": "No trata de lo que me has contado — palabras del modelo, no un recuerdo",
        "no_model": "Esta pregunta no trata de lo que me has contado y no hay un modelo de "
        "chat cargado para responderla.",
        "generated_heading": "De lo que me has contado — palabras del modelo, cada una "
        "comprobada con un recuerdo",
        "offer": "Me has contado algo sobre ti: puedo recordarlo (mira la propuesta).",
        "known": "Ya lo recuerdo.",
        "told": "Me dijiste:",
    },
}


def said_back(memory: str, lang: str, *, framed: bool = True) -> str:
    """``memory`` said back in an answer in ``lang``: restated (:func:`restate`) when it is
    in that language; else quoted as told, framed in the answer's language ("You told me:
    «Mi hermana vive en Valencia»", "Me dijiste: “My sister lives in Valencia”") — the
    memory's own words stay in its language, the frame follows the question (``framed``:
    False when the answer's own words already frame it: "The closest thing you told me:")."""
    text = " ".join(memory.split()).rstrip(" .")
    if ("es" if is_spanish(text) else "en") == lang:
        return restate(memory)
    quoted = f"«{text}»" if lang == "es" else f"“{text}”"
    return f"{TEXTS[lang]['told']} {quoted}" if framed else quoted


def _sentence(text: str) -> str:
    text = text.rstrip()
    return text if text.endswith((".", "!", "?", "»")) else text + "."


def compose(
    question: str,
    memories: Sequence[str],
    similarities: Sequence[float] = (),
    *,
    retrieval_only: bool = False,
    recalled: int = 0,
) -> Answer:
    """The answer shown at once (module doc): memories restated and cited (numbers are
    1-based into ``memories``), "You haven't told me that", or — not about the user — an
    empty :data:`MODEL` answer for the model to fill. The first ``recalled`` memories are
    those recall found similar enough: the closest of them is offered beside "You haven't
    told me that" when no memory shares the question's words ("Can I take amoxicillin?" —
    "You're allergic to penicillin")."""
    lang = language(question)
    texts = TEXTS[lang]
    personal = about_user(question)
    # a question not about the user ("a good name for a cat?") is not answered by a memory
    # that shares its words ("Mi gata se llama Mía")
    found = answering(question, memories, similarities) if personal else []
    if found:
        sentences = tuple(
            Shown(_sentence(said_back(memories[m.index], lang)), SUPPORTED, m.index + 1)
            for m in found
        )
        return Answer(COMPOSED, sentences, texts["heading"])
    if personal:
        out = [Shown(texts["dont_know"], SUPPORTED, 0, "no memory answers it")]
        close = [m.index for m in matches(question, memories, similarities) if m.held or m.kind]
        close += [0] if recalled else []
        if close:
            said = _sentence(said_back(memories[close[0]], lang, framed=False))
            out.append(Shown(f"{texts['closest']} {said}", SUPPORTED, close[0] + 1))
        return Answer(DONT_KNOW, tuple(out), texts["dont_know_heading"])
    if retrieval_only:
        return Answer(MODEL, (Shown(texts["no_model"], SUPPORTED, 0),), texts["model_heading"])
    return Answer(MODEL, (), texts["model_heading"])
