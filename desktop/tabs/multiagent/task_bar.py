"""The top of the multi-agent tab: the task, Run / Cancel / Resume, the model, the phase line.

It draws what the state says — which buttons may act (one run at a time, on the session
shown), the phase the session shown is in and where it stopped, the progress bar — and
tells the controller what the user pressed through its signals.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from backends.multiagent import Session, status_of
from backends.services import ModelChoices
from desktop.model_picker import ModelPicker
from desktop.tabs.multiagent.state import Bar, MultiAgentState
from desktop.tabs.multiagent.words import (
    STEPS,
    phase_name,
    short,
    status_color,
    status_name,
    translate,
)
from desktop.workers import WorkerPool


class TaskBar(QWidget):
    """The task field and its buttons, the phase line and the progress bar."""

    #: Run pressed, or Enter in the task field
    run_requested = Signal()
    cancel_requested = Signal()
    resume_requested = Signal()

    def __init__(
        self,
        state: MultiAgentState,
        colors: dict[str, str],
        models: ModelChoices | None,
        workers: WorkerPool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.state = state
        #: the tab's colours (the tab refreshes them in place on a theme switch)
        self.colors = colors
        self._build(models, workers)
        self._connect_signals()

    def _build(self, models: ModelChoices | None, workers: WorkerPool) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        self.task_input = QLineEdit()
        self.task_input.setObjectName("task_input")
        self.task_input.setPlaceholderText(
            translate(
                "MultiAgentTab",
                "Describe a task for the team (planner, coder, researcher, reviewer)…",
            )
        )
        top.addWidget(self.task_input, 1)
        self.run_button = QPushButton(translate("MultiAgentTab", "Run"))
        self.run_button.setObjectName("run_task")
        self.run_button.setDefault(True)
        self.run_button.setEnabled(False)
        top.addWidget(self.run_button)
        self.cancel_button = QPushButton(translate("MultiAgentTab", "Cancel"))
        self.cancel_button.setObjectName("cancel_task")
        self.cancel_button.setEnabled(False)
        top.addWidget(self.cancel_button)
        self.resume_button = QPushButton(translate("MultiAgentTab", "Resume"))
        self.resume_button.setObjectName("resume_task")
        self.resume_button.setToolTip(
            translate("MultiAgentTab", "Continue the selected unfinished session")
        )
        self.resume_button.setEnabled(False)
        top.addWidget(self.resume_button)
        self.model_picker: ModelPicker | None = None
        if models is not None:
            self.model_picker = ModelPicker(models, workers, self)
            top.addWidget(self.model_picker)
        layout.addLayout(top)

        status = QHBoxLayout()
        self.phase_label = QLabel()
        self.phase_label.setObjectName("phase")
        self.phase_label.setTextFormat(Qt.TextFormat.RichText)
        status.addWidget(self.phase_label, 1)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("task_progress")
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.setVisible(False)
        status.addWidget(self.progress_bar)
        layout.addLayout(status)
        self.show_phase(None)

    def _connect_signals(self) -> None:
        self.run_button.clicked.connect(self.run_requested)
        self.task_input.returnPressed.connect(self.run_requested)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.resume_button.clicked.connect(self.resume_requested)
        self.state.buttons_changed.connect(self._on_buttons_changed)
        self.state.phase_changed.connect(self._on_phase_changed)
        self.state.bar_changed.connect(self._on_bar_changed)

    # -- the buttons ----------------------------------------------------------------------
    def _on_buttons_changed(self) -> None:
        state = self.state
        busy = state.busy()
        self.run_button.setEnabled(state.ready and not busy)
        # The text is being turned into a session: it must not change (or be lost) meanwhile.
        self.task_input.setReadOnly(state.starting)
        running = state.running and not state.run_cancelled
        task = short(state.running_task)
        # Cancel acts on the session shown, like every button here: a run going on behind
        # another session is cancelled by showing it first (the tooltip says which it is).
        self.cancel_button.setEnabled(running and state.run_is_shown())
        if not running:
            tip = translate("MultiAgentTab", "Cancel the running session")
        elif state.run_is_shown():
            tip = translate("MultiAgentTab", "Cancel this session: {0}").format(task)
        else:
            tip = translate(
                "MultiAgentTab",
                "Another session is running: {0}. Select it in the list to cancel it.",
            ).format(task)
        self.cancel_button.setToolTip(tip)
        self.run_button.setToolTip(
            translate("MultiAgentTab", "A session is running: one at a time")
            if busy
            else translate("MultiAgentTab", "Run the task")
        )
        self.resume_button.setEnabled(state.can_resume())
        current = state.current
        run_state = state.states.get(current.session_id) if current is not None else None
        if run_state is not None and run_state.kind == "running elsewhere":
            pid = run_state.pid
            self.resume_button.setToolTip(
                translate(
                    "MultiAgentTab",
                    "Another Custodia process is running this session ({0}); wait for it "
                    "to finish, or stop it, then Refresh",
                ).format(translate("MultiAgentTab", "pid {0}").format(pid) if pid else "")
            )
        else:
            self.resume_button.setToolTip(
                translate("MultiAgentTab", "Continue the selected unfinished session")
            )

    # -- the phase line -------------------------------------------------------------------
    def _on_phase_changed(self, session: Session | None) -> None:
        self.show_phase(session)

    def show_phase(self, session: Session | None) -> None:
        if session is None:
            self.phase_label.setText(translate("MultiAgentTab", "Phase: no session selected"))
            self.phase_label.setProperty("phase", "")
            self.phase_label.setProperty("stopped_at", "")
            return
        phase = session.phase
        self.phase_label.setProperty("phase", phase)
        reached = STEPS.index(phase) if phase in STEPS else _last_step(session)
        stopped = self._stopped(session)
        self.phase_label.setProperty("stopped_at", STEPS[reached] if stopped else "")
        parts = [self._step_text(session, index, reached, stopped) for index in range(len(STEPS))]
        text = translate("MultiAgentTab", "Phase: {0}").format(" → ".join(parts))
        run_state = self.state.states.get(session.session_id)
        if run_state is not None and run_state.kind == "running elsewhere" and not session.finished:
            who = (
                translate("MultiAgentTab", "pid {0}").format(run_state.pid)
                if run_state.pid is not None
                else ""
            )
            text += " " + translate(
                "MultiAgentTab", "<i>(running in another Custodia process {0})</i>"
            ).format(who)
        self.phase_label.setText(text)

    def _stopped(self, session: Session) -> str:
        """Where it stopped, and why: cancelled / failed, or a dead process left it
        (interrupted); "" while it goes on or once it is done."""
        phase = session.phase
        if phase in ("failed", "cancelled"):
            return phase_name(phase)
        if phase in STEPS[:-1] and not self.state.is_ours(session.session_id):
            run_state = self.state.states.get(session.session_id)
            if run_state is not None and run_state.kind == "interrupted":
                return translate("MultiAgentTab", "interrupted")
        return ""

    def _step_text(self, session: Session, index: int, reached: int, stopped: str) -> str:
        step, phase, c = STEPS[index], session.phase, self.colors
        name = phase_name(step)
        if stopped and index == reached:
            return f"<b style='color:{c['error']}'>✕ {name} ({stopped})</b>"
        if step == phase == "done":
            status = status_of(session.data)
            return f"<b style='color:{status_color(c, status)}'>● {status_name(status)}</b>"
        if step == phase:
            return f"<b>● {name}</b>"
        if index < reached:
            return f"<span style='color:{c['ok']}'>✓ {name}</span>"
        return f"<span style='color:{c['faint']}'>○ {name}</span>"

    # -- the progress bar -----------------------------------------------------------------
    def _on_bar_changed(self, bar: Bar) -> None:
        self.progress_bar.setRange(0, bar.maximum)
        self.progress_bar.setValue(bar.value)
        self.progress_bar.setToolTip(bar.tip)
        self.progress_bar.setVisible(bar.visible)


def _last_step(session: Session) -> int:
    phases = [e.get("phase") for e in session.events if e.get("kind") == "phase"]
    last = next((p for p in reversed(phases) if p in STEPS), "planning")
    return STEPS.index(str(last))
