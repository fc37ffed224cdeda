"""The memory assistant answers from what it was told (AL2), whatever the model writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.answers import COMPOSED, DONT_KNOW, GENERATED, MODEL, OWN, WITHHELD, DraftStats
from backends.memories.answer import about_user, compose, restate
from backends.memories.outcomes import TurnResult
from backends.memories.service import MemoryAssistant
from backends.models.chat import Message, ScriptedChat
from backends.models.embedders import HashingEmbedder

TOLD = [
    "My sister Elena lives in Valencia with her husband",
    "I'm allergic to peanuts",
    "My dog is called Rex",
    "Mi abuela Carmen vive en Bilbao",
    "Soy alérgico a la penicilina",
]


@pytest.mark.parametrize(
    ("memory", "said"),
    [
        ("My sister Elena lives in Valencia", "Your sister Elena lives in Valencia"),
        ("I'm allergic to peanuts", "You're allergic to peanuts"),
        ("I am vegetarian", "You are vegetarian"),
        ("I broke my left arm in 2019", "You broke your left arm in 2019"),
        ("Mi hermana vive en Valencia", "Tu hermana vive en Valencia"),
        ("Soy alérgico a la penicilina", "Eres alérgico a la penicilina"),
        ("Me encanta la paella de mi madre", "Te encanta la paella de tu madre"),
        ("Mi gata se llama Mía", "Tu gata se llama Mía"),  # a name is not a pronoun
        ("The wifi password is on the fridge", "The wifi password is on the fridge"),
    ],
)
def test_a_memory_is_restated_to_the_user(memory: str, said: str) -> None:
    assert restate(memory) == said


@pytest.mark.parametrize(
    ("question", "personal"),
    [
        ("Which city is my sibling in?", True),
        ("What can't I eat?", True),
        ("How tall am I?", True),
        ("¿Cuánto mido?", True),
        ("¿A qué me dedico?", True),
        ("What is a good name for a cat?", False),
        ("How do I boil an egg?", False),
        ("Should I water succulents every day?", False),
        ("¿Cómo se hace una tortilla de patatas?", False),
    ],
)
def test_whether_a_question_is_about_the_user(question: str, personal: bool) -> None:
    assert about_user(question) is personal


def test_compose_restates_the_memory_that_answers_and_cites_it() -> None:
    answer = compose("Which city is my sibling in?", TOLD)
    assert answer.mode == COMPOSED
    assert answer.text == "Your sister Elena lives in Valencia with her husband [1]."
    spanish = compose("¿A qué medicamento tengo alergia?", TOLD)
    assert spanish.text == "Eres alérgico a la penicilina [5]."


def test_a_question_never_told_is_admitted_with_what_is_close() -> None:
    answer = compose("What is my blood type?", TOLD)
    assert answer.mode == DONT_KNOW and answer.text == "You haven't told me that."
    close = compose("What is my dog's favourite toy?", TOLD)
    assert close.text.startswith("You haven't told me that. The closest thing you told me:")
    assert "Your dog is called Rex [3]." in close.text
    assert compose("¿Cuál es mi grupo sanguíneo?", TOLD).text == "No me lo has contado."


def test_a_general_question_is_left_to_the_model() -> None:
    assert compose("What is a good name for a cat?", TOLD).mode == MODEL


# -- a turn, whatever the model writes --------------------------------------------------------

SISTER = "Your sister Elena lives in Valencia with her husband"


def cited(result: TurnResult) -> list[str]:
    """The memories the shown answer cites, by text."""
    assert result.shown is not None
    return [result.used[n - 1].text for n in result.shown.cited]


@pytest.fixture
def chat() -> ScriptedChat:
    return ScriptedChat()


@pytest.fixture
def assistant(tmp_path: Path, chat: ScriptedChat) -> Iterator[MemoryAssistant]:
    embedder = HashingEmbedder(384)
    built = MemoryAssistant(
        tmp_path / "memories.sqlite3", lambda: embedder, lambda: chat, draft_stats=DraftStats()
    )
    for text in TOLD:
        built.remember(text)
    yield built
    built.close()


def test_an_invented_phone_number_is_withheld_and_the_memory_shown(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    chat.replies[:] = [
        "I'm glad you asked about your teeth. Please call 1-800-325-4769 (Toll-Free)."
    ]
    shown: list[str] = []
    result = assistant.turn(
        "Which city is my sibling in?", on_answer=lambda a, used: shown.append(a.text)
    )
    assert len(shown) == 1 and shown[0].startswith(SISTER + " [")  # at once
    assert result.answer == shown[0] and result.shown is not None
    assert cited(result) == [TOLD[0]]
    assert result.shown.mode == COMPOSED
    withheld = result.shown.withheld
    assert [s.kind for s in withheld] == [WITHHELD, WITHHELD]
    assert "1-800-325-4769" in withheld[1].reason
    assert "1-800" not in result.answer


def test_scaffolding_echoed_by_the_model_is_withheld(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    chat.replies[:] = ["The user said earlier: my dog is called Rex."]
    result = assistant.turn("What's the name of my dog?")
    assert result.answer == "Your dog is called Rex [1]."
    assert result.shown is not None and "copies the prompt" in result.shown.withheld[0].reason


def test_a_repeated_answer_for_a_new_question_is_withheld(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    parrot = "Cats love quiet homes and should visit the vet once a year for a check-up."
    chat.replies[:] = [parrot]
    first = assistant.turn("What is a good name for a cat?")
    assert first.shown is not None and first.shown.mode == MODEL
    assert [s.kind for s in first.shown.sentences] == [OWN]  # labelled as the model's
    history = [Message("user", "What is a good name for a cat?"), Message("assistant", parrot)]
    second = assistant.turn("How many legs does a spider have?", history)
    assert second.shown is not None
    assert second.answer.startswith("The model's answer was withheld: it repeats")


def test_never_told_gets_no_model_guess(assistant: MemoryAssistant, chat: ScriptedChat) -> None:
    chat.replies[:] = ["There are three main blood types: A, B, AB (Arya), and O (Ouija)."]
    result = assistant.turn("What is my blood type?")
    assert result.answer == "You haven't told me that."
    assert chat.calls == []  # not even asked
    asked = assistant.turn("What is my blood type?", draft=True)
    assert asked.answer == "You haven't told me that."  # asked, and withheld
    assert asked.shown is not None and asked.shown.mode == DONT_KNOW


def test_a_draft_that_passes_replaces_the_composed_answer(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    chat.replies[:] = ["Your sister Elena lives in Valencia."]
    result = assistant.turn("Which city is my sibling in?")
    assert result.shown is not None and result.shown.mode == GENERATED
    assert result.answer.startswith("Your sister Elena lives in Valencia [")
    assert cited(result) == [TOLD[0]] and result.draft_rate == 1.0


def test_drafts_stop_when_they_rarely_pass_unless_asked(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    chat.replies[:] = ["Your sister lives in Madrid."]
    for _ in range(5):
        assert assistant.turn("Which city is my sibling in?").shown.mode == COMPOSED  # type: ignore[union-attr]
    calls = len(chat.calls)
    quiet = assistant.turn("Which city is my sibling in?")
    assert quiet.draft_skipped and quiet.draft_rate == 0.0 and len(chat.calls) == calls
    assert quiet.answer.startswith(SISTER) and cited(quiet) == [TOLD[0]]
    asked = assistant.turn("Which city is my sibling in?", draft=True)  # "Ask the model"
    assert len(chat.calls) == calls + 1 and not asked.draft_skipped


def test_a_true_draft_that_leaves_the_answer_out_does_not_replace_it(
    assistant: MemoryAssistant, chat: ScriptedChat
) -> None:
    """Measured with the default model: "Elena, your sister Elena." is true, and no answer."""
    chat.replies[:] = ["Elena, your sister Elena."]
    result = assistant.turn("Which city is my sibling in?")
    assert result.shown is not None and result.shown.mode == COMPOSED
    assert (
        result.answer.startswith(SISTER)
        and "the model's answer does not say" in result.shown.reason
    )


KIDS = [
    "My mother Rosa lives in Bilbao",
    "I have two kids, Leo and Mia, and I take them to school myself",
    "My dentist appointment is on March 14th",
]


@pytest.mark.parametrize(
    "question",
    [
        "What are my kids' names?",
        "How many children do I have?",
        "What are my children called?",
        "¿Cómo se llaman mis hijos?",
        "¿Cuántos hijos tengo?",
    ],
)
def test_a_told_fact_is_stated_when_asked_with_other_family_words(question: str) -> None:
    """Issue 24 (tester): kids / children / hijos, names / called, "how many" — a number."""
    answer = compose(question, KIDS)
    assert answer.mode == COMPOSED
    assert answer.cited == (2,)


def test_what_is_asked_must_be_in_the_memory_that_answers() -> None:
    """ "How many" wants a number and "what is … called" a name: a memory about the subject
    without one does not answer it."""
    told = ["My kids go to school in Leeds", "My mum makes the best paella"]
    assert compose("How many children do I have?", told).mode == DONT_KNOW
    assert compose("What is my mum called?", told).mode == DONT_KNOW


def test_the_frame_follows_the_questions_language_and_the_memory_keeps_its_own() -> None:
    """Tester, issue 24: a Spanish memory was restated in Spanish inside an English answer
    ("Tu abuela Carmen vive en Bilbao") and vice versa."""
    english = compose("Where does my grandma Carmen live?", TOLD)
    assert english.text == "You told me: “Mi abuela Carmen vive en Bilbao” [4]."
    spanish = compose("¿Cómo se llama mi perro?", TOLD)
    assert spanish.text.startswith("Me dijiste: «My dog is called Rex»")
    assert compose("¿Dónde vive mi abuela?", TOLD).text == "Tu abuela Carmen vive en Bilbao [4]."


def test_a_place_is_not_a_name_and_an_age_wants_a_number() -> None:
    """The tester's-report part of the bench: "What are my grandchildren called?" was
    answered by "… nietos que viven en Murcia"; "How old are my kids?" by "two kids"."""
    told = ["Tengo tres nietos que viven en Murcia", "I have two kids, Leo and Mia"]
    assert compose("What are my grandchildren called?", told).mode == DONT_KNOW
    assert compose("How old are my kids?", told).mode == DONT_KNOW
    assert compose("How many grandchildren do I have?", told).cited == (1,)
    assert compose("¿Cuántos gatos tengo?", ["We have two cats at home"]).mode == COMPOSED


@pytest.mark.parametrize(
    ("memory", "said"),
    [
        # found by review: each was said back with its meaning changed and shown as supported
        ("You recommended ibuprofen for my headache", "You told me: “You recommended"),
        ("You should call me at 5", "You told me: “You should call me at 5”"),
        ("Me llamo Ana", "You told me: “Me llamo Ana”"),  # "You llamo Ana" before
        ("Le di a mi hermano tu libro", "“Le di a mi hermano tu libro”"),
        ("Te dije que vendría", "Me dijiste: «Te dije que vendría»"),
        ("Mi hermano y yo vivimos en Lugo", "Me dijiste: «Mi hermano y yo vivimos en Lugo»"),
        # and what was right stays right
        ("My sister lives in Valencia", "Your sister lives in Valencia"),
        ("Soy alérgico a la penicilina", "Eres alérgico a la penicilina"),
        ("Mis padres viven en Sevilla", "Tus padres viven en Sevilla"),
    ],
)
def test_a_memory_that_cannot_be_turned_around_safely_is_quoted_as_told(
    memory: str, said: str
) -> None:
    """A memory that already addresses someone, whose language is a tie, or whose Spanish
    verb would not agree with "tú" is quoted, never restated into another meaning."""
    from backends.questions import restate

    assert said in restate(memory)
