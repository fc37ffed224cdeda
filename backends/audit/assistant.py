"""The audit log, a shared part declared once (see :mod:`backends.assistants`): no tab and
no model of its own; the tutor is built with it."""

from backends.assistants import Assistant, StoreCheck
from backends.i18n import N_

PART = Assistant(
    name="audit",
    title=N_("Audit log"),
    build="backends.audit.service:build",
    data="backends.audit.data:DATA",
    migrations="backends.audit.migration:STEPS",
    commands="backends.audit.cli:add_commands",
    checks=(StoreCheck(N_("audit log"), "audit log"),),
)
