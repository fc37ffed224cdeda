"""Issue 24: a passage that mentions the question's subject without answering what is asked
of it (monitoring, dose, treatment, cause…) is "not covered — your notes only mention …", and
questions phrased around the notes' words ("ending in -pril", lay words) are not refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends.grounding import Vocabulary
from backends.models.chat import RetrievalOnlyChat
from backends.tutor import aspects
from backends.tutor.service import NOT_COVERED, TutorService
from tests.backends.tutor.conftest import SMALL_NOTES, TutorFactory, make_small_kb

NOTES = (*SMALL_NOTES, "thyroid-function-tests", "hypothyroidism", "ace-inhibitors", "wheeze")


@pytest.fixture
def tutor(make_tutor: TutorFactory, tmp_path: Path) -> TutorService:
    kb = make_small_kb(tmp_path / "kb", NOTES)
    return make_tutor(RetrievalOnlyChat(), kb_dir=kb)


def test_which_aspect_a_question_asks_and_of_what() -> None:
    asked = ["monitor", "lithium", "need"]
    found = aspects.asked_aspects(asked, "What monitoring does lithium need?")
    assert [a.name for a in found] == ["monitoring"]
    assert aspects.subject_words(asked, found) == ["lithium"]
    # a question asking for a name asks no aspect of its subject
    assert not aspects.asked_aspects(["drug", "caus", "cough"], "Which drug causes a cough?")
    # nor does a verb of giving ("what is given instead when…")
    question = "What is given instead when ramipril causes a cough?"
    assert not aspects.asked_aspects(["giv", "treatment", "ramipril", "caus", "cough"], question)


def test_a_mention_is_no_answer_and_the_subject_must_lead() -> None:
    subject = ["lithium"]
    monitoring = aspects.asked_aspects(["monitor", "lithium"], "How is lithium monitored?")
    mention = "Amiodarone, lithium, high-dose steroids and biotin supplements can alter results."
    assert not aspects.answers_aspect(mention, "Thyroid function tests", subject, monitoring)
    answer = "Lithium levels are monitored every three months."
    assert aspects.answers_aspect(answer, "Lithium", subject, monitoring)
    cause = aspects.asked_aspects(["caus", "coeliac"], "What causes coeliac disease?")
    listed = "Gastrointestinal causes are inflammatory bowel disease and coeliac disease."
    assert not aspects.answers_aspect(listed, "Finger clubbing", ["coeliac"], cause)


def test_amounts_by_kind_and_drug_endings() -> None:
    assert aspects.amount_kind("What dose of alteplase is given?") == "dose"
    assert aspects.amount_kind("How long does a dose change take?") == "time"
    assert not aspects.DOSE.search("within 4.5 hours of onset")
    assert aspects.DOSE.search("0.5 mg for an adult")
    assert aspects.DURATION.search("three or more times a week")
    vocabulary = Vocabulary.of(["ACE inhibitors such as ramipril, lisinopril and enalapril."])
    found = aspects.endings("Which drug class ending in -pril causes a cough?", vocabulary)
    assert set(found["pril"].split()) == {"ramipril", "lisinopril", "enalapril"}
    assert aspects.lay_words("a low sugar", vocabulary) == {"sugar": "glucose"}


def test_lithium_monitoring_is_not_covered_and_the_mention_is_cited(tutor: TutorService) -> None:
    """ "What monitoring does lithium need?" was answered with the thyroid-tests sentence."""
    turn = tutor.ask("What monitoring does lithium need?", "ana")
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED
    assert turn.answer.startswith("Not covered — your notes only mention lithium")
    (number,) = turn.cited
    cited = next(p for p in turn.passages if p.number == number)
    assert "lithium" in cited.text and f"[{number}]" in turn.answer
    alone = tutor.ask("What is the treatment of thyroid storm?", "ana")
    assert alone.grounding is not None and alone.grounding.mode == NOT_COVERED


def test_a_drug_named_by_its_ending_is_searched_by_the_notes_names(tutor: TutorService) -> None:
    """ "-pril" names ramipril, lisinopril and enalapril: the question is searched and weighed
    by them, so it finds the ACE-inhibitor note (with MiniLM it is answered from it: it was
    refused as not covered; bench/bench_answers.py measures it)."""
    retrieval = tutor.retrieve("Which drug class ending in -pril causes a dry cough?", "ana")
    assert {"ramipril", "lisinopril", "enalapril"} <= set(retrieval.asked)
    assert retrieval.passages[0].doc_id == "kb/ace-inhibitors"


def test_a_model_whose_drafts_rarely_pass_is_not_asked_unless_the_user_asks(
    make_tutor: TutorFactory,
) -> None:
    """Issue 24, the right answer first: each draft judged is counted per model; once a
    model's drafts are known to fail, the composed (quoted) answer is the turn's at once and
    the model is asked only when the user asks ("Ask the model to rephrase")."""
    from backends.models.chat import ScriptedChat

    wrong = "Warfarin is monitored with the D-dimer in Moscow."
    chat = ScriptedChat(replies=[wrong] * 20)
    tutor = make_tutor(chat)
    question = "Which blood test is used to monitor warfarin therapy?"
    for _ in range(5):
        tutor.ask(question, "ana")
    assert tutor.drafts.counts(f"tutor:{chat.name}") == (0, 5)
    assert not tutor.wants_draft()
    calls = len(chat.calls)
    turn = tutor.ask(question, "ana")
    assert len(chat.calls) == calls  # no draft asked for
    assert turn.grounding is not None and "rarely pass" in turn.grounding.heading
    assert "INR" in turn.answer
    asked = tutor.ask(question, "ana", draft=True)  # the user asks
    assert len(chat.calls) == calls + 1 and asked.grounding is not None
    assert asked.grounding.generated == wrong


# -- found by a tester with the default model and MiniLM (issue 24, H15) ------------------------

ATTACK = (
    "An acute severe attack is recognised by inability to complete sentences and a peak flow "
    "33 to 50% of best. Life-threatening features include a silent chest and cyanosis. "
    "Treatment is oxygen, nebulised salbutamol and ipratropium, and oral prednisolone."
)


def test_a_sentence_naming_no_topic_speaks_of_the_one_before_it() -> None:
    """ "Treatment is oxygen…" states the treatment of the attack the paragraph is about,
    though it does not say "attack": "severe asthma attack" was refused as only mentioned."""
    from backends.grounding import Source

    asked = ["sever", "asthma", "attack", "treat"]
    found = aspects.asked_aspects(asked, "How is a severe asthma attack treated?")
    subject = ["attack", "sever", "asthma"]  # the rarest first, as the tutor orders it
    (treatment,) = [s for s in Source(1, "Asthma", ATTACK).sentences if s.startswith("Treat")]
    assert aspects.topicless(treatment)
    assert not aspects.answers_aspect(treatment, "Asthma", subject, found)
    context = aspects.contexts([Source(1, "Asthma", ATTACK)])[1, treatment]
    assert aspects.answers_aspect(treatment, "Asthma", subject, found, context)
    # a subject of its own is no topic to inherit: "Antibody tests help with the cause"
    assert not aspects.topicless("Antibody tests help with the cause.")
    # the title states it for the subject when it names the subject's rarest word
    assert aspects.answers_aspect("Treatment is oxygen.", "Severe asthma attack", subject, found)
    # but not a subject whose rarest word the note does not name ("… in pregnancy")
    pregnancy = ["pregnancy", "attack", "sever", "asthma"]
    assert not aspects.answers_aspect(treatment, "Asthma", pregnancy, found, context)


def test_a_severe_asthma_attack_is_answered_with_its_treatment(tutor: TutorService) -> None:
    """ "How is a severe asthma attack treated?" was "Not covered — your notes only mention
    attack" though the asthma note says "Treatment is oxygen, nebulised salbutamol…"."""
    turn = tutor.ask("How is a severe asthma attack treated?", "ana")
    assert turn.grounding is not None and turn.grounding.mode != NOT_COVERED
    assert turn.answer.split("[")[0].count("Treatment is oxygen, nebulised salbutamol") == 1


