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


@pytest.mark.parametrize(
    ("earlier", "question", "note", "fact"),
    [
        (
            "How does metformin lower blood glucose?",
            "What are the common side effects?",
            "kb/metformin",
            "gastrointestinal",
        ),
        ("How is asthma treated?", "How is a severe attack recognised?", "kb/asthma", "sentences"),
        ("What does the INR measure?", "What is the main use?", "kb/inr", "monitoring warfarin"),
    ],
)
def test_a_short_follow_up_is_read_in_the_thread_even_when_another_note_covers_it_alone(
    tutor: TutorService, earlier: str, question: str, note: str, fact: str
) -> None:
    """A few words with no entity are "covered" by some note or other when read alone; in a
    thread the earlier question's note answers them (found by bench/bench_followups.py:
    "what value is diagnostic?" after an HbA1c question was answered about BNP)."""
    first = tutor.ask(earlier, "ana")
    assert followup.kind(question, names_entity=False) == followup.SHORT
    alone = tutor.ask(question, "ana")  # covered alone, by another note: read alone before
    assert alone.grounding is not None and alone.grounding.covered
    assert alone.passages[0].doc_id != note
    turn = tutor.ask(question, "ana", earlier=first.retrieval.understood)
    assert turn.retrieval.follows == earlier
    assert turn.grounding is not None and turn.grounding.covered
    cited = {p.number: p.doc_id for p in turn.passages}
    assert cited[turn.cited[0]] == note
    assert fact in turn.answer


def test_a_short_self_contained_question_after_a_thread_is_answered_alone(
    tutor: TutorService,
) -> None:
    """The thread reading names the earlier question's entities, which a quote must name: a
    short question about something else is not covered that way and is read alone."""
    first = tutor.ask("How is the effect of warfarin monitored?", "ana")
    question = "What is a silent chest?"
    assert followup.kind(question, names_entity=False) == followup.SHORT
    turn = tutor.ask(question, "ana", earlier=first.retrieval.understood)
    assert turn.retrieval.follows == ""
    assert turn.grounding is not None and turn.grounding.covered
    assert turn.passages[0].doc_id == "kb/asthma"
    assert "silent chest" in turn.answer


def test_tries_and_keeps_the_thread_reading_by_kind() -> None:
    assert followup.tries_thread(followup.MARKED) and followup.tries_thread(followup.SHORT)
    assert not followup.tries_thread(followup.NONE)
    assert followup.keeps_thread(followup.MARKED, covered_in_thread=False)
    assert followup.keeps_thread(followup.SHORT, covered_in_thread=True)
    assert not followup.keeps_thread(followup.SHORT, covered_in_thread=False)


def test_a_self_contained_question_with_a_glue_that_or_also_is_read_alone(
    tutor: TutorService,
) -> None:
    """ "also" (like "that") is as often glue as a pointer: a longer question holding it says
    what it is about, and is answered from its own note, not the earlier one's (a review
    found the asthma question answered from the paracetamol note)."""
    question = "What is a silent chest, and when is treatment also needed?"
    assert followup.kind(question, names_entity=False) == followup.NONE
    assert followup.kind("And that?", names_entity=False) == followup.MARKED
    assert followup.kind("Is that also true?", names_entity=False) == followup.MARKED
    first = tutor.ask(FIRST, "ana")
    turn = tutor.ask(question, "ana", earlier=first.retrieval.understood)
    assert turn.retrieval.follows == ""
    assert turn.passages[0].doc_id == "kb/asthma"


def test_after_an_uncovered_question_a_short_one_is_a_new_topic(tutor: TutorService) -> None:
    """Issue 24: "What monitoring does lithium need?" after "How is acute appendicitis
    diagnosed?" (not covered) was read as its follow-up and answered from another note; a
    short question after an uncovered one is read alone (a marked one still follows)."""
    assert not followup.tries_thread(followup.SHORT, earlier_covered=False)
    assert followup.tries_thread(followup.MARKED, earlier_covered=False)
    first = tutor.ask("How is acute appendicitis diagnosed?", "ana")
    assert first.grounding is not None and first.grounding.mode == NOT_COVERED
    turn = tutor.ask(
        "What dose is given?", "ana", earlier=first.retrieval.understood, earlier_covered=False
    )
    assert turn.retrieval.follows == ""
