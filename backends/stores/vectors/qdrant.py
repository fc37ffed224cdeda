"""The semantic memory (MA10–MA11) in Qdrant through qdrant-client: local mode
(``QdrantClient(path=...)``) by default, a server when ``qdrant_url`` is set.

Three collections with cosine distance and payload indexes on ``session``, ``expert`` and
``ticket`` (in local mode Qdrant evaluates filters in Python and the index call is a no-op, but
it is made, so the same collections work on a server). Each collection records the embedder's
name and dimension in its metadata; another embedder makes every read and write raise a typed
:class:`~backends.errors.DimensionMismatchError` (never an empty result), and :meth:`reembed`
rebuilds the collections from the text in each point's payload — in staging collections first,
so cancelling or crashing loses nothing.

``qdrant_client`` is imported lazily (≈0.7 s): the window must appear before it loads. Local
mode locks its folder: a second process gets a clear
:class:`~backends.errors.StoreUnavailableError` suggesting a Qdrant server.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from backends.errors import StoreUnavailableError
from backends.failures import failed
from backends.i18n import _
from backends.models.embedders import Embedder
from backends.net import require_loopback
from backends.progress import Progress
from backends.stores.server import ServerOrFolder
from backends.stores.vectors import COLLECTIONS, INDEXED_FIELDS, Where, clauses
from backends.stores.vectors.semantic import Point, SemanticMemoryBase

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from backends.config import Config

log = logging.getLogger(__name__)


STAGING_SUFFIX = "__reembed"
_BATCH = 256


def _cannot_open(path: Path) -> str:
    return _("{path}: cannot open Qdrant local storage").format(path=path)


def _is_lock_error(err: BaseException) -> bool:
    return "already accessed by another instance" in str(err)


class QdrantSemanticMemory(SemanticMemoryBase, ServerOrFolder):
    """The three collections, one Qdrant client, one configured embedder."""

    _add_batch = _BATCH
    kind = "qdrant"
    LABEL = "qdrant"
    PRODUCT = "Qdrant"
    URL_SETTING = "qdrant_url"
    FOLDER_SETTING = "qdrant_path"
    VERSION_PATH = "/"

    @classmethod
    def engine_for(cls, config: Config) -> str:
        return "Qdrant server" if config.qdrant_url else "Qdrant local mode"

    @classmethod
    def disk_size(cls, config: Config) -> int | None:
        return cls.folder_size(config)

    def __init__(
        self,
        embedder: Embedder,
        *,
        path: Path | None = None,
        url: str = "",
        timeout: float = 5.0,
        collections: Sequence[str] = COLLECTIONS,
    ) -> None:
        if not path and not url:
            raise ValueError("SemanticMemory needs a local path or a server URL")
        self.embedder = embedder
        self.collections = tuple(collections)
        self.local = not url
        self.where = str(path) if self.local else url
        self._lock = threading.RLock()
        self._client = self._open(path, url, timeout)
        self._meta: dict[str, dict[str, Any]] = {}
        try:
            with self._lock:
                for name in self.collections:
                    self._recover_staging(name)
                    self._ensure(name)
        except BaseException:
            self.close()
            raise

    @classmethod
    def from_config(
        cls, config: Config, *, embedder: Embedder, **context: Any
    ) -> QdrantSemanticMemory:
        """The server at ``qdrant_url``, else local mode in the data dir's folder."""
        return cls(
            embedder,
            path=None if config.qdrant_url else config.qdrant_path,
            url=config.qdrant_url,
            timeout=config.network_timeout,
        )

    # -- opening ---------------------------------------------------------------------------
    def _open(self, path: Path | None, url: str, timeout: float) -> QdrantClient:
        try:
            from qdrant_client import QdrantClient  # noqa: PLC0415 — lazy: ≈0.7 s, the window first
        except ImportError as err:
            raise StoreUnavailableError(failed(_("qdrant-client is not installed"), err)) from err
        if url:
            require_loopback("qdrant_url", url)
            try:
                # trust_env=False: no proxy from the environment; httpx follows no redirect.
                # check_compatibility=False: the client's own check runs in a thread of its
                # own and only warns, in English on the terminal ("Failed to obtain server
                # version"); a server that is down is said by the first request instead.
                return QdrantClient(
                    url=url,
                    timeout=max(1, int(timeout)),
                    prefer_grpc=False,
                    trust_env=False,
                    check_compatibility=False,
                )
            except Exception as err:
                raise StoreUnavailableError(
                    failed(_("Qdrant server {url}: cannot connect").format(url=url), err)
                ) from err
        assert path is not None
        try:
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            return QdrantClient(path=str(path))
        except RuntimeError as err:
            if _is_lock_error(err):
                raise StoreUnavailableError(
                    _(
                        "the semantic memory at {path} is open in another Custodia process "
                        "(Qdrant local mode allows one process at a time); close the other "
                        "one, or configure a Qdrant server (qdrant_url) to share it"
                    ).format(path=path)
                ) from err
            raise StoreUnavailableError(failed(_cannot_open(path), err)) from err
        except json.JSONDecodeError as err:
            # A kill while Qdrant wrote its meta.json leaves it empty: the folder can never
            # open again. Semantic memory is a derived store (the results stay in their
            # sessions), so move the damaged folder aside — kept, never deleted — and start
            # a fresh one; the experts recall again as new results arrive.
            aside = path.with_name(f"{path.name}.damaged-{int(time.time())}")
            log.warning(_("%s: damaged (%s); moved to %s, starting empty"), path, err, aside)
            try:
                path.rename(aside)
                path.mkdir(mode=0o700)
                return QdrantClient(path=str(path))
            except Exception as again:
                raise StoreUnavailableError(failed(_cannot_open(path), again)) from again
        except (OSError, ValueError) as err:
            raise StoreUnavailableError(failed(_cannot_open(path), err)) from err

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """``self._client.<method>(...)``; environment failures become StoreUnavailableError."""
        from qdrant_client.http.exceptions import (  # noqa: PLC0415 — lazy: ≈0.7 s, the window first
            ResponseHandlingException,
            UnexpectedResponse,
        )

        try:
            with self._lock:
                return getattr(self._client, method)(*args, **kwargs)
        except (ResponseHandlingException, UnexpectedResponse, OSError, TimeoutError) as err:
            raise StoreUnavailableError(
                failed(
                    _("Qdrant {method} failed ({where})").format(method=method, where=self.where),
                    err,
                )
            ) from err
        except RuntimeError as err:
            if "closed" in str(err):
                raise StoreUnavailableError(
                    _("Qdrant at {where} is closed").format(where=self.where)
                ) from err
            raise

    def _vector_params(self, dimension: int) -> Any:
        from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

        return models.VectorParams(size=dimension, distance=models.Distance.COSINE)

    def _create(self, name: str, state: str) -> None:
        from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

        meta = {
            "embedder": self.embedder.name,
            "dimension": self.embedder.dimension,
            "distance": "cosine",
            "indexes": list(INDEXED_FIELDS),
            "state": state,
            "generation": uuid.uuid4().hex,
        }
        self._call(
            "create_collection",
            name,
            vectors_config=self._vector_params(self.embedder.dimension),
            metadata=meta,
        )
        with warnings.catch_warnings():
            # Local mode warns that payload indexes have no effect there: we know (see above).
            warnings.simplefilter("ignore", UserWarning)
            for field_name in INDEXED_FIELDS:
                self._call(
                    "create_payload_index",
                    name,
                    field_name,
                    field_schema=models.PayloadSchemaType.KEYWORD,
                )
        self._meta[name] = meta

    def _exists(self, name: str) -> bool:
        return bool(self._call("collection_exists", name))

    def _read_meta(self, name: str) -> dict[str, Any]:
        info = self._call("get_collection", name)
        meta = dict(info.config.metadata or {})
        vectors = info.config.params.vectors
        size = getattr(vectors, "size", None)
        if size is not None:
            # The vector size is the truth; metadata only adds the embedder's name.
            meta["dimension"] = int(size)
        return meta

    def _ensure(self, name: str) -> None:
        if not self._exists(name):
            self._create(name, "complete")
            return
        meta = self._read_meta(name)
        if "embedder" not in meta:
            # Made by something else: adopt it if the dimension fits, record our embedder.
            if meta.get("dimension") == self.embedder.dimension:
                meta["embedder"] = self.embedder.name
                self._call("update_collection", name, metadata={"embedder": self.embedder.name})
            else:
                meta["embedder"] = "unknown"
        self._meta[name] = meta

    def _recover_staging(self, name: str) -> None:
        """Finish or undo a re-embedding that a crash interrupted (nothing is lost)."""
        staging = name + STAGING_SUFFIX
        if not self._exists(staging):
            return
        staged = self._read_meta(staging)
        original_ok = self._exists(name) and self._read_meta(name).get("state") == "complete"
        if staged.get("state") == "complete" and not original_ok:
            log.warning(_("semantic memory: finishing an interrupted re-embedding of %s"), name)
            points = list(self._scroll(staging, with_vectors=True))
            if self._exists(name):
                self._call("delete_collection", name)
            self._create_from(name, staged, points)
        self._call("delete_collection", staging)

    def _create_from(self, name: str, meta: Mapping[str, Any], points: Sequence[Any]) -> None:
        from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

        dimension = int(meta["dimension"])
        meta = dict(meta, generation=meta.get("generation") or uuid.uuid4().hex)
        filling = dict(meta, state="filling")
        self._call(
            "create_collection",
            name,
            vectors_config=self._vector_params(dimension),
            metadata=filling,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            for field_name in INDEXED_FIELDS:
                self._call(
                    "create_payload_index",
                    name,
                    field_name,
                    field_schema=models.PayloadSchemaType.KEYWORD,
                )
        for start in range(0, len(points), _BATCH):
            batch = [
                models.PointStruct(id=p.id, vector=p.vector, payload=p.payload)
                for p in points[start : start + _BATCH]
            ]
            self._call("upsert", name, batch, wait=True)
        self._call("update_collection", name, metadata={"state": "complete"})
        self._meta[name] = dict(meta, state="complete")

    # -- the engine's half of writes and reads (the rest: SemanticMemoryBase) ---------------
    def _store(self, collection: str, points: Sequence[Point]) -> None:
        from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

        batch = [
            models.PointStruct(id=pid, vector=vec, payload=payload) for pid, vec, payload in points
        ]
        self._call("upsert", collection, batch, wait=True)

    def _nearest(
        self, collection: str, vector: npt.NDArray[np.float32], limit: int, where: Where | None
    ) -> Iterable[Any]:
        reply = self._call(
            "query_points",
            collection,
            query=vector.tolist(),
            query_filter=_filter(where),
            limit=limit,
            with_payload=True,
        )
        return list(reply.points)

    def _ids(self, collection: str) -> set[str]:
        return {str(point.id) for point in self._scroll(collection, with_payload=False)}

    def _delete(self, collection: str, ids: Sequence[str], where: Where | None) -> None:
        from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

        selectors: list[Any] = [
            models.PointIdsList(points=list(ids[start : start + _BATCH]))
            for start in range(0, len(ids), _BATCH)
        ]
        query_filter = _filter(where)
        if query_filter is not None:
            selectors.append(models.FilterSelector(filter=query_filter))
        for selector in selectors:
            self._call("delete", collection, points_selector=selector, wait=True)

    def _recreate(self, collection: str) -> None:
        if self._exists(collection):
            self._call("delete_collection", collection)
        self._create(collection, "complete")

    def count(self, collection: str) -> int:
        reply = self._call("count", collection, exact=True)
        return int(reply.count)

    def points(self, collection: str) -> Iterator[tuple[str, list[float], dict[str, Any]]]:
        """Every point of ``collection`` as (id, vector, payload), in pages (copying, export)."""
        for point in self._scroll(collection, with_vectors=True):
            yield str(point.id), list(point.vector), dict(point.payload or {})

    def _scroll(
        self, name: str, *, with_vectors: bool = False, with_payload: bool = True
    ) -> Iterator[Any]:
        offset = None
        while True:
            points, offset = self._call(
                "scroll",
                name,
                limit=_BATCH,
                offset=offset,
                with_payload=with_payload,
                with_vectors=with_vectors,
            )
            yield from points
            if offset is None:
                return

    # -- re-embedding (MA11) ---------------------------------------------------------------
    def reembed(self, progress: Progress | None = None) -> int:
        """Rebuild every collection with the configured embedder; returns the points done.

        All vectors are computed into staging collections first (cancellable through
        ``progress``: the staging is dropped and the originals stay as they were); then each
        original is replaced. A crash during the replacement is finished at the next open.
        """
        from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

        progress = progress or Progress()
        with self._lock:
            sources = {name: list(self._scroll(name)) for name in self.collections}
            total = sum(len(points) for points in sources.values())
            progress.start(total, _("re-embedding semantic memory"))
            staged: dict[str, list[Any]] = {}
            try:
                for name, points in sources.items():
                    staging = name + STAGING_SUFFIX
                    if self._exists(staging):
                        self._call("delete_collection", staging)
                    self._create(staging, "filling")
                    staged[name] = []
                    for start in range(0, len(points), self.embedder.batch_size):
                        progress.check()
                        chunk = points[start : start + self.embedder.batch_size]
                        texts = [str((p.payload or {}).get("text", "")) for p in chunk]
                        vectors = self.embedder.embed_batch(texts)
                        batch = [
                            models.PointStruct(id=p.id, vector=v.tolist(), payload=p.payload)
                            for p, v in zip(chunk, vectors, strict=True)
                        ]
                        self._call("upsert", staging, batch)
                        staged[name].extend(batch)
                        progress.advance(len(chunk), f"{name}: {start + len(chunk)}/{len(points)}")
                    self._call("update_collection", staging, metadata={"state": "complete"})
                progress.check()
            except BaseException:
                for name in staged:
                    staging = name + STAGING_SUFFIX
                    try:
                        if self._exists(staging):
                            self._client.delete_collection(staging)
                    except Exception:
                        log.exception(_("semantic memory: dropping %s failed"), staging)
                raise
            # Point of no return: swap each original for its staged copy.
            meta = {
                "embedder": self.embedder.name,
                "dimension": self.embedder.dimension,
                "distance": "cosine",
                "indexes": list(INDEXED_FIELDS),
            }
            for name, points in staged.items():
                self._call("delete_collection", name)
                self._create_from(name, meta, points)
                staging = name + STAGING_SUFFIX
                self._call("delete_collection", staging)
        return total

    def close(self) -> None:
        with self._lock:
            client = getattr(self, "_client", None)
            if client is not None:
                try:
                    client.close()
                except Exception:
                    log.exception(_("semantic memory: closing Qdrant failed"))


def _filter(where: Where | None) -> Any:
    """A :data:`~backends.stores.vectors.Where` as qdrant-client's ``Filter`` (None: none)."""
    from qdrant_client import models  # noqa: PLC0415 — lazy: ≈0.7 s, the window first

    must: list[Any] = []
    must_not: list[Any] = []
    for key, op, value in clauses(where):
        if op == "$in":
            must.append(models.FieldCondition(key=key, match=models.MatchAny(any=value)))
        else:
            condition = models.FieldCondition(key=key, match=models.MatchValue(value=value))
            (must_not if op == "$ne" else must).append(condition)
    if not must and not must_not:
        return None
    return models.Filter(must=must or None, must_not=must_not or None)
