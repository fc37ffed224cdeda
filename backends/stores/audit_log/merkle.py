"""The Merkle tree beside the chain (SPEC CT10): RFC 6962 §2.1 hashing, RFC 9162 proofs.

The chain (CT2) proves the log to whoever holds all of it; the tree lets someone holding one
record, or two checkpoints, check that record's place or that the log only grew — with the
transparency-log ecosystem's own tools. Hashing, exactly as RFC 6962::

    leaf(entry)  = SHA-256(0x00 ‖ entry)      entry = the record's canonical text, UTF-8
    node(l, r)   = SHA-256(0x01 ‖ l ‖ r)      leaf index = seq − 1
    root(empty)  = SHA-256("")

Stores keep every *complete* subtree hash, keyed ``(level, index)``: the node at level ``L``
and index ``i`` covers leaves ``[i·2^L, (i+1)·2^L)``. Appending leaf ``i`` adds it and the
parents it completes (one on average, at most log n): :func:`completed`. Any root or proof is
then a fold of O(log n) stored nodes: the functions here first *plan* which nodes they need
(one batched lookup, ``fetch``) and then hash. Verification (:func:`verify_inclusion`,
:func:`verify_consistency`) follows RFC 9162 §2.1.3.2 and §2.1.4.2 step by step.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from hashlib import sha256

from backends.i18n import _

HASH_SIZE = 32
EMPTY_ROOT = sha256(b"").digest()

#: ``(level, index)`` of a complete subtree
NodeId = tuple[int, int]
#: looks up stored complete-subtree hashes (one call per root or proof); missing ids are absent
Fetch = Callable[[Collection[NodeId]], Mapping[NodeId, bytes]]


class ProofError(ValueError):
    """A proof that does not verify (or a request no proof exists for)."""


class TreeIncomplete(LookupError):
    """The store lacks a node the computation needs (the tree is not built that far)."""


def leaf_hash(entry: bytes) -> bytes:
    return sha256(b"\x00" + entry).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (``n`` > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


# -- planning: which complete subtrees a range is made of ------------------------------------
def range_nodes(start: int, end: int) -> list[NodeId]:
    """The complete subtrees covering leaves ``[start, end)``, largest first.

    For the ranges RFC 6962's recursion produces (``start`` aligned to the subtree they sit in)
    the range's hash is these nodes folded from the right (:func:`fold`).
    """
    out: list[NodeId] = []
    s = start
    while s < end:
        size = 1 << ((end - s).bit_length() - 1)  # the largest power of two that fits
        if s:
            size = min(size, s & -s)  # ...and that ``s`` is aligned to
        level = size.bit_length() - 1
        out.append((level, s >> level))
        s += size
    return out


def fold(hashes: Sequence[bytes]) -> bytes:
    """MTH of a range from its complete subtrees (largest first): folded from the right."""
    if not hashes:
        return EMPTY_ROOT
    h = hashes[-1]
    for left in reversed(hashes[:-1]):
        h = node_hash(left, h)
    return h


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make PATH(index, D[0:size]), leaf level first (RFC 6962 §2.1.1)."""
    if not 0 <= index < size:
        raise ProofError(
            _("no leaf {index} in a tree of size {size}").format(index=index, size=size)
        )
    ranges: list[tuple[int, int]] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            lo += k
    ranges.reverse()
    return ranges


def consistency_ranges(old: int, new: int) -> list[tuple[int, int]]:
    """The ranges whose hashes make PROOF(old, D[0:new]) (RFC 6962 §2.1.2), in proof order."""
    if not 0 <= old <= new:
        raise ProofError(
            _("no consistency proof from size {old} to size {new}").format(old=old, new=new)
        )
    if old == 0 or old == new:
        return []
    # SUBPROOF(m, D[lo:hi], b), unrolled; the recursion appends after its sub-call, so the
    # ranges collected top-down are reversed at the end.
    ranges: list[tuple[int, int]] = []
    m, lo, hi, whole = old, 0, new, True
    while True:
        n = hi - lo
        if m == n:
            if not whole:
                ranges.append((lo, hi))
            break
        k = _split(n)
        if m <= k:
            ranges.append((lo + k, hi))
            hi = lo + k
        else:
            ranges.append((lo, lo + k))
            m -= k
            lo += k
            whole = False
    ranges.reverse()
    return ranges


def _hash_ranges(ranges: Iterable[tuple[int, int]], fetch: Fetch) -> list[bytes]:
    plans = [range_nodes(s, e) for s, e in ranges]
    wanted = {node for plan in plans for node in plan}
    found = fetch(wanted) if wanted else {}
    missing = wanted.difference(found)
    if missing:
        raise TreeIncomplete(f"the tree lacks {len(missing)} nodes, e.g. {min(missing)}")
    return [fold([found[node] for node in plan]) for plan in plans]


def root(size: int, fetch: Fetch) -> bytes:
    """MTH(D[0:size]) from stored nodes."""
    return _hash_ranges([(0, size)], fetch)[0] if size else EMPTY_ROOT


