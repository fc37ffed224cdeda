"""``custodia ask tutor`` frames its answer in the question's language (issue 27)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import cli, i18n
from tests.i18n_words import compile_catalogues


@pytest.fixture
def home(tmp_path: Path, small_kb: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    compile_catalogues()
    for key in list(os.environ):
        if key.startswith("CUSTODIA_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "retrieval-only")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "en")
    monkeypatch.setattr("backends.tutor.service.shipped_kb_dir", lambda: small_kb)
    yield tmp_path / "home"
    i18n.install("en")


def test_a_spanish_question_gets_a_spanish_frame_in_an_english_command(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tester's turn: a Spanish heading over English "Sources:", "found by:", "For
    study…" — the frame now follows the question, as the heading did."""
    question = "¿Qué prueba controla la warfarina?"
    assert cli.main(["ask", "tutor", question, "--user", "ana"]) == 0
    out, err = capsys.readouterr()
    assert "Fuentes:" in out and "Sources:" not in out
    assert "hallado por: " in out and "found by: " not in out
    assert "not for clinical decisions" not in err and "Registro de auditoría" in err
    assert i18n.current() == "en"  # the command's own language is back
    assert cli.main(["ask", "tutor", "Which test monitors warfarin?", "--user", "ana"]) == 0
    out, err = capsys.readouterr()
    assert "Sources:" in out and "found by: " in out and "not for clinical decisions" in err


def test_why_the_models_answer_was_not_shown_is_translated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The reasons stay English in the turn (``--json``) and are translated where shown."""
    import gettext

    from backends.tutor import reason_text as _reason_text

    spanish = {
        "{bad} of {count} sentences not found in the passages": (
            "{bad} de {count} frases no están en los pasajes"
        ),
        "the model gave no answer": "el modelo no dio ninguna respuesta",
    }

    class Stub(gettext.NullTranslations):
        def gettext(self, message: str) -> str:
            return spanish.get(message, message)

    monkeypatch.setattr(i18n, "_translation", Stub())
    assert _reason_text("2 of 3 sentences not found in the passages") == (
        "2 de 3 frases no están en los pasajes"
    )
    assert _reason_text("the model gave no answer") == "el modelo no dio ninguna respuesta"
    assert _reason_text("") == ""
