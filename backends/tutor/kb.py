"""The knowledge base: the shipped study notes, the user's own files, chunks and entities.

SQLite (``tutor.sqlite3``, WAL) is the source of truth for everything the tutor retrieves:
documents, their chunks (with the owner *scope* — ``"shared"`` or ``"user:<name>"``), the
entities each chunk mentions (from the curated term list, :mod:`backends.tutor.terms`) and
the FTS5 index used by :mod:`backends.tutor.keyword`. The Chroma vectors and the graph are
derived from these tables and can be rebuilt from them at any time.

Chunking packs whole sentences into chunks of at most ``CHUNK_WORDS`` words, closes a chunk at
a paragraph end once it has ``MIN_WORDS``, and starts the next chunk with the last sentence(s)
of the previous one (up to ``OVERLAP_WORDS``), so a fact that straddles a boundary is whole in
at least one chunk. Import is idempotent: a document whose content hash (text + chunker
version) is unchanged is skipped; a changed one has its chunks replaced. Chunk ids carry a
hash of their text, so a vector or graph store that still holds an old chunk id is noticed and
repaired by a plain id comparison.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends import failures
from backends.errors import CustodiaEnvironmentError, StoreUnavailableError
from backends.i18n import _
from backends.progress import Progress
from backends.stores.engines.sqlite import connect, migrate
from backends.text import bad_character, printable
from backends.tutor.terms import Term as Term  # the entities live in terms.py; still named here
from backends.tutor.terms import Terms

SHARED = "shared"
USER_PREFIX = "user:"
CHUNK_WORDS = 120
MIN_WORDS = 40
OVERLAP_WORDS = 30
CHUNKER_VERSION = 3
#: at most this many source chunks are kept per relation (its weight still counts them all)
MAX_EDGE_SOURCES = 40
SUFFIXES = (".md", ".markdown", ".txt")
MAX_FILE_BYTES = 2_000_000
DB_FILE = "tutor.sqlite3"

_USER_RE = re.compile(r"^[^\x00-\x1f\x7f]{1,64}$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|>\s?)")
#: a numbered-list marker; only where a list item can start (see :func:`split_markdown`)
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+")


class KnowledgeBaseError(CustodiaEnvironmentError):
    """A file to import cannot be read (missing, not text, too large)."""


class ScopeError(CustodiaEnvironmentError):
    """A user name that cannot name a scope (empty, too long, control characters, bytes
    that are not UTF-8)."""


def resources_dir() -> Path:
    """``resources/`` of the source tree, or of a PyInstaller bundle (``sys._MEIPASS``)."""
    here = Path(__file__).resolve().parents[2] / "resources"
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle and not here.is_dir():
        return Path(bundle) / "resources"
    return here


def shipped_kb_dir() -> Path:
    return resources_dir() / "kb"


def user_scope(user: str) -> str:
    """``"user:<name>"`` for a valid user name."""
    name = user.strip()
    if problem := bad_character(name):  # undecodable bytes from a command line
        raise ScopeError(
            _("{name!r} cannot name a user: it holds {problem}; type it in UTF-8").format(
                name=printable(name), problem=problem
            )
        )
    if not name or not _USER_RE.match(name):
        raise ScopeError(
            _(
                "{name!r} cannot name a user: a name is not blank and has 1 to 64 printable "
                "characters"
            ).format(name=user)
        )
    return USER_PREFIX + name


def scopes_for(user: str | None) -> tuple[str, ...]:
    """What a user may read: the shared corpus and their own notes."""
    if not user or not user.strip():
        return (SHARED,)
    return (SHARED, user_scope(user))


def scope_filter(scopes: Sequence[str]) -> dict[str, Any]:
    """The vector index's ``where`` filter of a search (or a delete) restricted to ``scopes``
    (CT6: the scopes go inside the query, never applied after it)."""
    return {"scope": {"$in": list(scopes)}}


def count_documents(path: Path, scope: str) -> int | None:
    """Documents of ``scope`` in the knowledge base file at ``path``, read-only and without
    creating anything: 0 when there is no such file, None when it cannot be read."""
    if not path.exists():
        return 0
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
        try:
            row = conn.execute(
                "SELECT count(*) FROM documents WHERE scope = ?", (scope,)
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return int(row[0])


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# -- documents and chunking -------------------------------------------------------------------


@dataclass(frozen=True)
class SourceDoc:
    """A document ready to import."""

    doc_id: str
    scope: str
    source: str  # "shipped" | "import"
    title: str
    path: str
    text: str

    @property
    def content_hash(self) -> str:
        return _sha(f"{CHUNKER_VERSION}\0{self.title}\0{self.text}")


@dataclass(frozen=True)
class Piece:
    ordinal: int
    text: str


def split_markdown(raw: str, fallback_title: str) -> tuple[str, list[str]]:
    """(title, paragraphs): the first ``# heading`` is the title; blank lines split paragraphs."""
    title = ""
    paragraphs: list[str] = []
    lines: list[str] = []

    def flush() -> None:
        if lines:
            paragraphs.append(" ".join(lines))
            lines.clear()

    for line in raw.replace("\r\n", "\n").split("\n"):
        stripped = line.strip()
        if not title and not paragraphs and not lines and stripped.startswith("# "):
            title = stripped[2:].strip()
            continue
        if not stripped:
            flush()
            continue
        if stripped.startswith("#"):  # a sub-heading is a paragraph of its own
            flush()
            lines.append(_MARKUP.sub("", stripped))
            flush()
            continue
        text = _MARKUP.sub("", stripped)
        # "2. item" starts a list item at a paragraph's start or after a finished sentence;
        # elsewhere it is wrapped prose ("... (range 2 to" / "3) for ...") and stays as is
        if not lines or lines[-1].rstrip().endswith((".", ":", "!", "?")):
            text = _NUMBERED.sub("", text)
        lines.append(text)
    flush()
    return (title or fallback_title), [p for p in paragraphs if p]