def inclusion_proof(index: int, size: int, fetch: Fetch) -> list[bytes]:
    """The audit path of leaf ``index`` in the tree of ``size`` leaves."""
    return _hash_ranges(inclusion_ranges(index, size), fetch)


def consistency_proof(old: int, new: int, fetch: Fetch) -> list[bytes]:
    """The consistency proof from the tree of ``old`` leaves to the tree of ``new``."""
    return _hash_ranges(consistency_ranges(old, new), fetch)


# -- appending ---------------------------------------------------------------------------
def completed(
    index: int, leaf: bytes, left_sibling: Callable[[int, int], bytes]
) -> list[tuple[int, int, bytes]]:
    """``(level, index, hash)`` of leaf ``index`` and of every parent it completes.

    ``left_sibling(level, index)`` returns a stored complete node (always one to the left of
    the new one, so it exists when the tree is complete up to ``index``).
    """
    out = [(0, index, leaf)]
    h, level, i = leaf, 0, index
    while i & 1:
        h = node_hash(left_sibling(level, i - 1), h)
        level += 1
        i >>= 1
        out.append((level, i, h))
    return out


class MemoryTree:
    """Every complete subtree of a list of leaves, in memory (tests, read-only fallbacks)."""

    def __init__(self, entries: Iterable[bytes] = ()) -> None:
        self.nodes: dict[NodeId, bytes] = {}
        self.size = 0
        for entry in entries:
            self.append(entry)

    def append(self, entry: bytes) -> list[tuple[int, int, bytes]]:
        return self.append_leaf(leaf_hash(entry))

    def append_leaf(self, leaf: bytes) -> list[tuple[int, int, bytes]]:
        added = completed(self.size, leaf, lambda lv, ix: self.nodes[(lv, ix)])
        for level, idx, h in added:
            self.nodes[(level, idx)] = h
        self.size += 1
        return added

    def fetch(self, ids: Collection[NodeId]) -> dict[NodeId, bytes]:
        return {i: self.nodes[i] for i in ids if i in self.nodes}

    def root(self, size: int | None = None) -> bytes:
        return root(self.size if size is None else size, self.fetch)


def reference_root(entries: Sequence[bytes]) -> bytes:
    """MTH by the RFC's recursive definition (slow: for tests only)."""
    n = len(entries)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaf_hash(entries[0])
    k = _split(n)
    return node_hash(reference_root(entries[:k]), reference_root(entries[k:]))


# -- verifying (RFC 9162 §2.1.3.2, §2.1.4.2) ---------------------------------------------
def _check_hashes(*hashes: bytes) -> None:
    for h in hashes:
        if len(h) != HASH_SIZE:
            raise ProofError(
                _("a hash of {count} bytes (expected {expected})").format(
                    count=len(h), expected=HASH_SIZE
                )
            )


def root_from_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes:
    """The root that ``path`` leads to from ``leaf`` at ``index`` in a tree of ``size``."""
    if not 0 <= index < size:
        raise ProofError(
            _("index {index} is not in a tree of size {size}").format(index=index, size=size)
        )
    _check_hashes(leaf, *path)
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            raise ProofError(_("the audit path is longer than the tree is deep"))
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(_("the audit path is shorter than the tree is deep"))
    return r


def verify_inclusion(
    index: int, size: int, leaf: bytes, path: Sequence[bytes], expected_root: bytes
) -> None:
    """Raise :class:`ProofError` unless leaf ``index`` with ``path`` yields ``expected_root``."""
    _check_hashes(expected_root)
    if root_from_inclusion(index, size, leaf, path) != expected_root:
        raise ProofError(
            _("the audit path of leaf {index} does not lead to the tree's root").format(index=index)
        )


def verify_consistency(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> None:
    """Raise :class:`ProofError` unless the tree of ``new`` leaves extends the one of ``old``."""
    if _settled_by_sizes(old, new, old_root, new_root, proof):
        return
    _check_hashes(old_root, new_root, *proof)
    fr, sr = _roots_from_consistency(old, new, old_root, proof)
    if fr != old_root:
        raise ProofError(_("the proof does not lead to the old root (size {old})").format(old=old))
    if sr != new_root:
        raise ProofError(_("the proof does not lead to the new root (size {new})").format(new=new))


def _settled_by_sizes(
    old: int, new: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]
) -> bool:
    """True when the sizes alone settle a consistency proof (equal sizes, or from the empty
    tree); raises :class:`ProofError` for what they rule out; False: the proof is walked."""
    if not 0 <= old <= new:
        raise ProofError(
            _("size {new} is smaller than size {old}: the log shrank").format(new=new, old=old)
        )
    if old == new:
        if proof:
            raise ProofError(_("a proof between equal sizes must be empty"))
        if old_root != new_root:
            raise ProofError(_("two different roots for the same size {old}").format(old=old))
        return True
    if old == 0:
        if proof:
            raise ProofError(_("a proof from the empty tree must be empty"))
        return True
    if not proof:
        raise ProofError(_("an empty consistency proof"))
    return False


