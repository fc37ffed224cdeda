"""Import the heavy native libraries once, with the cyclic garbage collector paused.

Why: the window is shown before chromadb, qdrant-client, onnxruntime and llama.cpp are
imported (start-up stays fast), so they are imported by workers while the window is live.
Measured here (bench/stall_trace.py, docs/BENCHMARKS.md): the imports themselves hold the GIL
for at most ~30 ms at a time, but they create ~140k long-lived objects, and the full
collections they trigger walk all of them while holding the GIL — 70–100 ms in which the GUI
thread cannot run a single slot. Pausing the collector for the imports, then freezing what
they created (``gc.freeze``: moved to a permanent generation no later collection walks),
removes those stalls for the rest of the session too.

Only a call that imported something new freezes: the objects a library creates at import
live as long as the process anyway, and later calls (a second window, the test suite's many
windows) must not freeze whatever else happens to be alive.
"""

from __future__ import annotations

import gc
import importlib
import logging
import sys
import threading
import time

from backends.config import Config
from backends.i18n import _

log = logging.getLogger(__name__)

_lock = threading.Lock()


def heavy_modules(config: Config) -> list[str]:
    """The native-heavy modules this configuration will import, in a sensible order."""
    names = ["numpy"]
    embedder = config.embedder.split(":", 1)[0]
    if embedder == "minilm":
        names += ["onnxruntime", "tokenizers"]
    names += ["chromadb", "qdrant_client"]  # the vector index and semantic memory
    chat_models = [config.chat_model, *config.models.values()]  # every assistant's
    if any(m.split(":", 1)[0] in ("smollm2", "gguf") for m in chat_models):
        names.append("llama_cpp")
    return names


def preload(names: list[str]) -> dict[str, float]:
    """Import ``names`` with the collector paused; freeze if any was new. Seconds per module
    newly imported.

    A module that fails to import is logged and skipped: the code that needs it reports the
    error where the user can act on it (the start-up checks, the tab).
    """
    took: dict[str, float] = {}
    with _lock:
        missing = [name for name in names if name not in sys.modules]
        if not missing:
            return took
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            for name in missing:
                started = time.perf_counter()
                try:
                    importlib.import_module(name)
                except Exception as err:  # ImportError, OSError from a native library, …
                    log.warning(_("preloading %s failed: %s"), name, err)
                    continue
                took[name] = time.perf_counter() - started
        finally:
            if took:
                gc.freeze()
            if was_enabled:
                gc.enable()
    return took
