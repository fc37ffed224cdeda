"""The semantic memory (MA10–MA11) on qdrant-edge: Qdrant's own Rust engine, in-process.

qdrant-client's local mode is a pure-Python stand-in (filters evaluated in Python over every
point, one SQLite transaction per point). ``qdrant-edge-py`` runs Qdrant's segments, payload
indexes and HNSW in this process: one *shard* per collection, under
``<path>/<collection>/shard``, with ``<path>/<collection>/meta.json`` recording the embedder
(the shard's own ``edge_config.json`` holds the vector size, which is the truth). Three
collections, cosine, keyword payload indexes on ``session``, ``expert`` and ``ticket`` (the
engine uses them to pre-filter, measured in bench/bench_multiagent_edge.py).

**Two processes.** A shard can be opened by one process at a time (a second opener gets
``Can't init WAL: Kind(WouldBlock)``). Every operation therefore runs under a *lease* on the
folder (:mod:`.edge_lease`): the shards are opened inside it, and flushed and closed before
it is given back, once the memory has been idle for ``idle`` seconds. A second process (the
window and ``custodia ask multiagent``) waits for it up to ``wait`` seconds.

**HNSW.** qdrant-edge has no background optimiser: :meth:`optimise` builds the index. The
engine holds the GIL for the whole build (8 s at 10k × 384 here, 38 s at 30k), so the build runs
in a child process: progress per collection, cancel kills the child (a killed build leaves the
shard as it was; tested). Only a collection with :data:`HNSW_THRESHOLD` unindexed points is
built: below it an exact scan is as fast (see docs/BENCHMARKS.md).

**Migration.** A data dir with a qdrant-client local-mode folder (``legacy_path``) is copied
over at the first open: idempotent upserts (a crash simply runs it again), every point checked,
then a marker is written and the old folder removed, with a log line.

``qdrant_edge`` is imported lazily (the window must appear first).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from backends.errors import StoreUnavailableError
from backends.failures import failed, with_details
from backends.i18n import N_, _, number
from backends.models.embedders import Embedder
from backends.progress import Progress
from backends.stores.description import Probed, dir_size, writable_folder
from backends.stores.vectors import COLLECTIONS, INDEXED_FIELDS, Where, clauses
from backends.stores.vectors.edge_files import (
    _dense,
    _is_uuid,
    _read_json,
    _unit,
    _write_json,
    shard_dimension,
)
from backends.stores.vectors.edge_lease import FolderLease
from backends.stores.vectors.qdrant import QdrantSemanticMemory
from backends.stores.vectors.semantic import Point, SemanticMemoryBase

if TYPE_CHECKING:
    from qdrant_edge import EdgeShard

    from backends.config import Config

log = logging.getLogger(__name__)

#: the qdrant-edge-py version this module was written and tested against (pinned)
EDGE_VERSION = "0.9.0"
STAGING_SUFFIX = "__reembed"
OLD_SUFFIX = "__old"
MARKER = "migrated.json"
#: unindexed points from which a collection gets an HNSW build (see docs/BENCHMARKS.md)
HNSW_THRESHOLD = 20_000
_BATCH = 500


def _edge() -> Any:
    try:
        import qdrant_edge  # noqa: PLC0415 — lazy: the window must appear before the engine loads
    except ImportError as err:
        raise StoreUnavailableError(failed(_("qdrant-edge-py is not installed"), err)) from err
    return qdrant_edge


def _is_busy(err: BaseException) -> bool:
    return "WouldBlock" in str(err)


def _is_panic(err: BaseException) -> bool:
    """The engine's Rust panics reach Python as ``pyo3_runtime.PanicException``, a
    ``BaseException`` (not an ``Exception``): a damaged segment (garbage in its
    ``payload_storage/tracker.dat``) makes every read of it panic."""
    return type(err).__name__ == "PanicException"


def _first_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


#: what a damaged collection's message tells the user to do
DAMAGED_HINT = N_(
    "`custodia reindex multiagent` rebuilds it (derived data: the experts' results stay in "
    "their sessions; what cannot be read is left out)"
)
MB = 1024 * 1024
#: free bytes the memory's disk must have before the engine creates, opens or writes a
#: shard: it maps its files and writes into them, and a write into a mapped page the disk
#: cannot back is SIGBUS, which kills the whole process. Measured on a tmpfs: creating the
#: three collections takes 22 MB, the first writes into one 48 MB more; a multi-agent run
#: died under ~50 MB free.
MIN_FREE_BYTES = 64 * MB


def _optimise_child(shard_dir: str, dimension: int, threshold_kb: int) -> None:
    """Runs in a child process: the engine holds the GIL for the whole build.

    The engine indexes a segment above its ``indexing_threshold`` (in KB): set from ours."""
    qe = _edge()
    config = qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine),
        optimizers=qe.EdgeOptimizersConfig(indexing_threshold=threshold_kb),
    )
    shard = qe.EdgeShard.load(shard_dir, config)
    try:
        shard.optimize()
        shard.flush()
    finally:
        shard.close()


class EdgeSemanticMemory(SemanticMemoryBase, FolderLease):
    """The three collections as qdrant-edge shards, one configured embedder."""

    _add_batch = _BATCH
    kind = "edge"
    local = True
    ENGINE = N_("qdrant-edge (embedded)")
    LABEL = PRODUCT = "qdrant-edge"

    @classmethod
    def locate(cls, config: Config, **context: Any) -> str:
        return str(config.qdrant_edge_path)

    @classmethod
    def created(cls, config: Config, **context: Any) -> bool:
        """Its folder, or an older local-mode folder it moves over at its first opening."""
        return config.qdrant_edge_path.exists() or config.qdrant_path.exists()

    @classmethod
    def checkup(cls, config: Config, **context: Any) -> Probed:
        return writable_folder(config.qdrant_edge_path)

    @classmethod
    def disk_size(cls, config: Config) -> int | None:
        return dir_size(config.qdrant_edge_path)

    #: how long an operation waits for another process's lease (seconds) by default
    DEFAULT_WAIT = 10.0

    def __init__(
        self,
        embedder: Embedder,
        *,
        path: Path,
        legacy_path: Path | None = None,
        wait: float | None = None,
        idle: float = 1.0,
        hnsw_threshold: int | None = None,
        collections: Sequence[str] = COLLECTIONS,
    ) -> None:
        _edge()  # fail early and clearly when the engine is missing
        self.embedder = embedder
        self.collections = tuple(collections)
        self._start_lease(Path(path), self.DEFAULT_WAIT if wait is None else wait, idle)
        self.hnsw_threshold = HNSW_THRESHOLD if hnsw_threshold is None else hnsw_threshold
        self._shards: dict[str, EdgeShard] = {}
        self._meta: dict[str, dict[str, Any]] = {}
        #: the free space a write needs (see :data:`MIN_FREE_BYTES`; tests may lower it)
        self.min_free_bytes = MIN_FREE_BYTES
        try:
            self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            raise StoreUnavailableError(
                failed(_("{root}: cannot create the memory").format(root=self.root), err)
            ) from err
        try:
            with self._lease():
                for name in self.collections:
                    self._recover_swap(name)
                if legacy_path is not None:
                    self._migrate(Path(legacy_path))
                for name in self.collections:
                    if not self._made(self._dir(name)):
                        self._create(self._dir(name), self.embedder.name, self.embedder.dimension)
                self._reload_meta()
        except BaseException:
            self.close()  # give the lease back now, not after ``idle``
            raise

    @classmethod
    def from_config(
        cls, config: Config, *, embedder: Embedder, **context: Any
    ) -> EdgeSemanticMemory:
        """The data dir's qdrant-edge folder; an older local-mode folder moves over by itself."""
        return cls(embedder, path=config.qdrant_edge_path, legacy_path=config.qdrant_path)

    # -- what the lease guards (edge_lease.FolderLease) ------------------------------------
    def _lease_taken(self) -> None:
        self._reload_meta()

    def _lease_ending(self) -> None:
        for name in list(self._shards):
            self._close_shard(name)

    def _failed_inside(self, err: BaseException) -> BaseException | None:
        if not _is_panic(err):
            return None
        self._forget_shards()  # a shard that panicked may be poisoned: reopen later
        message = _("the semantic memory at {where} is damaged: the engine failed; {hint}").format(
            where=self.where, hint=_(DAMAGED_HINT)
        )
        return StoreUnavailableError(with_details(message, _first_line(err)))

    # -- shards ----------------------------------------------------------------------------
    def _dir(self, name: str) -> Path:
        return self.root / name

    def _shard(self, name: str) -> EdgeShard:
        shard = self._shards.get(name)
        if shard is None:
            shard = self._load(self._dir(name) / "shard")
            self._shards[name] = shard
        return shard

    def _load(self, shard_dir: Path) -> EdgeShard:
        qe = _edge()
        self._check_space(
            _("opening {what}").format(what=shard_dir)
        )  # opening replays and writes its WAL
        deadline = time.monotonic() + self.wait
        while True:
            try:
                shard: EdgeShard = qe.EdgeShard.load(str(shard_dir))
                return shard
            except Exception as err:  # the engine raises bare Exception
                if _is_busy(err) and time.monotonic() < deadline:
                    # An index build whose parent died still holds the WAL: it ends by itself.
                    time.sleep(0.1)
                    continue
                raise StoreUnavailableError(
                    failed(_("{shard}: cannot open the shard").format(shard=shard_dir), err)
                ) from err

    def _close_shard(self, name: str) -> None:
        shard = self._shards.pop(name, None)
        if shard is None:
            return
        try:
            try:
                shard.flush()
            finally:
                shard.close()
        except BaseException as err:
            if not _is_panic(err):
                raise
            # a damaged shard panics on its flush: it is gone all the same, and the lease
            # must still be given back (the next read says it is damaged)
            log.warning(_("semantic memory: closing the damaged %s failed: %s"), name, err)

    def _forget_shards(self) -> None:
        """Drop every open shard without flushing (after a panic: flushing may panic again)."""
        for name in list(self._shards):
            shard = self._shards.pop(name)
            try:
                shard.close()
            except BaseException as err:  # a panic, again: the shard is gone all the same
                if not _is_panic(err) and not isinstance(err, Exception):
                    raise
                log.warning(_("semantic memory: closing the damaged %s failed: %s"), name, err)

    def _check_space(self, what: str) -> None:
        """Refuse ``what`` when the disk cannot back the engine's mapped writes (SIGBUS)."""
        try:
            stat = os.statvfs(self.root)
        except OSError:
            return  # the operation itself will say what is wrong with the folder
        free = stat.f_bavail * stat.f_frsize
        if free < self.min_free_bytes:
            raise StoreUnavailableError(
                _(
                    "{what}: the disk holding the semantic memory ({root}) has {free} MB free "
                    "and the engine needs {needed} MB to write safely; nothing was written — "
                    "free some space and try again"
                ).format(
                    what=what,
                    root=self.root,
                    free=number(free / MB),
                    needed=number(self.min_free_bytes // MB),
                )
            )

    def _create(self, folder: Path, embedder: str, dimension: int, state: str = "complete") -> None:
        qe = _edge()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._check_space(_("creating {what}").format(what=folder.name))
        shard_dir = folder / "shard"
        if shard_dir.exists():
            shutil.rmtree(shard_dir)
        meta = {
            "embedder": embedder,
            "dimension": dimension,
            "distance": "cosine",
            "indexes": list(INDEXED_FIELDS),
            "state": "creating",  # a kill before the end leaves an empty shard: made again
            "generation": uuid.uuid4().hex,
        }
        _write_json(folder / "meta.json", meta)
        config = qe.EdgeConfig(
            vectors=qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)
        )
        try:
            shard = qe.EdgeShard.create(str(shard_dir), config)
            try:
                for field_name in INDEXED_FIELDS:
                    shard.update(
                        qe.UpdateOperation.create_field_index(
                            field_name, qe.PayloadSchemaType.Keyword
                        )
                    )
                shard.flush()
            finally:
                shard.close()
        except Exception as err:
            raise StoreUnavailableError(
                failed(_("{shard}: cannot create the shard").format(shard=shard_dir), err)
            ) from err
        _write_json(folder / "meta.json", dict(meta, state=state))

    def _made(self, folder: Path) -> bool:
        """The shard in ``folder`` was created to the end (a kill mid-creation: not made)."""
        if not (folder / "shard" / "edge_config.json").exists():
            return False
        return _read_json(folder / "meta.json").get("state") not in (None, "creating")

    def _reload_meta(self) -> None:
        for name in self.collections:
            folder = self._dir(name)
            meta = _read_json(folder / "meta.json")
            size = shard_dimension(folder / "shard")
            if size:
                meta["dimension"] = size
            meta.setdefault("embedder", "unknown")
            self._meta[name] = meta

    def _upsert(self, shard: EdgeShard, points: Sequence[tuple[str, Any, dict[str, Any]]]) -> None:
        qe = _edge()
        for start in range(0, len(points), _BATCH):
            batch = [
                qe.Point(pid, vec, payload) for pid, vec, payload in points[start : start + _BATCH]
            ]
            try:
                shard.update(qe.UpdateOperation.upsert_points(batch))
            except Exception as err:
                raise StoreUnavailableError(
                    failed(_("storing in {where} failed").format(where=self.where), err)
                ) from err

    def _scroll(self, shard: EdgeShard) -> Iterator[tuple[str, list[float], dict[str, Any]]]:
        qe = _edge()
        offset: Any = None
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(offset=offset, limit=_BATCH, with_payload=True, with_vector=True)
            )
            for record in records:
                yield str(record.id), _dense(record.vector), dict(record.payload or {})
            if offset is None:
                return

    # -- the engine's half of writes and reads (the rest: SemanticMemoryBase) ---------------
    def _guard(self) -> AbstractContextManager[None]:
        return self._lease()

    def _store(self, collection: str, points: Sequence[Point]) -> None:
        shard = self._shard(collection)
        self._check_space(_("storing in {what}").format(what=collection))
        self._upsert(shard, points)

    def _nearest(
        self, collection: str, vector: npt.NDArray[np.float32], limit: int, where: Where | None
    ) -> Iterable[Any]:
        qe = _edge()
        query_filter = self._filter(where)
        try:
            return list(
                self._shard(collection).query(
                    qe.QueryRequest(
                        limit=limit,
                        query=qe.Query.Nearest(vector.tolist()),
                        filter=query_filter,
                        with_payload=True,
                    )
                )
            )
        except StoreUnavailableError:
            raise
        except Exception as err:
            raise StoreUnavailableError(
                failed(_("search in {where} failed").format(where=self.where), err)
            ) from err

    @staticmethod
    def _filter(where: Where | None) -> Any:
        """A :data:`~backends.stores.vectors.Where` as the engine's ``Filter`` (None: none)."""
        qe = _edge()
        must: list[Any] = []
        must_not: list[Any] = []
        for key, op, value in clauses(where):
            if op == "$in":
                must.append(qe.FieldCondition(key=key, match=qe.MatchAny(list(value))))
            else:
                condition = qe.FieldCondition(key=key, match=qe.MatchValue(value))
                (must_not if op == "$ne" else must).append(condition)
        if not must and not must_not:
            return None
        return qe.Filter(must=must or None, must_not=must_not or None)

    def _ids(self, collection: str) -> set[str]:
        qe = _edge()
        shard = self._shard(collection)
        out: set[str] = set()
        offset: Any = None
        while True:
            records, offset = shard.scroll(
                qe.ScrollRequest(offset=offset, limit=_BATCH, with_payload=False, with_vector=False)
            )
            out.update(str(record.id) for record in records)
            if offset is None:
                return out

    def _delete(self, collection: str, ids: Sequence[str], where: Where | None) -> None:
        qe = _edge()
        shard = self._shard(collection)
        self._check_space(_("deleting from {what}").format(what=collection))
        try:
            for start in range(0, len(ids), _BATCH):
                chunk = [uuid.UUID(i) if _is_uuid(i) else i for i in ids[start : start + _BATCH]]
                shard.update(qe.UpdateOperation.delete_points(chunk))
            query_filter = self._filter(where)
            if query_filter is not None:
                shard.update(qe.UpdateOperation.delete_points_by_filter(query_filter))
        except Exception as err:
            raise StoreUnavailableError(
                failed(_("delete in {where} failed").format(where=self.where), err)
            ) from err

    def _recreate(self, collection: str) -> None:
        self._close_shard(collection)
        self._create(self._dir(collection), self.embedder.name, self.embedder.dimension)
        self._reload_meta()

    def count(self, collection: str) -> int:
        qe = _edge()
        with self._lease():
            if collection not in self.collections:
                raise KeyError(f"unknown collection {collection!r}")
            return int(self._shard(collection).count(qe.CountRequest(exact=True)))

    def points(self, collection: str) -> Iterator[tuple[str, list[float], dict[str, Any]]]:
        """Every point of ``collection`` as (id, vector, payload) (copying, export)."""
        with self._lease():
            items = list(self._scroll(self._shard(collection)))
        yield from items

    def indexed(self, collection: str) -> tuple[int, int]:
        """(points, points in an HNSW index) of ``collection``."""
        with self._lease():
            info = self._shard(collection).info()
            return int(info.points_count), int(info.indexed_vectors_count)

    def payload_indexes(self, collection: str) -> dict[str, int]:
        """Each payload index of ``collection`` and how many points it covers."""
        with self._lease():
            schema = self._shard(collection).info().payload_schema
            return {key: int(value.points) for key, value in schema.items()}

    # -- HNSW (a background pass) ----------------------------------------------------------
    def needs_optimise(self) -> list[str]:
        """The collections with :attr:`hnsw_threshold` points or more outside an HNSW index."""
        out = []
        for name in self.collections:
            points, indexed = self.indexed(name)
            if points - indexed >= self.hnsw_threshold:
                out.append(name)
        return out

    def optimise(self, progress: Progress | None = None) -> int:
        """Build the HNSW index of each collection that needs one; returns how many were built.

        For the desktop's worker layer or the CLI (never the GUI thread: it waits for the
        child). Cancelling kills the build; the collection stays as it was, searchable exactly.
        Other callers in this process wait for the collection meanwhile (up to ``wait``)."""
        progress = progress or Progress()
        names = self.needs_optimise()
        progress.start(len(names), _("building the search index of the semantic memory"))
        ctx = multiprocessing.get_context("spawn")
        with self._lease():
            for done, name in enumerate(names):
                progress.check()
                self._close_shard(name)
                dimension = int(self._meta[name].get("dimension", 1))
                threshold_kb = max(1, self.hnsw_threshold * dimension * 4 // 1024)
                child = ctx.Process(
                    target=_optimise_child,
                    args=(str(self._dir(name) / "shard"), dimension, threshold_kb),
                    daemon=True,
                )
                child.start()
                try:
                    while child.is_alive():
                        child.join(0.1)
                        progress.check()
                except BaseException:
                    child.kill()
                    child.join()
                    log.info("semantic memory: index build of %s cancelled", name)
                    raise
                if child.exitcode != 0:
                    raise StoreUnavailableError(
                        _("building the index of {name} failed (exit code {code})").format(
                            name=name, code=child.exitcode
                        )
                    )
                log.info("semantic memory: %s indexed (HNSW)", name)
                progress.advance(
                    1,
                    _("{name}: indexed ({done}/{total})").format(
                        name=name, done=done + 1, total=len(names)
                    ),
                )
        return len(names)

    # -- re-embedding (MA11) ---------------------------------------------------------------
    def reembed(self, progress: Progress | None = None) -> int:
        """Rebuild every collection with the configured embedder; returns the points done.

        Everything is embedded into staging shards first (cancellable: the staging is dropped,
        the originals stay); then each original is swapped for its staging copy by renames. A
        crash during the swaps is finished (or undone) at the next open."""
        progress = progress or Progress()
        with self._lease():
            self._check_space(_("re-embedding"))
            sources = {name: self._salvage(name) for name in self.collections}
            total = sum(len(points) for points in sources.values())
            progress.start(total, _("re-embedding semantic memory"))
            staged: list[str] = []
            try:
                for name, points in sources.items():
                    staging = self._dir(name + STAGING_SUFFIX)
                    if staging.exists():
                        shutil.rmtree(staging)
                    staged.append(name)
                    self._create(staging, self.embedder.name, self.embedder.dimension, "filling")
                    shard = self._load(staging / "shard")
                    try:
                        size = self.embedder.batch_size
                        for start in range(0, len(points), size):
                            progress.check()
                            chunk = points[start : start + size]
                            texts = [str(payload.get("text", "")) for _, _, payload in chunk]
                            vectors = self.embedder.embed_batch(texts)
                            self._upsert(
                                shard,
                                [
                                    (pid, vec.tolist(), payload)
                                    for (pid, _, payload), vec in zip(chunk, vectors, strict=True)
                                ],
                            )
                            progress.advance(
                                len(chunk), f"{name}: {start + len(chunk)}/{len(points)}"
                            )
                        shard.flush()
                    finally:
                        shard.close()
                    meta = _read_json(staging / "meta.json")
                    _write_json(staging / "meta.json", dict(meta, state="complete"))
                progress.check()
            except BaseException:
                for name in staged:
                    shutil.rmtree(self._dir(name + STAGING_SUFFIX), ignore_errors=True)
                raise
            # Point of no return: swap each original for its staged copy.
            self._forget_shards()  # a damaged one would panic on its flush
            for name in self.collections:
                old = self._dir(name + OLD_SUFFIX)
                os.replace(self._dir(name), old)
                os.replace(self._dir(name + STAGING_SUFFIX), self._dir(name))
                shutil.rmtree(old)
            self._reload_meta()
        return total

    def _salvage(self, name: str) -> list[Point]:
        """Every point of ``name`` that can be read. A damaged collection (it will not open,
        or reading it fails or panics) gives what can still be read one point at a time —
        nothing, when its payloads are gone — so a re-embedding rebuilds it from scratch."""
        try:
            return list(self._scroll(self._shard(name)))
        except BaseException as err:
            if not (_is_panic(err) or isinstance(err, Exception)):
                raise
            why = _first_line(err)
        self._forget_shards()
        kept: list[Point] = []
        lost = 0
        try:
            shard = self._shard(name)
            ids = sorted(self._ids(name))
            for pid in ids:
                try:
                    records = shard.retrieve(
                        [uuid.UUID(pid) if _is_uuid(pid) else pid],
                        with_payload=True,
                        with_vector=True,
                    )
                except BaseException as err:
                    if not (_is_panic(err) or isinstance(err, Exception)):
                        raise
                    lost = len(ids) - len(kept)
                    break  # a panicked shard may be poisoned: what was read is kept
                kept.extend((str(r.id), _dense(r.vector), dict(r.payload or {})) for r in records)
        except BaseException as err:
            if not (_is_panic(err) or isinstance(err, Exception)):
                raise
        self._forget_shards()
        log.warning(
            _("semantic memory: %s is damaged (%s): rebuilt from the %d point(s) still readable%s"),
            name,
            why,
            len(kept),
            f", {lost} left out" if lost else "",
        )
        return kept

    def verify(self) -> None:
        """Read every point of every collection (payload and vector) and search each once:
        a damaged collection is a :class:`StoreUnavailableError` naming it. The health
        check's (``sessions --health``, the doctor); a count reads no payload, so it passes
        a collection whose every search panics."""
        self.check()
        qe = _edge()
        with self._lease():
            for name in self.collections:
                try:
                    shard = self._shard(name)
                    for _point in self._scroll(shard):
                        pass
                    dimension = int(self._meta[name].get("dimension") or 0)
                    if dimension:
                        shard.query(
                            qe.QueryRequest(
                                limit=1, query=qe.Query.Nearest([1.0] * dimension),
                                with_payload=True,
                            )
                        )  # fmt: skip
                except BaseException as err:
                    if not (_is_panic(err) or isinstance(err, Exception)):
                        raise
                    self._forget_shards()
                    message = _(
                        "semantic memory collection {name} ({where}) is damaged; {hint}"
                    ).format(name=name, where=self.where, hint=_(DAMAGED_HINT))
                    raise StoreUnavailableError(with_details(message, _first_line(err))) from err

    def _recover_swap(self, name: str) -> None:
        """Finish or undo a re-embedding that a crash interrupted (nothing is lost)."""
        current, old = self._dir(name), self._dir(name + OLD_SUFFIX)
        staging = self._dir(name + STAGING_SUFFIX)
        if old.exists():
            if current.exists():
                shutil.rmtree(old)  # the swap had finished
            elif _read_json(staging / "meta.json").get("state") == "complete":
                log.warning(_("semantic memory: finishing an interrupted re-embedding of %s"), name)
                os.replace(staging, current)
                shutil.rmtree(old)
            else:
                os.replace(old, current)
        if staging.exists():
            shutil.rmtree(staging)

    # -- migration from qdrant-client's local mode -----------------------------------------
    def _migrate(self, legacy: Path) -> None:
        """Copy a local-mode folder over (idempotent), verify, then remove it."""
        if not (legacy / "collection").is_dir():
            return
        marker = self.root / MARKER
        if marker.exists():
            shutil.rmtree(legacy, ignore_errors=True)  # a crash interrupted the removal
            return
        started = time.monotonic()
        source = QdrantSemanticMemory(self.embedder, path=legacy)
        copied: dict[str, int] = {}
        try:
            for name in self.collections:
                meta = source._meta.get(name, {})
                dimension = int(meta.get("dimension", 0))
                points = list(source.points(name))
                if not dimension or not points:
                    continue
                folder = self._dir(name)
                if self._made(folder) and shard_dimension(folder / "shard") != dimension:
                    raise StoreUnavailableError(
                        _(
                            "cannot move {legacy} over: {name} exists in {root} with another "
                            "vector size; the old folder is kept"
                        ).format(legacy=legacy, name=name, root=self.root)
                    )
                if not self._made(folder):
                    embedder = str(meta.get("embedder", "unknown"))
                    self._create(folder, embedder, dimension)
                shard = self._load(folder / "shard")
                try:
                    self._upsert(shard, points)
                    shard.flush()
                    self._verify(shard, name, points)
                finally:
                    shard.close()
                copied[name] = len(points)
        finally:
            source.close()
        _write_json(marker, {"from": str(legacy), "points": copied, "at": time.time()})
        shutil.rmtree(legacy)
        log.warning(
            _(
                "semantic memory: moved %s points from Qdrant local mode (%s) to qdrant-edge (%s) "
                "in %.1f s; the old folder is removed"
            ),
            sum(copied.values()) or "no",
            legacy,
            self.root,
            time.monotonic() - started,
        )

    def _verify(
        self, shard: EdgeShard, name: str, points: Sequence[tuple[str, list[float], dict[str, Any]]]
    ) -> None:
        for start in range(0, len(points), _BATCH):
            chunk = points[start : start + _BATCH]
            records = shard.retrieve(
                [uuid.UUID(pid) if _is_uuid(pid) else pid for pid, _, _ in chunk],
                with_payload=True,
                with_vector=True,
            )
            found = {str(r.id): (_dense(r.vector), dict(r.payload or {})) for r in records}
            for pid, vector, payload in chunk:
                got = found.get(pid)
                if got is None or got[1] != payload:
                    raise StoreUnavailableError(
                        _(
                            "moving {name} to qdrant-edge: point {pid} did not copy; "
                            "the old folder is kept"
                        ).format(name=name, pid=pid)
                    )
                if not np.allclose(_unit(got[0]), _unit(vector), atol=1e-5):
                    raise StoreUnavailableError(
                        _(
                            "moving {name} to qdrant-edge: the vector of {pid} differs; "
                            "the old folder is kept"
                        ).format(name=name, pid=pid)
                    )

    def close(self) -> None:
        with self._rlock:
            if self._closed:
                return
            self._closed = True
            self._release()
