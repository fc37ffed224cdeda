"""A Neo4j that went away and came back (issue 18): the Bolt adapter probes it again.

The harness's restart brings the server back with a fresh, empty database — as a restore, a
recreated database or another server on the same address would. After a lost connection the
adapter must not trust what it learnt before: it probes the server again (its dialect) and runs
the idempotent bootstrap again before the next write, so the constraints exist on the new one.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from backends.stores.graph import GraphUnavailableError, Relation
from backends.stores.graph.bolt import NEO4J_5, BoltGraph
from tests.harness.servers import Neo4jServer

S = "shared"


@pytest.mark.server
def test_a_restarted_server_is_probed_and_bootstrapped_again(
    neo4j_server: Neo4jServer, neo4j_driver: Any
) -> None:
    user, password = neo4j_server.auth
    graph = BoltGraph(
        neo4j_server.uri,
        user=user,
        password=password,
        namespace=f"restart-{uuid.uuid4().hex[:8]}",
        timeout=10,
    )
    try:
        graph.merge_entities(["a"])  # probed, bootstrapped
        assert graph.dialect is NEO4J_5
        neo4j_server.stop()
        started = time.perf_counter()
        with pytest.raises(GraphUnavailableError, match="not reachable"):
            graph.counts()
        assert time.perf_counter() - started < 60
        neo4j_server.start()  # a new, empty database on the same port
        graph.replace_scope(S, [Relation("a", "b", S, 1, ("c:a-b",))], "1" * 64)
        assert graph.counts().relations == {S: 1}
        assert graph.dialect is NEO4J_5
        records, _, _ = neo4j_driver.execute_query("SHOW CONSTRAINTS YIELD name")
        assert {"custodia_entity_key", "custodia_meta_key"} <= {r["name"] for r in records}
    finally:
        neo4j_server.ensure_running()
        graph.clear()
        graph.close()
