"""What the tutor shows as fact passes its own re-check (CT9, issue 27's held-out set).

On the English translations of the held-out Spanish set, "how long does CRP take to rise
after an infection" was answered with the quote "CRP is non-specific: it says that
inflammation is present but not where or why [1]." — which the support check, run again on
the shown answer, found unsupported by the very sentence it quotes: the quoted sentence's
"not" reaches no content word ("where", "why" are glue), so the sentence counted as negated
while the same sentence as evidence did not. A quote was shown without being checked.
"""

from __future__ import annotations

from pathlib import Path

from backends import grounding
from backends.grounding import Quote, Source, Vocabulary
from backends.models.chat import RetrievalOnlyChat
from backends.tutor.answer import EXTRACTIVE, _ground, shown
from backends.tutor.coverage import Judged
from backends.tutor.kb import shipped_kb_dir

CRP = "CRP is non-specific: it says that inflammation is present but not where or why."


def _notes() -> list[tuple[str, str]]:
    out = []
    for path in sorted((shipped_kb_dir() / "notes").glob("*.md")):
        text = path.read_text("utf-8")
        out.append((text.splitlines()[0].lstrip("# ").strip(), text))
    return out


def test_every_sentence_of_the_shipped_notes_is_supported_by_its_own_note() -> None:
    """A quote is a note's sentence: the check must find it in its note, whatever its
    negations reach (the CRP sentence failed: 'a negation differs' from itself)."""
    failing = []
    for title, text in _notes():
        source = [Source(1, title, text)]
        for sentence in grounding.split_sentences(text):
            checked = grounding.check_sentences(sentence, source)
            if checked and not all(c.supported for c in checked):
                failing.append(sentence)
    assert failing == []


def test_a_negation_reaching_no_content_word_is_the_same_on_both_sides() -> None:
    source = [Source(1, "C-reactive protein", CRP)]
    assert all(c.supported for c in grounding.check_sentences(CRP, source))
    # a negation that does reach a word still tells a sentence from its opposite
    said = [Source(1, "Anaphylaxis", "Antihistamines are not first-line treatment.")]
    flipped = grounding.check_sentences("Antihistamines are first-line treatment.", said)
    assert not flipped[0].supported
    added = [Source(1, "Anaphylaxis", "Antihistamines are first-line treatment.")]
    assert not grounding.check_sentences("Antihistamines are not first-line treatment.", added)[
        0
    ].supported
    # and a sentence with a negation reaching nothing is not supported by one whose
    # negation reaches what it says
    other = [Source(1, "C-reactive protein", "CRP does not say that inflammation is present.")]
    assert not grounding.check_sentences(CRP, other)[0].supported


def test_a_quote_that_fails_the_check_is_never_shown_as_fact() -> None:
    """The extractive answer is re-checked before it is shown: a quote its passage does not
    state (whatever put it there) is left out, the others stay."""
    source = Source(1, "C-reactive protein", "CRP is made by the liver. It rises within hours.")
    good = Quote(1, "CRP is made by the liver.", 1.0)
    bad = Quote(1, "CRP is made by the kidney.", 0.9)
    judged = Judged([source], Vocabulary.of([source.text]), 1.0, [good, bad], (good, bad), True)
    checked = _ground("", judged, "en", RetrievalOnlyChat(), stopped=False)
    assert checked.mode == EXTRACTIVE
    answer, cited = shown(checked, "en", {1: source.title})
    assert "liver" in answer and "kidney" not in answer and cited == (1,)
    for sentence in grounding.split_sentences(answer):
        text, _ = grounding.strip_citations(sentence)
        assert all(c.supported for c in grounding.check_sentences(text, [source]))


def test_the_crp_question_shows_only_sentences_that_pass_the_recheck(tmp_path: Path) -> None:
    """The held-out set's case, as the tutor ships (MiniLM, extractive): every sentence shown
    re-checks as supported by the passage it cites."""
    from backends.models.embedders import MiniLMEmbedder
    from bench.bench_answers import _tutor, shown_unsupported

    tutor = _tutor(tmp_path, MiniLMEmbedder(), RetrievalOnlyChat())
    try:
        turn = tutor.ask("how long does CRP take to rise after an infection", "bench")
        assert turn.grounding is not None
        assert shown_unsupported(turn) == 0, turn.answer
    finally:
        tutor.close()
