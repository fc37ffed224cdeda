from __future__ import annotations

import hashlib
import json
import re

import pytest

from backends.stores.audit_log.record import (
    GENESIS,
    RECORD_TEMPLATE,
    Draft,
    Entry,
    RecordError,
    canonical,
    chain_hash,
)


def test_chain_hash_is_ct2_exactly() -> None:
    record = '{"a":"ñ"}'
    expected = hashlib.sha256((GENESIS + record).encode("utf-8")).hexdigest()
    assert chain_hash(GENESIS, record) == expected
    assert GENESIS == "0" * 64


def test_canonical_form_is_sorted_compact_utf8() -> None:
    draft = Draft("tutor.turn", "p-1", {"z": 1, "a": "diagnóstico"}, None)
    text = draft.record(3, "2025-01-31T12:00:00.000000Z")
    assert text == (
        '{"data":{"a":"diagnóstico","z":1},"event":"tutor.turn","pseudonym":"p-1",'
        '"sealed":null,"seq":3,"time":"2025-01-31T12:00:00.000000Z","v":1}'
    )
    assert canonical(json.loads(text)) == text


def test_entry_parses_its_record_and_survives_garbage() -> None:
    draft = Draft("tutor.turn", None, {"n": 1})
    record = draft.record(1, "t")
    entry = Entry.parse(1, record, chain_hash(GENESIS, record))
    assert (entry.event_type, entry.data, entry.record_seq) == ("tutor.turn", {"n": 1}, 1)
    broken = Entry.parse(2, "not json", "x")
    assert broken.event_type == "<unreadable>" and broken.record_seq is None


@pytest.mark.parametrize("event", ["", "Upper", "has space", "x" * 101, "1starts-with-digit"])
def test_bad_event_types_are_refused(event: str) -> None:
    with pytest.raises(RecordError):
        Draft(event)


def test_data_must_be_plain_json() -> None:
    with pytest.raises(RecordError):
        Draft("x", data={"nan": float("nan")})
    with pytest.raises(RecordError):
        Draft("x", data={"obj": object()})


@pytest.mark.parametrize(
    "draft",
    [
        Draft("tutor.turn"),
        Draft("tutor.turn", "p-0123456789abcdef", {"q": "¿dosis?", "n": [1, 2.5, None]}, "v1.x"),
        Draft("a:b-c_d", None, {"z": {"b": 1, "a": '"quoted" \\ \u2028 \U0001f600'}}),
    ],
)
def test_records_are_the_canonical_json_of_their_fields(draft: Draft) -> None:
    # records are built from fragments (and on the Postgres server from the same template):
    # they must stay byte-identical to the canonical serialisation CT2 documents
    time = "2026-11-30T02:19:36.141141Z"
    expected = canonical(
        {
            "data": dict(draft.data),
            "event": draft.event_type,
            "pseudonym": draft.pseudonym,
            "sealed": draft.sealed,
            "seq": 42,
            "time": time,
            "v": 1,
        }
    )
    assert draft.record(42, time) == expected
    data, event, pseudonym, sealed = draft.fragments()
    built = RECORD_TEMPLATE.format(
        data=data, event=event, pseudonym=pseudonym, sealed=sealed, seq=42, time=time
    )
    assert built == expected


def test_time_stamps_are_utc_with_microseconds() -> None:
    from backends.stores.audit_log.record import utc_now

    stamps = [utc_now() for _ in range(200)]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", s) for s in stamps)
    assert stamps == sorted(stamps)
