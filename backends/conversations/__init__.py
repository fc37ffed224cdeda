"""The conversation agent (SPEC section 3, CA1–CA6): JSON files as the source of truth, an
optional Fernet-encrypted history, a SQLite index and a derived vector index (the vector role
of the storage layer, :mod:`backends.stores.vectors`).

The public surface — what the desktop and the CLI use: :class:`ConversationAgent` (built by
the composition layer from its declaration, :mod:`.assistant`: ``services.get("conversations",
ConversationAgent)``), the value types it returns, its errors, the key helpers the key dialog
needs, and the import/export functions.
"""

from backends.conversations.choices import ModelChoice
from backends.conversations.data import DATA
from backends.conversations.errors import (
    ConversationError,
    ConversationNotFoundError,
    EmbedderMismatchError,
    InvalidKeyError,
    error_text,
)
from backends.conversations.files import Conversation
from backends.conversations.importers import export as export_conversations
from backends.conversations.importers import import_file, write_private
from backends.conversations.index import IndexRow
from backends.conversations.keychange import EncryptionStatus, KeyOutcome, NewHistory
from backends.conversations.keys import (
    FERNET_SHAPE,
    MIN_PASSPHRASE,
    NoPassphraseError,
    WrongPassphraseError,
    generate_key,
    key_id,
    normalise_passphrase,
    validate_key,
)
from backends.conversations.search import SearchHit
from backends.conversations.service import ConversationAgent
from backends.conversations.turn import TurnResult

__all__ = [
    "DATA",
    "FERNET_SHAPE",
    "MIN_PASSPHRASE",
    "Conversation",
    "ConversationAgent",
    "ConversationError",
    "ConversationNotFoundError",
    "EmbedderMismatchError",
    "EncryptionStatus",
    "IndexRow",
    "InvalidKeyError",
    "KeyOutcome",
    "ModelChoice",
    "NewHistory",
    "NoPassphraseError",
    "SearchHit",
    "TurnResult",
    "WrongPassphraseError",
    "error_text",
    "export_conversations",
    "generate_key",
    "import_file",
    "key_id",
    "normalise_passphrase",
    "validate_key",
    "write_private",
]
