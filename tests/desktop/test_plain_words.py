"""Internal words stay off the user's screen (issue 20): the checks dialog, the migration
dialog without a server, the multi-agent layers (tests/desktop/tabs/test_multiagent.py)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from PySide6.QtWidgets import QLabel, QLineEdit, QPlainTextEdit, QPushButton, QToolButton

from backends.config import Config
from backends.conversations.files import Conversation, ConversationFiles, StoredMessage, now_iso
from backends.conversations.keys import HistoryCipher, generate_key, key_id
from backends.services import Services
from desktop.dialogs import DoctorDialog
from tests.desktop.tabs.test_conversations import (
    PASSPHRASE,
    WAIT,
    MakeTab,
    _key_dialog,
    _ok,
    _type_passphrase,
    child,
    idle,
    make_tab,  # noqa: F401 (a fixture)
)
from tests.desktop.test_storage_map import _open_map


def test_the_checks_dialog_speaks_plainly_of_an_ollama_nobody_configured(
    qtbot: Any, custodia_window: Any
) -> None:
    dialog = DoctorDialog(custodia_window.services, custodia_window.workers, custodia_window)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.handle.signals.succeeded, timeout=60_000):
        pass
    report = dialog.findChild(QPlainTextEdit, "doctor_report").toPlainText()
    assert "[missing]" not in report and "[     ok]" not in report
    assert "○ Ollama: not used by this configuration" in report
    assert "✓ data dir" in report
    dialog.reject()


def test_a_dry_run_that_cannot_start_does_not_say_it_is_reading(
    qtbot: Any, custodia_window: Any
) -> None:
    view = _open_map(qtbot, custodia_window)
    view.findChild(QPushButton, "storage_map_migrate").click()
    dialog = view.migration
    assert dialog is not None
    qtbot.waitUntil(lambda: "no server is configured" in dialog.status.text(), timeout=30_000)
    log = dialog.findChild(QPlainTextEdit, "migration_log").toPlainText()
    assert "reading" not in log and "Nothing was read or changed." in log
    assert not dialog.status.text().startswith("Stopped")


# -- the conversations key: no variable, cipher or key id in a sentence (issue 30) ---------

#: what must not face the user in a sentence: variables, the cipher, a key id (hex)
JARGON = re.compile(r"CONVERSATIONS_(KEY|PASSPHRASE)|Fernet|key id|\b[0-9a-f]{8,}\b")


def _locked_by_key(services: Services) -> None:
    folder = services.config.path("conversations")
    secret = Conversation(
        "secret", "Secret", now_iso(), "scripted", "scripted", [StoredMessage("user", "x")]
    )
    ConversationFiles(folder, HistoryCipher([generate_key()])).write(secret, create=True)


def test_the_locked_history_banner_speaks_plainly_and_keeps_details_apart(
    qtbot: Any,
    make_tab: MakeTab,  # noqa: F811 (the imported fixture)
) -> None:
    tab = make_tab(prepare=_locked_by_key)
    status = child(tab, QLabel, "encryption_status").text()
    assert "encrypted and locked" in status and "New messages are refused" in status
    assert not JARGON.search(status), status
    details = child(tab, QLabel, "encryption_details")
    assert not details.isVisible()
    child(tab, QToolButton, "encryption_details_button").click()
    assert details.isVisible()
    assert "Fernet" in details.text() and "CONVERSATIONS_KEY" in details.text()
    assert "Key ids the history needs" in details.text()


def test_a_key_from_the_environment_is_said_without_its_variable(
    qtbot: Any,
    make_tab: MakeTab,  # noqa: F811 (the imported fixture)
    custodia_config: Config,
) -> None:
    key = generate_key()
    tab = make_tab(replace(custodia_config, conversations_key=key))
    status = child(tab, QLabel, "encryption_status").text()
    assert "History encrypted" in status and not JARGON.search(status), status
    assert key_id(key) in child(tab, QLabel, "encryption_details").text()


def test_the_key_dialog_speaks_plainly_and_the_new_key_note_counts_in_words(
    qtbot: Any,
    make_tab: MakeTab,  # noqa: F811 (the imported fixture)
) -> None:
    tab = make_tab()
    dialog = _key_dialog(qtbot, tab)
    intro = child(dialog, QLabel, "key_intro").text()
    assert "encrypted again" in intro and not JARGON.search(intro), intro
    assert "Fernet" not in child(dialog, QLineEdit, "key_input").placeholderText()
    child(dialog, QLineEdit, "key_input").setText("not-a-key")
    _ok(dialog)
    error = child(dialog, QLabel, "key_error").text()
    assert "not a key of the right form" in error and not JARGON.search(error), error
    details = child(dialog, QLabel, "key_details")
    child(dialog, QToolButton, "key_details_button").click()
    assert details.isVisible() and "Fernet" in details.text()
    child(dialog, QPushButton, "generate_key").click()
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        _ok(dialog)
    note = child(tab, QLabel, "tab_status")
    qtbot.waitUntil(lambda: "new key is set" in note.text(), timeout=WAIT)
    assert "0 conversation" not in note.text()


def test_a_wrong_passphrase_is_said_plainly_and_does_not_squeeze_the_explanation(
    qtbot: Any,
    make_tab: MakeTab,  # noqa: F811 (the imported fixture)
    custodia_config: Config,
) -> None:
    tab = make_tab()
    dialog = _key_dialog(qtbot, tab, "mode_passphrase")
    _type_passphrase(qtbot, dialog, PASSPHRASE, confirm=True)
    with qtbot.waitSignal(dialog.destroyed, timeout=WAIT):
        _ok(dialog)
    idle(qtbot, tab)
    again = make_tab(custodia_config)
    dialog = _key_dialog(qtbot, again, "mode_passphrase")
    dialog.resize(dialog.minimumWidth(), dialog.sizeHint().height())
    _type_passphrase(qtbot, dialog, "correct horse battery stapler", confirm=False)
    _ok(dialog)
    error = child(dialog, QLabel, "key_error")
    qtbot.waitUntil(lambda: "does not open your history" in error.text(), timeout=WAIT)
    assert not JARGON.search(error.text()), error.text()
    qtbot.wait(50)  # the layout settles
    for label in (child(dialog, QLabel, "key_intro"), error):
        assert label.height() >= label.heightForWidth(label.width()), label.objectName()
    child(dialog, QToolButton, "key_details_button").click()
    assert "wrong passphrase" in child(dialog, QLabel, "key_details").text()


#: an environment variable's name (``CONVERSATIONS_KEY``, ``CUSTODIA_HOME``), the cipher
VARIABLE_OR_CIPHER = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|Fernet|\bkey id\b")


def test_no_window_or_dialog_sentence_names_a_variable_or_the_cipher(
    qtbot: Any, custodia_window: Any
) -> None:
    """What a person reads (labels, buttons, placeholders) in the window and every dialog;
    the Details expanders are where such words belong (folded, for whoever needs them)."""
    from PySide6.QtWidgets import QAbstractButton, QWidget

    from tests.desktop.test_dialogs_fit import DIALOGS

    def said(root: QWidget) -> list[str]:
        out = []
        for widget in [root, *root.findChildren(QWidget)]:
            if not widget.isVisibleTo(root) or "details" in widget.objectName():
                continue
            texts = []
            if isinstance(widget, QLabel | QAbstractButton):
                texts.append(widget.text())
            if isinstance(widget, QLineEdit):
                texts.append(widget.placeholderText())
            out += [f"{widget.objectName()!r}: {t}" for t in texts if VARIABLE_OR_CIPHER.search(t)]
        return out

    found = said(custodia_window)
    for name, opener in DIALOGS.items():
        if name in ("key_refused", "about_details"):  # Details opened on purpose
            continue
        dialog = opener(custodia_window)
        qtbot.addWidget(dialog)
        dialog.show()
        found += [f"{name} {line}" for line in said(dialog)]
        dialog.close()
    assert not found, "\n".join(found)
