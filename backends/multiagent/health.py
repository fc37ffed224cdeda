"""Layer health: ``ok`` or the reason a layer is degraded (MA6), shown in the tab and CLI."""

from __future__ import annotations

import logging
import time

from backends import failures
from backends.i18n import N_, _, named

log = logging.getLogger("backends.multiagent")

OK = "ok"
DEGRADED = "degraded: "
#: the layers' names (before their engine in brackets) and states, as people read them
LAYER_WORDS = (
    N_("sessions L1"), N_("sessions L2"), N_("sessions SQLite"), N_("tickets"),
    N_("live feed"), N_("semantic memory"), N_("ok"), N_("not opened yet"),
)  # fmt: skip


def layer_text(layer: str, status: str) -> str:
    """``sesiones L2 (redis): degradada: …`` — a layer and its state in the user's words
    (the health dict itself keeps them as they are: ``--json``, the tab's checks)."""
    if status.startswith(DEGRADED):
        shown = _("degraded: {reason}").format(reason=status.removeprefix(DEGRADED))
    else:
        shown = _(status)
    return f"{named(layer)}: {shown}"


class LayerState:
    """``ok`` or why it failed; logs each change once, not every failure.

    After a failure the layer is skipped for ``retry_after`` seconds, so a server that
    times out does not cost a timeout on every save; then it is tried again.
    """

    def __init__(self, name: str, retry_after: float = 5.0) -> None:
        self.name = name
        self.reason = ""
        self.retry_after = retry_after
        self._failed_at = 0.0

    @property
    def ok(self) -> bool:
        return not self.reason

    @property
    def status(self) -> str:
        return OK if self.ok else self.reason

    def usable(self) -> bool:
        return self.ok or time.monotonic() - self._failed_at >= self.retry_after

    def fail(self, err: BaseException | str) -> None:
        reason = f"{DEGRADED}{err}"
        if reason != self.reason:
            said = failures.explain(err) if isinstance(err, BaseException) else err
            log.warning(_("%s degraded, going on without it: %s"), named(self.name), said)
        self.reason = reason
        self._failed_at = time.monotonic()

    def recover(self) -> None:
        if self.reason:
            log.warning(_("%s is back"), named(self.name))
        self.reason = ""
