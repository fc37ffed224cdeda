"""TTL store role (MA1 L2, MA8 tickets): string values that expire on their own.

Implementations, one contract suite (``tests/contract/ttl.py``):

* ``memory`` (:class:`~backends.stores.ttl.memory.MemoryTTLStore`) — in-process, for the
  embedded profile (DC2);
* ``redis`` (:class:`~backends.stores.ttl.redis.RedisTTLStore`) — Redis ``SET key value EX
  seconds``, for the server profile (DC3).

A store raises :class:`~backends.errors.StoreUnavailableError` when it cannot do its job; the
callers that must never raise (the session store, the ticket board) catch it and degrade.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class TTLItem:
    """One live entry: its key, value and the seconds it has left."""

    key: str
    value: str
    remaining: float


@runtime_checkable
class TTLStore(Protocol):
    """Key -> string value with a time to live, in seconds."""

    #: what it is, for the health report: "memory" or "redis"
    kind: str

    def set(self, key: str, value: str, ttl: float) -> None:
        """Store ``value`` under ``key`` for ``ttl`` seconds (> 0), replacing any old value."""

    def get(self, key: str) -> str | None:
        """The value, or None when missing or expired."""

    def remaining(self, key: str) -> float | None:
        """Seconds left before ``key`` expires; None when missing or expired."""

    def delete(self, key: str) -> bool:
        """Remove ``key``; True when it was there."""

    def items(self, prefix: str) -> list[TTLItem]:
        """Every live entry whose key starts with ``prefix`` (any order)."""

    def ping(self) -> None:
        """Raise :class:`StoreUnavailableError` when the store cannot be reached."""

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""


def check_ttl(ttl: float) -> None:
    """A TTL is a positive, finite number of seconds."""
    if not ttl > 0 or not math.isfinite(ttl):
        raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
