"""The storage map: the seed's table — which engine holds which datum — made live.

One :class:`StorageRow` per datum kind (sessions, tickets, feed, semantic memory, memories,
conversations, conversation index, conversation vectors, knowledge base, knowledge base
vectors, graph, audit log, checkpoints, pseudonym keys): the engine holding it *now* (from the
configuration), its durability class from the seed's rule, how many items it holds and how
much disk it takes (counted in the stores themselves, not estimated), its health, and what
happens if it is lost.

The seed's rule (SPEC, "if this datum is lost, what happens?"):

============== ==================================== ==========================================
class          answer                               engines
============== ==================================== ==========================================
recomputable   "it is recomputed"                   a cache (Redis, memory), a derived index
history        "I lose history"                     SQLite in WAL mode, JSON files
provable       "I cannot prove nobody touched it"   the hash-chained audit log (+ checkpoints)
============== ==================================== ==========================================

Reading the map never writes user data: embedded SQLite files are opened read-only (or not at
all when they do not exist yet); servers are asked with the configured timeouts; stores that
live inside an assistant's service (qdrant-edge, Chroma) are read through that service, so the
map never fights the window for a folder lock. Each row is one step of ``progress``
(cancellable); a store that cannot be read is a row with a health message, never an exception.

The map knows no datum and no engine: each assistant declares its data once
(:class:`~backends.stores.description.Datum`, in ``backends/<assistant>/data.py``) and each store
describes and measures itself (:mod:`backends.stores.description`); this module is the loop over
the declarations, in :data:`KINDS` order, and the table.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from dataclasses import asdict, dataclass, replace

from backends import assistants, stores
from backends.config import Config
from backends.errors import CancelledError, CustodiaEnvironmentError
from backends.failures import failed, with_details
from backends.i18n import N_, _, named, number
from backends.progress import Progress
from backends.stores.description import (
    DURABILITY,
    HISTORY,
    NOT_CREATED,
    OK,
    PROVABLE,
    RECOMPUTABLE,
    Datum,
    Place,
    Running,
    dir_size,
    file_size,
)

log = logging.getLogger(__name__)

__all__ = [
    "DURABILITY",
    "HISTORY",
    "NOT_AVAILABLE",
    "NOT_CREATED",
    "OK",
    "PROVABLE",
    "RECOMPUTABLE",
    "StorageRow",
    "dir_size",
    "file_size",
    "format_table",
    "healthy",
    "storage_map",
    "to_json",
]

NOT_AVAILABLE = N_("assistant not available yet")


def declared_data() -> tuple[Datum, ...]:
    """Every datum, declared by its owner, in the order the map shows them: the loop over the
    registry of assistants and shared parts (:mod:`backends.assistants`)."""
    return tuple(datum for declared in assistants.declarations() for datum in declared.datums())


def declared_kinds() -> tuple[str, ...]:
    """The datum kinds, in the order the map shows them."""
    return tuple(datum.kind for datum in declared_data())


def __getattr__(name: str) -> tuple[object, ...]:
    """``DATA`` and ``KINDS``, as the registry declares them now (a registered assistant's
    rows included)."""
    if name == "DATA":
        return declared_data()
    if name == "KINDS":
        return declared_kinds()
    raise AttributeError(name)


@dataclass(frozen=True)
class StorageRow:
    """One datum kind: where it lives now, how much of it there is, what its loss means."""

    kind: str
    assistant: str
    engine: str
    where: str
    durability: str
    items: int | None  # None: could not be counted (see ``health``)
    unit: str
    size_bytes: int | None  # None: not measurable from here (a server's own disk)
    health: str  # "ok", "not created yet", or why it cannot be used
    if_lost: str
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.health in (OK, NOT_CREATED)

    def items_text(self) -> str:
        """``1 memory``, ``2,048 chunks``; in another language the unit's word and the count
        as it writes them (``recuerdos: 1``), as the window shows them."""
        if self.items is None:
            return "?"
        count = number(self.items)
        if _(self.unit) != self.unit:
            return _("{unit}: {count}").format(unit=_(self.unit), count=count)
        return f"{count} {self.unit if self.items != 1 else singular(self.unit)}"

    def engine_text(self) -> str:
        """The engine in the installed language (``engine`` itself stays English: ``--json``)."""
        return engine_text(self.engine)

    def size_text(self) -> str:
        return "—" if self.size_bytes is None else human_size(self.size_bytes)

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["ok"] = self.ok
        return out


def singular(unit: str) -> str:
    if unit.endswith("ies"):
        return unit[:-3] + "y"
    return unit[:-1] if unit.endswith("s") else unit


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{number(value)} {unit}" if unit == "B" else f"{number(value, 1)} {unit}"
        value /= 1024
    return f"{number(value, 1)} GB"  # pragma: no cover


#: words of composed engine names (``SQLite (WAL) + in-process L2``), each translated alone
ENGINE_WORDS = (N_("in-process L2"),)


def engine_text(engine: str) -> str:
    """``engine`` in the installed language: as a whole when the catalogue has it, else each
    part between `` + `` (the sessions' mirror and their L2 are two engines), a part's name
    before its brackets when the brackets say what a server told ("Bolt server (Neo4j …)")."""
    whole = _(engine)
    if whole != engine:
        return whole
    return " + ".join(named(part) for part in re.split(r" \+ ", engine))


# -- the map -----------------------------------------------------------------------------------


def _error_text(err: BaseException) -> str:
    if isinstance(err, CustodiaEnvironmentError):
        return str(err)
    if isinstance(err, sqlite3.Error | OSError):
        return failed(_("cannot read"), err)
    return with_details(_("cannot read"), f"{type(err).__name__}: {err}")


def _place(datum: Datum, config: Config) -> Place:
    """Where ``datum`` lives now: its owner's word, else its store's own description."""
    if datum.place is not None:
        return datum.place(config)
    described = stores.describe(datum.role, config, **datum.context(config))
    return Place(described.engine, described.location)


def _row(datum: Datum, config: Config, services: Running | None) -> StorageRow:
    """``datum``, measured; a store that cannot be measured is a health message."""
    place = _place(datum, config)
    base = StorageRow(
        datum.kind,
        datum.assistant,
        place.engine,
        place.location,
        datum.durability,
        None,
        datum.unit,
        None,
        OK,
        # an engine's addition is in the user's language already: the whole too, then
        _(datum.if_lost) + place.if_lost if place.if_lost else datum.if_lost,
        datum.note,
    )
    try:
        measured = datum.measure(config, services)
    except CancelledError:
        raise
    except ImportError:  # its assistant's optional parts are not installed
        return replace(base, health=NOT_AVAILABLE)
    except Exception as err:
        if not isinstance(err, CustodiaEnvironmentError | sqlite3.Error | OSError):
            log.exception(_("storage map: measuring %s failed"), datum.kind)
        return replace(base, health=_error_text(err))
    return replace(
        base,
        engine=measured.engine or base.engine,
        items=measured.items,
        size_bytes=measured.size_bytes,
        health=measured.health,
        note=measured.note or base.note,
    )


def storage_map(
    config: Config, services: Running | None = None, progress: Progress | None = None
) -> list[StorageRow]:
    """Every datum kind, measured now. ``services``: the process's own (shared) services."""
    progress = progress or Progress()
    data = declared_data()
    progress.start(len(data), _("measuring the stores"))
    rows: list[StorageRow] = []
    for datum in data:
        progress.check()
        rows.append(_row(datum, config, services))
        progress.advance(1, datum.kind)
    return rows


def healthy(rows: list[StorageRow]) -> bool:
    return all(r.ok for r in rows)


# -- output ------------------------------------------------------------------------------------


def format_table(rows: list[StorageRow]) -> str:
    """The map as a fixed-width text table (``custodia storage``, ``custodia doctor``)."""
    header = (_("datum"), _("engine"), _("class"), _("items"), _("size"), _("health"), _("if lost"))
    table = [header] + [
        (
            _(r.kind),
            r.engine_text(),
            _(r.durability),
            r.items_text(),
            r.size_text(),
            _short(_(r.health)),
            _(r.if_lost),
        )
        for r in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header) - 1)]
    lines = [
        "  ".join([*(c.ljust(w) for c, w in zip(line, widths, strict=False)), line[-1]]).rstrip()
        for line in table
    ]
    lines.insert(1, "-" * min(160, max(len(x) for x in lines)))
    return "\n".join(lines)


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def to_json(config: Config, rows: list[StorageRow]) -> str:
    return json.dumps(
        {
            "profile": config.profile,
            "home": str(config.home),
            "ok": healthy(rows),
            "rows": [r.to_dict() for r in rows],
        },
        indent=2,
    )
