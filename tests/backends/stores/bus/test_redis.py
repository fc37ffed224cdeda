"""The event bus role's suite on Redis pub/sub (the harness starts it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.stores.bus import EventBus
from backends.stores.bus.redis import RedisEventBus
from backends.stores.engines.redis import redis_client
from tests.contract.bus import EventBusContract


@pytest.mark.server
class TestRedisEventBus(EventBusContract):
    @pytest.fixture
    def bus(self, redis_url: str) -> Iterator[EventBus]:
        client = redis_client(redis_url, 2.0)
        yield RedisEventBus(client, timeout=2.0)
        client.close()
