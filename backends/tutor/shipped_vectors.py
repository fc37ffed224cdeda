"""Precomputed vectors of the shipped corpus, so first use does not wait for the embedder.

``resources/kb/vectors.npz`` holds, for the default embedder (MiniLM), one float16 vector per
chunk id of the shipped notes; ``vectors-use.npz`` the same for the multilingual USE (the
second vector Spanish questions are searched with, docs/TUTOR.md). Chunk ids carry a hash of
their text, so a note edited since the file was made simply misses and is embedded as usual.
Each file also holds the vector of a probe sentence: at load the running embedder embeds the
same sentence and the file is used only if the two agree (cosine ≥ 0.995) — another model,
another version or a corrupt file is never mixed in. Regenerate after editing the notes::

    python -m backends.tutor.shipped_vectors
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

from backends.i18n import _
from backends.models.embedders import Embedder, MiniLMEmbedder, UniversalSentenceEncoder
from backends.tutor.kb import (
    CHUNKER_VERSION,
    chunk_paragraphs,
    make_chunk_id,
    shipped_documents,
    shipped_kb_dir,
)

log = logging.getLogger(__name__)

FILE = "vectors.npz"
#: the files, one per embedder; :func:`load` uses the one made by the running embedder
FILES = (FILE, "vectors-use.npz")
PROBE = "Clinical tutor probe: warfarin is monitored with the INR."
AGREEMENT = 0.995


def load(kb_dir: Path, embedder: Embedder) -> dict[str, npt.NDArray[np.float32]]:
    """chunk id -> vector, from the file made by this very embedder; else empty."""
    for name in FILES:
        found = _load(kb_dir / name, embedder)
        if found:
            return found
    return {}


def _load(path: Path, embedder: Embedder) -> dict[str, npt.NDArray[np.float32]]:
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as data:
            name = str(data["embedder"])
            ids = [str(i) for i in data["ids"]]
            vectors = np.asarray(data["vectors"], dtype=np.float32)
            probe = np.asarray(data["probe"], dtype=np.float32)
    except Exception as err:  # a damaged resource: embed instead
        log.warning(_("%s: cannot read precomputed vectors (%s); embedding instead"), path, err)
        return {}
    if name != embedder.name or vectors.shape != (len(ids), embedder.dimension):
        return {}
    agreement = float(np.dot(embedder.embed(PROBE), probe) / (np.linalg.norm(probe) or 1.0))
    if agreement < AGREEMENT:
        log.warning(
            _("%s: made by another build of %s (%.3f); embedding instead"), path, name, agreement
        )
        return {}
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return dict(zip(ids, (vectors / norms).astype(np.float32), strict=True))


def write(kb_dir: Path, embedder: Embedder, file: str = FILE) -> Path:
    """Embed every chunk of the shipped notes and write ``file``."""
    ids: list[str] = []
    texts: list[str] = []
    for doc in shipped_documents(kb_dir):
        for piece in chunk_paragraphs(doc.text.split("\n\n")):
            ids.append(make_chunk_id(doc.doc_id, piece.ordinal, doc.title, piece.text))
            texts.append(f"{doc.title}\n{piece.text}")
    vectors = np.vstack([embedder.embed_batch(texts[i : i + 16]) for i in range(0, len(texts), 16)])
    path = kb_dir / file
    np.savez_compressed(
        path,
        embedder=np.array(embedder.name),
        chunker=np.array(CHUNKER_VERSION),
        ids=np.array(ids),
        vectors=vectors.astype(np.float16),
        probe=embedder.embed(PROBE).astype(np.float32),
    )
    return path


def main() -> int:
    for embedder, file in zip((MiniLMEmbedder(), UniversalSentenceEncoder()), FILES, strict=True):
        path = write(shipped_kb_dir(), embedder, file)
        print(f"wrote {path} ({path.stat().st_size} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
