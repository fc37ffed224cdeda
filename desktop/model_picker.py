"""The model picker each chat tab shows in its header: which model this assistant answers with.

Choosing an entry saves ``[models] <assistant> = "<key>"`` in ``custodia.toml`` and loads the
model in a worker (memory checked first); the assistant's next answer comes from it. A model
that cannot load leaves the assistant in retrieval-only mode, and the picker says why. The
list (bundled model, retrieval-only, every GGUF in the models folders) is read in a worker too.
"""

from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QPaintEvent, QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QStyle,
    QStyleOptionComboBox,
    QStylePainter,
    QWidget,
)

from backends import config as config_module
from backends.models.manage import friendly_name
from backends.models.registry import ChatChoice, ModelOption
from backends.progress import Progress
from backends.services import ModelChoices
from desktop.workers import Emit, JobHandle, WorkerPool

#: the combo box shows at least this many characters of a model's name, and at most
MIN_NAME, MAX_NAME = 12, 34


#: what :func:`describe_choice` answers for a model that cannot generate
RETRIEVAL_ONLY = "retrieval-only"


def describe_choice(choice: ChatChoice, key: str) -> tuple[str, str, bool]:
    """(name, tooltip, retrieval-only) for the model ``key`` once loaded: its friendly name
    (:func:`friendly_name`, as every place names it), or retrieval-only's and why."""
    model = choice.model
    if choice.fallback_reason:
        return friendly_name(RETRIEVAL_ONLY), choice.fallback_reason, True
    if model.retrieval_only:
        return friendly_name(RETRIEVAL_ONLY), "chosen: answers are the passages found", True
    details = model.describe()
    extra = []
    if details.get("quantisation"):
        extra.append(str(details["quantisation"]))
    if details.get("context_tokens"):
        extra.append(f"context {details['context_tokens']}")
        if details.get("context_note"):
            extra[-1] += f" ({details['context_note']})"
    return friendly_name(key), ", ".join(extra), False


class _NameCombo(QComboBox):
    """A combo box that asks for room for its current text (up to :data:`MAX_NAME`
    characters), and can shrink to :data:`MIN_NAME` characters when the window is narrow."""

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        text = self.currentText()[:MAX_NAME]
        metrics = self.fontMetrics()
        room = metrics.horizontalAdvance(text) - metrics.horizontalAdvance("x" * MIN_NAME)
        return QSize(hint.width() + max(0, room), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        """A name too long for the room left ends in "…" (it was cut mid-word)."""
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        field = self.style().subControlRect(
            QStyle.ComplexControl.CC_ComboBox,
            option,
            QStyle.SubControl.SC_ComboBoxEditField,
            self,
        )
        option.currentText = self.fontMetrics().elidedText(
            option.currentText, Qt.TextElideMode.ElideRight, field.width()
        )
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)


