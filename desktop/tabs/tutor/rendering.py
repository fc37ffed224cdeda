"""How the tutor's thread reads: each turn's question and checked answer as HTML (CT9),
what shows while an answer is being found, and why a question has no answer.

No widget here: the tab passes its translated words in (:class:`AnswerLabels`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from backends.tutor import EXTRACTIVE, GENERATED, NOT_COVERED, Turn, reason_text

#: the link of an ``[n]`` citation: source n of the turn (``cite:n``)
CITE_SCHEME = "cite"


@dataclass(frozen=True)
class AnswerLabels:
    """The translated words :func:`render_answer` needs (the tab passes them through tr())."""

    sources: str = "Sources"
    searched: str = "Passages searched — none of them answers this question"
    model_answer: str = "The model's own answer — not shown as fact ({0})"
    unsupported: str = "unsupported by your notes"
    supported: str = "supported"


#: the heading's colour by how the answer was made (readable on light and dark palettes)
MODE_COLOURS = {GENERATED: "#2e7d32", EXTRACTIVE: "#1565c0", NOT_COVERED: "#b26a00"}


def _cited_html(text: str, numbers: set[int]) -> str:
    """``text`` escaped, its ``[n]`` citations of known passages as ``cite:n`` links."""

    def link(match: re.Match[str]) -> str:
        n = int(match.group(1))
        if n not in numbers:
            return match.group(0)
        return f'<a href="{CITE_SCHEME}:{n}">[{n}]</a>'

    return re.sub(r"\[(\d{1,2})\]", link, html.escape(text, quote=False)).replace("\n", "<br>")


def question_html(question: str) -> str:
    return f'<p style="margin-top:12px"><b>Q:</b> {html.escape(question)}</p>'


def render_thread(turns: list[str]) -> str:
    """This thread's turns, oldest first, separated by a rule."""
    return "<hr>".join(turns)


def render_waiting(question: str, state: str, thread: list[str], draft: str = "") -> str:
    """The thread so far, then the question being answered and what is happening: where it
    is searching, then the model's draft in grey (a draft, not an answer)."""
    current = question_html(question) + f'<p style="color:#757575"><i>{html.escape(state)}</i></p>'
    if draft:
        current += (
            f'<p style="color:#9e9e9e"><i>{html.escape(draft).replace(chr(10), "<br>")}</i></p>'
        )
    return render_thread([*thread, current])


def render_failed(question: str, what: str, why: str, thread: list[str]) -> str:
    """The thread so far, then the question and why it has no answer (nothing of it shown)."""
    current = (
        question_html(question)
        + f'<p style="color:#b00020"><b>{html.escape(what)}</b><br>{html.escape(why)}</p>'
    )
    return render_thread([*thread, current])


def render_turn(turn: Turn, labels: AnswerLabels | None = None, *, sources: bool = True) -> str:
    """One turn of the thread: the question, then :func:`render_answer`."""
    return question_html(turn.question) + render_answer(turn, labels, sources=sources)


def render_answer(turn: Turn, labels: AnswerLabels | None = None, *, sources: bool = True) -> str:
    """The checked answer as HTML (CT9): how it was made, the answer shown as fact with its
    ``[n]`` citations as ``cite:n`` links, then — when the model's answer is not the one shown
    — the model's sentences, each unsupported one struck through and marked, then the
    sources."""
    labels = labels or AnswerLabels()
    # an earlier turn of the thread keeps its [n] as text: the links select this turn's sources
    numbers = {p.number for p in turn.passages} if sources else set()
    g = turn.grounding
    parts: list[str] = []
    if turn.follow_up_note:  # how a follow-up was read, so the student can ask in full
        parts.append(f'<p style="color:#616161"><i>{html.escape(turn.follow_up_note)}</i></p>')
    if g is not None:
        colour = MODE_COLOURS.get(g.mode, "#424242")
        parts.append(f'<p style="color:{colour}"><b>{html.escape(g.heading)}</b></p>')
    parts.append(f"<p>{_cited_html(turn.answer, numbers)}</p>")
    if g is not None and g.mode != GENERATED and g.sentences:
        lines = []
        for sentence in g.sentences:
            if sentence.supported:
                cite = _cited_html(f"[{sentence.number}]", numbers)
                lines.append(f"✓ {html.escape(sentence.text)} {cite}")
            else:
                lines.append(
                    f'<span style="color:#9e9e9e"><s>{html.escape(sentence.text)}</s></span> '
                    f'<span style="color:#c62828">✗ {html.escape(labels.unsupported)}</span>'
                )
        title = labels.model_answer.format(reason_text(g.reason))
        parts.append(
            f'<p style="color:#616161"><b>{html.escape(title)}</b><br>'
            + "<br>".join(lines)
            + "</p>"
        )
    items = []
    for p in turn.passages if sources else ():
        weight = "b" if p.number in turn.cited else "span"
        items.append(
            f'<{weight}><a href="{CITE_SCHEME}:{p.number}">[{p.number}]</a> '
            f"{html.escape(p.title)}</{weight}>"
        )
    if items:
        title = labels.searched if g is not None and not g.covered else labels.sources
        parts.append(f"<p><b>{html.escape(title)}</b><br>" + "<br>".join(items) + "</p>")
    return "".join(parts)
