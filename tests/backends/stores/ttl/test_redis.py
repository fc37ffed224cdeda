"""The TTL store role's suite on a real Redis (the harness starts it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.stores.ttl import TTLStore
from backends.stores.ttl.redis import RedisTTLStore
from tests.contract.ttl import TTLStoreContract


@pytest.mark.server
class TestRedisTTLStore(TTLStoreContract):
    @pytest.fixture
    def store(self, redis_url: str) -> Iterator[TTLStore]:
        store = RedisTTLStore.from_url(redis_url, timeout=2.0)
        yield store
        store.close()
