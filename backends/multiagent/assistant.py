"""The multi-agent assistant, declared once (see :mod:`backends.assistants`)."""

from backends.assistants import Assistant, Context, HealthCheck, StoreCheck
from backends.i18n import N_

ASSISTANT = Assistant(
    name="multiagent",
    title=N_("Multi-agent"),
    spec="MA1–MA11",
    build="backends.multiagent.service:build",
    data="backends.multiagent.data:DATA",
    migrations="backends.multiagent.migration:STEPS",
    commands="backends.multiagent.cli:add_commands",
    checks=(
        StoreCheck(N_("sessions/tickets/feed"), "tickets"),
        StoreCheck(N_("semantic memory"), "semantic memory"),
    ),
    health=HealthCheck(
        N_("multi-agent layers"), "sessions", "backends.multiagent.assistant:layers"
    ),
    label=N_("multi-agent"),
)


def layers(context: Context) -> dict[str, str]:
    """MA6: the state of each session/ticket/feed/memory layer, each touched once."""
    from backends.multiagent.service import MultiAgentService  # noqa: PLC0415 — lazy: heavy

    return dict(context.get("multiagent", MultiAgentService).probe())
