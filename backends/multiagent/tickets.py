"""Tickets (MA8): work items handed between experts, kept only in the TTL store.

No durable mirror, by design: a ticket is a hand-off, the durable record of the work is the
session. Redis ``SET … EX`` on the server profile, the in-process TTL store embedded. The
board never raises because the store failed: it logs, reports the layer degraded, goes on.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import asdict, dataclass, replace

from backends.errors import StoreUnavailableError
from backends.i18n import _
from backends.multiagent.health import LayerState
from backends.stores.ttl import TTLStore

log = logging.getLogger(__name__)

#: how long a ticket lives unless touched again, in seconds
TICKET_TTL = 1800.0
STATUSES = ("open", "working", "review", "closed")


@dataclass(frozen=True)
class Ticket:
    ticket_id: str
    session_id: str
    step: int
    title: str
    expert: str  # who holds it now
    from_expert: str  # who handed it over
    status: str = "open"
    created_at: float = 0.0

    @classmethod
    def new(cls, session_id: str, step: int, title: str, expert: str, from_expert: str) -> Ticket:
        return cls(
            ticket_id=uuid.uuid4().hex[:12],
            session_id=session_id,
            step=step,
            title=title,
            expert=expert,
            from_expert=from_expert,
            created_at=time.time(),
        )

    def handed(self, to: str, status: str) -> Ticket:
        return replace(self, expert=to, from_expert=self.expert, status=status)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Ticket:
        return cls(**json.loads(raw))


@dataclass(frozen=True)
class LiveTicket:
    """A ticket with the wall-clock time it expires at (for countdowns)."""

    ticket: Ticket
    expires_at: float

    def remaining(self, now: float | None = None) -> float:
        return max(0.0, self.expires_at - (time.time() if now is None else now))


def key_prefix(namespace: str = "custodia") -> str:
    """The keys of a namespace's tickets in the TTL store (the storage map counts them)."""
    return f"{namespace}:ticket:"


class TicketBoard:
    def __init__(
        self,
        store: TTLStore,
        *,
        namespace: str = "custodia",
        ttl: float = TICKET_TTL,
        retry_after: float = 5.0,
    ) -> None:
        self._store = store
        self._prefix = key_prefix(namespace)
        self.ttl = ttl
        self.state = LayerState(f"tickets ({store.kind})", retry_after)

    @property
    def kind(self) -> str:
        return self._store.kind

    def _key(self, ticket: Ticket) -> str:
        return f"{self._prefix}{ticket.session_id}:{ticket.ticket_id}"

    def put(self, ticket: Ticket) -> bool:
        """Store (or hand over) ``ticket`` with a fresh TTL; False when the store failed."""
        if not self.state.usable():
            return False
        try:
            self._store.set(self._key(ticket), ticket.to_json(), self.ttl)
        except StoreUnavailableError as err:
            self.state.fail(err)
            return False
        self.state.recover()
        return True

    def list(self, session_id: str | None = None) -> list[LiveTicket]:
        """Live tickets (of one session, or all), oldest first; [] when the store failed."""
        prefix = self._prefix + (f"{session_id}:" if session_id else "")
        try:
            items = self._store.items(prefix)
        except StoreUnavailableError as err:
            self.state.fail(err)
            return []
        self.state.recover()
        now = time.time()
        out = []
        for item in items:
            try:
                ticket = Ticket.from_json(item.value)
            except (ValueError, TypeError) as err:
                log.warning(_("ignoring unreadable ticket %s: %s"), item.key, err)
                continue
            out.append(LiveTicket(ticket, now + item.remaining))
        out.sort(key=lambda t: (t.ticket.created_at, t.ticket.step, t.ticket.ticket_id))
        return out

    def health(self) -> str:
        return self.state.status
