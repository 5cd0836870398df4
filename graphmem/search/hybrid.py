"""Hybrid fact search: vector + full text + graph expansion, fused by weighted reciprocal rank.

1. candidates from the vector index and the full-text index (``retrieve``), each over-fetched;
2. graph expansion from the best few: facts sharing their entities, their neighbouring sentences, and
   facts mentioning entities whose name matches the query;
3. weighted RRF over the three lists, then an optional recency term and optional MMR diversity;
4. ``min_score`` applies to the cosine similarity of the query and the fact embeddings (0..1 scale), the
   one score that means the same thing across queries and servers.

Every statement filters by the caller's namespaces and the view inside the query; results carry no
embeddings, each hit a citation; ties break by id.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphmem.search.fuse import Fused, mmr, rrf, with_recency
from graphmem.search.lucene import escape_lucene
from graphmem.search.retrieve import Candidate, fulltext_candidates, vector_candidates
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.views import CURRENT, View

SEEDS = 5  # top fused hits that graph expansion starts from
ENTITY_FANOUT = 50  # facts taken per shared entity: a hub entity cannot flood the candidates


class SearchOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    limit: int = Field(10, ge=1, le=100)
    view: View = CURRENT
    weights: dict[str, float] = Field(default_factory=lambda: {"vector": 1.0, "fulltext": 1.0, "graph": 0.5})
    min_score: float | None = Field(None, ge=0, le=1, description="cosine similarity on the 0..1 scale")
    diversity: float = Field(0.0, ge=0, le=1, description="MMR: 0 = pure relevance")
    recency_weight: float = Field(0.0, ge=0, le=1)
    recency_half_life_days: float = Field(30.0, gt=0)
    explain: bool = False


class Citation(BaseModel):
    document_id: str
    title: str | None
    source: str | None
    start: int
    end: int


class SignalScore(BaseModel):
    score: float
    rank: int


class Explanation(BaseModel):
    signals: dict[str, SignalScore]
    fused: float
    similarity: float
    path: list[str] = Field(description="document id → fact id → entity ids")


class EntityRef(BaseModel):
    id: str
    name: str | None
    type: str | None


class FactHit(BaseModel):
    fact_id: str
    text: str
    score: float
    version: int | None
    is_latest: bool
    recorded_at: int
    citation: Citation
    entities: list[EntityRef]
    explain: Explanation | None = None


def search_facts(tx: Tx, dialect: Dialect, namespaces: list[str], text: str, vector: list[float],
                 options: SearchOptions, now_ms: int) -> list[FactHit]:
    pool = options.limit * 3
    lists: dict[str, list[Candidate]] = {
        "vector": vector_candidates(tx, dialect, namespaces, options.view, vector, pool),
        "fulltext": fulltext_candidates(tx, dialect, namespaces, options.view, text, pool),
    }
    seeds = [f.fact_id for f in rrf(lists, options.weights)[:SEEDS]]
    lists["graph"] = _graph_candidates(tx, dialect, namespaces, options.view, text, seeds, pool)
    fused = rrf(lists, options.weights)[: max(pool, options.limit * 2)]
    rows = {row["id"]: row for row in tx.run("facts_hydrate", fact_ids=[f.fact_id for f in fused],
                                             namespaces=namespaces)}
    fused = [f for f in fused if f.fact_id in rows]
    similarity = {fid: _similarity(rows[fid]["embedding"], vector) for fid in rows}
    if options.min_score is not None:
        fused = [f for f in fused if similarity[f.fact_id] >= options.min_score]
    fused = with_recency(fused, {fid: row["recorded_at"] for fid, row in rows.items()}, now_ms,
                         options.recency_weight, options.recency_half_life_days)
    fused = mmr(fused, lambda fid: rows[fid]["embedding"], options.limit, options.diversity)
    return [_hit(rows[f.fact_id], f, similarity[f.fact_id], options.explain) for f in fused[: options.limit]]


def _graph_candidates(tx: Tx, dialect: Dialect, namespaces: list[str], view: View, text: str,
                      seeds: list[str], limit: int) -> list[Candidate]:
    params: dict[str, Any] = {"namespaces": namespaces, "limit": limit, **view.params()}
    rows: list[dict[str, Any]] = []
    if seeds:
        rows += tx.run("facts_sharing_entities", fact_ids=seeds, fanout=ENTITY_FANOUT, **params)
        rows += tx.run("facts_neighbouring", fact_ids=seeds, **params)
    query = escape_lucene(text)
    if query is not None:
        rows += tx.run("facts_by_entity_name", index=dialect.index_name(SearchIndex.entity_name), query=query,
                       k=limit, **params)
    best: dict[str, float] = {}
    for row in rows:
        best[row["id"]] = max(best.get(row["id"], 0.0), float(row["score"]))
    ordered = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [Candidate(fid, "graph", score, rank) for rank, (fid, score) in enumerate(ordered, start=1)]


def _similarity(embedding: list[float] | None, vector: list[float]) -> float:
    """Cosine on the 0..1 scale of the vector procedures ((1 + cos) / 2); 0 without an embedding."""
    if not embedding:
        return 0.0
    return (1 + sum(a * b for a, b in zip(embedding, vector, strict=True))) / 2


def _hit(row: dict[str, Any], fused: Fused, similarity: float, explain: bool) -> FactHit:
    entities = sorted((EntityRef.model_validate(e) for e in row["entities"] if e and e.get("id")),
                      key=lambda e: e.id)
    explanation = Explanation(
        signals={s: SignalScore(score=c.score, rank=c.rank) for s, c in sorted(fused.signals.items())},
        fused=fused.score, similarity=similarity,
        path=[row["document_id"], row["id"], *(e.id for e in entities)]) if explain else None
    return FactHit(fact_id=row["id"], text=row["text"], score=fused.score, version=row["version"],
                   is_latest=row["is_latest"], recorded_at=row["recorded_at"],
                   citation=Citation(document_id=row["document_id"], title=row["title"], source=row["source"],
                                     start=row["start"], end=row["end"]),
                   entities=entities, explain=explanation)