def _roots_from_consistency(
    old: int, new: int, old_root: bytes, proof: Sequence[bytes]
) -> tuple[bytes, bytes]:
    """The old and the new roots a consistency proof between ``0 < old < new`` leads to
    (RFC 9162, 2.1.4.2); raises :class:`ProofError` when its length does not fit."""
    path = list(proof)
    if old & (old - 1) == 0:  # old is a power of two: its root is a node of the new tree
        path.insert(0, old_root)
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError(_("the consistency proof is too long"))
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError(_("the consistency proof is too short"))
    return fr, sr


_digest = operator.methodcaller("digest")
_NODE = b"\x01"


def _block_root(level: list[bytes]) -> bytes:
    """The root of a complete subtree (a power-of-two list of hashes), one level at a time."""
    while len(level) > 1:
        pairs = map(operator.add, level[0::2], level[1::2])
        level = list(map(_digest, map(sha256, map(_NODE.__add__, pairs))))
    return level[0]


class CompactRange:
    """The right edge of a growing tree: one hash per set bit of its size (a "compact range"
    from the left). Appending is O(1) amortised, the root a fold of O(log n) hashes; a verifier
    walking the records rebuilds the root without any stored node."""

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()) -> None:
        sizes = [1 << (b) for b in reversed(range(size.bit_length())) if size >> b & 1]
        if len(sizes) != len(hashes):
            raise ValueError(f"a compact range of size {size} has {len(sizes)} hashes")
        self.size = size
        self._sizes = sizes
        self._hashes = list(hashes)

    @classmethod
    def stored(cls, size: int, fetch: Fetch) -> CompactRange:
        """The range of the first ``size`` leaves from a store's nodes."""
        ids = range_nodes(0, size)
        found = fetch(ids) if ids else {}
        if any(i not in found for i in ids):
            raise TreeIncomplete(f"the tree lacks the nodes of size {size}")
        return cls(size, [found[i] for i in ids])

    def extend(self, leaves: Iterable[bytes]) -> None:
        """Append leaf hashes. Whole aligned blocks are reduced level by level through ``map``
        (the hashing loop runs in C, not a Python frame per node): a verifier walking a
        million records pays little more than the SHA-256 work itself."""
        items = leaves if isinstance(leaves, list) else list(leaves)
        i, n = 0, len(items)
        while i < n:
            k = (n - i).bit_length() - 1
            if self.size:
                k = min(k, (self.size & -self.size).bit_length() - 1)
            block = 1 << k
            self._push(_block_root(items[i : i + block]) if block > 1 else items[i], block)
            i += block

    def _push(self, h: bytes, block: int) -> None:
        sizes, hashes = self._sizes, self._hashes
        self.size += block
        while sizes and sizes[-1] == block:
            sizes.pop()
            h = node_hash(hashes.pop(), h)
            block <<= 1
        sizes.append(block)
        hashes.append(h)

    def root(self) -> bytes:
        return fold(self._hashes)

    def append_each(self, leaves: Iterable[bytes]) -> list[bytes]:
        """Append leaf hashes one by one; returns every node the appends complete, in stored
        order (each leaf, then the parents it completes): the hashes the store must hold at
        ids ``stored_count(size)`` onwards, so a verifier compares them with one range read."""
        out: list[bytes] = []
        sizes, hashes = self._sizes, self._hashes
        for leaf in leaves:
            h, block = leaf, 1
            out.append(h)
            while sizes and sizes[-1] == block:
                sizes.pop()
                h = sha256(_NODE + hashes.pop() + h).digest()
                out.append(h)
                block <<= 1
            sizes.append(block)
            hashes.append(h)
            self.size += 1
        return out


# -- storage layout: one integer per node, in the order appends create them -------------------
def stored_index(level: int, index: int) -> int:
    """Where node ``(level, index)`` sits when nodes are numbered in the order appending
    creates them (post-order, as Go's sumdb ``tlog.StoredHashIndex``): appending a leaf adds
    it and its completed parents as *consecutive* numbers after every earlier node, so a store
    keyed by this number only ever appends at its end (one page per commit)."""
    last = ((index + 1) << level) - 1  # the leaf whose append creates this node
    return 2 * last - last.bit_count() + level


def node_at(stored: int) -> NodeId:
    """The node ``(level, index)`` stored at ``stored`` (the inverse of :func:`stored_index`)."""
    leaf = size_of(stored)  # the leaf whose append stored it
    level = stored - stored_count(leaf)
    return level, leaf >> level


def stored_count(size: int) -> int:
    """How many nodes a tree of ``size`` leaves stores."""
    return 2 * size - size.bit_count()


def size_of(count: int) -> int:
    """The tree size whose nodes number ``count`` (the inverse of :func:`stored_count`)."""
    lo, hi = count // 2, count
    while lo < hi:  # stored_count is strictly increasing
        mid = (lo + hi + 1) // 2
        if stored_count(mid) <= count:
            lo = mid
        else:
            hi = mid - 1
    return lo
