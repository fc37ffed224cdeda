"""The session role's suite: the SQLite mirror under the in-process L2."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.stores.ttl import TTLStore
from backends.stores.ttl.memory import MemoryTTLStore
from tests.contract.sessions import SessionMirrorContract


class TestEmbeddedSessions(SessionMirrorContract):
    @pytest.fixture
    def l2(self) -> Iterator[TTLStore]:
        store = MemoryTTLStore()
        yield store
        store.close()
