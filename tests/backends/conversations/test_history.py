"""History questions answered from the history (issue 24, AL1): the reading of the question."""

from __future__ import annotations

import pytest

from backends.answers import COMPOSED
from backends.conversations.history import PastMessage, compose

LISBON = [
    PastMessage(
        "c1",
        "Lisbon trip",
        "2026-11-30T10:00:00+00:00",
        "user",
        "Also, the hotel is the Memmo Alfama, three nights from the 12th",
        0.4,
    ),
    PastMessage("c1", "Lisbon trip", "2026-11-30T10:01:00+00:00", "user", "We fly with TAP", 0.3),
]


@pytest.mark.parametrize(
    "question",
    [
        "Which hotel did I choose?",
        "Which hotel did we pick?",
        "Which hotel did I settle on?",
        "What hotel did I book in Lisbon?",
        "¿Qué hotel elegí?",
        "¿Qué hotel reservé?",
    ],
)
def test_a_choice_asked_with_any_verb_of_choosing_is_quoted(question: str) -> None:
    """Tester, issue 24: "Which hotel did I choose?" got "I can't find that" though "the
    hotel is the Memmo Alfama" was said — choosing, booking, picking are the act, not the
    subject."""
    answer = compose(question, LISBON)
    assert answer.mode == COMPOSED
    assert "Memmo Alfama" in answer.sentences[0].text
    assert answer.sentences[0].number == 1
