"""The thread sidebar (issue 30): lists the threads newest first, reopens one, renames,
deletes with Undo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt

from backends.threads import ThreadIndex
from desktop.thread_list import ThreadList


def titles(widget: ThreadList) -> list[str]:
    return [widget.list.item(i).text() for i in range(widget.list.count())]


def test_the_sidebar_lists_reopens_renames_and_undoes_a_delete(qtbot: Any, tmp_path: Path) -> None:
    index = ThreadIndex.in_home(tmp_path)
    older = index.create("memories", "me")
    index.add_turn(older.id, "user", "I moved to Porto last year.")
    newer = index.create("memories", "me")
    index.add_turn(newer.id, "user", "My cat is called Miso.")
    index.create("memories", "someone else", "Not mine")
    widget = ThreadList(index, "memories", "me")
    qtbot.addWidget(widget)
    assert titles(widget) == ["My cat is called Miso.", "I moved to Porto last year."]
    with qtbot.waitSignal(widget.thread_chosen) as chosen:
        widget.list.itemClicked.emit(widget.list.item(1))
    assert chosen.args == [older.id]
    assert widget.rename(newer.id, "Miso")
    assert titles(widget)[0] == "Miso"
    widget.list.setCurrentRow(0)
    widget.delete_button.click()
    assert titles(widget) == ["I moved to Porto last year."]
    assert not widget.undo_bar.isHidden() and "Miso" in widget.undo_label.text()
    widget.undo_button.click()
    assert titles(widget) == ["Miso", "I moved to Porto last year."]
    assert widget.list.currentItem().data(Qt.ItemDataRole.UserRole) == newer.id
    with qtbot.waitSignal(widget.new_requested):
        widget.new_button.click()
    index.close()
