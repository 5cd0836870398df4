"""Fusion: reciprocal-rank fusion of the signals, with weights, an optional recency term and optional
MMR diversity. Ranks, not raw scores, are fused: full-text scores differ between servers and vector scores
are not comparable across queries, so only ranks mean the same thing everywhere."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from graphmem.results import Signal, SignalScore
from graphmem.search.retrieve import Candidate

RRF_K = 60  # the usual constant: damps the difference between rank 1 and rank 2


@dataclass
class Fused:
    id: str
    score: float
    signals: dict[Signal, Candidate] = field(default_factory=dict)

    def signal_scores(self) -> list[SignalScore]:
        """The signals that found this item, in a fixed order, as results carry them."""
        return [SignalScore(signal=signal, score=c.score, rank=c.rank) for signal, c in sorted(self.signals.items())]


def rrf(lists: Mapping[Signal, list[Candidate]], weights: Mapping[Signal, float],
        k: int | None = None) -> list[Fused]:
    """Sum of weight / (k + rank) over the signals that found the fact; ties broken by id. ``k`` defaults to
    ``RRF_K`` at call time (so tuning runs can change the module constant)."""
    k = RRF_K if k is None else k
    fused: dict[str, Fused] = {}
    for signal, candidates in lists.items():
        weight = weights.get(signal, 1.0)
        for candidate in candidates:
            entry = fused.setdefault(candidate.id, Fused(candidate.id, 0.0))
            entry.score += weight / (k + candidate.rank)
            entry.signals[signal] = candidate
    return sorted(fused.values(), key=lambda f: (-f.score, f.id))


def with_recency(hits: list[Fused], recorded_at: Mapping[str, int], now_ms: int, weight: float,
                 half_life_days: float) -> list[Fused]:
    """Add ``weight * 0.5 ** (age / half_life)`` to each fused score (0 weight: unchanged)."""
    if weight <= 0:
        return hits
    for hit in hits:
        age_days = max(0.0, (now_ms - recorded_at.get(hit.id, now_ms)) / 86_400_000)
        hit.score += weight * 0.5 ** (age_days / half_life_days)
    return sorted(hits, key=lambda f: (-f.score, f.id))


def mmr(hits: list[Fused], vector_of: Callable[[str], list[float] | None], limit: int,
        diversity: float) -> list[Fused]:
    """Maximal marginal relevance: trade relevance (the fused score, scaled to 0..1) against similarity to
    what was already picked. ``diversity`` 0 keeps the fused order."""
    if diversity <= 0 or not hits:
        return hits[:limit]
    top = hits[0].score or 1.0
    picked: list[Fused] = []
    pool = list(hits)
    while pool and len(picked) < limit:
        def value(hit: Fused) -> float:
            similarity = max((_cosine(vector_of(hit.id), vector_of(p.id)) for p in picked), default=0.0)
            return (1 - diversity) * hit.score / top - diversity * similarity

        best = min(pool, key=lambda h: (-value(h), h.id))  # ties: the smaller id, as everywhere
        picked.append(best)
        pool.remove(best)
    return picked


def _cosine(a: list[float] | None, b: list[float] | None) -> float:
    if not a or not b:
        return 0.0
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
