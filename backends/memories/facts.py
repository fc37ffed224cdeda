"""What the user says that is a fact about themselves (SPEC PA2): "remember that …" and
first-person statements ("I am…", "my X is…") — read by simple patterns, no model.

Kept apart from the assistant because both the chat turn (which stores or proposes what it
finds) and the desktop's "remember this" button read text the same way.
"""

from __future__ import annotations

import re

_REMEMBER = re.compile(
    r"^\s*(?:please\s+|can you\s+|could you\s+|would you\s+)?"
    r"(?:remember|note|keep in mind|recuerda|acuérdate de|apunta)"
    r"(?:\s+(?:that|que))?\s*[:,]?\s+(?P<fact>.+?)\s*(?:,?\s*please)?[.!]*\s*$",
    re.IGNORECASE | re.DOTALL,
)
_FIRST_PERSON = re.compile(
    r"^(?:"
    r"i\s+(?:am|was|have|had|live|lived|work|worked|study|studied|like|love|hate|prefer|"
    r"enjoy|dislike|own|speak|grew up|was born|usually|always|never|can't|cannot|"
    r"don't|do not|go|play|drive|use|need|take)\b"
    r"|i'm\b|i've\b"
    r"|my\s+[\w'’ -]{1,40}?\s+(?:is|are|was|were|has|have|lives|works|likes|loves)\b"
    r"|(?:soy|estoy|tengo|vivo|trabajo|estudio|me llamo|me gusta|me encanta|odio|prefiero|"
    r"nací|hablo|no me gusta|no tengo|no soy)\b"
    r"|mis?\s+[\w'’ -]{1,40}?\s+(?:es|son|está|vive|trabaja|se llama)\b"
    r")",
    re.IGNORECASE,
)
_NOT_A_FACT = re.compile(
    r"^(?:i\s+am|i'm)\s+(?:wondering|asking|curious|not sure|trying to|looking for|just)\b"
    r"|^i\s+(?:need|have)\s+(?:to know|a question|you)\b",
    re.IGNORECASE,
)
#: what "remember …" leaves when nothing follows (a pronoun, not a fact)
_NO_FACT = frozenset({"", "that", "this", "it", "que", "eso", "esto"})
#: a full stop after a title or an abbreviation ("Dr. Smith", "e.g.") ends no sentence
_SENTENCES = re.compile(
    r"(?<![DJMS]r\.)(?<!Mrs\.)(?<!Ms\.)(?<!Prof\.)(?<!Dra\.)(?<!Sra\.)(?<!\b\w\.\w\.)"
    r"(?<=[.!?;])\s+|\n+"
)


def normalise_text(text: str) -> str:
    """How a memory is stored: single spaces, no trailing full stop, capital first letter."""
    cleaned = " ".join(str(text).split()).rstrip(" .")
    return cleaned[:1].upper() + cleaned[1:]


def remember_request(message: str) -> str | None:
    """The fact in "remember that …" (or "recuerda que …"), else None."""
    match = _REMEMBER.match(message)
    if match is None or message.rstrip().endswith("?"):
        return None
    fact = normalise_text(match.group("fact"))
    # "remember that", "remember that:", "remember this 😀": a pronoun or no word at all
    if fact.strip(" \t:;,.!-—–").lower() in _NO_FACT or not re.search(r"\w\w", fact):
        return None
    return fact or None


def factual_statements(message: str) -> list[str]:
    """First-person factual sentences of ``message`` (a simple heuristic, no model)."""
    out: list[str] = []
    for sentence in _SENTENCES.split(message):
        sentence = sentence.strip().strip("\"'“”").strip()
        if not sentence or sentence.endswith("?") or "?" in sentence:
            continue
        words = sentence.split()
        if not 3 <= len(words) <= 40:
            continue
        if _FIRST_PERSON.match(sentence) and not _NOT_A_FACT.match(sentence):
            text = normalise_text(sentence.rstrip("!;"))
            if text and text not in out:
                out.append(text)
    return out
