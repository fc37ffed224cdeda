"""An answer's three kinds of sentence, drawn the same way in every chat tab (AL1).

:mod:`backends.answers` decides what each sentence is; this draws it: a sentence a source
states with ✓ and its ``[n]`` link (``cite``), the model's own words in muted italics, and —
behind a small "Show what was withheld" link (:class:`Disclosure`) — the draft's withheld
sentences, struck out, each with why. A sentence the assistant states itself ("You haven't
told me that.") is plain text.

The withheld draft is folded by default (issue 30): on a fresh data dir the default model's
drafts rarely pass, and a user saw "✗ Elena, Elenka" struck through under every memory
answer. The audit log and the inspector keep what was withheld, as before.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from backends.answers import OWN, SUPPORTED, Answer, Shown

_EMPHASIS = re.compile(r"\*\*|__|`|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")


def _plain(text: str) -> str:
    return html.escape(_EMPHASIS.sub("", text), quote=False)


#: the scheme of the link that shows or hides an answer's withheld draft
WITHHELD_SCHEME = "withheld"


@dataclass(frozen=True)
class Disclosure:
    """The withheld draft's fold: whether it is open, the link that toggles it (``href``),
    and the link's words each way (``show`` may hold ``{0}``, how many sentences)."""

    shown: bool
    href: str
    show: str
    hide: str


def answer_html(
    answer: Answer,
    cite: Callable[[Shown], str],
    muted: str,
    *,
    withheld_title: str,
    own_note: str = "",
    disclosure: Disclosure | None = None,
) -> str:
    """``answer`` as rich text (see the module doc). ``own_note`` follows each sentence of
    the model's own ("not from your memories") when given. The withheld draft shows only
    when ``disclosure`` is open (a link to open it otherwise); without one, it shows."""
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
    if held and disclosure is not None and not disclosure.shown:
        opener = html.escape(disclosure.show.format(len(held)))
        return out + (
            f'<p style="color:{muted}"><small><a href="{html.escape(disclosure.href)}" '
            f'style="color:{muted}">{opener}</a></small></p>'
        )
    if held:
        lines = [
            f"<s>{_plain(s.text)}</s> — {html.escape(s.reason)}"
            if s.reason
            else f"<s>{_plain(s.text)}</s>"
            for s in held
        ]
        closer = ""
        if disclosure is not None:
            closer = (
                f'<br><a href="{html.escape(disclosure.href)}" style="color:{muted}">'
                f"{html.escape(disclosure.hide)}</a>"
            )
        out += (
            f'<p style="color:{muted}"><small>{html.escape(withheld_title)}<br>'
            + "<br>".join(lines)
            + closer
            + "</small></p>"
        )
    return out


def counts(answer: Answer) -> tuple[int, int, int]:
    """``(cited, own, withheld)``: how many sentences of each kind (a tab's properties)."""
    cited = sum(1 for s in answer.sentences if s.kind == SUPPORTED and s.number)
    own = sum(1 for s in answer.sentences if s.kind == OWN)
    return cited, own, len(answer.withheld)
