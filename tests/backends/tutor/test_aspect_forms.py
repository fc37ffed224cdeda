"""The word a question asks its aspect with is held by the note in another form (CT9 "not
covered" only when nothing answers): "How is anaphylaxis *treated*?" is answered by "The
first and most important *treatment* is intramuscular adrenaline …" — it was refused as not
covered, the note's definition quoted, because "treated" and "treatment" were two words."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.models.chat import RetrievalOnlyChat
from backends.tutor import aspects
from backends.tutor.service import NOT_COVERED, TutorService


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TutorService]:
    """The tutor as shipped: MiniLM, the second vector for Spanish questions, extractive."""
    from backends.models.embedders import MiniLMEmbedder, UniversalSentenceEncoder
    from bench.bench_answers import _tutor

    home = tmp_path_factory.mktemp("shipped")
    tutor = _tutor(home, MiniLMEmbedder(), RetrievalOnlyChat(), UniversalSentenceEncoder())
    yield tutor
    tutor.close()


def test_an_asked_aspect_brings_its_forms() -> None:
    (forms,) = aspects.asked_forms(["anaphylaxis", "treat"], "How is anaphylaxis treated?")
    assert {"treat", "treatment"} <= forms
    assert aspects.asked_forms(["anaphylaxis"], "What is anaphylaxis?") == []


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("How is anaphylaxis treated?", "adrenaline"),
        ("¿Cómo se trata la anafilaxia?", "adrenaline"),
        ("How is asthma treated?", "inhaled corticosteroid"),
        ("How is gout treated?", "colchicine"),
        # the treatment said by what the patient needs, by its route
        ("How is hypoglycaemia treated in an unconscious patient?", "intramuscular glucagon"),
    ],
)
def test_a_treatment_question_is_answered_by_the_treatment(
    shipped: TutorService, question: str, said: str
) -> None:
    turn = shipped.ask(question, "tester")
    assert turn.grounding is not None
    assert turn.grounding.mode != NOT_COVERED, turn.answer
    assert said in turn.answer


def test_a_form_is_no_evidence_for_every_sentence_of_its_note(shipped: TutorService) -> None:
    """The treatment sentence leads, not a sentence of the same note that names no form."""
    turn = shipped.ask("How is anaphylaxis treated?", "tester")
    first = turn.answer.split("[1]")[0]
    assert "treatment" in first and "lies flat" not in first, turn.answer
