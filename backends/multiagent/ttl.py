"""TTL store role (MA1 L2, MA8 tickets): string values that expire on their own.

Two implementations with the same semantics, checked by one contract suite
(``tests/contract/test_ttl_store.py``):

* :class:`MemoryTTLStore` — in-process, for the embedded profile (DC2);
* :class:`RedisTTLStore` — Redis ``SET key value EX seconds`` (``SETEX``), for the server
  profile (DC3).

A store raises :class:`~backends.errors.StoreUnavailableError` when it cannot do its job; the
callers that must never raise (the session store, the ticket board) catch it and degrade.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from backends.errors import StoreUnavailableError

if TYPE_CHECKING:
    import redis

Clock = Callable[[], float]


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


def _check_ttl(ttl: float) -> None:
    if not ttl > 0 or not math.isfinite(ttl):
        raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")


class MemoryTTLStore:
    """In-process TTL store: a dict of (value, deadline) behind a lock; lazy expiry.

    ``clock`` is monotonic time by default; tests may pass a fake one.
    """

    kind = "memory"

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._data: dict[str, tuple[str, float]] = {}

    def set(self, key: str, value: str, ttl: float) -> None:
        _check_ttl(ttl)
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


def redis_client(url: str, timeout: float) -> redis.Redis:
    """A Redis client with socket timeouts and at most one quick retry (no long backoff).

    One retry lets a pooled connection broken by a server restart reconnect at once; the
    default policy (three retries, exponential backoff) would stall a caller for seconds
    while the server is down.
    """
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=30,
    )


class RedisTTLStore:
    """Redis: ``SET key value EX seconds`` (``PX`` for fractional TTLs), ``SCAN`` for items."""

    kind = "redis"

    def __init__(self, client: redis.Redis, *, close_client: bool = True) -> None:
        self._client = client
        self._close_client = close_client

    @classmethod
    def from_url(cls, url: str, timeout: float) -> RedisTTLStore:
        return cls(redis_client(url, timeout))

    @property
    def client(self) -> redis.Redis:
        return self._client

    def _call(self, what: str, fn: Callable[[], object]) -> object:
        import redis

        try:
            return fn()
        except redis.RedisError as err:
            raise StoreUnavailableError(f"Redis {what} failed: {err}") from err

    def set(self, key: str, value: str, ttl: float) -> None:
        _check_ttl(ttl)
        if float(ttl).is_integer():
            self._call("SET", lambda: self._client.set(key, value, ex=int(ttl)))
        else:
            ms = max(1, round(ttl * 1000))
            self._call("SET", lambda: self._client.set(key, value, px=ms))

    def get(self, key: str) -> str | None:
        raw = self._call("GET", lambda: self._client.get(key))
        return None if raw is None else _text(raw)

    def remaining(self, key: str) -> float | None:
        ms = self._call("PTTL", lambda: self._client.pttl(key))
        assert isinstance(ms, int)
        return None if ms < 0 else ms / 1000.0

    def delete(self, key: str) -> bool:
        return bool(self._call("DEL", lambda: self._client.delete(key)))

    def items(self, prefix: str) -> list[TTLItem]:
        def fetch() -> list[TTLItem]:
            keys = list(self._client.scan_iter(match=_glob_escape(prefix) + "*", count=500))
            if not keys:
                return []
            pipe = self._client.pipeline(transaction=False)
            for key in keys:
                pipe.get(key)
                pipe.pttl(key)
            replies = pipe.execute()
            out = []
            for index, key in enumerate(keys):
                value, ms = replies[2 * index], replies[2 * index + 1]
                if value is None or ms is None or ms < 0:
                    continue  # expired between SCAN and GET
                out.append(TTLItem(_text(key), _text(value), ms / 1000.0))
            return out

        result = self._call("SCAN", fetch)
        assert isinstance(result, list)
        return result

    def ping(self) -> None:
        self._call("PING", self._client.ping)

    def close(self) -> None:
        if self._close_client:
            self._client.close()


def _text(raw: object) -> str:
    return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)


def _glob_escape(text: str) -> str:
    """Escape Redis glob metacharacters so a prefix matches literally."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