def sentences(paragraph: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(paragraph.split())) if s.strip()]


def chunk_paragraphs(
    paragraphs: Sequence[str],
    max_words: int = CHUNK_WORDS,
    min_words: int = MIN_WORDS,
    overlap_words: int = OVERLAP_WORDS,
) -> list[Piece]:
    """Pack sentences into overlapping chunks (see the module docstring)."""
    pieces: list[str] = []
    current: list[str] = []
    fresh = 0  # sentences in ``current`` not carried over from the previous chunk

    def words(items: Sequence[str]) -> int:
        return sum(len(s.split()) for s in items)

    def emit() -> None:
        nonlocal current, fresh
        pieces.append(" ".join(current))
        tail: list[str] = []
        for sentence in reversed(current[1:]):  # a proper suffix: never the whole chunk again
            if words([*tail, sentence]) > overlap_words:
                break
            tail.insert(0, sentence)
        current, fresh = tail, 0

    for paragraph in paragraphs:
        for sentence in sentences(paragraph):
            if fresh and words(current) + len(sentence.split()) > max_words:
                emit()
            current.append(sentence)
            fresh += 1
        if fresh and words(current) >= min_words:
            emit()
    if fresh:
        pieces.append(" ".join(current))
    return [Piece(i, text) for i, text in enumerate(pieces)]


def make_chunk_id(doc_id: str, ordinal: int, title: str, text: str) -> str:
    """``<doc>#<ordinal>-<hash of its text>``: a changed chunk gets a new id."""
    return f"{doc_id}#{ordinal}-{_sha(title + text)[:8]}"


def pretty_stem(path: Path) -> str:
    return path.stem.replace("-", " ").replace("_", " ").strip().capitalize() or path.name


