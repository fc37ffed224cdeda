"""Reciprocal rank fusion (CT7): one ranked list from the vector, keyword and graph lists.

``score(chunk) = sum over methods of weight(method) / (K + rank)`` with ranks from 1 and
``K = 60`` (Cormack, Clarke and Büttcher, 2009). Only ranks matter, so cosine similarities,
bm25 scores and graph weights never need to be made comparable. Every fused chunk keeps *why*
it was found: one :class:`Reason` per method that returned it (its rank there, its score there
and a detail — the similarity, the matched words, or the graph path).
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from backends.i18n import N_, _, number

RRF_K = 60
METHODS = ("vector", "keyword", "graph")
#: the methods and the first words of their details as people read them ("found by: …");
#: ``method`` and ``detail`` themselves stay English (``--json``)
METHOD_WORDS = (N_("vector"), N_("keyword"), N_("graph"), N_("multilingual"))
DETAIL_WORDS = (N_("similarity"), N_("bm25"), N_("path"))


@dataclass(frozen=True)
class Hit:
    """One method's result: a chunk, its score in that method and why it matched."""

    chunk_id: str
    score: float
    detail: str = ""


@dataclass(frozen=True)
class Reason:
    method: str
    rank: int
    score: float
    detail: str

    def line(self) -> str:
        """``vector #1 (similarity 0.53)``, in the user's language."""
        text = f"{_(self.method)} #{self.rank}"
        return f"{text} ({_detail(self.detail)})" if self.detail else text


def _detail(detail: str) -> str:
    """A detail's first word translated, and its number written as the language does."""
    word, space, rest = detail.partition(" ")
    if word not in DETAIL_WORDS:
        return detail
    with contextlib.suppress(ValueError):
        rest = number(float(rest), len(rest.partition(".")[2]))
    return _(word) + space + rest


@dataclass
class Fused:
    chunk_id: str
    score: float = 0.0
    reasons: list[Reason] = field(default_factory=list)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(r.method for r in self.reasons)


def rrf(
    lists: Mapping[str, Sequence[Hit]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    limit: int | None = None,
) -> list[Fused]:
    """Fuse ranked lists (best first); ties keep the order of first appearance."""
    fused: dict[str, Fused] = {}
    order: dict[str, int] = {}
    for method, hits in lists.items():
        weight = 1.0 if weights is None else float(weights.get(method, 1.0))
        seen: set[str] = set()
        rank = 0
        for hit in hits:
            if hit.chunk_id in seen:  # a list may repeat a chunk: its best rank counts
                continue
            seen.add(hit.chunk_id)
            rank += 1
            entry = fused.get(hit.chunk_id)
            if entry is None:
                entry = fused[hit.chunk_id] = Fused(hit.chunk_id)
                order[hit.chunk_id] = len(order)
            entry.score += weight / (k + rank)
            entry.reasons.append(Reason(method, rank, hit.score, hit.detail))
    ranked = sorted(fused.values(), key=lambda f: (-f.score, order[f.chunk_id]))
    return ranked if limit is None else ranked[:limit]
