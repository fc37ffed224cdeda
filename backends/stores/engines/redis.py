"""What every Redis-backed store shares: one client factory (timeouts on every call, one
retry) and the server's self-description (:class:`RedisServer`).

``redis`` is imported when a client is made, never at start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from backends.net import require_loopback_redis
from backends.stores.description import Probed
from backends.stores.server import ServerStore

if TYPE_CHECKING:
    import redis

    from backends.config import Config


def redis_client(url: str, timeout: float) -> redis.Redis:
    """A Redis client with socket timeouts and at most one quick retry (no long backoff).

    One retry lets a pooled connection broken by a server restart reconnect at once; the
    default policy (three retries, exponential backoff) would stall a caller for seconds
    while the server is down.
    """
    import redis  # noqa: PLC0415 — lazy: never imported at start-up
    from redis.backoff import NoBackoff  # noqa: PLC0415 — lazy, with redis
    from redis.retry import Retry  # noqa: PLC0415 — lazy, with redis

    require_loopback_redis("redis_url", url)
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=30,
    )


class RedisServer(ServerStore):
    """The configured Redis (``redis_url``), whichever store keeps its data there."""

    URL_SETTING: ClassVar[str] = "redis_url"
    LABEL: ClassVar[str] = "redis"
    PRODUCT: ClassVar[str] = "Redis"

    @classmethod
    def checkup(cls, config: Config, **context: object) -> Probed:
        """PING and the server's version, with the configured timeouts."""
        import redis  # noqa: PLC0415 — lazy: never imported at start-up

        client = redis_client(config.redis_url, config.network_timeout)
        try:
            client.ping()
            return Probed(str(client.info("server").get("redis_version", "")))
        except redis.RedisError as err:
            raise cls.unreachable(err) from err
        finally:
            client.close()
