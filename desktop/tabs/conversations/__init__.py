"""The Conversations tab (SPEC section 3): chat with a model picker, searchable history.

Object names (docs/TESTING.md): ``conversations`` (the tab), ``conversation_list``,
``new_conversation``, ``rename_conversation``, ``delete_conversation`` (asks
``confirm_delete``), ``chat_input``, ``send``, ``stop_chat``, ``transcript``, ``model_picker``,
``history_search``, ``search_results``, ``encryption_status``, ``set_key`` (opens
``key_dialog``: ``mode_passphrase``/``mode_key``, ``passphrase_input``, ``passphrase_confirm``,
``new_passphrase``, ``key_input``, ``generate_key``, ``copy_key``, ``key_notice``,
``key_error``, ``key_progress``), ``new_history`` (opens ``new_history_dialog``:
``new_history_encrypted``, ``new_history_clear``), ``import_conversations``,
``export_conversations``, ``rebuild_index``, ``index_progress``, ``tab_status``,
``tab_activity`` (what a wait longer than 200 ms is for).

A package of panels, one idea each: :mod:`.tab` composes them and passes requests between
them; :mod:`.encryption` (with :mod:`.key_dialog`), :mod:`.history` (list and search),
:mod:`.transfer` (import, export, the search index) and :mod:`.chat` (with
:mod:`.transcript`, drawn by the shared :mod:`desktop.markdown`) own their widgets, jobs and
slots; :mod:`.jobs` runs every job and says what it waits for; :mod:`.state` holds the few
facts the panels share; :mod:`.results` what the jobs hand back.

Every backend call runs in the worker pool, wired declaratively; results come back to
``_on_<signal>`` slots.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from backends.conversations import ConversationAgent
from backends.services import Lazy, ModelChoices
from desktop.tabs.conversations.key_dialog import KeyDialog, key_details
from desktop.tabs.conversations.tab import ConversationsTab
from desktop.tabs.conversations.transfer import export_target
from desktop.workers import WorkerPool

__all__ = ["ConversationsTab", "KeyDialog", "create", "export_target", "key_details"]


def create(
    service: Lazy[object], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    """The tab; ``models`` is not used: the agent lists and loads its own models."""
    return ConversationsTab(service.narrow(ConversationAgent), workers, parent)
