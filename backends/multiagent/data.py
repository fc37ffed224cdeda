"""The multi-agent assistant's data, declared once (the storage map's rows): its sessions (the
SQLite mirror and the L2), tickets, feed and semantic memory, measured in their stores."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from backends import stores
from backends.errors import CustodiaEnvironmentError
from backends.i18n import N_, _, number
from backends.multiagent import tickets
from backends.multiagent.service import SESSIONS_FILE, MultiAgentService
from backends.stores.description import (
    HISTORY,
    RECOMPUTABLE,
    Datum,
    Measurement,
    Place,
    Running,
)
from backends.stores.sessions import l2_prefix

if TYPE_CHECKING:
    from backends.config import Config
    from backends.stores.ttl import TTLStore
    from backends.stores.vectors import SemanticMemory

ASSISTANT = N_("multi-agent")


def _mirror(config: Config) -> Mapping[str, object]:
    return {"path": config.path(SESSIONS_FILE)}


def _sessions_place(config: Config) -> Place:
    mirror = stores.describe("sessions", config, **_mirror(config))
    l2 = stores.describe("ttl", config)
    kept = " " + _("({product} L2 keeps the last 24 h and repairs it at the next start)").format(
        product=l2.product
    )
    return Place(f"{mirror.engine} + {l2.product} L2", mirror.location, kept if l2.shared else "")


def _sessions(config: Config, process: Running | None) -> Measurement:
    measured = stores.measure("sessions", config, path=config.path(SESSIONS_FILE))
    l2 = stores.describe("ttl", config)
    if not l2.shared:  # an in-process L2 holds nothing another process could count
        return measured
    try:
        copies = stores.measure("ttl", config, prefix=l2_prefix())
    except CustodiaEnvironmentError as err:
        return replace(measured, health=f"L2: {err}")
    note = _("{count} in {product} L2 ({location})").format(
        count=number(copies.items or 0), product=l2.product, location=l2.location
    )
    return replace(measured, note=note)


def _tickets(config: Config, process: Running | None) -> Measurement:
    running: Callable[[], TTLStore] | None = None
    if process is not None and process.is_built("multiagent"):
        service = process.get("multiagent", MultiAgentService)
        running = lambda: service.l2  # noqa: E731
    measured = stores.measure("ttl", config, running=running, prefix=tickets.key_prefix())
    if running is None and not stores.describe("ttl", config).shared:
        return replace(measured, note=N_("only while a task runs in this process"))
    return measured


def _feed(config: Config, process: Running | None) -> Measurement:
    path = config.path(SESSIONS_FILE)
    events = stores.measure("sessions", config, path=path, count="events")
    bus = stores.measure("bus", config)  # the bus holds none; a server must answer
    return replace(bus, items=events.items, note="")


def _semantic_memory(config: Config, process: Running | None) -> Measurement:
    running: Callable[[], SemanticMemory] | None = None
    if process is not None:  # built only when there is something to count
        service = process
        running = lambda: service.get("multiagent", MultiAgentService).memory()  # noqa: E731
    return stores.measure("semantic", config, running=running)


DATA = (
    Datum(
        N_("sessions"),
        ASSISTANT,
        HISTORY,
        N_("sessions"),
        N_("history lost: the SQLite mirror is the durable copy"),
        _sessions,
        role="sessions",
        context=_mirror,
        place=_sessions_place,
    ),
    Datum(
        N_("tickets"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("tickets"),
        N_("nothing durable: a ticket is a 30-minute hand-off; the session records the work"),
        _tickets,
        role="ttl",
    ),
    Datum(
        N_("feed"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("events"),
        N_("nothing: every event is also kept in its session"),
        _feed,
        role="bus",
        note=N_("events kept in sessions; the bus itself stores none"),
    ),
    Datum(
        N_("semantic memory"),
        ASSISTANT,
        RECOMPUTABLE,
        N_("points"),
        N_("the experts stop recalling past results; the results stay in their sessions"),
        _semantic_memory,
        role="semantic",
    ),
)
