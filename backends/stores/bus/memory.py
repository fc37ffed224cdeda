"""The in-process event bus: one queue per subscription."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Self

from backends.i18n import N_
from backends.stores.bus import Event, Subscription, encode
from backends.stores.description import Measurement, SelfDescribing

if TYPE_CHECKING:
    from backends.config import Config


class _QueueSubscription:
    def __init__(self, bus: InProcessEventBus, channel: str) -> None:
        self._bus = bus
        self.channel = channel
        self.queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._closed = False

    def get(self, timeout: float) -> Event | None:
        if self._closed:
            return None
        try:
            raw = self.queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        event: Event = json.loads(raw)
        return event

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._bus._unsubscribe(self)


class InProcessEventBus(SelfDescribing):
    """Channel -> subscriber queues. Events are JSON round-tripped, as over Redis."""

    kind = "memory"

    #: the engine, as the storage map names it
    ENGINE = N_("in-process event bus")
    LABEL = PRODUCT = N_("in-process")

    @classmethod
    def locate(cls, config: Config, **context: Any) -> str:
        """Where this store keeps its data, as the storage map shows it."""
        return N_("memory of this process")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, list[_QueueSubscription]] = {}

    @classmethod
    def from_config(cls, config: Config, **context: Any) -> InProcessEventBus:
        return cls()

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """A bus stores nothing: each event is handed to the subscribers and gone."""
        return Measurement(0, None, note=N_("the bus itself stores none"))

    def publish(self, channel: str, event: Mapping[str, Any]) -> int:
        raw = encode(event)
        with self._lock:  # under the lock: two publishers cannot interleave one channel
            subscribers = list(self._subscribers.get(channel, ()))
            for sub in subscribers:
                sub.queue.put(raw)
        return len(subscribers)

    def subscribe(self, channel: str) -> Subscription:
        sub = _QueueSubscription(self, channel)
        with self._lock:
            self._subscribers.setdefault(channel, []).append(sub)
        return sub

    def _unsubscribe(self, sub: _QueueSubscription) -> None:
        with self._lock:
            subs = self._subscribers.get(sub.channel, [])
            if sub in subs:
                subs.remove(sub)
            if not subs:
                self._subscribers.pop(sub.channel, None)

    def close(self) -> None:
        with self._lock:
            self._subscribers.clear()
