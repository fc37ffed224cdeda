"""Three-layer session store (MA1–MA7).

* **L1** an in-memory dict — every read starts here (MA3);
* **L2** a :class:`~backends.stores.ttl.TTLStore` (Redis ``SET … EX 86400`` or the
  in-process TTL store) — written on every save (MA2), read only at start-up, where its
  copies overlay the SQLite ones when fresher (MA4);
* **SQLite** in WAL mode, the durable mirror (MA5, MA7) — written on every save (MA2), read
  on an L1 miss and cached into L1 (MA3). Several processes may share the file.

No public method of :class:`SessionStore` raises because a layer failed (MA6): the failure is
logged, the layer is marked degraded in :meth:`SessionStore.health`, and the session lives on
in the other layers. Sessions that could not reach SQLite are remembered and written as soon
as SQLite works again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from backends.errors import StoreUnavailableError
from backends.i18n import _
from backends.multiagent.health import OK, LayerState
from backends.stores.sessions import SESSION_TTL, Session, SessionMirror, check_limit, l2_prefix
from backends.stores.ttl import TTLStore

log = logging.getLogger(__name__)

# --- the store --------------------------------------------------------------------------------


class SessionStore:
    """L1 dict + L2 TTL store + durable mirror; never raises because a layer failed (MA6).

    ``mirror`` is a factory so that a mirror that cannot even be opened (missing folder,
    corrupt file) degrades the store instead of stopping it; opening is retried on save.
    """

    def __init__(
        self,
        l2: TTLStore | None,
        mirror: Callable[[], SessionMirror],
        *,
        namespace: str = "custodia",
        ttl: int = SESSION_TTL,
        retry_after: float = 5.0,
    ) -> None:
        self._l1: dict[str, Session] = {}  # never handed out: callers get copies
        self._raw: dict[str, str] = {}  # L1 entries as JSON, for cheap copies
        self._l2 = l2
        self._mirror_factory = mirror
        self._mirror: SessionMirror | None = None
        self._prefix = l2_prefix(namespace)
        self._ttl = ttl
        self._lock = threading.RLock()
        self._dirty: set[str] = set()  # saved, but not yet in SQLite
        self.l2_state = LayerState("sessions L2", retry_after)
        self.sqlite_state = LayerState("sessions SQLite", retry_after)
        if l2 is None:
            self.l2_state.reason = "not configured"
        self._open_mirror()
        self._warm_up()

    # -- start-up (MA4) --------------------------------------------------------------------
    def _open_mirror(self, *, strict: bool = False) -> SessionMirror | None:
        """The mirror, opened now if needed; None when it cannot be (``strict``: raise the
        :class:`StoreUnavailableError` instead)."""
        if self._mirror is not None:
            return self._mirror
        try:
            self._mirror = self._mirror_factory()
        except StoreUnavailableError as err:
            self.sqlite_state.fail(err)
            if strict:
                raise
            return None
        except Exception as err:  # a bug in a factory must not stop the sessions either
            log.exception(_("sessions: opening the SQLite mirror failed"))
            self.sqlite_state.fail(err)
            if strict:
                raise
            return None
        self.sqlite_state.recover()
        return self._mirror

    def _warm_up(self) -> None:
        """SQLite into L1, then the fresher L2 copies on top (written back to SQLite)."""
        mirror = self._mirror
        if mirror is not None:
            try:
                for session in mirror.list():
                    self._cache(session)
            except StoreUnavailableError as err:
                self.sqlite_state.fail(err)
        if self._l2 is None:
            return
        try:
            items = self._l2.items(self._prefix)
        except StoreUnavailableError as err:
            self.l2_state.fail(err)
            return
        for item in items:
            try:
                session = Session.from_json(item.value)
            except (ValueError, KeyError, TypeError) as err:
                log.warning(_("sessions: ignoring unreadable L2 entry %s: %s"), item.key, err)
                continue
            known = self._l1.get(session.session_id)
            if known is None or session.updated_at > known.updated_at:
                self._cache(session, item.value)
                self._dirty.add(session.session_id)  # SQLite missed this write: repair it
        if self._dirty:
            self._flush_dirty()

    # -- writes (MA2) ----------------------------------------------------------------------
    def save(self, session: Session, *, touch: bool = True) -> Session:
        """Write through to L1, L2 and SQLite; returns the stored copy. Never raises."""
        with self._lock:
            if touch:
                session.updated_at = max(time.time(), session.updated_at)
            raw = session.to_json()
            stored = Session.from_json(raw)
            self._cache(stored, raw)
            self._dirty.add(stored.session_id)
        self._write_l2(stored.session_id, raw)
        self._flush_dirty()
        return Session.from_json(raw)

    def _write_l2(self, session_id: str, raw: str) -> None:
        if self._l2 is None or not self.l2_state.usable():
            return
        try:
            self._l2.set(self._prefix + session_id, raw, self._ttl)
        except StoreUnavailableError as err:
            self.l2_state.fail(err)
        except Exception as err:
            log.exception(_("sessions: unexpected L2 error"))
            self.l2_state.fail(err)
        else:
            self.l2_state.recover()

    def _flush_dirty(self) -> None:
        with self._lock:
            if not self._dirty or not self.sqlite_state.usable():
                return
            mirror = self._open_mirror()
            if mirror is None:
                return
            pending = [self._l1[sid] for sid in sorted(self._dirty) if sid in self._l1]
            try:
                for session in pending:
                    mirror.save(session)
                    self._dirty.discard(session.session_id)
            except StoreUnavailableError as err:
                self.sqlite_state.fail(err)
            except Exception as err:
                log.exception(_("sessions: unexpected SQLite error"))
                self.sqlite_state.fail(err)
            else:
                self.sqlite_state.recover()

    # -- reads (MA3) -----------------------------------------------------------------------
    def get(self, session_id: str) -> Session | None:
        """L1, else SQLite (then cached in L1). Never L2. None when unknown or unreachable."""
        with self._lock:
            if session_id in self._l1:
                return self._copy(session_id)
            mirror = self._open_mirror() if self.sqlite_state.usable() else self._mirror
            if mirror is None:
                return None
            try:
                found = mirror.load(session_id)
            except StoreUnavailableError as err:
                self.sqlite_state.fail(err)
                return None
            if found is None:
                return None
            self._cache(found)
            return self._copy(session_id)

    def reload(self, session_id: str) -> Session | None:
        """The freshest copy of one session in any layer, cached in L1. Never raises (MA6).

        For a run that has just taken the session's run lock: another process may have
        written the session since this one read it (the window was opened before a terminal
        ran it), so L1 alone could be stale and a resume from it would redo work and then
        overwrite the other process' results. SQLite's row, then the L2 copy, replace L1's
        when fresher — the start-up rule (MA4) applied to one session; an L2 copy fresher
        than SQLite is written back to SQLite. An unreachable layer is skipped.
        """
        with self._lock:
            best = self._l1.get(session_id)
            mirror = self._open_mirror() if self.sqlite_state.usable() else self._mirror
            if mirror is not None:
                try:
                    row = mirror.load(session_id)
                except StoreUnavailableError as err:
                    self.sqlite_state.fail(err)
                else:
                    if row is not None and (best is None or row.updated_at > best.updated_at):
                        self._cache(row)
                        best = row
            raw = self._read_l2(session_id)
            if raw is not None:
                try:
                    copy = Session.from_json(raw)
                except (ValueError, KeyError, TypeError) as err:
                    log.warning(
                        _("sessions: ignoring unreadable L2 entry of %s: %s"), session_id, err
                    )
                else:
                    if best is None or copy.updated_at > best.updated_at:
                        self._cache(copy, raw)
                        self._dirty.add(session_id)  # SQLite missed this write: repair it
                        best = copy
            if best is None:
                return None
        self._flush_dirty()
        with self._lock:
            return self._copy(session_id)

    def _read_l2(self, session_id: str) -> str | None:
        if self._l2 is None or not self.l2_state.usable():
            return None
        try:
            raw = self._l2.get(self._prefix + session_id)
        except StoreUnavailableError as err:
            self.l2_state.fail(err)
            return None
        except Exception as err:
            log.exception(_("sessions: unexpected L2 error"))
            self.l2_state.fail(err)
            return None
        self.l2_state.recover()
        return raw

    def list_durable(self, *, phase: str | None = None, limit: int | None = None) -> list[Session]:
        """Like :meth:`list`, but raises :class:`StoreUnavailableError` when SQLite cannot be
        opened or read.

        For callers that present the list as the whole history (``custodia sessions``): there
        an unreadable file must be an error, not an empty — deleted-looking — history.
        """
        check_limit(limit)
        with self._lock:
            mirror = self._open_mirror(strict=True)
            assert mirror is not None
            try:
                rows = mirror.list(phase=phase)
            except StoreUnavailableError as err:
                self.sqlite_state.fail(err)
                raise
            return self._merge(rows, phase, limit)

    def _merge(
        self, rows: Sequence[Session], phase: str | None, limit: int | None
    ) -> list[Session]:
        merged = {sid: s for sid, s in self._l1.items()}
        for row in rows:
            known = merged.get(row.session_id)
            if known is None or row.updated_at > known.updated_at:
                merged[row.session_id] = row
        chosen = [s for s in merged.values() if phase is None or s.phase == phase]
        chosen.sort(key=lambda s: (-s.created_at, s.session_id))
        if limit is not None:
            chosen = chosen[:limit]
        # Rows fresh from SQLite are new objects already; L1 entries are copied.
        return [self._copy(s.session_id) if s is self._l1.get(s.session_id) else s for s in chosen]

    def list(self, *, phase: str | None = None, limit: int | None = None) -> list[Session]:
        """Newest first: SQLite's rows (other processes' too) merged with L1 (fresher wins).

        Never raises because SQLite failed (MA6): then only the sessions of L1 are listed.
        """
        check_limit(limit)
        with self._lock:
            rows: Sequence[Session] = ()
            mirror = self._mirror
            if mirror is not None:
                try:
                    rows = mirror.list(phase=phase)
                except StoreUnavailableError as err:
                    self.sqlite_state.fail(err)
            return self._merge(rows, phase, limit)

    def _cache(self, session: Session, raw: str | None = None) -> None:
        """Put ``session`` (owned by the store from now on) into L1."""
        self._l1[session.session_id] = session
        if raw is None:
            self._raw.pop(session.session_id, None)
        else:
            self._raw[session.session_id] = raw

    def _copy(self, session_id: str) -> Session:
        raw = self._raw.get(session_id)
        if raw is None:
            raw = self._raw[session_id] = self._l1[session_id].to_json()
        return Session.from_json(raw)

    def cached(self, session_id: str) -> bool:
        """True when ``session_id`` is in L1 (tests of the read path)."""
        with self._lock:
            return session_id in self._l1

    # -- health and life cycle -------------------------------------------------------------
    def health(self) -> dict[str, str]:
        """Layer -> ``"ok"`` or the reason it is degraded."""
        return {"l1": OK, "l2": self.l2_state.status, "sqlite": self.sqlite_state.status}

    @property
    def l2_kind(self) -> str:
        return self._l2.kind if self._l2 is not None else "none"

    @property
    def pending_sqlite(self) -> int:
        """Sessions saved while SQLite failed, waiting to be written."""
        with self._lock:
            return len(self._dirty)

    def close(self) -> None:
        self._flush_dirty()
        with self._lock:
            if self._mirror is not None:
                try:
                    self._mirror.close()
                except Exception:
                    log.exception(_("sessions: closing the SQLite mirror failed"))
                self._mirror = None
