"""What the parent knows about a crash loop: every acknowledged write, every write in flight.

A child prints ``intent`` before a write and ``ack`` once it is durable. Each carries a key
(what was written: a memory, a session, a conversation…) and a *state* with ``v``, a counter
that only grows across the whole loop (each run starts from a base above every earlier one).
After a kill, a key must be in its last acknowledged state, or in the state of a write that
was in flight when the child died (it may have committed just before the kill); anything
older is a lost acknowledged write, anything else a phantom.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

State = dict[str, Any]


class Violation(AssertionError):
    """The stored data contradicts the acknowledged writes (or does not load at all)."""


@dataclass
class Ledger:
    acked: dict[str, State] = field(default_factory=dict)
    pending: dict[str, list[State]] = field(default_factory=dict)
    acks: int = 0
    intents: int = 0

    # -- folding what a child printed ---------------------------------------------------------
    def intent(self, key: str, state: State) -> None:
        self.intents += 1
        self.pending.setdefault(key, []).append(state)

    def ack(self, key: str, state: State) -> None:
        self.acks += 1
        self.acked[key] = state
        later = [s for s in self.pending.get(key, []) if s["v"] > state["v"]]
        if later:
            self.pending[key] = later
        else:
            self.pending.pop(key, None)

    # -- what may be stored -------------------------------------------------------------------
    def allowed(self, key: str) -> list[State | None]:
        """The states ``key`` may be in now; ``None`` = never written (absent)."""
        out: list[State | None] = []
        out.append(self.acked.get(key))
        out.extend(self.pending.get(key, []))
        return out

    def keys(self) -> set[str]:
        return set(self.acked) | set(self.pending)

    def in_flight(self) -> int:
        return sum(len(v) for v in self.pending.values())

    # -- files --------------------------------------------------------------------------------
    def save(self, path: Path) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({"acked": self.acked, "pending": self.pending}), encoding="utf-8")
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> Ledger:
        if not path.exists():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(acked=data["acked"], pending=data["pending"])


def check_key(ledger: Ledger, key: str, observed: State | None, same: Any = None) -> None:
    """Raise :class:`Violation` unless ``observed`` is one of the states ``key`` may be in.

    ``same(observed, expected)`` compares two states (default: equal ``v`` and presence).
    """
    allowed = ledger.allowed(key)
    compare = same or _same
    for expected in allowed:
        if expected is None or not expected.get("present", True):
            if observed is None or not observed.get("present", True):
                return
            continue
        if observed is not None and observed.get("present", True) and compare(observed, expected):
            return
    acked = ledger.acked.get(key)
    if acked is not None and observed is not None and observed.get("v", 0) < acked["v"]:
        kind = "an acknowledged write was rolled back"
    elif acked is not None and observed is None:
        kind = "an acknowledged write is missing"
    elif acked is None and not ledger.pending.get(key):
        kind = "data that was never written"
    else:
        kind = "unexpected state"
    raise Violation(f"{key}: {kind}: stored {observed!r}, allowed {allowed!r}")


def _same(observed: State, expected: State) -> bool:
    return bool(observed.get("v") == expected.get("v"))
