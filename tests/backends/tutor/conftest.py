"""Fixtures of the tutor's tests: a small knowledge base (a handful of shipped notes), a tutor
on the hashing embedder and the scripted chat model, with a real SQLite audit log."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.audit.service import AuditService
from backends.config import Config
from backends.models.chat import ChatModel, ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.tutor.kb import shipped_kb_dir
from backends.tutor.service import TutorService

#: the shipped notes the small knowledge base holds
SMALL_NOTES = ("warfarin", "inr", "metformin", "anaphylaxis", "adrenaline", "asthma")


def make_small_kb(root: Path, notes: tuple[str, ...] = SMALL_NOTES) -> Path:
    kb = root / "kb"
    (kb / "notes").mkdir(parents=True)
    shipped = shipped_kb_dir()
    shutil.copy(shipped / "terms.txt", kb / "terms.txt")
    for name in notes:
        shutil.copy(shipped / "notes" / f"{name}.md", kb / "notes" / f"{name}.md")
    return kb


@pytest.fixture
def small_kb(tmp_path: Path) -> Path:
    return make_small_kb(tmp_path)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


@pytest.fixture
def audit(config: Config) -> Iterator[AuditService]:
    service = AuditService.open(config)
    yield service
    service.close()


TutorFactory = Callable[..., TutorService]


@pytest.fixture
def make_tutor(config: Config, audit: AuditService, small_kb: Path) -> Iterator[TutorFactory]:
    made: list[TutorService] = []

    def make(chat: ChatModel | None = None, **kwargs: Any) -> TutorService:
        kwargs.setdefault("kb_dir", small_kb)
        tutor = TutorService(
            config,
            embedder=HashingEmbedder(384),
            chat=chat or ScriptedChat(),
            audit=audit,
            **kwargs,
        )
        made.append(tutor)
        return tutor

    yield make
    for tutor in made:
        tutor.close()


@pytest.fixture
def tutor(make_tutor: TutorFactory) -> TutorService:
    service = make_tutor()
    service.prepare()
    return service


def write_note(folder: Path, name: str, title: str, *paragraphs: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path
