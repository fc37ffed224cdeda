"""The multi-agent assistant, declared once (see :mod:`backends.assistants`)."""

from backends.assistants import Assistant
from backends.i18n import N_

ASSISTANT = Assistant(
    name="multiagent",
    title=N_("Multi-agent"),
    spec="MA1–MA11",
    build="backends.multiagent.service:build",
    data="backends.multiagent.data:DATA",
    commands="backends.multiagent.cli:add_commands",
)
