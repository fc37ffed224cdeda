"""The coordinator end to end with the scripted model (embedded profile, Redis where marked)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from backends.config import Config
from backends.errors import CancelledError, DimensionMismatchError, ModelUnavailableError
from backends.models.chat import ChatModel, Prompt, ScriptedChat, ShouldStop
from backends.models.embedders import HashingEmbedder
from backends.multiagent.coordinator import RunState
from backends.multiagent.plan import assign, parse_plan
from backends.multiagent.runlock import LOCKS_FOLDER
from backends.multiagent.sessions import SessionStore
from backends.multiagent.team import EXPERTS
from backends.progress import Progress
from backends.stores.sessions import Session
from backends.stores.sessions.sqlite import SqliteSessionMirror
from backends.stores.ttl.memory import MemoryTTLStore
from tests.backends.multiagent.conftest import PLAN, REPLIES, MakeService
from tests.backends.multiagent.test_runlock import hold_in_child


class FailingChat(ChatModel):
    name = "broken"

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        raise ModelUnavailableError("the model file is gone")


class HookedChat(ScriptedChat):
    """Scripted, and runs ``hook(call_number)`` before answering."""

    def __init__(self, replies: list[str], hook: Any) -> None:
        super().__init__(replies=replies)
        self.hook = hook

    def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
        self.hook(len(self.calls) + 1)
        yield from super().stream(prompt, should_stop)


def blocked_at_the_first_call() -> tuple[threading.Event, threading.Event, HookedChat]:
    """A scripted model whose first call sets ``gate`` and waits for ``release``."""
    gate, release = threading.Event(), threading.Event()

    def block_first(call: int) -> None:
        if call == 1:
            gate.set()
            release.wait(10)

    return gate, release, HookedChat(list(REPLIES), block_first)


def kinds(session: Session) -> list[tuple[str, str]]:
    return [(e["kind"], e["phase"]) for e in session.events]


def test_parse_plan_strips_bullets_and_falls_back_to_the_task() -> None:
    text = "Here is the plan:\n1. Read the data\n- Step 2: Write code\n* check it\n\n4) extra"
    assert parse_plan(text, "task", max_steps=3) == ["Read the data", "Write code", "check it"]
    assert parse_plan("", "the task") == ["the task"]
    assert parse_plan("Plan:\nRead it\nWrite it", "t") == ["Read it", "Write it"]
    code = "```python\ndef is_prime(n):\n    return False\n```\nThat is all."
    assert parse_plan(code, "the task") == ["That is all."]
    assert parse_plan("```python\ndef f():\n    return 1", "the task") == ["the task"]
    mixed = "Sure, here you go\n1. Find the data\n2. Write the parser"
    assert parse_plan(mixed, "t") == ["Find the data", "Write the parser"]
    assert parse_plan("  \n-\n", "the task") == ["the task"]
    assert assign("Write a python function", 1) == "coder"
    assert assign("Compare the options", 2) == "researcher"


def test_a_task_runs_through_every_phase_in_order(make_service: MakeService) -> None:
    service = make_service()
    seen: list[dict[str, Any]] = []
    session = service.ask("Parse CSV files", on_event=seen.append)
    assert session.phase == "done"
    assert [e["seq"] for e in session.events] == list(range(1, len(session.events) + 1))
    assert seen == session.events
    phases = [e["text"] for e in session.events if e["kind"] == "phase"]
    assert phases == ["planning", "working", "reviewing"]
    assert session.events[-1]["kind"] == "session_finished"
    assert session.events[-1]["outcome"] == "done"
    experts = [e["expert"] for e in session.events if e["kind"] == "expert_result"]
    assert experts == ["planner", "researcher", "coder", "reviewer"]
    assert [s["expert"] for s in session.data["steps"]] == ["researcher", "coder"]
    assert session.data["review"] == "Good. Final answer."
    # Every expert looked in semantic memory before acting.
    order = [(e["kind"], e["expert"]) for e in session.events if e["kind"] != "ticket"]
    for expert in ("planner", "researcher", "coder", "reviewer"):
        assert order.index(("retrieved", expert)) < order.index(("expert_result", expert))
    # Durable: in SQLite, done.
    mirror = SqliteSessionMirror(service.sessions_path)
    stored = mirror.load(session.session_id)
    mirror.close()
    assert stored is not None and stored.phase == "done" and stored.model == "scripted"


def test_tickets_are_handed_planner_specialist_reviewer(make_service: MakeService) -> None:
    service = make_service()
    session = service.ask("Parse CSV files")
    tickets = [e for e in session.events if e["kind"] == "ticket"]
    first = session.data["steps"][0]["ticket"]
    trail = [(e["expert"], e["status"]) for e in tickets if e["ticket"] == first]
    assert trail == [("researcher", "open"), ("researcher", "working"), ("reviewer", "review")]
    live = service.live_tickets(session.session_id)
    assert [t.ticket.status for t in live] == ["closed", "closed"]
    assert [t.ticket.step for t in live] == [1, 2]
    assert all(0 < t.remaining() <= service.tickets.ttl for t in live)


def test_results_are_stored_and_feed_the_next_task(make_service: MakeService) -> None:
    chat = ScriptedChat()  # default replies mention the task: the memory has something
    service = make_service(chat=chat)
    first = service.ask("Write python code for CSV files with quotes")
    memory = service.memory()
    mine = memory.search("agent_results", "csv", limit=20, session=first.session_id)
    assert {h.expert for h in mine} == {"planner", "coder", "reviewer"}
    # nothing was verified: no example for a coder (issue 24)
    assert memory.search("code_patterns", "csv", session=first.session_id) == []
    outcome = memory.search("session_memory", "csv", session=first.session_id)
    assert outcome and outcome[0].text.startswith("Task: Write python code for CSV files")
    calls_before = len(chat.calls)
    service.ask("Write python code for CSV files with quotes again")
    planner_prompt = chat.calls[calls_before]
    assert planner_prompt.context, "the next planner got no memory from the first session"


def test_a_running_session_can_be_cancelled_and_resumed(make_service: MakeService) -> None:
    progress = Progress()

    def cancel_on_third(call: int) -> None:
        if call == 3:  # the coder, after the researcher finished
            progress.cancel()

    chat = HookedChat(list(REPLIES), cancel_on_third)
    service = make_service(chat=chat)
    session = service.start("Parse CSV files")
    with pytest.raises(CancelledError):
        service.run(session.session_id, progress)
    stopped = service.session(session.session_id)
    assert stopped is not None and stopped.phase == "cancelled"
    assert stopped.events[-1]["outcome"] == "cancelled"
    assert [s.get("result") for s in stopped.data["steps"]] == [REPLIES[1], None]

    chat.hook = lambda call: None
    chat.replies = [PLAN, REPLIES[1], "(cancelled)", "resumed code", "Reviewed after resume."]
    done = service.run(session.session_id)
    assert done.phase == "done"
    assert [s["result"] for s in done.data["steps"]] == [REPLIES[1], "resumed code"]
    assert len(chat.calls) == 5  # planner and researcher were not asked again
    assert any(e.get("resumed") for e in done.events)


def test_an_interrupted_session_resumes_after_a_restart(make_service: MakeService) -> None:
    # A "crash" during the working phase: the process died, nothing marked it cancelled.
    service = make_service()
    session = service.start("Parse CSV files")
    progress = Progress()

    def cancel_on_second(call: int) -> None:
        if call == 2:
            progress.cancel()

    with pytest.raises(CancelledError):
        make_service(chat=HookedChat(list(REPLIES), cancel_on_second)).run(
            session.session_id, progress
        )
    restarted = make_service()
    crashed = restarted.session(session.session_id)
    assert crashed is not None and crashed.resumable
    crashed.phase = "working"  # as a killed process leaves it
    restarted.sessions.save(crashed)
    restarted = make_service()
    assert [s.phase for s in restarted.list_sessions()] == ["working"]
    done = restarted.run(session.session_id)
    assert done.phase == "done"
    assert restarted.list_sessions(phase="done")[0].session_id == session.session_id


def test_a_model_failure_fails_the_session_and_it_can_be_resumed(
    make_service: MakeService,
) -> None:
    service = make_service(chat=FailingChat())
    session = service.start("Parse CSV files")
    with pytest.raises(ModelUnavailableError):
        service.run(session.session_id)
    failed = service.session(session.session_id)
    assert failed is not None and failed.phase == "failed"
    assert "model file is gone" in failed.data["error"]
    assert make_service().run(session.session_id).phase == "done"


def test_without_a_chat_model_the_team_fails_with_the_reason_and_stores_nothing(
    make_service: MakeService,
) -> None:
    from backends.models.chat import RetrievalOnlyChat

    service = make_service(chat=RetrievalOnlyChat("nothing listens on 127.0.0.1:11434"))
    session = service.start("Write a Python function that reverses a string")
    with pytest.raises(ModelUnavailableError, match="needs a chat model"):
        service.run(session.session_id)
    failed = service.session(session.session_id)
    assert failed is not None and failed.phase == "failed" and "steps" not in failed.data
    assert "nothing listens" in failed.data["error"]
    memory = service.memory()
    for collection in ("agent_results", "session_memory", "code_patterns"):
        assert not memory.search(collection, "string", limit=5, session=session.session_id)
    # with a model again, the same session runs to the end
    assert make_service().run(session.session_id).phase == "done"


def test_a_dimension_mismatch_stops_the_run_until_reembedded(
    make_service: MakeService,
) -> None:
    make_service().ask("Parse CSV files")
    switched = make_service(embedder=HashingEmbedder(64))
    session = switched.start("Another task")
    with pytest.raises(DimensionMismatchError):
        switched.run(session.session_id)
    stopped = switched.session(session.session_id)
    assert stopped is not None and stopped.phase == "failed"
    assert "dimension" in stopped.data["error"]
    assert switched.reembed() > 0
    assert switched.run(session.session_id).phase == "done"


def test_one_session_cannot_run_twice_at_once(make_service: MakeService) -> None:
    from backends.multiagent.coordinator import SessionBusyError

    gate, release, chat = blocked_at_the_first_call()
    service = make_service(chat=chat)
    session = service.start("Parse CSV files")
    worker = threading.Thread(target=service.run, args=(session.session_id,))
    worker.start()
    try:
        assert gate.wait(10)
        assert service.running() == {session.session_id}
        with pytest.raises(SessionBusyError):
            service.run(session.session_id)
    finally:
        release.set()
        worker.join(10)
    assert service.session(session.session_id).phase == "done"  # type: ignore[union-attr]


def test_a_resume_starts_from_what_another_process_saved_not_from_a_stale_cache(
    make_service: MakeService,
) -> None:
    """The window cached a session; a terminal then advanced it. Resuming in the window
    must continue from the terminal's work — not redo it and overwrite it."""
    chat = ScriptedChat(replies=["Reviewed."])
    window = make_service(chat=chat)
    session = window.start("Parse CSV files")  # cached in the window's L1, phase planning
    assert window.sessions.cached(session.session_id)

    terminal = SessionStore(MemoryTTLStore(), lambda: SqliteSessionMirror(window.sessions_path))
    advanced = terminal.get(session.session_id)
    assert advanced is not None
    advanced.phase = "reviewing"
    advanced.data.update(
        plan="1. do it",
        steps=[
            {"index": 1, "title": "do it", "expert": "researcher", "ticket": "t1",
             "result": "done by the terminal"},
        ],
    )  # fmt: skip
    advanced.events.extend(
        {"session": session.session_id, "seq": n, "ts": 0.0, "kind": "phase", "phase": "x",
         "expert": "", "text": f"terminal event {n}"}
        for n in (1, 2, 3)
    )  # fmt: skip
    terminal.save(advanced)
    terminal.close()

    final = window.run(session.session_id)
    assert final.phase == "done"
    assert final.data["steps"][0]["result"] == "done by the terminal"
    assert [c.system for c in chat.calls] == [EXPERTS["reviewer"].system]  # nothing redone
    assert [e["text"] for e in final.events[:3]] == [f"terminal event {n}" for n in (1, 2, 3)]
    assert [e["seq"] for e in final.events] == list(range(1, len(final.events) + 1))


