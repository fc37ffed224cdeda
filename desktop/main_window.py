"""The main window: one tab per assistant, a status bar, menus, the start-up checks.

All signal wiring lives in :meth:`MainWindow._connect_signals`; slots are ``_on_<signal>``.

The window is the one place of the desktop that holds the :class:`Services` container: it
unpacks it into each tab's pieces (:func:`tab_pieces`: a lazy handle on the tab's own service
and its model choices) and the inspector's (:attr:`MainWindow.audit`). Nothing is built here:
every service is built on first use, in a worker, after the window appeared.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QAbstractButton,
    QMainWindow,
    QMessageBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from backends import assistants, doctor, preload
from backends.config import Config
from backends.models.local import human_size
from backends.models.manage import friendly_name
from backends.models.registry import ModelOption, model_options
from backends.progress import Progress
from backends.services import Lazy, Services
from desktop.dialogs import AboutDialog, DoctorDialog, SettingsDialog
from desktop.model_picker import ModelPicker
from desktop.status_bar import WindowStatus
from desktop.tabs import (
    TabPieces,
    build_tabs,
    quit_would_end,
    tab_entry,
    title_of,
)
from desktop.theme import MODES, Theme
from desktop.thread_list import MemoryChatThreads, ThreadList, TutorThreads
from desktop.welcome import SETTINGS_KEY as WELCOME_KEY
from desktop.welcome import WelcomeBanner
from desktop.window_threads import WindowThreads, starts_folded
from desktop.workers import Emit, WorkerPool

if TYPE_CHECKING:
    from backends.audit import AuditService

log = logging.getLogger(__name__)

#: narrow enough for a 900-px-wide screen (window frame and a scroll bar included)
MIN_WIDTH = 760
MIN_HEIGHT = 480


def service_handle(services: Services, name: str) -> Lazy[object]:
    """A lazy handle on the part called ``name`` (an assistant, "audit", "threads"), built
    from its declaration on the first :meth:`Lazy.get` (the audit service's package, for one,
    is not imported before the inspector opens); its tab narrows it to its service's type."""
    return services.lazy_part(name, object)


def audit_handle(services: Services) -> Lazy[AuditService]:
    """The audit service, built (and its package imported) on first use."""

    def build(container: Services) -> AuditService:
        from backends.audit import AuditService  # noqa: PLC0415 — lazy: not before it is used

        return container.get("audit", AuditService)

    return services.lazy("audit", build)


def tab_pieces(services: Services) -> dict[str, TabPieces]:
    """The container unpacked for the tabs: each its own service and model choices."""
    return {
        name: TabPieces(service_handle(services, name), services.model_choices(name))
        for name in assistants.names()
        if tab_entry(name) is not None
    }


