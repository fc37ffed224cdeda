"""The conversations tab's history panel: the list of conversations and the search of them.

``conversation_list`` (rename in place, ``delete_conversation`` after ``confirm_delete``;
a conversation being answered is stopped first, then deleted) and ``history_search`` with
its ``search_results``, searched again after a rename, delete, import or key change, and
never naming a conversation by its id. The panel asks the tab to open what the user picks
(:attr:`HistoryPanel.conversation_chosen`, :attr:`HistoryPanel.hit_chosen`).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.conversations import ConversationAgent, IndexRow, error_text
from backends.progress import Progress
from backends.services import Lazy
from desktop import i18n as window_i18n
from desktop.tabs.conversations.jobs import TabJobs
from desktop.tabs.conversations.results import Found, Listing, listing
from desktop.tabs.conversations.words import counted, role_name, translate
from desktop.workers import Emit, Slot

ID_ROLE = Qt.ItemDataRole.UserRole
INDEX_ROLE = Qt.ItemDataRole.UserRole + 1
#: column 0 of a locked conversation (an earlier history set aside): True
LOCKED_ROLE = Qt.ItemDataRole.UserRole + 2
#: a search hit's conversation name, for messages after it is gone
NAME_ROLE = Qt.ItemDataRole.UserRole + 3
#: how many hits a search shows
SEARCH_LIMIT = 20


class HistoryPanel(QWidget):
    """New, Rename, Delete…, the list, the search and its hits (see the module doc)."""

    #: a conversation picked in the list (to open unless it is shown)
    conversation_chosen = Signal(str)
    #: a search hit picked: its conversation, at that message
    hit_chosen = Signal(str, int)
    #: New: a new conversation in the chat
    new_requested = Signal()
    #: the open conversation is being deleted: the chat starts a new one
    current_deleted = Signal()
    #: the conversation being answered is to be deleted: stop its answer first
    stop_requested = Signal()
    #: the list is to be read again, the status keeping this text
    refresh_requested = Signal(str)
    #: a rename or delete changed the list: the tab shows it
    listing_arrived = Signal(object)

    def __init__(
        self, service: Lazy[ConversationAgent], jobs: TabJobs, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.jobs = jobs
        self.state = jobs.state
        self._rows: dict[str, IndexRow] = {}
        self._populating = False
        self._pending_delete: str | None = None
        self._search_serial = 0
        #: the last search, re-run when a rename, delete or import may have changed its hits
        self._last_query = ""
        #: names of conversations opened from a search hit (said if the file is gone)
        self._hit_names: dict[str, str] = {}
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        buttons = QHBoxLayout()
        self.new_conversation = QPushButton(translate("ConversationsTab", "New"))
        self.new_conversation.setObjectName("new_conversation")
        self.rename_conversation = QPushButton(translate("ConversationsTab", "Rename"))
        self.rename_conversation.setObjectName("rename_conversation")
        self.delete_conversation = QPushButton(translate("ConversationsTab", "Delete…"))
        self.delete_conversation.setObjectName("delete_conversation")
        for button in (self.new_conversation, self.rename_conversation, self.delete_conversation):
            buttons.addWidget(button)
        layout.addLayout(buttons)
        self.conversation_list = QTreeWidget()
        self.conversation_list.setObjectName("conversation_list")
        self.conversation_list.setHeaderLabels(
            [
                translate("ConversationsTab", "Name"),
                translate("ConversationsTab", "Date"),
                translate("ConversationsTab", "Model"),
                translate("ConversationsTab", "Messages"),
            ]
        )
        self.conversation_list.setRootIsDecorated(False)
        self.conversation_list.setUniformRowHeights(True)
        self.conversation_list.setEditTriggers(
            QTreeWidget.EditTrigger.DoubleClicked | QTreeWidget.EditTrigger.EditKeyPressed
        )
        header = self.conversation_list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.conversation_list, 3)
        self.history_search = QLineEdit()
        self.history_search.setObjectName("history_search")
        self.history_search.setPlaceholderText(
            translate("ConversationsTab", "Search past conversations…")
        )
        self.history_search.setClearButtonEnabled(True)
        layout.addWidget(self.history_search)
        self.search_results = QListWidget()
        self.search_results.setObjectName("search_results")
        self.search_results.setWordWrap(True)
        layout.addWidget(self.search_results, 2)

        self.confirm_delete = QMessageBox(self)
        self.confirm_delete.setObjectName("confirm_delete")
        self.confirm_delete.setIcon(QMessageBox.Icon.Warning)
        self.confirm_delete.setWindowTitle(translate("ConversationsTab", "Delete conversation"))
        self.confirm_delete.setStandardButtons(
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
        )
        self.confirm_delete.setDefaultButton(QMessageBox.StandardButton.No)

    def _connect_signals(self) -> None:
        self.new_conversation.clicked.connect(self._on_new_conversation_clicked)
        self.rename_conversation.clicked.connect(self._on_rename_conversation_clicked)
        self.delete_conversation.clicked.connect(self._on_delete_conversation_clicked)
        self.confirm_delete.finished.connect(self._on_confirm_delete_finished)
        self.conversation_list.itemClicked.connect(self._on_conversation_list_item_clicked)
        self.conversation_list.itemActivated.connect(self._on_conversation_list_item_clicked)
        self.conversation_list.itemChanged.connect(self._on_conversation_list_item_changed)
        self.history_search.returnPressed.connect(self._on_history_search_return_pressed)
        self.search_results.itemClicked.connect(self._on_search_results_item_clicked)
        self.search_results.itemActivated.connect(self._on_search_results_item_clicked)

    # -- the list --------------------------------------------------------------------------
    def show_rows(self, shown: Listing) -> None:
        """The listed conversations, newest first; the open one is the current item."""
        self._rows = {r.id: r for r in shown.rows}
        locked_ids = set(shown.status.locked_key_ids)
        self._populating = True
        try:
            self.conversation_list.clear()
            for row in shown.rows:
                item = self._item(row, locked_ids)
                self.conversation_list.addTopLevelItem(item)
                if row.id == self.state.current_id:
                    self.conversation_list.setCurrentItem(item)
        finally:
            self._populating = False

    def _item(self, row: IndexRow, locked_ids: set[str]) -> QTreeWidgetItem:
        count = "?" if row.messages is None else str(row.messages)
        item = QTreeWidgetItem([row.name, window_i18n.iso_when(row.date), row.model, count])
        item.setData(0, ID_ROLE, row.id)
        item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight)
        if row.error and row.encrypted and row.key_id in locked_ids:
            # an earlier history set aside: kept untouched until its key is given
            item.setToolTip(
                0,
                translate(
                    "ConversationsTab",
                    "Locked: part of an earlier history, kept untouched. Give its key "
                    "or passphrase in “Set key…” to read it again.",
                ),
            )
            item.setText(0, translate("ConversationsTab", "{0} (locked)").format(row.name))
            item.setForeground(0, Qt.GlobalColor.gray)
            item.setData(0, LOCKED_ROLE, True)
        elif row.error:
            item.setToolTip(
                0,
                translate("ConversationsTab", "Cannot be read: {0}").format(error_text(row.error)),
            )
            item.setText(0, "⚠ " + row.name)
            item.setForeground(0, Qt.GlobalColor.darkRed)
        else:
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
            item.setToolTip(0, row.path)
        return item

    def select(self, conversation_id: str) -> None:
        """Make ``conversation_id`` the current item (it was opened)."""
        for row in range(self.conversation_list.topLevelItemCount()):
            item = self.conversation_list.topLevelItem(row)
            if item is not None and item.data(0, ID_ROLE) == conversation_id:
                self.conversation_list.setCurrentItem(item)

    def clear_selection(self) -> None:
        """Nothing selected nor current (a new conversation): Delete acts on nothing now."""
        self.conversation_list.clearSelection()
        self.conversation_list.setCurrentIndex(QModelIndex())

    def name(self, conversation_id: str) -> str:
        """The conversation's name as listed; never its raw id (a search hit of one that is
        gone names it as the hit did, else “this conversation”)."""
        row = self._rows.get(conversation_id)
        if row is not None:
            return row.name
        return self._hit_names.get(conversation_id) or translate(
            "ConversationsTab", "this conversation"
        )

    def _on_new_conversation_clicked(self) -> None:
        self.new_requested.emit()

    def _on_conversation_list_item_clicked(self, item: QTreeWidgetItem, column: int = 0) -> None:
        conversation_id = item.data(0, ID_ROLE)
        if not conversation_id or self.state.chatting:
            return
        row = self._rows.get(conversation_id)
        if row is not None and row.error:
            self.jobs.say(
                translate("ConversationsTab", "“{0}” cannot be read: {1}").format(
                    row.name, error_text(row.error)
                )
            )
            return
        self.conversation_chosen.emit(str(conversation_id))

    # -- rename ----------------------------------------------------------------------------
    def _on_rename_conversation_clicked(self) -> None:
        item = self.conversation_list.currentItem()
        if item is not None and item.flags() & Qt.ItemFlag.ItemIsEditable:
            self.conversation_list.editItem(item, 0)

    def _on_conversation_list_item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._populating or column != 0:
            return
        conversation_id = str(item.data(0, ID_ROLE))
        row = self._rows.get(conversation_id)
        name = item.text(0).strip()
        if row is None or not name or name == row.name:
            return
        service = self.service
        is_current = conversation_id == self.state.current_id

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            renamed = agent.rename(conversation_id, name)  # tidied, or InvalidNameError
            return listing(agent, "", title=renamed.name if is_current else "")

        self.jobs.run(
            "conversations: rename",
            job,
            {
                "succeeded": [self.listing_arrived, self._on_renamed],
                "failed": self._on_rename_failed,
            },
            doing=translate("ConversationsTab", "Renaming…"),
        )

    def _on_renamed(self, result: Any) -> None:
        self.rerun_search()  # the hits show the new name

    def _on_rename_failed(self, message: str, environment: bool) -> None:
        """The edited name was refused (the status says why): show the stored names again."""
        self.refresh_requested.emit(self.jobs.said())

    # -- delete ----------------------------------------------------------------------------
    def _selected_id(self) -> str | None:
        item = self.conversation_list.currentItem()
        value = item.data(0, ID_ROLE) if item is not None else None
        return str(value) if value else None

    def _on_delete_conversation_clicked(self) -> None:
        conversation_id = self._selected_id()
        if conversation_id is None:
            self.jobs.say(translate("ConversationsTab", "Select a conversation to delete."))
            return
        if conversation_id == self.state.delete_after_chat:  # already confirmed
            self.jobs.say(
                translate(
                    "ConversationsTab", "“{0}” is deleted as soon as its answer has stopped."
                ).format(self.name(conversation_id))
            )
            return
        self._pending_delete = conversation_id
        text = translate(
            "ConversationsTab", "Delete “{0}”? Its file is removed; this cannot be undone."
        ).format(self.name(conversation_id))
        if self.state.is_answering(conversation_id):
            text += "\n\n" + translate(
                "ConversationsTab", "Its answer is still being written: it is stopped first."
            )
        self.confirm_delete.setText(text)
        self.confirm_delete.open()

    def _on_confirm_delete_finished(self, result: int) -> None:
        conversation_id, self._pending_delete = self._pending_delete, None
        clicked = self.confirm_delete.clickedButton()
        if conversation_id is None or clicked != self.confirm_delete.button(
            QMessageBox.StandardButton.Yes
        ):
            return
        if self.state.is_answering(conversation_id):
            # deleting the file under a streaming answer broke the turn and left the tab on
            # a conversation that no longer exists: stop (Stop's path), delete when it ended
            self.state.delete_after_chat = conversation_id
            self.stop_requested.emit()
            self.jobs.say(
                translate("ConversationsTab", "Stopping the answer, then deleting “{0}”…").format(
                    self.name(conversation_id)
                )
            )
            return
        self.delete(conversation_id)

    def delete(self, conversation_id: str) -> None:
        """Delete ``conversation_id`` (confirmed): its hits go at once, the list after."""
        service = self.service
        note = translate("ConversationsTab", "Deleted “{0}”.").format(self.name(conversation_id))

        def job(progress: Progress, emit: Emit) -> Listing:
            agent = service.get()
            agent.delete(conversation_id)
            return listing(agent, note)

        if conversation_id == self.state.current_id:
            self.current_deleted.emit()
        had_hits = self._drop_hits(conversation_id)  # at once; searched again once it is gone
        succeeded: list[Slot] = [self.listing_arrived]
        if had_hits:
            succeeded.append(self._on_deleted)
        self.jobs.run(
            "conversations: delete",
            job,
            {"succeeded": succeeded, "failed": self._on_delete_failed},
            doing=translate("ConversationsTab", "Deleting…"),
        )

    def _on_deleted(self, result: Any) -> None:
        self.rerun_search()

    def _on_delete_failed(self, message: str, environment: bool) -> None:
        """The status says why; the list shows what is really there (gone already?)."""
        self.refresh_requested.emit(self.jobs.said())

    # -- search ----------------------------------------------------------------------------
    def _on_history_search_return_pressed(self) -> None:
        query = self.history_search.text().strip()
        self.search_results.clear()
        self._last_query = query
        self._search(query)

    def _drop_hits(self, conversation_id: str) -> bool:
        """Remove the hits of ``conversation_id`` (deleted); whether there were any."""
        dropped = False
        for row in reversed(range(self.search_results.count())):
            item = self.search_results.item(row)
            if item is not None and item.data(ID_ROLE) == conversation_id:
                self.search_results.takeItem(row)
                dropped = True
        return dropped

    def rerun_search(self, drop: str | None = None) -> None:
        """Hits may be stale after a rename, delete, import or key change (call it once
        that is done): drop those of ``drop`` (gone) at once, then search again for the
        shown query."""
        dropped = self._drop_hits(drop) if drop is not None else False
        if self._last_query and (self.search_results.count() > 0 or dropped):
            self._search(self._last_query, quiet=True)

    def _search(self, query: str, *, quiet: bool = False) -> None:
        if not query:
            return
        service = self.service
        self._search_serial += 1
        serial = self._search_serial

        def job(progress: Progress, emit: Emit) -> Found:
            agent = service.get()
            hits = agent.search(query, SEARCH_LIMIT)
            reasons = agent.unreadable_reasons()
            unsearched = ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))
            return Found(serial, hits, unsearched, quiet)

        self.jobs.run(
            "conversations: search",
            job,
            {"succeeded": self._on_search_succeeded},
            doing=translate("ConversationsTab", "Searching past conversations…"),
        )

    def _on_search_succeeded(self, found: Any) -> None:
        assert isinstance(found, Found)
        if found.serial != self._search_serial:
            return
        self.search_results.clear()
        for hit in found.hits:
            text = " ".join(hit.text.split())
            if len(text) > 140:
                text = text[:139] + "…"
            item = QListWidgetItem(f"{hit.name} · {role_name(hit.role)}: {text}")
            item.setToolTip(f"{window_i18n.iso_when(hit.date)} · {hit.score:.2f}")
            item.setData(ID_ROLE, hit.conversation_id)
            item.setData(INDEX_ROLE, hit.index)
            item.setData(NAME_ROLE, hit.name)
            self.search_results.addItem(item)
        if found.quiet:
            return
        if not found.hits:
            text = translate("ConversationsTab", "Nothing found.")
        else:
            text = counted(
                len(found.hits),
                translate("ConversationsTab", "1 message found"),
                translate("ConversationsTab", "{0} messages found"),
            )
        if found.unsearched:
            text += " " + translate(
                "ConversationsTab",
                "Not searched: conversations that cannot be read ({0}; marked ⚠).",
            ).format(found.unsearched)
        self.jobs.say(text)

    def _on_search_results_item_clicked(self, item: QListWidgetItem) -> None:
        conversation_id = item.data(ID_ROLE)
        index = item.data(INDEX_ROLE)
        if conversation_id and not self.state.chatting:
            self._hit_names[str(conversation_id)] = str(item.data(NAME_ROLE) or "")
            self.hit_chosen.emit(str(conversation_id), int(index))
