"""One Redis client factory for every Redis-backed store: timeouts on every call, one retry.

``redis`` is imported when a client is made, never at start-up."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis


def redis_client(url: str, timeout: float) -> redis.Redis:
    """A Redis client with socket timeouts and at most one quick retry (no long backoff).

    One retry lets a pooled connection broken by a server restart reconnect at once; the
    default policy (three retries, exponential backoff) would stall a caller for seconds
    while the server is down.
    """
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from backends.net import require_loopback_redis

    require_loopback_redis("redis_url", url)
    return redis.Redis.from_url(
        url,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        retry=Retry(NoBackoff(), 1),
        health_check_interval=30,
    )
