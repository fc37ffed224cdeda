"""History questions answered from the history (issue 24, AL1): the reading of the question."""

from __future__ import annotations

import pytest

from backends.answers import COMPOSED, MODEL, OWN
from backends.conversations.history import PastMessage, compose, tells
from backends.models.chat import ScriptedChat

from .conftest import MakeAgent

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


def test_the_model_adds_no_number_date_or_name_to_what_the_user_told(
    make_agent: MakeAgent,
) -> None:
    """Tester, issue 24: "My landlord told me the rent goes up to 950 euros in January." got
    invented amounts, a date and a name shown as the model's words."""
    reply = (
        "Sinisa, I'm sorry to hear that. The rent increases by 50 euros until March 28th. "
        "You could ask your landlord about the 950 euros from January."
    )
    agent = make_agent(chat=ScriptedChat(replies=[reply]))
    result = agent.ask("My landlord told me the rent goes up to 950 euros in January.")
    assert result.shown is not None and result.shown.mode == MODEL
    assert [s.kind for s in result.shown.sentences] == [OWN]
    assert "950 euros from January" in result.answer
    assert "Sinisa" not in result.answer and "50 euros until" not in result.answer
    assert [s.text[:6] for s in result.shown.withheld] == ["Sinisa", "The re"]


def test_what_the_user_tells_gets_no_invented_specifics_even_not_about_them(
    make_agent: MakeAgent,
) -> None:
    """End to end with the default model (issue 24): "Also, the hotel is the Memmo Alfama,
    three nights from the 12th." got "a length of 53 days … the 48-day period" as the
    model's own words."""
    reply = "The Hotel Dei Amor has a length of 53 days. It sounds like a lovely stay."
    agent = make_agent(chat=ScriptedChat(replies=[reply]))
    result = agent.ask("Also, the hotel is the Memmo Alfama, three nights from the 12th.")
    assert result.shown is not None
    assert [s.kind for s in result.shown.sentences] == [OWN]
    assert result.answer == "It sounds like a lovely stay."


def test_a_request_is_not_a_statement_to_check_the_models_numbers_against() -> None:
    assert tells("Also, the hotel is the Memmo Alfama, three nights from the 12th.")
    assert tells("My landlord told me the rent goes up to 950 euros in January.")
    assert not tells("talk for a long time")  # a story's numbers are the model's own
    assert not tells("Where do flamingos sleep?")


def test_an_earlier_model_answer_is_no_evidence_of_the_users_life() -> None:
    """Found by review: nothing the user said answered "Where does my sister live?", so an
    earlier answer of the model ("Your sister lives in Paris", a guess) was quoted as the
    supported answer. What the assistant said may answer only a question about what it
    said."""
    guess = PastMessage(
        "c2", "Family", "2026-11-29T09:00:00+00:00", "assistant", "Your sister lives in Paris", 0.5
    )
    answer = compose("Where does my sister live?", [guess])
    assert answer.mode != COMPOSED
    assert all("Paris" not in s.text for s in answer.sentences)
