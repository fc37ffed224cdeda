"""Issue 24: what the team's semantic memory hands a coder — only code that passed its check.

A failed draft stored as an example came back as the next task's code: session 1's broken
``len(str)`` was "retrieved from semantic memory" by session 2's coder, which wrote it again.
"""

from __future__ import annotations

from typing import Any

from backends.models.chat import ScriptedChat
from backends.multiagent.team import EXPERTS
from backends.multiagent.verify import FAILED, UNVERIFIED, VERIFIED
from backends.stores.vectors import MemoryItem
from tests.backends.multiagent.conftest import MakeService
from tests.backends.multiagent.test_verify import BAD, FAST, GOOD, ONE_CODER_STEP, TESTS

BROKEN = "```python\ndef add(a, b):\n    return len(str) - a\n```"


def _coder_contexts(chat: ScriptedChat) -> list[str]:
    return [c for p in chat.calls if p.system == EXPERTS["coder"].system for c in p.context]


def _service(make_service: MakeService, replies: list[str]) -> tuple[Any, ScriptedChat]:
    chat = ScriptedChat(replies=replies)
    service = make_service(chat=chat)
    service.coordinator.limits = FAST
    return service, chat


def test_a_failed_draft_is_stored_with_its_status_and_never_shown_to_a_coder(
    make_service: MakeService,
) -> None:
    service, chat = _service(make_service, [ONE_CODER_STEP, BROKEN, BROKEN, "Review."])
    first = service.ask("Write add(a, b) in Python", tests=TESTS)
    assert first.data["verification"]["status"] == FAILED
    memory = service.memory()
    assert memory.search("code_patterns", "add", limit=20, session=first.session_id) == []
    coder = [
        h
        for h in memory.search("agent_results", "add", limit=20, session=first.session_id)
        if h.expert == "coder"
    ]
    assert coder and {h.payload["status"] for h in coder} == {FAILED}
    review = memory.search("agent_results", "Review", limit=20, session=first.session_id)
    assert {h.payload["status"] for h in review if h.expert == "reviewer"} == {FAILED}

    # a second, different task: its coder is shown none of it
    chat.replies[:] = [ONE_CODER_STEP, GOOD, "Review."]
    chat.calls.clear()
    second = service.ask("Write add(a, b) in Python, with tests", tests=TESTS)
    assert second.data["verification"]["status"] == VERIFIED
    assert chat.calls[1].system == EXPERTS["coder"].system
    assert not any("len(str)" in c for c in _coder_contexts(chat))


def test_verified_code_is_a_coders_example_and_unverified_or_old_items_are_not(
    make_service: MakeService,
) -> None:
    service, chat = _service(make_service, [ONE_CODER_STEP, BAD, GOOD, "Fixed."])
    first = service.ask("Write add(a, b) in Python", tests=TESTS)
    memory = service.memory()
    patterns = memory.search("code_patterns", "add", limit=20, session=first.session_id)
    assert [(h.text, h.payload["status"]) for h in patterns] == [(GOOD, VERIFIED)]
    statuses = {
        h.text: h.payload["status"]
        for h in memory.search("agent_results", "add", limit=20, session=first.session_id)
        if h.expert == "coder"
    }
    assert statuses == {BAD: FAILED, GOOD: VERIFIED}
    # items from an earlier release carry no status: unverified, never an example
    old = "```python\ndef add(a, b):\n    return a * b  # from an old release\n```"
    memory.add("code_patterns", MemoryItem(old, session="old", expert="coder", ticket="t"))
    memory.add(
        "agent_results",
        MemoryItem(old, session="old", expert="coder", ticket="t", extra={"status": UNVERIFIED}),
    )

    chat.replies[:] = [ONE_CODER_STEP, GOOD, "Review."]
    chat.calls.clear()
    service.ask("Write add(a, b) in Python", tests=TESTS)
    shown = _coder_contexts(chat)
    assert any("return a + b" in c and "· verified]" in c for c in shown)
    assert not any("old release" in c or "a - b" in c for c in shown)


# -- the reviewer's words (issue 24: "Check: unverified draft — verified test for …") ------------
ECHOING_REVIEW = (
    "- [coder] step 2 (Write add(a, b) in Python): ```python\n"
    "def add(a, b):\n    return len(str)\n```\n"
    "  Check: unverified draft — verified test for this function in a Python library.\n"
    "The function adds two numbers. All tests pass."
)


def _answer(result: str) -> str:
    """The "## Answer …" section of a result."""
    start = result.index("## Answer")
    return result[start : result.index("## Steps", start)]


def test_the_reviewers_words_never_echo_the_prompt_or_claim_another_check(
    make_service: MakeService,
) -> None:
    service, _chat = _service(make_service, [ONE_CODER_STEP, BAD, BAD, ECHOING_REVIEW])
    session = service.ask("Write add(a, b) in Python", tests=TESTS)
    assert session.data["verification"]["status"] == FAILED
    answer = _answer(session.data["result"])
    shown = answer.split("*Withheld from the reviewer's words:*")[0]
    assert "The function adds two numbers." in shown
    for echoed in ("[coder] step", "Check:", "verified test", "All tests pass", "len(str)"):
        assert echoed not in shown, echoed
    withheld = answer.split("*Withheld from the reviewer's words:*")[1]
    assert "it copies the prompt (“[coder] step 2”)" in withheld
    assert "it copies the prompt (“Check:”)" in withheld
    assert (
        "~~All tests pass.~~ — it claims the code is verified; the check found: "
        "failed verification" in withheld
    )
    assert "code no step wrote" in withheld
    assert session.data["review"] == ECHOING_REVIEW  # the record keeps what the model said


def test_a_review_that_matches_the_record_is_shown_whole(make_service: MakeService) -> None:
    review = "The add function is verified: its tests pass.\n" + GOOD.split("\n", 1)[1]
    service, _chat = _service(make_service, [ONE_CODER_STEP, GOOD, review])
    session = service.ask("Write add(a, b) in Python", tests=TESTS)
    assert session.data["verification"]["status"] == VERIFIED
    answer = _answer(session.data["result"])
    assert "Withheld" not in answer
    assert "The add function is verified: its tests pass." in answer
    assert "```python\ndef add(a, b):\n    return a + b\n```" in answer
