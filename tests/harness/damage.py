"""Damage a file the ways a crash, a bad disk or a meddler would (shared by the tests that
prove Custodia survives it)."""

from __future__ import annotations

from pathlib import Path

HOW = ("truncate", "empty", "garbage", "delete")


def damage_file(path: Path, how: str) -> None:
    """``truncate`` to half, ``empty``, overwrite with deterministic ``garbage`` of the same
    size, or ``delete``."""
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(bytes((i * 37 + 11) % 256 for i in range(len(data))))
    elif how == "delete":
        path.unlink()
    else:
        raise ValueError(f"unknown damage {how!r}; one of {HOW}")
