"""Writer processes for the concurrency tests (imported by spawned children: backends only)."""

from __future__ import annotations

import time
from pathlib import Path

from backends.stores.audit_log import AuditLog
from backends.stores.audit_log.record import Draft


def open_log(spec: tuple[str, str, str]) -> AuditLog:
    kind, where, schema = spec
    if kind == "sqlite":
        from backends.stores.audit_log.sqlite import SQLiteAuditLog

        return SQLiteAuditLog(Path(where))
    from backends.stores.audit_log.postgres import PostgresAuditLog

    return PostgresAuditLog(where, schema=schema)


def write(spec: tuple[str, str, str], writer: int, count: int, start_at: float) -> list[int]:
    """Append ``count`` records as writer ``writer``; start at wall time ``start_at``."""
    log = open_log(spec)
    try:
        time.sleep(max(0.0, start_at - time.time()))
        return [
            log.append_many([Draft("test.write", None, {"writer": writer, "n": n})])[0].seq
            for n in range(count)
        ]
    finally:
        log.close()
