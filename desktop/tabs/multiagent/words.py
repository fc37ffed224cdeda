"""The multi-agent tab's words and colours, shared by its panels.

Every panel speaks in the tab's translation context, ``MultiAgentTab`` (the catalogue files
its strings there): a panel's own ``self.tr`` would look them up under the panel's class
name and find nothing. So the panels call :func:`translate` with that context written out —
literally, so that lupdate reads it — and the words several panels use live here once.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from backends.multiagent import Session, Tags
from desktop.i18n import QT_TRANSLATE_NOOP

#: a phase's steps, in the order a run goes through them
STEPS = ("planning", "working", "reviewing", "done")

STYLE = """
QLabel#phase {{ font-size: 13px; padding: 2px 4px; }}
QLabel#multiagent_error {{ color: {error}; }}
QLabel#memory_status[problem="true"] {{ color: {warning}; font-weight: bold; }}
QLabel#verification_badge {{ padding: 4px 6px; border: 1px solid {faint}; border-radius: 3px; }}
"""

#: the health layers in the user's words (the service's keys name the engine layers, which
#: stay in the tooltip and the CLI)
_LAYER_WORDS = (
    ("sessions L1", QT_TRANSLATE_NOOP("MultiAgentTab", "open sessions")),
    ("sessions L2", QT_TRANSLATE_NOOP("MultiAgentTab", "recent sessions")),
    ("sessions SQLite", QT_TRANSLATE_NOOP("MultiAgentTab", "saved sessions")),
    ("tickets", QT_TRANSLATE_NOOP("MultiAgentTab", "tickets")),
    ("live feed", QT_TRANSLATE_NOOP("MultiAgentTab", "live feed")),
    ("semantic memory", QT_TRANSLATE_NOOP("MultiAgentTab", "semantic memory")),
)
_SERVERS = ("redis", "postgres", "qdrant")


def translate(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """Qt's ``translate``; ``context`` is always ``"MultiAgentTab"``, written at each call so
    that lupdate files the string under it."""
    return QCoreApplication.translate(context, text, disambiguation, n)


def layer_name(key: str) -> str:
    """A layer in the user's words; a server the user configured is named (Redis)."""
    for prefix, words in _LAYER_WORDS:
        if key.startswith(prefix):
            engine = key.rsplit("(", 1)[-1].rstrip(")") if key.endswith(")") else ""
            shown = translate("MultiAgentTab", words)
            return f"{shown} ({engine})" if engine in _SERVERS else shown
    return key


def phase_name(phase: str) -> str:
    names = {
        "planning": translate("MultiAgentTab", "planning"),
        "working": translate("MultiAgentTab", "working"),
        "reviewing": translate("MultiAgentTab", "reviewing"),
        "done": translate("MultiAgentTab", "finished"),
        "failed": translate("MultiAgentTab", "failed"),
        "cancelled": translate("MultiAgentTab", "cancelled"),
    }
    return names.get(phase, phase)


def expert_name(name: str) -> str:
    """An expert of the team in the user's words (the session keeps "coder")."""
    names = {
        "planner": translate("MultiAgentTab", "planner"),
        "coder": translate("MultiAgentTab", "coder"),
        "researcher": translate("MultiAgentTab", "researcher"),
        "tester": translate("MultiAgentTab", "tester"),
        "reviewer": translate("MultiAgentTab", "reviewer"),
    }
    return names.get(name, name)


def status_name(status: str) -> str:
    """A finished session's status in the user's words (never just "done")."""
    names = {
        "verified": translate("MultiAgentTab", "verified"),
        "failed": translate("MultiAgentTab", "failed verification"),
        "unverified": translate("MultiAgentTab", "unverified draft"),
    }
    return names.get(status, status)


def tags_word(tags: Tags) -> str:
    """What a session is: its phase, or for a finished one its status."""
    if tags.phase == "done":
        return status_name(tags.status or "unverified")
    return phase_name(tags.phase)


def state_name(session: Session) -> str:
    """What ``session`` is: its phase, or for a finished one its status."""
    return tags_word(Tags.of(session))


def tags_text(tags: Tags) -> str:
    """A session's row in the list: what it is, and its run state's note (a run of this
    process gets none: its phase follows live)."""
    word = tags_word(tags)
    if tags.interrupted:
        return translate("MultiAgentTab", "{0} (interrupted)").format(word)
    if tags.running_elsewhere:
        pid = str(tags.pid) if tags.pid is not None else "?"
        return translate("MultiAgentTab", "{0} (running in another process, pid {1})").format(
            word, pid
        )
    return word


def status_color(colors: dict[str, str], status: str) -> str:
    return {"verified": colors["ok"], "failed": colors["error"]}.get(status, colors["warning"])


def short(task: str) -> str:
    """A task on one line, cut to 60 characters."""
    task = " ".join(task.split())
    return task if len(task) <= 60 else task[:59] + "…"


def milliseconds(seconds: float) -> str:
    return "< 1 ms" if seconds < 0.001 else f"{seconds * 1000:.0f} ms"
