"""The memory assistant (SPEC PA1–PA5): remembers what the user tells it, answers from it.

The public surface — what the desktop and the CLI use: :class:`MemoryAssistant` (built by
:func:`backends.memories.service.build` from what the composition layer hands it) and the
value types it returns. Its store is the memory-store role of the storage layer
(:mod:`backends.stores.memories`).
"""

from backends.memories.data import DATA
from backends.memories.outcomes import (
    FoundMemory,
    MemoryStatus,
    Proposal,
    RememberOutcome,
    TurnResult,
    Undo,
)
from backends.memories.service import MemoryAssistant
from backends.memories.tuning import AssistantSettings
from backends.stores.memories import Hit, MemoryNotFoundError

__all__ = [
    "DATA",
    "AssistantSettings",
    "FoundMemory",
    "Hit",
    "MemoryAssistant",
    "MemoryNotFoundError",
    "MemoryStatus",
    "Proposal",
    "RememberOutcome",
    "TurnResult",
    "Undo",
]
