"""Fusion arithmetic: reciprocal ranks, weights, ties by id, recency and MMR."""

from __future__ import annotations

import pytest

from graphmem.results import Signal, SignalScore
from graphmem.search import fuse
from graphmem.search.fuse import mmr, rrf, with_recency
from graphmem.search.retrieve import Candidate


def ranked(*ids: str) -> list[Candidate]:
    return [Candidate(fid, 1.0, rank) for rank, fid in enumerate(ids, start=1)]


def test_rrf_sums_weighted_reciprocal_ranks_and_breaks_ties_by_id() -> None:
    fused = rrf({Signal.vector: ranked("b", "a"), Signal.fulltext: ranked("a", "c")},
                {Signal.vector: 1.0, Signal.fulltext: 0.5}, k=10)
    assert [f.id for f in fused] == ["a", "b", "c"]
    assert abs(fused[0].score - (1 / 12 + 0.5 / 11)) < 1e-12
    assert set(fused[0].signals) == {Signal.vector, Signal.fulltext}
    assert fused[0].signal_scores() == [SignalScore(signal=Signal.fulltext, score=1.0, rank=1),
                                        SignalScore(signal=Signal.vector, score=1.0, rank=2)]
    tie = rrf({Signal.vector: ranked("z"), Signal.fulltext: ranked("y")}, {}, k=10)
    assert [f.id for f in tie] == ["y", "z"]


def test_rrf_reads_its_constant_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    lists = {Signal.vector: ranked("a")}
    default = rrf(lists, {})[0].score
    monkeypatch.setattr(fuse, "RRF_K", 0)  # what a tuning run does
    assert rrf(lists, {})[0].score == 1.0 != default


def test_recency_and_mmr() -> None:
    hits = rrf({Signal.vector: ranked("old", "new")}, {}, k=10)
    day = 86_400_000
    recent = with_recency(hits, {"old": 0, "new": 100 * day}, now_ms=100 * day, weight=0.5, half_life_days=1)
    assert [h.id for h in recent] == ["new", "old"]
    vectors = {"a": [1.0, 0.0], "b": [1.0, 0.0], "c": [0.0, 1.0]}
    diverse = mmr(rrf({Signal.vector: ranked("a", "b", "c")}, {}, k=10), vectors.get, limit=2, diversity=0.7)
    assert [h.id for h in diverse] == ["a", "c"]  # b repeats a
    assert [h.id for h in mmr(rrf({Signal.vector: ranked("a", "b")}, {}, k=10), vectors.get, 2, 0.0)] == ["a", "b"]
