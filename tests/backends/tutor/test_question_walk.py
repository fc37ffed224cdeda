"""The walk of a tutor question goes down and comes back at most once per layer (issue 26).

Before the split, the service itself called into ``backends/grounding.py`` at every step
of a turn and came back from each call (34 times in one turn with a checked draft, measured
with this test's :func:`walk`; and grounding called back into the tutor 66 times, through the
callbacks it was handed). Now the façade (``backends.tutor.service``) calls retrieval once,
then the answer once (which calls the coverage rule and the support check in
``backends.grounding``), then the audit log once — and nothing below calls back up.

How the check works: ``sys.setprofile`` sees every Python-level call and return while one
real ``TutorService.ask`` runs (the tutor the other tests build: a small knowledge base, the
hashing embedder, a scripted chat model, a real SQLite audit log). Each frame is given a
*layer* by the module its code runs in (``frame.f_globals["__name__"]``, so the ``__init__``
a dataclass generates counts as its module's): a tutor module or ``backends.grounding`` by its
own name, anything else by its package (``backends.audit``, ``numpy``, ...). Then:

- *back up*: a frame of another layer returning into a façade frame (a generator's yield is a
  return too) is control coming back to the façade from that layer; it may happen at most
  once per layer, and exactly once from retrieval and from the answer, retrieval first;
- *called up*: a façade function called by a frame of a lower layer (anything but the test
  itself) is the façade re-entered from below: never;
- grounding (the support check) never calls a tutor module, and the façade never calls it.

:func:`test_the_check_sees_a_walk_that_comes_back` shows the measure is not blind: two calls
of a façade method come back twice from the same layer.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import pytest

from backends.models.chat import ScriptedChat
from backends.tutor.service import GENERATED, NOT_COVERED, Turn, TutorService
from tests.backends.tutor.conftest import TutorFactory

FACADE = "backends.tutor.service"
GROUNDING = "backends.grounding"
RETRIEVAL = "backends.tutor.retrieval"
ANSWER = "backends.tutor.answer"
TEST = __name__


def layer(frame: FrameType | None) -> str:
    """The layer a frame runs in: a tutor module or grounding by name, else its package."""
    if frame is None:
        return ""
    module = str(frame.f_globals.get("__name__", "?"))
    if module.startswith("backends.tutor.") or module in (GROUNDING, TEST):
        return module
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "backends" else parts[0]


@dataclass
class Walk:
    """What one profiled call did at the façade."""

    #: the layer of each frame that returned into a façade frame, in order
    back_up: list[str] = field(default_factory=list)
    #: (caller's layer, façade function) for each façade function a lower layer called
    called_up: list[tuple[str, str]] = field(default_factory=list)
    #: (grounding function, tutor function) for each tutor function grounding called
    grounding_up: list[tuple[str, str]] = field(default_factory=list)
    #: the layers the façade called directly, in order (one entry per call)
    down: list[str] = field(default_factory=list)

    def returns_by_layer(self) -> Counter[str]:
        return Counter(self.back_up)


def walk(call: Callable[[], Any]) -> tuple[Any, Walk]:
    """``call()``'s result and its walk at the façade (see the module doc)."""
    seen = Walk()

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return"):
            return  # c_call / c_return / c_exception: builtins hold no layer of ours
        here, caller = layer(frame), layer(frame.f_back)
        if event == "call":
            if here == FACADE and caller not in (FACADE, TEST):
                seen.called_up.append((caller, frame.f_code.co_name))
            if caller == FACADE and here != FACADE:
                seen.down.append(here)
            if caller == GROUNDING and here.startswith("backends.tutor."):
                seen.grounding_up.append((frame.f_back.f_code.co_name, frame.f_code.co_name))  # type: ignore[union-attr]
        elif caller == FACADE and here != FACADE:
            seen.back_up.append(here)

    collecting = gc.isenabled()
    gc.disable()  # a finalizer runs in whatever frame the collector interrupts: not the walk
    sys.setprofile(profile)
    try:
        result = call()
    finally:
        sys.setprofile(None)
        if collecting:
            gc.enable()
    return result, seen


def assert_goes_down(seen: Walk) -> None:
    returns = seen.returns_by_layer()
    assert seen.called_up == [], f"the façade was called from below: {seen.called_up}"
    assert seen.grounding_up == [], f"grounding called back up: {seen.grounding_up}"
    assert GROUNDING not in seen.down, f"the façade called grounding itself: {seen.down}"
    again = {name: count for name, count in returns.items() if count > 1}
    assert again == {}, f"came back to the façade more than once from {again}: {seen.back_up}"
    assert returns[RETRIEVAL] == 1 and returns[ANSWER] == 1, seen.back_up
    assert seen.back_up.index(RETRIEVAL) < seen.back_up.index(ANSWER), seen.back_up


QUESTION = "Which blood test is used to monitor warfarin therapy?"


@pytest.mark.parametrize(
    ("question", "kwargs", "mode"),
    [
        # the model's draft is asked for, checked sentence by sentence and shown
        (QUESTION, {"draft": True}, GENERATED),
        # the composed (quoted) answer, no draft asked for
        (QUESTION, {"draft": False}, None),
        # a question the notes do not cover: refused, the model not asked
        ("How is acute appendicitis treated?", {}, NOT_COVERED),
        # Spanish: translated into the notes' words before the searches
        ("¿Cómo se controla la warfarina?", {}, None),
        # a follow-up read with the thread's earlier question (two retrievals, one call)
        ("And in children?", {"earlier": "What is the first treatment of anaphylaxis?"}, None),
    ],
)
def test_a_question_walks_down_once_per_layer(
    make_tutor: TutorFactory, question: str, kwargs: dict[str, Any], mode: str | None
) -> None:
    chat = ScriptedChat(replies=["The INR is mainly used for monitoring warfarin [2] [9]."])
    tutor = make_tutor(chat)
    tutor.prepare()
    retrieved: list[object] = []
    turn, seen = walk(lambda: tutor.ask(question, "ana", on_retrieved=retrieved.append, **kwargs))
    assert isinstance(turn, Turn) and turn.audit_seq >= 1 and len(retrieved) == 1
    assert turn.grounding is not None
    if mode is not None:
        assert turn.grounding.mode == mode
    assert_goes_down(seen)


def test_the_check_sees_a_walk_that_comes_back(tutor: TutorService) -> None:
    """Two calls of a façade method from the test come back twice from the index."""

    def twice() -> None:
        tutor.status()
        tutor.status()

    _, seen = walk(twice)
    assert seen.returns_by_layer()["backends.tutor.indexing"] == 2
    with pytest.raises(AssertionError, match="more than once"):
        assert_goes_down(seen)
