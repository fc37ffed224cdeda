"""The memory store (PA1–PA5): the original's ``vectores`` table, searched from memory.

The table is exactly the original's::

    vectores(texto TEXT PRIMARY KEY, dimension INTEGER NOT NULL, vector BLOB NOT NULL)

so a database written by the original agente-telegram opens as it is. What Custodia adds
lives beside it, in append-only migrations: ``memory_meta`` (created/updated time, source,
the embedder that produced the vector) and ``memory_log``, a change log filled by triggers.

The original read every row on every search (O(n) SQLite reads, PA4). Here the searchable
rows are loaded once into a normalised float32 matrix (``capacity`` doubles as it grows) and
kept in step with every add, update and delete of this process; a delete moves the last row
into the hole. Writes from any other connection — another Custodia process, the original
app, the ``sqlite3`` shell — are noticed through ``PRAGMA data_version`` (one cheap call
before each search) and applied from ``memory_log`` row by row; only a gap in the log (it is
pruned) or a replaced file costs a full reload. A search is then one GEMV and an
``argpartition`` (PA2); no native vector extension is involved (PA5).

Only vectors of the store's dimension *and* embedder are compared (PA3). Inserting or
searching with another dimension raises :class:`DimensionMismatchError`; rows written by
another model stay stored, listed and counted in :meth:`SQLiteMemoryStore.stats` until
:meth:`SQLiteMemoryStore.reembed` gives them a vector of the current model.

The file's format is :mod:`.schema`; the matrix's arithmetic (normalising, loading, growing,
exact scores) :mod:`.matrix`; the int8 codes of a large store :mod:`.quantised`, and their
snapshot beside the file, bound to it, :mod:`.snapshot`.
"""

from __future__ import annotations

import builtins
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from backends.i18n import N_, _, number
from backends.progress import Progress
from backends.stores.description import SqliteFile
from backends.stores.engines.sqlite import connect, migrate
from backends.stores.memories import (
    AddResult,
    Hit,
    Memory,
    MemoryExistsError,
    MemoryNotFoundError,
    MemoryStoreError,
    StoredMemory,
    StoreStats,
    Vector,
    snapshot,
)
from backends.stores.memories.matrix import exact_scores, grown, load_rows, unit_vector
from backends.stores.memories.quantised import Int8Rows
from backends.stores.memories.schema import (
    MIGRATIONS,
    SELECT_MEMORY,
    SELECT_ROW,
    SELECT_STORED,
    VECTORES_COLUMNS,
    clean_text,
    from_blob,
    read_signal,
    to_blob,
    write_signal,
)
from backends.stores.memories.schema import (
    VECTORES_DDL as VECTORES_DDL,  # the original's table, named here since the first release
)
from backends.stores.memories.snapshot import snapshot_dir

if TYPE_CHECKING:
    from backends.config import Config

log = logging.getLogger(__name__)

#: keep this many change-log rows; a reader further behind reloads everything
LOG_KEEP = 10_000
#: prune the change log every this many sequence numbers
LOG_PRUNE_EVERY = 1_000


