"""Is a local Chroma folder's HNSW segment safe to hand to chromadb's native loader?

Why: chromadb's HNSW loader trusts its files. A segment torn by a kill in the middle of a
persist (found by the crash loops: 1 in ~1,000 kills), a truncated ``header.bin`` or a
``data_level0.bin`` full of garbage makes the process die with SIGSEGV — the whole app, with
no chance to say anything. The vector indexes in Chroma are derived data, so the cure is
cheap (rebuild from the source); what is needed is to *see* the damage before loading it.

The files (chromadb 1.x's hnswlib, one folder per segment)::

    header.bin      100 bytes: int32 version (1), then hnswlib's header — u64 offsetLevel0,
                    max_elements, cur_element_count, size_data_per_element, label_offset,
                    offsetData; i32 maxlevel; u32 enterpoint; u64 maxM, maxM0, M;
                    f64 mult; u64 ef_construction
    data_level0.bin per element: u32 count (low 16 bits) + maxM0 u32 neighbour ids, the
                    vector, u64 label
    length.bin      per element: a float32 (the vector's norm; not checked beyond its size)
    link_lists.bin  per element: u32 byte size of its upper-level lists, then the lists —
                    per level, u32 count (low 16 bits) + maxM u32 neighbour ids

The check reads them with numpy (milliseconds for thousands of vectors) and verifies what the
loader relies on: sizes that agree with the header, link counts within bounds, and every
neighbour id inside the index. It does not unpickle ``index_metadata.pickle``.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import NamedTuple

import numpy as np

HEADER = struct.Struct("<iQQQQQQiIQQQdQ")
HEADER_FILE = "header.bin"
MAX_LEVEL = 64
MAX_LINKS = 4096


def segments(chroma_dir: Path) -> list[Path]:
    """The HNSW segment folders under a local Chroma folder."""
    if not chroma_dir.is_dir():
        return []
    return sorted(p.parent for p in chroma_dir.glob(f"*/{HEADER_FILE}"))


def problem(segment: Path) -> str | None:
    """Why ``segment`` would not load safely, or None when it looks sound."""
    try:
        return _problem(segment)
    except (OSError, ValueError, struct.error) as err:
        return f"unreadable: {err}"


class _Header(NamedTuple):
    """``header.bin``'s fields (see the module docstring)."""

    version: int
    offset_level0: int
    max_elements: int
    elements: int
    size_per_element: int
    label_offset: int
    offset_data: int
    max_level: int
    enterpoint: int
    max_m: int
    max_m0: int
    m: int
    mult: float
    ef_construction: int


def _problem(segment: Path) -> str | None:
    raw = (segment / HEADER_FILE).read_bytes()
    if len(raw) != HEADER.size:
        return f"{HEADER_FILE} is {len(raw)} bytes, not {HEADER.size}"
    h = _Header(*HEADER.unpack(raw))
    return _header_problem(h) or _files_problem(segment, h)


def _header_problem(h: _Header) -> str | None:
    """What in the header alone the loader could not survive."""
    if h.version != 1:
        return f"unknown version {h.version}"
    if not (0 < h.m <= MAX_LINKS and 0 < h.max_m <= MAX_LINKS and 0 < h.max_m0 <= MAX_LINKS):
        return "link limits out of range"
    if h.offset_data != 4 + 4 * h.max_m0 or h.label_offset + 8 != h.size_per_element:
        return "element layout does not match the link limits"
    if h.label_offset <= h.offset_data or (h.label_offset - h.offset_data) % 4:
        return "vector size is not whole floats"
    if h.elements > h.max_elements or h.max_elements > 2**31:
        return f"{h.elements} elements in room for {h.max_elements}"
    if not -1 <= h.max_level <= MAX_LEVEL:
        return f"top level {h.max_level}"
    if h.elements and h.enterpoint >= h.elements:
        return f"entry point {h.enterpoint} outside {h.elements} elements"
    return None


def _files_problem(segment: Path, h: _Header) -> str | None:
    """What in the files does not agree with the header."""
    count, size_per_element = h.elements, h.size_per_element
    data = segment / "data_level0.bin"
    data_size = data.stat().st_size
    if data_size % size_per_element or data_size < count * size_per_element:
        return f"data_level0.bin is {data_size} bytes for {count} elements"
    if (segment / "length.bin").stat().st_size < count * 4:
        return "length.bin is shorter than its elements"
    if not count:
        return None
    return _level0_problem(data, h) or _upper_problem(segment / "link_lists.bin", h)


def _level0_problem(data: Path, h: _Header) -> str | None:
    """Level 0's link lists (in ``data_level0.bin``): within bounds, inside the index."""
    count, max_m0 = h.elements, h.max_m0
    level0 = np.fromfile(data, dtype=np.uint8, count=count * h.size_per_element)
    links0 = (
        level0.reshape(count, h.size_per_element)[:, : h.offset_data].copy().view("<u4")
    )  # (count, 1 + maxM0)
    sizes0 = links0[:, 0] & 0xFFFF
    if int(sizes0.max()) > max_m0:
        return "a level-0 link list is longer than allowed"
    used = np.arange(max_m0)[None, :] < sizes0[:, None]
    if used.any() and int(links0[:, 1:][used].max()) >= count:
        return "a level-0 link points outside the index"
    return None


def _upper_problem(links_file: Path, h: _Header) -> str | None:
    """The upper levels' link lists (``link_lists.bin``): each element's byte size possible,
    every list within bounds and inside the index."""
    count, max_m = h.elements, h.max_m
    raw_links = np.fromfile(links_file, dtype=np.uint8)
    block = (max_m + 1) * 4
    blocks: list[np.ndarray] = []
    offset = 0
    for _ in range(count):  # sequential: each element's size says where the next one starts
        if offset + 4 > raw_links.size:
            return "link_lists.bin ends before its last element"
        size = int(raw_links[offset : offset + 4].view("<u4")[0])
        offset += 4
        if size % block or size > block * max(h.max_level, 0) or offset + size > raw_links.size:
            return "an upper-level link list has an impossible length"
        if size:
            blocks.append(raw_links[offset : offset + size])
        offset += size
    if blocks:
        upper = np.concatenate(blocks).view("<u4").reshape(-1, max_m + 1)
        sizes = upper[:, 0] & 0xFFFF
        if int(sizes.max()) > max_m:
            return "an upper-level link list is longer than allowed"
        used = np.arange(max_m)[None, :] < sizes[:, None]
        if used.any() and int(upper[:, 1:][used].max()) >= count:
            return "an upper-level link points outside the index"
    return None
