"""The memory assistant's data on the way to the server profile (``custodia migrate``): its
step, declared beside its data (:mod:`backends.memories.data`).

The memories stay SQLite (PA1: the memory table *is* SQLite; one user's memories gain nothing
from a server, and WAL already lets several processes share it).
"""

from __future__ import annotations

from backends.i18n import N_, _
from backends.memories.service import STORE_FILE
from backends.migrate_steps import STAYS, Migratable, MigrationRun, Step


def _plan_memories(run: MigrationRun, declared: Migratable) -> Step:
    path = run.config.path(STORE_FILE)
    return Step(
        declared.step,
        STAYS,
        f"SQLite {path}",
        f"SQLite {path}",
        detail=_(
            "the memory table is SQLite in every profile (PA1); WAL shares it between "
            "processes, and one user's memories gain nothing from a server"
        ),
    )


#: the memory assistant's steps
STEPS: tuple[Migratable, ...] = (Migratable(N_("memories"), "memories", "", _plan_memories),)
