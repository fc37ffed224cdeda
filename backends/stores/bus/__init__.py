"""Event bus role (MA9, the live feed): publish JSON events to channels, subscribe to them.

Implementations, one contract suite (``tests/contract/bus.py``): ``memory``
(:class:`~backends.stores.bus.memory.InProcessEventBus`, one process) and ``redis``
(:class:`~backends.stores.bus.redis.RedisEventBus`, pub/sub across processes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

Event = dict[str, Any]


@runtime_checkable
class Subscription(Protocol):
    def get(self, timeout: float) -> Event | None:
        """The next event, waiting up to ``timeout`` seconds; None when none came."""

    def close(self) -> None:
        """Stop receiving; idempotent."""


@runtime_checkable
class EventBus(Protocol):
    #: "memory" or "redis", for the health report
    kind: str

    def publish(self, channel: str, event: Mapping[str, Any]) -> int:
        """Send ``event`` (JSON-serialisable) to the channel's subscribers; how many got it."""

    def subscribe(self, channel: str) -> Subscription:
        """Start receiving the channel's events; events published after this returns arrive."""

    def close(self) -> None: ...


def encode(event: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(event), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"event is not JSON-serialisable: {err}") from err
