"""The int8 snapshot beside a large memory database: derived, bound to its database, durable.

``<file>.q8/`` holds the int8 codes and sign bits of the searchable rows (memory-mapped
copy-on-write, so opening a million does not read them whole), their texts in row order and
the quantiser, in a folder of their own, and ``meta.json``: the header that names that folder
and says which database, at which point of its change log, the codes were made from.

The float32 vectors in the table are the truth (PA1); a snapshot is only ever *used* when its
header matches the database it sits beside:

* ``store_id`` — a random number the database keeps in ``memory_state`` (migration 5): a
  snapshot left beside another database's file (a data dir put together by hand) is refused;
* ``dimension`` and ``model`` — the embedder's space (PA3);
* ``last_seq`` and ``log_tail`` — the change-log position the codes include, and a digest of
  the last log entries up to it: a restored backup of the same database that was written to
  since has the same id but other entries at those sequence numbers, and is refused; a
  position the log no longer remembers (pruned) or has not reached (an older copy) too;
* ``files`` and ``digest`` — every file's exact size, a digest of the texts, offsets and
  quantiser, and of a sample of the code and sign-bit rows: a snapshot cut short or
  overwritten is refused.

A refused snapshot costs a rebuild from the table, never data. Writing is atomic and durable:
the files go into a private temporary folder, each ``fsync``'d, the folder renamed into place
and the parent ``fsync``'d; then the header, written to a temporary file, ``fsync``'d and
renamed over ``meta.json``, the parent ``fsync``'d again. A crash leaves the old snapshot or
the new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from backends.stores.memories.quantised import Int8Rows, Quantiser

#: snapshot format; a snapshot of another format is rebuilt
FORMAT = 4
#: log entries (up to the snapshot's position) whose digest binds it to its database's history
TAIL = 8
#: rows of the codes and of the sign bits sampled into the header's digest
SAMPLE_ROWS = 256
#: leftovers of a writer that died (``.new-*`` folders, ``.meta-*`` files) older than this go
STALE_SECONDS = 3600.0
_FILES = ("codes.npy", "bits.npy", "offsets.npy", "texts.bin", "quantiser.npy")
_DIGESTED = ("offsets.npy", "texts.bin", "quantiser.npy")


def snapshot_dir(database: Path) -> Path:
    return database.with_name(database.name + ".q8")


def store_id(conn: sqlite3.Connection) -> int:
    """The database's identity (0 when someone deleted it: then no snapshot is ever used)."""
    row = conn.execute("SELECT value FROM memory_state WHERE key = 'store_id'").fetchone()
    return int(row[0]) if row else 0


def log_tail(conn: sqlite3.Connection, last_seq: int) -> list[list[Any]]:
    """The last :data:`TAIL` log entries up to ``last_seq``, as ``[seq, digest of the text]``."""
    rows = conn.execute(
        "SELECT seq, texto FROM memory_log WHERE seq <= ? ORDER BY seq DESC LIMIT ?",
        (last_seq, TAIL),
    ).fetchall()
    return [[int(seq), _digest(str(text).encode("utf-8"))] for seq, text in reversed(rows)]