def test_a_severe_asthma_attack_asked_in_spanish(tutor: TutorService) -> None:
    """ "¿Cómo se trata una crisis asmática grave?": "asmática" and "crisis" are the notes'
    asthma and attack (the glossary), and the treatment sentence is the answer."""
    turn = tutor.ask("¿Cómo se trata una crisis asmática grave?", "ana")
    assert {"asthma", "attack"} <= set(turn.retrieval.asked)
    assert turn.grounding is not None and turn.grounding.mode != NOT_COVERED
    assert "Treatment is oxygen, nebulised salbutamol" in turn.answer


def test_the_names_an_ending_stands_for_weigh_as_one_word() -> None:
    """Three "-pril" names in a sentence do not outweigh the sentence saying what is asked
    of them (the dry cough)."""
    from backends.grounding import Source, score_sentences

    note = (
        "ACE inhibitors such as ramipril, lisinopril and enalapril block the conversion of "
        "angiotensin I. A dry, persistent cough is the most common side effect."
    )
    others = ["Aspirin is an antiplatelet.", "Metformin lowers glucose.", "Warfarin needs INR."]
    vocabulary = Vocabulary.of([note, *others])
    question = "Which drug class ending in -pril commonly causes a dry cough?"
    alike = aspects.alternatives(question, vocabulary)
    assert alike == [frozenset({"ramipril", "lisinopril", "enalapril"})]
    asked = ["drug", "class", "ramipril", "lisinopril", "enalapril", "caus", "dry", "cough"]
    sources = [Source(1, "ACE inhibitors", note)]
    assert "block" in score_sentences(asked, sources, vocabulary)[0].text
    best = score_sentences(asked, sources, vocabulary, alternatives=alike)[0]
    assert "cough" in best.text


