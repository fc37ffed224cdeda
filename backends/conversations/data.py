"""The conversations assistant's data, declared once (the storage map's rows): the JSON files
(the source of truth), their SQLite index and their vectors."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from backends import stores
from backends.conversations.files import SUFFIX, is_valid_id
from backends.conversations.service import FOLDER, INDEX_FILE, ConversationAgent
from backends.i18n import N_, ngettext, number
from backends.stores.description import (
    HISTORY,
    NOT_CREATED_YET,
    OK,
    RECOMPUTABLE,
    Datum,
    Measurement,
    Place,
    Running,
    scalar,
    sqlite_count,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from backends.config import Config
    from backends.stores.vectors import VectorIndex

ASSISTANT = N_("conversations")


def _files_place(config: Config) -> Place:
    return Place(N_("JSON files (one per conversation)"), str(config.path(FOLDER)))


def _files(config: Config, process: Running | None) -> Measurement:
    folder = config.path(FOLDER)
    if not folder.exists():
        return NOT_CREATED_YET
    count = size = 0
    with os.scandir(folder) as entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(SUFFIX) or not is_valid_id(name[: -len(SUFFIX)]):
                continue
            if entry.is_file(follow_symlinks=False):
                count += 1
                size += entry.stat(follow_symlinks=False).st_size
    return Measurement(count, size)


def _index_place(config: Config) -> Place:
    return Place("SQLite (WAL)", str(config.path(INDEX_FILE)))


def _index(config: Config, process: Running | None) -> Measurement:
    path = config.path(INDEX_FILE)
    measured = sqlite_count(path, "SELECT count(*) FROM conversations")
    if measured.health != OK:
        return measured
    bad = int(scalar(path, "SELECT count(*) FROM conversations WHERE error IS NOT NULL") or 0)
    if not bad:
        return measured
    note = ngettext(
        "{count} unreadable now (no key, damaged)", "{count} unreadable now (no key, damaged)", bad
    ).format(count=number(bad))
    return replace(measured, note=note)


def _vectors(config: Config, process: Running | None) -> Measurement:
    running: Callable[[], VectorIndex] | None = None
    if process is not None:  # built only when there is something to count
        service = process
        running = lambda: service.get("conversations", ConversationAgent).vectors()  # noqa: E731
    measured = stores.measure("vectors", config, running=running)
    if measured.size_bytes is None:  # a server's own disk
        return measured
    return replace(measured, note=N_("size: the whole Chroma folder (shared with the tutor)"))


DATA = (
    Datum(
        N_("conversations"),
        ASSISTANT,
        HISTORY,
        N_("files"),
        N_("lost: they are the source of truth (back up this folder)"),
        _files,
        place=_files_place,
    ),
    Datum(
        N_("conversation index"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("rows"),
        N_("rebuilt from the JSON files at the next start"),
        _index,
        place=_index_place,
    ),
    Datum(
        N_("conversation vectors"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("vectors"),
        N_("rebuilt from the JSON files (Rebuild index)"),
        _vectors,
        role="vectors",
    ),
)
