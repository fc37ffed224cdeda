"""The tutor's graph queries on a real Neo4j 5 against the embedded SQLite graph (issue 18).

Two data sets: the shipped corpus's graph (the tutor's own, built from ``resources/kb``) and a
synthetic one of 10,000 entities and 50,000 relations (a fixed seed; a few hubs, a long tail).
For each, on both engines in one run and interleaved query by query: the entity upsert batch
(``replace_scope`` of every relation), 1-hop neighbours by weight, the 2-hop neighbourhood and
the shortest path (≤ 3 hops) between random pairs; on Neo4j also the portable shortest-path
text (what FalkorDB runs) against Neo4j's own ``SHORTEST 1``. Plus the launcher's build and
Neo4j's start time. Neo4j runs in the test harness's launcher (tests/harness/neo4j), here with
the JVM's default JIT and GC (the tests run it C1-only, which starts faster but runs slower).

Run: ``python -m bench.bench_graph`` (``--quick``: the synthetic set at a tenth).
"""

from __future__ import annotations

import functools
import json
import random
import secrets
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.stores.graph import CYPHER, OPERATIONS, Graph, Relation  # noqa: E402
from backends.stores.graph.bolt import BoltGraph  # noqa: E402
from backends.stores.graph.sqlite import SqliteGraph  # noqa: E402
from bench.common import RESULTS, machine, table  # noqa: E402

SCOPE = "shared"
QUERIES = 40  # random anchors (or pairs) per query kind and engine


def corpus_relations(tmp: Path) -> list[Relation]:
    """The shipped corpus's relations, as the tutor builds them (hashing embedder)."""
    from backends.config import Config
    from backends.tutor.service import GRAPH_FILE, TutorService

    home = tmp / "corpus"
    home.mkdir(mode=0o700)
    config = Config(home=home, embedder="hashing", chat_model="scripted").validated()

    def no_audit() -> Any:
        raise RuntimeError("the benchmark asks nothing")

    from backends.models.embedders import HashingEmbedder

    def no_chat() -> Any:
        raise RuntimeError("the benchmark asks nothing")

    service = TutorService(
        config, embedder=HashingEmbedder(), chat=no_chat, audit=no_audit, graph=None
    )
    try:
        service.prepare()
    finally:
        service.close()
    with sqlite3.connect(config.path(GRAPH_FILE)) as conn:
        rows = conn.execute("SELECT a, b, scope, weight, sources FROM relations").fetchall()
    return [Relation(a, b, SCOPE, int(w), tuple(json.loads(s))) for a, b, _, w, s in rows]


def synthetic_relations(entities: int, relations: int, seed: int = 18) -> list[Relation]:
    """``relations`` distinct pairs over ``entities`` names, hubs preferred (Zipf-like)."""
    rng = random.Random(seed)
    names = [f"entity-{i:05d}" for i in range(entities)]
    weights = [1.0 / (i + 1) ** 0.8 for i in range(entities)]
    pairs: set[tuple[str, str]] = set()
    while len(pairs) < relations:
        a, b = rng.choices(names, weights, k=2)
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    return [
        Relation(a, b, SCOPE, rng.randint(1, 40), (f"kb/{a}#{rng.randint(0, 9)}",))
        for a, b in sorted(pairs)
    ]


