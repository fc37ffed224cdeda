"""Help ▸ User guide (docs/USER_GUIDE.md rendered) and Help ▸ Keyboard shortcuts (read from
the window's own actions and shortcuts, so the list cannot drift from what is bound)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import (
    QAction,
    QDesktopServices,
    QImage,
    QKeySequence,
    QPixmap,
    QResizeEvent,
    QShortcut,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends import i18n

GUIDE = "USER_GUIDE.md"
#: the guide in another language than English: USER_GUIDE.<lang>.md beside it
TRANSLATED_GUIDE = "USER_GUIDE.{0}.md"


def guide_path(language: str | None = None) -> Path | None:
    """docs/USER_GUIDE.md of the source tree, or the one bundled next to the resources; in
    ``language`` (default: the one installed at start-up) when it has been translated."""
    language = language or i18n.current()
    names = [GUIDE] if language == i18n.DEFAULT else [TRANSLATED_GUIDE.format(language), GUIDE]
    roots = [Path(__file__).resolve().parent.parent]
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.insert(0, Path(bundle))
    for name in names:
        for root in roots:
            path = root / "docs" / name
            if path.is_file():
                return path
    return None


class UserGuideDialog(QDialog):
    """The user guide, rendered from its Markdown with its screenshots."""

    def __init__(self, parent: QWidget | None = None, path: Path | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("user_guide_dialog")
        self.setWindowTitle(self.tr("Custodia user guide"))
        self.resize(820, 640)
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser()
        self.browser.setObjectName("user_guide_text")
        self.browser.setOpenLinks(False)  # anchors scroll here; web links go to the browser
        layout.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.browser.anchorClicked.connect(self._on_anchor_clicked)
        #: each screenshot's own size (the page shows it narrower when the window is)
        self._natural: dict[str, tuple[int, int]] = {}
        self.path = path or guide_path()
        if self.path is None or not self.path.is_file():
            self.browser.setPlainText(
                self.tr("The user guide ({0}) is not installed with this copy of Custodia.").format(
                    GUIDE
                )
            )
            return
        text = self.path.read_text(encoding="utf-8", errors="replace")
        self.browser.setSearchPaths([str(self.path.parent)])
        self.browser.document().setBaseUrl(QUrl.fromLocalFile(str(self.path.parent) + "/"))
        self.browser.setMarkdown(text)
        self.fit_images()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.fit_images()

    def fit_images(self) -> None:
        """Every screenshot no wider than the page (they forced horizontal scrolling)."""
        document = self.browser.document()
        room = max(120, self.browser.viewport().width() - 2 * int(document.documentMargin()) - 8)
        block = document.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                fmt = fragment.charFormat()
                if fmt.isImageFormat():
                    image = fmt.toImageFormat()
                    size = self._natural_size(image.name())
                    if size is not None:
                        width = min(size[0], room)
                        image.setWidth(width)
                        image.setHeight(size[1] * width / size[0])
                        cursor = QTextCursor(document)
                        cursor.setPosition(fragment.position())
                        cursor.setPosition(
                            fragment.position() + fragment.length(),
                            QTextCursor.MoveMode.KeepAnchor,
                        )
                        cursor.setCharFormat(image)
                it += 1
            block = block.next()

    def _natural_size(self, name: str) -> tuple[int, int] | None:
        if name not in self._natural:
            resource = self.browser.document().resource(
                QTextDocument.ResourceType.ImageResource, QUrl(name)
            )
            image = resource if isinstance(resource, QImage) else QImage()
            if isinstance(resource, QPixmap):
                image = resource.toImage()
            if image.isNull() or image.width() <= 0:
                return None
            self._natural[name] = (image.width(), image.height())
        return self._natural[name]

    def _on_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() in ("http", "https", "mailto"):
            QDesktopServices.openUrl(url)
        elif url.hasFragment():
            self.browser.scrollToAnchor(url.fragment())


def shortcuts(window: QWidget) -> list[tuple[str, str]]:
    """(what, keys) for every action and shortcut of ``window`` that has a key, in menu
    order, then the tabs' own shortcuts."""
    out: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()

    def add(what: str, keys: list[QKeySequence]) -> None:
        text = ", ".join(
            k.toString(QKeySequence.SequenceFormat.NativeText) for k in keys if not k.isEmpty()
        )
        what = what.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()
        if text and (what, text) not in seen:
            seen.add((what, text))
            out.append((what, text))

    for action in window.findChildren(QAction):
        if action.menu() is not None:
            continue
        add(action.text() or action.toolTip(), list(action.shortcuts()))
    for shortcut in window.findChildren(QShortcut):
        owner = shortcut.parent()
        where = owner.objectName() if isinstance(owner, QWidget) else ""
        what = shortcut.whatsThis() or shortcut.objectName() or where
        add(what, list(shortcut.keys()))
    return out


class ShortcutsDialog(QDialog):
    """Every keyboard shortcut of the window, generated from what is actually bound."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.setObjectName("shortcuts_dialog")
        self.setWindowTitle(self.tr("Keyboard shortcuts"))
        self.resize(520, 460)
        layout = QVBoxLayout(self)
        self.list = QTreeWidget()
        self.list.setObjectName("shortcuts_list")
        self.list.setHeaderLabels([self.tr("Action"), self.tr("Shortcut")])
        self.list.setRootIsDecorated(False)
        # the action takes the room left by the shortcut (the last section stretched too,
        # so each got half and the Spanish actions were cut)
        self.list.header().setStretchLastSection(False)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        for what, keys in shortcuts(window):
            item = QTreeWidgetItem([what, keys])
            item.setData(1, Qt.ItemDataRole.UserRole, keys)
            item.setToolTip(0, what)
            self.list.addTopLevelItem(item)
        layout.addWidget(self.list)
        # as wide as its longest action and shortcut (Spanish runs ~30 % longer: the actions
        # were cut at 520 px), within the window it belongs to
        margins = layout.contentsMargins()
        wide = sum(self.list.sizeHintForColumn(c) for c in (0, 1)) + margins.left()
        wide += margins.right() + 2 * self.list.frameWidth() + 24  # and a scroll bar
        room = window.width() if window.width() > 0 else wide
        self.resize(max(520, min(wide, room)), 460)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
