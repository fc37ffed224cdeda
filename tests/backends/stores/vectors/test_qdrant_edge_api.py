"""qdrant-edge is beta (0.x): every engine call the semantic memory makes, on a tiny shard, so an
upgrade that changes the API fails here, loudly and by name, before it fails a user."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
import qdrant_edge as qe  # a pinned dependency: missing is a failure, never a skip

from backends.stores.vectors.qdrant_edge import EDGE_VERSION, shard_dimension


def test_the_pinned_version_is_installed() -> None:
    assert version("qdrant-edge-py") == EDGE_VERSION, (
        "qdrant-edge-py changed: rerun this file and bench/bench_multiagent_edge.py, "
        "then update EDGE_VERSION"
    )


@pytest.fixture
def shard(tmp_path: Path) -> Iterator[Any]:
    config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine))
    made = qe.EdgeShard.create(str(tmp_path / "shard"), config)
    yield made
    made.close()


def test_every_call_the_memory_makes(tmp_path: Path, shard: Any) -> None:
    s = shard
    for name in ("session", "expert", "ticket"):
        s.update(qe.UpdateOperation.create_field_index(name, qe.PayloadSchemaType.Keyword))
    ids = [str(uuid.uuid4()) for _ in range(3)]
    s.update(
        qe.UpdateOperation.upsert_points(
            [
                qe.Point(ids[0], [1.0, 0.0, 0.0, 0.0], {"session": "a", "text": "x"}),
                qe.Point(ids[1], [0.0, 1.0, 0.0, 0.0], {"session": "b", "text": "y"}),
                qe.Point(ids[2], [0.9, 0.1, 0.0, 0.0], {"session": "b", "text": "z"}),
            ]
        )
    )
    must = qe.Filter(must=[qe.FieldCondition(key="session", match=qe.MatchValue("b"))])
    hits = s.query(
        qe.QueryRequest(
            limit=2, query=qe.Query.Nearest([1.0, 0.0, 0.0, 0.0]), filter=must, with_payload=True
        )
    )
    assert [str(h.id) for h in hits] == [ids[2], ids[1]]
    assert hits[0].payload["text"] == "z" and 0.99 < hits[0].score <= 1.0
    not_b = qe.Filter(must_not=[qe.FieldCondition(key="session", match=qe.MatchValue("b"))])
    assert s.count(qe.CountRequest(filter=not_b, exact=True)) == 1
    assert s.count(qe.CountRequest(exact=True)) == 3
    records, offset = s.scroll(
        qe.ScrollRequest(offset=None, limit=2, with_payload=True, with_vector=True)
    )
    assert len(records) == 2 and offset is not None and len(records[0].vector) == 4
    got = s.retrieve([uuid.UUID(ids[0])], with_payload=True, with_vector=True)
    assert str(got[0].id) == ids[0] and got[0].payload["session"] == "a"
    info = s.info()
    assert info.points_count == 3 and info.indexed_vectors_count == 0
    assert {k: v.points for k, v in info.payload_schema.items()} == {
        "session": 3,
        "expert": 0,
        "ticket": 0,
    }
    s.flush()
    assert shard_dimension(tmp_path / "shard") == 4  # edge_config.json's shape


def test_reload_with_optimiser_config_and_optimize(tmp_path: Path, shard: Any) -> None:
    shard.close()
    config = qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1),
    )
    again = qe.EdgeShard.load(str(tmp_path / "shard"), config)
    try:
        assert isinstance(again.optimize(), bool)
    finally:
        again.close()


def test_a_second_process_is_refused_with_wouldblock(tmp_path: Path, shard: Any) -> None:
    code = f"import qdrant_edge as q; q.EdgeShard.load({str(tmp_path / 'shard')!r})"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "WouldBlock" in out.stderr
    assert json.loads((tmp_path / "shard" / "edge_config.json").read_text())["vectors"]
