"""What the tutor tells after ``custodia forget`` destroyed a person's key: their own imported
notes, which the key does not reach (:func:`backends.tutor.forgetting.remaining_notes`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import assistants
from backends.config import Config
from backends.services import Services
from backends.tutor.forgetting import remaining_notes
from backends.tutor.kb import DB_FILE
from backends.tutor.service import TutorService
from tests.backends.tutor.conftest import write_note


@pytest.fixture
def context(config: Config) -> Services:
    return Services(config)


def test_a_person_with_notes_is_told_how_many_remain_and_how_to_remove_them(
    tutor: TutorService, context: Services, tmp_path: Path
) -> None:
    folder = tmp_path / "mine"
    write_note(folder, "a.md", "Rota", "Zebrafish rota for the ward.")
    write_note(folder, "b.md", "Shifts", "Night shifts start at eight.")
    tutor.import_path(folder, "ana maría")
    (line,) = remaining_notes(context, "ana maría")
    assert line == (
        "note: ana maría's own imported notes remain in the tutor (2 documents, scope "
        "user:ana maría, with their file paths); remove them with "
        "`custodia kb forget-user 'ana maría'`"
    )
    tutor.forget_user("ana maría")
    assert remaining_notes(context, "ana maría") == []


def test_nothing_is_told_of_a_person_without_notes_or_a_name_that_names_no_scope(
    tutor: TutorService, context: Services
) -> None:
    assert remaining_notes(context, "bob") == []  # a knowledge base without his notes
    assert remaining_notes(context, "   ") == []
    assert remaining_notes(context, "a\x00b") == []


def test_no_knowledge_base_yet_is_nothing_to_tell_and_nothing_is_created(
    context: Services, config: Config
) -> None:
    assert remaining_notes(context, "ana") == []
    assert not config.path(DB_FILE).exists()


def test_an_unreadable_knowledge_base_is_said_with_the_command_to_run(
    context: Services, config: Config
) -> None:
    config.path(DB_FILE).write_bytes(b"not a database, not at all" * 100)
    (line,) = remaining_notes(context, "ana")
    assert line == (
        "note: the tutor's knowledge base could not be read; if ana imported notes of their "
        "own, remove them with `custodia kb forget-user ana`"
    )


def test_it_is_the_tutors_declared_forget_hook() -> None:
    assert assistants.get("tutor").forget_hook() is remaining_notes
