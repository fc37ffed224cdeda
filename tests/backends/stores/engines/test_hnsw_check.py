"""The HNSW file check that keeps a damaged Chroma segment away from chromadb's loader.

Indexes are built by real chromadb (in this process: building is safe); only the check reads
the damaged copies, so nothing here can crash the test runner.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from backends.stores.engines import chroma, hnsw_check
from tests.harness.damage import damage_file


def _build(path: Path, count: int, dim: int = 16, deleted: int = 0) -> Path:
    client = chroma.open_local(path)
    collection = client.get_or_create_collection(
        "probe", configuration={"hnsw": {"space": "cosine", "sync_threshold": 100}}
    )
    rng = np.random.default_rng(count)
    for start in range(0, count, 32):
        ids = [f"id-{i}" for i in range(start, min(count, start + 32))]
        collection.upsert(ids=ids, embeddings=rng.standard_normal((len(ids), dim)))
    if deleted:
        collection.delete(ids=[f"id-{i}" for i in range(deleted)])
    [segment] = hnsw_check.segments(path)
    return segment


@pytest.fixture(scope="module")
def healthy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build(tmp_path_factory.mktemp("hnsw") / "chroma", 1200, deleted=150)


@pytest.mark.parametrize(("count", "deleted"), [(40, 0), (700, 0), (1200, 300)])
def test_sound_indexes_pass(tmp_path: Path, count: int, deleted: int) -> None:
    segment = _build(tmp_path / "chroma", count, deleted=deleted)
    assert hnsw_check.problem(segment) is None


def _copy(healthy: Path, tmp_path: Path) -> Path:
    target = tmp_path / "segment"
    shutil.copytree(healthy, target)
    return target


@pytest.mark.parametrize(
    ("target", "how"),
    [
        ("header.bin", "truncate"),
        ("header.bin", "garbage"),
        ("data_level0.bin", "truncate"),
        ("data_level0.bin", "garbage"),
        ("data_level0.bin", "empty"),
        ("link_lists.bin", "truncate"),
        ("link_lists.bin", "garbage"),
        ("length.bin", "empty"),
        ("data_level0.bin", "delete"),
    ],
)
def test_damage_is_named(healthy: Path, tmp_path: Path, target: str, how: str) -> None:
    segment = _copy(healthy, tmp_path)
    damage_file(segment / target, how)
    assert hnsw_check.problem(segment) is not None


def test_one_neighbour_out_of_range_is_caught(healthy: Path, tmp_path: Path) -> None:
    # the subtle tear: sizes all agree, one link id points past the end
    segment = _copy(healthy, tmp_path)
    raw = bytearray((segment / "data_level0.bin").read_bytes())
    raw[4:8] = (10**6).to_bytes(4, "little")  # element 0, first neighbour
    raw[0:4] = max(1, int.from_bytes(raw[0:2], "little")).to_bytes(4, "little")
    (segment / "data_level0.bin").write_bytes(bytes(raw))
    assert "outside" in (hnsw_check.problem(segment) or "")


def test_open_local_discards_a_damaged_folder(tmp_path: Path) -> None:
    path = tmp_path / "chroma"
    segment = _build(path, 300)
    (segment / "header.bin").write_bytes(b"\0" * 10)
    # a new process, as after the kill that tore the file (this one has the folder open)
    script = (
        "import logging, sys; logging.basicConfig(level=logging.WARNING)\n"
        "from pathlib import Path\n"
        "from backends.stores.engines import chroma\n"
        "print(len(chroma.open_local(Path(sys.argv[1])).list_collections()))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[4],
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"  # a fresh, empty index: its owner rebuilds it
    assert "damaged (header.bin is 10 bytes" in done.stderr
    assert not segment.exists()
