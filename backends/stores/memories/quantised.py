"""int8 codes of the memory matrix: the first pass of a search over a million memories.

At a million 768-d memories the float32 matrix is 3 GB: too much to hold, and a GEMV over it
reads all of it (memory-bandwidth bound). The codes are a quarter of that, scanned by a SIMD
int8 dot product (``simsimd``); the best candidates are then scored exactly from their
float32 vectors in SQLite, which stay the truth (PA1). The codes are derived: written as a
snapshot beside the database (``<file>.q8/``), memory-mapped so opening does not read them
whole, rebuilt when missing or stale, and kept in step with every change as the float32
matrix is (a delete moves the last row into the hole).

Quantisation: the vectors are not centred (MiniLM's and USE's share a large common
component), so each dimension is centred on the mean and scaled by its own range before it
is rounded to -127..127. The query folds the scales in; the mean's contribution is the same
for every row and drops out of the ranking.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
Codes = npt.NDArray[np.int8]

#: snapshot format; a snapshot of another version is rebuilt
FORMAT = 1


def _simsimd() -> Any:
    import simsimd  # imported here: only stores this large need it

    return simsimd


class Quantiser:
    """Centre and per-dimension scale, learnt from a sample of the vectors."""

    def __init__(self, mean: Vector, scale: Vector) -> None:
        self.mean = np.asarray(mean, dtype=np.float32)
        self.scale = np.asarray(scale, dtype=np.float32)
        self.scale[self.scale <= 0] = 1.0

    @classmethod
    def learn(cls, sample: Vector) -> Quantiser:
        mean = sample.mean(axis=0)
        spread = np.percentile(np.abs(sample - mean), 99.9, axis=0).astype(np.float32)
        return cls(mean, spread)

    def codes(self, vectors: Vector) -> Codes:
        scaled = (np.asarray(vectors, dtype=np.float32) - self.mean) * (127.0 / self.scale)
        return np.clip(np.rint(scaled), -127, 127).astype(np.int8)

    def query(self, vector: Vector) -> Codes:
        """The query with the scales folded in, as int8 (its own scale drops out)."""
        weights = np.asarray(vector, dtype=np.float32) * self.scale
        peak = float(np.abs(weights).max()) or 1.0
        return np.clip(np.rint(weights * (127.0 / peak)), -127, 127).astype(np.int8)


class Int8Rows:
    """The codes of the searchable rows, in the store's row order.

    The first ``base`` rows are a copy-on-write memory map of the snapshot file (changes
    stay in this process until the next snapshot); rows added beyond it live in memory.
    """

    def __init__(self, quantiser: Quantiser, dimension: int, mapped: Codes | None = None) -> None:
        self.quantiser = quantiser
        self.dimension = dimension
        self.mapped: Codes = (
            mapped if mapped is not None else np.zeros((0, dimension), dtype=np.int8)
        )
        self.base = int(self.mapped.shape[0])
        self.extra: Codes = np.zeros((0, dimension), dtype=np.int8)
        #: rows changed since the snapshot (a snapshot is written when there are some)
        self.dirty = 0

    def set(self, row: int, vector: Vector) -> None:
        self._put_code(row, self.quantiser.codes(vector[None, :])[0])

    def _put_code(self, row: int, code: Codes) -> None:
        self.dirty += 1
        if row < self.base:
            self.mapped[row] = code
            return
        at = row - self.base
        if at >= self.extra.shape[0]:
            grown = np.zeros((max(1024, 2 * self.extra.shape[0], at + 1), self.dimension), np.int8)
            grown[: self.extra.shape[0]] = self.extra
            self.extra = grown
        self.extra[at] = code

    def put_block(self, row: int, vectors: Vector) -> None:
        """Codes for rows ``row`` … ``row + len(vectors) - 1`` (appended in bulk)."""
        codes = self.quantiser.codes(vectors)
        self.dirty += len(codes)
        if row < self.base:
            head = min(row + len(codes), self.base)
            self.mapped[row:head] = codes[: head - row]
            codes, row = codes[head - row :], head
        if not len(codes):
            return
        at = row - self.base
        need = at + len(codes)
        if need > self.extra.shape[0]:
            grown = np.zeros((max(1024, 2 * self.extra.shape[0], need), self.dimension), np.int8)
            grown[: self.extra.shape[0]] = self.extra
            self.extra = grown
        self.extra[at:need] = codes

    def code(self, row: int) -> Codes:
        return self.mapped[row] if row < self.base else self.extra[row - self.base]

    def move(self, source: int, target: int) -> None:
        self._put_code(target, self.code(source).copy())

    def scores(self, vector: Vector, n: int) -> npt.NDArray[np.float32]:
        """Approximate dot products of the first ``n`` rows with ``vector`` (ranking only)."""
        query = self.quantiser.query(vector)[None, :]
        simsimd = _simsimd()
        out = np.empty(n, dtype=np.float32)
        head = min(n, self.base)
        if head:
            out[:head] = np.asarray(
                simsimd.cdist(query, self.mapped[:head], metric="dot", out_dtype="float32")
            )[0]
        if n > head:
            out[head:] = np.asarray(
                simsimd.cdist(query, self.extra[: n - head], metric="dot", out_dtype="float32")
            )[0]
        return out


def snapshot_dir(database: Path) -> Path:
    return database.with_name(database.name + ".q8")


def save(folder: Path, rows: Int8Rows, texts: list[str], meta: dict[str, Any]) -> None:
    """Write a snapshot (codes, texts, quantiser, meta) atomically: a reader sees the old one
    or the new one, never half of each."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    n = len(texts)
    tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=folder))
    try:
        codes = np.lib.format.open_memmap(
            tmp / "codes.npy", mode="w+", dtype=np.int8, shape=(n, rows.dimension)
        )
        for start in range(0, n, 65_536):
            stop = min(n, start + 65_536)
            head = min(stop, rows.base)
            if start < head:
                codes[start:head] = rows.mapped[start:head]
            if stop > max(start, rows.base):
                lo = max(start, rows.base)
                codes[lo:stop] = rows.extra[lo - rows.base : stop - rows.base]
        codes.flush()
        del codes
        encoded = [t.encode("utf-8") for t in texts]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        (tmp / "texts.bin").write_bytes(b"".join(encoded))
        np.save(tmp / "offsets.npy", offsets)
        np.save(tmp / "quantiser.npy", np.stack([rows.quantiser.mean, rows.quantiser.scale]))
        (tmp / "meta.json").write_text(json.dumps({**meta, "format": FORMAT, "rows": n}))
        for path in tmp.iterdir():
            os.chmod(path, 0o600)
            os.replace(path, folder / (path.name + ".next"))
        # meta last: it names what the other files hold
        for name in ("codes.npy", "texts.bin", "offsets.npy", "quantiser.npy", "meta.json"):
            os.replace(folder / (name + ".next"), folder / name)
    finally:
        for path in tmp.glob("*"):
            path.unlink(missing_ok=True)
        tmp.rmdir()


def load(folder: Path, expect: dict[str, Any]) -> tuple[Int8Rows, list[str], dict[str, Any]] | None:
    """The snapshot in ``folder`` if it is whole and made for ``expect`` (dimension, model),
    else None (missing, another format or model, cut short)."""
    try:
        meta = json.loads((folder / "meta.json").read_text())
        if meta.get("format") != FORMAT or any(meta.get(k) != v for k, v in expect.items()):
            return None
        n = int(meta["rows"])
        codes = np.load(folder / "codes.npy", mmap_mode="c")
        offsets = np.load(folder / "offsets.npy")
        mean, scale = np.load(folder / "quantiser.npy")
        blob = (folder / "texts.bin").read_bytes()
        if codes.shape != (n, expect["dimension"]) or offsets.shape != (n + 1,):
            return None
        if int(offsets[-1]) != len(blob):
            return None
        bounds = offsets.tolist()
        texts = [blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(n)]
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return Int8Rows(Quantiser(mean, scale), int(expect["dimension"]), codes), texts, meta
