"""A history question ("What did I decide about the flights?") answered from the past
messages that hold it: found by the search, quoted (:mod:`.history`), and — for "what did
you advise about …" — each quoted message of the user's followed by the reply to it.

Apart from the chat turn (:mod:`.turn`) because it is retrieval: what the past says, found
before any model is asked; the turn only decides what to show and save.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace

from backends import answers
from backends.answers import COMPOSED, Answer
from backends.conversations import history as history_answers
from backends.conversations.errors import ConversationError
from backends.conversations.files import Conversation
from backends.conversations.search import SearchHit
from backends.errors import CustodiaEnvironmentError
from backends.i18n import _

log = logging.getLogger(__name__)

#: past messages searched for a history question's answer
HISTORY_CANDIDATES = 20

#: ``search(query, k, exclude=conversation id)``
Search = Callable[..., list[SearchHit]]


def recall(
    message: str,
    current: str | None,
    search: Search,
    load: Callable[[str], Conversation],
) -> tuple[Answer | None, list[SearchHit]]:
    """For a history question: its answer from the past messages (outside the conversation
    ``current``), and them in the order its ``[n]`` quote them; else ``(None, [])``."""
    if not history_answers.history_question(message):
        return None, []
    try:
        hits = search(message, HISTORY_CANDIDATES, exclude=current)
    except CustodiaEnvironmentError as err:
        log.warning(_("history not searched: %s"), err)
        hits = []
    found = [
        history_answers.PastMessage(h.conversation_id, h.name, h.date, h.role, h.text, h.score)
        for h in hits
    ]
    composed = history_answers.compose(message, found)
    cited = [hits[n - 1] for n in composed.cited]
    # numbered into ``cited`` before any reply is added after it (a reply numbered by its
    # place in ``cited`` beside a quote numbered by its place in ``hits`` shared its [n])
    numbers = {n: i + 1 for i, n in enumerate(composed.cited)}
    composed = replace(
        composed,
        sentences=tuple(
            replace(s, number=numbers[s.number]) if s.number else s for s in composed.sentences
        ),
    )
    if composed.mode == COMPOSED and history_answers.about_assistant(message):
        composed, cited = _with_replies(message, composed, cited, load)
    return composed, cited


def _with_replies(
    message: str,
    composed: Answer,
    cited: list[SearchHit],
    load: Callable[[str], Conversation],
) -> tuple[Answer, list[SearchHit]]:
    """ "What did you advise about …": a quoted message of the user's is followed by the
    assistant's reply to it, quoted too (the reply need not repeat the question's words). A
    question of the user's quoted only to reach its reply goes when the reply cannot be
    quoted (none, or "I can't find that …": a quote of a non-answer says nothing)."""
    lang = history_answers.language(message)
    sentences: list[answers.Shown] = []
    kept: list[SearchHit] = []

    def keep(sentence: answers.Shown, hit: SearchHit) -> None:
        if any((c.conversation_id, c.index) == (hit.conversation_id, hit.index) for c in kept):
            return
        kept.append(hit)
        sentences.append(replace(sentence, number=len(kept)))

    for sentence in composed.sentences:
        if not sentence.number:
            sentences.append(sentence)
            continue
        hit = cited[sentence.number - 1]
        reply = _reply_to(hit, load) if hit.role == "user" else None
        past = (
            history_answers.PastMessage(
                reply.conversation_id, reply.name, reply.date, reply.role, reply.text
            )
            if reply is not None
            else None
        )
        if past is None or not history_answers.is_evidence(past):
            reply = past = None
        if past is None and hit.role == "user" and not history_answers.told_part(hit.text):
            continue  # asked only: what was answered is the point, and there is none
        keep(sentence, hit)
        if reply is not None and past is not None:
            quoted = history_answers.quote(past, lang)
            keep(answers.Shown(quoted, answers.SUPPORTED, 0), reply)
    if not kept:
        return history_answers.not_found(message), []
    return replace(composed, sentences=tuple(sentences)), kept


def _reply_to(hit: SearchHit, load: Callable[[str], Conversation]) -> SearchHit | None:
    """The assistant's message right after the user's message ``hit``, or None."""
    try:
        conversation = load(hit.conversation_id)
    except ConversationError:
        return None
    following = conversation.history[hit.index + 1 : hit.index + 2]
    if not following or following[0].role != "assistant":
        return None
    return SearchHit(
        hit.conversation_id,
        hit.name,
        following[0].time or hit.date,
        hit.index + 1,
        "assistant",
        following[0].content,
        hit.score,
    )
