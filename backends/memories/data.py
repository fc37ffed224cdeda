"""The memories assistant's data, declared once (a storage map row): the facts the user asked
to be remembered, in their store's file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from backends import stores
from backends.i18n import N_
from backends.memories.service import STORE_FILE
from backends.stores.description import HISTORY, Datum, Measurement, Running

if TYPE_CHECKING:
    from backends.config import Config


def _store(config: Config) -> Mapping[str, object]:
    return {"path": config.path(STORE_FILE)}


def _memories(config: Config, process: Running | None) -> Measurement:
    return stores.measure("memories", config, path=config.path(STORE_FILE))


DATA = (
    Datum(
        N_("memories"),
        N_("memories"),
        HISTORY,
        N_("memories"),
        N_("lost: the facts the user asked to be remembered (back up this file)"),
        _memories,
        role="memories",
        context=_store,
    ),
)
