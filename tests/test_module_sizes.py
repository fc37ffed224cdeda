"""Issue 26: one idea per module — no module of ``backends/`` or ``desktop/`` grows past 800
lines (a module that does three jobs shows first as a long one)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOST = 800


def test_no_module_is_longer_than_800_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for package in ("backends", "desktop")
        for path in sorted((ROOT / package).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MOST
    }
    assert not long, f"split these by idea (at most {MOST} lines each): {long}"
