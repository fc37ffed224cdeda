"""The team's words as the user reads them (issue 27): its experts, the kinds of its feed's
events, a session's phases and states, each in the installed language.

What is stored keeps its own names ("coder", "session_started", "done": the session's data,
the feed, ``--json``); these are only what a line on the terminal shows. English shows the
stored names as they are. The window says the same words through Qt's catalogue
(``desktop/tabs/multiagent/words.py``).
"""

from __future__ import annotations

from typing import Any

from backends.i18n import N_, _, number, pgettext
from backends.multiagent.events import (
    EXPERT_RESULT,
    EXPERT_STARTED,
    PHASE,
    RETRIEVED,
    RETRY,
    SESSION_FINISHED,
    SESSION_STARTED,
    TICKET,
    VERIFICATION,
    VERIFYING,
    WARNING,
)
from backends.multiagent.verify import LABELS, label

#: the experts' names (:data:`backends.multiagent.team.EXPERTS`), marked to be translated
EXPERT_NAMES = (N_("planner"), N_("coder"), N_("researcher"), N_("tester"), N_("reviewer"))


def expert_name(name: str) -> str:
    """An expert in the user's words ("programador"); an unknown name as it is."""
    return _(name) if name in EXPERT_NAMES else name


#: a test's outcome in the sandbox (the record keeps its own word)
_OUTCOMES = {
    "passed": N_("passed"),
    "failed": N_("failed"),
    "error": N_("could not run"),
    "skipped": N_("skipped"),
}
#: how the sandbox cut the network (the record keeps the English)
_NETWORKS = {"namespace": N_("namespace"), "audit hook": N_("audit hook")}


def outcome_name(outcome: str) -> str:
    """A test's outcome ("passed") in the user's words."""
    return _(_OUTCOMES[outcome]) if outcome in _OUTCOMES else outcome


def network_name(network: str) -> str:
    """How the sandbox cut the network ("namespace", "audit hook") in the user's words."""
    return _(_NETWORKS[network]) if network in _NETWORKS else network


def limit_text(value: object) -> str:
    """A sandbox limit as the record holds it, with the language's decimal mark (``10,0``)."""
    if isinstance(value, float):
        return number(value, len(repr(value).partition(".")[2]))
    return str(value)


def kind_name(kind: str) -> str:
    """A feed event's kind as the terminal shows it ("session_started" in English)."""
    names = {
        SESSION_STARTED: pgettext("multi-agent event", "session_started"),
        PHASE: pgettext("multi-agent event", "phase"),
        RETRIEVED: pgettext("multi-agent event", "retrieved"),
        EXPERT_STARTED: pgettext("multi-agent event", "expert_started"),
        EXPERT_RESULT: pgettext("multi-agent event", "expert_result"),
        TICKET: pgettext("multi-agent event", "ticket"),
        WARNING: pgettext("multi-agent event", "warning"),
        SESSION_FINISHED: pgettext("multi-agent event", "session_finished"),
        VERIFYING: pgettext("multi-agent event", "verifying"),
        VERIFICATION: pgettext("multi-agent event", "verification"),
        RETRY: pgettext("multi-agent event", "retry"),
    }
    return names.get(kind, kind)


def phase_name(phase: str) -> str:
    """A session's phase in the user's words ("done": "terminada")."""
    names = {
        "planning": pgettext("multi-agent phase", "planning"),
        "working": pgettext("multi-agent phase", "working"),
        "reviewing": pgettext("multi-agent phase", "reviewing"),
        "done": pgettext("multi-agent phase", "done"),
        "failed": pgettext("multi-agent phase", "failed"),
        "cancelled": pgettext("multi-agent phase", "cancelled"),
    }
    return names.get(phase, phase)


def status_label(status: str) -> str:
    """A check's status ("verified", "failed", "unverified") in the user's words."""
    return _(LABELS[status]) if status in LABELS else status


def state_label(phase: str, data: dict[str, Any]) -> str:
    """:func:`backends.multiagent.verify.label` in the user's words: the phase, or for a
    finished session its status ("borrador sin verificar")."""
    if phase == "done":
        return _(label(phase, data))
    return phase_name(phase)


def run_state_text(kind: str, pid: int | None) -> str:
    """A run state (:class:`~backends.multiagent.coordinator.RunState`) in the user's words."""
    if kind == "running elsewhere":
        if pid is None:
            return _("running in another process, pid unknown")
        return _("running in another process, pid {pid}").format(pid=pid)
    names = {
        "running": pgettext("multi-agent session", "running"),
        "interrupted": pgettext("multi-agent session", "interrupted"),
    }
    return names.get(kind, kind)


def event_line_parts(event: dict[str, Any]) -> tuple[str, str, str, str]:
    """An event's phase, expert, kind and text in the user's words (a phase event's text is
    the phase it starts)."""
    kind = str(event.get("kind", ""))
    text = str(event.get("text", ""))
    if kind == PHASE:
        text = phase_name(text)
    return (
        phase_name(str(event.get("phase", ""))),
        expert_name(str(event.get("expert") or "")),
        kind_name(kind),
        text,
    )
