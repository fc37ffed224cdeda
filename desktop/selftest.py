"""``custodia --self-test``: prove an installation (above all the packaged bundle) works.

Against a fresh temporary data dir — never the user's — it:

* checks the bundled files (Qt platform plugins, model files with their sha256, resources);
* loads the real bundled models once: the MiniLM embedder embeds (and ranks a related sentence
  above an unrelated one), the SmolLM2 GGUF loads and generates a few tokens;
* opens the main window offscreen with the deterministic providers (hashing embedder,
  scripted chat), visits every tab and opens the audit inspector;
* runs one scripted turn in each assistant through its service, in the window's worker pool:
  a multi-agent task to ``done``, a memory remembered and recalled, a conversation message
  found again by search, a tutor question answered with citations;
* verifies the audit chain, closes the window (workers cancelled and waited for).

It prints one line per step and exits 0, or 1 naming the failing steps. An assistant or tab
that is missing fails its step: nothing is skipped silently.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from cryptography.fernet import Fernet
from PySide6.QtCore import QLibraryInfo, QObject, QSettings, Slot, qInstallMessageHandler
from PySide6.QtWidgets import QApplication, QDockWidget, QWidget

from backends import assistants
from backends.audit import AuditService
from backends.config import Config
from backends.conversations import ConversationAgent
from backends.models.chat import LlamaCppChat, Prompt, ScriptedChat
from backends.models.embedders import MiniLMEmbedder
from backends.models.files import MINILM_ONNX, MINILM_TOKENIZER, SMOLLM2_GGUF
from backends.progress import Progress
from backends.services import Services
from desktop.help import guide_path
from desktop.main_window import MainWindow
from desktop.resources import ICON, app_icon, missing_system_libraries, resources_dir
from desktop.selftest_turns import StepFailed
from desktop.started import STARTED
from desktop.tabs import ComingSoonTab, tab_entry

#: Known, harmless Qt messages of the offscreen platform.
_QUIET_QT_MESSAGES = ("This plugin does not support propagateSizeHints",)
#: Longest wait for one GUI step (start-up checks, a worker job).
STEP_TIMEOUT = 120.0
#: What `make package` puts next to the executable (see packaging/custodia.spec).
BUNDLE_FILES = ("custodia.desktop", "custodia.svg", "custodia.png", "launcher.sh", "INSTALL.md")


@dataclass
class StepResult:
    name: str
    ok: bool
    seconds: float
    detail: str


class SelfTest:
    """Runs the steps in order, each isolated: a failing step does not hide the next ones."""

    def __init__(
        self, out: IO[str] | None = None, home: Path | None = None, *, real_models: bool = True
    ) -> None:
        """``home``: the data dir to use (default: a new temporary one, removed at the end);
        ``real_models=False`` leaves out the two real-model steps (fast tests)."""
        self.out = out or sys.stdout
        self.real_models = real_models
        self.results: list[StepResult] = []
        self._own_home = home is None
        self.home = home or Path(tempfile.mkdtemp(prefix="custodia-selftest-"))
        self.app: Any = None
        self.window: Any = None
        self.services: Services | None = None

    # -- running ---------------------------------------------------------------------------
    def step(self, name: str, check: Callable[[], str]) -> bool:
        started = time.perf_counter()
        try:
            detail = check()
            ok = True
        except Exception as err:  # any failure of a step is reported, never raised
            ok = False
            detail = f"{type(err).__name__}: {err}" if not isinstance(err, StepFailed) else str(err)
            if not isinstance(err, StepFailed | ImportError):
                detail += "\n" + "".join(traceback.format_exception(err)).rstrip()
        seconds = time.perf_counter() - started
        self.results.append(StepResult(name, ok, seconds, detail))
        status = "ok  " if ok else "FAIL"
        print(f"[{status}] {name:<28} {seconds:6.2f} s  {detail}", file=self.out, flush=True)
        return ok

    def run(self) -> int:
        started = time.perf_counter()
        print(f"Custodia self-test — data dir {self.home}", file=self.out, flush=True)

        previous_handler = qInstallMessageHandler(_qt_message)
        self.app = QApplication.instance() or QApplication([sys.argv[0]])
        try:
            self.step("bundled files", self.check_files)
            if self.real_models:
                self.step("embedder (MiniLM)", self.check_embedder)
                self.step("chat model (SmolLM2)", self.check_chat_model)
            if self.step("main window", self.open_window):
                for name in assistants.names():
                    self.step(f"tab {name}", functools.partial(self.visit_tab, name))
                self.step("tab start-up work", self.wait_idle)
                self.step("audit inspector", self.open_inspector)
                for name in assistants.names():
                    self.step(f"{name} turn", functools.partial(self.assistant_turn, name))
                self.step("audit chain", self.audit_chain)
                self.step("close window", self.close_window)
            else:
                for name in ("tabs", "assistant turns", "audit chain"):
                    self.results.append(StepResult(name, False, 0.0, "main window did not open"))
                    print(f"[FAIL] {name:<28}   0.00 s  not run: no window", file=self.out)
        finally:
            self._cleanup()
            qInstallMessageHandler(previous_handler)
        failed = [r.name for r in self.results if not r.ok]
        total = time.perf_counter() - started
        if failed:
            print(
                f"self-test FAILED ({len(failed)} of {len(self.results)} steps): "
                f"{', '.join(failed)}",
                file=self.out,
                flush=True,
            )
            return 1
        print(
            f"self-test passed: {len(self.results)} steps in {total:.1f} s",
            file=self.out,
            flush=True,
        )
        return 0

    # -- steps: files and real models ------------------------------------------------------
    def check_files(self) -> str:
        plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath)) / "platforms"
        missing = [p for p in ("libqoffscreen.so", "libqxcb.so") if not (plugins / p).is_file()]
        if missing:
            raise StepFailed(f"Qt platform plugins missing in {plugins}: {', '.join(missing)}")
        where = []
        for model in (MINILM_ONNX, MINILM_TOKENIZER, SMOLLM2_GGUF):
            path = model.verified()  # size + sha256
            where.append(path)
        bundle = getattr(sys, "_MEIPASS", None)
        origin = "bundle" if bundle and all(str(p).startswith(bundle) for p in where) else "wheels"
        resources = resources_dir()
        if resources is None:
            raise StepFailed("resources/ not found (neither in the bundle nor the source tree)")
        if app_icon().isNull():
            raise StepFailed(f"the application icon {ICON} is missing in {resources}/icons")
        if getattr(sys, "frozen", False):  # the bundle: desktop integration files beside it
            beside = Path(sys.executable).parent
            absent = [n for n in BUNDLE_FILES if not (beside / n).is_file()]
            if absent:
                raise StepFailed(f"missing next to {sys.executable}: {', '.join(absent)}")

        if guide_path() is None:  # Help > User guide would say "not installed"
            raise StepFailed("docs/USER_GUIDE.md is missing (neither in the bundle nor the tree)")
        detail = f"models verified (sha256) from the {origin}; resources at {resources}"
        missing_x11 = missing_system_libraries()
        if missing_x11:  # a note, not a failure: offscreen and Wayland do not need them
            detail += "; for X11 install " + ", ".join(missing_x11) + " (see INSTALL.md)"
        return detail

    def check_embedder(self) -> str:
        embedder = MiniLMEmbedder(threads=1)
        vectors = embedder.embed_batch(
            [
                "High blood pressure damages the kidneys.",
                "Hypertension can harm renal function.",
                "The guitar has six strings.",
            ]
        )
        if vectors.shape != (3, embedder.dimension) or vectors.dtype != np.float32:
            raise StepFailed(f"unexpected embeddings {vectors.shape} {vectors.dtype}")
        norms = np.linalg.norm(vectors, axis=1)
        if not np.allclose(norms, 1.0, atol=1e-3):
            raise StepFailed(f"embeddings not normalised: {norms}")
        related, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
        if not related > unrelated:
            raise StepFailed(f"related {related:.2f} <= unrelated {unrelated:.2f}")
        return f"{embedder.name} {embedder.dimension}-d; related {related:.2f} > {unrelated:.2f}"

    def check_chat_model(self) -> str:
        started = time.perf_counter()
        chat = LlamaCppChat(SMOLLM2_GGUF.verified(), "SmolLM2-135M-Instruct", context_tokens=512)
        loaded = time.perf_counter() - started
        answer = chat.complete(Prompt(user="Say hello in one word.", max_tokens=8)).strip()
        if not answer:
            raise StepFailed("the GGUF model loaded but generated nothing")
        del chat
        return f"{SMOLLM2_GGUF.relpath} loaded in {loaded:.2f} s; said {answer[:40]!r}"

    # -- steps: the window -----------------------------------------------------------------
    def open_window(self) -> str:
        config = Config(
            home=self.home,
            embedder="hashing",
            chat_model="scripted",
            conversations_key=_fernet_key(),
        ).validated()
        self.services = services = Services(config, chat=CitingScriptedChat())
        _conversations_without_keyring(services)
        started = time.perf_counter()
        # its own settings file in the temporary data dir: a self-test never changes the
        # user's window layout, theme or "welcome seen"

        settings = QSettings(str(self.home / "selftest.ini"), QSettings.Format.IniFormat)
        self.window = window = MainWindow(services, settings=settings)
        window.show()
        shown = time.perf_counter() - started
        checks = self._wait_signal(window.checks_ready, "start-up checks")
        problems = [c.line() for c in checks if c.required and not c.ok]
        if problems:
            raise StepFailed("start-up checks failed: " + "; ".join(problems))
        since_start = time.perf_counter() - STARTED
        return (
            f"shown in {shown:.2f} s ({since_start:.2f} s after start), "
            f"{len(checks)} start-up checks ok"
        )

    def visit_tab(self, name: str) -> str:
        entry = tab_entry(name)
        module = entry.module if entry is not None else None
        tabs = self.window.tabs
        widget = next(
            (tabs.widget(i) for i in range(tabs.count()) if tabs.widget(i).objectName() == name),
            None,
        )
        if widget is None:
            raise StepFailed(f"no tab named {name!r} in the window")
        if module is None or isinstance(widget, ComingSoonTab):
            raise StepFailed(f"the {name} assistant has not landed: its tab is a placeholder")
        tabs.setCurrentWidget(widget)
        self._process_events(0.2)
        if not widget.isVisible():
            raise StepFailed(f"tab {name} is not visible after selecting it")
        image = widget.grab()
        if image.isNull() or image.width() < 100:
            raise StepFailed(f"tab {name} did not render")
        children = len(widget.findChildren(QWidget))
        return f"{module}: rendered {image.width()}x{image.height()}, {children} widgets"

    def wait_idle(self) -> str:
        workers = self.window.workers
        self._wait(lambda: not workers.active, "the tabs' start-up work")
        return "every tab's start-up job finished"

    def open_inspector(self) -> str:
        self.window.inspector_action.trigger()
        self._process_events(0.2)

        dock = self.window.findChild(QDockWidget, "inspector_dock")
        if dock is None or not dock.isVisible():
            raise StepFailed("View ▸ Audit inspector did not show the inspector")
        self._wait(lambda: not self.window.workers.active, "the inspector's first page")
        return "docked and shown"

    # -- steps: one turn per assistant -----------------------------------------------------
    def assistant_turn(self, name: str) -> str:
        """The turn the assistant's tab entry names, run in the window's worker pool."""
        entry = tab_entry(name)
        if entry is None or not entry.selftest:
            raise StepFailed(f"the {name} assistant has not landed: it has no self-test turn")
        turn: Callable[[Services, Progress], str] = assistants.resolve(entry.selftest)
        detail: str = self._in_worker(
            f"self-test: {name}", lambda progress: turn(self._services(), progress)
        )
        return detail

    def audit_chain(self) -> str:
        def job(progress: Progress) -> Any:
            audit = self._services().get("audit", AuditService)
            audit.append("selftest.finished", steps=len(self.results))
            return audit.verify(progress=progress)

        result = self._in_worker("self-test: audit verify", job)
        if not result.ok:
            raise StepFailed(f"the audit chain does not verify: {result.line()}")
        if result.records < 1:
            raise StepFailed("the audit log is empty after appending to it")
        return result.line()

    def close_window(self) -> str:
        window, self.window = self.window, None
        window.close()
        self._process_events(0.1)
        if window.isVisible():
            raise StepFailed("the window refused to close")
        running = window.workers.active
        if running:
            raise StepFailed(f"{len(running)} job(s) still running after close")
        window.deleteLater()
        self._process_events(0.05)
        self.services = None  # closed by the window
        return "closed; workers finished, stores closed"

    # -- helpers ---------------------------------------------------------------------------
    def _services(self) -> Services:
        assert self.services is not None
        return self.services

    def _process_events(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.app.processEvents()
            time.sleep(0.005)

    def _wait(self, done: Callable[[], bool], what: str, timeout: float = STEP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise StepFailed(f"timed out after {timeout:.0f} s waiting for {what}")
            self.app.processEvents()
            time.sleep(0.005)

    def _wait_signal(self, signal: Any, what: str) -> Any:
        box = _Box()
        signal.connect(box._on_value)
        try:
            self._wait(lambda: box.done, what)
        finally:
            signal.disconnect(box._on_value)
        return box.value

    def _in_worker(self, name: str, fn: Callable[[Progress], Any]) -> Any:
        """Run ``fn`` in the window's worker pool (as the tabs do) and wait for its result."""
        box = _Box()
        self.window.workers.start(
            name,
            lambda progress, emit: fn(progress),
            connect={
                "succeeded": box._on_value,
                "failed": box._on_failed,
                "cancelled": box._on_cancelled,
            },
        )
        self._wait(lambda: box.done, name)
        if box.error is not None:
            raise StepFailed(box.error)
        return box.value

    def _cleanup(self) -> None:
        if self.window is not None:
            with contextlib.suppress(Exception):
                self.window.close()
            self.window = None
        if self.services is not None:
            with contextlib.suppress(Exception):
                self.services.close()
        if self._own_home:
            shutil.rmtree(self.home, ignore_errors=True)


