"""Chat messages as Markdown, shared by the chat tabs: rendering, copy, regenerate, edit.

Qt's own Markdown importer (``QTextDocument.setMarkdown``, through ``QLabel``'s
``MarkdownText``) renders the prose; fenced code blocks are cut out and shown in their own
read-only editor in the fixed-pitch system font, so their indentation is kept exactly and
each has its own Copy button.

API (object names in docs/TESTING.md):

* :func:`split_markdown` — ``text`` into prose and code :class:`Segment`\\ s (an unclosed
  fence, as while streaming, runs to the end; a fence opened after words, as small models
  write it, opens a block too: :func:`fences_on_own_lines`);
* :func:`set_markdown` — for a ``QTextBrowser``/``QTextDocument`` view: ``setMarkdown`` with
  every code block in the fixed-pitch font;
* :func:`markdown_html` — one message as an HTML fragment, for a page of messages in one
  ``QTextBrowser`` (the conversations transcript): the same rendering as :func:`set_markdown`,
  raw HTML shown as text, and its code blocks' text (for their Copy links);
* :class:`MarkdownView` (``message_text``) — one message's body; ``set_text``, ``append``
  (streamed pieces, re-rendered at most every :data:`RENDER_INTERVAL_MS`), ``text()``,
  ``code_blocks()``;
* :class:`CodeBlock` (``code_block``) — ``code_text`` and its ``copy_code`` button;
* :class:`MessageView` (``transcript_message``, property ``role``) — header with the role,
  ``copy_message``, ``edit_message`` (user messages), ``regenerate_message`` (answers), a
  ``message_status`` line ("Thinking…", "Cancelling…"), then the body. Signals
  ``edit_requested()``, ``regenerate_requested()``, ``copied(str)``; ``add_header_button``
  for a tab's own action.
* :func:`checked_html`, :func:`checked_list_html` — an answer's sentences marked as checked
  against what the model was given (CT9): ✓ and a citation, or muted as the model's own.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QCoreApplication, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QTextCursor, QTextDocument
from PySide6.QtGui import QTextFormat as _Fmt
from PySide6.QtWidgets import (
    QAbstractButton,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from backends.grounding import CheckedSentence, split_sentences, strip_citations

#: streamed tokens are re-rendered at most this often (a long answer is parsed once per tick)
RENDER_INTERVAL_MS = 40
#: a code block taller than this many lines scrolls
MAX_CODE_LINES = 24

_FENCE_OPEN = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Segment:
    kind: Literal["markdown", "code"]
    text: str
    language: str = ""


#: an opening fence after words on the same line ("Here it is: ```python"), as small models
#: write it: Markdown reads it as inline code and flattens the block onto one line
_FENCE_AFTER_WORDS = re.compile(r"^([^`\n]*?\S)[ \t]*(`{3,}[\w+#.-]*)[ \t]*$", re.MULTILINE)


def fences_on_own_lines(text: str) -> str:
    """``text`` with every opening fence written after words moved to its own line, so the
    block keeps its line breaks and indentation (issue 24: a result's code on one line)."""
    return _FENCE_AFTER_WORDS.sub(lambda m: f"{m.group(1)}\n{m.group(2)}", text)


def split_markdown(text: str) -> list[Segment]:
    """Prose and fenced code blocks, in order; code keeps every space and blank line."""
    out: list[Segment] = []
    prose: list[str] = []
    lines = fences_on_own_lines(text).split("\n")
    i = 0
    while i < len(lines):
        match = _FENCE_OPEN.match(lines[i])
        if match is None:
            prose.append(lines[i])
            i += 1
            continue
        indent, fence, language = len(match.group(1)), match.group(2), match.group(3)
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            line = lines[i]
            # the fence's own indentation is not part of the code (CommonMark)
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            i += 1
        i += 1  # the closing fence (or the end, while streaming)
        if "".join(prose).strip():
            out.append(Segment("markdown", "\n".join(prose).strip("\n")))
        prose = []
        out.append(Segment("code", "\n".join(body), language))
    if "".join(prose).strip():
        out.append(Segment("markdown", "\n".join(prose).strip("\n")))
    return out


#: a Markdown link or image: ``[text](target)`` / ``![alt](target)``
_LINK = re.compile(r"!?\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
#: ``<scheme:…>`` and ``<a@b>`` autolinks
_ANGLE = re.compile(r"<((?:[a-zA-Z][a-zA-Z0-9+.-]{1,31}:|www\.)[^\s<>]*|[^\s<>@]+@[^\s<>@]+)>")
#: what GitHub-flavoured Markdown turns into a link by itself: a scheme's colon, ``www.``,
#: an e-mail address's ``@``
_BARE = re.compile(r"(?<=[a-zA-Z])(:)(?=//)|\b(www)(\.)|(?<=[\w.+-])(@)(?=[\w-]+\.)")
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def unlinked(text: str) -> str:
    """``text`` with nothing Qt's Markdown would make a link: a model invents addresses, and
    one shown as a link looks vouched for (issue 30). ``[text](url)`` becomes ``text (url)``;
    bare and ``<…>`` addresses are shown as text. Inline code is left as it is."""
    out: list[str] = []
    last = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_unlink_prose(text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_unlink_prose(text[last:]))
    return "".join(out)


def _unlink_prose(text: str) -> str:
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if m.group(2) else m.group(1), text)
    text = _ANGLE.sub(lambda m: m.group(1), text)
    return _BARE.sub(lambda m: "\\" + m.group(0) if m.group(2) is None else "www\\.", text)


def code_font() -> QFont:
    """The system's fixed-pitch font."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def set_markdown(document: QTextDocument, text: str) -> None:
    """``document.setMarkdown(text)`` with every code block (fenced or indented) in the
    fixed-pitch system font — for views that show a whole transcript in one QTextBrowser.
    Addresses in the text are not made links (:func:`unlinked`)."""
    document.setMarkdown(unlinked(fences_on_own_lines(text)))
    font = code_font()
    block = document.begin()
    while block.isValid():
        fmt = block.blockFormat()
        if fmt.hasProperty(_Fmt.Property.BlockCodeFence) or fmt.nonBreakableLines():
            cursor = QTextCursor(block)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            char = cursor.charFormat()
            char.setFont(font)
            cursor.mergeCharFormat(char)
        block = block.next()


_INLINE_CODE = re.compile(r"(`+)(?:.*?)\1", re.DOTALL)


def escape_raw_html(prose: str) -> str:
    """Markdown prose with ``<`` and ``&`` escaped outside inline code: Qt's importer takes
    raw HTML, so a message saying ``<a href=…>x</a>`` or ``<div>`` would lose that text."""
    out: list[str] = []
    last = 0
    for match in _INLINE_CODE.finditer(prose):
        out.append(prose[last : match.start()].replace("&", "\\&").replace("<", "\\<"))
        out.append(match.group(0))
        last = match.end()
    out.append(prose[last:].replace("&", "\\&").replace("<", "\\<"))
    return "".join(out)


def markdown_html(text: str) -> tuple[str, list[str]]:
    """One message as an HTML fragment (the inside of ``<body>``), rendered by
    :func:`set_markdown` (code blocks fixed-pitch, indentation kept, addresses not made links)
    with its raw HTML shown as text; and the text of its code blocks, in order (what their
    Copy links copy). For a page of messages in one ``QTextBrowser``."""
    parts: list[str] = []
    codes: list[str] = []
    for segment in split_markdown(text):
        if segment.kind == "code":
            runs = [len(m) for m in re.findall(r"`+", segment.text)]
            fence = "`" * max(3, max(runs, default=0) + 1)
            parts.append(f"{fence}{segment.language}\n{segment.text}\n{fence}")
            codes.append(segment.text)
        else:
            parts.append(escape_raw_html(segment.text))
    if not parts:
        return "", codes
    document = QTextDocument()
    set_markdown(document, "\n\n".join(parts))
    page = document.toHtml()
    start = page.find("<body")
    start = page.find(">", start) + 1 if start >= 0 else 0
    end = page.rfind("</body>")
    return page[start : end if end >= 0 else len(page)], codes


def _copy(text: str) -> None:
    QGuiApplication.clipboard().setText(text)


class CodeBlock(QFrame):
    """A fenced code block: language, Copy, the code in a fixed-pitch read-only editor."""

    copied = Signal(str)

    def __init__(self, code: str, language: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("code_block")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setProperty("language", language)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 4)
        layout.setSpacing(2)
        header = QHBoxLayout()
        self.language_label = QLabel(language or self.tr("code"))
        self.language_label.setObjectName("code_language")
        header.addWidget(self.language_label)
        header.addStretch(1)
        self.copy_button = QToolButton()
        self.copy_button.setObjectName("copy_code")
        self.copy_button.setText(self.tr("Copy"))
        self.copy_button.setToolTip(self.tr("Copy this code to the clipboard"))
        header.addWidget(self.copy_button)
        layout.addLayout(header)
        self.editor = QPlainTextEdit()
        self.editor.setObjectName("code_text")
        self.editor.setReadOnly(True)
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.editor.setFont(code_font())
        self.editor.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.editor.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.editor)
        self._connect_signals()
        self.set_code(code)

    def _connect_signals(self) -> None:
        self.copy_button.clicked.connect(self._on_copy_clicked)

    def code(self) -> str:
        return str(self.editor.toPlainText())

    def set_code(self, code: str) -> None:
        if code != self.code():
            self.editor.setPlainText(code)
        lines = min(max(code.count("\n") + 1, 1), MAX_CODE_LINES)
        metrics = self.editor.fontMetrics()
        scroll = self.editor.horizontalScrollBar().sizeHint().height()
        frame = 2 * self.editor.frameWidth() + 8
        self.editor.setFixedHeight(lines * metrics.lineSpacing() + frame + scroll)

    def _on_copy_clicked(self) -> None:
        _copy(self.code())
        self.copy_button.setText(self.tr("Copied"))
        QTimer.singleShot(1500, self, self._reset_copy_label)
        self.copied.emit(self.code())

    def _reset_copy_label(self) -> None:
        self.copy_button.setText(self.tr("Copy"))


class MarkdownView(QWidget):
    """One message's body: prose rendered by Qt's Markdown, code blocks as :class:`CodeBlock`."""

    #: a code block's Copy was clicked: the code
    code_copied = Signal(str)

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("message_text")
        self._text = ""
        self._rendered: str | None = None
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(4)
        self._parts: list[tuple[Segment, QWidget]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(RENDER_INTERVAL_MS)
        self._connect_signals()
        self.set_text(text)

    def _connect_signals(self) -> None:
        self._timer.timeout.connect(self._on_timer_timeout)

    def _on_timer_timeout(self) -> None:
        self._render()

    def text(self) -> str:
        """The Markdown source shown (what Copy copies)."""
        return self._text

    def set_text(self, text: str) -> None:
        self._timer.stop()
        self._text = text
        self._render()

    def append(self, piece: str) -> None:
        """A streamed piece: rendered with the next tick, not once per token."""
        self._text += piece
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Render what was appended now (tests, and before a final ``set_text``)."""
        if self._timer.isActive():
            self._timer.stop()
            self._render()

    def code_blocks(self) -> list[CodeBlock]:
        return [w for _s, w in self._parts if isinstance(w, CodeBlock)]

    def labels(self) -> list[QLabel]:
        return [w for _s, w in self._parts if isinstance(w, QLabel)]

    def _render(self) -> None:
        if self._rendered == self._text:
            return
        self._rendered = self._text
        segments = split_markdown(self._text)
        # Same shape as shown (the usual case while streaming): update the widgets in place.
        if [s.kind for s in segments] == [s.kind for s, _w in self._parts]:
            for index, (segment, (old, widget)) in enumerate(
                zip(segments, self._parts, strict=True)
            ):
                if segment != old:
                    self._fill(widget, segment)
                    self._parts[index] = (segment, widget)
            return
        for _segment, widget in self._parts:
            widget.setParent(None)
            widget.deleteLater()
        self._parts = []
        for segment in segments:
            widget = self._make(segment)
            self._layout.addWidget(widget)
            self._parts.append((segment, widget))

    def _make(self, segment: Segment) -> QWidget:
        if segment.kind == "code":
            block = CodeBlock(segment.text, segment.language)
            block.copied.connect(self.code_copied)
            return block
        label = QLabel()
        label.setObjectName("message_markdown")
        label.setTextFormat(Qt.TextFormat.MarkdownText)
        label.setWordWrap(True)
        label.setOpenExternalLinks(False)
        label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self._fill(label, segment)
        return label

    @staticmethod
    def _fill(widget: QWidget, segment: Segment) -> None:
        if isinstance(widget, CodeBlock):
            widget.set_code(segment.text)
            widget.setProperty("language", segment.language)
            widget.language_label.setText(
                segment.language or QCoreApplication.translate("CodeBlock", "code")
            )
        elif isinstance(widget, QLabel):
            widget.setText(unlinked(segment.text))


class MessageView(QFrame):
    """One chat message: role, actions (copy, edit or regenerate), status line, body."""

    edit_requested = Signal()
    regenerate_requested = Signal()
    #: Copy (message or code block) put this text on the clipboard
    copied = Signal(str)

    def __init__(self, role: str, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("transcript_message")
        self.setProperty("role", role)
        self.role = role
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        self.header = QHBoxLayout()
        who = QLabel(self.tr("You") if role == "user" else self.tr("Assistant"))
        who.setObjectName("message_role")
        who.setStyleSheet("font-weight: bold")
        self.header.addWidget(who)
        self.header.addStretch(1)
        self.copy_button = self._button(
            "copy_message", self.tr("Copy"), self.tr("Copy the message")
        )
        self.edit_button = self._button(
            "edit_message", self.tr("Edit"), self.tr("Edit this message and send it again")
        )
        self.edit_button.setVisible(role == "user")
        self.regenerate_button = self._button(
            "regenerate_message", self.tr("Regenerate"), self.tr("Ask the same question again")
        )
        self.regenerate_button.setVisible(False)
        layout.addLayout(self.header)
        self.status_label = QLabel("")
        self.status_label.setObjectName("message_status")
        self.status_label.setVisible(False)
        layout.addWidget(self.status_label)
        self.body = MarkdownView(text)
        layout.addWidget(self.body)
        self._connect_signals()

    def _connect_signals(self) -> None:
        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.edit_button.clicked.connect(self.edit_requested)
        self.regenerate_button.clicked.connect(self.regenerate_requested)
        self.body.code_copied.connect(self.copied)

    def _button(self, name: str, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setText(text)
        button.setToolTip(tip)
        button.setAutoRaise(True)
        # never narrower than its word: a narrow bubble cut Spanish "Editar" to "Edita"
        button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.header.addWidget(button)
        return button

    def add_header_button(self, button: QAbstractButton) -> None:
        """A tab's own action (e.g. Remember), before Copy."""
        self.header.insertWidget(self.header.indexOf(self.copy_button), button)

    def markdown(self) -> str:
        return self.body.text()

    def set_text(self, text: str) -> None:
        self.body.set_text(text)

    def append(self, piece: str) -> None:
        if piece:
            self.set_status("")
        self.body.append(piece)

    def set_status(self, text: str) -> None:
        """ "Thinking…" before the first token, "Cancelling…" after Stop; "" hides it."""
        self.status_label.setText(text)
        self.status_label.setVisible(bool(text))

    def status(self) -> str:
        return str(self.status_label.text()) if self.status_label.isVisibleTo(self) else ""

    def set_actions(self, *, edit: bool | None = None, regenerate: bool | None = None) -> None:
        if edit is not None:
            self.edit_button.setVisible(edit and self.role == "user")
        if regenerate is not None:
            self.regenerate_button.setVisible(regenerate and self.role != "user")

    def copy_text(self) -> str:
        """What Copy puts on the clipboard: the message as written."""
        return self.markdown()

    def _on_copy_clicked(self) -> None:
        text = self.copy_text()
        _copy(text)
        self.copied.emit(text)


# -- answers checked against what the model was given (CT9 in the chat tabs) ---------------

_EMPHASIS = re.compile(r"\*\*|__|`|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)")


def checked_html(
    answer: str,
    checked: Sequence[CheckedSentence],
    cite: Callable[[CheckedSentence], str],
    muted: str,
) -> str | None:
    """``answer`` as HTML with its sentences marked: one that a source states is followed by
    ``cite(sentence)`` (its ✓ and ``[n]`` link); any other is in ``muted`` italics — the
    model's own words, shown but not as fact. None when the answer is not prose its checked
    sentences can be laid back on (code blocks, headings): the caller keeps the Markdown."""
    if not checked or re.search(r"^\s{0,3}#", answer, re.MULTILINE):
        return None
    if any(segment.kind == "code" for segment in split_markdown(answer)):
        return None
    queue = list(checked)
    paragraphs: list[str] = []
    for paragraph in re.split(r"\n\s*\n", answer):
        parts: list[str] = []
        for sentence in split_sentences(paragraph):
            said, _numbers = strip_citations(sentence)
            mark = queue.pop(0) if queue and queue[0].text == said else None
            text = html.escape(_EMPHASIS.sub("", said), quote=False)
            if mark is not None and mark.supported:
                parts.append(f"{text} {cite(mark)}")
            else:
                parts.append(f'<span style="color:{muted}"><i>{text}</i></span>')
        if parts:
            paragraphs.append("<p>" + " ".join(parts) + "</p>")
    return None if queue else "".join(paragraphs)


def checked_list_html(
    checked: Sequence[CheckedSentence], cite: Callable[[CheckedSentence], str], muted: str, own: str
) -> str:
    """The checked sentences one a line (for an answer :func:`checked_html` cannot mark in
    place): ✓ and the citation, or in ``muted`` italics with ``own`` ("not from …")."""
    lines = []
    for sentence in checked:
        text = html.escape(_EMPHASIS.sub("", sentence.text), quote=False)
        if sentence.supported:
            lines.append(f"{text} {cite(sentence)}")
        else:
            lines.append(f'<span style="color:{muted}"><i>{text}</i> · {html.escape(own)}</span>')
    return "<p>" + "<br>".join(lines) + "</p>"
