"""Every stored node of the Merkle tree is held to the records (issue 28 review).

``verify`` used to fold only the right edge of the stored tree (~log n nodes) into a root: a
changed interior ``audit_tree`` row passed, and a later ``audit prove`` of a record under it
failed and blamed the log. The walk now compares each node the records give with the stored
row of the same id (one range read per batch).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from backends.audit import AuditService
from backends.audit.verify import TREE_MISMATCH, verify_chain
from backends.config import Config
from backends.stores.audit_log import merkle


def _log(home: Path, n: int = 20) -> None:
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        for i in range(n):
            service.append("tutor.turn", None, i=i)
    finally:
        service.close()


def _tamper(home: Path, level: int, index: int) -> int:
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    try:
        conn.execute("DROP TRIGGER IF EXISTS audit_tree_no_update")
        node = merkle.stored_index(level, index)
        changed = conn.execute(
            "UPDATE audit_tree SET hash = ? WHERE id = ?", (b"\x07" * 32, node)
        ).rowcount
        assert changed == 1
        return node
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("level", "index", "seq", "named"),
    [
        (0, 4, 5, "the stored leaf of seq 5"),  # leaf 5: interior, far from the right edge
        (1, 2, 6, "level 1, index 2, over seqs 5–6"),
        (2, 0, 4, "level 2, index 0, over seqs 1–4"),
    ],
)
def test_a_changed_interior_tree_node_is_a_tree_mismatch_naming_it(
    tmp_path: Path, level: int, index: int, seq: int, named: str
) -> None:
    home = tmp_path / "home"
    _log(home)
    node = _tamper(home, level, index)
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        result = service.verify()
        assert not result.ok and result.broken is not None, result.line()
        assert result.broken.reason == TREE_MISMATCH
        assert result.broken.seq == seq
        assert named in result.broken.detail and f"node {node}" in result.broken.detail
        assert verify_chain(service.log, service.trust, batch=3).broken == result.broken
    finally:
        service.close()


def test_a_deleted_tree_node_is_named_missing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _log(home)
    conn = sqlite3.connect(home / "audit.sqlite3", isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS audit_tree_no_delete")
    conn.execute("DELETE FROM audit_tree WHERE id = ?", (merkle.stored_index(0, 6),))
    conn.close()
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        broken = service.verify().broken
        assert broken is not None and broken.reason == TREE_MISMATCH and broken.seq == 7
        assert "missing" in broken.detail
    finally:
        service.close()


@pytest.mark.parametrize("n", [1, 2, 7, 64, 100])
def test_an_intact_tree_verifies_in_any_batch_size(tmp_path: Path, n: int) -> None:
    home = tmp_path / "home"
    _log(home, n)
    service = AuditService.open(Config(home=home), checkpoint_every=0)
    try:
        for batch in (1, 3, 64, 4096):
            assert verify_chain(service.log, service.trust, batch=batch).ok
        assert service.log.tree_size() == n
    finally:
        service.close()


def test_append_each_gives_the_stored_nodes_in_order() -> None:
    entries = [f"e{i}".encode() for i in range(37)]
    tree = merkle.MemoryTree(entries)
    edge = merkle.CompactRange()
    made = edge.append_each([merkle.leaf_hash(e) for e in entries[:11]])
    made += edge.append_each([merkle.leaf_hash(e) for e in entries[11:]])
    assert len(made) == merkle.stored_count(37)
    by_id = {merkle.stored_index(lv, ix): h for (lv, ix), h in tree.nodes.items()}
    assert made == [by_id[i] for i in range(len(made))]
    assert all(merkle.stored_index(*merkle.node_at(i)) == i for i in range(len(made)))
    assert edge.root() == tree.root()
