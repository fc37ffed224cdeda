"""The memory list's dates in the user's language (issue 27): a memory's "updated" time was
ISO (``2026-12-02 11:40``) whatever the language."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QDateTime, QLocale

from backends.memories import FoundMemory
from backends.stores.memories import Memory
from desktop import i18n as window_i18n
from desktop.tabs.memories.panel import MemoryPanel

#: 2026-12-02 10:40 UTC
UPDATED = 1_796_208_000.0


def memory(updated_at: float = UPDATED) -> FoundMemory:
    told = Memory("Lucía is my sister", updated_at, updated_at, "chat", 384, "minilm", True)
    return FoundMemory(told)


@pytest.fixture
def spanish() -> Iterator[None]:
    """The window's language set to Spanish (as at start-up), English again afterwards."""
    window_i18n.install("es")
    yield
    window_i18n.uninstall()


def test_a_memorys_date_is_written_as_spanish_writes_it(qapp: object, spanish: None) -> None:
    tip = MemoryPanel._item(memory()).toolTip()
    moment = QDateTime.fromSecsSinceEpoch(int(UPDATED))
    shown = QLocale(QLocale.Language.Spanish).toString(moment, QLocale.FormatType.ShortFormat)
    assert shown in tip, tip
    assert "2026-12-02" not in tip


def test_a_memorys_date_stays_as_before_in_english(qapp: object) -> None:
    tip = MemoryPanel._item(memory()).toolTip()
    assert time.strftime("%Y-%m-%d %H:%M", time.localtime(UPDATED)) in tip
