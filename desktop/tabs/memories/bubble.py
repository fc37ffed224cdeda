"""One message of the memories tab's transcript: a :class:`MessageView` with "Remember", the
answer's sentences marked by where they come from, the model's draft beside it, and "Ask the
model to rephrase".
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QSizePolicy, QToolButton, QWidget

from backends.answers import MODEL, Answer, Shown
from backends.grounding import CheckedSentence
from backends.memories import Hit
from desktop import i18n as window_i18n
from desktop import theme
from desktop.answer_html import WITHHELD_SCHEME, Disclosure, answer_html, counts
from desktop.markdown import MessageView

CITE_SCHEME = "memory"


class MessageBubble(MessageView):
    """One message of the transcript (Markdown, copy, edit / regenerate) with "Remember".

    An answer is shown as :mod:`backends.answers` made it (``message_checked``, properties
    ``checked``, ``mode``, ``from_memories``, ``own``, ``withheld``): what a memory states
    with ✓ and its ``[n]`` (a ``memory:n`` link, ``cite_activated``), the model's own words
    muted, the draft's withheld sentences struck out with why — folded behind a "Show what was
    withheld" link (``withheld:toggle``; :attr:`withheld_shown`) until asked for; the legend
    (``message_checked_legend``) says how the answer was made. The answer composed from the
    memories shows at once (:meth:`show_answer`); the model's draft streams below it
    (``message_draft``) and replaces it only when it passes. When the model's drafts rarely
    pass none is asked for: "Ask the model to rephrase" (``rephrase_answer``) asks.
    """

    #: a ✓ [n] mark was clicked: memory n (1-based) of this answer's memories used
    cite_activated = Signal(int)
    #: "Ask the model to rephrase" was clicked
    rephrase_requested = Signal()

    def __init__(self, role: str, text: str, parent: QWidget | None = None) -> None:
        super().__init__(role, text, parent)
        self.hits: tuple[Hit, ...] = ()
        self.checked: tuple[CheckedSentence, ...] = ()
        self.shown: Answer | None = None
        self._draft = ""
        self._marker = ""
        self._message: str | None = None  # set by finish(); until then the streamed text
        #: the draft's withheld sentences are shown (folded by default: the link opens them)
        self.withheld_shown = False
        self.remember_button = QToolButton()
        self.remember_button.setObjectName("remember_message")
        self.remember_button.setText(self.tr("Remember"))
        self.remember_button.setToolTip(self.tr("Store this message as a memory"))
        self.remember_button.setAutoRaise(True)
        self.remember_button.setEnabled(False)
        self.add_header_button(self.remember_button)
        self.memories_label = QLabel("")
        self.memories_label.setObjectName("message_memories")
        self.memories_label.setWordWrap(True)
        self.memories_label.setVisible(False)
        self.checked_label = QLabel("")
        self.checked_label.setObjectName("message_checked")
        self.checked_label.setTextFormat(Qt.TextFormat.RichText)
        self.checked_label.setWordWrap(True)
        self.checked_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.checked_label.setProperty("checked", False)
        self.checked_label.setVisible(False)
        self.draft_label = QLabel("")
        self.draft_label.setObjectName("message_draft")
        self.draft_label.setWordWrap(True)
        self.draft_label.setVisible(False)
        self.checked_legend = QLabel("")
        self.checked_legend.setObjectName("message_checked_legend")
        self.checked_legend.setWordWrap(True)
        self.checked_legend.setVisible(False)
        self.rephrase_button = QPushButton(self.tr("Ask the model to rephrase"))
        self.rephrase_button.setObjectName("rephrase_answer")
        self.rephrase_button.setVisible(False)
        layout = self.layout()
        assert layout is not None
        layout.addWidget(self.checked_label)  # just after the body (hidden when it shows)
        layout.addWidget(self.draft_label)
        layout.addWidget(self.checked_legend)
        layout.addWidget(self.memories_label)
        self.rephrase_button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.rephrase_button)
        self._connect_bubble_signals()

    def _connect_bubble_signals(self) -> None:
        """This bubble's own wiring (:class:`MessageView`'s ``_connect_signals`` runs in its
        ``__init__``, before these widgets exist)."""
        self.checked_label.linkActivated.connect(self._on_checked_link_activated)
        self.rephrase_button.clicked.connect(self.rephrase_requested)

    @property
    def text(self) -> str:
        """The message itself (what "Remember" stores), without display marks."""
        if self._message is not None:
            return self._message
        if self.shown is not None and self.shown.sentences:
            return self.shown.text
        return self.markdown()

    def copy_text(self) -> str:
        return self.text

    def show_answer(self, answer: Answer, hits: tuple[Hit, ...]) -> None:
        """The answer composed from the memories, shown at once (before any draft)."""
        self.shown = answer
        self.hits = hits
        if answer.sentences:
            self.set_status("")
            self.show_checked()

    def append_draft(self, piece: str) -> None:
        """A piece of the model's draft: below a composed answer, muted, as a draft; as the
        answer itself for a question not about the user (labelled when finished)."""
        if self.shown is None or not self.shown.sentences:
            self.append(piece)
            return
        self._draft += piece
        self.draft_label.setText(
            self.tr(
                "The model is rephrasing (shown only if every sentence checks out): {0}"
            ).format(self._draft.strip())
        )
        self.draft_label.setVisible(True)

    def finish(
        self,
        text: str,
        hits: tuple[Hit, ...],
        note: str = "",
        marker: str = "",
        checked: tuple[CheckedSentence, ...] = (),
        shown: Answer | None = None,
        skipped: bool = False,
    ) -> None:
        """Show the final ``text``; ``marker`` (e.g. "[stopped]") is shown after it only;
        ``shown``: how it was made (its sentences' kinds); ``skipped``: no draft was asked of
        the model (offer "Ask the model to rephrase")."""
        self._message = text
        self.set_status("")
        self.set_text(f"{text} {marker}".strip() if marker else text)
        self.hits = hits
        self.checked = checked
        self.shown = shown
        self._marker = marker
        self._draft = ""
        self.draft_label.setVisible(False)
        self.rephrase_button.setVisible(skipped)
        self.remember_button.setEnabled(bool(text.strip()))
        if hits:
            lines = [
                f"[{n}] {window_i18n.number(h.similarity, 2)}  {h.text}"
                for n, h in enumerate(hits, 1)
            ]
            self.memories_label.setText(self.tr("Memories used:") + "\n" + "\n".join(lines))
            self.memories_label.setVisible(True)
        elif note:
            self.memories_label.setText(note)
            self.memories_label.setVisible(True)
        self.show_checked()

    def show_checked(self) -> None:
        """Draw the answer's sentences by kind (again, in the theme's colours); the plain
        Markdown when there is no answer to mark (a failed turn, "remember that", an answer
        of the model's own with code in it)."""
        shown = self.shown
        cited, own, withheld = counts(shown) if shown is not None else (0, 0, 0)
        label = self.checked_label
        label.setProperty("mode", shown.mode if shown is not None else "")
        label.setProperty("from_memories", cited)
        label.setProperty("own", own)
        label.setProperty("withheld", withheld)
        markdown = (
            shown is not None and shown.mode == MODEL and not withheld and _has_code(self.text)
        )
        if shown is None or not (shown.sentences or withheld) or markdown:
            label.setProperty("checked", False)
            label.setVisible(False)
            self.body.setVisible(True)
            self.checked_legend.setVisible(markdown)
            if markdown and shown is not None:
                self.checked_legend.setText(shown.heading)
            return
        colours = theme.colors()

        def cite(sentence: Shown) -> str:
            hit = self.hits[sentence.number - 1] if 0 < sentence.number <= len(self.hits) else None
            title = html.escape(hit.text if hit is not None else "", quote=True)
            return (
                f'<a href="{CITE_SCHEME}:{sentence.number}" title="{title}" '
                f'style="color:{colours["ok"]}; text-decoration:none">'
                f"<small>✓&nbsp;[{sentence.number}]</small></a>"
            )

        marked = answer_html(
            shown,
            cite,
            colours["muted"],
            withheld_title=self.tr("Withheld from the model's draft (not an answer):"),
            disclosure=Disclosure(
                self.withheld_shown,
                f"{WITHHELD_SCHEME}:toggle",
                self.tr("Show what was withheld from the model's draft ({0})"),
                self.tr("Hide what was withheld"),
            ),
        )
        if self._marker:
            marked += f'<p style="color:{colours["muted"]}">{html.escape(self._marker)}</p>'
        label.setProperty("checked", True)
        label.setText(marked)
        label.setToolTip(
            self.tr("✓ [n]: stated by memory n of the memories used (click to select it)")
        )
        label.setVisible(True)
        self.body.setVisible(False)
        parts = [shown.heading] if shown.heading else []
        if cited:
            parts.append(self.tr("✓ [n]: a memory you told me says it (click to see which)"))
        if own:
            parts.append(self.tr("in grey italics: the model's own words, not from your memories"))
        if withheld and self.withheld_shown:
            parts.append(self.tr("struck out: the model's draft, withheld as unsupported"))
        self.checked_legend.setText(" · ".join(parts))
        self.checked_legend.setVisible(bool(parts))

    def _on_checked_link_activated(self, link: str) -> None:
        scheme, _, number = link.partition(":")
        if scheme == CITE_SCHEME and number.isdigit():
            self.cite_activated.emit(int(number))
        elif scheme == WITHHELD_SCHEME:
            self.show_withheld(not self.withheld_shown)

    def show_withheld(self, shown: bool = True) -> None:
        """Open (or fold again) what was withheld from the model's draft."""
        self.withheld_shown = shown
        self.show_checked()


def _has_code(text: str) -> bool:
    """Code blocks or headings: the model's Markdown is shown as it is, not re-flowed."""
    return "```" in text or any(line.lstrip().startswith("#") for line in text.splitlines())
