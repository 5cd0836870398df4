"""Hybrid fact search: vector + full text + graph expansion, fused by weighted reciprocal rank.

1. candidates from the vector index and the full-text index (``retrieve``), each over-fetched, and, when
   ``weights.memory`` asks for it, the memory prior: the best fact of each memory that ranks high by its own
   signals (``search/memories.py``: its chunks, and for chat turns its stored neighbours), at its memory's rank;
2. graph expansion from the best few fused hits: facts sharing their entities, their neighbouring sentences,
   and facts mentioning entities whose name matches the query. Expansion only *finds* candidates; they are
   ranked by their similarity to the query, so a fact reached through a shared entity but about something
   else ranks low;
3. weighted RRF over the lists, then an optional recency term and optional MMR diversity;
4. ``min_score`` applies to the cosine similarity of the query and the fact (0..1 scale), the one score that
   means the same thing across queries and servers.

The default weights and RRF constant are tuned on both measured sets together, the gold set in
``benchmarks/data`` and the conversational development set in ``benchmarks/data/conversations``, with the real
model (``benchmarks/quality.py`` prints both, beside plain BM25 and plain dense baselines): vector 1.0, full
text 0.4, graph 0.2, k = 5. Full text at 0.2 (tuned on the gold set alone) gave the development set recall@10
0.811 (0.840 at 0.4) with gold recall@10 0.964 and MRR 0.896 (0.964 and 0.895-0.905 at 0.4, five runs); at
0.5 and 1.0 gold MRR fell below 0.88, and graph 0.5 or k 20-60 lost on both sets. Graph expansion as an
unranked source pulled MRR down (0.74 on the gold set); ranked by similarity and weighted low it adds
multi-hop answers. The memory prior at weight 1.0 lifted fact search (deduplicated to memories) on the
development set from recall@10 0.840 to 0.863 (0.846 at 0.5, 0.854 at 2.0) and on the gold set from 0.974
to 0.984 (MRR 0.882 to 0.896), but it costs four statements (memories by chunk vector and full text, their
stored neighbours, their best facts): at 10k facts (benchmarks/search.py, statement times per search) the chunk
vector scan took 21.9 ms (since moved to the index, ~7 ms), the best facts 13.5 ms, the chunk full text 16 ms
(2.4 calls) and the neighbours 1.8 ms, against 31.6 ms for the whole search without them. Fact search and
recall are the hot paths of agents, so the prior is off by default (``weights.memory``);
``search_documents`` fuses the same memory-level signals at the memory level. Full text and graph contribute
their top 40 only, whatever the limit: deeper ranks of a weak signal only reorder near-ties, and made the
ranking depend on the page size.

Every statement filters by the caller's namespaces, the view and the filters inside the query; results
carry no embeddings, each hit a citation; ties break by id.
"""

from __future__ import annotations

from typing import Any

from graphmem.model import SearchRequest
from graphmem.results import Citation, EntityRef, Explanation, FactHit, Signal
from graphmem.search.fuse import Fused, mmr, rrf, with_recency
from graphmem.search.lucene import escape_lucene
from graphmem.search.memories import MEMORY_RRF_K, MEMORY_WEIGHTS, MemoryLists, memory_candidates, with_context
from graphmem.search.retrieve import Candidate, fulltext_candidates, vector_candidates
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.views import filter_params, view_params

SEEDS = 5  # top fused hits that graph expansion starts from
ENTITY_FANOUT = 25  # facts taken per shared or named entity: a hub entity cannot flood the candidates
NAMED_ENTITIES = 10  # entities whose name best matches the query, for the graph signal: one index call of
# 20 x that, never widened (widening tripled the calls for rare words; this is the weakest signal)
MIN_POOL = 30  # vector candidates, at least (limit x POOL_FACTOR above that)
# 2, not 3: at 100k facts limit=100 cost 2.1x limit=10 at p50 with 3 (300 candidates, an index k of 1,200);
# at limit <= 15 the pool is MIN_POOL either way
POOL_FACTOR = 2
SECONDARY_DEPTH = 40  # full-text and graph candidates: deeper, they only add noise at weight 0.2


