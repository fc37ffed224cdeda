"""A question of a thread that names nothing ("and in children?") is read with the earlier one."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.audit.service import AuditService, Filter
from backends.models.chat import ScriptedChat
from backends.tutor import followup
from backends.tutor.service import AUDIT_EVENT, EXTRACTIVE, NOT_COVERED, TutorService
from tests.backends.tutor.conftest import SMALL_NOTES, TutorFactory, make_small_kb

FIRST = "What is the antidote for paracetamol overdose?"


@pytest.fixture
def tutor(make_tutor: TutorFactory, tmp_path: Path) -> TutorService:
    kb = make_small_kb(tmp_path / "with-paracetamol", (*SMALL_NOTES, "paracetamol"))
    return make_tutor(ScriptedChat(replies=["I am not sure."] * 10), kb_dir=kb)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("When is it most effective?", followup.MARKED),
        ("and in children?", followup.MARKED),
        ("What about the elderly?", followup.MARKED),
        ("¿Y en niños?", followup.MARKED),
        ("What dose is given?", followup.SHORT),
        ("How is acute kidney injury staged by the rise in creatinine?", followup.NONE),
    ],
)
def test_what_kind_of_follow_up_a_question_is(question: str, expected: str) -> None:
    assert followup.kind(question, names_entity=False) == expected
    # a question that names an entity of the notes says what it is about
    assert followup.kind(question, names_entity=True) == followup.NONE


def test_the_earlier_questions_words_are_carried_as_written_without_repeats() -> None:
    assert followup.carried("When is it most effective?", FIRST) == "antidote paracetamol overdose"
    assert followup.carried("And the overdose dose?", FIRST) == "antidote paracetamol"
    chained = followup.understood("When is it most effective?", "antidote paracetamol overdose")
    assert followup.carried("and in children?", chained) == (
        "antidote paracetamol overdose most effective"
    )
    many = " ".join(f"word{n}" for n in range(30))
    assert len(followup.carried("and then?", many).split()) == followup.CARRIED_WORDS


def test_a_follow_up_is_answered_from_the_earlier_questions_note_and_says_so(
    tutor: TutorService, audit: AuditService
) -> None:
    first = tutor.ask(FIRST, "ana")
    assert first.retrieval.follows == "" and first.follow_up_note == ""
    question = "What are its early symptoms?"
    alone = tutor.ask(question, "ana")  # alone, "its" is anything's: asthma's, say
    assert alone.passages[0].doc_id != "kb/paracetamol"
    assert not alone.answer.startswith("Paracetamol")

    turn = tutor.ask(question, "ana", earlier=first.retrieval.understood)
    assert turn.passages[0].doc_id == "kb/paracetamol"
    assert turn.grounding is not None and turn.grounding.mode == EXTRACTIVE
    assert turn.answer.startswith("Paracetamol: Early after an overdose")
    assert "nausea and vomiting" in turn.answer and "[1]" in turn.answer
    assert turn.retrieval.follows == FIRST
    assert "antidote paracetamol overdose" in turn.follow_up_note
    records = list(audit.entries(Filter(event_type=AUDIT_EVENT)))
    personal = audit.reveal(records[-1]).personal
    assert personal is not None and personal["follows"] == FIRST
    assert personal["question"] == question


def test_a_follow_up_the_earlier_note_does_not_answer_is_not_covered(
    tutor: TutorService,
) -> None:
    """The paracetamol note says nothing of children: its antidote sentence is no answer to
    "and in children?", however well it matches the earlier question."""
    first = tutor.ask(FIRST, "ana")
    turn = tutor.ask("And in children?", "ana", earlier=first.retrieval.understood)
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED
    assert turn.cited == ()


def test_a_question_that_names_its_subject_is_read_alone(tutor: TutorService) -> None:
    first = tutor.ask(FIRST, "ana")
    turn = tutor.ask("What does warfarin interact with?", "ana", earlier=first.retrieval.understood)
    assert turn.retrieval.follows == "" and turn.retrieval.carried == ""
    assert turn.passages[0].doc_id == "kb/warfarin"
