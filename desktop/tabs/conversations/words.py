"""The conversations tab's words, in its one translation context, shared by its panels.

Every panel speaks in the tab's context, ``ConversationsTab`` (the catalogue files its
strings there): a panel's own ``self.tr`` would look them up under the panel's class name
and find nothing. So the panels call :func:`translate` with that context written out —
literally, so that lupdate reads it — and the words several panels use live here once.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def translate(context: str, text: str, disambiguation: str | None = None, n: int = -1) -> str:
    """Qt's ``translate``; ``context`` is always ``"ConversationsTab"``, written at each call
    so that lupdate files the string under it."""
    return QCoreApplication.translate(context, text, disambiguation, n)


def counted(n: int, one: str, many: str) -> str:
    """``one`` (translated, for 1) or ``many`` (translated, ``{0}`` the count) — how the tab
    says a count. Not Qt's ``%n`` plurals through :func:`translate`: PySide6's lupdate files
    ``translate(context, "%n …", "", n)`` as a plain message when ``n`` is a name, and drops
    it when ``n`` is a call (``len(…)``), so the window showed "3 message(s) found" in
    Spanish. English and Spanish both say one and many (0 is many)."""
    return (one if n == 1 else many).format(n)


def role_name(role: str) -> str:
    """Who wrote a message, as the transcript and the search hits name them."""
    names = {
        "user": translate("ConversationsTab", "You"),
        "assistant": translate("ConversationsTab", "Assistant"),
        "system": translate("ConversationsTab", "System"),
        "tool": translate("ConversationsTab", "Tool"),
    }
    return names.get(role, role)
