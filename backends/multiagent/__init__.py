"""Multi-agent assistant (SPEC section 1, MA1–MA11): a coordinator runs expert agents through
phases; sessions in three layers; tickets with a TTL; a live feed; a semantic memory.

The public surface — what the desktop and the CLI use: :class:`MultiAgentService` (built by
:func:`get_service`) and the value types it returns. The stores it runs on are opened by
:mod:`backends.services` from the storage layer (:mod:`backends.stores`).
"""

from backends.multiagent.coordinator import (
    RETRY,
    SESSION_FINISHED,
    VERIFICATION,
    VERIFYING,
    RunState,
    SessionBusyError,
    assemble_result,
)
from backends.multiagent.data import DATA
from backends.multiagent.service import MultiAgentService, get_service
from backends.multiagent.tickets import LiveTicket
from backends.multiagent.verify import LABELS, status_of
from backends.stores.sessions import PHASES, Session
from backends.stores.vectors import CollectionStatus, MemoryHit

#: the name the tab shows a semantic-memory hit by (the storage layer's one hit type)
Hit = MemoryHit

__all__ = [
    "DATA",
    "LABELS",
    "PHASES",
    "RETRY",
    "SESSION_FINISHED",
    "VERIFICATION",
    "VERIFYING",
    "CollectionStatus",
    "Hit",
    "LiveTicket",
    "MemoryHit",
    "MultiAgentService",
    "RunState",
    "Session",
    "SessionBusyError",
    "assemble_result",
    "get_service",
    "status_of",
]
