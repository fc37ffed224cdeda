"""A record as a clinician reads it: the card (HTML) and the order of a turn's sealed fields.

Built in a worker (no widget here): the words come translated from the pane
(:meth:`~desktop.inspector.pane.InspectorPane.card_labels`).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

from backends.audit import Entry
from desktop.i18n import stamp

#: the line before the stored record text in the detail view
RECORD_HEADING = "Stored record (the exact hashed text):"


Rows = list[tuple[str, str]]
#: a tutor turn's sealed fields the card shows in their own rows (or not at all)
_OWN_ROWS = {"question", "follows", "heading", "answer", "unsupported"}
_NOT_SHOWN = {"model_sentences", "own_chunks"}


def record_card(
    entry: Entry, status: str, personal: dict[str, Any] | None, labels: dict[str, str]
) -> str:
    """A record as a clinician reads it (HTML): who, when, what was asked, what was shown and
    which sentences were withheld, the sources cited; other events as their fields.
    ``labels`` are the words in the language shown (:meth:`InspectorPane.card_labels`)."""
    e = html.escape

    def _t(key: str) -> str:
        return labels.get(key, key)

    rows: Rows = []
    who = entry.pseudonym or _t("nobody in particular")
    if status == "erased":
        who += " — " + _t("erased: this person's fields can never be read again")
    rows.append((_t("Who"), e(who)))
    rows.append((_t("When"), e(stamp(entry.time) + " UTC")))
    parts = [
        f"<h3>{e(entry.event_type)} · #{entry.seq}</h3>",
    ]
    if personal:
        rows += _personal_rows(personal, _t)
    elif status == "erased":
        rows.append((_t("Asked / shown"), _t("erased")))
    rows += _field_rows(dict(entry.data), _t)
    table = "".join(
        f"<tr><td valign='top' style='padding-right:12px'><b>{label}</b></td><td>{value}</td></tr>"
        for label, value in rows
    )
    parts.append(f"<table cellspacing='4'>{table}</table>")
    return "".join(parts)


def _value(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else json.dumps(value))


def _personal_rows(personal: dict[str, Any], _t: Callable[[str], str]) -> Rows:
    """What was asked and shown, what was withheld; then the other sealed fields."""
    e = html.escape
    rows: Rows = []
    if personal.get("question"):
        rows.append((_t("Asked"), e(str(personal["question"]))))
    if personal.get("follows"):
        rows.append((_t("As a follow-up to"), e(str(personal["follows"]))))
    shown = "\n\n".join(str(personal[k]) for k in ("heading", "answer") if personal.get(k))
    if shown:
        rows.append((_t("Shown"), e(shown).replace("\n", "<br>")))
    withheld = personal.get("unsupported") or []
    if isinstance(withheld, list):
        rows.append(
            (
                _t("Withheld (not supported by the notes)"),
                "<br>".join("• " + e(str(s)) for s in withheld) if withheld else _t("none"),
            )
        )
    for key, value in personal.items():
        if key not in _OWN_ROWS and key not in _NOT_SHOWN:
            rows.append((e(key), _value(value)))
    return rows


def _field_rows(data: dict[str, Any], _t: Callable[[str], str]) -> Rows:
    """The record's clear fields: sources cited, passages consulted, the grounding check
    first, the others by name."""
    e = html.escape
    rows: Rows = []
    cited = data.pop("cited", None)
    consulted = data.pop("chunks", None)
    if cited is not None:
        rows.append((_t("Sources cited"), "<br>".join(e(str(c)) for c in cited) or _t("none")))
    if consulted is not None:
        rows.append((_t("Passages consulted"), e(", ".join(str(c) for c in consulted)) or "—"))
    grounding = data.pop("grounding", None)
    if isinstance(grounding, dict):
        rows.append(
            (
                _t("Grounding check"),
                e(", ".join(f"{k}: {v}" for k, v in sorted(grounding.items()))),
            )
        )
    for key, value in sorted(data.items()):
        rows.append((e(key), _value(value)))
    return rows


#: the order a reviewer reads a tutor turn's sealed fields in; others follow as stored
READING_ORDER = (
    "question",
    "heading",
    "answer",
    "unsupported",
    "model_sentences",
    "generated",
    "language",
    "own_chunks",
)


def reading_order(personal: dict[str, Any] | None) -> dict[str, Any] | None:
    """``personal`` with what was asked and shown first (JSON keeps insertion order)."""
    if personal is None:
        return None
    first = {k: personal[k] for k in READING_ORDER if k in personal}
    return first | {k: v for k, v in personal.items() if k not in first}