def read_document(
    path: Path, scope: str, *, source: str = "import", doc_id: str = "", display: str = ""
) -> SourceDoc:
    """Read one Markdown or text file (UTF-8) as a document of ``scope``.

    ``display`` is the path shown to people (default: the file's path). A path that is not
    valid UTF-8 (a name with other bytes, which Linux allows) cannot be hashed into an id,
    stored or shown: it is a :class:`KnowledgeBaseError` naming the file with escapes, so
    that a folder import reports it and imports the rest.
    """
    if problem := bad_character(str(path)):
        raise KnowledgeBaseError(
            _(
                "{path}: the file name is not valid UTF-8 ({problem}); rename the file to import it"
            ).format(path=printable(str(path)), problem=problem)
        )
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise KnowledgeBaseError(
                _("{path}: too large to import ({size} bytes)").format(path=path, size=size)
            )
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise KnowledgeBaseError(_("{path}: not UTF-8 text").format(path=path)) from None
    except OSError as err:
        said = _("{path}: cannot be read").format(path=path)
        raise KnowledgeBaseError(failures.failed(said, err)) from err
    title, paragraphs = split_markdown(raw, pretty_stem(path))
    if not doc_id:
        doc_id = "doc-" + _sha(f"{scope}\0{path.resolve()}")[:16]
    return SourceDoc(doc_id, scope, source, title, display or str(path), "\n\n".join(paragraphs))


def collect_files(path: Path) -> list[Path]:
    """``path`` itself, or the Markdown/text files under it (sorted, hidden ones skipped)."""
    if path.is_file():
        if path.suffix.lower() not in SUFFIXES:
            raise KnowledgeBaseError(
                _("{path}: only Markdown and text files ({suffixes}) can be imported").format(
                    path=printable(str(path)), suffixes=", ".join(SUFFIXES)
                )
            )
        return [path]
    if not path.is_dir():
        raise KnowledgeBaseError(
            _("{path}: no such file or folder").format(path=printable(str(path)))
        )
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )


def shipped_documents(kb_dir: Path | None = None) -> list[SourceDoc]:
    """The study notes shipped in ``resources/kb/notes`` (shared scope)."""
    notes = (kb_dir or shipped_kb_dir()) / "notes"
    return [
        read_document(
            p, SHARED, source="shipped", doc_id=f"kb/{p.stem}", display=f"kb/notes/{p.name}"
        )
        for p in sorted(notes.glob("*.md"))
    ]


def load_terms(kb_dir: Path | None = None) -> Terms:
    return Terms.load((kb_dir or shipped_kb_dir()) / "terms.txt")


# -- the store --------------------------------------------------------------------------------

MIGRATIONS = [
    (
        "001_documents_chunks_entities_fts",
        """
        CREATE TABLE documents (
            doc_id TEXT PRIMARY KEY,
            scope TEXT NOT NULL,
            source TEXT NOT NULL,
            title TEXT NOT NULL,
            path TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            imported_at REAL NOT NULL
        );
        CREATE INDEX documents_scope ON documents(scope);
        CREATE TABLE chunks (
            rowid INTEGER PRIMARY KEY,
            chunk_id TEXT NOT NULL UNIQUE,
            doc_id TEXT NOT NULL REFERENCES documents(doc_id) ON DELETE CASCADE,
            scope TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            text TEXT NOT NULL
        );
        CREATE INDEX chunks_scope ON chunks(scope);
        CREATE INDEX chunks_doc ON chunks(doc_id);
        CREATE TABLE chunk_entities (
            chunk_id TEXT NOT NULL REFERENCES chunks(chunk_id) ON DELETE CASCADE,
            entity TEXT NOT NULL,
            PRIMARY KEY (chunk_id, entity)
        );
        CREATE INDEX chunk_entities_entity ON chunk_entities(entity);
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            title, text, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        """,
    ),
]


@dataclass(frozen=True)
class Chunk:
    chunk_id: str
    doc_id: str
    scope: str
    ordinal: int
    title: str
    path: str
    text: str

    @property
    def indexed_text(self) -> str:
        """What is embedded and keyword-indexed: the note's title, then the passage."""
        return f"{self.title}\n{self.text}"

    def vector_payload(self) -> dict[str, str]:
        """What the vector index keeps beside the chunk's vector: its scope and document."""
        return {"scope": self.scope, "doc": self.doc_id}


