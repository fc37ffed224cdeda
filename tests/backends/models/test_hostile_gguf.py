"""Hostile GGUF headers (issue 25, item 8): every count, length and depth the reader accepts
is bounded, so each file fails alone, in bounded memory, with a :class:`GGUFError` — never a
``RecursionError``, a ``TypeError`` or gigabytes read. The files are written byte by byte
(the ``gguf`` writer refuses to write them); large ones are sparse, so they take no disk."""

from __future__ import annotations

import re
import struct
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from backends.models import local
from backends.models.registry import model_options
from tests.backends.models.gguf_files import truncate, write_gguf

U8, U32, STRING, ARRAY = 0, 4, 8, 9


def text(value: str | bytes) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return struct.pack("<Q", len(data)) + data


def header(*pairs: bytes, tensors: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, len(pairs)) + b"".join(pairs)


def pair(key: str, kind: int, value: bytes) -> bytes:
    return text(key) + struct.pack("<I", kind) + value


def nested(depth: int) -> bytes:
    """An array holding an array holding … ``depth`` deep, the innermost empty."""
    return struct.pack("<IQ", ARRAY, 1) * (depth - 1) + struct.pack("<IQ", U8, 0)


def sparse(path: Path, head: bytes, size: int) -> Path:
    """``head`` then zeros up to ``size`` bytes, as a sparse file (no disk taken)."""
    with path.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


def arch() -> bytes:
    return pair("general.architecture", STRING, text("llama"))


def deep_arrays(path: Path) -> Path:
    path.write_bytes(header(arch(), pair("llama.evil", ARRAY, nested(100_000))))
    return path


def alignment_array(path: Path) -> Path:
    value = struct.pack("<IQ", U32, 2) + struct.pack("<II", 32, 64)
    path.write_bytes(header(arch(), pair("general.alignment", ARRAY, value)))
    return path


def huge_kept_array(path: Path) -> Path:
    value = struct.pack("<IQ", U8, 2**31 - 1)  # a "per-layer head count" of 2 GiB
    head = header(arch(), pair("llama.attention.head_count", ARRAY, value))
    return sparse(path, head, len(head) + 2**31 - 1)


def huge_key(path: Path) -> Path:
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1 << 30)
    return sparse(path, head, len(head) + (1 << 30) + 64)


def huge_template(path: Path) -> Path:
    value = struct.pack("<Q", 1 << 30)
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + arch()
    head += text("tokenizer.chat_template") + struct.pack("<I", STRING) + value
    return sparse(path, head, len(head) + (1 << 30) + 64)


def many_empty_strings(path: Path) -> Path:
    """An array of 2³¹ empty texts, each 8 bytes of zeros: millions of Python steps."""
    value = struct.pack("<IQ", STRING, 2**31)
    head = header(arch(), pair("tokenizer.ggml.tokens", ARRAY, value))
    return sparse(path, head, len(head) + 2**34)


def many_keys(path: Path) -> Path:
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 2**40)
    return sparse(path, head, 1 << 30)


def many_tensors(path: Path) -> Path:
    head = b"GGUF" + struct.pack("<IQQ", 3, 2**40, 0)
    return sparse(path, head, 1 << 30)


def many_dimensions(path: Path) -> Path:
    tensor = text("t") + struct.pack("<I", 2**31)
    path.write_bytes(header(arch(), tensors=1) + tensor + b"\0" * 64)
    return path


HOSTILE: dict[str, Callable[[Path], Path]] = {
    "arrays nested 100,000 deep": deep_arrays,
    "general.alignment as an array": alignment_array,
    "a kept uint8 array of 2**31-1": huge_kept_array,
    "a 1 GiB key": huge_key,
    "a 1 GiB chat template": huge_template,
    "2**31 empty texts": many_empty_strings,
    "2**40 keys": many_keys,
    "2**40 tensors": many_tensors,
    "a tensor of 2**31 dimensions": many_dimensions,
}


@pytest.mark.parametrize("build", HOSTILE.values(), ids=list(HOSTILE))
def test_a_hostile_header_is_refused_in_bounded_memory(
    tmp_path: Path, build: Callable[[Path], Path]
) -> None:
    path = build(tmp_path / "hostile.gguf")
    tracemalloc.start()
    try:
        with pytest.raises(local.GGUFError) as err:
            local.read_gguf(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.value.kind in ("not-gguf", "truncated")
    if build is alignment_array:
        assert "general.alignment" in str(err.value)
    assert peak < 8 << 20, f"{peak / 1e6:.0f} MB allocated to refuse it"


def test_one_hostile_file_fails_alone_in_the_lists(tmp_path: Path) -> None:
    from backends.config import Config

    home = tmp_path / "home"
    folder = home / "models"
    folder.mkdir(parents=True)
    write_gguf(folder / "good.gguf")
    for name, build in HOSTILE.items():
        build(folder / f"{name.replace(' ', '-').replace('*', '')}.gguf")
    found = local.list_models([folder])
    assert len(found) == len(HOSTILE) + 1
    assert [m.path.name for m in found if m.info is not None] == ["good.gguf"]
    assert all(m.error is not None for m in found if m.info is None)
    options = {o.key: o for o in model_options(Config(home=home))}
    assert options["gguf:good"].problem == ""
    assert sum(1 for o in options.values() if o.problem) == len(HOSTILE)
    from backends import doctor

    row = next(c for c in doctor.plan(Config(home=home)) if c[0].role == "model files")
    check = doctor._run(*row)
    assert check.ok and check.kind == f"{len(HOSTILE) + 1} GGUF file(s)"
    assert check.reason.count(f"{folder}/") == len(HOSTILE)  # each bad file named, alone
    assert f"{folder}/good.gguf" not in check.reason


def test_a_truncated_small_file_names_real_sizes(tmp_path: Path) -> None:
    """Issue 25 item 12: "needs 0 MB but it holds 0 MB" said nothing."""
    cut = truncate(write_gguf(tmp_path / "cut.gguf"), -100)
    with pytest.raises(local.GGUFError) as err:
        local.read_gguf(cut)
    message = str(err.value)
    assert "0 MB" not in message
    need, has = re.search(r"need (.+) but it holds (.+) \(", message).groups()  # type: ignore[union-attr]
    assert need != has, message
    assert local.human_size(500) == "500 bytes" and local.human_size(5 << 10) == "5 KB"
