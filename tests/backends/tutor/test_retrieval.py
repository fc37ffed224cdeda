"""Retrieval: scope isolation shown on the queries themselves (CT6), keyword search, fusion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from backends.tutor.fusion import Hit, rrf
from backends.tutor.kb import scope_filter
from backends.tutor.keyword import fts_query
from backends.tutor.service import TutorService
from tests.backends.tutor.conftest import write_note

SECRET = "Zebrafish protocol Q: on ward seven warfarin reversal starts with protocol Q and gout."


class QuerySpy:
    """Wraps the real Chroma collection and records the arguments of every ``query``."""

    def __init__(self, collection: Any) -> None:
        self._collection = collection
        self.queries: list[dict[str, Any]] = []

    def query(self, **kwargs: Any) -> Any:
        self.queries.append(kwargs)
        return self._collection.query(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)


@pytest.fixture
def shared_and_private(tutor: TutorService, tmp_path: Path) -> dict[str, set[str]]:
    """Ana's private note (the secret) and Bob's; the chunk ids of each."""
    ana = tutor.import_path(write_note(tmp_path / "ana", "ward.md", "Ward notes", SECRET), "ana")
    bob = tutor.import_path(
        write_note(
            tmp_path / "bob", "mine.md", "Bob's notes", "Bob likes INR charts and metformin."
        ),
        "bob",
    )
    return {"ana": set(ana.chunks_added), "bob": set(bob.chunks_added)}


def test_a_user_never_retrieves_another_users_chunk(
    tutor: TutorService, shared_and_private: dict[str, set[str]]
) -> None:
    ana_chunks = shared_and_private["ana"]
    spy = QuerySpy(tutor.vectors.collection)
    tutor.vectors._collection = spy

    # Bob asks Ana's note word for word: every method is asked for Bob's scopes only.
    retrieval = tutor.retrieve(SECRET, "bob", k=10, candidates=50)
    assert spy.queries[-1]["where"] == {"scope": {"$in": ["shared", "user:bob"]}}
    assert retrieval.trace["keyword"]["scopes"] == ["shared", "user:bob"]
    assert retrieval.trace["graph"]["scopes"] == ["shared", "user:bob"]
    for method, ids in retrieval.methods.items():
        assert ids, method
        assert not set(ids) & ana_chunks, method
    assert {p.scope for p in retrieval.passages} <= {"shared", "user:bob"}

    # The filter, not an empty index, kept it out: unfiltered, Chroma ranks Ana's chunk first.
    vector = tutor.embedder.embed(SECRET)
    raw = tutor.vectors.collection.query(query_embeddings=vector[None, :], n_results=1)
    assert raw["ids"][0][0] in ana_chunks

    # Ana finds her own note first, by every method, and Bob's never.
    mine = tutor.retrieve(SECRET, "ana", k=10, candidates=50)
    assert spy.queries[-1]["where"] == {"scope": {"$in": ["shared", "user:ana"]}}
    assert mine.passages[0].chunk_id in ana_chunks
    assert mine.passages[0].methods == ("vector", "keyword", "graph")
    assert not {p.chunk_id for p in mine.passages} & shared_and_private["bob"]

    # Without a user only the shared corpus is searched.
    anonymous = tutor.retrieve(SECRET, None, k=10, candidates=50)
    assert spy.queries[-1]["where"] == {"scope": {"$in": ["shared"]}}
    assert {p.scope for p in anonymous.passages} == {"shared"}


def test_the_graph_relations_of_a_private_note_stay_in_its_scope(
    tutor: TutorService, shared_and_private: dict[str, set[str]]
) -> None:
    graph = tutor.graph
    ana = {n.target for n in graph.neighbours(["gout"], ["shared", "user:ana"])}
    bob = {n.target for n in graph.neighbours(["gout"], ["shared", "user:bob"])}
    assert "warfarin" in ana and "warfarin" not in bob
    assert graph.counts().relations.keys() >= {"shared", "user:ana", "user:bob"}


def test_vector_search_checks_the_dimension(tutor: TutorService) -> None:
    from backends.errors import DimensionMismatchError

    with pytest.raises(DimensionMismatchError):
        tutor.search_vectors(np.zeros(12, dtype=np.float32), ["shared"], 3)
    assert scope_filter(["shared", "user:x"]) == {"scope": {"$in": ["shared", "user:x"]}}


def test_keyword_queries_are_quoted_words_bound_as_a_parameter(tutor: TutorService) -> None:
    assert fts_query("What is the INR for warfarin?") == '"inr" OR "warfarin"'
    assert fts_query("the of and") == ""
    hostile = 'warfarin" OR chunks_fts MATCH "*" NEAR(a b) -- \'; DROP TABLE chunks;'
    query = fts_query(hostile)
    assert all(part.startswith('"') and part.endswith('"') for part in query.split(" OR "))
    hits = tutor.keyword.search(hostile, ["shared"], 5)
    assert hits and tutor.keyword.last_parameters["query"] == query
    assert tutor.kb.stats().chunks > 0  # still there
    assert tutor.keyword.search("???", ["shared"], 5) == []


def test_keyword_search_ranks_the_note_named_in_the_question(tutor: TutorService) -> None:
    hits = tutor.keyword.search("metformin lactic acidosis", ["shared"], 3)
    assert hits[0].chunk_id.startswith("kb/metformin#")
    assert hits[0].score >= hits[-1].score


def test_reciprocal_rank_fusion_keeps_why_each_chunk_was_found() -> None:
    fused = rrf(
        {
            "vector": [Hit("a", 0.9, "similarity 0.90"), Hit("b", 0.8), Hit("a", 0.1)],
            "keyword": [Hit("b", 7.0, "bm25 7.00"), Hit("c", 3.0)],
            "graph": [Hit("c", 2.0, "warfarin — INR")],
        },
        k=60,
    )
    assert [f.chunk_id for f in fused] == ["b", "c", "a"]
    b = fused[0]
    assert b.score == pytest.approx(1 / 62 + 1 / 61)
    assert [(r.method, r.rank) for r in b.reasons] == [("vector", 2), ("keyword", 1)]
    c = fused[1]
    assert c.reasons[1].line() == "graph #1 (warfarin — INR)"
    # a repeated chunk counts once, at its best rank
    assert [(r.method, r.rank) for r in fused[2].reasons] == [("vector", 1)]
    weighted = rrf({"vector": [Hit("a", 1)], "graph": [Hit("g", 1)]}, weights={"graph": 0.3})
    assert [f.chunk_id for f in weighted] == ["a", "g"]
    assert rrf({"vector": [Hit("a", 1), Hit("b", 1)]}, limit=1)[0].chunk_id == "a"
