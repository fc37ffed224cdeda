"""The memories tab's right column: the memories used by the last answer, and the memory
panel — status (and why recall is limited), "Re-embed all" with its progress, search, the
list (edited in place), add, edit, delete, and the notice with Undo.

It only draws what the tab hands it; the tab starts every job. The words are the tab's
(translation context ``MemoriesTab``): this column was part of it, and its catalogue entries
stay where they are.
"""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractItemModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QStyledItemDelegate,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.memories import FoundMemory, Hit, MemoryStatus
from desktop import i18n as window_i18n

#: where a memory's own text is kept on its list item (the shown text may add a similarity)
MEMORY_TEXT_ROLE = Qt.ItemDataRole.UserRole


class MemoryTextDelegate(QStyledItemDelegate):
    """Edits a memory's own text, never the similarity shown beside a search hit."""

    def setEditorData(self, editor: QWidget, index: QModelIndex | QPersistentModelIndex) -> None:
        if isinstance(editor, QLineEdit):
            editor.setText(str(index.data(MEMORY_TEXT_ROLE) or ""))
        else:
            super().setEditorData(editor, index)

    def setModelData(
        self,
        editor: QWidget,
        model: QAbstractItemModel,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        if not isinstance(editor, QLineEdit):
            super().setModelData(editor, model, index)
            return
        new = editor.text().strip()
        if new and new != str(index.data(MEMORY_TEXT_ROLE) or ""):
            model.setData(index, new, Qt.ItemDataRole.EditRole)  # itemChanged: a real edit


class MemoryPanel(QWidget):
    """``memories_used`` (with its title), ``memory_status``, ``reembed_all`` /
    ``reembed_progress`` / ``reembed_cancel``, ``memory_search_box``, ``memory_list``,
    ``memory_new`` / ``memory_add``, ``memory_edit`` / ``memory_delete``, ``memory_notice``
    and ``memory_undo``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

        self.memories_used_title = QLabel(
            QCoreApplication.translate("MemoriesTab", "<b>Memories used by the last answer</b>")
        )
        self.memories_used_title.setObjectName("memories_used_title")
        self.memories_used_title.setWordWrap(True)
        layout.addWidget(self.memories_used_title)
        self.memories_used = QTreeWidget()
        self.memories_used.setObjectName("memories_used")
        self.memories_used.setHeaderLabels(
            [
                QCoreApplication.translate("MemoriesTab", "Similarity"),
                QCoreApplication.translate("MemoriesTab", "Memory"),
                QCoreApplication.translate("MemoriesTab", "Why it was recalled"),
            ]
        )
        self.memories_used.setRootIsDecorated(False)
        self.memories_used.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.memories_used.setMaximumHeight(140)
        layout.addWidget(self.memories_used)

        title = QLabel(QCoreApplication.translate("MemoriesTab", "<b>Memories</b>"))
        layout.addWidget(title)
        self.memory_status = QLabel(QCoreApplication.translate("MemoriesTab", "Loading memories…"))
        self.memory_status.setObjectName("memory_status")
        self.memory_status.setWordWrap(True)
        layout.addWidget(self.memory_status)
        reembed_row = QHBoxLayout()
        self.reembed_all = QPushButton(QCoreApplication.translate("MemoriesTab", "Re-embed all"))
        self.reembed_all.setObjectName("reembed_all")
        self.reembed_all.setToolTip(
            QCoreApplication.translate(
                "MemoriesTab",
                "Give every memory a vector of the current embedder so all are searched",
            )
        )
        self.reembed_all.setVisible(False)
        reembed_row.addWidget(self.reembed_all)
        self.reembed_progress = QProgressBar()
        self.reembed_progress.setObjectName("reembed_progress")
        self.reembed_progress.setVisible(False)
        reembed_row.addWidget(self.reembed_progress, 1)
        self.reembed_cancel = QPushButton(QCoreApplication.translate("MemoriesTab", "Cancel"))
        self.reembed_cancel.setObjectName("reembed_cancel")
        self.reembed_cancel.setVisible(False)
        reembed_row.addWidget(self.reembed_cancel)
        layout.addLayout(reembed_row)

        self.memory_search_box = QLineEdit()
        self.memory_search_box.setObjectName("memory_search_box")
        self.memory_search_box.setPlaceholderText(
            QCoreApplication.translate("MemoriesTab", "Search memories…")
        )
        self.memory_search_box.setClearButtonEnabled(True)
        layout.addWidget(self.memory_search_box)

        self.memory_list = QListWidget()
        self.memory_list.setItemDelegate(MemoryTextDelegate(self.memory_list))
        self.memory_list.setObjectName("memory_list")
        self.memory_list.setWordWrap(True)
        self.memory_list.setSpacing(2)
        self.memory_list.setAlternatingRowColors(True)
        self.memory_list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.memory_list.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        layout.addWidget(self.memory_list, 1)

        add_row = QHBoxLayout()
        self.memory_new = QLineEdit()
        self.memory_new.setObjectName("memory_new")
        self.memory_new.setPlaceholderText(QCoreApplication.translate("MemoriesTab", "New memory…"))
        add_row.addWidget(self.memory_new, 1)
        self.memory_add = QPushButton(QCoreApplication.translate("MemoriesTab", "Add"))
        self.memory_add.setObjectName("memory_add")
        add_row.addWidget(self.memory_add)
        layout.addLayout(add_row)

        buttons = QHBoxLayout()
        self.memory_edit = QPushButton(QCoreApplication.translate("MemoriesTab", "Edit"))
        self.memory_edit.setObjectName("memory_edit")
        self.memory_delete = QPushButton(QCoreApplication.translate("MemoriesTab", "Delete"))
        self.memory_delete.setObjectName("memory_delete")
        for button in (self.memory_edit, self.memory_delete):
            button.setEnabled(False)
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)

        notice_row = QHBoxLayout()
        self.memory_notice = QLabel("")
        self.memory_notice.setObjectName("memory_notice")
        self.memory_notice.setWordWrap(True)
        self.memory_notice.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        notice_row.addWidget(self.memory_notice, 1)
        self.memory_undo = QPushButton(QCoreApplication.translate("MemoriesTab", "Undo"))
        self.memory_undo.setObjectName("memory_undo")
        self.memory_undo.setToolTip(
            QCoreApplication.translate(
                "MemoriesTab", "Undo the last change to the memories (Ctrl+Z)"
            )
        )
        self.memory_undo.setEnabled(False)
        notice_row.addWidget(self.memory_undo)
        layout.addLayout(notice_row)

    def _connect_signals(self) -> None:
        self.memory_list.currentItemChanged.connect(self._on_current_item_changed)

    def _on_current_item_changed(
        self, current: QListWidgetItem | None, previous: QListWidgetItem | None
    ) -> None:
        """Edit and Delete act on the selected memory: off without one."""
        has = current is not None
        self.memory_edit.setEnabled(has)
        self.memory_delete.setEnabled(has)

    # -- what the tab hands it ---------------------------------------------------------------
    def show_used(self, question: str, hits: tuple[Hit, ...]) -> None:
        """The memories an answer to ``question`` used, with their similarity and why."""
        short = question if len(question) <= 60 else question[:57] + "…"
        self.memories_used_title.setText(
            QCoreApplication.translate(
                "MemoriesTab", "<b>Memories used to answer</b> “{0}”"
            ).format(short.replace("<", "&lt;"))
        )
        self.memories_used.clear()
        for number, hit in enumerate(hits, 1):
            item = QTreeWidgetItem([window_i18n.number(hit.similarity, 2), hit.text, hit.why])
            item.setData(0, Qt.ItemDataRole.UserRole, hit.similarity)
            item.setToolTip(0, f"[{number}]")
            item.setToolTip(1, f"[{number}] {hit.text}")
            self.memories_used.addTopLevelItem(item)

    def select_used(self, number: int) -> None:
        """Memory ``number`` (1-based) of those used, selected and in view."""
        item = self.memories_used.topLevelItem(number - 1)
        if item is not None:
            self.memories_used.setCurrentItem(item)
            self.memories_used.scrollToItem(item)

    def show_found(self, found: list[FoundMemory]) -> None:
        """The list as found, the selected memory kept selected (no itemChanged: only a real
        edit emits it)."""
        current = self.memory_list.currentItem()
        selected = current.data(Qt.ItemDataRole.UserRole) if current else None
        self.memory_list.blockSignals(True)
        self.memory_list.clear()
        for entry in found:
            item = self._item(entry)
            self.memory_list.addItem(item)
            if entry.memory.text == selected:
                self.memory_list.setCurrentItem(item)
        self.memory_list.blockSignals(False)
        self._on_current_item_changed(self.memory_list.currentItem(), None)

    @staticmethod
    def _item(entry: FoundMemory) -> QListWidgetItem:
        memory = entry.memory
        item = QListWidgetItem(memory.text)
        item.setData(Qt.ItemDataRole.UserRole, memory.text)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        when = window_i18n.when(memory.updated_at)
        unknown = QCoreApplication.translate("MemoriesTab", "unknown model")
        tip = QCoreApplication.translate("MemoriesTab", "Source: {0} · updated {1} · {2}").format(
            memory.source, when, memory.embedder or unknown
        )
        if entry.similarity is not None:
            item.setText(f"{memory.text}    ({window_i18n.number(entry.similarity, 2)})")
            item.setData(Qt.ItemDataRole.UserRole + 1, entry.similarity)
        if not memory.searchable:
            item.setForeground(Qt.GlobalColor.gray)
            tip += "\n" + QCoreApplication.translate(
                "MemoriesTab", "Not searched until re-embedded ({0}-d, {1})"
            ).format(memory.dimension, memory.embedder or unknown)
        item.setToolTip(tip)
        return item

    def show_status(self, status: MemoryStatus, reembedding: bool) -> None:
        """How many memories and how they are recalled, or why recall is limited (then
        "Re-embed all", unless it runs)."""
        stats = status.stats
        if status.recall_limited:
            text = status.limited_recall_message()
        else:
            count = (
                QCoreApplication.translate("MemoriesTab", "1 memory")
                if stats.total == 1
                else QCoreApplication.translate("MemoriesTab", "{0} memories").format(stats.total)
            )
            text = QCoreApplication.translate(
                "MemoriesTab", "{0} · recall at similarity ≥ {1} ({2})"
            ).format(count, window_i18n.number(status.recall_threshold, 2), status.embedder)
        self._set_status(text, limited=status.recall_limited)
        self.reembed_all.setVisible(status.recall_limited and not reembedding)

    def show_open_failed(self, message: str) -> None:
        self._set_status(
            QCoreApplication.translate("MemoriesTab", "The memories cannot be opened: {0}").format(
                message
            ),
            limited=True,
        )

    def _set_status(self, text: str, limited: bool) -> None:
        self.memory_status.setText(text)
        self.memory_status.setProperty("limited", "true" if limited else "false")
        _repolish(self.memory_status)

    def notice(self, text: str, error: bool = False) -> None:
        self.memory_notice.setText(text)
        self.memory_notice.setProperty("error", "true" if error else "false")
        _repolish(self.memory_notice)

    def show_undo(self, description: str | None) -> None:
        """Undo offers the last change (``description``), or nothing (None)."""
        self.memory_undo.setEnabled(description is not None)
        if description is not None:
            self.memory_undo.setToolTip(
                QCoreApplication.translate("MemoriesTab", "Undo {0} (Ctrl+Z)").format(description)
            )

    def show_reembedding(self) -> None:
        """Re-embedding started: its progress (busy until the first count) and Cancel."""
        self.reembed_all.setVisible(False)
        self.reembed_progress.setRange(0, 0)
        self.reembed_progress.setVisible(True)
        self.reembed_cancel.setVisible(True)

    def show_reembed_progress(self, done: int, total: int) -> None:
        self.reembed_progress.setRange(0, max(total, 1))
        self.reembed_progress.setValue(done)
        self.reembed_progress.setFormat(
            QCoreApplication.translate("MemoriesTab", "{0} of {1} re-embedded").format(done, total)
        )

    def hide_reembedding(self) -> None:
        self.reembed_progress.setVisible(False)
        self.reembed_cancel.setVisible(False)


def _repolish(widget: QWidget) -> None:
    """A style-sheet property changed: the widget is drawn by it again."""
    widget.style().unpolish(widget)
    widget.style().polish(widget)