class SQLiteMemoryStore(SqliteFile):
    """The ``vectores`` table with an in-memory matrix kept in step with the file.

    Thread-safe (one lock around the connection and the matrix). ``dimension`` and ``model``
    are those of the current embedder: only rows of both are searched.
    """

    ENGINE = N_("SQLite (WAL), vectors as BLOBs")
    COUNT = "SELECT count(*) FROM vectores"

    #: from this many searchable rows on, a search scans int8 codes first (quantised.py)
    QUANTISE_ABOVE = 200_000
    #: from this many rows on (below QUANTISE_ABOVE) int8 codes are kept beside the float32
    #: matrix and scanned first: a quarter of the bytes a GEMV reads (memory-bandwidth bound)
    CODES_FIRST_ABOVE = 50_000
    #: candidates of the int8 pass scored exactly (at least; 4 × k when that is more)
    RESCORE = 256
    #: rows changed since the int8 snapshot from which closing writes a new one (fewer are
    #: replayed from the change log at the next open: cheaper than rewriting a million)
    SNAPSHOT_AFTER = 1_000

    def __init__(
        self,
        path: Path,
        dimension: int,
        model: str = "",
        *,
        quantise_above: int | None = QUANTISE_ABOVE,
        rescore: int = RESCORE,
        codes_first_above: int | None = CODES_FIRST_ABOVE,
    ) -> None:
        if dimension < 1:
            raise ValueError("dimension must be positive")
        self.path = Path(path)
        self.dimension = int(dimension)
        self.model = model
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        conn = connect(self.path)
        try:
            with self._errors("open"):
                columns = [
                    (row[1], str(row[2]).upper(), row[5])
                    for row in conn.execute("PRAGMA table_info(vectores)")
                ]
                if columns and columns != VECTORES_COLUMNS:
                    raise MemoryStoreError(
                        _(
                            "{path}: its 'vectores' table is not the memory table "
                            "(texto, dimension, vector): {columns}"
                        ).format(path=self.path, columns=columns)
                    )
                migrate(conn, MIGRATIONS)
                #: the database's identity: its int8 snapshot must carry the same
                self._store_id = snapshot.store_id(conn)
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        # the index, loaded on first search (listing never needs it)
        self.quantise_above = quantise_above
        self.codes_first_above = codes_first_above
        self.rescore = max(1, int(rescore))
        #: int8 codes of the rows when the store is large (then ``_matrix`` stays empty)
        self._codes: Int8Rows | None = None
        #: int8 codes beside the matrix of a mid-size store (built at its first search)
        self._fast: Int8Rows | None = None
        self._loaded = False
        self._matrix: Vector = np.zeros((0, self.dimension), dtype=np.float32)
        self._texts: list[str] = []
        self._rows: dict[str, int] = {}
        self._data_version = -1
        self._last_seq = 0
        self._last_prune = 0
        #: rows of the right dimension, model and length whose values are not finite
        self._bad_rows: set[str] = set()
        #: how many full loads and incremental syncs happened (tests and the bench read it)
        self.full_loads = 0
        self.incremental_syncs = 0
        #: changes whenever the searchable rows change (recall caches what it derives)
        self.generation = 0

    @classmethod
    def from_config(
        cls, config: Config, *, path: Path, dimension: int, embedder_name: str, **context: Any
    ) -> SQLiteMemoryStore:
        """The file ``path`` (in the data dir), for vectors of ``dimension`` by that embedder."""
        return cls(path, dimension, embedder_name)

    # -- plumbing --------------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise MemoryStoreError(_("{path}: the memory store is closed").format(path=self.path))
        return self._conn

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Turn SQLite failures into :class:`MemoryStoreError` (corrupt, locked, full...)."""
        try:
            yield
        except sqlite3.Error as err:
            message = f"{self.path}: cannot {what} the memory database: {err}"
            raise MemoryStoreError(message) from err

    def close(self) -> None:
        with self._lock:
            codes = self._codes
            if codes is not None and codes.dirty >= max(1, self.SNAPSHOT_AFTER) and self._conn:
                try:
                    self._save_snapshot()
                except OSError as err:  # derived: rebuilt from the table next time
                    log.warning(_("%s: cannot write the int8 snapshot: %s"), self.path, err)
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None
            self._matrix = np.zeros((0, self.dimension), dtype=np.float32)
            self._codes = self._fast = None
            self._texts, self._rows, self._loaded = [], {}, False

    def __enter__(self) -> SQLiteMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check(self, vector: npt.ArrayLike, where: str, *, zero: bool = False) -> Vector:
        """The vector, normalised, of this store's dimension (see :func:`unit_vector`)."""
        return unit_vector(vector, self.dimension, where, zero=zero)

    def _in_space(self, dimension: int, blob: bytes | None, embedder: str) -> bool:
        """Right dimension, model and blob length (values may still be non-finite)."""
        return (
            dimension == self.dimension
            and not (embedder and self.model and embedder != self.model)
            and isinstance(blob, bytes)
            and len(blob) == dimension * 4
        )

    def _searchable(self, dimension: int, blob: bytes | None, embedder: str) -> Vector | None:
        """The normalised vector of a row the current embedder can search, else None."""
        if blob is None or not self._in_space(dimension, blob, embedder):
            return None
        vector = from_blob(blob, dimension)
        if vector is None:
            return None
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    # -- the in-memory matrix --------------------------------------------------------------
    def _max_seq(self) -> int:
        return int(self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM memory_log").fetchone()[0])

    def _data_version_now(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def _ensure_loaded(self) -> None:
        """Load once; afterwards apply what other connections committed (cheap check)."""
        if not self._loaded:
            self._full_load()
            return
        version = self._data_version_now()
        if version != self._data_version:
            self._sync(version)

    def _full_load(self, use_snapshot: bool = True) -> None:
        """Read the searchable rows; a large store opens its int8 snapshot instead when it is
        there and current (then only the log since it is replayed)."""
        if use_snapshot and self.quantise_above is not None and self._load_snapshot():
            return
        conn = self.conn
        version = self._data_version_now()
        d = self.dimension
        with self._errors("read"):
            own_transaction = not conn.in_transaction
            if own_transaction:  # one snapshot for the log position and the rows
                conn.execute("BEGIN")
            try:
                last_seq = self._max_seq()
                (count,) = conn.execute(
                    "SELECT count(*) FROM vectores WHERE dimension = ?", (d,)
                ).fetchone()
                quantise = self.quantise_above is not None and count >= self.quantise_above
                cursor = conn.execute(SELECT_ROW + " WHERE v.dimension = ?", (d,))
                loaded = load_rows(cursor, d, self.model, count, quantise=quantise)
            finally:
                if own_transaction:
                    conn.execute("COMMIT")
        self._matrix, self._fast = loaded.matrix, None
        self._codes = loaded.builder.finish() if loaded.builder is not None else None
        self._texts = texts = loaded.texts
        self._rows = {text: row for row, text in enumerate(texts)}
        self._bad_rows = loaded.bad_rows
        self._last_seq = last_seq
        self._data_version = version
        if self._codes is not None:
            try:  # written now and mapped back: the codes leave this process's memory
                self._save_snapshot()
                mapped = snapshot.load(snapshot_dir(self.path), self._snapshot_key())
                if mapped is not None:
                    self._codes = mapped.codes
            except OSError as err:
                log.warning(_("%s: cannot write the int8 snapshot: %s"), self.path, err)
        self._loaded = True
        self.full_loads += 1
        self.generation += 1

    def _sync(self, version: int) -> None:
        """Apply the change log since ``_last_seq``; reload everything on a gap."""
        conn = self.conn
        with self._errors("read"):
            floor_row = conn.execute(
                "SELECT value FROM memory_state WHERE key = 'log_floor'"
            ).fetchone()
            floor = int(floor_row[0]) if floor_row else 0
            max_seq = self._max_seq()
            if self._last_seq < floor or max_seq < self._last_seq:
                self._full_load(use_snapshot=False)  # pruned past us, or the file was replaced
                return
            changed = {
                row[0]
                for row in conn.execute(
                    "SELECT texto FROM memory_log WHERE seq > ? AND seq <= ?",
                    (self._last_seq, max_seq),
                )
            }
            if len(changed) > max(1024, len(self._texts) // 4):
                self._full_load(use_snapshot=False)  # cheaper than thousands of single-row reads
                return
            for text in changed:
                row = conn.execute(SELECT_ROW + " WHERE v.texto = ?", (text,)).fetchone()
                vector = self._searchable(row[1], row[2], row[3]) if row else None
                if vector is None:
                    self._remove_row(text)
                    if row and self._in_space(row[1], row[2], row[3]):
                        self._bad_rows.add(text)  # right shape, values not finite
                    continue
                self._put_row(text, vector)
        self._last_seq = max_seq
        self._data_version = version
        self.incremental_syncs += 1

    def _put_row(self, text: str, vector: Vector) -> None:
        self.generation += 1
        self._bad_rows.discard(text)
        row = self._rows.get(text)
        if row is None:
            row = len(self._texts)
            if self._codes is None and row >= self._matrix.shape[0]:
                self._matrix = grown(self._matrix, row + 1)
            self._texts.append(text)
            self._rows[text] = row
        if self._codes is not None:
            self._codes.set(row, vector)
        else:
            self._matrix[row] = vector
            if self._fast is not None:
                self._fast.set(row, vector)

    def _remove_row(self, text: str) -> None:
        self.generation += 1
        self._bad_rows.discard(text)
        row = self._rows.pop(text, None)
        if row is None:
            return
        last = len(self._texts) - 1
        if row != last:  # move the last row into the hole
            moved = self._texts[last]
            if self._codes is not None:
                self._codes.move(last, row)
            else:
                self._matrix[row] = self._matrix[last]
                if self._fast is not None:
                    self._fast.move(last, row)
            self._texts[row] = moved
            self._rows[moved] = row
        self._texts.pop()

    @contextmanager
    def _writing(self, what: str) -> Iterator[list[tuple[str, Vector | None]]]:
        """One write transaction; yields the list of matrix changes to apply after COMMIT."""
        with self._lock:
            conn = self.conn
            changes: list[tuple[str, Vector | None]] = []
            with self._errors(what):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if self._loaded:
                        version = self._data_version_now()
                        if version != self._data_version:
                            self._sync(version)  # others' writes first, inside our lock
                    yield changes
                    max_seq = self._max_seq()
                    if max_seq - self._last_prune >= LOG_PRUNE_EVERY:
                        self._prune_log(max_seq)
                        self._last_prune = max_seq
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
            if self._loaded:
                for text, vector in changes:
                    if vector is None:
                        self._remove_row(text)
                    else:
                        self._put_row(text, vector)
                # we held the write lock: every commit up to max_seq is in the matrix now
                self._last_seq = max_seq

    def _prune_log(self, max_seq: int) -> None:
        floor = max_seq - LOG_KEEP
        if floor <= 0:
            return
        self.conn.execute("DELETE FROM memory_log WHERE seq <= ?", (floor,))
        self.conn.execute(
            "UPDATE memory_state SET value = max(value, ?) WHERE key = 'log_floor'", (floor,)
        )

    # -- writing ---------------------------------------------------------------------------
    def add(self, text: str, vector: npt.ArrayLike, source: str = "user") -> AddResult:
        """Store a memory. An identical text is a duplicate and is skipped (its vector is
        refreshed only when it was not searchable with the current embedder)."""
        return self.add_many([(text, vector)], source)[0]

    def add_many(
        self, items: Iterable[tuple[str, npt.ArrayLike]], source: str = "user"
    ) -> list[AddResult]:
        """Add several memories in one transaction (all or nothing)."""
        checked = [(clean_text(text), self._check(v, "memory store insert")) for text, v in items]
        results: list[AddResult] = []
        now = time.time()
        with self._writing("write") as changes:
            conn = self.conn
            for text, vector in checked:
                existing = conn.execute(SELECT_ROW + " WHERE v.texto = ?", (text,)).fetchone()
                if existing is not None and self._searchable(*existing[1:]) is not None:
                    results.append(AddResult(text, "duplicate"))
                    continue
                blob = to_blob(vector)
                if existing is None:
                    conn.execute(
                        "INSERT INTO vectores(texto, dimension, vector) VALUES (?, ?, ?)",
                        (text, self.dimension, blob),
                    )
                    status = "created"
                else:
                    conn.execute(
                        "UPDATE vectores SET dimension = ?, vector = ? WHERE texto = ?",
                        (self.dimension, blob, text),
                    )
                    status = "refreshed"
                conn.execute(
                    "INSERT INTO memory_meta(texto, created_at, updated_at, source, embedder) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(texto) DO UPDATE SET "
                    "updated_at = excluded.updated_at, embedder = excluded.embedder",
                    (text, now, now, source, self.model),
                )
                changes.append((text, vector))
                results.append(AddResult(text, status))
        return results

    def update(self, text: str, new_text: str, vector: npt.ArrayLike) -> StoredMemory:
        """Replace a memory's text and vector (created time and source are kept).

        Returns the memory as it was, for undo. Raises :class:`MemoryNotFoundError` or
        :class:`MemoryExistsError` (``new_text`` is another memory's text).
        """
        new_text = clean_text(new_text)
        checked = self._check(vector, "memory store update")
        with self._writing("write") as changes:
            previous = self._stored(text)
            if previous is None:
                raise MemoryNotFoundError(text)
            if new_text != text and self._stored(new_text) is not None:
                raise MemoryExistsError(new_text)
            self.conn.execute(
                "UPDATE vectores SET texto = ?, dimension = ?, vector = ? WHERE texto = ?",
                (new_text, self.dimension, to_blob(checked), text),
            )
            meta = previous.memory
            self.conn.execute(
                "INSERT OR REPLACE INTO memory_meta"
                "(texto, created_at, updated_at, source, embedder) VALUES (?, ?, ?, ?, ?)",
                (new_text, meta.created_at or time.time(), time.time(), meta.source, self.model),
            )
            if new_text != text:
                changes.append((text, None))
            changes.append((new_text, checked))
        return previous

    def delete(self, text: str) -> StoredMemory | None:
        """Delete a memory; return it with its vector (for undo), or None if it was absent."""
        with self._writing("write") as changes:
            previous = self._stored(text)
            if previous is None:
                return None
            self.conn.execute("DELETE FROM memory_meta WHERE texto = ?", (text,))
            self.conn.execute("DELETE FROM vectores WHERE texto = ?", (text,))
            changes.append((text, None))
        return previous

    def restore(self, stored: StoredMemory) -> None:
        """Put back a deleted (or edited-away) memory exactly as it was: undo."""
        memory = stored.memory
        vector = self._searchable(memory.dimension, stored.vector, memory.embedder)
        with self._writing("write") as changes:
            self.conn.execute(
                "INSERT OR REPLACE INTO vectores(texto, dimension, vector) VALUES (?, ?, ?)",
                (memory.text, memory.dimension, stored.vector),
            )
            self.conn.execute(
                "INSERT OR REPLACE INTO memory_meta"
                "(texto, created_at, updated_at, source, embedder) VALUES (?, ?, ?, ?, ?)",
                (memory.text, memory.created_at, memory.updated_at, memory.source, memory.embedder),
            )
            changes.append((memory.text, vector))

    def reembed(
        self,
        embed: Callable[[Sequence[str]], npt.ArrayLike],
        progress: Progress | None = None,
        batch_size: int = 64,
    ) -> int:
        """Give every memory not searchable by the current embedder (or of unknown model) a
        vector from ``embed``. Cancellable between batches; each batch is committed, so a
        cancelled run keeps what it did and a second run carries on. Returns rows re-embedded.
        """
        progress = progress or Progress()
        with self._lock, self._errors("read"):
            todo = [
                row[0]
                for row in self.conn.execute(
                    SELECT_MEMORY + " WHERE NOT (v.dimension = ? AND length(v.vector) = ? "
                    "AND COALESCE(m.embedder, '') = ?) ORDER BY v.rowid",
                    (self.dimension, self.dimension * 4, self.model),
                )
            ]
            todo += sorted(self._bad_rows.difference(todo))
        progress.start(
            len(todo), _("re-embedding {count} memories").format(count=number(len(todo)))
        )
        done = 0
        for start in range(0, len(todo), batch_size):
            progress.check()
            batch = todo[start : start + batch_size]
            vectors = np.asarray(embed(batch), dtype=np.float32)
            if vectors.ndim != 2 or vectors.shape[0] != len(batch):
                raise ValueError(f"embedder returned {vectors.shape} for {len(batch)} texts")
            checked = [self._check(v, "memory re-embed", zero=True) for v in vectors]
            with self._writing("write") as changes:
                for text, vector in zip(batch, checked, strict=True):
                    cursor = self.conn.execute(
                        "UPDATE vectores SET dimension = ?, vector = ? WHERE texto = ?",
                        (self.dimension, to_blob(vector), text),
                    )
                    if cursor.rowcount == 0:  # deleted meanwhile
                        continue
                    now = time.time()
                    self.conn.execute(
                        "INSERT INTO memory_meta(texto, created_at, updated_at, source, embedder)"
                        " VALUES (?, ?, ?, 'imported', ?) ON CONFLICT(texto) DO UPDATE SET "
                        "embedder = excluded.embedder",
                        (text, now, now, self.model),
                    )
                    changes.append((text, vector))
                    done += 1
            progress.advance(
                len(batch),
                _("re-embedded {done} of {total}").format(
                    done=number(start + len(batch)), total=number(len(todo))
                ),
            )
        return done

    # -- reading ---------------------------------------------------------------------------
    def search(
        self, vector: npt.ArrayLike, k: int = 10, threshold: float | None = None
    ) -> list[Hit]:
        """The ``k`` most similar searchable memories (cosine), best first; only those at or
        above ``threshold`` when given. Wrong dimension: :class:`DimensionMismatchError`."""
        query = self._check(vector, "memory search", zero=True)
        if k <= 0 or not query.any():  # an all-zero query has no direction: no neighbours
            return []
        with self._lock:
            with self._errors("read"):
                self._ensure_loaded()
            n = len(self._texts)
            if n == 0:
                return []
            if self._codes is not None:
                hits = self._search_codes(query, k, n)
            elif (fast := self._fast_codes(n)) is not None:  # int8 first, then exact
                top = fast.top(query, n, min(n, max(self.rescore, 4 * k)), bits=False)
                scores = self._matrix[top] @ query
                best = np.argsort(-scores, kind="stable")[:k]
                hits = [Hit(self._texts[top[i]], float(scores[i])) for i in best]
            else:
                scores = self._matrix[:n] @ query
                top = np.argpartition(scores, n - k)[n - k :] if k < n else np.arange(n)
                top = top[np.argsort(-scores[top], kind="stable")]
                texts = self._texts
                hits = [Hit(texts[i], float(scores[i])) for i in top]
        if threshold is not None:
            hits = [h for h in hits if h.similarity >= threshold]
        return hits

    def similarities(self, vector: npt.ArrayLike, texts: Iterable[str]) -> dict[str, float]:
        """The cosine of ``vector`` with each of ``texts`` that is searchable (others left out):
        what a candidate found another way (a name it contains) scores here."""
        query = self._check(vector, "memory search", zero=True)
        with self._lock:
            with self._errors("read"):
                self._ensure_loaded()
            rows = [(t, self._rows[t]) for t in dict.fromkeys(texts) if t in self._rows]
            if not rows:
                return {}
            if self._codes is not None:
                return self._exact(query, [t for t, _ in rows])
            scores = self._matrix[[r for _, r in rows]] @ query
        return {t: float(score) for (t, _), score in zip(rows, scores, strict=True)}

    # -- the int8 first pass (large stores) ------------------------------------------------
    def _fast_codes(self, n: int) -> Int8Rows | None:
        """The int8 codes beside the float32 matrix of a mid-size store (``n`` rows from
        :attr:`codes_first_above` on), built from the matrix at its first search."""
        if self.codes_first_above is None or n < self.codes_first_above:
            return None
        if self._fast is None:
            self._fast = Int8Rows.of(self._matrix[:n])
        return self._fast

    def _search_codes(self, query: Vector, k: int, n: int) -> builtins.list[Hit]:
        """int8 scores of every row, then the best ``rescore`` scored exactly (float32 from
        the table): the answer of the exact search, read from a quarter of the bytes."""
        assert self._codes is not None
        pool = min(n, max(self.rescore, 4 * k))
        top = self._codes.top(query, n, pool)
        exact = self._exact(query, [self._texts[i] for i in top])
        ranked = sorted(exact.items(), key=lambda item: -item[1])[:k]
        return [Hit(text, score) for text, score in ranked]

    def _exact(self, query: Vector, texts: Sequence[str]) -> dict[str, float]:
        """Cosines from the stored float32 vectors (the truth, PA1) of ``texts``."""
        with self._errors("read"):
            return exact_scores(self.conn, query, texts, self.dimension)

    def _snapshot_key(self) -> dict[str, Any]:
        return {"store_id": self._store_id, "dimension": self.dimension, "model": self.model}

    def _save_snapshot(self) -> None:
        assert self._codes is not None
        with self._errors("read"):
            tail = snapshot.log_tail(self.conn, self._last_seq)
        header = {**self._snapshot_key(), "last_seq": self._last_seq, "log_tail": tail}
        snapshot.save(snapshot_dir(self.path), self._codes, self._texts, header)
        self._codes.dirty = 0

    def _load_snapshot(self) -> bool:
        """Open the int8 snapshot and replay the log since it; False when there is none
        usable (missing, of another database or model, broken, or not in the log's history)."""
        if not self._store_id:  # its identity deleted: no snapshot can be told to be its own
            return False
        loaded = snapshot.load(snapshot_dir(self.path), self._snapshot_key())
        if loaded is None:
            return False
        with self._errors("read"):
            if not snapshot.in_history(self.conn, loaded.header):
                return False
        self._codes, self._fast = loaded.codes, None
        self._matrix = np.zeros((0, self.dimension), dtype=np.float32)
        self._texts = loaded.texts
        self._rows = {text: row for row, text in enumerate(loaded.texts)}
        self._bad_rows = set()
        self._last_seq = loaded.last_seq
        self._loaded = True
        self.full_loads += 1
        self.generation += 1
        self._sync(self._data_version_now())  # what was written since the snapshot
        return True

    def searchable_texts(self) -> builtins.list[str]:
        """The texts the current embedder can search (a copy), for indexes derived from them."""
        with self._lock:
            with self._errors("read"):
                self._ensure_loaded()
            return list(self._texts)

    def signal_vectors(self, model: str, texts: Sequence[str]) -> dict[str, Vector]:
        """Stored vectors of a second embedder ``model`` for ``texts`` (missing ones left out)."""
        with self._lock, self._errors("read"):
            return read_signal(self.conn, model, texts)

    def put_signal_vectors(self, model: str, items: Iterable[tuple[str, npt.ArrayLike]]) -> None:
        """Keep vectors of a second embedder for memories that exist (others are skipped)."""
        rows = [(t, model, to_blob(np.asarray(v, dtype=np.float32))) for t, v in items]
        if rows:
            with self._lock, self._errors("write"):
                write_signal(self.conn, rows)

    def nearest(self, vector: npt.ArrayLike) -> Hit | None:
        hits = self.search(vector, k=1)
        return hits[0] if hits else None

    def _stored(self, text: str) -> StoredMemory | None:
        row = self.conn.execute(SELECT_STORED + " WHERE v.texto = ?", (text,)).fetchone()
        if row is None:
            return None
        blob = row[6] if isinstance(row[6], bytes) else b""
        memory = self._memory((*row[:6], len(blob)), blob)
        return StoredMemory(memory, blob)

    def _memory(self, row: Sequence[Any], blob: bytes | None = None) -> Memory:
        text, created, updated, source, dimension, embedder, length = row
        searchable = (
            dimension == self.dimension
            and length == self.dimension * 4
            and not (embedder and self.model and embedder != self.model)
        )
        if searchable and blob is not None:
            searchable = from_blob(blob, dimension) is not None
        return Memory(
            text=text,
            created_at=float(created),
            updated_at=float(updated),
            source=str(source),
            dimension=int(dimension),
            embedder=str(embedder),
            searchable=bool(searchable),
        )

    def get(self, text: str) -> Memory | None:
        with self._lock, self._errors("read"):
            stored = self._stored(text)
        return stored.memory if stored else None

    def get_stored(self, text: str) -> StoredMemory | None:
        with self._lock, self._errors("read"):
            return self._stored(text)

    def find_text(self, fragment: str, limit: int = 200) -> list[Memory]:
        """Memories whose text contains ``fragment`` (case-insensitive for ASCII)."""
        pattern = "%" + fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        with self._lock, self._errors("read"):
            rows = self.conn.execute(
                SELECT_MEMORY + " WHERE v.texto LIKE ? ESCAPE '\\' "
                "ORDER BY COALESCE(m.updated_at, 0) DESC LIMIT ?",
                (pattern + "%", limit),
            )
            return [self._memory(row) for row in rows]

    def list(self, limit: int | None = None, offset: int = 0) -> list[Memory]:
        """Memories, most recently updated first."""
        sql = SELECT_MEMORY + " ORDER BY COALESCE(m.updated_at, 0) DESC, v.texto"
        params: tuple[int, ...] = ()
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params = (limit, offset)
        with self._lock, self._errors("read"):
            return [self._memory(row) for row in self.conn.execute(sql, params)]

    def count(self) -> int:
        with self._lock, self._errors("read"):
            return int(self.conn.execute("SELECT count(*) FROM vectores").fetchone()[0])

    def stats(self) -> StoreStats:
        total = searchable = unreadable = 0
        other_dimensions: dict[int, int] = {}
        other_models: dict[str, int] = {}
        d = self.dimension
        with self._lock, self._errors("read"):
            rows = self.conn.execute(
                "SELECT v.dimension, COALESCE(m.embedder, ''), "
                "length(v.vector) = v.dimension * 4, count(*) "
                "FROM vectores v LEFT JOIN memory_meta m ON m.texto = v.texto "
                "GROUP BY 1, 2, 3"
            ).fetchall()
        stale: dict[str, int] = {}
        for dimension, embedder, readable, count in rows:
            total += count
            if not readable:
                unreadable += count
                continue
            if dimension != d:
                other_dimensions[dimension] = other_dimensions.get(dimension, 0) + count
            elif embedder and self.model and embedder != self.model:
                other_models[embedder] = other_models.get(embedder, 0) + count
            else:
                searchable += count
                continue
            stale[embedder] = stale.get(embedder, 0) + count
        with self._lock:
            bad = len(self._bad_rows)  # known once loaded: right length, values not finite
        return StoreStats(
            total, searchable - bad, other_dimensions, other_models, unreadable + bad, stale
        )

    @property
    def loaded_rows(self) -> int:
        """Rows in the in-memory matrix (0 until the first search)."""
        with self._lock:
            return len(self._texts)

    def load(self) -> None:
        """Load (or refresh) the matrix now instead of at the first search."""
        with self._lock, self._errors("read"):
            self._ensure_loaded()
