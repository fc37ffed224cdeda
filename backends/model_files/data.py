"""The chat models' data, declared once (a storage map row): the models folder in the data
dir. Copies take disk; links take none (the file stays where another app keeps it)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from backends.i18n import N_, _, number
from backends.models import local
from backends.stores.description import (
    HISTORY,
    NOT_CREATED_YET,
    Datum,
    Measurement,
    Place,
    Running,
    allocated,
)

if TYPE_CHECKING:
    from backends.config import Config


def _place(config: Config) -> Place:
    return Place(N_("GGUF files"), str(config.path(local.MODELS_DIR)))


def _measure(config: Config, process: Running | None) -> Measurement:
    folder = config.path(local.MODELS_DIR)
    if not folder.is_dir():
        return NOT_CREATED_YET
    files = links = size = 0
    for path in local.walk(folder):
        with contextlib.suppress(OSError):
            if path.is_symlink():
                links += 1
            else:
                files += 1
                size += allocated(path.stat())
    note = (
        _("{files} copied, {links} linked (a link takes no room here)").format(
            files=number(files), links=number(links)
        )
        if links
        else ""
    )
    return Measurement(files + links, size, note=note)


DATA = (
    Datum(
        N_("models"),
        N_("every assistant"),
        HISTORY,
        N_("model files"),
        N_(
            "the copies are gone: add them again from where they came from (links: the files stay "
            "where the other app keeps them); the bundled model ships with Custodia"
        ),
        _measure,
        place=_place,
    ),
)
