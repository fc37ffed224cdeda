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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from backends.errors import CustodiaEnvironmentError, DimensionMismatchError, StoreUnavailableError
from backends.failures import failed
from backends.i18n import N_, _
from backends.net import require_loopback
from backends.stores.description import Measurement, running_store
from backends.stores.engines import hnsw_check
from backends.stores.server import ServerOrFolder

if TYPE_CHECKING:
    from backends.config import Config

log = logging.getLogger(__name__)

_OPEN_LOCK = threading.Lock()
#: local folders checked by this process (see :func:`_discard_if_damaged`)
_CHECKED: set[str] = set()
OPEN_ATTEMPTS = 3
#: ids per read or delete call
PAGE = 1000
#: vectors per write call. chromadb holds the GIL for a whole ``upsert`` (measured: 12–42 ms
#: for 32 vectors, 65–133 ms for 256), so bigger pages would stall the window's thread.
WRITE_PAGE = 32


def settings() -> Any:
    from chromadb.config import Settings  # noqa: PLC0415 — lazy: chromadb is heavy (~0.5 s)

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
            log.warning(_("vector index %s is damaged (%s): discarded, to be rebuilt"), path, why)
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
            import chromadb  # noqa: PLC0415 — lazy: heavy (~0.5 s), only when an index is first used

            with _OPEN_LOCK:
                _discard_if_damaged(path)
                path.mkdir(parents=True, exist_ok=True, mode=0o700)
                return chromadb.PersistentClient(path=str(path), settings=settings())
        except Exception as err:  # chromadb raises plain exceptions for a bad folder
            last = err
            time.sleep(0.2 * (attempt + 1))
    assert last is not None  # OPEN_ATTEMPTS ≥ 1: the loop ran and failed
    raise StoreUnavailableError(
        failed(_("Chroma at {path}: cannot open").format(path=path), last)
    ) from last


def open_server(url: str, timeout: float) -> Any:
    """An ``HttpClient`` for a Chroma server on loopback; every request times out."""
    require_loopback("chroma_url", url)
    parsed = urlparse(url)
    ssl = parsed.scheme == "https"
    try:
        import chromadb  # noqa: PLC0415 — lazy: heavy (~0.5 s), only when a server is configured
        import httpx  # noqa: PLC0415 — lazy, with chromadb

        from backends.stores.engines import chroma_http  # noqa: PLC0415 — lazy: imports chromadb

        chroma_http.install()  # no proxy from the environment, no redirect
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
        raise StoreUnavailableError(
            failed(_("Chroma server {url}: not reachable").format(url=url), err)
        ) from err
    return client


def is_not_found(err: Exception) -> bool:
    """chromadb's 'collection does not exist', whichever client raised it."""
    return type(err).__name__ == "NotFoundError" or "does not exist" in str(err)


