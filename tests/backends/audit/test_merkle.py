"""RFC 6962 hashing and RFC 9162 proofs, against the published test vectors.

The numbers are transparency-dev/merkle's (``testonly/constants.go``: the 8 leaf inputs, every
complete-subtree hash and every root; ``proof/verify_test.go``: inclusion and consistency
proofs), carried here as data: a proof only our own code accepts does not count.
"""

from __future__ import annotations

import random

import pytest

from backends.stores.audit_log.merkle import (
    EMPTY_ROOT,
    MemoryTree,
    ProofError,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    reference_root,
    verify_consistency,
    verify_inclusion,
)

h = bytes.fromhex

LEAF_INPUTS = [
    h(""),
    h("00"),
    h("10"),
    h("2021"),
    h("3031"),
    h("40414243"),
    h("5051525354555657"),
    h("606162636465666768696a6b6c6d6e6f"),
]

NODE_HASHES = [
    [
        h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
        h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
        h("0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7"),
        h("07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7"),
        h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
        h("4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658"),
        h("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
        h("46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1"),
    ],
    [
        h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
        h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
        h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
        h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
    ],
    [
        h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
    ],
    [h("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328")],
]

#: indexed by tree size, 0..8
ROOTS = [
    h("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
    h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"),
    h("aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77"),
    h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
    h("4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4"),
    h("76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef"),
    h("ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c"),
    h("5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"),
]

#: (leaf number, 1-based as in the Go table; tree size; path)
INCLUSION = [
    (1, 1, []),
    (
        1,
        8,
        [
            h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
        ],
    ),
    (
        6,
        8,
        [
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
            h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        ],
    ),
    (3, 3, [h("fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125")]),
    (
        2,
        5,
        [
            h("6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
        ],
    ),
]

CONSISTENCY = [
    (1, 1, []),
    (
        1,
        8,
        [
            h("96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"),
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"),
        ],
    ),
    (
        6,
        8,
        [
            h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
            h("ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        ],
    ),
    (
        2,
        5,
        [
            h("5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e"),
            h("bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"),
        ],
    ),
    (
        6,
        7,
        [
            h("0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a"),
            h("b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f"),
            h("d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"),
        ],
    ),
]

SOME_HASH = h("abacaba000000000000000000000000000000000000000000060061e00123456")


def test_empty_root() -> None:
    assert ROOTS[0] == EMPTY_ROOT
    assert MemoryTree().root() == ROOTS[0]


def test_every_node_and_root_of_the_vectors() -> None:
    tree = MemoryTree(LEAF_INPUTS)
    for level, hashes in enumerate(NODE_HASHES):
        for index, expected in enumerate(hashes):
            assert tree.nodes[(level, index)] == expected, (level, index)
    for size, expected in enumerate(ROOTS):
        assert tree.root(size) == expected, size
        assert reference_root(LEAF_INPUTS[:size]) == expected, size


@pytest.mark.parametrize(("leaf", "size", "path"), INCLUSION)
def test_inclusion_vectors(leaf: int, size: int, path: list[bytes]) -> None:
    tree = MemoryTree(LEAF_INPUTS)
    assert inclusion_proof(leaf - 1, size, tree.fetch) == path
    verify_inclusion(leaf - 1, size, leaf_hash(LEAF_INPUTS[leaf - 1]), path, ROOTS[size])


@pytest.mark.parametrize(("old", "new", "proof"), CONSISTENCY)
def test_consistency_vectors(old: int, new: int, proof: list[bytes]) -> None:
    tree = MemoryTree(LEAF_INPUTS)
    assert consistency_proof(old, new, tree.fetch) == proof
    verify_consistency(old, new, ROOTS[old], ROOTS[new], proof)


def _inclusion_mutations(
    index: int, size: int, leaf: bytes, path: list[bytes], root: bytes
) -> list[tuple[str, tuple[int, int, bytes, list[bytes], bytes]]]:
    """verify_test.go's corruptInclusionProof, plus a flipped bit in every element."""
    out = [
        ("index - 1", (index - 1, size, leaf, path, root)),
        ("index + 1", (index + 1, size, leaf, path, root)),
        ("index ^ 2", (index ^ 2, size, leaf, path, root)),
        ("size * 2", (index, size * 2, leaf, path, root)),
        ("size / 2", (index, size // 2, leaf, path, root)),
        ("wrong leaf", (index, size, b"WrongLeaf", path, root)),
        ("empty root", (index, size, leaf, path, EMPTY_ROOT)),
        ("random root", (index, size, leaf, path, SOME_HASH)),
        ("trailing garbage", (index, size, leaf, [*path, b""], root)),
        ("trailing root", (index, size, leaf, [*path, root], root)),
        ("preceding garbage", (index, size, leaf, [b"", *path], root)),
        ("preceding root", (index, size, leaf, [root, *path], root)),
    ]
    for i in range(len(path)):
        flipped = list(path)
        flipped[i] = bytes([flipped[i][0] ^ 8]) + flipped[i][1:]
        out.append((f"flipped bit in path[{i}]", (index, size, leaf, flipped, root)))
    if path:
        out.append(("truncated path", (index, size, leaf, path[:-1], root)))
    if len(path) > 1:
        out.append(("inserted element", (index, size, leaf, [path[0], SOME_HASH, *path[1:]], root)))
    return out


@pytest.mark.parametrize(("leaf", "size", "path"), INCLUSION[1:])
def test_mutated_inclusion_proofs_are_rejected(leaf: int, size: int, path: list[bytes]) -> None:
    index, root = leaf - 1, ROOTS[size]
    for what, args in _inclusion_mutations(index, size, leaf_hash(LEAF_INPUTS[index]), path, root):
        with pytest.raises(ProofError):
            verify_inclusion(*args)
            pytest.fail(f"accepted: {what}")


@pytest.mark.parametrize(("old", "new", "proof"), CONSISTENCY[1:])
def test_mutated_consistency_proofs_are_rejected(old: int, new: int, proof: list[bytes]) -> None:
    r1, r2 = ROOTS[old], ROOTS[new]
    probes = [
        ("old - 1", (old - 1, new, r1, r2, proof)),
        ("old + 1", (old + 1, new, r1, r2, proof)),
        ("old ^ 2", (old ^ 2, new, r1, r2, proof)),
        ("new * 2", (old, new * 2, r1, r2, proof)),
        ("new / 2", (old, new // 2, r1, r2, proof)),
        ("wrong old root", (old, new, b"WrongRoot", r2, proof)),
        ("wrong new root", (old, new, r1, b"WrongRoot", proof)),
        ("swapped roots", (old, new, r2, r1, proof)),
        ("empty proof", (old, new, r1, r2, [])),
        ("trailing garbage", (old, new, r1, r2, [*proof, b""])),
        ("trailing old root", (old, new, r1, r2, [*proof, r1])),
        ("trailing new root", (old, new, r1, r2, [*proof, r2])),
        ("preceding garbage", (old, new, r1, r2, [b"", *proof])),
        ("preceding old root", (old, new, r1, r2, [r1, *proof])),
        ("preceding new root", (old, new, r1, r2, [r2, *proof])),
        ("preceding proof[0]", (old, new, r1, r2, [proof[0], *proof])),
        ("truncated", (old, new, r1, r2, proof[:-1])),
    ]
    for i in range(len(proof)):
        flipped = list(proof)
        flipped[i] = bytes([flipped[i][0] ^ 16]) + flipped[i][1:]
        probes.append((f"flipped bit in proof[{i}]", (old, new, r1, r2, flipped)))
    for what, args in probes:
        with pytest.raises(ProofError):
            verify_consistency(*args)
            pytest.fail(f"accepted: {what}")


def test_consistency_edge_cases_as_the_reference_decides() -> None:
    one, two = b"don't care 1", b"don't care 2"
    verify_consistency(0, 0, one, one, [])
    verify_consistency(0, 1, one, two, [])
    verify_consistency(1, 1, two, two, [])
    for args in [
        (1, 1, one, two, []),
        (1, 0, one, two, []),
        (2, 1, one, two, []),
        (1, 2, one, two, []),
        (0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (0, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
        (1, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]),
    ]:
        with pytest.raises(ProofError):
            verify_consistency(*args)  # type: ignore[arg-type]


def test_every_proof_of_every_size_up_to_70_verifies() -> None:
    entries = [f"record {i}".encode() for i in range(70)]
    tree = MemoryTree(entries)
    for size in range(1, 71):
        expected_root = reference_root(entries[:size])
        assert tree.root(size) == expected_root
        for index in range(size):
            path = inclusion_proof(index, size, tree.fetch)
            assert len(path) <= size.bit_length()
            verify_inclusion(index, size, leaf_hash(entries[index]), path, expected_root)
        for old in range(0, size + 1):
            proof = consistency_proof(old, size, tree.fetch)
            verify_consistency(old, size, tree.root(old), expected_root, proof)


def test_a_changed_entry_breaks_consistency() -> None:
    rng = random.Random(7)
    entries = [f"r{i}".encode() for i in range(40)]
    honest = MemoryTree(entries)
    forged_entries = list(entries)
    forged_entries[rng.randrange(20)] = b"rewritten"
    forged = MemoryTree(forged_entries)
    proof = consistency_proof(20, 40, forged.fetch)
    with pytest.raises(ProofError):
        verify_consistency(20, 40, honest.root(20), forged.root(40), proof)


def test_the_storage_numbering_is_the_order_appends_create_nodes() -> None:
    from backends.stores.audit_log.merkle import size_of, stored_count, stored_index

    tree = MemoryTree()
    order: list[tuple[int, int]] = []
    for n in range(300):
        order += [(level, idx) for level, idx, _ in tree.append(str(n).encode())]
        assert stored_count(n + 1) == len(order)
        assert size_of(len(order)) == n + 1
    assert [stored_index(level, idx) for level, idx in order] == list(range(len(order)))


def test_a_compact_range_extended_in_any_pieces_has_the_reference_root() -> None:
    from backends.stores.audit_log.merkle import CompactRange

    entries = [f"e{i}".encode() for i in range(300)]
    leaves = [leaf_hash(e) for e in entries]
    rng = random.Random(28)
    for _ in range(20):
        walk, done = CompactRange(), 0
        while done < len(leaves):
            step = rng.choice([1, 2, 3, 7, 16, 64, 100])
            walk.extend(leaves[done : done + step])
            done = min(done + step, len(leaves))
            assert walk.size == done and walk.root() == reference_root(entries[:done])
    tree = MemoryTree(entries[:77])
    resumed = CompactRange.stored(77, tree.fetch)
    resumed.extend(leaves[77:])
    assert resumed.root() == reference_root(entries)
