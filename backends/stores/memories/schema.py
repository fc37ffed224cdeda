"""The memory file's format: the original's ``vectores`` table, what Custodia keeps beside it,
and the BLOB a vector is stored as.

Kept apart from the store (:mod:`backends.stores.memories.sqlite`) because the format is a
promise to files written by the original agente-telegram and by every earlier release: the
migrations are append-only, the table is the original's verbatim, and the BLOB is the
original's little-endian float32.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from collections.abc import Sequence

import numpy as np

from backends.i18n import _
from backends.stores.engines.sqlite import Migration
from backends.stores.memories import EmptyTextError, Vector

#: the original's table, verbatim (``IF NOT EXISTS``: an original database is adopted)
VECTORES_DDL = """CREATE TABLE IF NOT EXISTS vectores (
    texto TEXT PRIMARY KEY,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL
)"""


def create_meta(conn: sqlite3.Connection) -> None:
    """Migration 2: when a memory was made and changed, where from, by which embedder."""
    conn.execute(
        """CREATE TABLE memory_meta (
            texto TEXT PRIMARY KEY
                REFERENCES vectores(texto) ON DELETE CASCADE ON UPDATE CASCADE,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            source TEXT NOT NULL DEFAULT 'user',
            embedder TEXT NOT NULL DEFAULT ''
        )"""
    )
    conn.execute("CREATE INDEX memory_meta_updated ON memory_meta(updated_at)")
    # rows of an adopted original database: known since now, source and model unknown
    now = time.time()
    conn.execute(
        "INSERT INTO memory_meta(texto, created_at, updated_at, source, embedder) "
        "SELECT texto, ?, ?, 'imported', '' FROM vectores",
        (now, now),
    )


def create_log(conn: sqlite3.Connection) -> None:
    """Migration 3: the change log every writer of the file fills (triggers), so a reader
    applies others' changes row by row instead of reloading."""
    conn.execute(
        "CREATE TABLE memory_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, texto TEXT NOT NULL)"
    )
    conn.execute("CREATE TABLE memory_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    conn.execute("INSERT INTO memory_state(key, value) VALUES ('log_floor', 0)")
    # Triggers fire for every writer of the file (the original app included), so any change
    # to a vector — or to the model it belongs to — leaves the text it touched in the log.
    conn.execute(
        "CREATE TRIGGER vectores_log_insert AFTER INSERT ON vectores BEGIN "
        "INSERT INTO memory_log(texto) VALUES (new.texto); END"
    )
    conn.execute(
        "CREATE TRIGGER vectores_log_update AFTER UPDATE ON vectores BEGIN "
        "INSERT INTO memory_log(texto) VALUES (old.texto); "
        "INSERT INTO memory_log(texto) SELECT new.texto WHERE new.texto IS NOT old.texto; END"
    )
    conn.execute(
        "CREATE TRIGGER vectores_log_delete AFTER DELETE ON vectores BEGIN "
        "INSERT INTO memory_log(texto) VALUES (old.texto); END"
    )
    conn.execute(
        "CREATE TRIGGER memory_meta_log_model AFTER UPDATE OF embedder ON memory_meta BEGIN "
        "INSERT INTO memory_log(texto) VALUES (new.texto); END"
    )
    conn.execute(
        "CREATE TRIGGER memory_meta_log_insert AFTER INSERT ON memory_meta BEGIN "
        "INSERT INTO memory_log(texto) VALUES (new.texto); END"
    )


def create_signal(conn: sqlite3.Connection) -> None:
    """Migration 4: vectors of a second embedder, dropped and renamed with their text."""
    # Vectors of a second embedder, used to re-rank the best candidates (backends.memories.
    # recall). Derived from the text alone: recomputed when missing, dropped with the text.
    conn.execute(
        "CREATE TABLE memory_signal (texto TEXT NOT NULL, model TEXT NOT NULL, "
        "vector BLOB NOT NULL, PRIMARY KEY (texto, model))"
    )
    conn.execute(
        "CREATE TRIGGER vectores_signal_rename AFTER UPDATE OF texto ON vectores "
        "WHEN new.texto IS NOT old.texto BEGIN "
        "DELETE FROM memory_signal WHERE texto = old.texto; END"
    )
    conn.execute(
        "CREATE TRIGGER vectores_signal_delete AFTER DELETE ON vectores BEGIN "
        "DELETE FROM memory_signal WHERE texto = old.texto; END"
    )


def create_identity(conn: sqlite3.Connection) -> None:
    """Migration 5: the database's identity, a random number its derived files (the int8
    snapshot, :mod:`.snapshot`) are bound to, so they never pair with another database's."""
    conn.execute(
        "INSERT OR IGNORE INTO memory_state(key, value) VALUES ('store_id', ?)",
        (secrets.randbits(62) + 1,),
    )


#: append-only: never edit or reorder, only add at the end
MIGRATIONS: list[Migration] = [
    ("vectores", VECTORES_DDL),
    ("memory_meta", create_meta),
    ("memory_log", create_log),
    ("memory_signal", create_signal),
    ("memory_identity", create_identity),
]

VECTORES_COLUMNS = [("texto", "TEXT", 1), ("dimension", "INTEGER", 0), ("vector", "BLOB", 0)]
SELECT_ROW = (
    "SELECT v.texto, v.dimension, v.vector, COALESCE(m.embedder, '') "
    "FROM vectores v LEFT JOIN memory_meta m ON m.texto = v.texto"
)
SELECT_MEMORY = (
    "SELECT v.texto, COALESCE(m.created_at, 0), COALESCE(m.updated_at, 0), "
    "COALESCE(m.source, 'imported'), v.dimension, COALESCE(m.embedder, ''), length(v.vector) "
    "FROM vectores v LEFT JOIN memory_meta m ON m.texto = v.texto"
)

SELECT_STORED = (
    "SELECT v.texto, COALESCE(m.created_at, 0), COALESCE(m.updated_at, 0), "
    "COALESCE(m.source, 'imported'), v.dimension, COALESCE(m.embedder, ''), v.vector "
    "FROM vectores v LEFT JOIN memory_meta m ON m.texto = v.texto"
)


def read_signal(conn: sqlite3.Connection, model: str, texts: Sequence[str]) -> dict[str, Vector]:
    """``memory_signal``'s vectors of ``model`` for ``texts`` (missing or unreadable: left out)."""
    out: dict[str, Vector] = {}
    unique = list(dict.fromkeys(texts))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for text, blob in conn.execute(
            f"SELECT texto, vector FROM memory_signal WHERE model = ? AND texto IN ({marks})",
            (model, *chunk),
        ):
            if isinstance(blob, bytes) and len(blob) % 4 == 0:
                vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
                if np.isfinite(vector).all():
                    out[text] = vector
    return out


def write_signal(conn: sqlite3.Connection, rows: Sequence[tuple[str, str, bytes]]) -> None:
    """``(texto, model, blob)`` rows into ``memory_signal``, for texts that exist, in one
    transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany(
            "INSERT OR REPLACE INTO memory_signal(texto, model, vector) "
            "SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM vectores WHERE texto = ?)",
            [(*row, row[0]) for row in rows],
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def to_blob(vector: Vector) -> bytes:
    """The BLOB format (the original's): little-endian float32, ``dimension * 4`` bytes."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes, dimension: int) -> Vector | None:
    """The vector in ``blob``, or None when it is not ``dimension`` finite float32 values."""
    if blob is None or len(blob) != dimension * 4:
        return None
    vector = np.frombuffer(blob, dtype="<f4").astype(np.float32)
    if not np.isfinite(vector).all():
        return None
    return vector


def clean_text(text: str) -> str:
    """A memory's text as stored: whitespace collapsed; :class:`EmptyTextError` when none is
    left."""
    cleaned = " ".join(str(text).split())
    if not cleaned:
        raise EmptyTextError(_("a memory needs some text"))
    return cleaned
