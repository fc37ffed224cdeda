"""Settings, store check (doctor) and About dialogs."""

from __future__ import annotations

import os
import platform
from dataclasses import replace
from importlib import metadata
from typing import Any

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import QCoreApplication, QSize, Qt, qVersion
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from backends import __version__, assistants, doctor
from backends import config as config_module
from backends.config import Config
from backends.errors import ConfigError
from backends.i18n import gettext_
from backends.models import settings as generation
from backends.models.manage import BUNDLED_CONTEXT_LENGTH, BUNDLED_KEY, friendly_name
from backends.models.registry import OFFERED_BUILTINS, ModelOption
from backends.progress import Progress
from backends.services import Services
from desktop import i18n
from desktop.i18n import QT_TRANSLATE_NOOP
from desktop.tabs import short_title_of
from desktop.workers import Emit, WorkerPool


def _model_combo(name: str, keys: tuple[str, ...], current: str) -> QComboBox:
    """A model box: the models' friendly names shown (never ``gguf:…``), their keys kept;
    a key typed in (``ollama:<model>``) is taken as it is (:func:`model_key`)."""
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setEditable(True)
    for key in (*keys, *(() if not current or current in keys else (current,))):
        combo.addItem(friendly_name(key) if key else "", key)
    combo.setCurrentIndex(max(combo.findData(current), 0))
    edit = combo.lineEdit()
    if edit is not None:
        edit.setCursorPosition(0)  # a long name shows its start, not "…-Instruct (bundled)"
    return combo


def model_key(combo: QComboBox) -> str:
    """The key of the model a model box shows (a friendly name listed, or a typed key)."""
    text = combo.currentText().strip()
    index = combo.findText(text)
    data = combo.itemData(index) if index >= 0 else None
    return data if isinstance(data, str) else text


def _combo(name: str, values: tuple[str, ...], current: str, editable: bool = False) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setEditable(editable)
    if editable:  # what is typed is the value
        combo.addItems(list(values))
        if current and current not in values:
            combo.addItem(current)
        combo.setCurrentText(current)
        return combo
    for value in (*values, *(() if not current or current in values else (current,))):
        combo.addItem(i18n.config_word(value), value)  # shown in words, saved as it is
    combo.setCurrentIndex(max(combo.findData(current), 0))
    return combo


class _Pages(QScrollArea):
    """A vertical scroll area as wide as its page and, room permitting, as high: it scrolls
    only when the screen (or the window, 760×480 at least) is smaller than the page."""

    def _bar(self) -> int:
        return int(self.verticalScrollBar().sizeHint().width())

    def sizeHint(self) -> QSize:
        page = self.widget()
        if page is None:
            return super().sizeHint()
        hint = page.sizeHint()
        return QSize(hint.width() + self._bar(), hint.height())

    def minimumSizeHint(self) -> QSize:
        page = self.widget()
        if page is None:
            return super().minimumSizeHint()
        return QSize(page.minimumSizeHint().width() + self._bar(), 120)


#: settings that only a server setup fills in (the servers section is unfolded when one is)
SERVER_FIELDS = (
    "cache_backend",
    "audit_backend",
    "graph_backend",
    "redis_url",
    "postgres_dsn",
    "neo4j_uri",
    "qdrant_url",
    "chroma_url",
)


