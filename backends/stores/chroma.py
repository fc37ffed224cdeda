"""Opening Chroma, shared by every assistant that keeps a derived vector index in it.

chromadb keeps one "system" per local path and does not guard its creation: two assistants
opening the same folder from two threads at once can make one fail. One process-wide lock
around the open, and the same settings everywhere (chromadb refuses a second client on a
path with different settings), fix that for everyone. Server clients get our timeout, since
chromadb's own HTTP client has none.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from backends.errors import StoreUnavailableError
from backends.net import require_loopback
from backends.stores import hnsw_check

log = logging.getLogger(__name__)

_OPEN_LOCK = threading.Lock()
#: local folders checked by this process (see :func:`_discard_if_damaged`)
_CHECKED: set[str] = set()
OPEN_ATTEMPTS = 3
#: vectors per write call. chromadb holds the GIL for a whole ``upsert`` (measured: 12–42 ms
#: for 32 vectors, 65–133 ms for 256), so bigger pages would stall the window's thread.
WRITE_PAGE = 32


def settings() -> Any:
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def _discard_if_damaged(path: Path) -> None:
    """Delete a local Chroma folder whose HNSW files would crash chromadb's loader.

    Only the first open of a folder in this process checks (later opens share chromadb's
    live system for it). The folder holds derived data only: its owner rebuilds it from the
    source, as after any loss of the index.
    """
    key = str(path.resolve())
    if key in _CHECKED:
        return
    for segment in hnsw_check.segments(path):
        why = hnsw_check.problem(segment)
        if why is not None:
            log.warning("vector index %s is damaged (%s): discarded, to be rebuilt", path, why)
            shutil.rmtree(path)
            break
    _CHECKED.add(key)


def open_local(path: Path) -> Any:
    """A ``PersistentClient`` on ``path`` (created 0700); typed error when impossible.

    A folder whose HNSW segment is damaged (a kill in the middle of a persist, a bad disk)
    is discarded first: chromadb's native loader would crash the process on it.
    """
    last: Exception | None = None
    for attempt in range(OPEN_ATTEMPTS):
        try:
            import chromadb  # heavy (~0.5 s): only when an index is first used

            with _OPEN_LOCK:
                _discard_if_damaged(path)
                path.mkdir(parents=True, exist_ok=True, mode=0o700)
                return chromadb.PersistentClient(path=str(path), settings=settings())
        except Exception as err:  # chromadb raises plain exceptions for a bad folder
            last = err
            time.sleep(0.2 * (attempt + 1))
    raise StoreUnavailableError(f"Chroma at {path}: cannot open: {last}") from last


def open_server(url: str, timeout: float) -> Any:
    """An ``HttpClient`` for a Chroma server on loopback; every request times out."""
    require_loopback("chroma_url", url)
    parsed = urlparse(url)
    ssl = parsed.scheme == "https"
    try:
        import chromadb
        import httpx

        client = chromadb.HttpClient(
            host=parsed.hostname or "127.0.0.1",
            port=parsed.port or (443 if ssl else 8000),
            ssl=ssl,
            settings=settings(),
        )
        session = getattr(getattr(client, "_server", None), "_session", None)
        if session is not None:
            session.timeout = httpx.Timeout(timeout)
    except Exception as err:
        raise StoreUnavailableError(f"Chroma server {url}: not reachable ({err})") from err
    return client


def is_not_found(err: Exception) -> bool:
    """chromadb's 'collection does not exist', whichever client raised it."""
    return type(err).__name__ == "NotFoundError" or "does not exist" in str(err)
