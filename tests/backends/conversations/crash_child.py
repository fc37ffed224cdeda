"""Child process for the kill -9 tests: writes conversations (or rotates the key) forever.

``python -m tests.backends.conversations.crash_child write|rotate HOME`` with the keys in
``CRASH_KEY`` (and ``CRASH_NEW_KEY`` for ``rotate``). Prints ``ready`` once the agent started
(so a reconciliation after the previous kill has run); the parent then kills it mid-work.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

from backends.config import Config
from backends.conversations.service import ConversationAgent
from backends.errors import StoreUnavailableError
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.models.registry import ChatChoice


def _no_vectors(config: object, embedder: object, fresh: bool) -> object:
    raise StoreUnavailableError("vectors are not part of this test")


def main() -> None:
    mode, home = sys.argv[1], Path(sys.argv[2])
    config = Config(
        home=home,
        embedder="hashing",
        chat_model="scripted",
        conversations_key=os.environ["CRASH_KEY"],
    )
    embedder = HashingEmbedder(32)
    chat = ChatChoice(ScriptedChat(replies=["a reply long enough to take a few writes " * 8]))
    agent = ConversationAgent(
        config,
        embedder=lambda: embedder,
        chat=lambda: chat,
        vectors=_no_vectors,  # type: ignore[arg-type]
        use_keyring=False,
    )
    agent.start()
    print("ready", flush=True)
    if mode == "rotate":
        agent.rotate_key(os.environ["CRASH_NEW_KEY"])
        print("rotated", flush=True)
        return
    rng = random.Random()
    ids = [row.id for row in agent.conversations() if row.readable]
    turn = 0
    while True:
        turn += 1
        if ids and rng.random() < 0.7:
            agent.ask(f"turn {turn} " + "words " * rng.randint(1, 200), rng.choice(ids))
        else:
            ids.append(agent.ask(f"new conversation at turn {turn}").conversation_id)
        if rng.random() < 0.1:
            agent.rename(rng.choice(ids), f"renamed at turn {turn}")


if __name__ == "__main__":
    import logging

    logging.disable(logging.WARNING)
    main()