class SettingsDialog(QDialog):
    """Edits ``custodia.toml``; validates before saving. The models and generation settings
    apply from the next answer (the window calls ``Services.use_settings``); the stores,
    servers, embedder and language say "after a restart" beside them.

    Secrets (Neo4j password, conversations key) are not written to the file: they belong in
    the environment or the OS keyring.
    """

    def __init__(
        self,
        config: Config,
        parent: QWidget | None = None,
        options: list[ModelOption] | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("settings_dialog")
        self.setWindowTitle(self.tr("Settings"))
        self.config = config
        self.saved: Config | None = None
        self.fields: dict[str, QWidget] = {}
        #: ``models.<assistant>`` and ``generation.<assistant>.<setting>`` -> its widget
        self.model_fields: dict[str, QWidget] = {}
        #: under each assistant's context size: the most its model was trained on, and why
        self.context_notes: dict[str, QLabel] = {}
        #: what the model lists offer (the models folders are read by the caller, in a worker)
        self.options = [o for o in options or [] if not o.problem] or [
            ModelOption(key, label) for key, label in OFFERED_BUILTINS
        ]

        layout = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "Your data is kept in {0}. The models and their generation settings apply "
                "from each assistant's next answer; the other settings apply after a restart."
            ).format(config.home)
        )
        intro.setObjectName("settings_intro")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        # the pages scroll rather than push the buttons off a small screen (760×480)
        scroll = _Pages()
        scroll.setObjectName("settings_scroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        pages = QWidget()
        scroll.setWidget(pages)
        layout.addWidget(scroll, 1)
        columns = QHBoxLayout(pages)  # models and servers | assistants: fits a 768-pixel screen
        columns.setContentsMargins(0, 0, 0, 0)
        left = QVBoxLayout()
        columns.addLayout(left, 1)

        models = QGroupBox(self.tr("Models"))
        mform = QFormLayout(models)
        mform.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)  # a name shown whole
        offered = tuple(o.key for o in self.options)  # never "scripted": it is for testers
        chat_combo = _model_combo("chat_model", offered, config.chat_model)
        chat_combo.setMinimumContentsLength(12)
        chat_combo.setToolTip(
            self.tr(
                "Every assistant's model unless it has its own below (gguf:<path or name>, "
                "ollama:<model>, openai:<model> can be typed)"
            )
        )
        self._add(mform, "chat_model", self.tr("Chat model (default)"), chat_combo)
        chat_combo.currentIndexChanged.connect(self._on_model_changed)
        chat_combo.editTextChanged.connect(self._on_model_changed)
        embedder = _combo(
            "embedder",
            (*config_module.EMBEDDERS, "ollama:nomic-embed-text"),
            config.embedder,
            True,
        )
        embedder.setMinimumContentsLength(12)
        self._add(mform, "embedder", self.tr("Embedder (after a restart)"), embedder)
        left.addWidget(models)
        left.addWidget(self._build_servers())
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(self._build_assistants(offered))
        right.addWidget(self._build_language())
        right.addStretch(1)
        columns.addLayout(right, 1)

        self.error_label = QLabel("")
        self.error_label.setObjectName("settings_error")
        self.error_label.setStyleSheet("color: #b00020")
        self.error_label.setWordWrap(True)
        layout.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        layout.addWidget(self.buttons)
        self._mark_environment_overrides()
        self._connect_signals()

    def _build_servers(self) -> QWidget:
        """Stores and servers on their own section, folded for the embedded profile (nothing
        there is needed on one computer): applied after a restart."""
        config = self.config
        section = QWidget()
        section_layout = QVBoxLayout(section)
        section_layout.setContentsMargins(0, 0, 0, 0)
        self.servers_button = QToolButton()
        self.servers_button.setObjectName("settings_servers_button")
        self.servers_button.setText(self.tr("Stores and servers (after a restart)"))
        self.servers_button.setCheckable(True)
        self.servers_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.servers_button.setAutoRaise(True)
        section_layout.addWidget(self.servers_button)
        self.servers = QGroupBox()
        self.servers.setObjectName("settings_servers")
        section_layout.addWidget(self.servers)
        form = QFormLayout(self.servers)
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        note = QLabel(
            self.tr(
                "Each store is chosen on its own; 'server' makes a store use its server when "
                "its address is set. Applied at the next start of Custodia."
            )
        )
        note.setObjectName("servers_note")
        note.setWordWrap(True)
        form.addRow(note)
        self._add(
            form,
            "profile",
            self.tr("Profile"),
            _combo("profile", config_module.PROFILES, config.profile),
        )
        self._add(
            form,
            "cache_backend",
            self.tr("Sessions, tickets, feed"),
            _combo("cache_backend", ("", *config_module.CACHE_BACKENDS), config.cache_backend),
        )
        self._add(
            form,
            "audit_backend",
            self.tr("Audit log"),
            _combo("audit_backend", ("", *config_module.AUDIT_BACKENDS), config.audit_backend),
        )
        self._add(
            form,
            "graph_backend",
            self.tr("Graph"),
            _combo("graph_backend", ("", *config_module.GRAPH_BACKENDS), config.graph_backend),
        )
        for key, label in (
            ("redis_url", self.tr("Redis URL")),
            ("postgres_dsn", self.tr("Postgres DSN")),
            ("neo4j_uri", self.tr("Neo4j URI")),
            ("neo4j_user", self.tr("Neo4j user")),
            ("qdrant_url", self.tr("Qdrant URL (empty: local)")),
            ("chroma_url", self.tr("Chroma URL (empty: local)")),
            ("ollama_url", self.tr("Ollama URL")),
            ("openai_url", self.tr("OpenAI-compatible URL")),
        ):
            edit = QLineEdit(str(getattr(config, key)))
            edit.setObjectName(key)
            self._add(form, key, label, edit)
        timeout = QDoubleSpinBox()
        timeout.setObjectName("network_timeout")
        timeout.setRange(0.5, config_module.MAX_TIMEOUT)
        timeout.setValue(config.network_timeout)
        self._add(form, "network_timeout", self.tr("Network timeout (s)"), timeout)
        self.servers_button.toggled.connect(self._on_servers_button_toggled)
        unfolded = config.profile != "embedded" or any(
            getattr(config, key) for key in SERVER_FIELDS
        )
        self.servers_button.setChecked(unfolded)
        self._on_servers_button_toggled(unfolded)
        return section

    def _on_servers_button_toggled(self, shown: bool) -> None:
        self.servers_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        self.servers.setVisible(shown)

    def _build_language(self) -> QGroupBox:
        """Settings ▸ Language: the window's and the commands' (applied at the next start)."""
        box = QGroupBox(self.tr("Language"))
        form = QFormLayout(box)
        combo = QComboBox()
        combo.setObjectName("language")
        for value, name in i18n.language_names():
            combo.addItem(name, value)
        combo.setCurrentIndex(max(combo.findData(self.config.language), 0))
        self._add(form, "language", self.tr("Language"), combo)
        note = QLabel(self.tr("Applied at the next start of Custodia."))
        note.setObjectName("language_note")
        note.setWordWrap(True)
        form.addRow(note)
        return box

    def _build_assistants(self, offered: tuple[str, ...]) -> QGroupBox:
        """One page per assistant: its model and its generation settings."""
        box = QGroupBox(self.tr("Assistants: model and generation settings"))
        box_layout = QVBoxLayout(box)
        applied = QLabel(self.tr("Applied from each assistant's next answer."))
        applied.setObjectName("assistants_note")
        applied.setWordWrap(True)
        box_layout.addWidget(applied)
        self.assistant_tabs = QTabWidget()
        self.assistant_tabs.setObjectName("settings_assistants")
        self.assistant_tabs.setMinimumWidth(400)  # the four tabs' titles, uncut (Spanish too)
        box_layout.addWidget(self.assistant_tabs)
        for assistant in assistants.names():
            page = QWidget()
            form = QFormLayout(page)
            combo = _model_combo(
                f"models_{assistant}", ("", *offered), self.config.models.get(assistant, "")
            )
            combo.setMinimumContentsLength(16)
            combo.setToolTip(self.tr("Empty: the default chat model"))
            var = f"CUSTODIA_{assistant.upper()}_MODEL"
            if var in os.environ:
                combo.setEnabled(False)
                combo.setToolTip(
                    self.tr("Set by {0} in the environment; the file keeps its own value.").format(
                        var
                    )
                )
            self.model_fields[f"models.{assistant}"] = combo
            form.addRow(QLabel(self.tr("Model (empty: the default)")))
            form.addRow(combo)  # the whole width: a model's name is shown whole
            values = self.config.generation_for(assistant)
            for name, widget, label in self._generation_widgets(assistant, values):
                self.model_fields[f"generation.{assistant}.{name}"] = widget
                form.addRow(label, widget)
                if name == "context_size":
                    note = QLabel("")
                    note.setObjectName(f"context_note_{assistant}")
                    note.setWordWrap(True)
                    note.setVisible(False)
                    self.context_notes[assistant] = note
                    form.addRow(note)
            combo.currentIndexChanged.connect(self._on_model_changed)
            combo.editTextChanged.connect(self._on_model_changed)
            self.assistant_tabs.addTab(page, short_title_of(assistant))
        self._bound_contexts()
        return box

    def _on_model_changed(self, *args: object) -> None:
        self._bound_contexts()

    def trained_on(self, key: str) -> tuple[str, int]:
        """The model ``key`` names and the context it was trained on (0: not known)."""
        if key == BUNDLED_KEY:
            return friendly_name(key), BUNDLED_CONTEXT_LENGTH
        for option in self.options:
            if option.key == key and option.info is not None:
                return friendly_name(key), option.info.context_length
        return friendly_name(key), 0

    def _bound_contexts(self) -> None:
        """Each assistant's context size is at most what its model was trained on (the file's
        header says), and says so."""
        chat = self.fields.get("chat_model")
        default = model_key(chat) if isinstance(chat, QComboBox) else self.config.chat_model
        for assistant, note in self.context_notes.items():
            combo = self.model_fields[f"models.{assistant}"]
            spin = self.model_fields[f"generation.{assistant}.context_size"]
            assert isinstance(combo, QComboBox) and isinstance(spin, QSpinBox)
            name, trained = self.trained_on(model_key(combo) or default)
            _kind, _low, high = generation.LIMITS["context_size"]
            spin.setMaximum(int(min(high, trained)) if trained else int(high))
            note.setText(
                self.tr("{0} was trained on {1} tokens: the context size is at most that.").format(
                    name, f"{trained:,}"
                )
                if trained
                else ""
            )
            note.setVisible(bool(trained))

    def _generation_widgets(
        self, assistant: str, values: generation.GenerationSettings
    ) -> list[tuple[str, QWidget, str]]:
        out: list[tuple[str, QWidget, str]] = []

        def real(name: str, value: float | None, step: float, label: str) -> None:
            _kind, low, high = generation.LIMITS[name]
            spin = QDoubleSpinBox()
            spin.setDecimals(2)
            spin.setSingleStep(step)
            spin.setRange(low, high)
            spin.setValue(float(value if value is not None else low))
            out.append((name, spin, label))

        def whole(name: str, value: int | None, label: str, special: str = "") -> None:
            _kind, low, high = generation.LIMITS[name]
            spin = QSpinBox()
            spin.setRange(0 if special else int(low), int(high))
            if special:
                spin.setSpecialValueText(special)
            spin.setValue(int(value or 0))
            out.append((name, spin, label))

        real("temperature", values.temperature, 0.05, self.tr("Temperature"))
        real("top_p", values.top_p, 0.05, self.tr("Top-p"))
        whole("max_tokens", values.max_tokens, self.tr("Max tokens"), self.tr("as asked"))
        whole("context_size", values.context_size, self.tr("Context size (tokens)"))
        whole("threads", values.threads, self.tr("Threads"), self.tr("automatic"))
        real("repeat_penalty", values.repeat_penalty, 0.05, self.tr("Repeat penalty"))
        prompt = QPlainTextEdit(values.system_prompt or "")
        prompt.setPlaceholderText(self.tr("Added after the assistant's own instructions"))
        prompt.setMaximumHeight(60)
        out.append(("system_prompt", prompt, self.tr("System prompt")))
        for name, widget, _label in out:
            widget.setObjectName(f"generation_{assistant}_{name}")
        return out

    def model_values(self) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        """``[models]`` and ``[generation.*]`` as edited: an assistant's table keeps only what
        differs from what it would get without it (defaults and the model's own table)."""
        models = dict(self.config.models)
        tables = {k: v for k, v in self.config.generation.items()}
        for assistant in assistants.names():
            combo = self.model_fields[f"models.{assistant}"]
            assert isinstance(combo, QComboBox)
            key = model_key(combo)
            if key:
                models[assistant] = key
            else:
                models.pop(assistant, None)
            model = key or self.config.chat_model
            others = {k: v for k, v in tables.items() if k != assistant}
            base = generation.resolve(assistant, model, others)
            table: dict[str, Any] = {}
            for name in (
                "temperature",
                "top_p",
                "max_tokens",
                "context_size",
                "threads",
                "repeat_penalty",
                "system_prompt",
            ):
                widget = self.model_fields[f"generation.{assistant}.{name}"]
                value: Any
                if isinstance(widget, QDoubleSpinBox):
                    value = round(float(widget.value()), 2)
                elif isinstance(widget, QSpinBox):
                    value = int(widget.value())
                    if name == "max_tokens" and value == 0:
                        value = None  # "as asked": no ceiling
                elif isinstance(widget, QPlainTextEdit):
                    value = widget.toPlainText().strip()
                if value != getattr(base, name) and not (name == "system_prompt" and not value):
                    table[name] = value
            if table:
                tables[assistant] = table
            else:
                tables.pop(assistant, None)
        return models, tables

    def _add(self, form: QFormLayout, key: str, label: str, widget: QWidget) -> None:
        self.fields[key] = widget
        form.addRow(label, widget)

    def _mark_environment_overrides(self) -> None:
        """A setting the environment overrides is shown, not edited: saving must not copy
        a variable of this session into the file for good."""
        self.overridden = {
            field_: var
            for var, field_ in config_module.ENVIRONMENT.items()
            if var in os.environ and field_ in self.fields
        }
        for key, var in self.overridden.items():
            widget = self.fields[key]
            widget.setEnabled(False)
            widget.setToolTip(
                self.tr("Set by {0} in the environment; the file keeps its own value.").format(var)
            )

    def _connect_signals(self) -> None:
        self.buttons.accepted.connect(self._on_accepted)
        self.buttons.rejected.connect(self.reject)

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, widget in self.fields.items():
            if isinstance(widget, QComboBox):
                data = None if widget.isEditable() else widget.currentData()
                out[key] = (data if isinstance(data, str) else widget.currentText()).strip()
            elif isinstance(widget, QLineEdit):
                out[key] = widget.text().strip()
            elif isinstance(widget, QDoubleSpinBox):
                out[key] = float(widget.value())
        return out

    def candidate(self) -> Config:
        """The edited configuration, validated (raises :class:`ConfigError`)."""
        models, tables = self.model_values()
        values = self.values()
        values["chat_model"] = model_key(self.fields["chat_model"])  # type: ignore[arg-type]
        return replace(self.config, **values, models=models, generation=tables).validated()

    def _for_file(self, candidate: Config) -> Config:
        """``candidate`` with each environment-overridden setting as the file has it."""
        by_env = [a for a in assistants.names() if f"CUSTODIA_{a.upper()}_MODEL" in os.environ]
        if not self.overridden and not by_env:
            return candidate
        try:
            on_file = config_module.load({}, home=candidate.home)
        except ConfigError:  # an unreadable file is replaced: defaults for those settings
            on_file = Config(home=candidate.home)
        models = {k: v for k, v in candidate.models.items() if k not in by_env}
        models.update({a: on_file.models[a] for a in by_env if a in on_file.models})
        return replace(
            candidate, **{key: getattr(on_file, key) for key in self.overridden}, models=models
        ).validated()

    def _on_accepted(self) -> None:
        try:
            candidate = self.candidate()
            config_module.save(self._for_file(candidate))
        except ConfigError as err:
            self.error_label.setText(self.tr("Not saved — {0}").format(err))
            widget = self.fields.get(err.key) or self.model_fields.get(err.key)
            if widget is not None:
                page = widget.parentWidget()
                index = self.assistant_tabs.indexOf(page) if page is not None else -1
                if index >= 0:
                    self.assistant_tabs.setCurrentIndex(index)
                widget.setFocus()
            return
        except OSError as err:
            self.error_label.setText(self.tr("Not saved — cannot write the file: {0}").format(err))
            return
        self.saved = candidate
        text = self.saved_message(candidate)
        if text:
            QMessageBox.information(self, self.tr("Settings saved"), text)
        self.accept()

    def saved_message(self, candidate: Config) -> str:
        """What to tell after saving ``candidate``: "" when everything changed applies from
        the next answer (models, generation settings); otherwise what waits for a restart."""
        live = replace(
            self.config,
            chat_model=candidate.chat_model,
            models=candidate.models,
            generation=candidate.generation,
        )
        if candidate == live:
            return ""
        from backends.migrate import switch_summary  # noqa: PLC0415 — lazy: the migration package, on first use

        text = self.tr(
            "Saved. The stores, servers and embedder chosen here are used from the next start "
            "of Custodia; nothing stored is lost by switching. The models and generation "
            "settings apply from each assistant's next answer."
        )
        summary = switch_summary(self.config, candidate)
        if not summary.empty:
            text += "\n\n" + summary.text()
        if candidate.language != self.config.language:
            text += "\n\n" + self.tr("The new language is used from the next start.")
        return text


