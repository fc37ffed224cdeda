"""The coordinator: expert agents taking a task through planning → working → reviewing → done.

* the **planner** breaks the task into steps (:mod:`~backends.multiagent.plan`); each step
  becomes a ticket (MA8) handed to a specialist — the **coder** or the **researcher**
  (:mod:`~backends.multiagent.team`);
* each specialist does its step and hands its ticket to the **reviewer**;
* a step that wrote Python is **checked** (:mod:`~backends.multiagent.checking`): its tests
  run in a sandbox; a step that fails is retried once with the failure as feedback;
* the **reviewer** judges the results and writes the final answer; the session's result is
  assembled from it and the steps (:mod:`~backends.multiagent.result`).

A finished session is never just "done": it is ``verified``, ``failed verification`` or an
``unverified draft`` (``data["verification"]``, shown by the tab and the CLI).

Every step is an event and every expert's turn goes through semantic memory (MA9, MA10: see
:mod:`~backends.multiagent.run`). Work already done is recorded in the session, so a
cancelled, failed or interrupted session resumes where it stopped. This module holds the
phases and who may run a session; nothing about what a step says.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from backends import failures, i18n
from backends.errors import (
    CancelledError,
    CustodiaEnvironmentError,
    DimensionMismatchError,
    ModelUnavailableError,
    StoreUnavailableError,
)
from backends.i18n import N_, _
from backends.models.chat import ChatModel
from backends.multiagent.checking import check_line, step_done, verify_step
from backends.multiagent.events import SESSION_STARTED, WARNING, Feed
from backends.multiagent.health import LayerState
from backends.multiagent.plan import plan_steps
from backends.multiagent.result import assemble_result
from backends.multiagent.run import EventCallback, Run
from backends.multiagent.runlock import RunLock, RunLocks, SessionBusyError
from backends.multiagent.runlock import SessionRunningError as SessionRunningError  # re-exported
from backends.multiagent.sandbox import Limits, NetworkChoice
from backends.multiagent.sessions import SessionStore
from backends.multiagent.team import EXPERTS
from backends.multiagent.tickets import Ticket, TicketBoard
from backends.multiagent.verify import LABELS, session_status
from backends.multiagent.words import expert_name
from backends.progress import Progress
from backends.stores.sessions import ACTIVE_PHASES, Session
from backends.stores.vectors import SemanticMemory

log = logging.getLogger(__name__)

MemoryProvider = Callable[[], SemanticMemory]

#: why the chat model answers without a model (``RetrievalOnlyChat.reason``), as the model
#: registry and the conversations' picker write it
_RETRIEVAL_ONLY_REASONS = (N_("selected in settings"), N_("chosen in the model picker"))

#: the reviewer's token budget, in steps' budgets: its final answer must not stop mid-line
REVIEW_BUDGET = 3


@dataclass(frozen=True)
class RunState:
    """What is happening to an unfinished session right now.

    ``running``: this process runs it; ``running elsewhere``: another live process holds its
    run lock (``pid``); ``interrupted``: it stopped in an active phase and nobody runs it
    (a killed process, a crash) — resumable. The CLI and the tab both show this.
    """

    kind: Literal["running", "running elsewhere", "interrupted"]
    pid: int | None = None

    @property
    def label(self) -> str:
        if self.kind == "running elsewhere":
            who = f"pid {self.pid}" if self.pid is not None else "pid unknown"
            return f"running in another process, {who}"
        return self.kind


class Coordinator:
    """Takes a session through its phases (:meth:`run`): one run per session at a time (in
    this process, and across processes through its run lock), resumable wherever it stopped."""

    def __init__(
        self,
        sessions: SessionStore,
        tickets: TicketBoard,
        feed: Feed,
        chat: Callable[[], ChatModel],
        memory: MemoryProvider | None = None,
        *,
        max_tokens: int = 128,
        max_steps: int = 3,
        memory_limit: int = 3,
        min_score: float = 0.15,
        run_locks: RunLocks | None = None,
        limits: Limits | None = None,
        network: NetworkChoice = "auto",
    ) -> None:
        self.sessions = sessions
        #: the sandbox a step's code runs in
        self.limits = limits or Limits()
        self.network: NetworkChoice = network
        #: one run per session across processes; None: this process only (tests, tools)
        self.run_locks = run_locks
        self.tickets = tickets
        self.feed = feed
        #: the team's chat model (the user's latest choice), loaded on first call
        self.chat = chat
        self._memory = memory
        self.max_tokens = max_tokens
        self.max_steps = max_steps
        self.memory_limit = memory_limit
        self.min_score = min_score
        self.memory_state = LayerState("semantic memory", retry_after=30.0)
        #: the process is quitting: a run stopped now is interrupted, not cancelled
        self._quitting = threading.Event()
        self._running: set[str] = set()
        self._lock = threading.Lock()

    # -- public ----------------------------------------------------------------------------
    def start(self, task: str, tests: str = "") -> Session:
        """A new session in phase ``planning``, saved (it runs with :meth:`run`).

        ``tests``: Python tests the user attaches, run against the team's code and never shown
        to the model (the strongest check: nobody on the team wrote them)."""
        task = task.strip()
        if not task:
            raise ValueError("the task is empty")
        session = Session.new(task, model=self._model_name())
        if tests.strip():
            session.data["tests"] = tests
        self.sessions.save(session)
        return session

    def stop_for_shutdown(self) -> None:
        """The process is quitting: runs cancelled from now on stay in their phase (listed as
        interrupted and resumable at the next start), not recorded as cancelled by the user."""
        self._quitting.set()

    def running(self) -> set[str]:
        """The sessions this process is running now."""
        with self._lock:
            return set(self._running)

    def run_states(self, sessions: Iterable[Session]) -> dict[str, RunState]:
        """The :class:`RunState` of each of ``sessions`` that is running or interrupted.

        Sessions missing from the answer are idle: done, or failed/cancelled and not being
        resumed. With run locks, "running elsewhere" and "interrupted" are exact: the lock
        of a process that died is free.
        """
        here = self.running()
        own = os.getpid()
        out: dict[str, RunState] = {}
        for session in sessions:
            sid = session.session_id
            if sid in here:
                out[sid] = RunState("running")
                continue
            if session.phase == "done":
                continue
            holder = self.run_locks.holder(sid) if self.run_locks is not None else None
            if holder is not None:
                if holder.pid == own:  # started between running() and the probe
                    out[sid] = RunState("running")
                else:
                    out[sid] = RunState("running elsewhere", holder.pid)
            elif session.phase in ACTIVE_PHASES:
                out[sid] = RunState("interrupted")
        return out

    def run(
        self,
        session_id: str,
        progress: Progress | None = None,
        on_event: EventCallback | None = None,
    ) -> Session:
        """Run (or resume) a session to its end; returns it in its final phase.

        Raises :class:`CancelledError` when ``progress`` is cancelled (the session is saved as
        ``cancelled``, resumable), and environment errors (model, dimension mismatch) after
        saving the session as ``failed`` — also resumable.

        Only one run of a session at a time: :class:`SessionBusyError` when this process
        runs it already, :class:`SessionRunningError` when another live process does (its
        run lock); both before anything of the session is read or written. Once the lock is
        held the session is re-read from the durable layers (another process may have
        advanced it since this one cached it).
        """
        progress = progress or Progress()
        with self._lock:
            if session_id in self._running:
                raise SessionBusyError(
                    _("session {session_id} is already running in this process").format(
                        session_id=session_id
                    )
                )
            self._running.add(session_id)
        try:
            lock, notes = self._claim(session_id)
            try:
                session = self.sessions.reload(session_id)
                if session is None:
                    raise StoreUnavailableError(
                        _("session {session_id} is not in any reachable store").format(
                            session_id=session_id
                        )
                    )
                return self._run(session, progress, on_event, notes)
            finally:
                if lock is not None:
                    lock.release()
        finally:
            with self._lock:
                self._running.discard(session_id)

    def _claim(self, session_id: str) -> tuple[RunLock | None, list[str]]:
        """The run lock (raises :class:`SessionRunningError`); when the lock itself cannot be
        made (an unusable data dir) the run goes on with a warning, like any failing layer
        (MA6) — there is then no durable copy another process could resume either."""
        if self.run_locks is None:
            return None, []
        try:
            return self.run_locks.acquire(session_id), []
        except StoreUnavailableError as err:
            log.warning(_("multi-agent: running %s without its run lock: %s"), session_id, err)
            return None, [
                _(
                    "Could not take the run lock ({err}); make sure no other Custodia process "
                    "runs this session at the same time."
                ).format(err=err)
            ]

    # -- the phases ------------------------------------------------------------------------
    def _run(
        self,
        session: Session,
        progress: Progress,
        on_event: EventCallback | None,
        notes: Iterable[str] = (),
    ) -> Session:
        ctx = Run(self, session, progress, on_event)
        if session.finished:
            return session
        resumed = bool(session.events)
        if resumed:
            ctx.event(SESSION_STARTED, _("Resuming: {0}").format(session.task), resumed=True)
        else:
            ctx.event(SESSION_STARTED, session.task)
        for note in notes:
            ctx.event(WARNING, note)
        try:
            self._need_a_model()
            memory = self._open_memory(ctx)
            ctx.memory = memory
            steps = self._plan(ctx)
            self._work(ctx, steps)
            self._review(ctx)
        except CancelledError:
            if self._quitting.is_set():
                ctx.event(WARNING, _("Stopped because Custodia was closed; resume to continue."))
                raise
            ctx.finish("cancelled", _("Cancelled by the user; resume to continue."))
            raise
        except CustodiaEnvironmentError as err:
            session.data["error"] = str(err)
            ctx.finish("failed", _("Failed: {0}").format(err))
            raise
        except Exception as err:
            log.exception(_("multi-agent session %s crashed"), session.session_id)
            session.data["error"] = f"{type(err).__name__}: {err}"
            ctx.finish(
                "failed",
                _("Failed (a bug, see the log): {0}").format(f"{type(err).__name__}: {err}"),
            )
            raise
        status, why = session_status(list(session.data.get("steps") or []))
        session.data["verification"] = {"status": status, "label": LABELS[status], "summary": why}
        session.phase = "done"  # the run is over (MA7's phase); what it is worth: its status
        session.data["result"] = assemble_result(session)
        # the language it is written in: the tab assembles it again to show it in another
        session.data["result_language"] = i18n.current()
        ctx.save()
        finished = _("Finished — {label}: {why}.").format(label=_(LABELS[status]), why=why)
        ctx.finish("done", finished, verification=status)
        return session.copy()

    def _need_a_model(self) -> None:
        """The team plans, works and reviews by generating text: in retrieval-only mode its
        "plan" would be the mode's label and its results placeholders stored in memory, so
        the session fails (resumable) with the reason instead."""
        model = self.chat()
        if model.retrieval_only:
            reason = getattr(model, "reason", "") or N_("retrieval-only mode is selected")
            said = _(
                "the multi-agent team needs a chat model to plan and write, and none is "
                "available ({reason}); start its server or choose another model in Settings, "
                "restart Custodia, then resume"
            ).format(reason=_(reason))
            raise ModelUnavailableError(failures.with_details(said, "CUSTODIA_CHAT_MODEL"))

    def _open_memory(self, ctx: Run) -> SemanticMemory | None:
        if self._memory is None:
            return None
        try:
            memory = self._memory()
            memory.check()  # a model change must be seen, never hidden as "nothing found"
        except DimensionMismatchError:
            raise
        except StoreUnavailableError as err:
            self.memory_state.fail(err)
            ctx.event(
                WARNING,
                _("Semantic memory unavailable, going on without it: {0}").format(
                    failures.explain(err)
                ),
            )
            return None
        self.memory_state.recover()
        return memory

    def _plan(self, ctx: Run) -> list[dict[str, Any]]:
        data = ctx.session.data
        if "steps" in data:
            return list(data["steps"])
        ctx.phase("planning")
        task = ctx.session.task
        text = ctx.act(EXPERTS["planner"], f"Task: {task}", ticket="")
        plan = plan_steps(text, task, self.max_steps)
        steps = []
        for index, (title, expert) in enumerate(plan, start=1):
            ticket = Ticket.new(ctx.session.session_id, index, title, expert, "planner")
            steps.append(
                {
                    "index": index,
                    "title": title,
                    "expert": expert,
                    "ticket": ticket.ticket_id,
                    "created_at": ticket.created_at,
                }
            )
            ctx.ticket(
                ticket,
                _("Step {index} → {expert}: {title}").format(
                    index=index, expert=expert_name(expert), title=title
                ),
            )
        data["plan"] = text
        data["steps"] = steps
        ctx.save()
        ctx.advance()
        return steps

    def _work(self, ctx: Run, steps: list[dict[str, Any]]) -> None:
        if all(step_done(step) for step in steps):
            return
        ctx.phase("working")
        task = ctx.session.task
        for step in ctx.session.data["steps"]:
            if step_done(step):
                continue
            ctx.progress.check()
            ticket = Ticket(
                ticket_id=step["ticket"],
                session_id=ctx.session.session_id,
                step=step["index"],
                title=step["title"],
                expert=step["expert"],
                from_expert="planner",
                status="working",
                created_at=step.get("created_at", 0.0),
            )
            if step.get("result") is None:
                ctx.ticket(
                    ticket,
                    _("{expert} took step {index}").format(
                        expert=expert_name(step["expert"]), index=step["index"]
                    ),
                )
                prompt = f"Task: {task}\nYour step ({step['index']}): {step['title']}"
                result = ctx.act(EXPERTS[step["expert"]], prompt, ticket=step["ticket"])
                step["result"] = result
                ctx.save()
                ctx.advance()
            verify_step(ctx, step)
            ctx.ticket(
                ticket.handed("reviewer", "review"),
                _("{expert} handed step {index} to the reviewer").format(
                    expert=expert_name(step["expert"]), index=step["index"]
                ),
            )

    def _review(self, ctx: Run) -> None:
        data = ctx.session.data
        if "review" in data:
            return
        ctx.phase("reviewing")
        results = "\n".join(
            f"- [{s['expert']}] step {s['index']} ({s['title']}): {s['result']}" + check_line(s)
            for s in data["steps"]
        )
        prompt = f"Task: {ctx.session.task}\nResults:\n{results}"
        # The final answer gets room to finish its sentences (the steps' budget cut it mid-line).
        data["review"] = ctx.act(
            EXPERTS["reviewer"],
            prompt,
            ticket="",
            own_session=True,
            max_tokens=max(self.max_tokens * REVIEW_BUDGET, 256),
            status=session_status(list(data["steps"]))[0],
        )
        ctx.save()
        ctx.advance()
        for step in data["steps"]:
            ticket = Ticket(
                ticket_id=step["ticket"],
                session_id=ctx.session.session_id,
                step=step["index"],
                title=step["title"],
                expert="reviewer",
                from_expert=step["expert"],
                status="closed",
                created_at=step.get("created_at", 0.0),
            )
            self.tickets.put(ticket)

    def _model_name(self) -> str:
        try:
            return self.chat().name
        except CustodiaEnvironmentError:
            return ""