def _log_floor(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM memory_state WHERE key = 'log_floor'").fetchone()
    return int(row[0]) if row else 0


def in_history(conn: sqlite3.Connection, header: dict[str, Any]) -> bool:
    """True when the database's change log still holds the snapshot's position: not pruned
    past it, not behind it, and the entries up to it are the ones the snapshot saw."""
    last_seq = int(header["last_seq"])
    max_seq = int(conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memory_log").fetchone()[0])
    floor = _log_floor(conn)
    if last_seq < floor or last_seq > max_seq:
        return False
    tail: list[list[Any]] = header["log_tail"]
    if last_seq == 0:
        return not tail
    # the entry at last_seq itself must still be there (pruning keeps seq > floor)
    if last_seq == floor or not tail or tail[-1][0] != last_seq:
        return False
    kept = [entry for entry in tail if entry[0] > floor]
    return kept == [entry for entry in log_tail(conn, last_seq) if entry[0] > floor]


@dataclass
class Snapshot:
    """A snapshot that matched: the codes (mapped), the texts in row order, its header."""

    codes: Int8Rows
    texts: list[str]
    header: dict[str, Any]

    @property
    def last_seq(self) -> int:
        return int(self.header["last_seq"])


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _sample(array: npt.NDArray[Any]) -> bytes:
    """Rows spread evenly over ``array`` (and its last one): what the header's digest covers
    of the codes, which are too large to read whole at every start."""
    n = int(array.shape[0])
    if n == 0:
        return b""
    rows = np.unique(np.linspace(0, n - 1, num=min(n, SAMPLE_ROWS)).astype(np.intp))
    return np.ascontiguousarray(array[rows]).tobytes()


def _content_digest(folder: Path, codes: npt.NDArray[Any], bits: npt.NDArray[Any]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for name in _DIGESTED:
        h.update((folder / name).read_bytes())
    h.update(_sample(codes))
    h.update(_sample(bits))
    return h.hexdigest()


def fsync_path(path: Path) -> None:
    """``fsync`` a file or a folder (what makes a rename or a write durable)."""
    if os.name == "nt" and path.is_dir():  # Windows opens no folder to fsync (renames are)
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_array(path: Path, array: npt.NDArray[Any]) -> None:
    with open(path, "wb") as fh:
        np.save(fh, array)
        fh.flush()
        os.fsync(fh.fileno())


def _write_rows(path: Path, rows: Any, n: int) -> npt.NDArray[Any]:
    """The first ``n`` rows of a :class:`~.quantised._Rows`, block by block, ``fsync``'d;
    the written file mapped read-only (for the digest)."""
    out = np.lib.format.open_memmap(path, mode="w+", dtype=rows.dtype, shape=(n, rows.width))
    for start in range(0, n, 65_536):
        stop = min(n, start + 65_536)
        out[start:stop] = rows.take(np.arange(start, stop))
    out.flush()
    del out
    fsync_path(path)
    written: npt.NDArray[Any] = np.load(path, mmap_mode="r")
    return written


def save(folder: Path, rows: Int8Rows, texts: list[str], header: dict[str, Any]) -> None:
    """Write a snapshot of ``rows`` and ``texts`` with ``header`` (``store_id``,
    ``dimension``, ``model``, ``last_seq``, ``log_tail``): files first, durable, then the
    header renamed over ``meta.json`` — a reader sees the old snapshot or the new one, never
    half of each (a process still mapping the old files keeps them until it closes)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    n = len(texts)
    tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=folder))
    try:
        codes = _write_rows(tmp / "codes.npy", rows.codes, n)
        bits = _write_rows(tmp / "bits.npy", rows.bits, n)
        encoded = [t.encode("utf-8") for t in texts]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        with open(tmp / "texts.bin", "wb") as fh:
            fh.write(b"".join(encoded))
            fh.flush()
            os.fsync(fh.fileno())
        _write_array(tmp / "offsets.npy", offsets)
        _write_array(tmp / "quantiser.npy", np.stack([rows.quantiser.mean, rows.quantiser.scale]))
        digest = _content_digest(tmp, codes, bits)
        del codes, bits
        files = {name: (tmp / name).stat().st_size for name in _FILES}
        for name in _FILES:
            os.chmod(tmp / name, 0o600)
        fsync_path(tmp)
        snapshot = "snapshot-" + tmp.name.removeprefix(".new-")
        os.replace(tmp, folder / snapshot)
        fsync_path(folder)
    except BaseException:
        _remove_folder(tmp)
        raise
    meta = {
        **header,
        "format": FORMAT,
        "rows": n,
        "snapshot": snapshot,
        "files": files,
        "digest": digest,
    }
    fd, pending = tempfile.mkstemp(prefix=".meta-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(meta))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(pending, 0o600)
        os.replace(pending, folder / "meta.json")
        fsync_path(folder)
    except BaseException:
        Path(pending).unlink(missing_ok=True)
        raise
    _remove_others(folder, snapshot)


def _remove_folder(path: Path) -> None:
    with contextlib.suppress(OSError):  # another process may still map it: next time, then
        for child in path.glob("*"):
            child.unlink(missing_ok=True)
        path.rmdir()


def _remove_others(folder: Path, keep: str) -> None:
    """Earlier snapshots, and what writers that died left (old enough not to be a writer
    still at work)."""
    now = time.time()
    for path in folder.iterdir():
        name = path.name
        try:
            stale = now - path.stat().st_mtime > STALE_SECONDS
        except OSError:
            continue
        if (name.startswith("snapshot-") and name != keep) or (name.startswith(".new-") and stale):
            _remove_folder(path)
        elif name.startswith(".meta-") and stale:
            path.unlink(missing_ok=True)


def _read_header(folder: Path, expect: dict[str, Any]) -> tuple[dict[str, Any], Path] | None:
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        return None
    if any(meta.get(key) != value for key, value in expect.items()):
        return None
    files = folder / str(meta["snapshot"])
    if files.parent != folder or not files.name.startswith("snapshot-"):
        return None
    sizes = meta["files"]
    if not isinstance(sizes, dict) or set(sizes) != set(_FILES):
        return None
    if any((files / name).stat().st_size != int(size) for name, size in sizes.items()):
        return None
    if not isinstance(meta["last_seq"], int) or not isinstance(meta["log_tail"], list):
        return None
    return meta, files


def load(folder: Path, expect: dict[str, Any]) -> Snapshot | None:
    """The snapshot ``folder/meta.json`` names if it is whole and made for ``expect``
    (``store_id``, ``dimension``, ``model``), else None (missing, another database, format
    or model, cut short, overwritten). Its log position is checked by :func:`in_history`."""
    try:
        found = _read_header(folder, expect)
        if found is None:
            return None
        meta, files = found
        n, d = int(meta["rows"]), int(expect["dimension"])
        codes = np.load(files / "codes.npy", mmap_mode="c")
        bits = np.load(files / "bits.npy", mmap_mode="c")
        if codes.shape != (n, d) or codes.dtype != np.int8:
            return None
        if bits.shape != (n, (d + 7) // 8) or bits.dtype != np.uint8:
            return None
        if _content_digest(files, codes, bits) != meta["digest"]:
            return None
        offsets = np.load(files / "offsets.npy")
        mean, scale = np.load(files / "quantiser.npy")
        blob = (files / "texts.bin").read_bytes()
        if offsets.shape != (n + 1,) or int(offsets[-1]) != len(blob):
            return None
        bounds = offsets.tolist()
        texts = [blob[bounds[i] : bounds[i + 1]].decode("utf-8") for i in range(n)]
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError, AttributeError):
        return None
    return Snapshot(Int8Rows(Quantiser(mean, scale), d, codes, bits), texts, meta)