def search_facts(tx: Tx, dialect: Dialect, namespaces: list[str], vector: list[float], options: SearchRequest,
                 now_ms: int, memories: MemoryLists | None = None) -> list[FactHit]:
    """The fact hits of ``options.query`` in ``namespaces`` (already checked by the service); ``memories``:
    the memory-level candidates when the caller has them already (``memories.memory_candidates``)."""
    text, filters = options.query, options.filters()
    pool = candidate_pool(options.limit)
    scope: dict[str, Any] = {"namespaces": namespaces, **view_params(options.view), **filter_params(filters)}
    weights = {Signal(name): weight for name, weight in options.weights.model_dump().items()}
    lists: dict[Signal, list[Candidate]] = {
        Signal.vector: vector_candidates(tx, dialect, namespaces, options.view, vector, pool, filters),
        Signal.fulltext: fulltext_candidates(tx, dialect, namespaces, options.view, text, SECONDARY_DEPTH, filters),
    }
    if weights.get(Signal.memory, 0) > 0:  # the memory prior costs four statements: asked for, not by default
        if memories is None:
            memories = memory_candidates(tx, dialect, {**scope, "vector": vector}, text, pool, SECONDARY_DEPTH)
        lists[Signal.memory] = _memory_prior(tx, {**scope, "vector": vector}, memories)
    seeds = [f.id for f in rrf(lists, weights, options.rrf_k)[:SEEDS]]
    lists[Signal.graph] = _graph_candidates(tx, dialect, scope, text, vector, seeds, SECONDARY_DEPTH)
    fused = rrf(lists, weights, options.rrf_k)[:pool]
    rows = {row["id"]: row for row in tx.collected("facts_hydrate", fact_ids=[f.id for f in fused],
                                                   namespaces=namespaces, vector=vector,
                                                   with_embedding=options.diversity > 0)}
    fused = [f for f in fused if f.id in rows]
    similarity = {fid: dialect.cosine_score(row["raw"]) for fid, row in rows.items()}
    if options.min_score is not None:
        fused = [f for f in fused if similarity[f.id] >= options.min_score]
    fused = with_recency(fused, {fid: row["recorded_at"] for fid, row in rows.items()}, now_ms,
                         options.recency_weight, options.recency_half_life_days)
    fused = mmr(fused, lambda fid: rows[fid]["embedding"], options.limit, options.diversity)
    return [fact_hit(rows[f.id], f, similarity[f.id], options.explain) for f in fused[: options.limit]]


def candidate_pool(limit: int) -> int:
    """How many candidates the primary signal gives and how many fused hits are hydrated, for ``limit`` hits."""
    return max(MIN_POOL, limit * POOL_FACTOR)


def _memory_prior(tx: Tx, params: dict[str, Any], memories: MemoryLists) -> list[Candidate]:
    """The best fact (most similar to the query) of each of the ``SECONDARY_DEPTH`` memories that rank best by
    their own signals and their stored neighbours (``search/memories.py``), at its memory's rank: a chat turn
    that answers as a whole lifts its best sentence, the answer after a strong question turn too."""
    ranking = rrf(with_context(tx, params, memories), MEMORY_WEIGHTS, MEMORY_RRF_K)
    rank_of = {m.id: rank for rank, m in enumerate(ranking[:SECONDARY_DEPTH], start=1)}
    if not rank_of:
        return []
    rows = tx.run("facts_best_of_documents", **{**params, "document_ids": list(rank_of), "per_document": 1})
    ordered = sorted((rank_of[row["document_id"]], row["id"]) for row in rows)
    return [Candidate(fact_id, 1 / rank, rank) for rank, fact_id in ordered]


def _graph_candidates(tx: Tx, dialect: Dialect, scope: dict[str, Any], text: str, vector: list[float],
                      seeds: list[str], limit: int) -> list[Candidate]:
    """Facts one hop from the seeds or mentioning an entity named in the query, ranked by similarity to the
    query; the seeds themselves are left out (they already rank through their own signals)."""
    params = {**scope, "vector": vector, "limit": limit}
    rows: list[dict[str, Any]] = []
    if seeds:
        rows += tx.collected("facts_sharing_entities", fact_ids=seeds, fanout=ENTITY_FANOUT, **params)
        rows += tx.collected("facts_neighbouring", fact_ids=seeds, **params)
    query = escape_lucene(text)
    if query is not None:
        named = tx.collected("entities_by_name", index=dialect.index_name(SearchIndex.entity_name),
                             **{**params, "query": query, "k": NAMED_ENTITIES * 20, "limit": NAMED_ENTITIES})
        rows += tx.collected("facts_mentioning", entity_ids=[e["id"] for e in named], fanout=ENTITY_FANOUT, **params)
    best = {row["id"]: dialect.cosine_score(row["raw"]) for row in rows if row["id"] not in seeds}
    ordered = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]
    return [Candidate(fid, score, rank) for rank, (fid, score) in enumerate(ordered, start=1)]


def fact_hit(row: dict[str, Any], fused: Fused, similarity: float, explain: bool) -> FactHit:
    """A fact hit from its ``facts_hydrate`` row."""
    entities = sorted((EntityRef.model_validate(e) for e in row["entities"] if e and e.get("id")),
                      key=lambda e: e.id)
    explanation = Explanation(
        signals=fused.signal_scores(), fused=fused.score, similarity=similarity,
        path=[row["document_id"], row["id"], *(e.id for e in entities)]) if explain else None
    return FactHit(fact_id=row["id"], text=row["text"], score=fused.score, similarity=similarity,
                   version=row["version"], is_latest=row["is_latest"], is_forgotten=bool(row["is_forgotten"]),
                   is_inference=bool(row["is_inference"]), parent_memory_id=row["parent_memory_id"],
                   recorded_at=row["recorded_at"],
                   citation=citation(row),
                   entities=entities, attributes=row["attributes"] or [], explain=explanation)


def citation(row: dict[str, Any]) -> Citation:
    """Where a fact hit's or a triple's evidence lives, from its row (``facts_hydrate``, ``triple_rows``)."""
    return Citation(document_id=row["document_id"], namespace=row["namespace"], title=row["title"],
                    source=row["source"], path=row["path"], start=row["start"], end=row["end"])
