"""The models folder, a shared part declared once (see :mod:`backends.assistants`): its
storage map row and the ``custodia models`` commands."""

from backends.assistants import Assistant
from backends.i18n import N_

PART = Assistant(
    name="models",
    title=N_("Models"),
    data="backends.model_files.data:DATA",
    commands="backends.model_files.cli:add_commands",
)
