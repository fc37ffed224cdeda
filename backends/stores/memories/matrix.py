"""The searchable memories as a matrix: what a search compares a query with.

The store (:mod:`backends.stores.memories.sqlite`) keeps the searchable rows of its file in
memory as unit float32 vectors, one row per text (int8 codes instead when the store is large,
:mod:`backends.stores.memories.quantised`), and keeps them in step with the file. This module
holds what does not depend on the file: checking and normalising a vector, reading the rows
of a full load block by block, and growing the matrix.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from backends.errors import DimensionMismatchError, InvalidVectorError
from backends.stores.memories import Vector
from backends.stores.memories.quantised import CodesBuilder

#: rows read from the table at a time by a full load
BLOCK = 4096


def unit_vector(vector: npt.ArrayLike, dimension: int, where: str, *, zero: bool = False) -> Vector:
    """The vector, normalised; :class:`InvalidVectorError` for anything that is not one
    finite vector of ``dimension`` (an all-zero one too, unless ``zero``: it has no
    direction)."""
    try:
        with np.errstate(over="ignore"):  # too big for float32 becomes inf: refused below
            array = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise InvalidVectorError(f"{where}: not a vector of numbers ({err})") from None
    if array.ndim == 2 and array.shape[0] == 1:
        array = array[0]
    if array.ndim != 1:
        raise InvalidVectorError(
            f"{where}: expected one vector, got an array of shape {array.shape}"
        )
    if array.shape[0] != dimension:
        raise DimensionMismatchError(dimension, int(array.shape[0]), where)
    if not np.isfinite(array).all():
        raise InvalidVectorError(f"{where}: the vector has NaN or infinite values")
    wide = array.astype(np.float64)  # float32 squares overflow above ~1e19
    norm = float(np.linalg.norm(wide))
    if norm == 0 and not zero:
        raise InvalidVectorError(
            f"{where}: the vector is all zeros (nothing in the text to compare)"
        )
    return (wide / norm).astype(np.float32) if norm > 0 else array


def grown(matrix: Vector, needed: int) -> Vector:
    """A copy with at least ``needed`` rows: capacity doubles (amortised O(1) appends)."""
    capacity = max(needed, 2 * matrix.shape[0], 1024)
    out = np.empty((capacity, matrix.shape[1]), dtype=np.float32)
    out[: matrix.shape[0]] = matrix
    return out


@dataclass
class Loaded:
    """What a full load read: the unit rows (or the int8 codes being built), their texts in
    row order, and the rows of the right shape whose values are not finite."""

    matrix: Vector
    builder: CodesBuilder | None
    texts: list[str] = field(default_factory=list)
    bad_rows: set[str] = field(default_factory=set)


def load_rows(
    cursor: sqlite3.Cursor, dimension: int, model: str, count: int, *, quantise: bool
) -> Loaded:
    """Read ``(texto, dimension, vector, embedder)`` rows of ``dimension`` from ``cursor``
    into a matrix of unit rows sized for ``count`` (or int8 codes, when ``quantise``); rows of
    another model or of a wrong length are left out, non-finite ones noted as bad."""
    capacity = 0 if quantise else max(1024, int(count * 1.25))
    loaded = Loaded(
        np.empty((capacity, dimension), dtype=np.float32),
        CodesBuilder(dimension) if quantise else None,
    )
    n = 0
    while rows := cursor.fetchmany(BLOCK):
        good = [
            r
            for r in rows
            if isinstance(r[2], bytes)
            and len(r[2]) == dimension * 4
            and not (r[3] and model and r[3] != model)
        ]
        if not good:
            continue
        block = np.frombuffer(b"".join(r[2] for r in good), dtype="<f4").reshape(
            len(good), dimension
        )
        # squared norms: one pass, and NaN/inf in a row shows up in its sum
        squares = np.einsum("ij,ij->i", block, block)
        finite = np.isfinite(squares)
        if not finite.all():
            loaded.bad_rows.update(r[0] for r, ok in zip(good, finite, strict=True) if not ok)
            good = [r for r, ok in zip(good, finite, strict=True) if ok]
            block, squares = block[finite], squares[finite]
        squares[squares == 0] = 1.0
        inverse = (1.0 / np.sqrt(squares)).astype(np.float32)
        if loaded.builder is not None:
            loaded.builder.add(block * inverse[:, None])
        else:
            if n + len(good) > loaded.matrix.shape[0]:  # rows added since the count
                loaded.matrix = grown(loaded.matrix, n + len(good))
            np.multiply(block, inverse[:, None], out=loaded.matrix[n : n + len(good)])
        loaded.texts.extend(r[0] for r in good)
        n += len(good)
    return loaded


def exact_scores(
    conn: sqlite3.Connection, query: Vector, texts: Sequence[str], dimension: int
) -> dict[str, float]:
    """The cosine of the unit ``query`` with the stored float32 vector of each of ``texts``
    (read from the table, the truth; texts with no readable vector are left out): what the
    int8 first pass's best candidates are ranked by."""
    out: dict[str, float] = {}
    for start in range(0, len(texts), 500):  # SQLite's parameter limit, with margin
        chunk = list(texts[start : start + 500])
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT texto, vector FROM vectores WHERE texto IN ({marks})", chunk
        ).fetchall()
        good = [r for r in rows if isinstance(r[1], bytes) and len(r[1]) == dimension * 4]
        if not good:
            continue
        block = np.frombuffer(b"".join(r[1] for r in good), dtype="<f4").reshape(
            len(good), dimension
        )
        norms = np.linalg.norm(block, axis=1)
        norms[norms == 0] = 1.0
        scores = (block @ query) / norms
        out.update((r[0], float(v)) for r, v in zip(good, scores, strict=True))
    return out
