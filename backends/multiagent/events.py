"""Event bus role (MA9): publish JSON events on a channel; subscribers get them in order.

* :class:`InProcessEventBus` — queues in this process (embedded profile, DC2);
* :class:`RedisEventBus` — Redis ``PUBLISH``/``SUBSCRIBE`` (server profile, DC3), so a feed
  published by ``custodia ask`` in a terminal shows up in the window too.

Both are fire-and-forget like Redis pub/sub: a subscriber sees the events published after it
subscribed, in publication order; nothing is stored (the session keeps its own event log).
A subscription is polled with :meth:`Subscription.get` and a timeout, so a worker iterating it
notices cancellation promptly.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from backends.errors import StoreUnavailableError
from backends.multiagent.health import LayerState

if TYPE_CHECKING:
    import redis

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


def _encode(event: Mapping[str, Any]) -> str:
    try:
        return json.dumps(dict(event), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"event is not JSON-serialisable: {err}") from err


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


class InProcessEventBus:
    """Channel -> subscriber queues. Events are JSON round-tripped, as over Redis."""

    kind = "memory"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: dict[str, list[_QueueSubscription]] = {}

    def publish(self, channel: str, event: Mapping[str, Any]) -> int:
        raw = _encode(event)
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


class _RedisSubscription:
    def __init__(self, client: redis.Redis, channel: str, timeout: float) -> None:
        import redis as redis_mod

        self._pubsub = client.pubsub(ignore_subscribe_messages=False)
        self._closed = False
        try:
            self._pubsub.subscribe(channel)
            # Wait for the server's confirmation: only then are later PUBLISHes ours.
            confirmed = False
            for _ in range(max(1, int(timeout / 0.1))):
                message = self._pubsub.get_message(timeout=0.1)
                if message is not None and message.get("type") == "subscribe":
                    confirmed = True
                    break
            if not confirmed:
                raise StoreUnavailableError(f"Redis did not confirm SUBSCRIBE {channel}")
        except redis_mod.RedisError as err:
            self.close()
            raise StoreUnavailableError(f"Redis SUBSCRIBE failed: {err}") from err
        except StoreUnavailableError:
            self.close()
            raise

    def get(self, timeout: float) -> Event | None:
        import redis as redis_mod

        if self._closed:
            return None
        try:
            message = self._pubsub.get_message(timeout=max(0.0, timeout))
        except redis_mod.RedisError as err:
            raise StoreUnavailableError(f"Redis subscription broken: {err}") from err
        if message is None or message.get("type") != "message":
            return None
        data = message["data"]
        event: Event = json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
        return event

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):  # a broken connection: nothing left to release
            self._pubsub.close()


class RedisEventBus:
    """Redis pub/sub; each subscription holds its own connection."""

    kind = "redis"

    def __init__(self, client: redis.Redis, timeout: float = 5.0) -> None:
        self._client = client
        self._timeout = timeout

    def publish(self, channel: str, event: Mapping[str, Any]) -> int:
        import redis as redis_mod

        raw = _encode(event)
        try:
            return int(self._client.publish(channel, raw))
        except redis_mod.RedisError as err:
            raise StoreUnavailableError(f"Redis PUBLISH failed: {err}") from err

    def subscribe(self, channel: str) -> Subscription:
        return _RedisSubscription(self._client, channel, self._timeout)

    def close(self) -> None:
        return None  # the client belongs to whoever made it


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
