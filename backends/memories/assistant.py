"""The memory assistant, declared once (see :mod:`backends.assistants`)."""

from backends.assistants import Assistant
from backends.i18n import N_

ASSISTANT = Assistant(
    name="memories",
    title=N_("Memories"),
    spec="PA1–PA5",
    build="backends.memories.service:build",
    data="backends.memories.data:DATA",
    migrations="backends.memories.migration:STEPS",
    commands="backends.memories.cli:add_commands",
    label=N_("memories"),
)
