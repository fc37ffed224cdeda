"""The conversation agent (SPEC section 3, CA1–CA6): JSON files as the source of truth, an
optional Fernet-encrypted history, a SQLite index and a derived Chroma vector index.

The desktop tab and the CLI use :func:`get_service` and the :class:`ConversationAgent` only.
"""

from backends.conversations.agent import ConversationAgent, get_service

__all__ = ["ConversationAgent", "get_service"]
