"""Hostile graph queries and parameters (CT5) and hostile user scopes in Chroma (CT6).

* The graph adapter runs only its constant texts: any other text — injections, comments,
  the constants with a byte changed, other types — is refused before anything is sent, with
  a typed error; a constant with hostile parameters is refused too, typed, and the graph is
  unchanged either way (the embedded SQLite graph's bytes, the Bolt graph's counts).
* A user name, whatever it holds, either names a scope or is refused with a typed error; a
  search never returns another user's chunk (the scope is inside the Chroma ``where``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from backends.errors import CustodiaEnvironmentError
from backends.models.embedders import HashingEmbedder
from backends.stores.graph import CYPHER, OPERATIONS, SQL, GraphQueryRefused, Relation
from backends.stores.graph.sqlite import SqliteGraph
from tests.reliability.conftest import Figures, tree_bytes
from tests.reliability.hostile import BUDGET, hostile_settings
from tests.reliability.hostile.strategies import json_values, nasty_text

SECRET = "bobs-private-note-7731"


def _mutations(texts: list[str]) -> st.SearchStrategy[str]:
    def mutate(text: str, at: int, extra: str) -> str:
        at = at % (len(text) + 1)
        return text[:at] + extra + text[at:]

    return st.builds(mutate, st.sampled_from(texts), st.integers(0, 10_000), nasty_text)


query_texts = st.one_of(
    nasty_text,
    st.sampled_from(
        [
            "MATCH (n) DETACH DELETE n",
            "MATCH (n) RETURN n",
            "CALL db.labels()",
            "DROP TABLE entities",
            "SELECT * FROM sqlite_master",
        ]
    ),
    _mutations(list(CYPHER.values()) + list(SQL.values())),
    st.sampled_from(list(CYPHER.values()) + list(SQL.values())).map(lambda t: t + " "),
    st.sampled_from(list(CYPHER.values()) + list(SQL.values())).map(str.upper),
    json_values,
)


@pytest.fixture
def sqlite_graph(home: Path) -> Iterator[SqliteGraph]:
    graph = SqliteGraph(home / "graph.sqlite3")
    graph.merge_entities(["warfarin", "inr"])
    graph.merge_relations([Relation("warfarin", "inr", "shared", 3, ("c1",))])
    yield graph
    graph.close()


def _graph_state(graph: Any) -> Any:
    return graph.counts()


@pytest.mark.parametrize("budget", BUDGET)
def test_only_constant_queries_reach_the_graph(
    budget: str, sqlite_graph: SqliteGraph, home: Path, figures: Figures
) -> None:
    constants = set(CYPHER.values()) | set(SQL.values())
    before_counts = _graph_state(sqlite_graph)

    @hostile_settings(budget, 150)
    @given(text=query_texts, parameters=st.dictionaries(st.text(max_size=8), json_values))
    @example(text="MATCH (n) DETACH DELETE n", parameters={})
    @example(text=SQL["clear"] + "; DROP TABLE x", parameters={"ns": "custodia"})
    def check(text: Any, parameters: dict[str, Any]) -> None:
        figures.add("hostile", "graph query texts", "inputs")
        before = tree_bytes(home)
        if isinstance(text, str) and text in constants:
            return
        with pytest.raises(GraphQueryRefused) as caught:  # a bug, not the environment
            sqlite_graph.execute(text, parameters)
        assert not isinstance(caught.value, CustodiaEnvironmentError)
        assert "refused" in str(caught.value)
        figures.add("hostile", "graph query texts", "refused")
        assert tree_bytes(home) == before

    check()
    assert _graph_state(sqlite_graph) == before_counts


@pytest.mark.parametrize("budget", BUDGET)
def test_hostile_parameters_of_constant_queries_are_refused_typed(
    budget: str, sqlite_graph: SqliteGraph, home: Path, figures: Figures
) -> None:
    reads = sorted(name for name, op in OPERATIONS.items() if op.access == "read")
    before_counts = _graph_state(sqlite_graph)

    @hostile_settings(budget, 150)
    @given(
        name=st.sampled_from(reads),
        parameters=st.dictionaries(
            st.sampled_from(["ns", "names", "scopes", "name", "source", "target", "limit", "x"]),
            json_values | nasty_text | st.lists(nasty_text, max_size=60),
            max_size=5,
        ),
    )
    def check(name: str, parameters: dict[str, Any]) -> None:
        figures.add("hostile", "graph query parameters", "inputs")
        before = tree_bytes(home)
        try:
            rows = sqlite_graph.execute(SQL[name], parameters)
        except CustodiaEnvironmentError as err:
            assert str(err).strip()
            figures.add("hostile", "graph query parameters", "refused")
        else:
            assert isinstance(rows, list)
        assert tree_bytes(home) == before

    check()
    assert _graph_state(sqlite_graph) == before_counts


@pytest.fixture
def tutor(config: Any, tmp_path: Path) -> Iterator[Any]:
    from backends.audit.service import AuditService
    from backends.models.chat import ScriptedChat
    from backends.tutor.service import TutorService
    from tests.backends.tutor.conftest import make_small_kb

    audit = AuditService.open(config)
    service = TutorService(
        config,
        embedder=HashingEmbedder(384),
        chat=ScriptedChat(),
        audit=audit,
        kb_dir=make_small_kb(tmp_path),
        namespace=f"h{uuid.uuid4().hex[:8]}",
    )
    service.prepare()
    notes = tmp_path / "bob"
    notes.mkdir()
    (notes / "bob.md").write_text(
        f"# Bob's note\n\n{SECRET}: warfarin and INR monitoring for Bob only. " * 3
    )
    service.import_path(notes, "bob")
    yield service
    service.close()
    audit.close()


@pytest.mark.parametrize("budget", BUDGET)
def test_a_hostile_user_never_sees_another_users_notes(
    budget: str, tutor: Any, figures: Figures
) -> None:
    assert any(SECRET in p.text for p in tutor.retrieve("warfarin INR monitoring", "bob").passages)

    @hostile_settings(budget, 25)
    @given(user=nasty_text | st.sampled_from(["*", "user:bob", "shared", "bob\x00", "%", ""]))
    @example(user="user:bob")
    @example(user='bob"}]')
    def check(user: str) -> None:
        figures.add("hostile", "user scopes (Chroma where)", "inputs")
        if user.strip() == "bob":
            return  # that is bob
        try:
            result = tutor.retrieve(f"{SECRET} warfarin INR monitoring", user)
        except CustodiaEnvironmentError as err:
            assert str(err).strip()
            figures.add("hostile", "user scopes (Chroma where)", "refused")
            return
        assert not [p for p in result.passages if SECRET in p.text], user

    check()


def test_the_bolt_adapter_refuses_before_connecting(figures: Figures) -> None:
    """The same guard on the Bolt adapter: nothing listens on port 1, yet no query reaches
    the network — the refusal comes first."""
    from backends.stores.graph.bolt import BoltGraph

    graph = BoltGraph("bolt://127.0.0.1:1", timeout=0.2)
    try:
        for text in ("MATCH (n) DETACH DELETE n", CYPHER["clear"] + " //", "", None, 42):
            figures.add("hostile", "graph query texts", "inputs")
            with pytest.raises(GraphQueryRefused, match="refused"):  # a bug, never sent
                graph.execute(text, {})  # type: ignore[arg-type]
        assert graph._driver is None  # never even built a driver
    finally:
        graph.close()
