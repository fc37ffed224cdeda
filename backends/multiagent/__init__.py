"""Multi-agent assistant (SPEC section 1, MA1–MA11): a coordinator runs expert agents through
phases; sessions in three layers; tickets with a TTL; a live feed; a semantic memory.

The public surface — what the desktop and the CLI use: :class:`MultiAgentService` (built by
:func:`backends.multiagent.service.build` from what the composition layer hands it) and the
value types it returns. The stores it runs on come from the storage layer
(:mod:`backends.stores`), opened through the opener it is given.
"""

from backends.multiagent.coordinator import RunState, SessionBusyError
from backends.multiagent.data import DATA
from backends.multiagent.events import RETRY, SESSION_FINISHED, VERIFICATION, VERIFYING
from backends.multiagent.result import assemble_result
from backends.multiagent.service import MultiAgentService
from backends.multiagent.summaries import translate as summary_text
from backends.multiagent.tags import Tags
from backends.multiagent.tickets import LiveTicket
from backends.multiagent.verify import LABELS, session_summary, status_of
from backends.multiagent.words import limit_text, network_name
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
    "Tags",
    "assemble_result",
    "limit_text",
    "network_name",
    "session_summary",
    "status_of",
    "summary_text",
]
