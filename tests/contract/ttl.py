"""Contract of the TTL store role (MA1 L2, MA8 tickets): the abstract suite only.

Each implementation runs it from a small fixtures class in ``tests/backends/stores/ttl/``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.stores.ttl import TTLStore
from tests.contract import describing


class TTLStoreContract:
    @pytest.fixture
    def store(self) -> Iterator[TTLStore]:
        raise NotImplementedError

    @pytest.fixture
    def prefix(self) -> str:
        return f"contract-{uuid.uuid4().hex[:8]}:"

    def test_is_a_ttl_store(self, store: TTLStore) -> None:
        assert isinstance(store, TTLStore)
        assert store.kind in ("memory", "redis")
        store.ping()

    def test_set_get_overwrite_delete(self, store: TTLStore, prefix: str) -> None:
        key = prefix + "a"
        assert store.get(key) is None
        store.set(key, "one", 60)
        assert store.get(key) == "one"
        store.set(key, "twö ✓", 60)
        assert store.get(key) == "twö ✓"
        assert store.delete(key) is True
        assert store.get(key) is None
        assert store.delete(key) is False

    def test_remaining_is_the_ttl_counting_down(self, store: TTLStore, prefix: str) -> None:
        store.set(prefix + "day", "x", 86_400)
        left = store.remaining(prefix + "day")
        assert left is not None and 86_000 < left <= 86_400
        assert store.remaining(prefix + "missing") is None

    def test_overwrite_resets_the_ttl(self, store: TTLStore, prefix: str) -> None:
        store.set(prefix + "k", "x", 5)
        store.set(prefix + "k", "y", 500)
        left = store.remaining(prefix + "k")
        assert left is not None and left > 100

    def test_entries_expire(self, store: TTLStore, prefix: str) -> None:
        store.set(prefix + "short", "gone soon", 0.3)
        store.set(prefix + "long", "stays", 60)
        deadline = time.monotonic() + 5
        while store.get(prefix + "short") is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.get(prefix + "short") is None
        assert store.remaining(prefix + "short") is None
        assert [i.key for i in store.items(prefix)] == [prefix + "long"]

    def test_items_by_prefix_with_values_and_remaining(self, store: TTLStore, prefix: str) -> None:
        store.set(prefix + "t:1", "a", 100)
        store.set(prefix + "t:2", "b", 200)
        store.set(prefix + "other", "c", 100)
        items = sorted(store.items(prefix + "t:"), key=lambda i: i.key)
        assert [(i.key, i.value) for i in items] == [(prefix + "t:1", "a"), (prefix + "t:2", "b")]
        assert 0 < items[0].remaining <= 100
        assert 100 < items[1].remaining <= 200
        assert store.items(prefix + "nothing:") == []

    def test_prefix_is_literal_not_a_pattern(self, store: TTLStore, prefix: str) -> None:
        store.set(prefix + "a*b", "star", 60)
        store.set(prefix + "axxb", "plain", 60)
        assert [i.value for i in store.items(prefix + "a*")] == ["star"]

    @pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf")])
    def test_a_ttl_must_be_positive(self, store: TTLStore, prefix: str, ttl: float) -> None:
        with pytest.raises(ValueError):
            store.set(prefix + "bad", "x", ttl)
        assert store.get(prefix + "bad") is None

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself(
        self, store: TTLStore, prefix: str, tmp_path: Path
    ) -> None:
        cfg = describing.config(tmp_path)
        store.set(prefix + "a", "one", 60)
        store.set(prefix + "b", "two", 60)
        store.set(prefix.rstrip(":") + "-elsewhere:c", "three", 60)
        measured = describing.measure(store, cfg, prefix=prefix)
        assert measured.items == 2
        assert measured.size_bytes is None or measured.size_bytes > 0
        describing.check_probe(store, cfg)
