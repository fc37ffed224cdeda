"""Issue 25, item 10: an import is bounded before it is read — zip bombs, oversized files,
archives inside archives — and refused with a message, never a MemoryError."""

from __future__ import annotations

import tracemalloc
import zipfile
from pathlib import Path

import pytest

from backends.conversations import importers
from backends.conversations.importers import ImportFormatError

from .conftest import FIXTURES, MakeAgent

CHATGPT = FIXTURES / "chatgpt_conversations.json"
MB = 1024 * 1024


def _spaces_bomb(path: Path, megabytes: int) -> None:
    """A zip whose conversations.json is ``megabytes`` MB of spaces (~1000:1)."""
    chunk = b" " * MB
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open("conversations.json", "w", force_zip64=True) as member,
    ):
        for _ in range(megabytes):
            member.write(chunk)


def test_a_zip_bomb_is_refused_before_it_is_decompressed(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    agent = make_agent()
    bomb = tmp_path / "export.zip"
    _spaces_bomb(bomb, 300)  # the tester's was 1.5 GB from 1.5 MB; same ratio
    assert bomb.stat().st_size < 2 * MB
    tracemalloc.start()
    try:
        with pytest.raises(ImportFormatError, match="zip bomb"):
            importers.import_file(agent, bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MB, f"{peak // MB} MB allocated for a refused import"
    assert agent.conversations() == []


def test_a_member_beyond_the_import_limit_is_refused(
    make_agent: MakeAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = make_agent()
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        zf.write(CHATGPT, "conversations.json")
    monkeypatch.setattr(importers, "MAX_IMPORT_BYTES", CHATGPT.stat().st_size - 1)
    with pytest.raises(ImportFormatError, match="the most an import may hold"):
        importers.import_file(agent, archive)
    with pytest.raises(ImportFormatError, match="the most an import may hold"):
        importers.import_file(agent, CHATGPT)  # the same bound for a file read as it is
    monkeypatch.undo()
    assert len(importers.import_file(agent, archive).imported) == 2


def test_an_archive_inside_the_archive_is_refused(make_agent: MakeAgent, tmp_path: Path) -> None:
    inner = tmp_path / "inner.zip"
    with zipfile.ZipFile(inner, "w") as zf:
        zf.write(CHATGPT, "conversations.json")
    outer = tmp_path / "outer.zip"
    with zipfile.ZipFile(outer, "w") as zf:
        zf.write(inner, "conversations.json")  # e.g. a zip quine: it would never end
    with pytest.raises(ImportFormatError, match="archive inside the archive"):
        importers.import_file(make_agent(), outer)
