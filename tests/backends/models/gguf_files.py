"""Tiny GGUF files written with the ``gguf`` package's own writer (llama.cpp's), for tests
that need a header of a given shape: no chat template, cut short, not GGUF at all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gguf import GGUFWriter, LlamaFileType

TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def write_gguf(
    path: Path,
    *,
    arch: str = "llama",
    name: str | None = "Tiny Test Model",
    template: str | None = TEMPLATE,
    context: int = 4096,
    file_type: LlamaFileType | None = LlamaFileType.MOSTLY_F16,
    layers: int = 2,
    embedding: int = 64,
    heads: int = 4,
    heads_kv: int = 2,
) -> Path:
    """A valid GGUF header with two small tensors (not a model llama.cpp can run)."""
    writer = GGUFWriter(str(path), arch)
    if name is not None:
        writer.add_name(name)
    writer.add_context_length(context)
    writer.add_block_count(layers)
    writer.add_embedding_length(embedding)
    writer.add_head_count(heads)
    writer.add_head_count_kv(heads_kv)
    if file_type is not None:
        writer.add_file_type(file_type)
    if template is not None:
        writer.add_chat_template(template)
    writer.add_token_list([f"t{i}" for i in range(300)])  # a string array to skip
    writer.add_tensor("token_embd.weight", np.zeros((32, embedding), dtype=np.float16))
    writer.add_tensor("output_norm.weight", np.ones(embedding, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def truncate(path: Path, keep: int) -> Path:
    """Cut the file to its first ``keep`` bytes (negative: drop that many from the end)."""
    data = path.read_bytes()
    path.write_bytes(data[:keep])
    return path
