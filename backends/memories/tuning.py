"""The memory assistant's knobs and the values measured for each embedder (docs/MEMORIES.md):
how close a memory must be to be recalled, and how close a new one must be to be offered as
an update of an old one. A cosine means something different for each embedder, so every
threshold is chosen by the embedder's family unless the user sets one.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Recall threshold (cosine) per embedder family. The hashing test embedder only sees shared
#: words, so related texts score lower than with MiniLM; measured in docs/MEMORIES.md.
RECALL_THRESHOLDS: dict[str, float] = {
    "hashing": 0.28,
    "all-MiniLM-L6-v2": 0.30,
    # keeps 95 % of told facts, passes as many never-told questions as MiniLM's 0.30
    "use-multilingual-v3": 0.25,
}
#: At or above this similarity a new memory is offered as an update of the old one.
NEAR_DUPLICATE_THRESHOLDS: dict[str, float] = {
    "hashing": 0.75,
    "all-MiniLM-L6-v2": 0.85,
    "use-multilingual-v3": 0.85,
}
DEFAULT_RECALL_THRESHOLD = 0.35
DEFAULT_NEAR_DUPLICATE_THRESHOLD = 0.88


def _family(embedder_name: str) -> str:
    return embedder_name.split("-")[0] if embedder_name.startswith("hashing") else embedder_name


def recall_threshold_for(embedder_name: str) -> float:
    """The recall threshold measured for ``embedder_name`` (a default for an unknown one)."""
    return RECALL_THRESHOLDS.get(_family(embedder_name), DEFAULT_RECALL_THRESHOLD)


def near_duplicate_threshold_for(embedder_name: str) -> float:
    """The near-duplicate threshold measured for ``embedder_name``."""
    return NEAR_DUPLICATE_THRESHOLDS.get(_family(embedder_name), DEFAULT_NEAR_DUPLICATE_THRESHOLD)


@dataclass(frozen=True)
class AssistantSettings:
    """Tunable knobs; ``None`` thresholds mean "the value measured for this embedder"."""

    recall_threshold: float | None = None
    near_duplicate_threshold: float | None = None
    recall_k: int = 5
    #: previous messages (user and assistant) sent with the model's draft; 0: none. A small
    #: model given the thread repeats its earlier answers (measured: docs/BENCHMARKS.md)
    history_messages: int = 0
    max_tokens: int = 256
    #: memories looked at for the composed answer (recall below the threshold included)
    answer_candidates: int = 10
