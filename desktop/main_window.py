"""The main window: one tab per assistant, a status bar, menus, the start-up checks.

All signal wiring lives in :meth:`MainWindow._connect_signals`; slots are ``_on_<signal>``.
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QLabel,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QWidget,
)

from backends import doctor, preload
from backends.models.registry import ModelOption, model_options
from backends.models.settings import ASSISTANTS
from backends.progress import Progress
from backends.services import Services
from desktop.dialogs import AboutDialog, DoctorDialog, SettingsDialog
from desktop.model_picker import TITLES, ModelPicker
from desktop.tabs import build_tabs
from desktop.workers import Emit, WorkerPool

log = logging.getLogger(__name__)


def _with_platform(documented: str, standard: QKeySequence.StandardKey) -> list[QKeySequence]:
    """The documented shortcut everywhere, plus the platform's own when it has another (Qt
    binds some standard keys only on some desktops: Preferences has no key on GNOME)."""
    keys = [QKeySequence(documented)]
    keys += [k for k in QKeySequence.keyBindings(standard) if k not in keys and not k.isEmpty()]
    return keys


class MainWindow(QMainWindow):
    """Owns the worker pool; every tab gets the services and the pool injected."""

    #: emitted once the start-up checks finished: the list of :class:`doctor.Check`
    checks_ready = Signal(object)

    def __init__(self, services: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("main_window")
        self.services = services
        self.workers = WorkerPool(self)
        self.checks: list[doctor.Check] = []
        #: what the model lists offer (read in a worker: the models folders' GGUF headers)
        self.model_options: list[ModelOption] = []
        #: assistant -> (what it answers with, why/details) for the status bar
        self.tab_models: dict[str, tuple[str, str]] = {
            a: (self.tr("{0} (loading…)").format(services.config.model_for(a)), "")
            for a in ASSISTANTS
        }
        self.setWindowTitle(self.tr("Custodia"))
        self.resize(1100, 720)

        self._start_preload()  # first job: the tabs' jobs import these libraries too

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("assistants")
        self.tabs.setDocumentMode(True)
        for widget, title in build_tabs(services, self.workers, self):
            self.tabs.addTab(widget, title)
        self.setCentralWidget(self.tabs)

        self._build_status_bar()
        self._show_tab_model()
        self._build_menus()
        self._connect_signals()
        self._start_checks()
        self._list_models()

    # -- construction ----------------------------------------------------------------------
    def _build_status_bar(self) -> None:
        cfg = self.services.config
        bar = self.statusBar()
        bar.setObjectName("status_bar")
        self.profile_label = QLabel(self.tr("Profile: {0}").format(cfg.profile))
        self.profile_label.setObjectName("status_profile")
        self.chat_label = QLabel(self.tr("Chat: {0} (loading…)").format(cfg.chat_model))
        self.chat_label.setObjectName("status_chat_model")
        self.embedder_label = QLabel(self.tr("Embedder: {0} (loading…)").format(cfg.embedder))
        self.embedder_label.setObjectName("status_embedder")
        self.health_label = QLabel(self.tr("Checking stores…"))
        self.health_label.setObjectName("status_health")
        self.health_label.setTextFormat(Qt.TextFormat.RichText)
        self.busy_label = QLabel("")
        self.busy_label.setObjectName("status_busy")
        self.tab_model_label = QLabel("")
        self.tab_model_label.setObjectName("status_tab_model")
        for label in (
            self.tab_model_label,
            self.profile_label,
            self.chat_label,
            self.embedder_label,
        ):
            bar.addPermanentWidget(label)
        bar.addWidget(self.health_label)
        bar.addWidget(self.busy_label)

    def _build_menus(self) -> None:
        menu = self.menuBar()
        file_menu = menu.addMenu(self.tr("&File"))
        self.settings_action = QAction(self.tr("&Settings…"), self)
        self.settings_action.setObjectName("action_settings")
        self.settings_action.setShortcuts(
            _with_platform("Ctrl+,", QKeySequence.StandardKey.Preferences)
        )
        file_menu.addAction(self.settings_action)
        file_menu.addSeparator()
        self.quit_action = QAction(self.tr("&Quit"), self)
        self.quit_action.setObjectName("action_quit")
        self.quit_action.setShortcuts(_with_platform("Ctrl+Q", QKeySequence.StandardKey.Quit))
        file_menu.addAction(self.quit_action)

        view_menu = menu.addMenu(self.tr("&View"))
        self.tab_actions: list[QAction] = []
        for index in range(self.tabs.count()):
            action = QAction(self.tabs.tabText(index), self)
            action.setShortcut(QKeySequence(f"Ctrl+{index + 1}"))
            action.setData(index)
            view_menu.addAction(action)
            self.tab_actions.append(action)
        view_menu.addSeparator()
        self.inspector_action = QAction(self.tr("Audit &inspector"), self)
        self.inspector_action.setObjectName("action_inspector")
        self.inspector_action.setShortcut(QKeySequence("Ctrl+I"))
        view_menu.addAction(self.inspector_action)
        self.storage_map_action = QAction(self.tr("&Storage map"), self)
        self.storage_map_action.setObjectName("action_storage_map")
        view_menu.addAction(self.storage_map_action)

        tools_menu = menu.addMenu(self.tr("&Tools"))
        self.doctor_action = QAction(self.tr("Check stores and &models…"), self)
        self.doctor_action.setObjectName("action_doctor")
        tools_menu.addAction(self.doctor_action)
        self.models_action = QAction(self.tr("&Models…"), self)
        self.models_action.setObjectName("action_models")
        tools_menu.addAction(self.models_action)

        help_menu = menu.addMenu(self.tr("&Help"))
        self.about_action = QAction(self.tr("&About Custodia"), self)
        self.about_action.setObjectName("action_about")
        help_menu.addAction(self.about_action)

    def _connect_signals(self) -> None:
        self.settings_action.triggered.connect(self._on_settings_triggered)
        self.quit_action.triggered.connect(self.close)
        self.doctor_action.triggered.connect(self._on_doctor_triggered)
        self.models_action.triggered.connect(self._on_models_triggered)
        self.tabs.currentChanged.connect(self._on_tab_changed)
        for picker in self.findChildren(ModelPicker):
            picker.model_loaded.connect(self._on_model_loaded)
        self.about_action.triggered.connect(self._on_about_triggered)
        for action in self.tab_actions:
            action.triggered.connect(self._on_tab_action_triggered)
        self.inspector_action.triggered.connect(self._on_inspector_triggered)
        self.storage_map_action.triggered.connect(self._on_storage_map_triggered)
        self.workers.active_changed.connect(self._on_workers_active_changed)
        self.checks_ready.connect(self._on_checks_ready)

    # -- start-up work ---------------------------------------------------------------------
    def _start_preload(self) -> None:
        """Import the heavy native libraries off the GUI thread with the GC paused (why: see
        backends/preload.py — full collections over their objects froze the window)."""
        names = preload.heavy_modules(self.services.config)

        def job(progress: Progress, emit: Emit) -> dict[str, float]:
            return preload.preload(names)

        self.workers.start("loading libraries", job)

    def _start_checks(self) -> None:
        services = self.services

        def job(progress: Progress, emit: Emit) -> list[doctor.Check]:
            # Loads the models once (doctor reuses the services' instances).
            return list(doctor.run(services.config, services))

        handle = self.workers.start("start-up checks", job)
        handle.signals.succeeded.connect(self.checks_ready)
        handle.signals.failed.connect(self._on_checks_failed)

    def _list_models(self) -> None:
        services = self.services

        def job(progress: Progress, emit: Emit) -> list[ModelOption]:
            return model_options(services.config)

        handle = self.workers.start("list models", job)
        handle.signals.succeeded.connect(self._on_models_listed)

    def _on_models_listed(self, options: Any) -> None:
        self.model_options = list(options)

    def _on_checks_ready(self, checks: Any) -> None:
        self.checks = list(checks)
        by_role = {c.role: c for c in self.checks}
        for assistant in ASSISTANTS:  # what each tab answers with, as loaded by the checks
            check = by_role.get(f"chat model ({assistant})", by_role.get("chat model"))
            if check is not None:
                if check.details.get("retrieval_only"):
                    self.tab_models[assistant] = ("retrieval-only", check.reason)
                else:
                    self.tab_models[assistant] = (check.kind, check.reason)
        self._show_tab_model()
        chat = by_role.get("chat model")
        if chat is not None:
            text = self.tr("Chat: {0}").format(chat.kind)
            if chat.details.get("retrieval_only"):
                text = self.tr("Chat: retrieval-only mode")
                self.chat_label.setToolTip(chat.reason)
            elif not chat.ok:
                text = self.tr("Chat: unavailable")
                self.chat_label.setToolTip(chat.reason)
            self.chat_label.setText(text)
        emb = by_role.get("embedder")
        if emb is not None:
            if emb.ok:
                self.embedder_label.setText(
                    self.tr("Embedder: {0} ({1}-d)").format(emb.kind, emb.details.get("dimension"))
                )
            else:
                self.embedder_label.setText(self.tr("Embedder: unavailable"))
                self.embedder_label.setToolTip(emb.reason)
        problems = [c for c in self.checks if c.required and not c.ok]
        if problems:
            names = ", ".join(c.role for c in problems)
            self.health_label.setText(
                self.tr("<b>Problems:</b> {0} — see Tools ▸ Check stores and models").format(names)
            )
            self.health_label.setToolTip("\n".join(c.line() for c in problems))
        else:
            self.health_label.setText(self.tr("All stores and models ready"))
            self.health_label.setToolTip("")

    def _on_checks_failed(self, message: str, environment: bool) -> None:
        self.health_label.setText(self.tr("<b>Start-up checks failed:</b> {0}").format(message))

    def _show_tab_model(self) -> None:
        """The current tab's model in the status bar; every tab's in its tooltip."""
        current = self.tabs.currentWidget()
        name = current.objectName() if current is not None else ""
        if name in self.tab_models:
            shown, why = self.tab_models[name]
            self.tab_model_label.setText(self.tr("{0}: {1}").format(self.tr(TITLES[name]), shown))
        lines = []
        for assistant, (shown, why) in self.tab_models.items():
            lines.append(f"{self.tr(TITLES[assistant])}: {shown}" + (f" — {why}" if why else ""))
        self.tab_model_label.setToolTip("\n".join(lines))

    def _on_tab_changed(self, index: int) -> None:
        self._show_tab_model()

    def _on_model_loaded(self, assistant: str, shown: str, why: str) -> None:
        self.tab_models[assistant] = (shown, why)
        self._show_tab_model()

    # -- slots -----------------------------------------------------------------------------
    def _on_settings_triggered(self) -> None:
        dialog = SettingsDialog(self.services.config, self, self.model_options)
        dialog.exec()

    def _on_models_triggered(self) -> None:
        from desktop.models_dialog import ModelsDialog  # imported on first use

        dialog = ModelsDialog(self.services, self.workers, self)
        dialog.exec()
        self._list_models()  # files added there are offered everywhere now
        for picker in self.findChildren(ModelPicker):
            picker.refresh()

    def _on_doctor_triggered(self) -> None:
        DoctorDialog(self.services, self.workers, self).exec()

    def _on_about_triggered(self) -> None:
        AboutDialog(self.services, self).exec()

    def _on_tab_action_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.tabs.setCurrentIndex(int(action.data()))

    def _on_inspector_triggered(self) -> None:
        from desktop.inspector import open_inspector  # imported on first use: start-up stays light

        open_inspector(self)

    def _on_storage_map_triggered(self) -> None:
        from desktop.storage_map import open_storage_map  # imported on first use

        open_storage_map(self)

    def _on_workers_active_changed(self, count: int) -> None:
        self.busy_label.setText(self.tr("{0} task(s) running").format(count) if count else "")

    # -- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        """Cancel running work and wait for it, then close the stores."""
        running = self.workers.active
        if running:
            log.info("closing: cancelling %d job(s)", len(running))
        if not self.workers.shutdown(timeout_ms=30_000):
            answer = QMessageBox.question(
                self,
                self.tr("Custodia is still working"),
                self.tr("Some work did not stop in 30 s. Quit anyway?"),
            )
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        for index in range(self.tabs.count()):
            widget = self.tabs.widget(index)
            shutdown = getattr(widget, "shutdown", None)
            if callable(shutdown):
                shutdown()
        self.services.close()
        event.accept()