@dataclass(frozen=True)
class CoEdge:
    """Two entities mentioned in the same chunk(s) of one scope."""

    a: str
    b: str
    scope: str
    weight: int
    sources: tuple[str, ...]


@dataclass
class ImportReport:
    scope: str = SHARED
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_added: list[str] = field(default_factory=list)
    chunks_removed: list[str] = field(default_factory=list)
    #: files with nothing to import (empty, or a title only): "<path>: <why>"
    skipped: list[str] = field(default_factory=list)
    #: files that could not be read (missing, not UTF-8, too large): "<path>: <why>"
    unreadable: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.chunks_added or self.chunks_removed)

    @property
    def imported(self) -> int:
        """Documents now in the base from this import (added, updated or already there)."""
        return self.added + self.updated + self.unchanged

    def merge(self, other: ImportReport) -> None:
        """Add ``other``'s counts and lists to this report (several imports shown as one)."""
        self.added += other.added
        self.updated += other.updated
        self.unchanged += other.unchanged
        self.removed += other.removed
        self.chunks_added += other.chunks_added
        self.chunks_removed += other.chunks_removed
        self.skipped += other.skipped
        self.unreadable += other.unreadable

    def line(self) -> str:
        text = (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.removed} removed; {len(self.chunks_added)} chunks indexed"
        )
        if self.skipped:
            text += f"; {len(self.skipped)} skipped (empty)"
        if self.unreadable:
            text += f"; {len(self.unreadable)} unreadable"
        return text


@dataclass(frozen=True)
class KbStats:
    documents: int
    chunks: int
    entities: int
    by_scope: dict[str, tuple[int, int]]  # scope -> (documents, chunks)


