"""The tutor's own errors in the user's language (issue 27): an empty question, a k out of
range, notes that cannot be read, removed or searched — in Spanish they were English
("Type a question first…", "cannot remove documents", "keyword search failed"). English
stays as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from backends import failures, i18n
from backends.config import Config
from backends.services import Services
from backends.tutor.kb import KnowledgeBase
from backends.tutor.keyword import KeywordIndex
from backends.tutor.service import TutorService
from tests.i18n_words import compile_catalogues, english_words


@pytest.fixture
def tutor(tmp_path: Path) -> Iterator[TutorService]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    services = Services(Config(home=home, embedder="hashing", chat_model="scripted").validated())
    try:
        yield services.get("tutor", TutorService)
    finally:
        services.close()


@pytest.fixture
def spanish() -> Iterator[None]:
    compile_catalogues()
    i18n.install("es")
    try:
        yield
    finally:
        i18n.install("en")


def _said(action: Callable[[], object]) -> str:
    with pytest.raises(Exception) as info:
        action()
    return str(info.value)


def _closed_kb(tutor: TutorService) -> KnowledgeBase:
    kb = tutor.index.kb
    kb.conn.close()  # every statement now fails as a broken store's would
    return kb


def test_an_empty_question_and_a_bad_k_in_spanish(tutor: TutorService, spanish: None) -> None:
    empty = _said(lambda: tutor.retrieve("   ", "ana"))
    assert "Escribe primero una pregunta" in empty and not english_words(empty), empty
    bad_k = _said(lambda: tutor.retrieve("¿Qué es la gota?", "ana", k=0))
    assert "número entero de 1 a" in bad_k, bad_k


def test_notes_that_cannot_be_read_removed_or_searched_in_spanish(
    tutor: TutorService, spanish: None
) -> None:
    kb = _closed_kb(tutor)
    for action, words in (
        (lambda: kb.has_document("kb/gout"), "no se pueden leer los apuntes"),
        (lambda: kb.remove_documents(["kb/gout"]), "no se pueden quitar los apuntes"),
        (lambda: KeywordIndex(kb).search("gota", ["kb"], 5), "falló la búsqueda por palabras"),
    ):
        said = _said(action)
        shown = failures.without_details(said).replace(str(kb.path), " ")
        assert words in said and not english_words(shown), said


def test_english_stays(tutor: TutorService) -> None:
    assert "Type a question first" in _said(lambda: tutor.retrieve("", "ana"))
    kb = _closed_kb(tutor)
    assert "cannot remove the notes" in _said(lambda: kb.remove_documents(["kb/gout"]))