class ModelPicker(QWidget):
    """``Model: [combo]`` for one assistant. Object names: ``<assistant>_model_picker`` (the
    combo box) and ``<assistant>_model_state`` (what is loaded, or why not).

    It is given the assistant's :class:`~backends.services.ModelChoices`, not the container."""

    #: (assistant, short text, tooltip) once the chosen model is loaded or refused
    model_loaded = Signal(str, str, str)

    def __init__(
        self,
        choices: ModelChoices,
        workers: WorkerPool,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.assistant = assistant = choices.assistant
        self.choices = choices
        self.workers = workers
        self.setObjectName(f"{assistant}_model_row")
        self._list_job: JobHandle | None = None
        self._load_job: JobHandle | None = None
        self._filling = False
        #: the newest listing asked for: an older one that ends later is dropped
        self._list_serial = 0
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel(self.tr("Model:"))
        layout.addWidget(label)
        self.combo = _NameCombo()
        self.combo.setObjectName(f"{assistant}_model_picker")
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(MIN_NAME)
        self.combo.currentIndexChanged.connect(self._on_current_index_changed)
        label.setBuddy(self.combo)
        layout.addWidget(self.combo)
        self.state = QLabel("")
        self.state.setObjectName(f"{assistant}_model_state")
        self.state.setStyleSheet("color: #666")
        layout.addWidget(self.state)
        current = choices.current()
        self.combo.addItem(friendly_name(current), current)
        self._fit()
        self.env_var = f"CUSTODIA_{assistant.upper()}_MODEL"
        if self.env_var in os.environ:
            self.combo.setEnabled(False)
            self.combo.setToolTip(
                self.tr("Set by {0} in the environment for this session.").format(self.env_var)
            )
        else:
            self.combo.setToolTip(
                self.tr("The model this assistant answers with (saved in custodia.toml)")
            )
        self.combo.activated.connect(self._on_activated)
        self.refresh()

    # -- the list --------------------------------------------------------------------------
    def refresh(self) -> None:
        """Read the models folders again (in a worker) and list what is there."""
        choices = self.choices
        self._list_serial += 1
        serial = self._list_serial

        def job(progress: Progress, emit: Emit) -> tuple[int, list[ModelOption]]:
            return serial, choices.options()

        self._list_job = self.workers.start(
            f"{self.assistant}: list models", job, connect={"succeeded": self._on_listed}
        )

    def _on_listed(self, result: Any) -> None:
        serial, options = result
        if serial != self._list_serial:
            return  # a newer listing was asked for: it decides
        current = self.choices.current()
        self._filling = True
        try:
            self.combo.clear()
            for option in options:
                self.combo.addItem(friendly_name(option.key), option.key)
                index = self.combo.count() - 1
                if option.problem:  # listed, so the user sees it and why it cannot chat
                    self.combo.setItemData(index, option.problem, Qt.ItemDataRole.ToolTipRole)
                    model = self.combo.model()
                    if isinstance(model, QStandardItemModel):
                        model.item(index).setEnabled(False)
            found = self.combo.findData(current)
            self.combo.setCurrentIndex(max(found, 0))
        finally:
            self._filling = False

    def _on_current_index_changed(self, index: int) -> None:
        self._fit()

    def _fit(self) -> None:
        """Ask for the chosen model's whole name (it was cut to "SmolLM2-135M-Instruct ("
        at every window size); a narrow window may still shrink it to :data:`MIN_NAME`."""
        self.combo.updateGeometry()

    @property
    def current_key(self) -> str:
        return str(self.combo.currentData() or "")

    # -- choosing --------------------------------------------------------------------------
    def _on_activated(self, index: int) -> None:
        if self._filling:
            return
        key = str(self.combo.itemData(index) or "")
        if key and key != self.choices.current():
            self.choose(key)

    def choose(self, key: str) -> JobHandle:
        """Use ``key`` for this assistant from its next answer: saved, then loaded here."""
        choices, assistant = self.choices, self.assistant
        choices.use(key)
        self.state.setText(self.tr("loading {0}…").format(friendly_name(key)))
        self.state.setToolTip("")

        def job(progress: Progress, emit: Emit) -> tuple[str, str, bool, str]:
            error = ""
            try:
                choices.save(key)
            except (config_module.ConfigError, OSError) as err:
                error = f"not saved in custodia.toml: {err}"
            progress.start(1, f"loading {key}")
            shown, tip, retrieval_only = describe_choice(choices.load(), key)
            return shown, tip, retrieval_only, error

        self._load_job = self.workers.start(
            f"{assistant}: load model",
            job,
            connect={"succeeded": self._on_loaded, "failed": self._on_load_failed},
        )
        return self._load_job

    def _on_loaded(self, result: Any) -> None:
        shown, tip, retrieval_only, error = result
        if retrieval_only:
            self.state.setText(self.tr("retrieval-only — {0}").format(_short(tip)))
        else:
            self.state.setText(self.tr("ready"))
        if error:
            self.state.setText(self.state.text() + " — " + self.tr("not saved"))
        self.state.setToolTip("\n".join(t for t in (tip, error) if t))
        self.model_loaded.emit(self.assistant, shown, "\n".join(t for t in (tip, error) if t))

    def _on_load_failed(self, message: str, environment: bool) -> None:
        self.state.setText(self.tr("not loaded — {0}").format(_short(message)))
        self.state.setToolTip(message)
        self.model_loaded.emit(self.assistant, self.tr("unavailable"), message)


def _short(text: str, limit: int = 90) -> str:
    """The reason without the file's path (the tooltip has all of it)."""
    _head, sep, rest = text.partition(".gguf: ")
    text = rest if sep else text
    return text if len(text) <= limit else text[: limit - 1] + "…"