class KnowledgeBase:
    """Documents, chunks, entity mentions and the FTS5 index in one SQLite file."""

    def __init__(self, path: Path, terms: Terms) -> None:
        self.path = path
        self.terms = terms
        self.lock = threading.RLock()
        self.conn = connect(path)
        self.conn.row_factory = sqlite3.Row
        try:
            # deleted notes (a user's, see :meth:`delete_scope`) are overwritten, not left in
            # free pages
            self.conn.execute("PRAGMA secure_delete=ON")
            migrate(self.conn, MIGRATIONS)
        except Exception:
            self.conn.close()
            raise

    def close(self) -> None:
        with self.lock:
            self.conn.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def _query(
        self, sql: str, params: Sequence[object] | dict[str, object] = ()
    ) -> list[sqlite3.Row]:
        try:
            with self.lock:
                return list(self.conn.execute(sql, params))
        except sqlite3.Error as err:
            raise StoreUnavailableError(
                failures.failed(_("{path}: the notes cannot be read").format(path=self.path), err)
            ) from err

    # -- import ----------------------------------------------------------------------------
    def import_documents(
        self,
        docs: Iterable[SourceDoc],
        progress: Progress | None = None,
        *,
        scope: str = SHARED,
        prune_source: str = "",
    ) -> ImportReport:
        """Add new documents, replace changed ones, skip unchanged ones (content hash).

        With ``prune_source``, documents of that source and ``scope`` that are not among
        ``docs`` are removed (how the shipped corpus follows an upgrade).
        """
        docs = list(docs)
        progress = progress or Progress()
        report = ImportReport(scope=scope)
        progress.start(len(docs), _("reading notes"))
        seen: set[str] = set()
        for doc in docs:
            progress.check()
            seen.add(doc.doc_id)
            try:
                self._import_one(doc, report)
            except sqlite3.Error as err:
                raise StoreUnavailableError(
                    failures.failed(
                        _("{path}: cannot import {doc}").format(path=self.path, doc=doc.path), err
                    )
                ) from err
            progress.advance(1, doc.title)
        if prune_source:
            stale = [
                r["doc_id"]
                for r in self._query(
                    "SELECT doc_id FROM documents WHERE source = ? AND scope = ?",
                    (prune_source, scope),
                )
                if r["doc_id"] not in seen
            ]
            report.chunks_removed += self.remove_documents(stale)
            report.removed += len(stale)
        return report

    def _import_one(self, doc: SourceDoc, report: ImportReport) -> None:
        digest = doc.content_hash
        row = self._query("SELECT content_hash FROM documents WHERE doc_id = ?", (doc.doc_id,))
        if row and row[0]["content_hash"] == digest:
            report.unchanged += 1
            return
        pieces = chunk_paragraphs(doc.text.split("\n\n"))
        with self._transaction() as conn:
            # Read again under the write lock: another process (``kb stats`` while
            # ``ask tutor`` seeds a fresh data dir) may have imported it since the read above.
            row = list(
                conn.execute("SELECT content_hash FROM documents WHERE doc_id = ?", (doc.doc_id,))
            )
            if row and row[0]["content_hash"] == digest:
                report.unchanged += 1
                return
            if row:
                report.chunks_removed += self._delete_chunks(conn, doc.doc_id)
                conn.execute(
                    "UPDATE documents SET scope = ?, source = ?, title = ?, path = ?, "
                    "content_hash = ?, imported_at = ? WHERE doc_id = ?",
                    (doc.scope, doc.source, doc.title, doc.path, digest, time.time(), doc.doc_id),
                )
                report.updated += 1
            else:
                conn.execute(
                    "INSERT INTO documents (doc_id, scope, source, title, path, content_hash, "
                    "imported_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (doc.doc_id, doc.scope, doc.source, doc.title, doc.path, digest, time.time()),
                )
                report.added += 1
            for piece in pieces:
                chunk_id = make_chunk_id(doc.doc_id, piece.ordinal, doc.title, piece.text)
                cursor = conn.execute(
                    "INSERT INTO chunks (chunk_id, doc_id, scope, ordinal, text) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (chunk_id, doc.doc_id, doc.scope, piece.ordinal, piece.text),
                )
                conn.execute(
                    "INSERT INTO chunks_fts (rowid, title, text) VALUES (?, ?, ?)",
                    (cursor.lastrowid, doc.title, piece.text),
                )
                entities = self.terms.find(f"{doc.title}\n{piece.text}")
                conn.executemany(
                    "INSERT INTO chunk_entities (chunk_id, entity) VALUES (?, ?)",
                    [(chunk_id, e) for e in entities],
                )
                report.chunks_added.append(chunk_id)

    @staticmethod
    def _delete_chunks(conn: sqlite3.Connection, doc_id: str) -> list[str]:
        ids = [
            r[0] for r in conn.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))
        ]
        conn.execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE doc_id = ?)",
            (doc_id,),
        )
        conn.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
        return ids

    def remove_documents(self, doc_ids: Sequence[str]) -> list[str]:
        """Remove documents with their chunks; the removed chunk ids."""
        removed: list[str] = []
        if not doc_ids:
            return removed
        try:
            with self._transaction() as conn:
                for doc_id in doc_ids:
                    removed += self._delete_chunks(conn, doc_id)
                    conn.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        except sqlite3.Error as err:
            raise StoreUnavailableError(
                failures.failed(_("{path}: cannot remove the notes").format(path=self.path), err)
            ) from err
        return removed

    def has_document(self, doc_id: str) -> bool:
        return bool(self._query("SELECT 1 FROM documents WHERE doc_id = ?", (doc_id,)))

    def delete_scope(self, scope: str) -> tuple[int, list[str]]:
        """Remove every document of ``scope`` (a user's own notes) with its chunks, entity
        mentions and keyword index entries; ``(documents removed, chunk ids removed)``.

        Nothing of them is left readable in the file: ``secure_delete`` overwrites the freed
        content, the FTS5 index is merged (``optimize``: the deleted words leave its
        segments) and the WAL, which holds page images from before, is checkpointed and
        truncated when no other connection is reading (else at the next checkpoint).
        """
        docs = [r[0] for r in self._query("SELECT doc_id FROM documents WHERE scope = ?", (scope,))]
        removed = self.remove_documents(docs)
        if docs:
            try:
                with self._transaction() as conn:
                    conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('optimize')")
                with self.lock:
                    self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as err:
                raise StoreUnavailableError(
                    failures.failed(
                        _(
                            "{path}: the notes were removed but the index could not be compacted"
                        ).format(path=self.path),
                        err,
                    )
                ) from err
        return len(docs), removed

    # -- reading ---------------------------------------------------------------------------
    def chunk_ids(self) -> set[str]:
        return {r[0] for r in self._query("SELECT chunk_id FROM chunks")}

    def chunks(self, ids: Iterable[str]) -> dict[str, Chunk]:
        wanted = list(dict.fromkeys(ids))
        out: dict[str, Chunk] = {}
        for start in range(0, len(wanted), 500):
            rows = self._query(
                "SELECT c.chunk_id, c.doc_id, c.scope, c.ordinal, d.title, d.path, c.text "
                "FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
                "WHERE c.chunk_id IN (SELECT value FROM json_each(?))",
                (json.dumps(wanted[start : start + 500]),),
            )
            for r in rows:
                out[r["chunk_id"]] = Chunk(
                    r["chunk_id"],
                    r["doc_id"],
                    r["scope"],
                    r["ordinal"],
                    r["title"],
                    r["path"],
                    r["text"],
                )
        return out

    def all_chunks(self, scope: str | None = None) -> list[Chunk]:
        sql = (
            "SELECT c.chunk_id, c.doc_id, c.scope, c.ordinal, d.title, d.path, c.text "
            "FROM chunks c JOIN documents d ON d.doc_id = c.doc_id "
        )
        rows = (
            self._query(sql + "WHERE c.scope = ? ORDER BY c.rowid", (scope,))
            if scope is not None
            else self._query(sql + "ORDER BY c.rowid")
        )
        return [Chunk(r[0], r[1], r[2], r[3], r[4], r[5], r[6]) for r in rows]

    def scopes(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT scope FROM chunks ORDER BY scope")]

    def users(self) -> list[str]:
        return [
            s[len(USER_PREFIX) :]
            for s in (r[0] for r in self._query("SELECT DISTINCT scope FROM documents"))
            if s.startswith(USER_PREFIX)
        ]

    def entities(self) -> list[str]:
        return [r[0] for r in self._query("SELECT DISTINCT entity FROM chunk_entities")]

    def co_occurrences(self, scope: str) -> list[CoEdge]:
        """The graph's relations for ``scope``: entity pairs mentioned in a same chunk."""
        rows = self._query(
            "SELECT a.entity, b.entity, count(*), json_group_array(a.chunk_id) "
            "FROM chunk_entities a "
            "JOIN chunk_entities b ON b.chunk_id = a.chunk_id AND a.entity < b.entity "
            "JOIN chunks c ON c.chunk_id = a.chunk_id "
            "WHERE c.scope = ? GROUP BY a.entity, b.entity ORDER BY a.entity, b.entity",
            (scope,),
        )
        return [
            CoEdge(r[0], r[1], scope, int(r[2]), tuple(sorted(json.loads(r[3]))[:MAX_EDGE_SOURCES]))
            for r in rows
        ]

    def stats(self) -> KbStats:
        by_scope: dict[str, tuple[int, int]] = {}
        for r in self._query(
            "SELECT d.scope, count(DISTINCT d.doc_id), count(c.chunk_id) "
            "FROM documents d LEFT JOIN chunks c ON c.doc_id = d.doc_id GROUP BY d.scope"
        ):
            by_scope[r[0]] = (int(r[1]), int(r[2]))
        entities = self._query("SELECT count(DISTINCT entity) FROM chunk_entities")[0][0]
        return KbStats(
            documents=sum(d for d, _ in by_scope.values()),
            chunks=sum(c for _, c in by_scope.values()),
            entities=int(entities),
            by_scope=by_scope,
        )
