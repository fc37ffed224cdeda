"""backends.preload: heavy imports with the collector paused, one freeze per new import."""

from __future__ import annotations

import gc
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import preload
from backends.config import Config


@pytest.fixture
def scratch_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [n for n in sys.modules if n.startswith("custodia_preload_probe")]:
        del sys.modules[name]
    gc.unfreeze()  # give this test process its collector back


def test_the_configuration_names_what_it_will_import(tmp_path: Path) -> None:
    product = preload.heavy_modules(Config(home=tmp_path))
    assert {"onnxruntime", "tokenizers", "chromadb", "qdrant_client", "llama_cpp"} <= set(product)
    light = preload.heavy_modules(Config(home=tmp_path, embedder="hashing", chat_model="ollama:x"))
    assert "onnxruntime" not in light and "llama_cpp" not in light and "chromadb" in light


def test_a_new_import_runs_with_the_collector_paused_then_freezes(scratch_modules: Path) -> None:
    (scratch_modules / "custodia_preload_probe_a.py").write_text(
        "import gc\nCOLLECTOR_ON_DURING_IMPORT = gc.isenabled()\n"
    )
    frozen_before = gc.get_freeze_count()
    took = preload.preload(["custodia_preload_probe_a"])
    assert list(took) == ["custodia_preload_probe_a"]
    assert sys.modules["custodia_preload_probe_a"].COLLECTOR_ON_DURING_IMPORT is False
    assert gc.isenabled() and gc.get_freeze_count() > frozen_before


def test_nothing_new_means_no_freeze(scratch_modules: Path) -> None:
    gc.unfreeze()
    assert preload.preload(["json", "gc"]) == {}
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_module_that_fails_is_logged_and_the_rest_still_load(
    scratch_modules: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (scratch_modules / "custodia_preload_probe_bad.py").write_text("raise OSError('no .so')\n")
    (scratch_modules / "custodia_preload_probe_b.py").write_text("X = 1\n")
    with caplog.at_level(logging.WARNING, logger="backends.preload"):
        took = preload.preload(["custodia_preload_probe_bad", "custodia_preload_probe_b"])
    assert list(took) == ["custodia_preload_probe_b"]
    assert "custodia_preload_probe_bad" in caplog.text and "no .so" in caplog.text
    assert gc.isenabled()
