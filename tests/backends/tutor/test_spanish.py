"""Spanish in the tutor (issue 27): keyword search folds accents and stems Spanish words, and
a Spanish question is answered with its framing in Spanish and its quotes marked English."""

from __future__ import annotations

from pathlib import Path

from backends.models.chat import RetrievalOnlyChat
from backends.tutor.keyword import fts_query, spanish_stems
from backends.tutor.service import NOT_COVERED, TutorService
from tests.backends.tutor.conftest import TutorFactory, write_note

NOTE = (
    "La anafiláxia es una reacción alérgica grave. Los anticoagulantes orales se controlan "
    "con análisis periódicos de la coagulación en la consulta de enfermería."
)


def test_spanish_words_are_searched_by_their_stems_as_prefixes() -> None:
    assert spanish_stems("¿Cómo se controlan los anticoagulantes?") == [
        "control",
        "anticoagul",
    ]
    query = fts_query("controlan anticoagulantes", "controlan anticoagulantes")
    assert '"control"*' in query and '"anticoagul"*' in query
    assert '"los"' not in fts_query("los anticoagulantes", "los anticoagulantes")
    assert fts_query("What is warfarin?") == '"warfarin"'  # English: as before


def test_a_spanish_note_is_found_without_accents_and_by_another_form(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    """ "anafilaxia" finds "anafiláxia" (accents folded in the index); "controla" and
    "anticoagulante" find "controlan" and "anticoagulantes" (Snowball stems as prefixes)."""
    tutor: TutorService = make_tutor(RetrievalOnlyChat())
    tutor.import_path(write_note(tmp_path / "es", "notas.md", "Notas de sala", NOTE), "ana")
    scopes = ["user:ana"]
    for question in ("¿Qué es la anafilaxia?", "¿Cómo se controla un anticoagulante?"):
        hits = tutor.keyword.search(question, scopes, 5, spanish=question)
        assert hits, question
        assert hits[0].chunk_id.startswith("doc-")
    # without the stems, another form is not found ("controla" is not "controlan")
    assert not tutor.keyword.search("controla", scopes, 5)
    assert tutor.keyword.search("controla", scopes, 5, spanish="controla")


def test_a_spanish_question_is_framed_in_spanish_and_quotes_marked_english(
    make_tutor: TutorFactory,
) -> None:
    tutor: TutorService = make_tutor(RetrievalOnlyChat())
    turn = tutor.ask("¿Qué análisis de sangre controla la warfarina?", "ana")
    g = turn.grounding
    assert g is not None and g.language == "es"
    assert g.mode != NOT_COVERED and "citadas en inglés" in g.heading
    refused = tutor.ask("¿Cómo se trata la apendicitis aguda?", "ana")
    assert refused.grounding is not None and refused.grounding.mode == NOT_COVERED
    assert refused.answer.startswith("Tus notas no tratan")


def test_a_spanish_subject_the_notes_do_not_know_is_not_answered_about_another(
    make_tutor: TutorFactory, tmp_path: Path
) -> None:
    """ "¿Qué controles necesita el litio?" was answered with a warfarin sentence holding
    "control" ("litio" has no translation): without a measured similarity, an untranslated
    word in a question that names nothing the notes know leaves it not covered."""
    from tests.backends.tutor.conftest import make_small_kb

    kb = make_small_kb(tmp_path / "kb", ("warfarin", "inr", "thyroid-function-tests"))
    tutor: TutorService = make_tutor(RetrievalOnlyChat(), kb_dir=kb)
    turn = tutor.ask("¿Qué controles necesita el litio?", "ana")
    assert turn.grounding is not None and turn.grounding.mode == NOT_COVERED
    assert "warfarin" not in turn.answer.casefold()
