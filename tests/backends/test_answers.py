"""The shared answer policy (AL1): kinds of sentence, the parroting guard, draft pass rates."""

from __future__ import annotations

import json
from pathlib import Path

from backends import answers
from backends.answers import (
    COMPOSED,
    GENERATED,
    OWN,
    SUPPORTED,
    WITHHELD,
    Answer,
    DraftStats,
    Shown,
)
from backends.grounding import Source

SOURCES = [
    Source(1, "", "My sister Elena lives in Valencia with her husband"),
    Source(2, "", "I am allergic to peanuts"),
]


def test_a_supported_sentence_is_cited_and_an_invented_phone_number_withheld() -> None:
    judged = answers.judge_draft(
        "Your sister Elena lives in Valencia. Please call 1-800-325-4769.",
        SOURCES,
        question="Where does my sister live?",
    )
    assert [s.kind for s in judged] == [SUPPORTED, WITHHELD]
    assert judged[0].number == 1
    assert "1-800-325-4769" in judged[1].reason


def test_echoed_scaffolding_is_withheld_even_when_its_words_are_true() -> None:
    judged = answers.judge_draft("The user said earlier: I am allergic to peanuts.", SOURCES)
    assert [s.kind for s in judged] == [WITHHELD]
    assert "copies the prompt" in judged[0].reason


def test_an_answer_repeating_the_previous_one_is_withheld_whole() -> None:
    earlier = ["I'm glad you asked about your teeth. I'd like to remind you to brush twice."]
    judged = answers.judge_draft(
        "I'm glad you asked about your teeth. I'd like to remind you to brush twice a day.",
        SOURCES,
        earlier=earlier,
        needs_support=False,
    )
    assert judged and all(s.kind == WITHHELD for s in judged)
    assert "repeats an earlier answer" in judged[0].reason


def test_the_models_words_on_a_general_question_are_its_own() -> None:
    judged = answers.judge_draft("Luna is a good name for a cat.", [], needs_support=False)
    assert [s.kind for s in judged] == [OWN]
    # ... but not when a source should back it (a question about the user)
    judged = answers.judge_draft("Your blood type is O negative.", SOURCES)
    assert [s.kind for s in judged] == [WITHHELD]


def test_specifics_the_sources_hold_are_not_invented() -> None:
    held = ["My number is +34 600 123 456", "I was born on 3 May 1990", "Mail me at a@b.org"]
    said = "Your number is 600 123 456, you were born on 3 May 1990 and your mail is a@b.org."
    assert answers.invented_specifics(said, held) == []
    assert answers.invented_specifics("Write to help@example.com", held) == ["help@example.com"]
    assert answers.invented_specifics("Visit www.example.com", held) == ["www.example.com"]
    assert answers.invented_specifics("It was on 12/03/2021.", held) == ["12/03/2021"]
    assert answers.invented_specifics("You have 3 cats.", held) == []  # "3" is held
    assert answers.invented_specifics("You have 7 cats.", held) == ["7"]


def test_choose_keeps_the_composed_answer_unless_the_draft_passes() -> None:
    composed = Answer(COMPOSED, (Shown("Your sister Elena lives in Valencia.", SUPPORTED, 1),))
    bad = answers.judge_draft("Your sister lives in Madrid.", SOURCES)
    kept = answers.choose(composed, "Your sister lives in Madrid.", bad)
    assert kept.mode == COMPOSED
    assert kept.text == "Your sister Elena lives in Valencia [1]."
    assert kept.reason.startswith("1 of 1 sentences not supported")
    assert kept.withheld == bad
    good = answers.judge_draft("Your sister Elena lives in Valencia.", SOURCES)
    shown = answers.choose(composed, "Your sister Elena lives in Valencia.", good)
    assert shown.mode == GENERATED and shown.cited == (1,)
    assert answers.choose(composed, "", ()).reason == "the model gave no answer"


def test_draft_stats_stop_drafts_when_they_rarely_pass_and_persist(tmp_path: Path) -> None:
    path = tmp_path / answers.STATS_FILE
    stats = DraftStats(path)
    assert stats.rate("memories:smollm2") is None and stats.should_draft("memories:smollm2")
    for _ in range(5):
        stats.record("memories:smollm2", passed=False)
    stats.record("memories:other", passed=True)
    assert stats.rate("memories:smollm2") == 0.0
    assert not stats.should_draft("memories:smollm2")
    assert stats.should_draft("memories:other")
    again = DraftStats(path)  # read back from the file
    assert again.counts("memories:smollm2") == (0, 5)
    assert not again.should_draft("memories:smollm2")
    again.reset("memories:smollm2")
    assert DraftStats(path).should_draft("memories:smollm2")


