"""The live feed of MA9 on the event bus role (:mod:`backends.stores.bus`): a session's events
published on ``<namespace>:feed:<session>``, fire-and-forget like Redis pub/sub (the session
keeps its own event log); a failed publish marks the feed degraded, never raises. And the
kinds of those events, which the tab and the CLI tell apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backends.errors import StoreUnavailableError
from backends.multiagent.health import LayerState
from backends.stores.bus import EventBus, Subscription


class Feed:
    """The live feed of MA9: ``emit(session_id, event)`` on ``<namespace>:feed:<session>``.

    :meth:`emit` never raises (the session keeps its own copy of every event); a failed
    publish marks the feed degraded.
    """

    def __init__(self, bus: EventBus, *, namespace: str = "custodia") -> None:
        self.bus = bus
        self._prefix = f"{namespace}:feed:"
        self.state = LayerState(f"live feed ({bus.kind})")

    def channel(self, session_id: str) -> str:
        return self._prefix + session_id

    def emit(self, session_id: str, event: Mapping[str, Any]) -> bool:
        if not self.state.usable():
            return False
        try:
            self.bus.publish(self.channel(session_id), event)
        except StoreUnavailableError as err:
            self.state.fail(err)
            return False
        self.state.recover()
        return True

    def subscribe(self, session_id: str) -> Subscription:
        """Raises :class:`StoreUnavailableError` when the bus cannot be reached."""
        return self.bus.subscribe(self.channel(session_id))

    def health(self) -> str:
        return self.state.status


#: the kinds of a run's events (``event["kind"]``), kept in the session and on the feed
SESSION_STARTED = "session_started"
PHASE = "phase"
RETRIEVED = "retrieved"
EXPERT_STARTED = "expert_started"
EXPERT_RESULT = "expert_result"
TICKET = "ticket"
WARNING = "warning"
SESSION_FINISHED = "session_finished"  # last event of a run, whatever the outcome
VERIFYING = "verifying"  # a step's code goes to the sandbox
VERIFICATION = "verification"  # what the sandbox found (``verification``: the attempt)
RETRY = "retry"  # a step that failed its check is done again with the failure
