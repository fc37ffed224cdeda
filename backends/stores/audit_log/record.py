"""One audit record: its canonical text and the chain hash (SPEC CT2).

A record is a JSON object with exactly these keys::

    {"data": {...}, "event": "tutor.turn", "pseudonym": "p-…" | null,
     "sealed": "v1.…" | null, "seq": 17, "time": "2025-01-31T12:00:00.123456Z", "v": 1}

serialised canonically: ``json.dumps(obj, sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False)``. That text is stored as is, and the chain is::

    hash(n) = sha256((hash(n-1) + record(n)).encode("utf-8")).hexdigest()
    hash(0) = GENESIS (64 zeros)

``seq`` starts at 1 and has no gaps; ``time`` is UTC with microseconds, assigned while the
append holds the log's lock, so times never go backwards along the chain (clock permitting).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from hashlib import sha256
from json.encoder import encode_basestring
from typing import Any

#: the "previous hash" of record 1
GENESIS = "0" * 64
#: format version written into every record
RECORD_VERSION = 1
#: record keys, in canonical (sorted) order
RECORD_KEYS = ("data", "event", "pseudonym", "sealed", "seq", "time", "v")

_EVENT_RE = re.compile(r"^[a-z][a-z0-9_.:-]{0,99}$")


class RecordError(ValueError):
    """A draft that cannot become a record (a bug in the caller, not the environment)."""


#: built once: ``json.dumps`` with these options would build a new encoder on every call
_CANONICAL_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical(obj: Any) -> str:
    """The one canonical JSON text of ``obj`` (sorted keys, compact, UTF-8, no NaN)."""
    return _CANONICAL_ENCODER.encode(obj)


def _json_text(value: str | None) -> str:
    """``canonical(value)`` for a string or None, without the encoder's set-up (what
    ``json.dumps`` itself calls for a plain string when ``ensure_ascii=False``)."""
    return "null" if value is None else encode_basestring(value)


def chain_hash(previous_hash: str, record: str) -> str:
    """CT2, exactly: ``sha256((previous_hash + record).encode("utf-8")).hexdigest()``."""
    return sha256((previous_hash + record).encode("utf-8")).hexdigest()


def utc_now() -> str:
    """``YYYY-MM-DDTHH:MM:SS.ffffffZ``: sorts as text in time order."""
    return datetime.now(UTC).isoformat(timespec="microseconds")[:-6] + "Z"  # drop "+00:00"


@dataclass(frozen=True)
class Draft:
    """What a caller appends; the log adds ``seq`` and ``time`` under its lock."""

    event_type: str
    pseudonym: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    sealed: str | None = None

    def __post_init__(self) -> None:
        if not _EVENT_RE.match(self.event_type):
            raise RecordError(
                f"event type {self.event_type!r}: lower-case letters, digits and ._:- only, "
                "starting with a letter, at most 100 characters"
            )
        try:
            data_json = canonical(dict(self.data))
        except (TypeError, ValueError) as err:
            raise RecordError(f"record data is not plain JSON: {err}") from None
        # serialised once, here; every record() reuses it (appends are hot)
        object.__setattr__(
            self,
            "_fragments",
            (
                data_json,
                _json_text(self.event_type),
                _json_text(self.pseudonym),
                _json_text(self.sealed),
            ),
        )

    def record(self, seq: int, time: str) -> str:
        """The canonical record: what ``canonical({"data": ..., "event": ..., ...})`` gives
        (tests hold the two equal), built from the fragments serialised once."""
        data, event, pseudonym, sealed = self.fragments()
        return RECORD_TEMPLATE.format(
            data=data, event=event, pseudonym=pseudonym, sealed=sealed, seq=int(seq), time=time
        )

    def fragments(self) -> tuple[str, str, str, str]:
        """The canonical JSON of ``data``, ``event``, ``pseudonym`` and ``sealed``: with
        :data:`RECORD_TEMPLATE` they give :meth:`record` exactly (a server that only knows
        ``seq`` and ``time`` under its lock can then build the record itself)."""
        fragments: tuple[str, str, str, str] = self._fragments  # type: ignore[attr-defined]
        return fragments


#: the canonical record as text: keys in sorted order, the four fragments, seq and time
#: (``time`` is digits and ``-:.TZ`` only, so it needs no escaping)
RECORD_TEMPLATE = (
    '{{"data":{data},"event":{event},"pseudonym":{pseudonym},"sealed":{sealed},'
    '"seq":{seq},"time":"{time}","v":' + str(RECORD_VERSION) + "}}"
)


@dataclass(frozen=True)
class Entry:
    """A stored record: its fields (parsed from ``record``), the text and the chain hash."""

    seq: int
    time: str
    event_type: str
    pseudonym: str | None
    data: dict[str, Any]
    sealed: str | None
    record: str
    hash: str

    @classmethod
    def parse(cls, seq: int, record: str, hash_: str) -> Entry:
        """From a stored row. A record that is not valid JSON still becomes an Entry
        (event ``"<unreadable>"``) so a tampered log can be shown, not just refused."""
        try:
            obj = json.loads(record)
            if not isinstance(obj, dict):
                raise ValueError("not an object")
        except ValueError:
            return cls(seq, "", "<unreadable>", None, {}, None, record, hash_)
        data = obj.get("data")
        return cls(
            seq=seq,
            time=str(obj.get("time", "")),
            event_type=str(obj.get("event", "")),
            pseudonym=obj.get("pseudonym") if isinstance(obj.get("pseudonym"), str) else None,
            data=data if isinstance(data, dict) else {},
            sealed=obj.get("sealed") if isinstance(obj.get("sealed"), str) else None,
            record=record,
            hash=hash_,
        )

    @property
    def record_seq(self) -> int | None:
        """The sequence number written inside the record (differs from ``seq`` if moved)."""
        return record_seq(self.record)


def chain_drafts(drafts: Sequence[Draft], head: tuple[int, str] | None) -> list[Entry]:
    """Number, time-stamp and hash ``drafts`` after ``head`` (seq, hash; None = genesis).

    The one place where records are chained (CT2); both log implementations call it inside
    their lock, after reading the head.
    """
    seq, previous = head if head is not None else (0, GENESIS)
    entries: list[Entry] = []
    for draft in drafts:
        seq += 1
        time = utc_now()
        record = draft.record(seq, time)
        previous = chain_hash(previous, record)
        entries.append(
            Entry(
                seq,
                time,
                draft.event_type,
                draft.pseudonym,
                dict(draft.data),
                draft.sealed,
                record,
                previous,
            )
        )
    return entries


def record_seq(record: str) -> int | None:
    """The ``seq`` written inside a record text, or None when it cannot be read."""
    try:
        value = json.loads(record).get("seq")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None
