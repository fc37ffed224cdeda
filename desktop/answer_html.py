"""An answer's three kinds of sentence, drawn the same way in every chat tab (AL1).

:mod:`backends.answers` decides what each sentence is; this draws it: a sentence a source
states with ✓ and its ``[n]`` link (``cite``), the model's own words in muted italics, and the
draft's withheld sentences after the answer, struck out, each with why. A sentence the
assistant states itself ("You haven't told me that.") is plain text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from backends.answers import OWN, SUPPORTED, Answer, Shown

_EMPHASIS = re.compile(r"\*\*|__|`|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")


def _plain(text: str) -> str:
    return html.escape(_EMPHASIS.sub("", text), quote=False)


def answer_html(
    answer: Answer,
    cite: Callable[[Shown], str],
    muted: str,
    *,
    withheld_title: str,
    own_note: str = "",
) -> str:
    """``answer`` as rich text (see the module doc). ``own_note`` follows each sentence of
    the model's own ("not from your memories") when given."""
    parts: list[str] = []
    for sentence in answer.sentences:
        text = _plain(sentence.text)
        if sentence.kind == SUPPORTED:
            parts.append(f"{text} {cite(sentence)}" if sentence.number else text)
        elif sentence.kind == OWN:
            note = f" · {html.escape(own_note)}" if own_note else ""
            parts.append(f'<span style="color:{muted}"><i>{text}</i>{note}</span>')
    out = "<p>" + " ".join(parts) + "</p>" if parts else ""
    held = answer.withheld
    if held:
        lines = [
            f"<s>{_plain(s.text)}</s> — {html.escape(s.reason)}"
            if s.reason
            else f"<s>{_plain(s.text)}</s>"
            for s in held
        ]
        out += (
            f'<p style="color:{muted}"><small>{html.escape(withheld_title)}<br>'
            + "<br>".join(lines)
            + "</small></p>"
        )
    return out


def counts(answer: Answer) -> tuple[int, int, int]:
    """``(cited, own, withheld)``: how many sentences of each kind (a tab's properties)."""
    cited = sum(1 for s in answer.sentences if s.kind == SUPPORTED and s.number)
    own = sum(1 for s in answer.sentences if s.kind == OWN)
    return cited, own, len(answer.withheld)
