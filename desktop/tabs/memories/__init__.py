"""The personal memory assistant's tab (PA1–PA5): a chat beside the memories it keeps.

Left: the conversation (``transcript``, ``chat_input``, ``send``), a "Remember" button on
every message, and the facts proposed from the conversation waiting for a yes. Right: the
memories used by the last answer with their similarity (``memories_used``), and the memory
panel: search, add, edit, delete with undo, and — when the embedder changed — why recall is
limited and a cancellable "Re-embed all".

The parts: :mod:`~desktop.tabs.memories.tab` (the tab, its chat and its jobs),
:mod:`~desktop.tabs.memories.panel` (the right column), :mod:`~desktop.tabs.memories.bubble`
(one message), :mod:`~desktop.tabs.memories.proposals` (a proposed memory). Every store and
model call runs through the worker pool; these modules only draw.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from backends.memories import MemoryAssistant
from backends.services import Lazy, ModelChoices
from desktop.tabs.memories.bubble import CITE_SCHEME, MessageBubble
from desktop.tabs.memories.panel import MEMORY_TEXT_ROLE, MemoryPanel
from desktop.tabs.memories.proposals import ProposalRow
from desktop.tabs.memories.tab import LIST_LIMIT, SEARCH_DELAY_MS, MemoriesTab
from desktop.workers import WorkerPool

__all__ = [
    "CITE_SCHEME",
    "LIST_LIMIT",
    "MEMORY_TEXT_ROLE",
    "SEARCH_DELAY_MS",
    "MemoriesTab",
    "MemoryPanel",
    "MessageBubble",
    "ProposalRow",
    "create",
]


def create(
    service: Lazy[object], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    return MemoriesTab(service.narrow(MemoryAssistant), models, workers, parent)
