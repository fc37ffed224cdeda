"""One scripted user journey, run the same way on any profile, and its comparable outcome.

The journey: a multi-agent task, a remembered fact recalled later, two conversations and a
search over them, an audited tutor turn, and verification of the audit chain. The outcome
drops what legitimately differs between runs (ids, times, hashes) and keeps everything the
user sees, so two profiles can be compared with ``==``.
"""

from __future__ import annotations

from typing import Any

from backends.services import Services
from tests.parts import audit_service, conversations_service, memories_service, multiagent_service

TASK = "Write a python function that parses CSV files"
FACT = "Remember that I am allergic to penicillin"
RECALL = "What am I allergic to?"
CHATS = ("How do I treat a penicillin allergy?", "Tell me about CSV parsing")
SEARCH = "penicillin allergy"
TUTOR_USER = "student-7"
TUTOR_QUESTION = "What are the first-line treatments for community-acquired pneumonia?"


def tutor_available() -> bool:
    try:
        from tests.parts import tutor_service as get_service  # noqa: F401
    except ImportError:
        return False
    return True


def _tutor_turn(services: Services) -> dict[str, Any]:
    """The clinical tutor's audited turn (the tutor appends its own audit record)."""
    from tests.parts import tutor_service as get_service

    tutor = get_service(services)
    tutor.prepare()
    turn = tutor.ask(TUTOR_QUESTION, user=TUTOR_USER)
    return {
        "answer": turn.answer,
        "cited": [p.chunk_id for p in turn.passages],
        "methods": sorted({m for p in turn.passages for m in p.methods}),
        "degraded": list(turn.retrieval.degraded_methods),
    }


def run_journey(services: Services) -> dict[str, Any]:
    """Do what a user does, through the services the app uses; return what they saw."""
    out: dict[str, Any] = {}

    session = multiagent_service(services).ask(TASK)
    out["task"] = {
        "phase": session.phase,
        "events": [e["kind"] for e in session.events],
        "steps": [(s["expert"], s["result"]) for s in session.data["steps"]],
        "review": session.data["review"],
    }

    memories = memories_service(services)
    stored = memories.turn(FACT)
    recalled = memories.turn(RECALL)
    out["memory"] = {
        "stored": stored.remembered.status if stored.remembered else None,
        "answer": recalled.answer,
        "used": [(h.text, round(h.similarity, 4)) for h in recalled.used],
    }

    agent = conversations_service(services)
    agent.start()
    answers = [agent.ask(message).answer for message in CHATS]
    hits = agent.search(SEARCH, k=3)
    out["conversations"] = {
        "answers": answers,
        "search": [(h.role, h.index, h.text, round(h.score, 4)) for h in hits],
    }

    if tutor_available():
        out["tutor"] = _tutor_turn(services)
    else:  # until the tutor lands: the turn's audit record, appended the same way
        audit_service(services).append(
            "tutor.turn", person=TUTOR_USER, personal={"question": TUTOR_QUESTION}, cited=0
        )

    audit = audit_service(services)
    result = audit.verify()
    entries = list(audit.entries())
    out["audit"] = {
        "ok": result.ok,
        "records": result.records,
        "events": [e.event_type for e in entries],
        "readable": [audit.reveal(e).status for e in entries],
    }
    return out
