"""The context a model is loaded with: never more than the file was trained on (a context of
99,999 was accepted for a model trained on 8,192), nor than this machine's memory holds —
with the reason, which the dialog, the picker and ``custodia models list`` show."""

from __future__ import annotations

from pathlib import Path

from backends.models import local, manage
from tests.backends.models.gguf_files import write_gguf

PLENTY = local.Memory(total=64 << 30, available=32 << 30)


def test_the_context_is_bounded_by_training_then_by_memory(tmp_path: Path) -> None:
    info = local.read_gguf(
        write_gguf(
            tmp_path / "m.gguf", context=8192, layers=32, embedding=4096, heads=32, heads_kv=8
        )
    )
    assert manage.context_bound(info, 2048, PLENTY) == (2048, "")
    size, why = manage.context_bound(info, 99_999, PLENTY)
    assert size == 8192 and "trained on 8,192 tokens" in why
    per_token = info.kv_cache_bytes(1)
    tight = local.Memory(
        total=1 << 30,
        available=info.file_size + local.CONTEXT_OVERHEAD + per_token * 3000,
    )
    size, why = manage.context_bound(info, 8192, tight)
    assert 256 <= size <= 3000 and size % 256 == 0
    assert "free memory holds about" in why
    local.check_fits(info, size, tight)  # what is chosen fits


def test_friendly_names() -> None:
    assert manage.friendly_name("smollm2") == "SmolLM2-135M-Instruct (bundled)"
    assert manage.friendly_name("gguf:My-Model.Q4_K_M") == "My-Model.Q4_K_M"
    assert manage.friendly_name("gguf:/srv/models/Other.gguf") == "Other"
    assert manage.friendly_name("ollama:llama3.2") == "llama3.2 (Ollama)"
