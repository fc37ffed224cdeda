"""The small file and vector helpers of the qdrant-edge semantic memory (its JSON side files,
a shard's dimension, the engine's vectors as floats): kept apart so the memory itself stays
one idea."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["_dense", "_is_uuid", "_read_json", "_unit", "_write_json", "shard_dimension"]


def _write_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically (a kill leaves the old file or the new one, never half of one)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def shard_dimension(shard_dir: Path) -> int:
    """The vector size the shard was created with (its ``edge_config.json``), 0 if unknown."""
    config = _read_json(shard_dir / "edge_config.json")
    try:
        return int(config["vectors"][""]["size"])
    except (KeyError, TypeError, ValueError):
        return 0


def _dense(vector: Any) -> list[float]:
    """The engine's (unnamed, dense) vector as floats."""
    return [float(x) for x in (vector or [])]


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _unit(vector: Sequence[float]) -> npt.NDArray[np.float64]:
    array = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array