class _Box(QObject):
    """Receives one outcome on the GUI thread (bound slots, as the house rule says)."""

    def __init__(self) -> None:
        super().__init__()
        self.done = False
        self.value: Any = None
        self.error: str | None = None

    @Slot(object)
    def _on_value(self, value: Any) -> None:
        self.value, self.done = value, True

    @Slot(str, bool)
    def _on_failed(self, message: str, environment: bool) -> None:
        kind = "environment error" if environment else "bug"
        self.error, self.done = f"{kind}: {message}", True

    @Slot()
    def _on_cancelled(self) -> None:
        self.error, self.done = "cancelled", True


class CitingScriptedChat(ScriptedChat):
    """The ``scripted`` chat model, citing the first context passage (``[1]``) when it is given
    some — as the tutor's prompt asks every model to — so a tutor turn has a citation."""

    def stream(
        self, prompt: Prompt, should_stop: Callable[[], bool] = lambda: False
    ) -> Iterator[str]:
        yield from super().stream(prompt, should_stop)
        if prompt.context and not should_stop():
            yield " [1]"


def _qt_message(mode: Any, context: Any, message: str) -> None:
    if not message.startswith(_QUIET_QT_MESSAGES):
        print(f"qt: {message}", file=sys.stderr, flush=True)


def _fernet_key() -> str:
    return Fernet.generate_key().decode("ascii")


