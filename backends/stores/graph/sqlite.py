"""The embedded graph: two tables and recursive CTEs (``tutor-graph.sqlite3``); reads go
through a second connection opened with ``PRAGMA query_only``."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from backends.failures import failed
from backends.i18n import N_, _
from backends.stores.description import (
    Measurement,
    SqliteFile,
    scalar,
    sqlite_count,
)
from backends.stores.engines.sqlite import connect, migrate
from backends.stores.graph import (
    DEFAULT_NAMESPACE,
    SQL,
    AllowListedGraph,
    GraphUnavailableError,
    Operation,
    entities_note,
)

if TYPE_CHECKING:
    from backends.config import Config

log = logging.getLogger(__name__)

# -- SQLite --------------------------------------------------------------------------------------

GRAPH_MIGRATIONS = [
    (
        "001_entities_relations",
        """
        CREATE TABLE entities (
            ns TEXT NOT NULL,
            name TEXT NOT NULL,
            PRIMARY KEY (ns, name)
        );
        CREATE TABLE relations (
            ns TEXT NOT NULL,
            a TEXT NOT NULL,
            b TEXT NOT NULL,
            scope TEXT NOT NULL,
            weight INTEGER NOT NULL,
            sources TEXT NOT NULL DEFAULT '[]',
            PRIMARY KEY (ns, a, b, scope)
        );
        CREATE INDEX relations_b ON relations(ns, b);
        CREATE TABLE graph_meta (
            ns TEXT NOT NULL,
            scope TEXT NOT NULL,
            digest TEXT NOT NULL,
            PRIMARY KEY (ns, scope)
        );
        """,
    ),
]


class SqliteGraph(AllowListedGraph, SqliteFile):
    """The embedded graph: two tables and recursive CTEs in ``tutor-graph.sqlite3``."""

    kind = "sqlite"
    QUERIES = SQL

    #: the engine, as the storage map names it
    ENGINE = N_("SQLite (recursive CTEs)")

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The namespace's relations (and, as a note, its entities), read-only."""
        path = Path(context["path"])
        namespace = str(context.get("namespace", DEFAULT_NAMESPACE))
        count = "SELECT count(*) FROM {} WHERE ns = ?"
        measured = sqlite_count(path, count.format("relations"), (namespace,))
        entities = scalar(path, count.format("entities"), (namespace,))
        return replace(measured, note=entities_note(int(entities or 0)))

    def __init__(self, path: Path, namespace: str = DEFAULT_NAMESPACE) -> None:
        super().__init__(namespace)
        self.file = path
        #: where it keeps its data (the storage map's location)
        self.where = str(path)
        self._lock = threading.RLock()
        self._writer = connect(path)
        try:
            self._writer.execute("PRAGMA secure_delete=ON")  # a forgotten scope is overwritten
            migrate(self._writer, GRAPH_MIGRATIONS)
            self._reader = connect(path)
            self._reader.execute("PRAGMA query_only = ON")  # reads cannot write, whatever runs
        except Exception:
            self._writer.close()
            raise
        for conn in (self._writer, self._reader):
            conn.row_factory = sqlite3.Row

    @classmethod
    def from_config(
        cls, config: Config, *, path: Path, namespace: str = DEFAULT_NAMESPACE, **context: Any
    ) -> SqliteGraph:
        """The file ``path`` (in the data dir)."""
        return cls(path, namespace)

    def _run(
        self, operation: Operation, text: str, parameters: dict[str, Any]
    ) -> list[dict[str, Any]]:
        bound = {
            k: json.dumps(v, ensure_ascii=False) if isinstance(v, list) else v
            for k, v in parameters.items()
        }
        statements = text.split(";\n")
        try:
            with self._lock:
                if operation.access == "read":
                    return [dict(r) for r in self._reader.execute(statements[0], bound)]
                self._writer.execute("BEGIN IMMEDIATE")
                try:
                    rows: list[dict[str, Any]] = []
                    for statement in statements:
                        rows = [dict(r) for r in self._writer.execute(statement, bound)]
                    self._writer.execute("COMMIT")
                    return rows
                except BaseException:
                    self._writer.execute("ROLLBACK")
                    raise
        except sqlite3.Error as err:
            raise GraphUnavailableError(
                failed(
                    _("graph at {file}: {operation}").format(
                        file=self.file, operation=operation.name
                    ),
                    err,
                )
            ) from err

    def forget_scope(self, scope: str) -> None:
        super().forget_scope(scope)
        try:  # the WAL still holds the pages from before: copy back and truncate (best effort)
            with self._lock:
                self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as err:
            log.info("graph at %s: WAL not truncated after forgetting a scope: %s", self.file, err)

    def close(self) -> None:
        with self._lock:
            self._writer.close()
            self._reader.close()
