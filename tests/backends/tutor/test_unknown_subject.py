"""A question whose subject no note knows is "not covered" (CT9), not answered with a note about
another subject that shares the aspect's word: "What is the antidote to a morphine overdose?"
was answered with paracetamol's antidote, "¿Cómo se trata una sobredosis de cocaína?" with the
beta blockers' overdose. The questions the notes do answer stay answered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.models.chat import RetrievalOnlyChat
from backends.tutor import aspects
from backends.tutor.service import NOT_COVERED, TutorService


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TutorService]:
    """The tutor as shipped: MiniLM (its coverage floors are measured for it), the second
    vector for Spanish questions, the extractive answer."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder
    from bench.bench_answers import _tutor

    home = tmp_path_factory.mktemp("shipped")
    tutor = _tutor(home, MiniLMEmbedder(), RetrievalOnlyChat(), UniversalSentenceEncoder())
    yield tutor
    tutor.close()


def test_english_words_that_name_a_drug_or_a_condition() -> None:
    for word in ("morphine", "cocaine", "benzodiazepine", "meningitis", "haemodialysis"):
        assert aspects.english_term(word, f"What about {word}?"), word
    assert aspects.english_term("cpr", "How fast are compressions in CPR?")
    for word in ("difference", "fly", "puffs", "medicine", "guideline", "deep"):
        assert not aspects.english_term(word, f"What about the {word}?"), word


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("What is the antidote to a morphine overdose?", "morphine"),
        ("How is a cocaine overdose treated?", "cocaine"),
        ("What reverses a benzodiazepine overdose?", "benzodiazepine"),
        ("¿Cómo se trata una sobredosis de cocaína?", "cocaína"),
        ("¿Qué se da en una intoxicación por benzodiacepinas?", "benzodiacepinas"),
    ],
)
def test_a_subject_no_note_knows_is_not_covered(
    shipped: TutorService, question: str, named: str
) -> None:
    turn = shipped.ask(question, "tester")
    assert turn.grounding is not None
    assert turn.grounding.mode == NOT_COVERED, turn.answer
    assert named in turn.answer
    assert "acetylcysteine" not in turn.answer and "atropine" not in turn.answer


@pytest.mark.parametrize(
    "question",
    [
        "What is the antidote for an opioid overdose?",
        "¿Cuál es el antídoto de una sobredosis de opioides?",
    ],
)
def test_a_subject_only_another_passage_names_is_not_answered_by_the_quotes(
    shipped: TutorService, question: str
) -> None:
    """ "opioid" is in one note (the blood gas's "opioid toxicity"): the paracetamol antidote
    is no answer; at most that mention is quoted."""
    turn = shipped.ask(question, "tester")
    assert turn.grounding is not None
    assert turn.grounding.mode == NOT_COVERED, turn.answer
    assert "acetylcysteine" not in turn.answer


@pytest.mark.parametrize(
    ("question", "key"),
    [
        ("What is the antidote for paracetamol overdose?", "acetylcysteine"),
        ("¿Cuál es el antídoto de una sobredosis de paracetamol?", "acetylcysteine"),
        ("How is a beta blocker overdose treated?", "glucagon"),
        (
            "Which blood test is taken after an anaphylactic reaction to support the diagnosis?",
            "tryptase",
        ),
        # "bug" adds "bacteria", which the question does not say: not its subject
        ("Which gut bug often follows broad-spectrum antibiotics and causes colitis?", "difficile"),
    ],
)
def test_what_the_notes_answer_stays_answered(
    shipped: TutorService, question: str, key: str
) -> None:
    turn = shipped.ask(question, "tester")
    assert turn.grounding is not None
    assert turn.grounding.mode != NOT_COVERED, turn.answer
    assert key in turn.answer.casefold()
