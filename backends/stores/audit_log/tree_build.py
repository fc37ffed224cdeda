"""Building the Merkle tree (CT10) of the records a log's stored tree does not cover yet.

A log written before the tree existed (or copied by an older release) has records and no
tree, or a shorter one. Every engine builds it the same way: in transactions of ``batch``
leaves, each taking the log's write lock, so a build stopped anywhere (kill -9 included)
resumes where it stopped and appends meanwhile wait for one batch at most. The loop and its
progress live here once; each engine supplies the batch (:meth:`TreeBuild._tree_batch`).
"""

from __future__ import annotations

from typing import ClassVar

from backends.i18n import _
from backends.progress import Progress
from backends.stores.audit_log import Head


class TreeBuild:
    """The tree-building half of an audit log (mixed into each engine's class)."""

    #: leaves per transaction when an existing log's tree is built
    TREE_BATCH: ClassVar[int] = 50_000

    # -- what each engine supplies -----------------------------------------------------------
    def head(self) -> Head:
        raise NotImplementedError

    def tree_size(self) -> int:
        raise NotImplementedError

    def _can_build_tree(self) -> bool:
        """Whether this log may grow its tree (it has the table, and may write)."""
        raise NotImplementedError

    def _tree_batch(self, batch: int) -> tuple[int, int]:
        """One transaction: the tree's nodes for up to ``batch`` records after the leaves it
        holds; returns (the leaves it held, the leaves added). A gap in the records raises."""
        raise NotImplementedError

    # -- the loop ------------------------------------------------------------------------------
    def build_tree(self, progress: Progress | None = None, *, batch: int = 0) -> int:
        """Build the tree of the records it does not cover yet, in transactions of ``batch``
        leaves (resumable); returns how many leaves were added."""
        if not self._can_build_tree():
            return 0
        head, size = self.head().seq, self.tree_size()
        if size >= head:
            return 0
        progress = progress or Progress()
        batch = batch or self.TREE_BATCH
        progress.start(head - size, _("building the audit log's Merkle tree"))
        done = 0
        while True:
            progress.check()
            size, added = self._tree_batch(batch)
            if not added:
                return done
            done += added
            progress.advance(added, f"{size + added}/{head}")
