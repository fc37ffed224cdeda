"""The memory-store role's suite on SQLite (the original's ``vectores`` table)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.stores.memories.sqlite import SQLiteMemoryStore
from tests.contract.memories import MemoryStoreContract, OpenStore


class TestSQLiteMemoryStore(MemoryStoreContract):
    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Iterator[OpenStore]:
        opened: list[SQLiteMemoryStore] = []

        def open_store(dimension: int, model: str = "") -> SQLiteMemoryStore:
            store = SQLiteMemoryStore(tmp_path / "memories.sqlite3", dimension, model)
            opened.append(store)
            return store

        yield open_store
        for store in opened:
            store.close()


class TestQuantisedSQLiteMemoryStore(MemoryStoreContract):
    """The same contract when every store searches int8 codes first (as a million do)."""

    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Iterator[OpenStore]:
        opened: list[SQLiteMemoryStore] = []

        def open_store(dimension: int, model: str = "") -> SQLiteMemoryStore:
            store = SQLiteMemoryStore(
                tmp_path / "memories.sqlite3", dimension, model, quantise_above=0
            )
            opened.append(store)
            return store

        yield open_store
        for store in opened:
            store.close()


class TestCodesFirstSQLiteMemoryStore(MemoryStoreContract):
    """The same contract when the float32 matrix is searched through int8 codes kept beside
    it (as a store of 50,000 to 200,000 memories is)."""

    @pytest.fixture
    def open_store(self, tmp_path: Path) -> Iterator[OpenStore]:
        opened: list[SQLiteMemoryStore] = []

        def open_store(dimension: int, model: str = "") -> SQLiteMemoryStore:
            store = SQLiteMemoryStore(
                tmp_path / "memories.sqlite3", dimension, model, codes_first_above=0
            )
            opened.append(store)
            return store

        yield open_store
        for store in opened:
            store.close()
