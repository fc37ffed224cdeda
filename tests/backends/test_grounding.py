"""The support check, the extractive answer and the coverage measure (CT9), on real notes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backends import grounding
from backends.grounding import Source, Vocabulary
from backends.tutor import translation
from backends.tutor.kb import shipped_kb_dir

NOTES = shipped_kb_dir() / "notes"
PAIRS = Path(__file__).resolve().parents[2] / "bench" / "data" / "support_pairs.json"


def note(name: str, number: int = 1) -> Source:
    text = (NOTES / f"{name}.md").read_text("utf-8")
    return Source(number, text.splitlines()[0].lstrip("# ").strip(), text)


@pytest.fixture(scope="module")
def vocabulary() -> Vocabulary:
    return Vocabulary.of(p.read_text("utf-8") for p in NOTES.glob("*.md"))


@pytest.mark.parametrize(
    ("sentence", "why"),
    [
        ("The antidote for paracetamol overdose is NAPQI.", "antidote"),  # issue 15's answer
        ("It was first discovered in 2014 by Dr. Elena Kass in Moscow.", "2014"),
        ("It is most effective within 24 hours of ingestion.", "24"),  # the note says eight
        ("Adrenaline is given by intravenous injection into the thigh muscle.", "intravenous"),
    ],
)
def test_a_sentence_its_note_does_not_state_is_unsupported_and_says_what_is_missing(
    sentence: str, why: str
) -> None:
    (checked,) = grounding.check_sentences(sentence, [note("paracetamol"), note("anaphylaxis", 2)])
    assert not checked.supported and why in checked.reason


@pytest.mark.parametrize(
    ("sentence", "name"),
    [  # found by a QA pass: each was shown ticked (issue 15)
        ("Yes, NSAIDs can be given in chronic kidney disease.", "chronic-kidney-disease"),
        ("Beta blockers can be given in asthma.", "beta-blockers"),
        ("Warfarin can be given in pregnancy.", "warfarin"),
        ("Potassium supplements are given in hyperkalaemia.", "hyperkalaemia"),
        ("Oxygen is given to all patients.", "acute-coronary-syndrome"),
    ],
)
def test_what_the_note_forbids_or_only_allows_sometimes_is_not_supported(
    sentence: str, name: str
) -> None:
    (checked,) = grounding.check_sentences(sentence, [note(name)])
    assert not checked.supported


def test_what_the_note_forbids_is_supported_when_the_answer_forbids_it_too() -> None:
    (checked,) = grounding.check_sentences(
        "Beta blockers are contraindicated in asthma.", [note("beta-blockers")]
    )
    assert checked.supported


def test_american_spellings_are_read_as_the_notes_british_ones() -> None:
    for american, british in [
        ("hyperkalemia", "hyperkalaemia"),
        ("anemic", "anaemia"),
        ("hemorrhage", "haemorrhage"),
        ("edema", "oedema"),
        ("ischemic", "ischaemic"),
    ]:
        assert grounding.normal(american) == grounding.normal(british)
    assert grounding.normal("them") == "them" and grounding.normal("academia") != ""


def test_fragments_with_nothing_to_check_are_not_sentences() -> None:
    checked = grounding.check_sentences("1. [3] 2. [4] Yes.", [note("inr")])
    assert checked == []


def test_a_sentence_about_another_entity_is_never_the_answer(vocabulary: Vocabulary) -> None:
    asked = grounding.question_words("What is the half-life of amoxicillin?")
    sources = [note("levothyroxine", 1), note("amoxicillin", 2)]
    plain = grounding.extract(asked, sources, vocabulary)
    about = grounding.extract(
        asked, sources, vocabulary, about=lambda text: int("amoxicillin" in text.lower())
    )
    assert any(q.number == 1 for q in plain)  # levothyroxine's "long half-life"
    assert about and all(q.number == 2 for q in about)


def test_a_negation_on_one_side_only_is_a_contradiction() -> None:
    sources = [note("anaphylaxis")]
    (wrong,) = grounding.check_sentences("Antihistamines are first-line treatments.", sources)
    (right,) = grounding.check_sentences("Antihistamines are not first-line treatments.", sources)
    assert not wrong.supported and right.supported
    # a "no" that reaches other words does not negate this sentence's ("no improvement")
    (route,) = grounding.check_sentences(
        "The first treatment is intramuscular adrenaline into the anterolateral thigh [1].",
        sources,
    )
    assert route.supported and route.number == 1


def test_a_supported_sentence_cites_the_passage_that_states_it_whatever_it_cited() -> None:
    sources = [note("inr", 1), note("paracetamol", 2)]
    (checked,) = grounding.check_sentences(
        "The antidote is intravenous acetylcysteine [1]. ", sources
    )
    assert checked.supported and checked.number == 2 and "acetylcysteine" in checked.evidence
    # number words read as digits; the note's title may stay implicit
    (eight,) = grounding.check_sentences("It works best within 8 hours of ingestion.", sources)
    assert not eight.supported  # "works best" is not in the note: strict, never generous
    (digits,) = grounding.check_sentences(
        "It is most effective within 8 hours of ingestion.", sources
    )
    assert digits.supported


def test_sentences_split_at_stops_and_semicolons_not_at_abbreviations() -> None:
    text = "# Title\n\nFirst, e.g. this one. Second [1]; Third; fourth. Fifth!\n\n- a bullet"
    assert grounding.split_sentences(text) == [
        "First, e.g. this one.",
        "Second [1].",
        "Third; fourth.",
        "Fifth!",
        "a bullet",
    ]
    assert grounding.complete_sentences("One done [1]. Two cut mid-wo") == "One done [1]."
    assert grounding.complete_sentences("No stop at all") == "No stop at all"


def test_the_extractive_answer_quotes_the_sentence_that_answers(vocabulary: Vocabulary) -> None:
    asked = grounding.question_words("What is the antidote for paracetamol overdose?")
    quotes = grounding.extract(asked, [note("inr", 1), note("paracetamol", 2)], vocabulary)
    assert quotes and quotes[0].number == 2 and "acetylcysteine" in quotes[0].text
    text = (NOTES / "paracetamol.md").read_text("utf-8")
    for quote in quotes:  # quoted word for word
        assert " ".join(quote.text.rstrip(".").split()) in " ".join(text.split())


def test_coverage_weighs_the_questions_words_the_notes_use(vocabulary: Vocabulary) -> None:
    sources = [note("paracetamol")]
    covered = grounding.question_words("What is the antidote for paracetamol overdose?")
    assert grounding.coverage(covered, sources, vocabulary) == pytest.approx(1.0)
    other = grounding.question_words("What is the first treatment of anaphylaxis?")
    assert grounding.coverage(other, sources, vocabulary) < grounding.coverage(
        other, [note("anaphylaxis")], vocabulary
    )
    unknown = grounding.question_words("How is appendicitis treated?")
    assert "appendicitis" in unknown and "appendicitis" not in vocabulary


def test_spanish_questions_are_told_apart_and_translated_to_words_the_notes_use(
    vocabulary: Vocabulary,
) -> None:
    glossary = translation.load_glossary((shipped_kb_dir() / "glossary_es.tsv").read_text("utf-8"))
    question = "¿Cuál es el antídoto de la sobredosis de paracetamol?"
    assert grounding.language(question) == "es"
    assert grounding.language("What is the antidote for paracetamol overdose?") == "en"
    words = translation.translate(question, glossary, vocabulary)
    assert words["antidoto"] == "antidote" and words["sobredosis"] == "overdose"
    # a cognate only when the notes use it
    found = translation.translate("¿Qué es la anafilaxia y la warfarina?", glossary, vocabulary)
    assert grounding.normal(found["warfarina"]) == grounding.normal("warfarin")
    assert grounding.normal(found["anafilaxia"]) == grounding.normal("anaphylaxis")
    assert translation.translate("¿Qué es la zzzquina?", glossary, vocabulary) == {}


def test_no_unsupported_sentence_of_the_labelled_set_passes_the_check() -> None:
    """bench/data/support_pairs.json: swapped drugs, wrong numbers, dropped negations, wrong
    routes, fabricated details, other subjects. The figure that must be 0."""
    pairs = json.loads(PAIRS.read_text("utf-8"))["pairs"]
    accepted = []
    for pair in pairs:
        if pair["label"] != "unsupported":
            continue
        checked = grounding.check_sentences(
            pair["sentence"], [note(pair["note"].removeprefix("kb/"))]
        )
        if checked and all(c.supported for c in checked):
            accepted.append(pair["sentence"])
    assert accepted == []
    verbatim = [p for p in pairs if p["kind"] == "verbatim"]
    passed = sum(
        all(c.supported for c in grounding.check_sentences(p["sentence"], [note(p["note"][3:])]))
        for p in verbatim
    )
    assert passed >= 0.9 * len(verbatim)  # what a note says word for word is supported


def test_a_spanish_cognate_is_translated_into_the_notes_own_spelling() -> None:
    """ "warfarina" could be "warfarine" or "warfarin": the notes write "warfarin", and only
    that spelling is known to the entity matcher (a follow-up evaluation found "¿Y la
    warfarina?" read as naming nothing)."""
    vocabulary = grounding.Vocabulary.of(
        ["Warfarin is monitored with the INR.", "Metformin; adrenaline is given IM."]
    )
    found = translation.translate("¿Y la warfarina? metformina, adrenalina", {}, vocabulary)
    assert found == {"warfarina": "warfarin", "metformina": "metformin", "adrenalina": "adrenaline"}
    merged = grounding.Vocabulary()
    merged.update(vocabulary)
    assert merged.spelling("warfarine") == "warfarin" and merged.documents == 2
