"""The multi-agent assistant as one object: the only thing ``desktop/`` and the CLI talk to.

Built by :func:`build` from what the composition layer hands it
(:class:`~backends.assistants.Needs`). Opening it is cheap (SQLite, a Redis client that
connects on first use); the chat model and the semantic memory (qdrant-edge embedded, or
qdrant-client for a server) load on first use, in a worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable

from backends import stores
from backends.assistants import Needs, StoreOpener
from backends.config import Config
from backends.errors import StoreUnavailableError
from backends.i18n import _
from backends.models.chat import ChatModel
from backends.models.embedders import Embedder
from backends.multiagent.coordinator import Coordinator, RunState
from backends.multiagent.events import Feed
from backends.multiagent.health import OK
from backends.multiagent.run import EventCallback
from backends.multiagent.runlock import LOCKS_FOLDER, RunLocks
from backends.multiagent.sessions import SessionStore
from backends.multiagent.tickets import TICKET_TTL, LiveTicket, TicketBoard
from backends.progress import Progress
from backends.stores.bus import EventBus, Subscription
from backends.stores.sessions import Session, SessionMirror
from backends.stores.ttl import TTLStore
from backends.stores.vectors import CollectionStatus, MemoryHit, SemanticMemory

log = logging.getLogger(__name__)

SESSIONS_FILE = "multiagent.sqlite3"


class MultiAgentService:
    """The team, its sessions, tickets, live feed and semantic memory, behind one object."""

    def __init__(
        self,
        config: Config,
        *,
        embedder: Callable[[], Embedder],
        chat: Callable[[], ChatModel],
        namespace: str = "custodia",
        ticket_ttl: float = TICKET_TTL,
        max_tokens: int = 128,
        retry_after: float = 5.0,
        open_store: StoreOpener = stores.open,
    ) -> None:
        self.config = config
        self._embedder = embedder
        self._open_store = open_store
        # the TTL store and the bus the configuration names (in-process, or Redis: a client
        # that connects on first use)
        l2: TTLStore = open_store("ttl", config)
        bus: EventBus = open_store("bus", config)
        self.l2 = l2
        self.sessions_path = config.path(SESSIONS_FILE)

        def mirror() -> SessionMirror:
            opened: SessionMirror = open_store("sessions", config, path=self.sessions_path)
            return opened

        self.sessions = SessionStore(
            l2,
            mirror,
            namespace=namespace,
            retry_after=retry_after,
        )
        self.tickets = TicketBoard(l2, namespace=namespace, ttl=ticket_ttl, retry_after=retry_after)
        self.feed = Feed(bus, namespace=namespace)
        self._memory: SemanticMemory | None = None
        self._memory_lock = threading.Lock()
        self.run_locks = RunLocks(config.path(LOCKS_FOLDER))
        self.coordinator = Coordinator(
            self.sessions,
            self.tickets,
            self.feed,
            chat,
            self.memory,
            max_tokens=max_tokens,
            run_locks=self.run_locks,
        )

    # -- semantic memory -------------------------------------------------------------------
    def memory(self) -> SemanticMemory:
        """The semantic memory, opened on first use (raises when it cannot be opened)."""
        with self._memory_lock:
            if self._memory is None:
                # qdrant-edge in the data dir (a local-mode folder of an older Custodia moves
                # over by itself), or qdrant-client for the server at qdrant_url
                memory: SemanticMemory = self._open_store(
                    "semantic", self.config, embedder=self._embedder()
                )
                self._memory = memory
            return self._memory

    def memory_status(self) -> list[CollectionStatus]:
        return self.memory().status()

    def memory_failed(self, err: BaseException) -> None:
        """The semantic memory could not be used (``err``): :meth:`health` says so."""
        self.coordinator.memory_state.fail(err)

    @property
    def recall_floor(self) -> float:
        """The least score of a memory the experts use (a search shows no less either)."""
        return self.coordinator.min_score

    def search_memory(self, query: str, limit: int = 5, collection: str = "") -> list[MemoryHit]:
        memory = self.memory()
        if collection:
            return memory.search(collection, query, limit=limit)
        return memory.search_all(query, limit=limit)

    def reembed(self, progress: Progress | None = None) -> int:
        """Rebuild the semantic memory with the configured embedder (MA11); the points done.

        The tab's "Re-embed all" and ``custodia reindex multiagent``."""
        count = self.memory().reembed(progress)
        self.coordinator.memory_state.recover()
        return count

    def memory_needs_index(self) -> list[str]:
        """The collections big enough for an HNSW index and without one (embedded only)."""
        memory = self.memory()
        needs = getattr(memory, "needs_optimise", None)
        return list(needs()) if needs is not None else []

    def index_memory(self, progress: Progress | None = None) -> int:
        """Build the HNSW index where :meth:`memory_needs_index` says (a worker's job: it
        waits for a child process; cancellable through ``progress``); the collections built."""
        optimise = getattr(self.memory(), "optimise", None)
        return int(optimise(progress)) if optimise is not None else 0

    # -- sessions --------------------------------------------------------------------------
    def start(self, task: str, tests: str = "") -> Session:
        """A new session; ``tests``: the user's own tests for its code (see
        :meth:`Coordinator.start`)."""
        return self.coordinator.start(task, tests)

    def run(
        self,
        session_id: str,
        progress: Progress | None = None,
        on_event: EventCallback | None = None,
    ) -> Session:
        return self.coordinator.run(session_id, progress, on_event)

    def ask(
        self,
        task: str,
        progress: Progress | None = None,
        on_event: EventCallback | None = None,
        tests: str = "",
    ) -> Session:
        """Start a session and run it to the end."""
        session = self.start(task, tests)
        return self.run(session.session_id, progress, on_event)

    def session(self, session_id: str) -> Session | None:
        return self.sessions.get(session_id)

    def list_sessions(
        self, phase: str | None = None, limit: int | None = None, *, durable: bool = False
    ) -> list[Session]:
        """Newest first. ``durable``: raise :class:`StoreUnavailableError` (naming the file)
        when the sessions database cannot be read, instead of listing only what this
        process holds in memory — for a listing presented as the whole history."""
        if not durable:
            return self.sessions.list(phase=phase, limit=limit)
        try:
            return self.sessions.list_durable(phase=phase, limit=limit)
        except StoreUnavailableError as err:
            detail = str(err).removeprefix(f"{self.sessions_path}: ")
            raise StoreUnavailableError(
                _("cannot read the multi-agent sessions database {path}: {problem}").format(
                    path=self.sessions_path, problem=detail
                )
            ) from err

    def running(self) -> set[str]:
        """The sessions this process is running now."""
        return self.coordinator.running()

    def run_states(self, sessions: Iterable[Session]) -> dict[str, RunState]:
        """Which of ``sessions`` run here, run in another process, or were interrupted."""
        return self.coordinator.run_states(sessions)

    def live_tickets(self, session_id: str | None = None) -> list[LiveTicket]:
        return self.tickets.list(session_id)

    def subscribe(self, session_id: str) -> Subscription:
        return self.feed.subscribe(session_id)

    def feed_ok(self) -> bool:
        """Whether the live feed's bus delivers now (when not, a run's events come through
        its ``on_event`` instead)."""
        return self.feed.state.ok

    def stop_for_shutdown(self) -> None:
        """The app is quitting: the runs stop and stay interrupted (resumable at the next
        start), not recorded as cancelled by the user."""
        self.coordinator.stop_for_shutdown()

    # -- health ----------------------------------------------------------------------------
    def health(self) -> dict[str, str]:
        """Every layer: ``"ok"`` or why it is degraded (MA6), for the tab and the CLI."""
        layers = self.sessions.health()
        kind = self.l2.kind
        out = {
            "sessions L1 (memory)": layers["l1"],
            f"sessions L2 ({kind})": layers["l2"],
            "sessions SQLite": layers["sqlite"],
            f"tickets ({kind})": self.tickets.health(),
            f"live feed ({self.feed.bus.kind})": self.feed.health(),
        }
        where = "qdrant" if self.config.qdrant_url else "qdrant-edge"
        memory_state = self.coordinator.memory_state
        if self._memory is None and memory_state.ok:
            out[f"semantic memory ({where})"] = "not opened yet"
        else:
            out[f"semantic memory ({where})"] = memory_state.status
        return out

    def probe(self) -> dict[str, str]:
        """Like :meth:`health`, after actually touching each layer once."""
        try:
            self.l2.ping()
        except StoreUnavailableError as err:
            self.sessions.l2_state.fail(err)
            self.tickets.state.fail(err)
        self.sessions.list(limit=1)
        try:
            self.memory().verify()  # reads every collection: a damaged one is not "ok"
            self.coordinator.memory_state.recover()
        except StoreUnavailableError as err:
            self.coordinator.memory_state.fail(err)
        except Exception as err:  # a mismatch is reported, not raised, here
            self.coordinator.memory_state.fail(err)
        return self.health()

    def close(self) -> None:
        self.sessions.close()
        with self._memory_lock:
            if self._memory is not None:
                self._memory.close()
                self._memory = None
        for store in (self.feed.bus, self.l2):
            try:
                store.close()
            except Exception:
                log.exception(_("multi-agent: closing the %s store failed"), store.kind)


def healthy(health: dict[str, str]) -> bool:
    """Whether every layer of :meth:`MultiAgentService.health` is well (or not needed yet)."""
    return all(v == OK or v == "not opened yet" for v in health.values())


def build(needs: Needs) -> MultiAgentService:
    """The multi-agent service, built from what the composition layer hands it."""
    return MultiAgentService(
        needs.config,
        embedder=needs.embedder,
        chat=needs.chat_model,
        open_store=needs.open_store,
    )
