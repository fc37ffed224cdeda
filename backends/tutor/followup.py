"""Reading a question as a follow-up of the thread's last one ("and what dose?").

A student asks "What is the antidote for paracetamol overdose?", then "What dose is given?".
The second question, alone, is about nothing: searched alone it finds a dose of any drug, and
its answer would be a true sentence about the wrong drug. So, inside a thread, a question that
names none of the notes' entities is read together with the earlier question it follows — its
words are searched and weighed with the earlier one's — and the answer says so ("read as a
follow-up to …"), so the student can see how it was understood and ask again in full.

Two kinds of follow-up (:func:`kind`):

- :data:`MARKED` — it points back ("its dose?", "and in children?", "what about the
  elderly?", "¿y en niños?"): read with the earlier question straight away;
- :data:`SHORT` — a few words and no entity ("what dose is given?"): read with the earlier
  question when the earlier note answers it that way, else alone.

A longer question that names nothing and does not point back is read alone. A question that
names an entity of the notes is never a follow-up: it says what it is about.

A thread reading must pass the same coverage check as any question, and it names the earlier
question's entities, which every quote must then name: a self-contained question ("what is
the FAST test?" after a warfarin one) is not covered that way and is answered alone
(:func:`tries_thread`, :func:`keeps_thread`). Measured on bench/data/followup_eval.json
(bench/bench_followups.py; docs/BENCHMARKS.md): reading a short question alone first left
"what value is diagnostic?" after an HbA1c question answered about natriuretic peptides,
since a few words are "covered" by some note or other.
"""

from __future__ import annotations

from backends.grounding import NEGATORS, QUESTION_WORDS_ES, STOPWORDS, fold, normal, words

MARKED = "marked"
SHORT = "short"
NONE = ""

#: pronouns that stand for something said before, wherever they are ("what are its
#: early symptoms?", "how is it monitored in pregnancy?"; English and Spanish)
PRONOUNS = frozenset(
    words("it its itself they them their theirs he she him her his su sus él ella ellos ellas")
)
#: words that may point back, or not: "that" and "also" are as often glue ("when is treatment
#: also needed?"), so they mark only a short question ("and that?", "¿y eso?")
MAYBE_POINTERS = frozenset(
    words(
        "this that these those same also too instead either "
        "eso esto ese esa este esta estos estas esos esas mismo misma también"
    )
)
#: words that point back to something said before
POINTERS = PRONOUNS | MAYBE_POINTERS
#: openings that continue the thread ("and …", "what about …")
OPENINGS = (
    "and ",
    "but ",
    "or ",
    "so ",
    "what about ",
    "how about ",
    "what if ",
    "then ",
    "y ",
    "e ",
    "pero ",
    "o ",
    "entonces ",
    "qué hay de ",
    "que hay de ",
    "y si ",
)
#: at most this many content words makes a short question
SHORT_WORDS = 3
#: the earlier questions' content words carried into a follow-up, newest kept
CARRIED_WORDS = 12


def kind(question: str, *, names_entity: bool) -> str:
    """:data:`MARKED`, :data:`SHORT` or :data:`NONE` (not a follow-up): see the module."""
    if names_entity:
        return NONE
    text = fold(question).strip().lstrip("¿¡\"'(").lstrip()
    said = words(question)
    short = len(_content_words(question)) <= SHORT_WORDS
    if text.startswith(OPENINGS) or any(w in PRONOUNS for w in said):
        return MARKED
    if short and any(w in MAYBE_POINTERS for w in said):
        return MARKED
    return SHORT if short else NONE


def tries_thread(how: str, *, earlier_covered: bool = True) -> bool:
    """Whether a question of a thread that names no entity is also read with the earlier one
    (``how``: its :func:`kind`): a marked or short one is, whether or not the notes cover it
    alone (a few words are "covered" by some note or other); a longer one is not. After an
    earlier question the notes did not cover, only a marked one is: a short question is then
    a new topic ("What monitoring does lithium need?" after an appendicitis question was read
    with it and answered with the Sepsis Six; issue 24)."""
    if not earlier_covered:
        return how == MARKED
    return how in (MARKED, SHORT)


def keeps_thread(how: str, *, covered_in_thread: bool) -> bool:
    """Whether the thread reading (tried: :func:`tries_thread`) is the one answered: always
    for a marked follow-up ("and in children?" the earlier note does not answer is *not
    covered*, not answered about another subject alone); otherwise when the notes cover it
    read that way."""
    return how == MARKED or covered_in_thread


def carried(question: str, earlier: str) -> str:
    """The earlier question's words this one does not already have, as search text.

    ``earlier`` is what the thread's last turn was understood as (itself perhaps a follow-up:
    :func:`understood`), so "and in children?" after "what dose?" after "paracetamol
    antidote?" still reads as a question about paracetamol."""
    own = {normal(w) for w in _content_words(question)}
    out: dict[str, str] = {}  # normal form -> the word as written (searched as written)
    for word in _content_words(earlier):
        form = normal(word)
        if form not in own and form not in out:
            out[form] = word
    return " ".join(list(out.values())[-CARRIED_WORDS:])


def understood(question: str, follows: str) -> str:
    """What a turn was understood as, for the next question of the thread to follow."""
    return f"{follows} {question}".strip() if follows else question


def _content_words(text: str) -> list[str]:
    """The words of ``text`` that say something (folded, as written): no glue, no question
    word, no pointer."""
    out = []
    for w in words(text):
        if w in STOPWORDS or w in NEGATORS or w in QUESTION_WORDS_ES or w in POINTERS:
            continue
        if len(w) == 1 and not w.isdigit():
            continue
        if normal(w) not in STOPWORDS:
            out.append(w)
    return out
