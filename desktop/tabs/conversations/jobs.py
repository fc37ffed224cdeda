"""The conversations tab's jobs: started in the window's worker pool, and never silent.

Every backend call of the tab goes through :meth:`TabJobs.run`, which wires the job
declaratively (``WorkerPool.start(..., connect=...)``) and adds what every job of the tab
shares: ``busy`` counts it, ``tab_activity`` says what it waits for once it has run
:data:`ACTIVITY_DELAY_MS`, ``index_progress`` follows a job that reports progress, and a
failure is said in ``tab_status`` (a write refused because the history is locked, in plain
words: the store's own are under the encryption panel's Details).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from functools import partial

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLabel, QProgressBar

from desktop import theme
from desktop.tabs.conversations.state import TabState
from desktop.tabs.conversations.words import translate
from desktop.workers import Job, JobHandle, Slot, Slots, WorkerPool

#: a job running longer than this shows what the tab is waiting for (``tab_activity``)
ACTIVITY_DELAY_MS = 200


class TabJobs(QObject):
    """Runs the tab's jobs and owns the three widgets that report on them: ``tab_status``,
    ``tab_activity`` and ``index_progress`` (the tab places them)."""

    def __init__(self, workers: WorkerPool, state: TabState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = workers
        self.state = state
        self._jobs = 0
        #: what each running job is doing, for ``tab_activity`` (job number → text)
        self._doing: dict[int, str] = {}
        self._numbers = itertools.count()
        self.tab_status = QLabel("")
        self.tab_status.setObjectName("tab_status")
        self.tab_status.setWordWrap(True)
        #: what the tab is waiting for, shown once a job has run for ACTIVITY_DELAY_MS
        self.tab_activity = QLabel("")
        self.tab_activity.setObjectName("tab_activity")
        self.tab_activity.setVisible(False)
        self.index_progress = QProgressBar()
        self.index_progress.setObjectName("index_progress")
        self.index_progress.setVisible(False)
        self._activity_timer = QTimer(self)
        self._activity_timer.setSingleShot(True)
        self._activity_timer.setInterval(ACTIVITY_DELAY_MS)
        self.theme_changed()
        self._connect_signals()

    def _connect_signals(self) -> None:
        self._activity_timer.timeout.connect(self._on_activity_timer_timeout)

    # -- running ---------------------------------------------------------------------------
    def run(
        self,
        name: str,
        job: Job,
        connect: Mapping[str, Slots],
        *,
        progress: bool = False,
        doing: str = "",
    ) -> JobHandle:
        """Start ``job`` wired to ``connect`` (``{"succeeded": slot, ...}``, after the tab's
        own bookkeeping on the same signal); ``doing`` (“Searching…”) is shown in
        ``tab_activity`` if it is still running after ACTIVITY_DELAY_MS, so no wait goes
        unexplained; ``progress`` shows it in ``index_progress``."""
        number = next(self._numbers)
        finished: list[Slot] = [self._on_job_finished]
        wiring: dict[str, list[Slot]] = {
            "failed": [self._on_job_failed],
            "finished": finished,
        }
        if doing:
            finished.append(partial(self._on_doing_finished, number))
        if progress:
            wiring["progress"] = [self._on_index_progress]
            finished.append(self._on_index_finished)
        for signal_name, slots in connect.items():
            more = list(slots) if isinstance(slots, list | tuple) else [slots]
            wiring.setdefault(signal_name, []).extend(more)
        handle = self.workers.start(name, job, connect=wiring)
        self._jobs += 1
        if doing:
            self._doing[number] = doing
            if not self._activity_timer.isActive() and not self.tab_activity.isVisible():
                self._activity_timer.start()
            elif self.tab_activity.isVisible():
                self._show_activity()
        if progress:
            self.index_progress.setRange(0, 0)
            self.index_progress.setVisible(True)
        return handle

    @property
    def busy(self) -> bool:
        """True while a job this tab started has not delivered its result yet."""
        return self._jobs > 0

    def say(self, text: str) -> None:
        """Put ``text`` in the tab's status line."""
        self.tab_status.setText(text)

    def said(self) -> str:
        """What the status line says now (kept when the list is read again after a refusal)."""
        return str(self.tab_status.text())

    def theme_changed(self) -> None:
        """The activity line stays muted on either palette."""
        self.tab_activity.setStyleSheet(f"color:{theme.colors()['muted']};")

    # -- slots -----------------------------------------------------------------------------
    def _on_job_finished(self) -> None:
        self._jobs -= 1

    def _on_job_failed(self, message: str, environment: bool) -> None:
        status = self.state.status
        if (
            environment
            and status is not None
            and status.key_problem
            and status.key_problem in message
        ):
            # the store's refusal names variables and key ids: they are under Details
            self.say(
                translate(
                    "ConversationsTab",
                    "Nothing was written: your history is locked. Give its key or passphrase "
                    "in “Set key…”, or start a new history.",
                )
            )
            return
        prefix = (
            "" if environment else translate("ConversationsTab", "Unexpected error (see the log): ")
        )
        self.say(prefix + message)

    def _on_activity_timer_timeout(self) -> None:
        self._show_activity()

    def _on_doing_finished(self, number: int) -> None:
        self._doing.pop(number, None)
        if not self._doing:
            self._activity_timer.stop()
            self.tab_activity.setVisible(False)
            self.tab_activity.setText("")
        elif self.tab_activity.isVisible():
            self._show_activity()

    def _on_index_progress(self, done: int, total: int, message: str) -> None:
        if total:
            self.index_progress.setRange(0, total)
            self.index_progress.setValue(done)
        self.index_progress.setFormat(f"%v/%m {message}")

    def _on_index_finished(self) -> None:
        self.index_progress.setVisible(False)

    def _show_activity(self) -> None:
        doing = list(dict.fromkeys(self._doing.values()))
        self.tab_activity.setText(" · ".join(doing))
        self.tab_activity.setVisible(bool(doing))
