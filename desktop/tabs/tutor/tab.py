"""The tutor tab itself: who asks, the knowledge base's status, the thread and the question
(the Send/Stop row), the sources and the entity graph, and every job they start.

The thread's HTML is :mod:`~desktop.tabs.tutor.rendering`'s, the entity graph
:mod:`~desktop.tabs.tutor.graph`'s. Every store and model call runs through the worker pool;
this module only draws and wires.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends.progress import Progress
from backends.services import Lazy, ModelChoices
from backends.tutor import GraphView, ImportReport, Status, Turn, TutorService
from desktop.model_picker import ModelPicker
from desktop.send_row import SendRow
from desktop.tabs.tutor.graph import EntityGraph
from desktop.tabs.tutor.rendering import (
    CITE_SCHEME,
    AnswerLabels,
    question_html,
    render_failed,
    render_thread,
    render_turn,
    render_waiting,
)
from desktop.workers import Emit, JobHandle, WorkerPool

DEFAULT_USER = "student"

_STYLE = """
QLabel#degraded_notice { background: #fff4d6; border: 1px solid #e3c16f; border-radius: 4px;
                         padding: 4px; color: #6b4a00; }
QLabel#tutor_notice { color: #666; font-size: 11px; }
QLabel#tutor_status[error="true"] { color: #b00020; }
"""


class TutorTab(QWidget):
    """Ask, read the cited answer, see where each passage came from and why."""

    #: the knowledge base is indexed and questions can be asked (the :class:`Status`)
    ready = Signal(object)
    #: a turn was answered, shown and audited (the :class:`Turn`)
    answered = Signal(object)
    #: an import finished (the :class:`ImportReport`)
    imported = Signal(object)

    def __init__(
        self,
        service: Lazy[TutorService],
        models: ModelChoices | None,
        workers: WorkerPool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("tutor")
        #: this tab's service, built on first use (only ever inside a worker job)
        self.service = service
        #: which model it answers with (none: no picker; it keeps the model it was built with)
        self.models = models
        self.workers = workers
        self.status: Status | None = None
        self.turn: Turn | None = None
        self._prepare: JobHandle | None = None
        self._ask: JobHandle | None = None
        self._importing: JobHandle | None = None
        self._streamed = ""
        self._started = False
        #: this thread's earlier turns, rendered (newest last); New thread clears it
        self._thread: list[str] = []
        #: what the thread's last question was understood as, and whose it was: the next
        #: question of the same user may follow it up (another user's never does: their
        #: words would be searched, shown and sealed in this user's record)
        self._understood = ""
        self._understood_user = ""
        #: whether the notes covered it (after an uncovered one, only "and …?" follows it)
        self._understood_covered = True
        self._asking = ""
        self._answered: Turn | None = None
        #: this question's composed answer, shown (and audited) while the model drafts
        self._composed: Turn | None = None
        self._imported: ImportReport | None = None
        self._build()
        # on the labels only: a style sheet on the whole tab would keep its views light when
        # the window turns dark (a widget under a style sheet keeps the palette it was given)
        for label in (
            self.degraded_notice,
            self.tutor_status,
            self.findChild(QLabel, "tutor_notice"),
        ):
            if label is not None:
                label.setStyleSheet(_STYLE)
        self._connect_signals()

    # -- construction ----------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)

        top = QHBoxLayout()
        who = QLabel(self.tr("User:"))
        top.addWidget(who)
        self.scope = QComboBox()
        self.scope.setObjectName("scope")
        self.scope.setEditable(True)
        self.scope.setInsertPolicy(QComboBox.InsertPolicy.InsertAtTop)
        self.scope.setMinimumContentsLength(14)
        self.scope.addItem(DEFAULT_USER)
        self.scope.setToolTip(
            self.tr("Who is asking: the shared notes and this user's own notes are searched")
        )
        who.setBuddy(self.scope)
        top.addWidget(self.scope)
        self.tutor_status = QLabel(self.tr("The knowledge base is indexed when first shown."))
        self.tutor_status.setObjectName("tutor_status")
        self.tutor_status.setWordWrap(True)
        top.addWidget(self.tutor_status, 1)
        self.tutor_progress = QProgressBar()
        self.tutor_progress.setObjectName("tutor_progress")
        self.tutor_progress.setMinimumWidth(140)
        self.tutor_progress.setMaximumWidth(220)
        self.tutor_progress.setVisible(False)
        top.addWidget(self.tutor_progress)
        self.import_notes = QPushButton(self.tr("Import notes…"))
        self.import_notes.setObjectName("import_notes")
        self.import_notes.setToolTip(
            self.tr("Add your own Markdown or text notes to this user's scope")
        )
        self.import_notes.setEnabled(False)
        top.addWidget(self.import_notes)
        self.open_inspector = QPushButton(self.tr("Open inspector"))
        self.open_inspector.setObjectName("open_inspector")
        self.open_inspector.setToolTip(self.tr("Review the audit log of every turn"))
        top.addWidget(self.open_inspector)
        self.model_picker: ModelPicker | None = None
        if self.models is not None:
            self.model_picker = ModelPicker(self.models, self.workers, self)
            top.addWidget(self.model_picker)
        layout.addLayout(top)

        self.degraded_notice = QLabel("")
        self.degraded_notice.setObjectName("degraded_notice")
        self.degraded_notice.setWordWrap(True)
        self.degraded_notice.setVisible(False)
        layout.addWidget(self.degraded_notice)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.setObjectName("tutor_splitter")
        splitter.addWidget(self._build_conversation())
        splitter.addWidget(self._build_sources())
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)

        notice = QLabel(self.tr("For study, not for clinical decisions."))
        notice.setObjectName("tutor_notice")
        layout.addWidget(notice)

    def _build_conversation(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.answer = QTextBrowser()
        self.answer.setObjectName("answer")
        self.answer.setOpenLinks(False)
        self.answer.setOpenExternalLinks(False)
        self.answer.setPlaceholderText(
            self.tr("Ask a study question. Answers cite their notes: click a citation to read it.")
        )
        layout.addWidget(self.answer, 1)
        self.send_row = SendRow(
            input_name="question",
            send_name="ask",
            stop_name="stop_answer",
            send_text=self.tr("Ask"),
            stop_text=self.tr("Stop"),
            placeholder=self.tr("Question (Enter to ask)…"),
        )
        self.question = self.send_row.input
        self.ask = self.send_row.send_button
        self.stop = self.send_row.stop_button
        self.rephrase = QPushButton(self.tr("Ask the model to rephrase"))
        self.rephrase.setObjectName("rephrase")
        self.rephrase.setToolTip(
            self.tr(
                "Ask the chat model for its own answer to the last question: it is shown "
                "only if every sentence is supported by your notes"
            )
        )
        self.rephrase.setEnabled(False)
        self.send_row.add_widget(self.rephrase)
        self.new_thread = QPushButton(self.tr("New thread"))
        self.new_thread.setObjectName("new_thread")
        self.new_thread.setToolTip(
            self.tr("Clear the earlier questions from view (every turn stays in the audit log)")
        )
        self.send_row.add_widget(self.new_thread)
        layout.addWidget(self.send_row)
        return box

    def _build_sources(self) -> QWidget:
        box = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        layout = QVBoxLayout(top)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel(self.tr("<b>Sources</b>")))
        self.sources = QTreeWidget()
        self.sources.setObjectName("sources")
        self.sources.setHeaderLabels([self.tr("#"), self.tr("Note"), self.tr("Found by")])
        self.sources.setRootIsDecorated(False)
        self.sources.setWordWrap(True)
        header = self.sources.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        layout.addWidget(self.sources, 1)
        self.source_text = QPlainTextEdit()
        self.source_text.setObjectName("source_text")
        self.source_text.setReadOnly(True)
        self.source_text.setPlaceholderText(self.tr("The selected passage appears here."))
        self.source_text.setMaximumHeight(150)
        layout.addWidget(self.source_text)
        box.addWidget(top)

        self.graph = EntityGraph()
        self.graph_scene = self.graph.scene
        self.graph_view = self.graph.graph_view
        box.addWidget(self.graph)
        return box

    def _connect_signals(self) -> None:
        self.send_row.send_requested.connect(self._on_send_requested)
        self.send_row.stop_requested.connect(self._on_stop_requested)
        self.answer.anchorClicked.connect(self._on_answer_anchor_clicked)
        self.new_thread.clicked.connect(self._on_new_thread_clicked)
        self.rephrase.clicked.connect(self._on_rephrase_clicked)
        self.sources.currentItemChanged.connect(self._on_sources_current_item_changed)
        self.open_inspector.clicked.connect(self._on_open_inspector_clicked)
        self.import_notes.clicked.connect(self._on_import_notes_clicked)

    # -- first use: index the knowledge base ------------------------------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.start()

    def start(self) -> None:
        """Index the knowledge base (once; called when the tab is first shown)."""
        if self._started:
            return
        self._started = True
        service = self.service

        def job(progress: Progress, emit: Emit) -> Status:
            return service.get().prepare(progress)

        self.tutor_status.setText(self.tr("Indexing the study notes…"))
        self.tutor_progress.setVisible(True)
        self.tutor_progress.setRange(0, 0)
        self._prepare = self.workers.start(
            "tutor: prepare",
            job,
            connect={
                "progress": self._on_job_progress,
                "succeeded": self._on_prepare_succeeded,
                "failed": self._on_prepare_failed,
                "finished": self._on_prepare_finished,
            },
        )

    def _on_job_progress(self, done: int, total: int, message: str) -> None:
        self.tutor_progress.setVisible(True)
        self.tutor_progress.setRange(0, max(total, 0))
        self.tutor_progress.setValue(min(done, total))
        self.tutor_progress.setFormat("%v/%m")  # the words go in the tooltip: the bar is narrow
        self.tutor_progress.setToolTip(message)

    def _on_prepare_succeeded(self, status: Status) -> None:
        self._show_status(status)
        self.send_row.set_ready(True)
        self.import_notes.setEnabled(True)

    def _on_prepare_failed(self, message: str, environment: bool) -> None:
        self._error(self.tr("The knowledge base could not be opened: {0}").format(message))
        self._started = False  # showing the tab again retries

    def _on_prepare_finished(self) -> None:
        self._prepare = None
        self.tutor_progress.setVisible(False)
        if self.status is not None and self.send_row.ready:
            self.ready.emit(self.status)

    def _show_status(self, status: Status) -> None:
        self.status = status
        text = self.tr("{0} notes · {1} passages · {2} entities").format(
            status.documents, status.chunks, status.entities
        )
        unavailable: list[str] = []
        if not status.vector_ok:
            text += " · " + self.tr("vectors unavailable")
            unavailable.append(f"vector: {status.vector_message}")
        if status.graph_ok:
            text += " · " + self.tr("graph: {0} relations").format(status.graph_relations)
        else:
            text += " · " + self.tr("graph unavailable")
            unavailable.append(f"graph: {status.graph_message}")
        if unavailable:
            self._show_degraded(unavailable)
        self.tutor_status.setText(text)
        self.tutor_status.setProperty("error", "false")
        self._repolish(self.tutor_status)
        current = self.current_user()
        known = [self.scope.itemText(i) for i in range(self.scope.count())]
        for user in status.users:
            if user not in known:
                self.scope.addItem(user)
        self.scope.setCurrentText(current)

    def _error(self, text: str) -> None:
        self.tutor_status.setText(text)
        self.tutor_status.setProperty("error", "true")
        self._repolish(self.tutor_status)

    @staticmethod
    def _repolish(widget: QWidget) -> None:
        widget.style().unpolish(widget)
        widget.style().polish(widget)

    def current_user(self) -> str:
        return self.scope.currentText().strip() or DEFAULT_USER

    # -- asking ------------------------------------------------------------------------------
    def _on_rephrase_clicked(self) -> None:
        """Ask the model to reword the last answer (AL1: a model whose drafts rarely pass is
        otherwise not asked). Its draft replaces the answer only when it passes."""
        turn = self.turn
        if turn is None or self._ask is not None:
            return
        self.question.setText(turn.question)
        if self._thread:  # the last turn is asked again: it is shown once
            self._thread.pop()
        follows = turn.retrieval.follows
        self._ask_question(True, follows, True, rephrases=turn.audit_seq)

    def _on_send_requested(self, question: str) -> None:
        """Enter or Ask: :meth:`_ask_question` reads the box (Rephrase fills it too)."""
        user = self.current_user()
        earlier = self._understood if self._understood_user == user else ""
        self._ask_question(None, earlier, self._understood_covered)

    def _ask_question(
        self, draft: bool | None, earlier: str, earlier_covered: bool, rephrases: int = 0
    ) -> None:
        """Ask in a worker: the composed answer first (audited, then shown at once), then —
        when the model's drafts pass often enough, or the user asked — the model's draft as
        a turn of its own, which replaces it only when every sentence passes (AL1)."""
        question = self.question.text().strip()
        if not question or self._ask is not None or not self.send_row.ready:
            return
        user = self.current_user()
        service = self.service

        def job(progress: Progress, emit: Emit) -> Turn:
            tutor = service.get()
            seq = rephrases
            if not rephrases:
                composed = tutor.ask(
                    question,
                    user,
                    on_retrieved=lambda retrieval: emit(("retrieved", retrieval)),
                    earlier=earlier,
                    earlier_covered=earlier_covered,
                    draft=False,
                )
                emit(("composed", composed))  # audited: shown at once
                covered = composed.grounding is None or composed.grounding.covered
                if not covered or composed.retrieval_only or progress.cancelled:
                    return composed
                if not (draft or tutor.wants_draft()):
                    return composed
                seq = composed.audit_seq
            return tutor.ask(
                question,
                user,
                on_token=emit,
                should_stop=lambda: progress.cancelled,
                earlier=earlier,
                earlier_covered=earlier_covered,
                draft=True,
                rephrases=seq,
            )

        self._streamed = ""
        self._asking = question
        self._composed = None
        self.tutor_status.setToolTip("")
        self._show_current(render_waiting(question, self.tr("Searching your notes…"), self._thread))
        self.question.clear()  # asked: the box is for the next one (restored if it fails)
        self.tutor_status.setText(self.tr("Answering…"))  # not the last turn's record number
        self.sources.clear()
        self.source_text.clear()
        self.graph.clear()  # the last question's entities are not this one's
        self.degraded_notice.setVisible(False)
        self._ask = self.workers.start(
            "tutor: ask",
            job,
            connect={
                "item": self._on_ask_item,
                "succeeded": self._on_ask_succeeded,
                "failed": self._on_ask_failed,
                "cancelled": self._on_ask_cancelled,
                "finished": self._on_ask_finished,
            },
        )
        self.send_row.set_busy(True)
        self.rephrase.setEnabled(False)

    def _on_ask_item(self, piece: object) -> None:
        if isinstance(piece, tuple) and piece and piece[0] == "retrieved":
            self._show_sources(piece[1].passages, ())
            self._show_current(
                render_waiting(
                    self._asking,
                    self.tr("Found {0} passages; checking what they say…").format(
                        len(piece[1].passages)
                    ),
                    self._thread,
                )
            )
            return
        if isinstance(piece, tuple) and piece and piece[0] == "composed":
            self._show_composed(piece[1])
            return
        # the model's draft is not shown while it streams (nothing unchecked or unaudited is
        # on screen): only that it is being written, and how far
        self._streamed += str(piece)
        if self._composed is not None:
            self._show_composed(self._composed)
            return
        self._show_current(
            render_waiting(
                self._asking,
                self.tr(
                    "The model is drafting an answer ({0} words so far). It is checked against "
                    "your notes before anything is shown."
                ).format(len(self._streamed.split())),
                self._thread,
            )
        )

    def _show_composed(self, turn: Turn) -> None:
        """The composed answer (audited) at once; below it, while the model drafts its own
        wording, how far it is — the draft itself is shown only once checked."""
        self._composed = turn
        self.turn = turn
        current = render_turn(turn, self._answer_labels())
        if self._ask is not None and turn.grounding is not None and turn.grounding.covered:
            drafting = self.tr(
                "The model may reword this answer ({0} words so far): its draft replaces it "
                "only if every sentence is supported by your notes."
            ).format(len(self._streamed.split()))
            current += f'<p style="color:#757575"><i>{html.escape(drafting)}</i></p>'
        self._show_current(render_thread([*self._thread, current]))
        self._show_sources(turn.passages, turn.cited)
        self.draw_graph(turn.retrieval.graph)
        self._show_degraded(list(turn.degraded))
        self.tutor_status.setText(
            self.tr("Recorded in the audit log as #{0}.").format(turn.audit_seq)
        )
        self.tutor_status.setProperty("error", "false")
        self._repolish(self.tutor_status)

    def _show_current(self, html_text: str) -> None:
        self.answer.setHtml(html_text)
        bar = self.answer.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _show_sources(self, passages: Iterable[Any], cited: tuple[int, ...]) -> None:
        """The passages found (a retrieval's, or a turn's), the cited ones in bold (each a
        ``backends.tutor`` passage: its number, title, source, chunk and why it was found)."""
        self.sources.clear()
        for passage in passages:
            item = QTreeWidgetItem([f"[{passage.number}]", passage.title, passage.why()])
            item.setData(0, Qt.ItemDataRole.UserRole, passage.number)
            item.setToolTip(1, f"{passage.source}\n{passage.chunk_id}")
            item.setToolTip(2, passage.why())
            if passage.number in cited:
                font = item.font(1)
                font.setBold(True)
                item.setFont(1, font)
            self.sources.addTopLevelItem(item)

    def _on_new_thread_clicked(self) -> None:
        if self._ask is not None:
            return
        self._thread.clear()
        self._understood = self._understood_user = ""
        self.answer.clear()
        self.sources.clear()
        self.source_text.clear()
        self.graph.clear()

    def show_thread(self, turns: list[tuple[str, str]]) -> None:
        """A kept thread's turns (question, answer as shown), read back from the audit log;
        the next question continues it (desktop/thread_list.py)."""
        if self._ask is not None:
            return
        self._on_new_thread_clicked()
        self._thread[:] = [question_html(q) + f"<p>{html.escape(a)}</p>" for q, a in turns]
        self._show_current(render_thread(self._thread))

    def _on_ask_succeeded(self, turn: Turn) -> None:
        self._composed = None
        self.turn = turn
        self._answered = turn
        current = render_turn(turn, self._answer_labels())
        self._show_current(render_thread([*self._thread, current]))
        self._thread.append(render_turn(turn, self._answer_labels(), sources=False))
        self._understood = turn.retrieval.understood
        self._understood_user = turn.retrieval.user
        self._understood_covered = turn.grounding is None or turn.grounding.covered
        self.answer.setProperty("mode", turn.grounding.mode if turn.grounding else "")
        self._show_sources(turn.passages, turn.cited)
        self.draw_graph(turn.retrieval.graph)
        self._show_degraded(list(turn.degraded))
        if turn.stopped:
            audited = self.tr("Stopped; recorded in the audit log as #{0}.")
        else:
            audited = self.tr("Recorded in the audit log as #{0}.")
        self.tutor_status.setText(audited.format(turn.audit_seq))
        self.tutor_status.setProperty("error", "false")
        self._repolish(self.tutor_status)

    def _answer_labels(self) -> AnswerLabels:
        return AnswerLabels(
            sources=self.tr("Sources"),
            searched=self.tr("Passages searched — none of them answers this question"),
            model_answer=self.tr("The model's own answer — not shown as fact ({0})"),
            unsupported=self.tr("unsupported by your notes"),
            supported=self.tr("supported"),
        )

    def _method_name(self, method: str) -> str:
        """A retrieval method ("vector", "graph") in the user's words."""
        names = {
            "graph": self.tr("graph", "retrieval method"),
            "vector": self.tr("vector", "retrieval method"),
            "keyword": self.tr("keyword", "retrieval method"),
            "multilingual": self.tr("multilingual", "retrieval method"),
        }
        return names.get(method, method)

    def _show_degraded(self, lines: list[str]) -> None:
        """Say which retrieval methods could not run; the details in the tooltip."""
        if not lines:
            self.degraded_notice.setVisible(False)
            return
        methods = sorted({line.split(":", 1)[0] for line in lines})
        shown = [self._method_name(m) for m in methods]
        if methods == ["graph"]:
            text = self.tr(
                "Degraded retrieval: the graph is unavailable, so answers come from vector and "
                "keyword retrieval only (hover for details)."
            )
        else:
            text = self.tr(
                "Degraded retrieval: {0} unavailable, so answers come from the other "
                "retrieval methods only (hover for details)."
            ).format(", ".join(shown))
        self.degraded_notice.setText(text)
        tips = []
        for line in lines:  # "graph: why" (the method stays English in the turn)
            method, colon, why = line.partition(": ")
            tips.append(f"{self._method_name(method)}: {why}" if colon else line)
        self.degraded_notice.setToolTip("\n".join(tips))
        self.degraded_notice.setVisible(True)

    def _on_ask_failed(self, message: str, environment: bool) -> None:
        if environment:
            self._error(message)
        else:
            self._error(self.tr("Something went wrong (see the log): {0}").format(message))
        if self._ask is not None and self._composed is not None:
            # the composed answer was recorded and stays; the model's draft was not
            composed, self._composed = self._composed, None
            self._streamed = ""
            self._on_ask_succeeded(composed)
            self._error(
                self.tr("The model's draft was not recorded, so it is not shown: {0}").format(
                    message
                )
            )
            return
        if not self.question.text() and self._asking:
            self.question.setText(self._asking)  # not answered: asked again in one click
        if self._ask is not None and self._asking:
            # as the CLI: nothing that was not audited stays on screen — no draft, no quote,
            # no sources (issue 25: the draft was kept under "could not be recorded")
            self._streamed = ""
            self.sources.clear()
            self.source_text.clear()
            self.graph.clear()
            self._show_current(
                render_failed(
                    self._asking,
                    self.tr("Not answered: the turn was not recorded, so nothing is shown."),
                    message,
                    self._thread,
                )
            )

    def _on_ask_cancelled(self) -> None:
        self.tutor_status.setText(self.tr("Stopped."))

    def _on_ask_finished(self) -> None:
        self._ask = None
        self.send_row.set_ready(self.status is not None)
        self.send_row.set_busy(False)
        # (a question the notes do not cover is not put to the model at all)
        shown = self.turn
        rewordable = (
            shown is not None
            and shown.grounding is not None
            and shown.grounding.covered
            and not shown.retrieval_only
        )
        self.rephrase.setEnabled(rewordable and self.status is not None)
        turn, self._answered = self._answered, None
        if turn is not None:  # last, so a tester waiting on it can ask again at once
            self.answered.emit(turn)

    def _on_stop_requested(self) -> None:
        if self._ask is not None:
            self._ask.cancel()
            self.tutor_status.setText(self.tr("Stopping… (the turn is still recorded)"))

    # -- citations and sources ---------------------------------------------------------------
    def _on_answer_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() != CITE_SCHEME:
            return
        try:
            number = int(url.path() or url.toString().split(":", 1)[-1])
        except ValueError:
            return
        self.select_source(number)

    def select_source(self, number: int) -> None:
        for i in range(self.sources.topLevelItemCount()):
            item = self.sources.topLevelItem(i)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole) == number:
                self.sources.setCurrentItem(item)
                self.sources.scrollToItem(item)
                return

    def _on_sources_current_item_changed(
        self, current: QTreeWidgetItem | None, previous: QTreeWidgetItem | None
    ) -> None:
        if current is None or self.turn is None:
            self.source_text.clear()
            return
        number = current.data(0, Qt.ItemDataRole.UserRole)
        for passage in self.turn.passages:
            if passage.number == number:
                self.source_text.setPlainText(
                    f"[{passage.number}] {passage.title}\n{passage.text}\n\n"
                    + self.tr("Source: {0}").format(passage.source)
                    + "\n"
                    + self.tr("Found by: {0}").format(passage.why())
                )
                return

    # -- the graph view ----------------------------------------------------------------------
    def draw_graph(self, view: GraphView) -> None:
        """The question's entities in the middle, their related entities around them."""
        self.graph.draw(view)

    def graph_entities(self) -> list[str]:
        """Names drawn in the graph view (for testers)."""
        return self.graph.entities()

    # -- inspector and import -----------------------------------------------------------------
    def _on_open_inspector_clicked(self) -> None:
        # (the inspector is imported when first opened: start-up stays light)
        from desktop.inspector import InspectorHost, open_inspector  # noqa: PLC0415 — lazy

        window = self.window()
        if isinstance(window, QMainWindow) and isinstance(window, InspectorHost):
            open_inspector(window)

    def _on_import_notes_clicked(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self,
            self.tr("Import notes for {0}").format(self.current_user()),
            "",
            self.tr("Notes (*.md *.markdown *.txt)"),
        )
        if paths:
            self.import_paths(paths)

    def import_paths(self, paths: list[str]) -> None:
        """Import these Markdown/text files into the current user's scope (in a worker)."""
        if self._importing is not None:
            return
        user = self.current_user()
        service = self.service

        def job(progress: Progress, emit: Emit) -> ImportReport:
            tutor = service.get()
            total = ImportReport()
            for path in paths:
                total.merge(tutor.import_path(Path(path), user, progress))
            return total

        self._importing = self.workers.start(
            "tutor: import",
            job,
            connect={
                "progress": self._on_job_progress,
                "succeeded": self._on_import_succeeded,
                "failed": self._on_ask_failed,
                "finished": self._on_import_finished,
            },
        )
        self.import_notes.setEnabled(False)

    def _on_import_succeeded(self, report: ImportReport) -> None:
        problems = [
            *(self.tr("cannot read {0}").format(r) for r in report.unreadable),
            *(self.tr("skipped {0}").format(r) for r in report.skipped),
        ]
        if report.unreadable and not report.imported and not report.removed:
            self._error(
                self.tr("Nothing was imported for {0}: {1}").format(
                    self.current_user(), "; ".join(report.unreadable)
                )
            )
        else:
            self.tutor_status.setText(
                self.tr("Imported for {0}: {1}").format(self.current_user(), report.line())
            )
            self.tutor_status.setProperty("error", "false")
            self._repolish(self.tutor_status)
        self.tutor_status.setToolTip("\n".join(problems))
        self._imported = report

    def _on_import_finished(self) -> None:
        self._importing = None
        self.tutor_progress.setVisible(False)
        self.import_notes.setEnabled(self.status is not None)
        report, self._imported = self._imported, None
        if report is not None:
            self.imported.emit(report)
