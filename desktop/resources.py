"""Where the app's files are (the source tree's or the bundle's ``resources/``), its icon, and
which system libraries Qt's X11 plugin needs that a bundle cannot carry. Light on purpose:
the window imports it at start-up (the self-test, which checks these, imports the world)."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

from PySide6.QtGui import QIcon

#: The application icon under resources/icons/ (rendered from packaging/custodia.svg).
ICON = "custodia.png"


def resources_dir() -> Path | None:
    """``resources/`` of the bundle (``sys._MEIPASS``) or of the source tree."""
    candidates = []
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        candidates.append(Path(bundle) / "resources")
    candidates.append(Path(__file__).resolve().parents[1] / "resources")
    return next((c for c in candidates if c.is_dir()), None)


#: Libraries Qt's xcb (X11) platform plugin needs that PyInstaller does not bundle, with the
#: Debian/Ubuntu package shipping each.
X11_LIBRARIES = {
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}


def missing_system_libraries() -> list[str]:
    """The packages of :data:`X11_LIBRARIES` whose library cannot be loaded here."""
    missing = []
    for library, package in X11_LIBRARIES.items():
        try:
            ctypes.CDLL(library)
        except OSError:
            missing.append(package)
    return missing


def app_icon() -> QIcon:
    """The window icon, ``resources/icons/custodia.png`` (null when the file is missing;
    the self-test checks it is there)."""
    resources = resources_dir()
    return QIcon(str(resources / "icons" / ICON)) if resources else QIcon()
