"""Addresses in a model's answer are never made links (issue 30): a model invents URLs, and
one drawn as a link looks vouched for. Qt's own Markdown is asked what it made of the text."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtGui import QTextDocument

from desktop.markdown import MarkdownView, set_markdown, unlinked


def anchors(document: QTextDocument) -> list[str]:
    found = []
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            if fmt.isAnchor():
                found.append(fmt.anchorHref())
            it += 1
        block = block.next()
    return found


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "See https://guidelines.example.org/gout for more.",
            "See https://guidelines.example.org/gout for more.",
        ),
        ("Read www.example.com daily.", "Read www.example.com daily."),
        (
            "The [official guide](https://example.com/guide).",
            "The official guide (https://example.com/guide).",
        ),
        (
            "Write to <help@example.com> or <https://example.com>.",
            "Write to help@example.com or https://example.com.",
        ),
        ("Mail dr.ana@clinic.example today.", "Mail dr.ana@clinic.example today."),
        ("Run `curl https://example.com` first.", "Run curl https://example.com first."),
    ],
)
def test_no_address_in_model_text_becomes_a_link(qtbot: Any, text: str, shown: str) -> None:
    document = QTextDocument()
    set_markdown(document, text)
    assert anchors(document) == []
    assert document.toPlainText() == shown


def test_the_message_view_shows_addresses_as_text(qtbot: Any) -> None:
    view = MarkdownView("Source: https://made-up.example/paper and **bold**")
    qtbot.addWidget(view)
    label = view.labels()[0]
    document = QTextDocument()
    document.setMarkdown(label.text())
    assert anchors(document) == [] and "**bold**" in label.text()
    assert view.text() == "Source: https://made-up.example/paper and **bold**"  # copied as is


def test_ordinary_colons_and_at_signs_are_untouched() -> None:
    assert unlinked("ratio 3:2 at 10:30, @mention") == "ratio 3:2 at 10:30, @mention"
