"""Spanish questions in the notes' words (issue 27): the words the held-out Spanish set's
wrongly refused questions left untranslated, by class — Spanish function words and a
person's words (glue, as their English is); cognates English spells with a doubled consonant
or a hyphen; glossary words in another form (their Snowball stem) or cut short ("el
electro"); acronyms written in Spanish order ("PCR", "IECA"); and a Spanish question read in
English word for word (what the coverage floor, measured on English questions, reads)."""

from __future__ import annotations

import pytest

from backends import grounding
from backends.grounding import Vocabulary
from backends.tutor import translation
from backends.tutor.kb import shipped_kb_dir
from backends.tutor.terms import Terms


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    notes = sorted((shipped_kb_dir() / "notes").glob("*.md"))
    return Vocabulary.of(p.read_text("utf-8") for p in notes)


@pytest.fixture(scope="module")
def glossary() -> dict[str, str]:
    return translation.load_glossary((shipped_kb_dir() / "glossary_es.tsv").read_text("utf-8"))


@pytest.fixture(scope="module")
def entities() -> list[tuple[str, ...]]:
    terms = Terms.load(shipped_kb_dir() / "terms.txt")
    return [(t.name, *t.aliases) for t in terms.terms]


def _translate(question: str, glossary: dict[str, str], vocabulary: Vocabulary) -> dict[str, str]:
    return translation.translate(question, glossary, vocabulary)


def test_spanish_function_words_and_a_persons_words_are_glue(
    glossary: dict[str, str], vocabulary: Vocabulary
) -> None:
    question = "¿Qué le pasa a un paciente que suele tomar tanto alcohol?"
    found = _translate(question, glossary, vocabulary)
    assert found["paciente"] == found["suele"] == found["tanto"] == ""
    asked = grounding.question_words(question, found)
    assert not {"paciente", "pacient", "suel", "tanto"} & set(asked)
    assert "alcohol" in asked


def test_cognates_english_spells_with_a_doubled_consonant_or_a_hyphen(
    glossary: dict[str, str], vocabulary: Vocabulary
) -> None:
    found = _translate(
        "¿La penicilina, la amoxicilina, los antiinflamatorios y las betalactamasas?",
        glossary,
        vocabulary,
    )
    assert found["penicilina"] == "penicillin"
    assert found["amoxicilina"] == "amoxicillin"
    assert found["antiinflamatorios"] == "anti inflammatory"
    assert found["betalactamasas"] == "beta lactamase"
    # an enzyme ("-asa") and a word no note uses
    found = _translate("¿Anticuerpos antiperoxidasa o zzzquinasa?", glossary, vocabulary)
    assert found["antiperoxidasa"] == "anti peroxidase" and "zzzquinasa" not in found


def test_glossary_words_in_another_form_or_cut_short(
    glossary: dict[str, str], vocabulary: Vocabulary
) -> None:
    """ "vigilan", "causaron" are forms of the glossary's "vigilar", "causar" (their Snowball
    stem); "el electro" is "electrocardiograma" cut short. A noun is not read by a short
    stem: "daño" (folded "dano") is not "dan" (they give)."""
    found = _translate("¿Lo vigilan porque causaron el electro o el daño?", glossary, vocabulary)
    assert found["vigilan"] == "monitor" and found["causaron"] == "cause"
    assert found["electro"] == "ecg"
    assert "dano" not in found


def test_acronyms_written_in_spanish_order(
    glossary: dict[str, str], vocabulary: Vocabulary, entities: list[tuple[str, ...]]
) -> None:
    question = "¿Sube la PCR con los IECA?"
    found = translation.translate(question, glossary, vocabulary, entities)
    assert found["pcr"] == "C-reactive protein" and found["ieca"] == "ACE inhibitors"
    # read as the notes' words, the hyphen too
    asked = grounding.question_words(question, found)
    assert {"reactiv", "protein", "ace", "inhibitor"} <= set(asked)
    # in lower case it is a word, not an acronym
    assert "pcr" not in translation.translate("la pcr", glossary, vocabulary, entities)


def test_a_spanish_question_read_in_english_word_for_word(
    glossary: dict[str, str], vocabulary: Vocabulary
) -> None:
    question = "¿Cuándo no se debe dar nitrofurantoína?"
    found = _translate(question, glossary, vocabulary)
    assert translation.english(question, found) == "when not must give nitrofurantoin"