def test_a_run_goes_on_with_a_warning_when_its_lock_cannot_be_made(
    make_service: MakeService, config: Config
) -> None:
    config.path(LOCKS_FOLDER).write_text("a file where the lock folder should be")
    service = make_service()
    final = service.ask("Parse CSV files")
    assert final.phase == "done"
    warnings = [e["text"] for e in final.events if e["kind"] == "warning"]
    assert len(warnings) == 1 and warnings[0].startswith("Could not take the run lock")
    assert "run-lock folder" in warnings[0]


def test_run_states_tell_running_here_from_elsewhere_from_interrupted(
    make_service: MakeService,
) -> None:
    gate, release, chat = blocked_at_the_first_call()
    service = make_service(chat=chat)
    here = service.start("runs here")
    elsewhere = service.start("held by another run lock")
    crashed = service.start("left in reviewing")
    crashed.phase = "reviewing"
    service.sessions.save(crashed)
    failed = service.start("failed, idle")
    failed.phase = "failed"
    service.sessions.save(failed)
    worker = threading.Thread(target=service.run, args=(here.session_id,))
    worker.start()
    other = hold_in_child(service.run_locks.folder, elsewhere.session_id)
    try:
        assert gate.wait(10)
        states = service.run_states(service.list_sessions())
        assert states == {
            here.session_id: RunState("running"),
            elsewhere.session_id: RunState("running elsewhere", other.pid),
            crashed.session_id: RunState("interrupted"),
        }
        assert states[elsewhere.session_id].label == (
            f"running in another process, pid {other.pid}"
        )
    finally:
        other.kill()
        other.wait()
        release.set()
        worker.join(10)
    states = service.run_states(service.list_sessions())
    assert states == {
        elsewhere.session_id: RunState("interrupted"),
        crashed.session_id: RunState("interrupted"),
    }


