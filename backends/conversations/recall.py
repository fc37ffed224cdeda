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
        log.warning("history not searched: %s", err)
        hits = []
    found = [
        history_answers.PastMessage(h.conversation_id, h.name, h.date, h.role, h.text, h.score)
        for h in hits
    ]
    composed = history_answers.compose(message, found)
    cited = [hits[n - 1] for n in composed.cited]
    if composed.mode == COMPOSED and history_answers.about_assistant(message):
        composed, cited = _with_replies(message, composed, cited, load)
    numbers = {n: i + 1 for i, n in enumerate(composed.cited)}
    composed = replace(
        composed,
        sentences=tuple(
            replace(s, number=numbers[s.number]) if s.number else s for s in composed.sentences
        ),
    )
    return composed, cited


def _with_replies(
    message: str,
    composed: Answer,
    cited: list[SearchHit],
    load: Callable[[str], Conversation],
) -> tuple[Answer, list[SearchHit]]:
    """ "What did you advise about …": a quoted message of the user's is followed by the
    assistant's reply to it, quoted too (the reply need not repeat the question's words)."""
    lang = history_answers.language(message)
    sentences = list(composed.sentences)
    for hit in list(cited):
        reply = _reply_to(hit, load) if hit.role == "user" else None
        if reply is None or any(
            (c.conversation_id, c.index) == (reply.conversation_id, reply.index) for c in cited
        ):
            continue
        cited.append(reply)
        past = history_answers.PastMessage(
            reply.conversation_id, reply.name, reply.date, reply.role, reply.text
        )
        sentences.append(
            answers.Shown(history_answers.quote(past, lang), answers.SUPPORTED, len(cited))
        )
    return replace(composed, sentences=tuple(sentences)), cited


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