def chat_model_key(check: doctor.Check, config: Config) -> str | None:
    """The config key of the model a "chat model" check loaded (None for other checks)."""
    if check.role == "chat model":
        return config.chat_model
    head, _sep, assistant = check.role.partition(" (")
    if head == "chat model" and assistant.endswith(")"):
        return config.model_for(assistant[:-1])
    return None


def user_line(check: doctor.Check, config: Config | None = None) -> str:
    """A check in the user's words (``custodia doctor`` prints :meth:`doctor.Check.line`):
    ✓ usable, ✗ needed and not usable (why), ○ optional and not in use. A chat model is
    named as everywhere else (:func:`friendly_name`) when ``config`` is given."""
    version = f" {check.version}" if check.version else ""
    dims = check.details.get("dimension")
    kind = check.kind_text()  # "0 archivos GGUF", never "0 GGUF file(s)"
    key = chat_model_key(check, config) if config is not None else None
    if key is not None:
        kind = friendly_name("retrieval-only" if check.details.get("retrieval_only") else key)
    what = f"{kind}{version}" + (f", {dims}-d" if dims else "")
    role, where = doctor.role_text(check.role), gettext_(check.where)  # the check's words
    if check.ok:
        return f"✓ {role}: {what} — {where}"
    if check.required:
        reason = check.reason or QCoreApplication.translate("doctor", "not usable")
        return f"✗ {role}: {what} — {reason}"
    if check.role == "ollama":
        return QCoreApplication.translate(
            "doctor", "○ Ollama: not used by this configuration (optional; none running at {0})"
        ).format(check.where)
    return QCoreApplication.translate("doctor", "○ {0}: optional, not in use — {1}").format(
        role, check.reason or where
    )


