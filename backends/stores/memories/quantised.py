"""int8 codes and sign bits of the memory matrix: the first passes of a search over a million.

At a million 768-d memories the float32 matrix is 3 GB: too much to hold, and a GEMV over it
reads all of it (memory-bandwidth bound). The sign bits of the codes (a 32nd of it) are
scanned first by a SIMD Hamming distance, the int8 codes (a quarter) of the best 5,000 by a
SIMD int8 dot product (``simsimd``), and the best of those are scored exactly from their
float32 vectors in SQLite, which stay the truth (PA1). The codes are derived: written as a
snapshot beside the database (:mod:`.snapshot`, bound to it by its header), memory-mapped so
opening does not read them whole, rebuilt when missing or stale, and kept in step with every
change as the float32 matrix is (a delete moves the last row into the hole).

Quantisation: the vectors are not centred (MiniLM's and USE's share a large common
component), so each dimension is centred on the mean and scaled by its own range before it
is rounded to -127..127. The query folds the scales in; the mean's contribution is the same
for every row and drops out of the ranking.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Codes = npt.NDArray[np.int8]


def _simsimd() -> Any:
    import simsimd  # noqa: PLC0415 — lazy: only stores this large need it

    return simsimd


class Quantiser:
    """Centre and per-dimension scale, learnt from a sample of the vectors."""

    def __init__(self, mean: Vector, scale: Vector) -> None:
        self.mean = np.asarray(mean, dtype=np.float32)
        self.scale = np.asarray(scale, dtype=np.float32)
        self.scale[self.scale <= 0] = 1.0

    #: rows (evenly spread over the sample) whose spread sets the scales: the percentile's
    #: temporaries are a few copies of what it reads (of 65,536 × 768 rows: ~1 GB at once)
    SPREAD_ROWS = 16_384

    @classmethod
    def learn(cls, sample: Vector) -> Quantiser:
        mean = sample.mean(axis=0)
        if len(sample) > cls.SPREAD_ROWS:
            sample = sample[np.linspace(0, len(sample) - 1, cls.SPREAD_ROWS).astype(np.intp)]
        spread = np.percentile(np.abs(sample - mean), 99.9, axis=0).astype(np.float32)
        return cls(mean, spread)

    def codes(self, vectors: Vector) -> Codes:
        scaled = (np.asarray(vectors, dtype=np.float32) - self.mean) * (127.0 / self.scale)
        return np.clip(np.rint(scaled), -127, 127).astype(np.int8)

    def query(self, vector: Vector) -> Codes:
        """The query with the scales folded in, as int8 (its own scale drops out)."""
        weights = np.asarray(vector, dtype=np.float32) * self.scale
        peak = float(np.abs(weights).max()) or 1.0
        codes: Codes = np.clip(np.rint(weights * (127.0 / peak)), -127, 127).astype(np.int8)
        return codes


class _Rows:
    """Fixed-width rows: a (copy-on-write) memory-mapped head, then rows kept in memory."""

    def __init__(
        self,
        width: int,
        dtype: type,
        mapped: npt.NDArray[Any] | None = None,
        capacity: int = 0,
    ) -> None:
        self.width, self.dtype = width, dtype
        self.mapped: npt.NDArray[Any] = (
            mapped if mapped is not None else np.zeros((0, width), dtype=dtype)
        )
        self.base = int(self.mapped.shape[0])
        self.extra: npt.NDArray[Any] = np.zeros((capacity, width), dtype=dtype)

    def put(self, row: int, values: npt.NDArray[Any]) -> None:
        """Rows ``row`` … ``row + len(values) - 1``."""
        if row < self.base:
            head = min(row + len(values), self.base)
            self.mapped[row:head] = values[: head - row]
            values, row = values[head - row :], head
        if not len(values):
            return
        at = row - self.base
        need = at + len(values)
        if need > self.extra.shape[0]:
            grown = np.zeros((max(1024, 2 * self.extra.shape[0], need), self.width), self.dtype)
            grown[: self.extra.shape[0]] = self.extra
            self.extra = grown
        self.extra[at:need] = values

    def row(self, row: int) -> npt.NDArray[Any]:
        found: npt.NDArray[Any] = (
            self.mapped[row] if row < self.base else self.extra[row - self.base]
        )
        return found

    def take(self, rows: npt.NDArray[np.intp]) -> npt.NDArray[Any]:
        head = rows < self.base
        out: npt.NDArray[Any] = np.empty((len(rows), self.width), dtype=self.dtype)
        out[head] = self.mapped[rows[head]]
        out[~head] = self.extra[rows[~head] - self.base]
        return out

    def parts(self, n: int) -> list[npt.NDArray[Any]]:
        head = min(n, self.base)
        return [p for p in (self.mapped[:head], self.extra[: n - head]) if len(p)]

    def first(self, n: int) -> npt.NDArray[Any]:
        parts = self.parts(n)
        return parts[0] if len(parts) == 1 else np.vstack(parts) if parts else self.extra[:0]


class Int8Rows:
    """The codes of the searchable rows, in the store's row order: int8 codes, and the sign
    bits of the same codes (96 bytes a 768-d row) that a search scans first.

    The first ``base`` rows are copy-on-write memory maps of the snapshot files (changes stay
    in this process until the next snapshot); rows added beyond them live in memory.
    """

    #: above this many rows the sign bits choose the candidates the int8 codes rank
    BITS_ABOVE = 50_000
    #: sign-bit candidates handed to the int8 codes (measured: recall@10 1.0 at 5,000)
    BITS_CANDIDATES = 5_000

    def __init__(
        self,
        quantiser: Quantiser,
        dimension: int,
        mapped: Codes | None = None,
        bits: npt.NDArray[np.uint8] | None = None,
        capacity: int = 0,
    ) -> None:
        self.quantiser = quantiser
        self.dimension = dimension
        self.codes = _Rows(dimension, np.int8, mapped, capacity)
        self.bits = _Rows((dimension + 7) // 8, np.uint8, bits, capacity)
        #: rows changed since the snapshot (a snapshot is written when there are some)
        self.dirty = 0

    @classmethod
    def of(cls, matrix: Vector, block: int = 8192) -> Int8Rows:
        """The codes of a float32 matrix already in memory, block by block (no copy of it:
        a mid-size store's first search must not double what it holds)."""
        n, dimension = matrix.shape
        sample = matrix[: CodesBuilder.SAMPLE]
        rows = cls(Quantiser.learn(sample), dimension, capacity=n + n // 4)
        for start in range(0, n, block):
            rows.put_block(start, matrix[start : start + block])
        return rows

    @property
    def base(self) -> int:
        return self.codes.base

    def set(self, row: int, vector: Vector) -> None:
        self.put_block(row, vector[None, :])

    def put_block(self, row: int, vectors: Vector) -> None:
        """Codes for rows ``row`` … ``row + len(vectors) - 1``."""
        codes = self.quantiser.codes(vectors)
        self._put(row, codes)

    def _put(self, row: int, codes: Codes) -> None:
        self.dirty += len(codes)
        self.codes.put(row, codes)
        self.bits.put(row, np.packbits(codes > 0, axis=1))

    def move(self, source: int, target: int) -> None:
        self._put(target, self.codes.row(source)[None, :].copy())

    def top(self, vector: Vector, n: int, pool: int, *, bits: bool = True) -> npt.NDArray[np.intp]:
        """The ``pool`` rows among the first ``n`` whose int8 codes score best with
        ``vector`` — among the sign bits' best :attr:`BITS_CANDIDATES` when ``n`` is large
        (and ``bits``: without them every row's int8 code is scored)."""
        simsimd = _simsimd()
        query = self.quantiser.query(vector)[None, :]
        if bits and n > self.BITS_ABOVE and pool < self.BITS_CANDIDATES:
            signs = np.packbits(query > 0, axis=1)
            distances = np.concatenate(
                [
                    np.asarray(
                        simsimd.cdist(
                            signs, part, metric="hamming", dtype="bin8", out_dtype="float32"
                        )
                    )[0]
                    for part in self.bits.parts(n)
                ]
            )
            rows = np.argpartition(distances, self.BITS_CANDIDATES)[: self.BITS_CANDIDATES]
            codes = self.codes.take(rows)
        else:
            rows = np.arange(n)
            codes = self.codes.first(n)
        scores = np.asarray(simsimd.cdist(query, codes, metric="dot", out_dtype="float32"))[0]
        if pool >= len(rows):
            return rows
        return rows[np.argpartition(-scores, pool - 1)[:pool]]


class CodesBuilder:
    """int8 codes of a full load, block by block; the quantiser is learnt from the first
    :attr:`SAMPLE` rows (the blocks before it wait)."""

    SAMPLE = 65_536

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.pending: list[Vector] = []
        self.waiting = 0
        self.rows: Int8Rows | None = None
        self.n = 0

    def add(self, block: Vector) -> None:
        if self.rows is None:
            self.pending.append(block.astype(np.float32, copy=True))
            self.waiting += len(block)
            if self.waiting >= self.SAMPLE:
                self._start()
            return
        self.rows.put_block(self.n, block)
        self.n += len(block)

    def _start(self) -> None:
        sample = (
            np.vstack(self.pending)
            if self.pending
            else np.zeros((1, self.dimension), dtype=np.float32)
        )
        self.rows = Int8Rows(Quantiser.learn(sample), self.dimension)
        pending, self.pending = self.pending, []
        for block in pending:
            self.rows.put_block(self.n, block)
            self.n += len(block)

    def finish(self) -> Int8Rows:
        if self.rows is None:
            self._start()
        assert self.rows is not None
        return self.rows
