"""Document (memory) search: memories ranked by their own signals and by their facts'.

Four ranked lists of memories are fused by weighted reciprocal rank: the memory-level signals of
``search/memories.py`` (the memory's own vector and full-text entry, its best chunk's; its stored neighbours,
for chat turns) and ``facts``, fact search (``search/hybrid.py``, without its memory prior) grouped by
memory, each at its best fact's rank.

A memory that answers as a whole (a chat turn whose second sentence needs its first) ranks through its own
signals; one with a single sentence that answers ranks through its facts. The weights and constant are
tuned on the gold set and the conversational development set together (``search/memories.py`` says how).
Then the optional recency term and ``min_score`` (on the memory's similarity:
its best chunk's or best fact's cosine, whichever is higher), as fact search applies them.

Each hit carries up to ``FACTS_PER_DOCUMENT`` facts as its evidence, each with its citation: those fact
search found, or, for a memory found by its own signals alone, its facts most similar to the query.
"""

from __future__ import annotations

from typing import Any

from graphmem.model import MAX_LIMIT, SearchRequest
from graphmem.results import DocumentHit, FactHit, Signal
from graphmem.search.fuse import Fused, rrf, with_recency
from graphmem.search.hybrid import SECONDARY_DEPTH, candidate_pool, fact_hit, search_facts
from graphmem.search.memories import MEMORY_RRF_K, MEMORY_WEIGHTS, memory_candidates, with_context
from graphmem.search.retrieve import Candidate
from graphmem.store.dialect import Dialect
from graphmem.store.driver import Tx
from graphmem.store.views import filter_params, view_params

FACTS_PER_DOCUMENT = 3
FACT_POOL_FACTOR = 5  # facts fetched per document asked for, so several facts of one document still leave room


def search_documents(tx: Tx, dialect: Dialect, namespaces: list[str], vector: list[float], options: SearchRequest,
                     now_ms: int) -> list[DocumentHit]:
    """The memories of ``options.query`` in ``namespaces`` (already checked by the service)."""
    pool = candidate_pool(options.limit)
    params: dict[str, Any] = {"namespaces": namespaces, "vector": vector, **view_params(options.view),
                              **filter_params(options.filters())}
    memories = memory_candidates(tx, dialect, params, options.query, pool, SECONDARY_DEPTH)
    # the facts' own ranking: the memory signals are fused here, not again as fact search's memory prior
    deeper = options.model_copy(update={"limit": min(MAX_LIMIT, options.limit * FACT_POOL_FACTOR),
                                        "weights": options.weights.model_copy(update={"memory": 0.0})})
    by_document: dict[str, list[FactHit]] = {}
    for fact in search_facts(tx, dialect, namespaces, vector, deeper, now_ms, memories):
        by_document.setdefault(fact.citation.document_id, []).append(fact)
    lists = {
        **memories,
        Signal.facts: [Candidate(doc_id, group[0].score, rank)
                       for rank, (doc_id, group) in enumerate(by_document.items(), start=1)],
    }
    fused = rrf(with_context(tx, params, lists), MEMORY_WEIGHTS, MEMORY_RRF_K)[:pool]
    rows = {row["id"]: row for row in tx.run("documents_hydrate_for_search", document_ids=[f.id for f in fused],
                                             namespaces=namespaces, vector=vector)}
    fused = [f for f in fused if f.id in rows]
    similarity = {doc_id: max([dialect.cosine_score(row["raw"]), *(f.similarity for f in by_document.get(doc_id, []))])
                  for doc_id, row in rows.items()}
    if options.min_score is not None:
        fused = [f for f in fused if similarity[f.id] >= options.min_score]
    fused = with_recency(fused, {doc_id: row["recorded_at"] for doc_id, row in rows.items()}, now_ms,
                         options.recency_weight, options.recency_half_life_days)[: options.limit]
    evidence = _evidence(tx, dialect, namespaces, vector, params, [f.id for f in fused], by_document)
    return [_document_hit(rows[f.id], f, similarity[f.id], evidence.get(f.id, []), options.explain) for f in fused]


def _evidence(tx: Tx, dialect: Dialect, namespaces: list[str], vector: list[float], params: dict[str, Any],
              document_ids: list[str], by_document: dict[str, list[FactHit]]) -> dict[str, list[FactHit]]:
    """Each memory's evidence facts: fact search's, or for memories it did not reach, their facts most
    similar to the query (score 0: fact search did not rank them)."""
    evidence = {doc_id: by_document[doc_id][:FACTS_PER_DOCUMENT] for doc_id in document_ids if doc_id in by_document}
    missing = [doc_id for doc_id in document_ids if doc_id not in by_document]
    if not missing:
        return evidence
    ids = [row["id"] for row in tx.run("facts_best_of_documents", **{**params, "document_ids": missing,
                                                                      "per_document": FACTS_PER_DOCUMENT})]
    rows = tx.collected("facts_hydrate", fact_ids=ids, namespaces=namespaces, vector=vector, with_embedding=False)
    for row in rows:
        hit = fact_hit(row, Fused(row["id"], 0.0), dialect.cosine_score(row["raw"]), explain=False)
        evidence.setdefault(hit.citation.document_id, []).append(hit)
    return evidence


def _document_hit(row: dict[str, Any], fused: Fused, similarity: float, facts: list[FactHit],
                  explain: bool) -> DocumentHit:
    return DocumentHit(document_id=row["id"], namespace=row["namespace"], title=row["title"], source=row["source"],
                       version=row["version"], is_latest=row["is_latest"], recorded_at=row["recorded_at"],
                       score=fused.score,
                       similarity=similarity, facts=sorted(facts, key=lambda f: (-f.score, -f.similarity, f.fact_id)),
                       signals=fused.signal_scores() if explain else None)
