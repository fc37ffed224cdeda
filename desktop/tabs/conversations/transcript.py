"""The conversations transcript as rich text: each message, and an answer marked as checked.

The transcript is one ``QTextBrowser`` page: :func:`message_html` draws a message (its
Markdown through the shared :func:`desktop.markdown.markdown_html`, its role in a colour
readable on either palette, ``copy:<i>`` and ``copy:<i>:<k>`` links). :func:`checked_marks`
draws what follows an answer of this session checked against past conversations: CT9's ✓ [n]
and grey italics, or the answer :mod:`backends.answers` composed from the history (AL1)
with its quoted sources (``open:`` links) and its withheld draft.
"""

from __future__ import annotations

import html
import re

from backends.answers import MODEL, Answer, Shown
from backends.conversations import TurnResult
from backends.grounding import CheckedSentence
from desktop import i18n as window_i18n
from desktop import theme
from desktop.answer_html import WITHHELD_SCHEME, Disclosure, answer_html
from desktop.markdown import checked_html, checked_list_html, markdown_html
from desktop.tabs.conversations.results import own_policy
from desktop.tabs.conversations.words import role_name, translate

HIGHLIGHT = "#fff3a0"
HIGHLIGHT_DARK = "#5a4a00"
#: who wrote a message, readable on the light and on the dark palette
ROLE_COLOURS = {"user": "#0b5394", "assistant": "#38761d"}
ROLE_COLOURS_DARK = {"user": "#8ab4f8", "assistant": "#81c784"}
#: the link of an answer's ✓ [n] mark: ``source:<message index>:<n>``
SOURCE_SCHEME = "source"
#: ``open:<conversation id>:<message index>``: a quoted past message, in its conversation
OPEN_SCHEME = "open"
#: ``rephrase:<answer index>``: ask that answer's question again, with the model's draft
REPHRASE_SCHEME = "rephrase"
#: ``copy:<index>`` (a message) and ``copy:<index>:<k>`` (its code block *k*)
COPY_SCHEME = "copy"
#: a context passage as the agent gives it to the model: "[name, date] role: text"
_PASSAGE = re.compile(
    r"^\[(?P<name>.*), (?P<date>[^,\]]*)\] (?P<role>\w+): (?P<text>.*)$", re.DOTALL
)


def message_html(
    index: int,
    role: str,
    content: str,
    meta: str,
    highlight: bool,
    copy: str = "Copy",
    checked: tuple[str, str] | None = None,
) -> str:
    """One message (anchor ``msg-<index>``); ``checked``: its sentences marked (the body in
    place of its Markdown, or "" to keep it, and what follows it)."""
    body, codes = markdown_html(content)
    after = ""
    if checked is not None:
        body = checked[0] or body
        after = checked[1]
    links = "".join(
        f" <a href='{COPY_SCHEME}:{index}:{k}' style='color:gray'>"
        f"{html.escape(copy)} code {k + 1}</a>"
        for k in range(len(codes))
    )
    dark = theme.current_is_dark()
    background = f"background-color:{HIGHLIGHT_DARK if dark else HIGHLIGHT};" if highlight else ""
    colours = ROLE_COLOURS_DARK if dark else ROLE_COLOURS
    colour = colours.get(role, theme.colors()["muted"])
    return (
        f"<a name='msg-{index}'></a>"
        f"<table width='100%' cellpadding='4' style='{background}margin-top:6px'><tr><td>"
        f"<b style='color:{colour}'>{html.escape(role_name(role))}</b> "
        f"<span style='color:gray'>{html.escape(meta)}</span> "
        f"<a href='{COPY_SCHEME}:{index}' style='color:gray'>{html.escape(copy)}</a>{links}"
        f"{body}{after}</td></tr></table>"
    )


def _cite(index: int, number: int, ok: str) -> str:
    """An answer's ✓ [n] mark, a ``source:`` link."""
    return (
        f"<a href='{SOURCE_SCHEME}:{index}:{number}' "
        f"style='color:{ok}; text-decoration:none'>"
        f"<small>✓&nbsp;[{number}]</small></a>"
    )


