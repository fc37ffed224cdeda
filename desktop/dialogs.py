"""Settings, store check (doctor) and About dialogs."""

from __future__ import annotations

import os
import platform
from dataclasses import replace
from importlib import metadata
from typing import Any

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from backends import __version__, doctor
from backends import config as config_module
from backends.config import Config
from backends.errors import ConfigError
from backends.progress import Progress
from backends.services import Services
from desktop.workers import Emit, WorkerPool


def _combo(name: str, values: tuple[str, ...], current: str, editable: bool = False) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    combo.setEditable(editable)
    combo.addItems(list(values))
    if current and current not in values:
        combo.addItem(current)
    combo.setCurrentText(current)
    return combo


class SettingsDialog(QDialog):
    """Edits ``custodia.toml``; validates before saving; says that a restart applies it.

    Secrets (Neo4j password, conversations key) are not written to the file: they belong in
    the environment or the OS keyring.
    """

    def __init__(self, config: Config, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("settings_dialog")
        self.setWindowTitle(self.tr("Settings"))
        self.config = config
        self.saved: Config | None = None
        self.fields: dict[str, QWidget] = {}

        layout = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "Data dir: {0}\nEach store is chosen on its own; 'server' makes a store use "
                "its server when a URL is set. Environment variables override this file."
            ).format(config.home)
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)

        stores = QGroupBox(self.tr("Stores"))
        form = QFormLayout(stores)
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
        ):
            edit = QLineEdit(str(getattr(config, key)))
            edit.setObjectName(key)
            self._add(form, key, label, edit)
        layout.addWidget(stores)

        models = QGroupBox(self.tr("Models"))
        mform = QFormLayout(models)
        self._add(
            mform,
            "embedder",
            self.tr("Embedder"),
            _combo(
                "embedder",
                (*config_module.EMBEDDERS, "ollama:nomic-embed-text"),
                config.embedder,
                True,
            ),
        )
        self._add(
            mform,
            "chat_model",
            self.tr("Chat model"),
            _combo("chat_model", config_module.CHAT_MODELS, config.chat_model, True),
        )
        for key, label in (
            ("ollama_url", self.tr("Ollama URL")),
            ("openai_url", self.tr("OpenAI-compatible URL")),
        ):
            edit = QLineEdit(str(getattr(config, key)))
            edit.setObjectName(key)
            self._add(mform, key, label, edit)
        timeout = QDoubleSpinBox()
        timeout.setObjectName("network_timeout")
        timeout.setRange(0.5, config_module.MAX_TIMEOUT)
        timeout.setValue(config.network_timeout)
        self._add(mform, "network_timeout", self.tr("Network timeout (s)"), timeout)
        layout.addWidget(models)

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
                out[key] = widget.currentText().strip()
            elif isinstance(widget, QLineEdit):
                out[key] = widget.text().strip()
            elif isinstance(widget, QDoubleSpinBox):
                out[key] = float(widget.value())
        return out

    def candidate(self) -> Config:
        """The edited configuration, validated (raises :class:`ConfigError`)."""
        return replace(self.config, **self.values()).validated()

    def _for_file(self, candidate: Config) -> Config:
        """``candidate`` with each environment-overridden setting as the file has it."""
        if not self.overridden:
            return candidate
        try:
            on_file = config_module.load({}, home=candidate.home)
        except ConfigError:  # an unreadable file is replaced: defaults for those settings
            on_file = Config(home=candidate.home)
        return replace(
            candidate, **{key: getattr(on_file, key) for key in self.overridden}
        ).validated()

    def _on_accepted(self) -> None:
        try:
            candidate = self.candidate()
            config_module.save(self._for_file(candidate))
        except ConfigError as err:
            self.error_label.setText(self.tr("Not saved — {0}").format(err))
            widget = self.fields.get(err.key)
            if widget is not None:
                widget.setFocus()
            return
        except OSError as err:
            self.error_label.setText(self.tr("Not saved — cannot write the file: {0}").format(err))
            return
        self.saved = candidate
        if candidate != self.config:
            from backends.migrate import switch_summary  # pure: no store is touched

            summary = switch_summary(self.config, candidate)
            text = self.tr(
                "Saved. Restart Custodia to use the new stores and models; "
                "nothing stored is lost by switching."
            )
            if not summary.empty:
                text += "\n\n" + summary.text()
            QMessageBox.information(self, self.tr("Settings saved"), text)
        self.accept()


class DoctorDialog(QDialog):
    """Runs the checks again in a worker and lists them as they come."""

    def __init__(
        self, services: Services, workers: WorkerPool, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setObjectName("doctor_dialog")
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

        self.handle = workers.start("doctor", job)
        self.handle.signals.item.connect(self._on_item)
        self.handle.signals.progress.connect(self._on_progress)
        self.handle.signals.succeeded.connect(self._on_succeeded)

    def _on_item(self, check: Any) -> None:
        self.report.appendPlainText(check.line())

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
            out[dist] = "not installed"
    out["Profile"] = services.config.profile
    out["Data dir"] = str(services.config.home)
    return out


class AboutDialog(QDialog):
    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("about_dialog")
        self.setWindowTitle(self.tr("About Custodia"))
        layout = QVBoxLayout(self)
        title = QLabel(
            self.tr(
                "<h2>Custodia {0}</h2><p>Four offline AI assistants. Every datum "
                "lives where its loss is survivable.</p>"
            ).format(__version__)
        )
        layout.addWidget(title)
        form = QFormLayout()
        for name, version in versions(services).items():
            label = QLabel(version)
            label.setObjectName(f"version_{name.lower().replace(' ', '_').replace('-', '_')}")
            form.addRow(name, label)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
