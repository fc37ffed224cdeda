"""The event bus on Redis pub/sub; each subscription holds its own connection."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Self

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import N_, _
from backends.stores.bus import Event, Subscription, encode
from backends.stores.description import Measurement
from backends.stores.engines.redis import RedisServer, redis_client
from backends.stores.server import reached

if TYPE_CHECKING:
    import redis

    from backends.config import Config


class _RedisSubscription:
    def __init__(self, client: redis.Redis, channel: str, timeout: float) -> None:
        import redis as redis_mod  # noqa: PLC0415 — lazy: never imported at start-up

        self._pubsub = client.pubsub(ignore_subscribe_messages=False)
        self._closed = False
        try:
            self._pubsub.subscribe(channel)
            # Wait for the server's confirmation: only then are later PUBLISHes ours.
            confirmed = False
            for _attempt in range(max(1, int(timeout / 0.1))):
                message = self._pubsub.get_message(timeout=0.1)
                if message is not None and message.get("type") == "subscribe":
                    confirmed = True
                    break
            if not confirmed:
                raise StoreUnavailableError(
                    _("Redis did not confirm SUBSCRIBE {channel}").format(channel=channel)
                )
        except redis_mod.RedisError as err:
            self.close()
            raise StoreUnavailableError(
                failed(_("Redis SUBSCRIBE {channel} failed").format(channel=channel), err)
            ) from err
        except StoreUnavailableError:
            self.close()
            raise

    def get(self, timeout: float) -> Event | None:
        import redis as redis_mod  # noqa: PLC0415 — lazy: never imported at start-up

        if self._closed:
            return None
        try:
            message = self._pubsub.get_message(timeout=max(0.0, timeout))
        except redis_mod.RedisError as err:
            raise StoreUnavailableError(failed(_("Redis subscription broken"), err)) from err
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


class RedisEventBus(RedisServer):
    """Redis pub/sub; each subscription holds its own connection."""

    kind = "redis"

    #: the engine, as the storage map names it
    ENGINE = "Redis pub/sub"

    def __init__(
        self, client: redis.Redis, timeout: float = 5.0, *, close_client: bool = False
    ) -> None:
        self._client = client
        self._timeout = timeout
        self._close_client = close_client

    @classmethod
    def from_config(cls, config: Config, **context: Any) -> Self:
        """The Redis at ``redis_url``; its own client, closed with the bus."""
        client = redis_client(config.redis_url, config.network_timeout)
        return cls(client, timeout=config.network_timeout, close_client=True)

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """Pub/sub stores nothing; the measurement is whether the server answers (PING)."""
        import redis  # noqa: PLC0415 — lazy: never imported at start-up

        with reached(running, lambda: cls.from_config(config)) as bus:
            try:
                bus._client.ping()
            except redis.RedisError as err:
                raise StoreUnavailableError(failed(_("Redis PING failed"), err)) from err
        return Measurement(0, None, note=N_("the bus itself stores none"))

    def publish(self, channel: str, event: Mapping[str, Any]) -> int:
        import redis as redis_mod  # noqa: PLC0415 — lazy: never imported at start-up

        raw = encode(event)
        try:
            return int(self._client.publish(channel, raw))
        except redis_mod.RedisError as err:
            raise StoreUnavailableError(failed(_("Redis PUBLISH failed"), err)) from err

    def subscribe(self, channel: str) -> Subscription:
        return _RedisSubscription(self._client, channel, self._timeout)

    def close(self) -> None:
        if self._close_client:  # else the client belongs to whoever made it
            self._client.close()