def _median_ms(fn: Callable[[Any], object], samples: Sequence[Any]) -> float:
    times = []
    for sample in samples:
        started = time.perf_counter()
        fn(sample)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(name: str, relations: list[Relation], graphs: dict[str, Graph]) -> list[dict[str, Any]]:
    """One data set on every engine; queries interleaved engine by engine."""
    rng = random.Random(7)
    entities = sorted({n for r in relations for n in (r.a, r.b)})
    anchors = rng.sample(entities, min(QUERIES, len(entities)))
    pairs = [tuple(rng.sample(entities, 2)) for _ in range(QUERIES)]
    out: dict[str, dict[str, float]] = {engine: {} for engine in graphs}
    for graph in graphs.values():
        if isinstance(graph, BoltGraph):
            graph.bootstrap()  # the schema once, outside the timing (a server's first write)
    for engine, graph in graphs.items():
        started = time.perf_counter()
        graph.replace_scope(SCOPE, relations, secrets.token_hex(32))
        out[engine]["upsert_s"] = time.perf_counter() - started
    kinds: dict[str, Callable[[Graph, Any], object]] = {
        "neighbours_ms": lambda g, a: g.neighbours([a], [SCOPE], limit=20),
        "two_hop_ms": lambda g, a: g.two_hop(a, [SCOPE], limit=50),
        "path_ms": lambda g, p: g.path(p[0], p[1], [SCOPE]),
    }
    for kind, query in kinds.items():
        samples = anchors if kind != "path_ms" else pairs
        for graph in graphs.values():  # warm-up: plans cached, pages in memory
            query(graph, samples[0])
        for engine, graph in graphs.items():
            out[engine][kind] = _median_ms(functools.partial(query, graph), samples)
    neo = graphs.get("neo4j")
    if isinstance(neo, BoltGraph):  # the portable (FalkorDB) shortest-path text on Neo4j
        op = OPERATIONS["path"]

        def portable(p: Any) -> object:
            params = {"ns": neo.namespace, "source": p[0], "target": p[1], "scopes": [SCOPE]}
            return neo._send(op, CYPHER["path"], params)

        portable(pairs[0])
        out["neo4j"]["portable_path_ms"] = _median_ms(portable, pairs)
    rows = []
    labels = {
        "upsert_s": f"{name}: upsert {len(relations):,} relations, {len(entities):,} entities (s)",
        "neighbours_ms": f"{name}: 1-hop neighbours by weight, top 20 (ms, median)",
        "two_hop_ms": f"{name}: 2-hop neighbourhood, top 50 (ms, median)",
        "path_ms": f"{name}: shortest path ≤ 3 hops (ms, median)",
    }
    for kind, label in labels.items():
        rows.append(
            {
                "measure": label + " — Neo4j",
                "value": out["neo4j"][kind],
                "baseline": out["sqlite"][kind],
                "baseline is": "embedded SQLite graph (recursive CTEs)",
            }
        )
    if "portable_path_ms" in out["neo4j"]:
        rows.append(
            {
                "measure": f"{name}: shortest path on Neo4j, SHORTEST 1 (ms, median)",
                "value": out["neo4j"]["path_ms"],
                "baseline": out["neo4j"]["portable_path_ms"],
                "baseline is": "the portable variable-length text (FalkorDB's) on Neo4j",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> dict[str, Any]:
    argv = sys.argv[1:] if argv is None else argv
    scale = 10 if "--quick" in argv else 1
    from tests.harness.servers import (
        NEO4J_SERVER_JVM_FLAGS,
        Neo4jServer,
        ServerStartError,
        build_neo4j_launcher,
        find_java_and_maven,
        free_port,
    )

    found = find_java_and_maven()
    if isinstance(found, str):
        print(f"bench_graph skipped: {found}")
        return {"skipped": found}
    tmp = Path(tempfile.mkdtemp(prefix="custodia-servers-bench-graph-"))
    tmp.chmod(0o755)
    server = None
    try:
        launcher = build_neo4j_launcher(*found)
        server = Neo4jServer(
            launcher,
            tmp,
            free_port(),
            f"bench-{secrets.token_hex(8)}",
            jvm_flags=NEO4J_SERVER_JVM_FLAGS,
        )
        try:
            server.start()
        except ServerStartError as err:
            print(f"bench_graph skipped: Neo4j did not start: {err}")
            return {"skipped": str(err)}
        rows: list[dict[str, Any]] = [
            {
                "measure": f"Neo4j {server.version} {server.edition}: ready after start (s)",
                "value": server.startup_seconds,
                "baseline": "",
                "baseline is": "",
            }
        ]
        sets = {
            "shipped corpus": corpus_relations(tmp),
            f"synthetic {10_000 // scale:,}/{50_000 // scale:,}": synthetic_relations(
                10_000 // scale, 50_000 // scale
            ),
        }
        for i, (name, relations) in enumerate(sets.items()):
            user, password = server.auth
            neo = BoltGraph(
                server.uri, user=user, password=password, namespace=f"bench{i}", timeout=120
            )
            lite = SqliteGraph(tmp / f"graph-{i}.sqlite3", f"bench{i}")
            try:
                rows += measure(name, relations, {"sqlite": lite, "neo4j": neo})
            finally:
                lite.close()
                neo.clear()
                neo.close()
    finally:
        if server is not None:
            server.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(table(rows), flush=True)
    payload = {"machine": machine(), "rows": rows}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "graph.json").write_text(json.dumps(payload, indent=2), encoding="utf-8")
    return payload


if __name__ == "__main__":
    main()
