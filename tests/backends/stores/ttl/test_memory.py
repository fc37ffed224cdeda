"""The TTL store role's suite on the in-process store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.stores.ttl import TTLStore
from backends.stores.ttl.memory import MemoryTTLStore
from tests.contract.ttl import TTLStoreContract


class TestMemoryTTLStore(TTLStoreContract):
    @pytest.fixture
    def store(self) -> Iterator[TTLStore]:
        store = MemoryTTLStore()
        yield store
        store.close()
