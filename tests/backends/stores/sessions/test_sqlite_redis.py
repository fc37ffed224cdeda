"""The session role's suite: the SQLite mirror under a real Redis L2 (the harness)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.stores.ttl import TTLStore
from backends.stores.ttl.redis import RedisTTLStore
from tests.contract.sessions import SessionMirrorContract


@pytest.mark.server
class TestRedisSessions(SessionMirrorContract):
    @pytest.fixture
    def l2(self, redis_url: str) -> Iterator[TTLStore]:
        store = RedisTTLStore.from_url(redis_url, timeout=2.0)
        yield store
        store.close()
