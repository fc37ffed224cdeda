"""One run of one session, as the coordinator's phases use it: every step is an event (kept
in the session, published on the live feed — MA9 — and handed to the caller), every change is
saved at once (a run stopped anywhere resumes where it stopped), and every expert's turn goes
through semantic memory (MA10): related items retrieved before it acts, its result stored
after — only verified code as an example for the next coder.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from backends import failures
from backends.errors import DimensionMismatchError, StoreUnavailableError
from backends.i18n import _
from backends.models.chat import Prompt
from backends.multiagent.events import (
    EXPERT_RESULT,
    EXPERT_STARTED,
    PHASE,
    RETRIEVED,
    SESSION_FINISHED,
    TICKET,
    WARNING,
)
from backends.multiagent.team import CODE_PATTERNS, EXAMPLES, Expert
from backends.multiagent.tickets import Ticket
from backends.multiagent.verify import UNVERIFIED, VERIFIED
from backends.progress import Progress
from backends.stores.sessions import Session
from backends.stores.vectors import MemoryHit, MemoryItem, SemanticMemory, tags_where

if TYPE_CHECKING:
    from backends.multiagent.coordinator import Coordinator

#: receives each event of a run as it happens
EventCallback = Callable[[dict[str, Any]], None]


class Run:
    """One run of one session: its events (kept in the session, published on the feed, handed
    to ``on_event``), its saves, and its experts' turns — each retrieves from semantic memory,
    asks the model and stores its result."""

    def __init__(
        self,
        coordinator: Coordinator,
        session: Session,
        progress: Progress,
        on_event: EventCallback | None,
    ) -> None:
        self.c = coordinator
        self.session = session
        self.progress = progress
        self.on_event = on_event
        self.memory: SemanticMemory | None = None

    def advance(self) -> None:
        """Progress: planning + one per step + review."""
        data = self.session.data
        steps = data.get("steps") or []
        done = int("steps" in data) + sum(s.get("result") is not None for s in steps)
        done += int("review" in data)
        total = (len(steps) or self.c.max_steps) + 2
        self.progress.total, self.progress.done = total, done - 1
        self.progress.advance(1, f"{done}/{total}")

    def save(self) -> None:
        stored = self.c.sessions.save(self.session)
        self.session.updated_at = stored.updated_at

    def event(self, kind: str, text: str, expert: str = "", **extra: Any) -> dict[str, Any]:
        session = self.session
        event: dict[str, Any] = {
            "session": session.session_id,
            "seq": len(session.events) + 1,
            "ts": time.time(),
            "kind": kind,
            "phase": session.phase,
            "expert": expert,
            "text": text,
        }
        event.update(extra)
        session.events.append(event)
        self.save()
        self.c.feed.emit(session.session_id, event)
        if self.on_event is not None:
            self.on_event(event)
        return event

    def phase(self, phase: str) -> None:
        self.session.phase = phase
        self.event(PHASE, phase)

    def ticket(self, ticket: Ticket, text: str) -> None:
        stored = self.c.tickets.put(ticket)
        self.event(
            TICKET,
            text,
            expert=ticket.expert,
            ticket=ticket.ticket_id,
            status=ticket.status,
            stored=stored,
        )

    def finish(self, phase: str, text: str, **extra: Any) -> None:
        self.session.phase = phase
        self.event(SESSION_FINISHED, text, outcome=phase, **extra)

    def retrieve(self, expert: Expert, query: str, own_session: bool) -> list[MemoryHit]:
        memory = self.memory
        if memory is None:
            return []
        sid = self.session.session_id
        # Its own session's results for the reviewer; past sessions' for everyone else (this
        # session's work reaches them through the prompt). Filters go inside the query.
        scope: dict[str, str | None] = {"session": sid} if own_session else {"exclude_session": sid}
        hits: list[MemoryHit] = []
        try:
            if expert.verified_only:
                where = {**tags_where(**scope), **EXAMPLES}
                vector = memory.embedder.embed(query)
                for name in expert.reads:
                    found = memory.collection(name).query(vector, self.c.memory_limit, where)
                    hits += [MemoryHit(h.id, h.score, dict(h.payload), name) for h in found]
            else:
                for name in expert.reads:
                    hits.extend(memory.search(name, query, limit=self.c.memory_limit, **scope))
        except DimensionMismatchError:
            raise
        except StoreUnavailableError as err:
            self.c.memory_state.fail(err)
            self.event(
                WARNING,
                _("Semantic memory search failed: {0}").format(failures.explain(err)),
                expert=expert.name,
            )
            return []
        hits = [h for h in hits if h.score >= self.c.min_score]
        hits.sort(key=lambda h: -h.score)
        return hits[: self.c.memory_limit]

    def remember(self, expert: Expert, text: str, ticket: str, status: str = UNVERIFIED) -> None:
        """Store ``text`` with the ``status`` of its check (``unverified`` when nothing checked
        it); only verified work goes to :data:`CODE_PATTERNS` — a failed draft stored as an
        example came back as the next task's code (issue 24)."""
        memory = self.memory
        if memory is None or not text.strip():
            return
        if expert.name == "reviewer":
            text_for = {"session_memory": f"Task: {self.session.task}\nOutcome: {text}"}
        else:
            text_for = {}
        try:
            for name in expert.writes:
                if name == CODE_PATTERNS and status != VERIFIED:
                    continue
                item = MemoryItem(
                    text=text_for.get(name, text),
                    session=self.session.session_id,
                    expert=expert.name,
                    ticket=ticket,
                    extra={"task": self.session.task, "status": status},
                )
                memory.add(name, item)
        except DimensionMismatchError:
            raise
        except StoreUnavailableError as err:
            self.c.memory_state.fail(err)
            self.event(
                WARNING,
                _("Could not store the result in memory: {0}").format(failures.explain(err)),
                expert=expert.name,
            )

    def act(
        self,
        expert: Expert,
        user: str,
        ticket: str,
        own_session: bool = False,
        max_tokens: int | None = None,
        status: str = UNVERIFIED,
    ) -> str:
        """Retrieve, ask the model, store: one expert's turn. Cancellable. ``status``: what
        the result is stored as (a coder's is stored again once its check is over)."""
        self.progress.check()
        hits = self.retrieve(expert, user, own_session)
        self.event(
            RETRIEVED,
            _("{count} related item(s) from semantic memory").format(count=len(hits)),
            expert=expert.name,
            hits=[{"collection": h.collection, "score": round(h.score, 3)} for h in hits],
        )
        self.event(
            EXPERT_STARTED,
            _("{expert} is working").format(expert=_(expert.name)),
            expert=expert.name,
            ticket=ticket,
        )
        prompt = Prompt(
            user=user,
            system=expert.system,
            context=[
                f"[{h.collection} · {h.expert} · {h.payload.get('status') or UNVERIFIED}] "
                f"{h.text[:400]}"
                for h in hits
            ],
            max_tokens=max_tokens or self.c.max_tokens,
        )
        model = self.c.chat()
        pieces = []
        for piece in model.stream(prompt, should_stop=lambda: self.progress.cancelled):
            pieces.append(piece)
        self.progress.check()
        text = "".join(pieces).strip()
        self.remember(expert, text, ticket, status)
        self.event(EXPERT_RESULT, text, expert=expert.name, ticket=ticket)
        return text
