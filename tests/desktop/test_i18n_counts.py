"""Counts in the Spanish window (issue 27). PySide6's lupdate files ``translate(context,
"%n …", "", n)`` as a plain message when ``n`` is a name and drops it when ``n`` is a call
(``len(…)``): the conversations tab showed "3 message(s) found", "Imported 2
conversation(s)…" in Spanish, and the catalogue check could not see it (it extracts with
lupdate too). The tab now says one and many in two sentences; no call lupdate cannot file
as a plural is left in the desktop."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.conversations.importers import ImportResult
from desktop import i18n
from desktop.tabs.conversations.transfer import import_note
from tests.i18n_words import compile_catalogues, english_words

DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def _plural_calls_lupdate_misreads() -> list[str]:
    """``translate(…, n)`` / ``QCoreApplication.translate(…, n)`` whose count is not a literal
    (``self.tr(text, "", n)`` is read right, whatever ``n`` is)."""
    found = []
    for path in sorted(DESKTOP.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name != "translate" or not node.args or not isinstance(node.args[0], ast.Constant):
                continue
            count = node.args[3] if len(node.args) > 3 else None
            count = count or next((k.value for k in node.keywords if k.arg == "n"), None)
            if count is not None and not isinstance(count, ast.Constant):
                found.append(f"{path.relative_to(DESKTOP.parent)}:{node.lineno}")
    return found


def test_no_count_is_passed_where_lupdate_cannot_file_it_as_a_plural() -> None:
    assert _plural_calls_lupdate_misreads() == []


@pytest.fixture
def spanish(qapp: object) -> Iterator[None]:
    compile_catalogues()
    i18n.install("es")
    yield
    i18n.uninstall()


@pytest.mark.parametrize("n", [1, 2])
def test_an_import_says_what_it_did_in_spanish(spanish: None, n: int) -> None:
    result = ImportResult(
        imported=[(f"c{i}", f"Viaje {i} (importada)") for i in range(n)],
        renamed=1,
        duplicates=["Viaje a Lisboa", "Cena", "Regalo", "Otra"],
        failed=["conversación 7: sin mensajes"],
    )
    note = import_note(result)
    assert english_words(note) == [], note
    assert ("Se importó 1 conversación" if n == 1 else f"Se importaron {n} conversaciones") in note
    assert "y 1 más" in note


def test_an_import_counts_in_english_too() -> None:
    assert import_note(ImportResult(imported=[("a", "A (imported)")])).startswith(
        "Imported 1 conversation,"
    )
    assert import_note(ImportResult()).startswith("Imported 0 conversations,")
