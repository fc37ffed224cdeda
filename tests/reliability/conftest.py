"""Shared pieces of the reliability suite (crash, faults, hostile input, leaks).

``figures`` collects what each test measured (kills survived, faults survived, inputs
tried…); when ``CUSTODIA_RELIABILITY_FIGURES`` names a file, they are written there as JSON
at the end of the session — docs/RELIABILITY.md is made from such a file.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backends.config import Config

FIGURES_ENV = "CUSTODIA_RELIABILITY_FIGURES"
_FIGURES: dict[str, dict[str, Any]] = {}


class Figures:
    """``figures.record("crash", "memories", kills=200, ...)``."""

    def record(self, section: str, name: str, **values: Any) -> None:
        _FIGURES.setdefault(section, {})[name] = values

    def add(self, section: str, name: str, key: str, amount: int = 1) -> None:
        entry = _FIGURES.setdefault(section, {}).setdefault(name, {})
        entry[key] = entry.get(key, 0) + amount


@pytest.fixture(scope="session")
def figures() -> Iterator[Figures]:
    yield Figures()
    target = os.environ.get(FIGURES_ENV)
    if target and _FIGURES:
        path = Path(target)
        old: dict[str, Any] = {}
        if path.exists():
            old = json.loads(path.read_text(encoding="utf-8"))
        for section, entries in _FIGURES.items():
            old.setdefault(section, {}).update(entries)
        path.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n", encoding="utf-8")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh, private data dir."""
    path = tmp_path / "home"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def config(home: Path) -> Config:
    return Config(home=home, embedder="hashing", chat_model="scripted").validated()


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (relative path -> bytes): a snapshot to compare."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def modes(root: Path) -> dict[str, int]:
    """Permission bits of everything under ``root`` (and ``root`` itself as ".")."""
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in sorted(root.rglob("*")):
        if not path.is_symlink():
            out[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return out
