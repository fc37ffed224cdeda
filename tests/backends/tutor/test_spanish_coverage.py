"""The coverage rule on Spanish questions (issue 27): a Spanish question its notes answer is
answered, and one they do not answer is still "not covered".

The held-out Spanish set's 13 wrongly refused questions came from a few classes: words left
untranslated (tests/backends/tutor/test_spanish_words.py) and, here, each on its own (mostly
on other words than the set's): everyday words taken for terms ("zona", "toma"); the
similarity floor, measured on English questions, read on the Spanish as asked; the words
that ask a time counted as words an answer must hold; the kind of thing asked ("¿qué
órgano…?") required in the answer; a "why" question held to the aspect it asks the reason
for; and words compared in Spanish with the English they stand for. The questions the notes
do not answer stay "not covered".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.models.chat import RetrievalOnlyChat
from backends.tutor import aspects
from backends.tutor.kb import shipped_kb_dir
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


def test_everyday_words_are_not_taken_for_terms() -> None:
    """ "-oma" and "-ona" name tumours and drugs after a stem, not in "zona" or "toma"."""
    for word in ("zona", "toma", "forma", "dosis"):
        assert not aspects.term_like(word, f"¿Qué {word} es?"), word
    for word in ("carcinoma", "prednisona", "apendicitis", "omeprazol"):
        assert aspects.term_like(word, f"¿Qué es la {word}?"), word


def test_a_time_is_answered_by_a_time_not_by_every() -> None:
    assert not aspects.DURATION.search("A normal CRP does not exclude every serious condition.")
    assert aspects.DURATION.search("It is repeated every 3 to 5 minutes.")
    assert aspects.DURATION.search("Take it every morning.")
    assert aspects.amount_kind("How soon must a patient with chest pain have an ECG?") == "time"
    assert aspects.amount_kind("¿En cuánto tiempo hay que poner el antibiótico?") == "time"


def test_the_words_of_a_spanish_question_are_compared_in_english() -> None:
    """A circumstance ("cuando la warfarina causa…") asks no aspect, in Spanish as in English:
    its words are read in the English they stand for."""
    asked = ["giv", "treatment", "warfarin", "caus", "bleed"]
    english = aspects.asked_aspects(asked, "What is given when warfarin causes bleeding?")
    spanish = aspects.asked_aspects(
        asked,
        "¿Qué se da cuando la warfarina causa un sangrado?",
        english="what give when the warfarin cause a bleeding",
    )
    assert [a.name for a in spanish] == [a.name for a in english]
    assert "cause" not in [a.name for a in spanish]
    assert aspects.qualifiers("how treat a attack of asthma severe in the pregnancy") == [
        "pregnancy"
    ]


def test_a_why_question_asks_the_reason_not_the_aspect() -> None:
    question = "Why must potassium be monitored when insulin is given in ketoacidosis?"
    asked = ["monitor", "potassium", "insulin", "giv", "treatment", "ketoacidosis"]
    found = aspects.asked_aspects(asked, question)
    assert [a.name for a in found] == ["reason"]
    assert "monitor" not in aspects.subject_words(asked, found)
    because = "Treatment is insulin and potassium replacement, because insulin drives potassium."
    assert aspects.answers_aspect(because, "Diabetic ketoacidosis", ["ketoacidosis"], found)
    mention = "Amiodarone, lithium and biotin supplements can alter results."
    assert not aspects.answers_aspect(mention, "Thyroid function tests", ["lithium"], found)


def test_a_circumstance_in_a_sentence_is_not_its_aspect() -> None:
    """ "… anticoagulation when the cause is atrial fibrillation" gives no side effect of the
    clopidogrel the sentence names."""
    side_effects = [a for a in aspects.ASPECTS if a.name == "side effects"]
    sentence = (
        "Secondary prevention includes antiplatelet therapy (clopidogrel is commonly used long "
        "term), a statin, and anticoagulation when the cause is atrial fibrillation."
    )
    assert not aspects.answers_aspect(sentence, "Stroke", ["clopidogrel"], side_effects)
    said = "Clopidogrel causes bleeding, especially when combined with aspirin."
    assert aspects.answers_aspect(said, "Stroke", ["clopidogrel"], side_effects)


ANSWERED = [
    # the similarity floor read on the question's English words (was 0.16 as asked)
    ("¿Cuándo no se debe dar nitrofurantoína?", "below 45"),
    # "toma" is no term; "por qué" asks the reason
    ("¿Por qué la simvastatina se toma por la noche?", "cholesterol synthesis peaks"),
    # amoxicilina, betalactamasas: doubled consonant, hyphen
    (
        "¿Qué se le añade a la amoxicilina para que las betalactamasas no la destruyan?",
        "clavulanic",
    ),
    # the kind of thing asked is not repeated by the answer
    ("¿Qué órgano fabrica la proteína C reactiva?", "made by the liver"),
    # PCR is CRP; "cuánto tarda" asks a time, answered by the note's "six hours"
    ("cuanto tarda en subir la PCR tras una infeccion", "six hours"),
    ("how long does CRP take to rise after an infection", "six hours"),
    # a why question about a monitoring
    (
        "¿Por qué hay que vigilar el potasio cuando se pone insulina en una cetoacidosis?",
        "drives potassium into cells",
    ),
    # "usual" and "most frequent" say which cause, they are not the subject
    ("What are the usual causes of chronic kidney disease?", "diabetes and hypertension"),
    ("¿Cuándo está contraindicada la penicilina?", "penicillin"),
]


@pytest.mark.parametrize(("question", "key"), ANSWERED)
def test_answerable_spanish_questions_are_answered(
    shipped: TutorService, question: str, key: str
) -> None:
    turn = shipped.ask(question, "bench")
    assert turn.grounding is not None and turn.grounding.mode != NOT_COVERED, turn.answer
    assert key.casefold() in turn.answer.casefold(), turn.answer


NOT_ANSWERED = [
    # names nothing the notes know, with words left in Spanish ("migraña"), low similarity
    "¿Qué se toma para cortar un ataque de migraña?",
    # a mention of clopidogrel in a sentence whose "cause" is a circumstance
    "¿Qué efectos adversos tiene el clopidogrel?",
    "What are the side effects of clopidogrel?",
    # "en el embarazo" read as "in pregnancy": the asthma note never names it
    "¿Cómo se trata una crisis de asma grave en el embarazo?",
    # a why question about what the notes only mention
    "¿Por qué se vigila el litio?",
    # terms the notes lack, as before
    "¿Qué síntomas tiene una apendicitis?",
    "¿A qué edad se vacuna a los niños contra la varicela?",
]


@pytest.mark.parametrize("question", NOT_ANSWERED)
def test_questions_the_notes_do_not_answer_stay_not_covered(
    shipped: TutorService, question: str
) -> None:
    turn = shipped.ask(question, "bench")
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED, turn.answer


def test_the_shipped_tutor_fixture_is_the_product_path(shipped: TutorService) -> None:
    assert shipped.embedder.name == "all-MiniLM-L6-v2"
    assert shipped.spanish_embedder is not None
    assert Path(shipped.kb_dir) == shipped_kb_dir()
