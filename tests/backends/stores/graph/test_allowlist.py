"""The allow-list itself: every operation a constant with exactly its typed parameters."""

from __future__ import annotations

import re

from backends.stores.graph import (
    CYPHER,
    OPERATIONS,
    SQL,
)


def test_every_operation_is_a_constant_binding_exactly_its_typed_parameters() -> None:
    assert set(CYPHER) == set(SQL) == set(OPERATIONS)
    for name in ("neighbours", "between", "two_hop", "path", "count_entities", "get_digest"):
        assert OPERATIONS[name].access == "read"
    for name in ("merge_entities", "merge_relations", "delete_scope", "set_digest", "clear"):
        assert OPERATIONS[name].access == "write"
    for name, op in OPERATIONS.items():
        assert set(re.findall(r"\$(\w+)", CYPHER[name])) == set(op.params), name
        assert set(re.findall(r":(\w+)", SQL[name])) == set(op.params), name
