"""Every dialog's text wraps and fits at the window's minimum size, 760×480 (issue 30): a
dialog can be made that small, and then no label is cut (a wrapped label has the height its
lines need, an unwrapped one its whole width) and no button is squeezed.

``CUSTODIA_SHOTS=<folder>`` also saves each dialog as it was checked (to look at)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractScrollArea,
    QLabel,
    QLineEdit,
    QScrollArea,
    QTableWidget,
    QWidget,
)

from desktop.main_window import MIN_HEIGHT, MIN_WIDTH

Opener = Callable[[Any], QWidget]


def _settings(window: Any) -> QWidget:
    from desktop.dialogs import SettingsDialog

    return SettingsDialog(window.services.config, window, window.model_options)


def _settings_servers(window: Any) -> QWidget:
    dialog = _settings(window)
    dialog.servers_button.setChecked(True)  # type: ignore[attr-defined]
    return dialog


def _models(window: Any) -> QWidget:
    from desktop.models_dialog import ModelsDialog

    return ModelsDialog(window.services, window.workers, window)


def _find_models(window: Any) -> QWidget:
    from desktop.models_dialog import FindModelsDialog

    return FindModelsDialog(window.services, window.workers, window)


def _doctor(window: Any) -> QWidget:
    from desktop.dialogs import DoctorDialog

    return DoctorDialog(window.services, window.workers, window)


def _about(window: Any) -> QWidget:
    from desktop.dialogs import AboutDialog

    return AboutDialog(window.services, window)


def _about_details(window: Any) -> QWidget:
    dialog = _about(window)
    button = dialog.findChild(QAbstractButton, "about_details")
    if button is not None:
        button.click()
    return dialog


def _shortcuts(window: Any) -> QWidget:
    from desktop.help import ShortcutsDialog

    return ShortcutsDialog(window)


def _guide(window: Any) -> QWidget:
    from desktop.help import UserGuideDialog

    return UserGuideDialog(window)


def _key(window: Any) -> QWidget:
    from desktop.tabs.conversations import KeyDialog

    return KeyDialog(None, window)


def _key_refused(window: Any) -> QWidget:
    """A wrong passphrase: the explanation must not be cut to half a line."""
    dialog = _key(window)
    dialog.mode_passphrase.setChecked(True)  # type: ignore[attr-defined]
    dialog.passphrase_failed(  # type: ignore[attr-defined]
        "This passphrase does not open your history. Check it for a typo (letter case, "
        "keyboard layout).",
        "wrong passphrase: the passphrase matches none of the passphrases set",
    )
    dialog.details_button.setChecked(True)  # type: ignore[attr-defined]
    return dialog


def _new_history(window: Any) -> QWidget:
    from desktop.tabs.conversations import KeyDialog

    return KeyDialog(None, window, new_history=True)


def _migration(window: Any) -> QWidget:
    from desktop.storage_map import MigrationDialog

    return MigrationDialog(window.services, window.workers, window)


def _proof(window: Any) -> QWidget:
    from desktop.inspector import ProofDialog

    return ProofDialog("0" * 64, window)


def _storage_map(window: Any) -> QWidget:
    from desktop.storage_map import open_storage_map

    return open_storage_map(window).window()


def _new_history_question(window: Any) -> QWidget:
    from desktop.tabs.conversations import ConversationsTab

    tab = window.findChild(ConversationsTab)
    tab._on_new_history_clicked()
    return tab.new_history_dialog  # type: ignore[no-any-return]


DIALOGS: dict[str, Opener] = {
    "storage_map": _storage_map,
    "new_history_question": _new_history_question,
    "settings": _settings,
    "settings_servers": _settings_servers,
    "models": _models,
    "find_models": _find_models,
    "doctor": _doctor,
    "about": _about,
    "about_details": _about_details,
    "shortcuts": _shortcuts,
    "user_guide": _guide,
    "key": _key,
    "key_refused": _key_refused,
    "key_new_history": _new_history,
    "migration": _migration,
    "proof": _proof,
}


def cut(dialog: QWidget) -> list[str]:
    """What ``dialog`` shows cut at its present size."""
    found = []
    for widget in dialog.findChildren(QWidget):
        if not widget.isVisibleTo(dialog) or _inside_scrolled(widget, dialog):
            continue
        name = f"{type(widget).__name__} {widget.objectName()!r}"
        if isinstance(widget, QScrollArea) and widget.widget() is not None:
            page = widget.widget()
            sideways = widget.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff
            if not sideways and page.minimumSizeHint().width() > widget.viewport().width() + 2:
                found.append(
                    f"{name}: its page needs {page.minimumSizeHint().width()} px, "
                    f"{widget.viewport().width()} shown (no sideways scrolling)"
                )
        if isinstance(widget, QLabel) and widget.text().strip():
            if widget.wordWrap():
                needed = widget.heightForWidth(widget.width())
                if widget.height() < needed - 2:
                    found.append(f"{name}: {widget.height()} px high of {needed}")
            elif widget.width() < widget.minimumSizeHint().width() - 2:
                found.append(f"{name}: {widget.width()} px wide of {widget.sizeHint().width()}")
        elif isinstance(widget, QAbstractButton) and widget.text().strip():
            if widget.width() < widget.minimumSizeHint().width() - 2:
                found.append(f"{name}: {widget.width()} px wide of {widget.sizeHint().width()}")
        elif isinstance(widget, QLineEdit | QAbstractScrollArea) and widget.height() < 16:
            found.append(f"{name}: {widget.height()} px high")
    return found


def _inside_scrolled(widget: QWidget, dialog: QWidget) -> bool:
    """Inside a scroll area or a table: what does not fit scrolls, nothing is cut."""
    parent = widget.parentWidget()
    while parent is not None and parent is not dialog:
        if isinstance(parent, QAbstractScrollArea | QTableWidget):
            return True
        parent = parent.parentWidget()
    return False


@pytest.mark.parametrize("name", sorted(DIALOGS))
def test_every_dialog_fits_the_minimum_window_size(
    qtbot: Any, custodia_window: Any, name: str
) -> None:
    window = custodia_window
    shots = os.environ.get("CUSTODIA_SHOTS")
    if shots and os.environ.get("CUSTODIA_SHOTS_THEME"):
        window.theme.apply(os.environ["CUSTODIA_SHOTS_THEME"])
    window.resize(MIN_WIDTH, MIN_HEIGHT)
    dialog = DIALOGS[name](window)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.wait(50)
    least = dialog.minimumSizeHint().expandedTo(dialog.minimumSize())
    assert least.width() <= MIN_WIDTH and least.height() <= MIN_HEIGHT, (
        f"{name} needs at least {least.width()}×{least.height()}"
    )
    hint = dialog.sizeHint()
    dialog.resize(min(hint.width(), MIN_WIDTH), min(hint.height(), MIN_HEIGHT))
    layout = dialog.layout()
    if layout is not None:
        layout.activate()
    qtbot.wait(50)
    if shots:
        dark = "dark" if window.theme.dark else "light"
        dialog.grab().save(str(Path(shots) / f"{name}-{dark}-{MIN_WIDTH}x{MIN_HEIGHT}.png"))
    assert dialog.width() <= MIN_WIDTH and dialog.height() <= MIN_HEIGHT
    problems = cut(dialog)
    assert not problems, f"{name} at {dialog.width()}×{dialog.height()}:\n" + "\n".join(problems)
    if shots:  # as it opens on a 1366×768 screen
        dialog.resize(min(hint.width(), 1366), min(hint.height(), 768))
        qtbot.wait(50)
        dialog.grab().save(str(Path(shots) / f"{name}-{dark}-1366x768.png"))
    dialog.close()