class ChromaCollection(ServerOrFolder):
    """One Chroma collection holding a derived vector index made by our own embedder.

    What every assistant's adapter shares: the collection records the embedder's name and
    dimension (a different dimension is a :class:`DimensionMismatchError`, a different
    embedder the error :meth:`_other_embedder` returns), chromadb's untyped exceptions become
    :class:`StoreUnavailableError`, writes go in pages of :data:`WRITE_PAGE`, and the
    collection is opened on first use.
    """

    PRODUCT = "Chroma"

    # -- self-description: a local folder, or the server at chroma_url ---------------------
    URL_SETTING = "chroma_url"
    FOLDER_SETTING = "chroma_path"
    VERSION_PATH = "/api/v2/version"

    @classmethod
    def engine_for(cls, config: Config) -> str:
        return N_("Chroma server") if config.chroma_url else N_("Chroma local")

    @classmethod
    def label_for(cls, config: Config) -> str:
        return "chroma" if config.chroma_url else "chroma-local"

    @classmethod
    def measure(
        cls, config: Config, *, running: Callable[[], Self] | None = None, **context: Any
    ) -> Measurement:
        """The collection's vectors, through the running index (Chroma's folder is held by
        one client per process), and the local folder's size (every collection in it)."""
        count = running_store(running).count()
        return Measurement(count, cls.folder_size(config))

    def __init__(
        self,
        client: Any,
        *,
        where: str,
        embedder_name: str,
        dimension: int,
        collection: str,
        hnsw: dict[str, Any],
    ) -> None:
        self.where = where
        self.embedder_name = embedder_name
        self.dimension = dimension
        self.collection_name = collection
        self._client = client
        self._hnsw = dict(hnsw)
        self._lock = threading.RLock()
        self._collection: Any = None

    def _other_embedder(self, name: str) -> CustodiaEnvironmentError:
        """The error for a collection built by embedder ``name`` (same dimension)."""
        raise NotImplementedError

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except CustodiaEnvironmentError:
            raise
        except Exception as err:  # chromadb, httpx, sqlite: the store, not our code
            raise StoreUnavailableError(failed(f"{self.where}: {_(what)}", err)) from err

    def _open(self) -> Any:
        """Open (or create, for this embedder) the collection; typed error on a mismatch."""
        with self._lock:
            collection = self._call(N_("cannot open the collection"), self._get_or_create)
            meta = collection.metadata or {}
            dim = meta.get("dimension")
            name = meta.get("embedder")
            if isinstance(dim, int) and dim != self.dimension:
                raise DimensionMismatchError(dim, self.dimension, self.where)
            if isinstance(name, str) and name != self.embedder_name:
                raise self._other_embedder(name)
            self._collection = collection
            return collection

    def _get_or_create(self) -> Any:
        try:
            return self._client.get_collection(self.collection_name, embedding_function=None)
        except Exception as err:
            if not is_not_found(err):
                raise
        return self._client.get_or_create_collection(
            self.collection_name,
            embedding_function=None,
            configuration={"hnsw": self._hnsw},
            metadata={"embedder": self.embedder_name, "dimension": self.dimension, "format": 1},
        )

    @property
    def collection(self) -> Any:
        """The open collection (opened now if it is not yet)."""
        with self._lock:
            return self._collection if self._collection is not None else self._open()

    def _drop(self) -> None:
        try:
            self._client.delete_collection(self.collection_name)
        except Exception as err:
            if not is_not_found(err):
                raise StoreUnavailableError(
                    failed(_("{where}: cannot delete the index").format(where=self.where), err)
                ) from err
        self._collection = None

    def reset(self) -> None:
        """Delete the collection and create it empty (a new generation) for this embedder."""
        with self._lock:
            self._drop()
            self._open()

    def count(self) -> int:
        with self._lock:
            return int(self._call(N_("cannot count"), self.collection.count))

    def ids(self) -> set[str]:
        out: set[str] = set()
        with self._lock:
            offset = 0
            while True:
                page = self._call(
                    "list ids", self.collection.get, include=[], limit=PAGE, offset=offset
                )
                out.update(page["ids"])
                if len(page["ids"]) < PAGE:
                    return out
                offset += PAGE

    def _write(
        self, ids: Sequence[str], vectors: npt.NDArray[np.float32], metadatas: list[Any]
    ) -> None:
        with self._lock:
            for start in range(0, len(ids), WRITE_PAGE):
                end = start + WRITE_PAGE
                self._call(
                    "write vectors",
                    self.collection.upsert,
                    ids=list(ids[start:end]),
                    embeddings=vectors[start:end],
                    metadatas=metadatas[start:end],
                )

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            for start in range(0, len(ids), PAGE):
                self._call(
                    "delete vectors", self.collection.delete, ids=list(ids[start : start + PAGE])
                )

    def _nearest(
        self, vector: npt.NDArray[np.float32], k: int, where: dict[str, Any] | None = None
    ) -> list[tuple[str, float, dict[str, Any]]]:
        """(id, cosine similarity, metadata) of the ``k`` nearest vectors (``where``: the
        filter Chroma applies inside the query)."""
        options: dict[str, Any] = {"where": where} if where is not None else {}
        with self._lock:
            result = self._call(
                "search",
                self.collection.query,
                query_embeddings=vector,
                n_results=k,
                include=["metadatas", "distances"],
                **options,
            )
        ids = result["ids"][0]
        distances = (result.get("distances") or [[]])[0]
        metadatas = (result.get("metadatas") or [[]])[0]
        return [
            (i, 1.0 - float(d), dict(m or {}))
            for i, d, m in zip(ids, distances, metadatas, strict=False)
        ]

    def close(self) -> None:
        with self._lock:
            close = getattr(self._client, "close", None)
            if callable(close):
                try:
                    close()
                except Exception:  # closing twice, or a server already gone
                    log.debug("closing the Chroma client failed", exc_info=True)
            self._collection = None