def _conversations_without_keyring(services: Services) -> None:
    """Build the conversation agent now, without the OS keyring: the self-test must neither
    read nor write the user's real keyring entries (its key comes from the config)."""
    services.service(
        "conversations",
        lambda: ConversationAgent(
            services.config,
            embedder=lambda: services.embedder,
            chat=lambda: services.chat_choice,
            use_keyring=False,
        ),
        ConversationAgent.close,
    )


@contextlib.contextmanager
def _environment(home: Path) -> Iterator[None]:
    """Point everything that reads the environment at the temporary dir: the data dir, and a
    throw-away ``HOME`` (+ XDG dirs), so that no library leaves files in the user's home
    (onnxruntime, for one, writes ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/``)."""
    user_home = home / "home"
    values = {
        "CUSTODIA_HOME": str(home),
        "ANONYMIZED_TELEMETRY": "False",
        "QT_QPA_PLATFORM": "offscreen",
        "HOME": str(user_home),
        "XDG_CACHE_HOME": str(user_home / ".cache"),
        "XDG_CONFIG_HOME": str(user_home / ".config"),
        "XDG_DATA_HOME": str(user_home / ".local" / "share"),
    }
    saved = {key: os.environ.get(key) for key in values}
    user_home.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def run(out: IO[str] | None = None, home: Path | None = None, *, real_models: bool = True) -> int:
    """Run the self-test; 0 when every step passed."""
    test = SelfTest(out, home, real_models=real_models)
    with _environment(test.home):
        return test.run()


__all__ = ["STEP_TIMEOUT", "SelfTest", "StepFailed", "app_icon", "resources_dir", "run"]
