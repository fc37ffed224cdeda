"""What the Qdrant fixtures classes share: a semantic memory's collection as a VectorIndex."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.models.embedders import Embedder, HashingEmbedder
from tests.contract.vectors import OpenIndex


class NamedEmbedder(HashingEmbedder):
    """The hashing embedder's vectors under any model name."""

    def __init__(self, name: str, dimension: int) -> None:
        super().__init__(dimension)
        self.name = name


class CollectionIndex:
    """``open_index`` from ``open_store(embedder)``: its first collection, each
    opening closing the store before (one process, one holder)."""

    def open_store(self, embedder: Embedder, path: Path) -> Any:
        raise NotImplementedError

    @pytest.fixture
    def open_index(self, tmp_path: Path) -> Iterator[OpenIndex]:
        opened: list[Any] = []

        def factory(name: str, dim: int, fresh: bool = False) -> Any:
            for old in opened:
                old.close()
            store = self.open_store(NamedEmbedder(name, dim), tmp_path / "store")
            opened.append(store)
            return store.collection(store.collections[0], fresh=fresh)

        yield factory
        for store in opened:
            store.close()
