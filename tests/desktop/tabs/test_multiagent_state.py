"""The multi-agent tab's model without Qt (no QApplication): the rules the panels draw, the
events they observe, and the listing's :class:`~backends.multiagent.tags.Tags`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends.multiagent import SESSION_FINISHED, RunState, Session
from backends.multiagent.tags import Tags
from backends.stores.vectors import MemoryHit
from desktop.tabs.multiagent.state import (
    Event,
    MemorySearch,
    MultiAgentState,
    Notice,
    result_of,
)

ROOT = Path(__file__).resolve().parents[3]


def session(task: str = "Parse CSV files", phase: str = "working") -> Session:
    made = Session.new(task)
    made.phase = phase
    return made


def event(seq: int, session_id: str, kind: str = "expert_result", **extra: Any) -> dict[str, Any]:
    return {"seq": seq, "session": session_id, "kind": kind, "text": extra.pop("text", ""), **extra}


class Recorder:
    """Connects to every event of a state and writes down what it was told, in order."""

    def __init__(self, state: MultiAgentState) -> None:
        self.told: list[tuple[str, tuple[Any, ...]]] = []
        for name, value in vars(state).items():
            if isinstance(value, Event):
                value.connect(lambda *args, name=name: self.told.append((name, args)))

    def names(self) -> list[str]:
        return [name for name, _ in self.told]


def test_the_state_module_imports_no_qt() -> None:
    """Loaded on its own (not through the package, whose tab is Qt), nothing of Qt comes in."""
    code = (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('ma_state', sys.argv[1])\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['ma_state'] = module\n"
        "spec.loader.exec_module(module)\n"
        "qt = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6'))\n"
        "assert not qt, qt\n"
        "module.MultiAgentState()\n"
    )
    path = ROOT / "desktop" / "tabs" / "multiagent" / "state.py"
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_an_event_tells_every_callback_in_order_until_disconnected() -> None:
    heard: list[str] = []
    changed: Event[[str]] = Event()

    def first(text: str) -> None:
        heard.append(f"first {text}")

    changed.connect(first)
    changed.connect(lambda text: heard.append(f"second {text}"))
    changed.emit("a")
    changed.disconnect(first)
    changed.emit("b")
    assert heard == ["first a", "second a", "second b"]


def test_one_run_at_a_time_from_the_first_press() -> None:
    state = MultiAgentState()
    assert not state.busy()
    state.starting = True
    assert state.busy()
    state.starting = False
    state.pending_run = "s1"  # the feed is subscribing
    assert state.busy() and state.is_ours("s1")
    state.run_started("s1")
    assert state.busy() and state.pending_run is None and state.running_id == "s1"
    assert state.run_ended() == "s1"
    assert not state.busy() and not state.is_ours("s1")


def test_resume_acts_on_an_unfinished_session_nobody_runs() -> None:
    state = MultiAgentState(ready=True)
    shown = session(phase="working")
    state.current = shown
    assert state.can_resume()
    state.states[shown.session_id] = RunState("running elsewhere", 4242)
    assert not state.can_resume()
    state.states[shown.session_id] = RunState("interrupted")
    assert state.can_resume()
    state.running = True  # another run goes on: one at a time
    assert not state.can_resume()
    state.running = False
    shown.phase = "done"
    assert not state.can_resume()


def test_a_listing_asked_for_earlier_is_dropped() -> None:
    state = MultiAgentState()
    told = Recorder(state)
    older = state.next_listing()
    newer = state.next_listing()
    assert not state.listed(older, [session()], {})
    assert told.names() == []
    assert state.listed(newer, [], {"x": RunState("interrupted")})
    assert told.names() == ["sessions_listed"] and "x" in state.states


def test_a_session_is_drawn_once_and_its_live_events_in_order() -> None:
    state = MultiAgentState()
    running = session()
    sid = running.session_id
    running.events.extend(
        [event(1, sid, "session_started"), event(2, sid, "phase", text="planning")]
    )
    state.run_started(sid)
    state.live_event(event(4, sid, "ticket"))  # arrives before the session is shown
    state.live_event(event(3, sid, "phase", text="working"))
    told = Recorder(state)
    assert state.show_session(running)  # a ticket came live: the tickets are read again
    drawn = [args[0]["seq"] for name, args in told.told if name == "event_drawn"]
    assert drawn == [1, 2, 3, 4]
    assert running.phase == "working"
    assert told.names()[0] == "feed_reset" and told.names()[-1] == "session_shown"

    told.told.clear()
    state.show_session(running)  # the same session again: nothing is drawn twice
    assert "feed_reset" not in told.names() and "event_drawn" not in told.names()


def test_a_live_event_of_another_session_moves_only_its_row() -> None:
    state = MultiAgentState()
    state.current = session()
    told = Recorder(state)
    finished = event(9, "other", SESSION_FINISHED, outcome="done", verification="verified")
    assert not state.live_event(finished)
    assert told.told == [("listed_tags_changed", ("other", Tags("done", "verified")))]


def test_a_notice_about_the_session_shown_goes_away() -> None:
    state = MultiAgentState()
    ended = session(phase="done")
    state.set_notice(Notice(ended.session_id, "The session ended."))
    state.show_session(ended)
    assert state.notice == Notice()


def test_the_result_is_the_stored_one_or_nothing_before_any_work() -> None:
    fresh = session()
    assert result_of(fresh) == ""
    fresh.data.update({"review": "fine", "result": "# Parse CSV files\n"})
    assert result_of(fresh) == "# Parse CSV files\n"


def test_a_memory_search_hides_what_the_experts_would_not_use() -> None:
    hits = tuple(
        MemoryHit(id=str(i), score=score, payload={}) for i, score in enumerate((0.9, 0.1, 0.2))
    )
    search = MemorySearch("csv", searching=False, floor=0.15, hits=hits)
    assert [hit.id for hit in search.shown] == ["0", "2"] and search.hidden == 1


def test_the_bar_and_the_memory_changes_are_told() -> None:
    state = MultiAgentState()
    told = Recorder(state)
    state.set_bar(visible=True, tip="Running: x")
    state.set_bar(maximum=4, value=1)
    assert state.bar.visible and state.bar.tip == "Running: x" and state.bar.maximum == 4
    state.set_reembedding(True)
    assert told.names() == ["bar_changed", "bar_changed", "memory_status_changed"]


# -- Tags -----------------------------------------------------------------------------------


def test_tags_of_a_session_say_its_phase_status_and_run_state() -> None:
    done = session(phase="done")
    assert Tags.of(done) == Tags("done", "unverified")
    assert Tags.of(done).text() == "unverified draft"
    done.data["verification"] = {"status": "verified"}
    assert Tags.of(done).word == "verified"
    working = session(phase="working")
    assert Tags.of(working, RunState("interrupted")).text() == "working (interrupted)"
    elsewhere = Tags.of(working, RunState("running elsewhere", 12))
    assert elsewhere.text() == "working (running in another process, pid 12)"
    assert Tags.of(working, RunState("running elsewhere")).note.endswith("pid unknown")
    assert elsewhere.without_run() == Tags("working")


def test_a_filter_is_parsed_matched_and_written_back() -> None:
    assert Tags.parse("") == Tags() and Tags.parse(None).phase_or_none is None
    assert Tags.parse("working") == Tags("working")
    both = Tags.parse("phase:done status:verified")
    assert both.matches(Tags("done", "verified", "running")) and not both.matches(Tags("done"))
    assert Tags().matches(Tags("failed"))
    assert Tags.parse(both.filter_text()) == both
    assert [t.phase for t in Tags.choices()][:2] == ["", "planning"]
    for wrong in ("sleeping", "colour:red", "run:sleeping", "working phase:done"):
        with pytest.raises(ValueError):
            Tags.parse(wrong)