def feed_follows_the_session(service: Any) -> None:
    session = service.start("Parse CSV files")
    sub = service.subscribe(session.session_id)
    try:
        final = service.run(session.session_id)
        got: list[dict[str, Any]] = []
        while len(got) < len(final.events):
            event = sub.get(timeout=2.0)
            assert event is not None, f"feed stopped after {len(got)} events"
            got.append(event)
    finally:
        sub.close()
    assert got == final.events


def test_the_live_feed_carries_every_event_in_order(make_service: MakeService) -> None:
    feed_follows_the_session(make_service())


@pytest.mark.server
def test_the_live_feed_over_redis(
    make_service: MakeService, redis_config: Config, namespace: str
) -> None:
    service = make_service(cfg=redis_config, namespace=namespace)
    assert service.feed.bus.kind == "redis"
    feed_follows_the_session(service)
    assert all(v == "ok" for k, v in service.health().items() if "redis" in k)


@pytest.mark.server
def test_sessions_and_tickets_live_in_redis(
    make_service: MakeService, redis_config: Config, namespace: str, redis_url: str
) -> None:
    import redis

    service = make_service(cfg=redis_config, namespace=namespace)
    session = service.ask("Parse CSV files")
    client = redis.Redis.from_url(redis_url)
    try:
        key = f"{namespace}:session:{session.session_id}"
        assert 86_000 < client.ttl(key) <= 86_400
        ticket_keys = list(client.scan_iter(f"{namespace}:ticket:{session.session_id}:*"))
        assert len(ticket_keys) == 2
        assert all(0 < client.ttl(k) <= service.tickets.ttl for k in ticket_keys)
    finally:
        client.close()
