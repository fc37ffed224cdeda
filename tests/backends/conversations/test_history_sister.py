"""A question about what was said in past conversations ("What did you tell me about my
sister?", "¿Qué te conté de mi hermana?") is answered from a real conversations store
(issue 30): the conversation about the sister was there, the answer was "I can't find that".
"""

from __future__ import annotations

from backends.answers import COMPOSED
from backends.conversations.history import history_question
from backends.conversations.service import ConversationAgent
from backends.models.chat import ScriptedChat

from .conftest import MakeAgent, conversation

#: as a user has it: asked for advice about the sister, told more, got replies
SISTER = (
    "My sister Elena turns 40 next week, what could I give her?",
    "A photo album of your years together or a cooking class would be thoughtful gifts.",
    "She lives in Valencia and loves Italian food.",
    "Then a pasta-making class in Valencia would suit her.",
)
HERMANA = (
    "Mi hermana Elena cumple 40 la semana que viene, ¿qué le puedo regalar?",
    "Un álbum de fotos o una clase de cocina serían buenos regalos.",
    "Vive en Valencia y es enfermera.",
    "Entonces una cena en Valencia le gustaría.",
)
LISBON = (
    "I want to visit Lisbon in April with my wife.",
    "Lisbon is lovely in April; book the hotel early.",
)


def _store(make_agent: MakeAgent) -> ConversationAgent:
    agent = make_agent(chat=ScriptedChat(replies=["A guess about Elena."] * 4))
    agent.add(conversation(*SISTER, name="Birthday present"))
    agent.add(conversation(*HERMANA, name="Regalo de cumpleaños"))
    agent.add(conversation(*LISBON, name="Lisbon trip"))
    agent.sync_vectors()  # as an import does: the messages searchable
    return agent


def test_what_the_assistant_said_about_the_sister_is_quoted(make_agent: MakeAgent) -> None:
    agent = _store(make_agent)
    result = agent.ask("What did you tell me about my sister?")
    assert result.shown is not None and result.shown.mode == COMPOSED, result.answer
    assert "I can't find that" not in result.answer
    assert "photo album of your years together" in result.answer
    assert "Lisbon" not in result.answer


def test_what_the_user_told_about_the_sister_is_quoted(make_agent: MakeAgent) -> None:
    agent = _store(make_agent)
    result = agent.ask("What did I tell you about my sister?")
    assert result.shown is not None and result.shown.mode == COMPOSED, result.answer
    assert "My sister Elena turns 40 next week" in result.answer
    assert "Lisbon" not in result.answer


def test_the_same_in_spanish(make_agent: MakeAgent) -> None:
    agent = _store(make_agent)
    told = agent.ask("¿Qué te conté de mi hermana?")
    assert told.shown is not None and told.shown.mode == COMPOSED, told.answer
    assert "Mi hermana Elena cumple 40" in told.answer
    said = agent.ask("¿Qué me dijiste de mi hermana?")
    assert said.shown is not None and said.shown.mode == COMPOSED, said.answer
    assert "Un álbum de fotos" in said.answer
    # the question quoted [1], the reply to it [2] (the reply took the quote's number: [1] [1])
    quoted, reply = said.shown.sentences
    assert (quoted.number, reply.number) == (1, 2) and "Un álbum" in reply.text
    assert [index for _conversation, index in said.quoted] == [0, 1]


def test_a_reply_that_said_it_could_not_find_it_is_not_quoted(make_agent: MakeAgent) -> None:
    """An earlier "I can't find that in your conversations" followed the user's question:
    it was quoted as what the assistant said (a quote of a non-answer); the question alone
    says nothing of what was answered either."""
    agent = make_agent(chat=ScriptedChat(replies=["A guess."] * 4))
    agent.add(
        conversation(
            "Can you suggest a gift for my sister Elena?",
            "I can't find that in your conversations.",
            name="Gift",
        )
    )
    agent.sync_vectors()
    result = agent.ask("What did you tell me about my sister?")
    assert "I can't find that in your conversations.”" not in result.answer
    assert result.answer == "I can't find that in your conversations."


def test_asking_advice_about_the_sister_is_not_a_question_about_the_history() -> None:
    """It went to the history ("I can't find that in your conversations") instead of the
    model: telling and asking for ideas is not asking what was said."""
    assert not history_question(SISTER[0])
    assert not history_question(HERMANA[0])
    assert not history_question("What should I cook for my sister tonight?")
    assert history_question("What did you tell me about my sister?")
    assert history_question("¿Qué te conté de mi hermana?")
    assert history_question("What is my sister's name?")
