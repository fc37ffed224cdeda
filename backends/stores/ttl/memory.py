"""The in-process TTL store: a dict of (value, deadline) behind a lock."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from backends.i18n import N_
from backends.stores.description import Measurement, SelfDescribing
from backends.stores.ttl import TTLItem, check_ttl

if TYPE_CHECKING:
    from backends.config import Config

Clock = Callable[[], float]


class MemoryTTLStore(SelfDescribing):
    """In-process TTL store: a dict of (value, deadline) behind a lock; lazy expiry.

    ``clock`` is monotonic time by default; tests may pass a fake one.
    """

    kind = "memory"

    #: the engine, as the storage map names it
    ENGINE = N_("in-process TTL store")
    LABEL = PRODUCT = N_("in-process")

    @classmethod
    def locate(cls, config: Config, **context: Any) -> str:
        """Where this store keeps its data, as the storage map shows it."""
        return N_("memory of this process")

    @classmethod
    def address(cls, config: Config, **context: Any) -> str:
        return N_("memory")

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The live entries under ``prefix`` in the running store (none outside this
        process: a new store is empty); their size is not counted."""
        prefix = str(context.get("prefix", ""))
        return Measurement(len(running().items(prefix)) if running is not None else 0)

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, tuple[str, float]] = {}

    @classmethod
    def from_config(cls, config: Config, **context: Any) -> MemoryTTLStore:
        """A new, empty store (nothing of it outlives the process)."""
        return cls()

    def set(self, key: str, value: str, ttl: float) -> None:
        check_ttl(ttl)
        with self._lock:
            self._data[key] = (value, self._clock() + ttl)

    def _live(self, key: str, now: float) -> tuple[str, float] | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        if entry[1] <= now:
            del self._data[key]
            return None
        return entry

    def get(self, key: str) -> str | None:
        with self._lock:
            entry = self._live(key, self._clock())
        return None if entry is None else entry[0]

    def remaining(self, key: str) -> float | None:
        with self._lock:
            now = self._clock()
            entry = self._live(key, now)
        return None if entry is None else entry[1] - now

    def delete(self, key: str) -> bool:
        with self._lock:
            if self._live(key, self._clock()) is None:
                return False
            del self._data[key]
            return True

    def items(self, prefix: str) -> list[TTLItem]:
        with self._lock:
            now = self._clock()
            expired = [k for k, (_, deadline) in self._data.items() if deadline <= now]
            for key in expired:
                del self._data[key]
            return [
                TTLItem(k, v, deadline - now)
                for k, (v, deadline) in self._data.items()
                if k.startswith(prefix)
            ]

    def ping(self) -> None:
        return None

    def close(self) -> None:
        with self._lock:
            self._data.clear()
