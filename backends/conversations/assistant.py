"""The conversation agent, declared once (see :mod:`backends.assistants`)."""

from backends.assistants import Assistant, StoreCheck
from backends.i18n import N_

ASSISTANT = Assistant(
    name="conversations",
    title=N_("Conversations"),
    spec="CA1–CA6",
    build="backends.conversations.service:build",
    data="backends.conversations.data:DATA",
    migrations="backends.conversations.migration:STEPS",
    commands="backends.conversations.cli:add_commands",
    checks=(StoreCheck(N_("vector index"), "conversation vectors"),),
    label=N_("conversations"),
)
