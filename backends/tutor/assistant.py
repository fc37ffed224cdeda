"""The clinical tutor, declared once (see :mod:`backends.assistants`): built with the audit
service (every answer is recorded); when a person is forgotten it tells what of theirs it
still holds (their own imported notes)."""

from backends.assistants import Assistant, StoreCheck
from backends.i18n import N_

ASSISTANT = Assistant(
    name="tutor",
    title=N_("Clinical tutor"),
    spec="CT1–CT8",
    build="backends.tutor.service:build",
    data="backends.tutor.data:DATA",
    migrations="backends.tutor.migration:STEPS",
    commands="backends.tutor.cli:add_commands",
    forget="backends.tutor.forgetting:remaining_notes",
    needs=("audit",),
    checks=(StoreCheck(N_("graph"), "graph"),),
    label=N_("clinical tutor"),
)