class DoctorDialog(QDialog):
    """Runs the checks again in a worker and lists them as they come."""

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("doctor_dialog")
        self.config = services.config
        self.setWindowTitle(self.tr("Stores and models"))
        self.resize(760, 360)
        layout = QVBoxLayout(self)
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("doctor_progress")
        self.report = QPlainTextEdit()
        self.report.setObjectName("doctor_report")
        self.report.setReadOnly(True)
        layout.addWidget(self.progress_bar)
        layout.addWidget(self.report)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

        def job(progress: Progress, emit: Emit) -> bool:
            steps = doctor.plan(services.config, services)
            progress.start(len(steps))
            checks = []
            for check in doctor.run(services.config, services):
                checks.append(check)
                emit(check)
                progress.advance()
            return doctor.healthy(checks)

        self.handle = workers.start(
            "doctor",
            job,
            connect={
                "item": self._on_item,
                "progress": self._on_progress,
                "succeeded": self._on_succeeded,
            },
        )

    def _on_item(self, check: Any) -> None:
        self.report.appendPlainText(user_line(check, self.config))

    def _on_progress(self, done: int, total: int, message: str) -> None:
        self.progress_bar.setRange(0, total)
        self.progress_bar.setValue(done)

    def _on_succeeded(self, ok: Any) -> None:
        if self.handle.progress.cancelled:  # closed meanwhile: nobody reads the verdict
            return
        self.report.appendPlainText(
            self.tr("\nEverything this configuration needs is usable.")
            if ok
            else self.tr("\nSome stores or models this configuration needs are not usable.")
        )

    def reject(self) -> None:
        self.handle.cancel()
        super().reject()


