"""Session mirror role (MA5, MA7): the durable layer of the multi-agent sessions.

A :class:`Session` is one row of MA7; a :class:`SessionMirror` saves, loads and lists them and
raises :class:`~backends.errors.StoreUnavailableError` on failure (the session store above it
degrades, MA6). Implementation: ``sqlite`` (:mod:`backends.stores.sessions.sqlite`, WAL mode,
shared by several processes).

A migration warms the L2 with :meth:`WarmsL2.copy_to` (every mirror inherits it): the sessions
of the last 24 h go to a :class:`~backends.stores.ttl.TTLStore` under :func:`l2_prefix` with the
TTL they have left; a fresher copy already there is kept, so a rerun is harmless.
"""

from __future__ import annotations

import builtins
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from backends.progress import Progress

if TYPE_CHECKING:
    from backends.stores.ttl import TTLStore

#: the coordinator's phases, in order, then the three ends
PHASES = ("planning", "working", "reviewing", "done", "failed", "cancelled")
ACTIVE_PHASES = ("planning", "working", "reviewing")
#: 24 h in L2 (MA1)
SESSION_TTL = 86_400
#: the namespace of the application's keys
DEFAULT_NAMESPACE = "custodia"


def l2_prefix(namespace: str = DEFAULT_NAMESPACE) -> str:
    """The L2 keys of the sessions: ``<namespace>:session:<session id>``."""
    return f"{namespace}:session:"


@dataclass
class Session:
    """One row of MA7: queryable columns plus a JSON ``data`` blob (plan, results, events)."""

    session_id: str
    task: str
    model: str = ""
    phase: str = "planning"
    created_at: float = field(default_factory=time.time)
    updated_at: float = 0.0
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.updated_at:
            self.updated_at = self.created_at

    @classmethod
    def new(cls, task: str, model: str = "") -> Session:
        return cls(session_id=uuid.uuid4().hex, task=task, model=model)

    @property
    def finished(self) -> bool:
        return self.phase == "done"

    @property
    def resumable(self) -> bool:
        """Not done: a crash, a cancel or a failure left work to do."""
        return self.phase != "done"

    @property
    def events(self) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = self.data.setdefault("events", [])
        return events

    def to_json(self) -> str:
        return json.dumps(
            {
                "session_id": self.session_id,
                "created_at": self.created_at,
                "updated_at": self.updated_at,
                "phase": self.phase,
                "model": self.model,
                "task": self.task,
                "data": self.data,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, raw: str) -> Session:
        d = json.loads(raw)
        return cls(
            session_id=str(d["session_id"]),
            task=str(d["task"]),
            model=str(d.get("model", "")),
            phase=str(d.get("phase", "planning")),
            created_at=float(d["created_at"]),
            updated_at=float(d.get("updated_at") or d["created_at"]),
            data=dict(d.get("data") or {}),
        )

    def copy(self) -> Session:
        """A deep copy (a JSON round trip: several times faster than ``copy.deepcopy``)."""
        return Session.from_json(self.to_json())


class SessionMirror(Protocol):
    """The durable layer. Methods raise :class:`StoreUnavailableError` on failure."""

    where: str

    def save(self, session: Session) -> None: ...
    def load(self, session_id: str) -> Session | None: ...
    def list(
        self,
        *,
        phase: str | None = None,
        model: str | None = None,
        task_contains: str | None = None,
        limit: int | None = None,
    ) -> list[Session]: ...
    def close(self) -> None: ...

    def recent(self, now: float | None = None) -> builtins.list[Session]:
        """The sessions an L2 would still hold (:meth:`WarmsL2.recent`, inherited)."""
        ...

    def copy_to(
        self,
        other: TTLStore,
        progress: Progress | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        now: float | None = None,
    ) -> int:
        """The recent sessions into an L2 (:meth:`WarmsL2.copy_to`, inherited)."""
        ...


def check_limit(limit: int | None) -> None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, not {limit!r}")


class WarmsL2:
    """``copy_to`` for every :class:`SessionMirror`: its recent sessions into an L2."""

    def recent(self: SessionMirror, now: float | None = None) -> list[Session]:
        """The sessions saved in the last 24 h (those an L2 would still hold)."""
        now = time.time() if now is None else now
        return [s for s in self.list() if now - s.updated_at < SESSION_TTL - 1]

    def copy_to(
        self: SessionMirror,
        other: TTLStore,
        progress: Progress | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
        now: float | None = None,
    ) -> int:
        """Write each recent session to ``other`` with the TTL it has left, unless ``other``
        holds a fresher copy; returns how many sessions were looked at. Idempotent."""
        progress = progress or Progress()
        now = time.time() if now is None else now
        prefix, done = l2_prefix(namespace), 0
        for session in WarmsL2.recent(self, now):
            progress.check()
            key = prefix + session.session_id
            current = other.get(key)
            fresher = current is not None and (
                Session.from_json(current).updated_at > session.updated_at
            )
            left = SESSION_TTL - (now - session.updated_at)
            if not fresher and left > 0:
                other.set(key, session.to_json(), round(left, 3))
            done += 1
            progress.advance(1)
        return done
