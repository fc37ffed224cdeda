"""The self-test's turn in each assistant: one real turn through its service, checked end to
end (``custodia --self-test``). Each is named by its tab's entry (:data:`desktop.tabs.TABS`),
so a new assistant brings its own; each runs in the window's worker pool and raises
:class:`StepFailed` saying what was expected and what was found.

Qt-free: a turn talks to the services alone.
"""

from __future__ import annotations

from backends.audit import AuditService
from backends.conversations import ConversationAgent
from backends.memories import MemoryAssistant
from backends.multiagent import MultiAgentService
from backends.progress import Progress
from backends.services import Services
from backends.tutor import TutorService

#: The tutor's question, and a word the passages retrieved for it must contain.
TUTOR_QUESTION = "What are the first-line treatments of hypertension?"
TUTOR_TOPIC = "hypertension"


class StepFailed(Exception):
    """A check did not hold; the message says what was expected and what was found."""


def multiagent(services: Services, progress: Progress) -> str:
    """A small coding task, carried to ``done``."""
    task = "Write a Python function that adds two numbers, with a test."
    session = services.get("multiagent", MultiAgentService).ask(task, progress)
    if session.phase != "done":
        raise StepFailed(f"session {session.session_id} ended in phase {session.phase!r}")
    return f"session {session.session_id[:8]} done after {len(session.events)} events"


def memories(services: Services, progress: Progress) -> str:
    """A fact remembered, found by search, and recalled in the next turn."""
    fact = "My favourite tea is rooibos"
    assistant = services.get("memories", MemoryAssistant)
    turn = assistant.turn(f"Remember that {fact}.")
    hits = assistant.search("favourite tea rooibos", k=3)
    answer = assistant.turn("Which tea is my favourite, rooibos?")
    if turn.remembered is None or not turn.remembered.stored:
        raise StepFailed(f"'remember that' did not store the fact: {turn.answer!r}")
    if not hits or hits[0].text.rstrip(".") != fact:
        raise StepFailed(f"search did not find the fact first: {[h.text for h in hits]}")
    if not any(h.text.rstrip(".") == fact for h in answer.used):
        raise StepFailed(f"the next turn did not recall it (threshold {answer.threshold})")
    return f"remembered, found (similarity {hits[0].similarity:.2f}) and recalled in a turn"


def conversations(services: Services, progress: Progress) -> str:
    """A message answered, then found again by search."""
    message = "How often should a cactus be watered in winter?"
    agent = services.get("conversations", ConversationAgent)
    result = agent.ask(message)
    hits = agent.search("cactus watered winter", k=5)
    if not result.answer.strip():
        raise StepFailed("the conversation turn produced no answer")
    if not any(h.conversation_id == result.conversation_id for h in hits):
        raise StepFailed("search did not find the message just sent")
    return f"answered and found by search ({len(hits)} hit(s))"


def tutor(services: Services, progress: Progress) -> str:
    """A question answered from the shipped notes, with citations, audited exactly once."""
    audit = services.get("audit", AuditService)
    before = audit.verify().records
    turn = services.get("tutor", TutorService).ask(TUTOR_QUESTION, user="selftest")
    after = audit.verify().records
    passages = list(turn.passages)
    if not passages:
        raise StepFailed("the tutor retrieved no passage from the shipped knowledge base")
    if not any(TUTOR_TOPIC in (p.title + p.text).lower() for p in passages):
        titles = ", ".join(p.title for p in passages)
        raise StepFailed(f"no passage about {TUTOR_TOPIC!r} among: {titles}")
    numbers = {p.number for p in passages}
    if not turn.cited or not set(turn.cited) <= numbers:
        raise StepFailed(f"the answer cites {turn.cited}, passages are {sorted(numbers)}")
    if after != before + 1:
        raise StepFailed(f"the turn left {after - before} audit records, expected exactly 1")
    cited = ", ".join(p.title for p in passages if p.number in turn.cited)
    return (
        f"{len(passages)} passages, cites [{', '.join(map(str, turn.cited))}] ({cited}); "
        f"audit record #{turn.audit_seq}"
    )
