"""What every panel of the conversations tab reads: the one shared, Qt-free state.

The panels each own their widgets; the few facts more than one of them needs (which
conversation is open, whether an answer is being written, the encryption status) live here
once, written by the panel that knows them and read by the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from backends.conversations import EncryptionStatus


@dataclass
class TabState:
    """The tab's shared facts (see the module doc)."""

    #: the first listing arrived: Send and the model list work
    ready: bool = False
    #: the conversation open in the chat (None for a new one until its first message is saved)
    current_id: str | None = None
    #: the last encryption status listed
    status: EncryptionStatus | None = None
    #: an answer is being written (the list, the search hits and New wait for it)
    chatting: bool = False
    #: the conversation being answered (None until a new one's first message is saved)
    answering: str | None = None
    #: confirmed for deletion while its answer streamed: deleted once the answer stopped
    delete_after_chat: str | None = None

    def is_answering(self, conversation_id: str) -> bool:
        """Whether ``conversation_id`` is the one an answer is being written into."""
        return self.chatting and conversation_id in (self.answering, self.current_id)
