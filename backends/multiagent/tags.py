"""What a session is tagged with in a listing, and what a listing filters on — said once.

The tab's phase filter and its session rows ("working (interrupted)"), the CLI's
``custodia sessions`` rows and the session stores' ``phase`` filter all speak of the same few
facts about a session: its phase, what a finished one is worth (its verification status), and
whether a process runs it now or a dead one left it behind (its run state). Each of them used
to spell the rule out again ("" means every phase, ``phase or None``, "done" is shown by its
status, which run states get a note). :class:`Tags` holds those facts as one frozen value:
parsed from a filter's text, made from a session and its run state, matched, shown.

Qt-free: the desktop translates the words it names (:attr:`Tags.word`, :attr:`Tags.note`);
:meth:`Tags.text` is the untranslated form the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from backends.multiagent.verify import LABELS, UNVERIFIED, status_of
from backends.stores.sessions import PHASES

if TYPE_CHECKING:
    from backends.multiagent.coordinator import RunState
    from backends.stores.sessions import Session

#: the tags a filter may set, in the order :meth:`Tags.filter_text` writes them
KEYS = ("phase", "status", "run")
#: a run state's kinds (:class:`~backends.multiagent.coordinator.RunState`)
RUN_KINDS = ("running", "running elsewhere", "interrupted")


@dataclass(frozen=True)
class Tags:
    """A session's tags, or — when some are left empty — a filter over sessions.

    ``phase``: one of :data:`~backends.stores.sessions.PHASES`; ``status``: a finished
    session's verification status (``verified``, ``failed``, ``unverified``); ``run``: its
    run state's kind, ``pid`` the process that runs it elsewhere. An empty tag matches any.
    """

    phase: str = ""
    status: str = ""
    run: str = ""
    pid: int | None = None

    # -- made from ------------------------------------------------------------------------
    @classmethod
    def of(cls, session: Session, state: RunState | None = None) -> Tags:
        """``session``'s tags; ``state`` is its run state (None: idle, or run by us)."""
        status = status_of(session.data) if session.phase == "done" else ""
        if state is None:
            return cls(session.phase, status)
        return cls(session.phase, status, state.kind, state.pid)

    @classmethod
    def parse(cls, text: str | None) -> Tags:
        """A filter from its text: ``""`` (or None) is every session; ``working`` a phase;
        ``phase:done status:verified run:interrupted`` spell each tag. ValueError otherwise."""
        found: dict[str, str] = {}
        for token in (text or "").split():
            key, _, value = token.rpartition(":")
            key = key or "phase"
            if key not in KEYS:
                raise ValueError(f"no such tag {key!r} (one of {', '.join(KEYS)})")
            if key in found:
                raise ValueError(f"the tag {key!r} is given twice")
            found[key] = value
        tags = cls(found.get("phase", ""), found.get("status", ""), found.get("run", ""))
        tags.check()
        return tags

    @classmethod
    def choices(cls) -> tuple[Tags, ...]:
        """The phase filters a listing offers: every phase, then each phase."""
        return (cls(), *(cls(phase) for phase in PHASES))

    def check(self) -> None:
        """ValueError when a tag holds a value no session can have."""
        for key, value, allowed in (
            ("phase", self.phase, PHASES),
            ("status", self.status, tuple(LABELS)),
            ("run", self.run, RUN_KINDS),
        ):
            if value and value not in allowed:
                raise ValueError(f"no {key} {value!r} (one of {', '.join(allowed)})")

    # -- used as a filter -----------------------------------------------------------------
    @property
    def phase_or_none(self) -> str | None:
        """The phase a store lists (None: every phase)."""
        return self.phase or None

    def matches(self, session: Tags) -> bool:
        """``session`` has every tag this filter sets."""
        return all(
            not wanted or wanted == got
            for wanted, got in (
                (self.phase, session.phase),
                (self.status, session.status),
                (self.run, session.run),
            )
        )

    def filter_text(self) -> str:
        """This filter as :meth:`parse` reads it (``""``: every session)."""
        return " ".join(f"{key}:{value}" for key in KEYS if (value := getattr(self, key)))

    # -- shown ----------------------------------------------------------------------------
    def without_run(self) -> Tags:
        """The same session with no run state (a run the caller itself starts or runs)."""
        return replace(self, run="", pid=None)

    @property
    def interrupted(self) -> bool:
        return self.run == "interrupted"

    @property
    def running_elsewhere(self) -> bool:
        return self.run == "running elsewhere"

    @property
    def word(self) -> str:
        """What the session is, in one word: its phase, or for a finished one its status's
        label — never "done" (a run that ended is verified, failed verification or a draft)."""
        if self.phase != "done":
            return self.phase
        return LABELS[self.status or UNVERIFIED]

    @property
    def note(self) -> str:
        """Its run state, as the listing's note says it ("" when it has none)."""
        if self.running_elsewhere:
            who = f"pid {self.pid}" if self.pid is not None else "pid unknown"
            return f"running in another process, {who}"
        return self.run

    def text(self) -> str:
        """The listing's words (untranslated): ``working (interrupted)``, ``verified``."""
        return f"{self.word} ({self.note})" if self.note else self.word