def versions(services: Services) -> dict[str, str]:
    """Versions shown in About (read from metadata: nothing heavy is imported)."""
    out = {
        "Custodia": __version__,
        "Python": platform.python_version(),
        "Qt": qVersion(),
        "PySide6": pyside_version,
    }
    for dist in (
        "chromadb",
        "qdrant-client",
        "onnxruntime",
        "tokenizers",
        "llama-cpp-python",
        "cryptography",
        "psycopg",
        "neo4j",
        "redis",
        "numpy",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = QCoreApplication.translate("AboutDialog", "not installed")
    out["Profile"] = i18n.config_word(services.config.profile)
    out["Data dir"] = str(services.config.home)
    return out


#: the rows of :func:`versions` that are words (the others are names of packages)
_VERSION_ROWS = (
    QT_TRANSLATE_NOOP("AboutDialog", "Profile"),
    QT_TRANSLATE_NOOP("AboutDialog", "Data dir"),
)


class AboutDialog(QDialog):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("about_dialog")
        self.setWindowTitle(self.tr("About Custodia"))
        layout = QVBoxLayout(self)
        title = QLabel(
            self.tr(
                "<h2>Custodia {0}</h2><p>Four assistants that run on this computer: a team "
                "that plans and reviews a task, a chat that remembers, your chat history, and "
                "a tutor for study notes. Nothing you write leaves this computer.</p>"
                "<p>Your data is kept in {1}.</p>"
            ).format(__version__, services.config.home)
        )
        title.setWordWrap(True)
        title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(title)
        self.details_button = QPushButton(self.tr("Details…"))  # the versions, for a report
        self.details_button.setObjectName("about_details")
        self.details_button.setCheckable(True)
        layout.addWidget(self.details_button, 0, Qt.AlignmentFlag.AlignLeft)
        # the versions scroll inside a bounded area: opened, the dialog still fits the
        # window's minimum size (760×480)
        self.details = QScrollArea()
        self.details.setObjectName("about_versions")
        self.details.setWidgetResizable(True)
        self.details.setMaximumHeight(200)
        self.details.setVisible(False)
        self.details_button.toggled.connect(self.details.setVisible)
        table = QWidget()
        form = QFormLayout(table)
        for name, version in versions(services).items():
            label = QLabel(version)
            label.setObjectName(f"version_{name.lower().replace(' ', '_').replace('-', '_')}")
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(self.tr(name) if name in _VERSION_ROWS else name, label)
        self.details.setWidget(table)
        layout.addWidget(self.details)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