def test_the_pril_cough_question_is_answered_with_the_cough_sentence(tutor: TutorService) -> None:
    """It was answered with the ACE-inhibitor mechanism sentence, not the cough one (the
    sentences chosen; whether it is covered is the embedder's rule: MiniLM's covers it)."""
    retrieval = tutor.retrieve(
        "Which drug class ending in -pril commonly causes a dry cough?", "ana"
    )
    judged = tutor.answerer.judge(retrieval)
    assert "dry, persistent cough" in judged.quotes[0].text


def test_the_names_an_ending_stands_for_are_matched_by_their_note() -> None:
    """ "Why are drugs ending in -pril avoided in pregnancy?": the note naming them is the
    subject matched, and its sentence on pregnancy is the answer, not the one listing them."""
    from backends.grounding import Source, extract

    first = "ACE inhibitors such as ramipril, lisinopril and enalapril block angiotensin."
    later = "ACE inhibitors are contraindicated in pregnancy because they harm the fetal kidney."
    others = ["Aspirin is an antiplatelet.", "Metformin lowers glucose.", "Warfarin needs INR."]
    vocabulary = Vocabulary.of([first, later, *others])
    question = "Why are drugs ending in -pril avoided in pregnancy?"
    alike = aspects.alternatives(question, vocabulary)
    asked = ["drug", "ramipril", "lisinopril", "enalapril", "avoid", "pregnancy"]
    sources = [Source(1, "ACE inhibitors", first), Source(2, "ACE inhibitors", later)]
    assert "block" in extract(asked, sources, vocabulary)[0].text
    assert "pregnancy" in extract(asked, sources, vocabulary, alternatives=alike)[0].text


def test_a_qualified_subject_the_note_never_names_is_not_answered(tutor: TutorService) -> None:
    """ "…a severe asthma attack in pregnancy": the attack's treatment is the asthma note's,
    but the note never names pregnancy, so it does not answer for it (a mention)."""
    assert aspects.qualifiers("How is a severe asthma attack in pregnancy treated?") == [
        "pregnancy"
    ]
    turn = tutor.ask("How is a severe asthma attack in pregnancy treated?", "ana")
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED
