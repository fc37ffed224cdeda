"""The running parts of a :class:`~backends.services.Services`, for tests and benchmarks:
``services.get(name, kind)`` under the names the tests used before the assistants were built
by constructor injection (issue 26)."""

from __future__ import annotations

from backends.audit import AuditService
from backends.conversations import ConversationAgent
from backends.memories import MemoryAssistant
from backends.multiagent import MultiAgentService
from backends.services import Services
from backends.tutor import TutorService


def audit_service(services: Services) -> AuditService:
    return services.get("audit", AuditService)


def memories_service(services: Services) -> MemoryAssistant:
    return services.get("memories", MemoryAssistant)


def conversations_service(services: Services) -> ConversationAgent:
    return services.get("conversations", ConversationAgent)


def multiagent_service(services: Services) -> MultiAgentService:
    return services.get("multiagent", MultiAgentService)


def tutor_service(services: Services) -> TutorService:
    return services.get("tutor", TutorService)