def test_a_torn_stats_file_starts_again(tmp_path: Path) -> None:
    path = tmp_path / answers.STATS_FILE
    path.write_text("{not json", encoding="utf-8")
    stats = DraftStats(path)
    assert stats.counts("x") == (0, 0)
    stats.record("x", passed=True)
    assert json.loads(path.read_text(encoding="utf-8")) == {"x": {"drafts": 1, "passed": 1}}


def test_a_short_answer_said_again_is_a_repeat() -> None:
    assert answers.repeats_earlier("Elena is in Spain.", ["Elena is in Spain"])
    assert not answers.repeats_earlier("Elena is in Spain.", ["Rex is a dog."])


LANDLORD = "My landlord told me the rent goes up to 950 euros in January."
INVENTED = (
    "Sinisa, I'm sorry to hear that. The rent increases by 50 euros until March 28th. "
    "That is approximately 30 euros ($45). You could ask your landlord for the contract. "
    "From January the rent is 950 euros."
)


def test_what_the_user_tells_of_their_life_gets_no_invented_numbers_dates_or_names() -> None:
    """Tester, issue 24: the model's words on "My landlord told me …" invented a name, a
    date and three amounts; the user's own message is the source of 950 euros / January."""
    judged = answers.judge_draft(
        INVENTED, [], question=LANDLORD, needs_support=False, specifics=True
    )
    kinds = [s.kind for s in judged]
    assert kinds == [WITHHELD, WITHHELD, WITHHELD, OWN, OWN]
    assert "Sinisa" in judged[0].reason and "March 28th" in judged[1].reason


def test_names_the_sources_hold_are_not_invented() -> None:
    assert answers.invented_names("I hope Elena enjoys Valencia.", ["My sister Elena"]) == [
        "Valencia"
    ]
    assert answers.invented_names("Elena, good news. Monday is free.", ["Elena"]) == []
    # a sentence's opening word before a comma that addresses no one
    assert answers.invented_names("However, it goes up. Sorry, no.", []) == []


def test_a_terminal_prints_each_sentence_on_one_line() -> None:
    """Tester, issue 24: a draft's line breaks printed bare lines between the answer and its
    citation."""
    shown = Answer(
        "generated",
        (Shown("Your dentist appointment\nis on March 14th.", SUPPORTED, 1),),
        "heading",
        draft_sentences=(Shown("Call\n1-800-325-4769.", WITHHELD, reason="invented"),),
    )
    assert answers.render_text(shown).splitlines() == [
        "heading",
        "  ✓ Your dentist appointment is on March 14th [1].",
        "Withheld from the model's draft (not shown as an answer):",
        "  ✗ Call 1-800-325-4769. — invented",
    ]


def test_spanish_glue_and_ordinal_endings_do_not_withhold_a_supported_sentence() -> None:
    """Tester, issue 24: "El hermano vive en Sevilla" was withheld for "el", "the 14th of
    March" for "th"."""
    brother = [Source(1, "", "Mi hermano vive en Sevilla")]
    dentist = [Source(1, "", "My dentist appointment is on March 14th")]
    assert [s.kind for s in answers.judge_draft("El hermano vive en Sevilla.", brother)] == [
        SUPPORTED
    ]
    said = "Your dentist appointment is on the 14th of March."
    assert [s.kind for s in answers.judge_draft(said, dentist)] == [SUPPORTED]


def test_an_answer_that_takes_up_the_new_questions_words_is_not_a_repeat() -> None:
    """Found by the crash loop: an answer to a new question about similar things shares many
    words with the last answer — the new question's own. Those words do not make it a repeat;
    the same answer given to another question still does."""
    from backends.answers import repeats_earlier

    earlier = ["answer to: trip message 2: river glacier cedar stone falcon island copper"]
    question = "trip message 8: lantern river glacier cedar stone falcon violet island copper"
    assert not repeats_earlier("answer to: " + question, earlier, question)
    teeth = (
        "I'm glad you asked about your teeth. Please call our dental line to book a check-up "
        "and remember to floss every day."
    )
    assert repeats_earlier(teeth, [teeth.replace("Please", "Do")], "Which city is my sibling in?")
