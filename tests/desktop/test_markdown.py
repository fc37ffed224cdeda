"""The shared message renderer (desktop/markdown.py): Qt's Markdown, code blocks that keep
their indentation in a fixed-pitch font, a Copy button per message and per code block."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QGuiApplication, QTextDocument
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QToolButton

from desktop.markdown import MessageView, Segment, markdown_html, set_markdown, split_markdown

ANSWER = """Here is **the** function:

```python
def parse(text):
    for line in text.splitlines():
        yield line.split(",")
```

And a shell line:

~~~
  ls -l
~~~
Done."""


def test_code_fences_are_cut_out_with_their_indentation() -> None:
    assert split_markdown(ANSWER) == [
        Segment("markdown", "Here is **the** function:"),
        Segment(
            "code",
            'def parse(text):\n    for line in text.splitlines():\n        yield line.split(",")',
            "python",
        ),
        Segment("markdown", "And a shell line:"),
        Segment("code", "  ls -l", ""),
        Segment("markdown", "Done."),
    ]
    # while streaming, an unclosed fence runs to the end
    assert split_markdown("Look:\n```py\nx = 1\n    y")[-1] == Segment("code", "x = 1\n    y", "py")


def test_a_message_renders_markdown_and_code_in_a_fixed_pitch_font(qtbot: Any) -> None:
    view = MessageView("assistant", ANSWER)
    qtbot.addWidget(view)
    view.show()
    prose = view.findChildren(QLabel, "message_markdown")
    assert prose[0].textFormat() == Qt.TextFormat.MarkdownText
    assert prose[0].text() == "Here is **the** function:"
    blocks = view.body.code_blocks()
    assert [b.property("language") for b in blocks] == ["python", ""]
    code: Any = blocks[0].findChild(QPlainTextEdit, "code_text")
    assert code.toPlainText().splitlines()[2] == '        yield line.split(",")'
    assert QFontInfo(code.font()).fixedPitch()
    assert code.lineWrapMode() == QPlainTextEdit.LineWrapMode.NoWrap


def test_copy_buttons_copy_the_message_and_each_code_block(qtbot: Any) -> None:
    view = MessageView("assistant", ANSWER)
    qtbot.addWidget(view)
    copies = view.findChildren(QToolButton, "copy_code")
    assert len(copies) == 2
    with qtbot.waitSignal(view.copied) as copied:
        qtbot.mouseClick(copies[1], Qt.MouseButton.LeftButton)
    assert copied.args == ["  ls -l"] and QGuiApplication.clipboard().text() == "  ls -l"
    qtbot.mouseClick(view.findChild(QToolButton, "copy_message"), Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == ANSWER


def test_streamed_pieces_render_without_losing_text(qtbot: Any) -> None:
    view = MessageView("assistant")
    qtbot.addWidget(view)
    view.set_status("Thinking…")
    status: Any = view.findChild(QLabel, "message_status")
    assert status.text() == "Thinking…"
    for piece in ["Use ", "this:\n", "```\n", "if x:\n", "    go()\n", "```\n"]:
        view.append(piece)
    assert view.status() == ""  # the first token ends "Thinking…"
    view.body.flush()
    (block,) = view.body.code_blocks()
    assert block.code() == "if x:\n    go()"
    # edit on questions, regenerate on answers
    edit: Any = view.findChild(QToolButton, "edit_message")
    regenerate: Any = view.findChild(QToolButton, "regenerate_message")
    assert not edit.isVisibleTo(view)
    view.set_actions(regenerate=True)
    assert regenerate.isVisibleTo(view)


def test_set_markdown_puts_every_code_block_of_a_document_in_the_fixed_font(qtbot: Any) -> None:
    document = QTextDocument()
    set_markdown(document, ANSWER)
    fixed = []
    block = document.begin()
    while block.isValid():
        if block.text().strip() in ("def parse(text):", "ls -l"):
            fixed.append(QFontInfo(block.charFormat().font()).fixedPitch())
            assert block.text().startswith(("def", "  ls"))  # indentation kept
        block = block.next()
    assert fixed == [True, True]


def test_a_fence_opened_after_words_still_opens_a_code_block(qtbot: Any) -> None:
    """Issue 24: "Here it is: ```python" (as small models write it) flattened the block."""
    text = "Here it is: ```python\ndef f(s):\n    if s:\n        return 1\n```\nDone."
    assert split_markdown(text) == [
        Segment("markdown", "Here it is:"),
        Segment("code", "def f(s):\n    if s:\n        return 1", "python"),
        Segment("markdown", "Done."),
    ]
    document = QTextDocument()
    set_markdown(document, text)
    assert "def f(s):\n    if s:\n        return 1" in document.toPlainText()
    inline = "Use `a` or ```b``` inline, and end on ```c```"
    assert split_markdown(inline) == [Segment("markdown", inline)]


def test_a_message_as_html_keeps_its_code_and_shows_raw_html_as_text(qtbot: Any) -> None:
    """The transcript's page (one QTextBrowser for a whole conversation) draws each message
    with the same renderer: its code blocks' text comes back for their Copy links."""
    text = "Say <div> & `<b>` too:\n\n```md\nuse ``` here\n    kept\n```"
    body, codes = markdown_html(text)
    assert codes == ["use ``` here\n    kept"]
    document = QTextDocument()
    document.setHtml(body)
    shown = document.toPlainText()
    assert "Say <div> & <b> too:" in shown and "    kept" in shown
    assert "monospace" in body
    assert markdown_html("") == ("", [])