def checked_marks(index: int, result: TurnResult, withheld_shown: bool = False) -> tuple[str, str]:
    """Answer *index* marked (CT9): the body to show in place of its Markdown ("" to
    keep it) and what follows it — the past messages it cites, named, and the legend. What
    was withheld from the model's draft is folded behind a ``withheld:<index>`` link unless
    ``withheld_shown``."""
    colours = theme.colors()
    ok, muted = colours["ok"], colours["muted"]
    if own_policy(result):
        return _composed_marks(index, result, ok, muted, withheld_shown)

    def cite(sentence: CheckedSentence) -> str:
        return _cite(index, sentence.number, ok)

    own = translate("ConversationsTab", "not from your past conversations")
    body = checked_html(result.answer, result.checked, cite, muted)
    after = checked_list_html(result.checked, cite, muted, own) if body is None else ""
    cited = sorted({c.number for c in result.checked if c.supported})
    sources = [
        f"[{n}] {html.escape(source_name(result.context_passages[n - 1]))}"
        for n in cited
        if 0 < n <= len(result.context_passages)
    ]
    if sources:
        after += f"<p style='color:{muted}'><small>" + "<br>".join(sources) + "</small></p>"
    legend = translate(
        "ConversationsTab",
        "✓ [n]: past message n says it (named under the answer; click ✓ to see it whole) "
        "· in grey italics: the assistant's own words, {0}",
    ).format(own)
    after += f"<p style='color:{muted}'><small>{html.escape(legend)}</small></p>"
    return body or "", after


def _composed_marks(
    index: int, result: TurnResult, ok: str, muted: str, withheld_shown: bool = False
) -> tuple[str, str]:
    """An answer as :mod:`backends.answers` made it (AL1): a quote of a past message
    with ✓ [n] (the sources under it open their conversation), the model's own words in
    grey italics, its withheld sentences struck out with why."""
    shown = result.shown
    assert shown is not None

    def cite(sentence: Shown) -> str:
        return _cite(index, sentence.number, ok)

    code = shown.mode == MODEL and not shown.withheld and "```" in result.answer
    body = (
        ""
        if code
        else answer_html(
            shown,
            cite,
            muted,
            withheld_title=translate(
                "ConversationsTab", "Withheld from the model's draft (not an answer):"
            ),
            disclosure=Disclosure(
                withheld_shown,
                f"{WITHHELD_SCHEME}:{index}",
                translate(
                    "ConversationsTab", "Show what was withheld from the model's draft ({0})"
                ),
                translate("ConversationsTab", "Hide what was withheld"),
            ),
        )
    )
    after = ""
    sources = [
        f"<a href='{OPEN_SCHEME}:{cid}:{i}'>[{n}] "
        f"{html.escape(source_name(result.context_passages[n - 1]))}</a>"
        for n, (cid, i) in enumerate(result.quoted, 1)
        if n <= len(result.context_passages)
    ]
    if sources:
        after += f"<p style='color:{muted}'><small>" + "<br>".join(sources) + "</small></p>"
    legend = _legend(shown, withheld_shown)
    after += f"<p style='color:{muted}'><small>{html.escape(legend)}</small></p>"
    if result.draft_skipped:
        after += (
            f"<p><small><a href='{REPHRASE_SCHEME}:{index}'>"
            + html.escape(translate("ConversationsTab", "Ask the model to rephrase"))
            + "</a></small></p>"
        )
    return body, after


def _legend(shown: Answer, withheld_shown: bool = False) -> str:
    """What the marks of a composed answer mean, only those it has."""
    parts = [shown.heading] if shown.heading else []
    if shown.cited:
        parts.append(
            translate(
                "ConversationsTab", "✓ [n]: quoted from past message n (click a source to open it)"
            )
        )
    if any(s.kind == "own" for s in shown.sentences):
        parts.append(translate("ConversationsTab", "in grey italics: the model's own words"))
    if shown.withheld and withheld_shown:
        parts.append(
            translate("ConversationsTab", "struck out: the model's draft, withheld as unsupported")
        )
    return " · ".join(parts)


def source_name(passage: str, *, full: bool = False) -> str:
    """A past message given as context, named as the user knows it: its conversation,
    date and who wrote it (its text, shortened unless ``full``)."""
    match = _PASSAGE.match(passage)
    if match is None:
        return passage
    text = " ".join(match["text"].split())
    if not full and len(text) > 80:
        text = text[:77] + "…"
    return translate("ConversationsTab", "from “{0}” ({1}), {2}: {3}").format(
        match["name"], window_i18n.iso_when(match["date"]), role_name(match["role"]), text
    )