def window_settings() -> QSettings:
    """Where the window keeps its size, splitters, last tab, theme and the welcome flag: the
    user's ``Custodia/Custodia.ini`` (tests point ``QSettings.setPath`` elsewhere)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "Custodia", "Custodia")


def _with_platform(documented: str, standard: QKeySequence.StandardKey) -> list[QKeySequence]:
    """The documented shortcut everywhere, plus the platform's own when it has another (Qt
    binds some standard keys only on some desktops: Preferences has no key on GNOME)."""
    keys = [QKeySequence(documented)]
    keys += [k for k in QKeySequence.keyBindings(standard) if k not in keys and not k.isEmpty()]
    return keys


class MainWindow(QMainWindow):
    """Owns the worker pool and the container; every tab gets the pool and its own pieces of
    the container (:func:`tab_pieces`) injected."""

    #: emitted once the start-up checks finished: the list of :class:`doctor.Check`
    checks_ready = Signal(object)

    def __init__(
        self,
        services: Services,
        parent: QWidget | None = None,
        settings: QSettings | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("main_window")
        self.services = services
        #: the audit service, for the inspector (built when it first loads the log)
        self.audit: Lazy[AuditService] = audit_handle(services)
        self.settings = settings if settings is not None else window_settings()
        self.theme = Theme(self)
        #: the user chose "Quit anyway" (or nothing was running): close without asking
        self._quit_confirmed = False
        self.quit_box: QMessageBox | None = None
        self.workers = WorkerPool(self)
        self.checks: list[doctor.Check] = []
        #: what the model lists offer (read in a worker: the models folders' GGUF headers)
        self.model_options: list[ModelOption] = []
        self.setWindowTitle(self.tr("Custodia"))
        self.resize(1100, 720)
        self.setMinimumSize(MIN_WIDTH, MIN_HEIGHT)
        self.theme.apply(str(self.settings.value("view/theme", "system")))

        self._start_preload()  # first job: the tabs' jobs import these libraries too

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("assistants")
        self.tabs.setDocumentMode(True)
        for widget, title in build_tabs(tab_pieces(services), self.workers, self):
            self.tabs.addTab(widget, title)
        #: the memory chats and the tutor's threads, kept in sidebars (issue 30)
        self.threads = WindowThreads(self.tabs, services, self.workers, self.audit, self)
        self._inspector_hooked = False
        self._folds_restored = False
        central = QWidget(self)
        central.setObjectName("central")
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        self.welcome: WelcomeBanner | None = None
        if not _true(self.settings.value(WELCOME_KEY, False)):
            titles = {name: title_of(name) for name in assistants.names()}
            self.welcome = WelcomeBanner(titles, central)
            column.addWidget(self.welcome)
        column.addWidget(self.tabs, 1)
        self.setCentralWidget(central)

        self._build_status_bar()
        self._show_tab_model()
        self._build_menus()
        self._restore_state()
        self._connect_signals()
        self._start_checks()
        self._list_models()
        #: a better model found on first run, offered in the welcome
        self.offered_model: Any = None
        if self.welcome is not None:
            self._find_better_model()

    # -- construction ----------------------------------------------------------------------
    @property
    def memory_threads(self) -> MemoryChatThreads | None:
        return self.threads.memory

    @property
    def tutor_threads(self) -> TutorThreads | None:
        return self.threads.tutor

    def sweep_erased_threads(self, _pseudonym: str = "") -> bool:
        """Delete the tutor threads of every person who was forgotten (see
        :meth:`WindowThreads.sweep_erased`)."""
        return self.threads.sweep_erased()

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        bar.setObjectName("status_bar")
        self.status = WindowStatus(bar, self.services.config, assistants.names())
        self.profile_label = self.status.profile
        self.chat_label = self.status.chat
        self.embedder_label = self.status.embedder
        self.health_label = self.status.health
        self.busy_label = self.status.busy
        self.tab_model_label = self.status.tab_model
        self.status.fit(self.width())

    @property
    def tab_models(self) -> dict[str, tuple[str, str]]:
        """assistant -> (the model it answers with, by its friendly name; why/details)."""
        return self.status.tab_models

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.status.fit(self.width())

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
        view_menu.addSeparator()
        theme_menu = view_menu.addMenu(self.tr("&Theme"))
        theme_menu.setObjectName("menu_theme")
        self.theme_group = QActionGroup(self)
        self.theme_group.setExclusive(True)
        self.theme_actions: dict[str, QAction] = {}
        names = {"system": self.tr("&System"), "light": self.tr("&Light"), "dark": self.tr("&Dark")}
        for mode in MODES:
            action = QAction(names[mode], self)
            action.setObjectName(f"action_theme_{mode}")
            action.setCheckable(True)
            action.setChecked(mode == self.theme.mode)
            action.setData(mode)
            self.theme_group.addAction(action)
            theme_menu.addAction(action)
            self.theme_actions[mode] = action

        tools_menu = menu.addMenu(self.tr("&Tools"))
        self.doctor_action = QAction(self.tr("Check stores and &models…"), self)
        self.doctor_action.setObjectName("action_doctor")
        tools_menu.addAction(self.doctor_action)
        models_menu = tools_menu.addMenu(self.tr("&Models"))
        self.models_action = QAction(self.tr("&Manage models…"), self)
        self.models_action.setObjectName("action_models")
        models_menu.addAction(self.models_action)
        self.find_models_action = QAction(self.tr("&Find models on this computer…"), self)
        self.find_models_action.setObjectName("action_find_models")
        models_menu.addAction(self.find_models_action)

        help_menu = menu.addMenu(self.tr("&Help"))
        self.guide_action = QAction(self.tr("&User guide"), self)
        self.guide_action.setObjectName("action_user_guide")
        self.guide_action.setShortcuts(_with_platform("F1", QKeySequence.StandardKey.HelpContents))
        help_menu.addAction(self.guide_action)
        self.shortcuts_action = QAction(self.tr("&Keyboard shortcuts"), self)
        self.shortcuts_action.setObjectName("action_shortcuts")
        self.shortcuts_action.setShortcut(QKeySequence("Ctrl+/"))
        help_menu.addAction(self.shortcuts_action)
        help_menu.addSeparator()
        self.about_action = QAction(self.tr("&About Custodia"), self)
        self.about_action.setObjectName("action_about")
        help_menu.addAction(self.about_action)

    def _connect_signals(self) -> None:
        self.settings_action.triggered.connect(self._on_settings_triggered)
        self.quit_action.triggered.connect(self.close)
        self.theme_group.triggered.connect(self._on_theme_triggered)
        self.theme.changed.connect(self._on_theme_changed)
        self.guide_action.triggered.connect(self._on_user_guide_triggered)
        self.shortcuts_action.triggered.connect(self._on_shortcuts_triggered)
        if self.welcome is not None:
            self.welcome.dismissed.connect(self._on_welcome_dismissed)
            self.welcome.use_offered.connect(self._on_welcome_use_offered)
        self.doctor_action.triggered.connect(self._on_doctor_triggered)
        self.models_action.triggered.connect(self._on_models_triggered)
        self.find_models_action.triggered.connect(self._on_find_models_triggered)
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

        self.workers.start(
            "start-up checks",
            job,
            connect={"succeeded": self.checks_ready, "failed": self._on_checks_failed},
        )

    def _list_models(self) -> None:
        services = self.services

        def job(progress: Progress, emit: Emit) -> list[ModelOption]:
            return model_options(services.config)

        self.workers.start("list models", job, connect={"succeeded": self._on_models_listed})

    def _on_models_listed(self, options: Any) -> None:
        self.model_options = list(options)

    def _on_checks_ready(self, checks: Any) -> None:
        self.checks = list(checks)
        self.status.show_checks(self.checks, self.services.config)
        self._show_tab_model()

    def _on_checks_failed(self, message: str, environment: bool) -> None:
        self.status.checks_failed(message)

    def _show_tab_model(self) -> None:
        """The current tab's model in the status bar; every tab's in its tooltip."""
        current = self.tabs.currentWidget()
        self.status.show_tab_model(current.objectName() if current is not None else "")

    def _on_tab_changed(self, index: int) -> None:
        self._show_tab_model()
        widget = self.tabs.widget(index)
        if widget is not None:
            self.settings.setValue("window/tab", widget.objectName())

    def _on_model_loaded(self, assistant: str, shown: str, why: str) -> None:
        self.status.model_loaded(assistant, shown, why)
        self._show_tab_model()

    # -- slots -----------------------------------------------------------------------------
    def _on_settings_triggered(self) -> None:
        dialog = SettingsDialog(self.services.config, self, self.model_options)
        dialog.exec()
        if dialog.saved is not None:
            self.apply_settings(dialog.saved)

    def apply_settings(self, saved: Config) -> None:
        """What applies without a restart: each assistant's model and generation settings,
        from its next answer."""
        self.services.use_settings(saved)
        self.status.loading(saved)
        self._show_tab_model()
        self._models_changed()

    def _on_models_triggered(self) -> None:
        from desktop.models_dialog import ModelsDialog  # noqa: PLC0415 — lazy: the dialog, on first use

        dialog = ModelsDialog(self.services, self.workers, self)
        dialog.exec()
        self._models_changed()  # files added there are offered everywhere now

    def _on_find_models_triggered(self) -> None:
        from desktop.models_dialog import FindModelsDialog  # noqa: PLC0415 — lazy: the dialog, on first use

        FindModelsDialog(self.services, self.workers, self).exec()
        self._models_changed()

    def _models_changed(self) -> None:
        """A model was added, removed or chosen: every list and picker reads them again."""
        self._list_models()
        for picker in self.findChildren(ModelPicker):
            picker.refresh()
        for index in range(self.tabs.count()):  # a tab with a model list of its own
            reload_models = getattr(self.tabs.widget(index), "reload_models", None)
            if callable(reload_models):
                reload_models()

    def _find_better_model(self) -> None:
        """On first run, while the bundled model answers: look for a better one the user
        already has (other apps' folders; nothing downloaded) and offer it in the welcome."""
        config = self.services.config
        if any(config.model_for(a) != "smollm2" for a in assistants.names()):
            return
        services = self.services

        def job(progress: Progress, emit: Emit) -> Any:
            from backends.models import discovery  # noqa: PLC0415 — lazy: scans model folders, on first use

            memory = services.memory()
            found = discovery.not_the_bundled_model(discovery.find(memory=memory))
            best = discovery.best_fits(found, memory, services.config)
            return best.get("tutor") or next(iter(best.values()), None)

        self.workers.start("find models", job, connect={"succeeded": self._on_better_model_found})

    def _on_better_model_found(self, found: Any) -> None:
        self.offered_model = found
        if found is not None and self.welcome is not None:
            self.welcome.offer_model(found.name, found.app, human_size(found.needed))

    def _on_welcome_use_offered(self) -> None:
        found = self.offered_model
        if found is None:
            return
        services = self.services

        def job(progress: Progress, emit: Emit) -> str:
            from backends.models import discovery  # noqa: PLC0415 — lazy: scans model folders, on first use

            return discovery.adopt(services.config, found, services.memory()).chat_model

        self.workers.start(
            "use found model",
            job,
            connect={
                "succeeded": self._on_welcome_model_used,
                "failed": self._on_welcome_model_failed,
            },
        )

    def _on_welcome_model_used(self, key: Any) -> None:
        for assistant in assistants.names():
            self.services.use_model(assistant, str(key))
        if self.welcome is not None:
            self.welcome.model_used(
                self.tr("Every assistant answers with {0} from its next answer.").format(
                    friendly_name(str(key))
                )
            )
        self._models_changed()

    def _on_welcome_model_failed(self, message: str, environment: bool) -> None:
        if self.welcome is not None:
            self.welcome.model_used(self.tr("Not used — {0}").format(message))

    def _on_doctor_triggered(self) -> None:
        DoctorDialog(self.services, self.workers, self).exec()

    def _on_about_triggered(self) -> None:
        AboutDialog(self.services, self).exec()

    def _on_user_guide_triggered(self) -> None:
        from desktop.help import UserGuideDialog  # noqa: PLC0415 — lazy: the guide's renderer, on first use

        dialog = UserGuideDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()  # not modal: read it beside the window

    def _on_shortcuts_triggered(self) -> None:
        from desktop.help import ShortcutsDialog  # noqa: PLC0415 — lazy: the guide's renderer, on first use

        dialog = ShortcutsDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()

    def _on_theme_triggered(self, action: QAction) -> None:
        mode = str(action.data())
        self.theme.apply(mode)
        self.settings.setValue("view/theme", self.theme.mode)

    def _on_theme_changed(self, dark: bool) -> None:
        for index in range(self.tabs.count()):
            follow = getattr(self.tabs.widget(index), "theme_changed", None)
            if callable(follow):
                follow()
        mode = self.theme.mode
        if mode in self.theme_actions and not self.theme_actions[mode].isChecked():
            self.theme_actions[mode].setChecked(True)

    def _on_welcome_dismissed(self) -> None:
        self.settings.setValue(WELCOME_KEY, True)
        self.settings.sync()

    # -- remembered state ------------------------------------------------------------------
    def _splitters(self) -> dict[str, QSplitter]:
        """Every splitter of the tabs, keyed by tab and position (some have no name)."""
        out: dict[str, QSplitter] = {}
        for index in range(self.tabs.count()):
            tab = self.tabs.widget(index)
            if tab is None:
                continue
            for number, splitter in enumerate(tab.findChildren(QSplitter)):
                out[f"splitters/{tab.objectName()}/{splitter.objectName() or number}"] = splitter
        return out

    def _restore_state(self) -> None:
        s = self.settings
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        for key, splitter in self._splitters().items():
            state = s.value(key)
            if isinstance(state, QByteArray) and not state.isEmpty():
                splitter.restoreState(state)
        last = str(s.value("window/tab", ""))
        for index in range(self.tabs.count()):
            widget = self.tabs.widget(index)
            if widget is not None and widget.objectName() == last:
                self.tabs.setCurrentIndex(index)

    def _sidebars(self) -> dict[str, ThreadList]:
        """The thread lists, by the setting keeping whether each is folded."""
        keepers = {"tutor": self.tutor_threads, "memories": self.memory_threads}
        return {f"threads/{k}/folded": v.sidebar for k, v in keepers.items() if v is not None}

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._folds_restored:  # at the width it is shown at (the screen may clamp it)
            self._folds_restored = True
            self._restore_folds()

    def _restore_folds(self) -> None:
        """Each thread list as the user left it; the tutor's, the first time, open in a
        window as wide as a laptop's (folded to its toggle in a narrower one)."""
        for key, sidebar in self._sidebars().items():
            kept = self.settings.value(key)
            if kept is not None:
                sidebar.set_folded(_true(kept))
                sidebar.folded_by_user = sidebar.folded
            elif sidebar is getattr(self.tutor_threads, "sidebar", None):
                sidebar.set_folded(starts_folded(self.width()))

    def save_state(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        for key, sidebar in self._sidebars().items():
            if sidebar.folded_by_user is not None:  # the window's own choice is made anew
                s.setValue(key, sidebar.folded_by_user)
        for key, splitter in self._splitters().items():
            s.setValue(key, splitter.saveState())
        current = self.tabs.currentWidget()
        if current is not None:
            s.setValue("window/tab", current.objectName())
        s.setValue("view/theme", self.theme.mode)
        if self.welcome is not None and self.welcome.isVisible():
            s.setValue(WELCOME_KEY, True)  # seen once is enough
        s.sync()

    # -- quitting during a run ---------------------------------------------------------------
    def running_work(self) -> list[str]:
        """What a quit would end now, in words (background reads are not listed)."""
        out: list[str] = []
        for handle in self.workers.active:
            for prefix, what in quit_would_end():
                running = handle.name.startswith(prefix) and not handle.progress.cancelled
                if running and self.tr(what) not in out:
                    out.append(self.tr(what))
        return out

    def close_now(self) -> bool:
        """Close without asking (tests, the start-up probe); True when closed."""
        self._quit_confirmed = True
        return self.close()

    def _ask_before_quitting(self, running: list[str]) -> None:
        if self.quit_box is not None:
            self.quit_box.raise_()
            return
        box = QMessageBox(self)
        box.setObjectName("quit_confirm")
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Quit Custodia?"))
        box.setText(self.tr("Custodia is working: {0}.").format(", ".join(running)))
        box.setInformativeText(
            self.tr("Quitting stops it; a multi-agent session can be resumed at the next start.")
        )
        quit_button = box.addButton(self.tr("Quit anyway"), QMessageBox.ButtonRole.AcceptRole)
        quit_button.setObjectName("quit_anyway")
        keep = box.addButton(self.tr("Keep running"), QMessageBox.ButtonRole.RejectRole)
        keep.setObjectName("keep_running")
        box.setDefaultButton(keep)
        box.setEscapeButton(keep)
        box.buttonClicked.connect(self._on_quit_box_button_clicked)
        self.quit_box = box
        box.open()  # window-modal, and the event loop keeps running the work meanwhile

    def _on_quit_box_button_clicked(self, button: QAbstractButton) -> None:
        box, self.quit_box = self.quit_box, None
        if box is not None:
            box.hide()
            box.setObjectName("")  # the next question is the only `quit_confirm`
            box.deleteLater()
        if button.objectName() == "quit_anyway":
            self.close_now()

    def _on_tab_action_triggered(self) -> None:
        action = self.sender()
        if isinstance(action, QAction):
            self.tabs.setCurrentIndex(int(action.data()))

    def _on_inspector_triggered(self) -> None:
        from desktop.inspector import open_inspector  # noqa: PLC0415 — lazy: start-up stays light

        pane = open_inspector(self)
        if not self._inspector_hooked:  # an erasure there removes the person's threads
            pane.forgotten.connect(self.sweep_erased_threads)
            self._inspector_hooked = True

    def _on_storage_map_triggered(self) -> None:
        from desktop.storage_map import open_storage_map  # noqa: PLC0415 — lazy: on first use

        open_storage_map(self)

    def _on_workers_active_changed(self, count: int) -> None:
        self.status.busy_count(count)

    # -- shutdown --------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        """Ask first when a quit would end a run; then stop the work (told it is a quit, so
        nothing is recorded as cancelled by the user), wait for it, close the stores."""
        runs = self.running_work()
        if runs and not self._quit_confirmed:
            event.ignore()
            self._ask_before_quitting(runs)
            return
        self.save_state()
        for index in range(self.tabs.count()):
            about_to_quit = getattr(self.tabs.widget(index), "about_to_quit", None)
            if callable(about_to_quit):
                about_to_quit()
        running = self.workers.active
        if running:
            log.info("closing: cancelling %d job(s)", len(running))
            # the wait below is short (every job checks for cancellation), but say so
            self.busy_label.setText(self.tr("Stopping {0} task(s)…").format(len(running)))
            self.busy_label.repaint()
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
        # a turn that ends after this (its outcome already queued) keeps nothing in a
        # closed thread index
        self.threads.close()
        self.services.close()
        event.accept()


def _true(value: object) -> bool:
    """A QSettings boolean (an INI file gives it back as the string "true")."""
    return value is True or str(value).lower() in ("true", "1")
