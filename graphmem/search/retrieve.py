"""Candidate facts from the vector and full-text signals, always inside the caller's namespaces and view.

* Vector: the index is approximate and post-filtered (namespace, view), so the query over-fetches and
  widens while filters leave too few hits, up to a bound. A namespace small enough is scanned exactly with
  ``vector.similarity.cosine`` instead (through the dialect, which puts both servers on one 0..1 scale),
  so a 10-fact namespace inside 100k other facts still finds its hits.
* Full-text: user text is Lucene-escaped; when nothing searchable is left the signal is skipped, never
  sent. The index is post-filtered too, and widens the same way, so a term common in other namespaces
  still finds the caller's few facts. A namespace small enough to be scanned exactly asks the index for
  its widest ``k`` at once: it seldom holds ``limit`` matches, so the narrower requests only ever led to
  the widest one, and each request costs a statement.

Each candidate carries its signal's score and rank; ties break by id so results are deterministic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem.model import NO_FILTERS, SearchFilters, View
from graphmem.search.lucene import escape_lucene
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.names import StatementName
from graphmem.store.views import filter_params, view_params

EXACT_SCAN_MAX_FACTS = 1_500  # at or below, an exact scan: ~18 µs a fact on the bundled engine, so <= ~30 ms
OVERFETCH = 4  # first index request: limit x this
MAX_INDEX_K = 2_000  # widening stops here (post-filtered index results)


@dataclass(frozen=True)
class Candidate:
    id: str
    score: float
    rank: int  # 1-based within its signal's list


def ranked(rows: list[dict[str, Any]], score_key: str = "score",
           scale: Callable[[float], float] = float) -> list[Candidate]:
    return [Candidate(str(row["id"]), scale(row[score_key]), rank) for rank, row in enumerate(rows, start=1)]


@dataclass(frozen=True)
class Target:
    """The named statements and indexes of one searched label (facts, chunks or entities)."""

    count: StatementName
    scan: StatementName
    search: StatementName
    index: SearchIndex
    text_search: StatementName
    text_index: SearchIndex
    scan_max: int = EXACT_SCAN_MAX_FACTS  # exact scan at or below this many items in the namespaces

    def is_small(self, tx: Tx, namespaces: list[str]) -> bool:
        """Whether the namespaces hold few enough items to scan them exactly (``namespace_size``)."""
        return namespace_size(tx, self.count, namespaces, self.scan_max) <= self.scan_max


FACTS = Target("facts_count", "facts_vector_scan", "facts_vector_search", SearchIndex.fact_embedding,
               "facts_fulltext_search", SearchIndex.fact_text)
ENTITIES = Target("entities_count", "entities_vector_scan", "entities_vector_search", SearchIndex.entity_embedding,
                  "entities_name_search", SearchIndex.entity_name)
# Chunks scan up to 500 (~10 ms): at 10k facts a namespace holds ~1,100 chunks, which scanned in 22 ms against
# 7 ms through the index (benchmarks/search.py); facts keep the larger bound, their signal is the primary one.
CHUNKS = Target("chunks_count", "chunks_vector_scan", "chunks_vector_search", SearchIndex.chunk_embedding,
                "chunks_fulltext_search", SearchIndex.chunk_text, scan_max=500)


def vector_ranked(tx: Tx, dialect: Dialect, target: Target, params: dict[str, Any], limit: int) -> list[Candidate]:
    """The ``limit`` nearest items: an exact scan at or below ``target.scan_max`` items in the caller's
    namespaces, else the index, widened while the filters inside the statement leave fewer than ``limit``."""
    params = {**params, "limit": limit}
    if target.is_small(tx, params["namespaces"]):
        return ranked(tx.run(target.scan, **params), "raw", dialect.cosine_score)
    return ranked(widening(tx, target.search, dialect.index_name(target.index), params, limit))


def namespace_size(tx: Tx, statement: StatementName, namespaces: list[str], scan_max: int) -> int:
    """How many items the namespaces hold, counted up to ``scan_max + 1`` and memoised for
    ``MEMO_TTL_S`` (counting costs a scan on the bundled engine; a stale size only picks the other path,
    and both return correct results)."""
    key = (statement, tuple(sorted(namespaces)))
    size = tx.memo.get(key)
    if size is None:
        row = tx.single(statement, namespaces=namespaces, cap=scan_max + 1)
        size = tx.memo[key] = int(row["total"]) if row else 0
    return int(size)


def widening(tx: Tx, statement: StatementName, index: str, params: dict[str, Any], limit: int,
             widest: bool = False) -> list[dict[str, Any]]:
    """Run an index statement that post-filters the index's top ``k``: over-fetch, and widen ``k`` while the
    filters leave fewer than ``limit`` rows, up to ``MAX_INDEX_K`` (``widest``: start there). A query whose
    terms are rare costs little to widen (the index has few hits to give); one that is common elsewhere but
    rare in the caller's namespaces is exactly the case that needs it."""
    k = MAX_INDEX_K if widest else max(limit * OVERFETCH, 50)
    while True:
        rows = tx.collected(statement, index=index, k=k, **{**params, "limit": limit})
        if len(rows) >= limit or k >= MAX_INDEX_K:
            return rows
        k = min(k * 4, MAX_INDEX_K)


def vector_candidates(tx: Tx, dialect: Dialect, namespaces: list[str], view: View, vector: list[float],
                      limit: int, filters: SearchFilters = NO_FILTERS) -> list[Candidate]:
    params = {"namespaces": namespaces, "vector": vector, **view_params(view), **filter_params(filters)}
    return vector_ranked(tx, dialect, FACTS, params, limit)


def fulltext_candidates(tx: Tx, dialect: Dialect, namespaces: list[str], view: View, text: str,
                        limit: int, filters: SearchFilters = NO_FILTERS) -> list[Candidate]:
    return fulltext_ranked(tx, dialect, FACTS, {"namespaces": namespaces, **view_params(view),
                                                **filter_params(filters)}, text, limit)


def fulltext_ranked(tx: Tx, dialect: Dialect, target: Target, params: dict[str, Any], text: str,
                    limit: int) -> list[Candidate]:
    """The target's full-text top ``limit``, widened as ``widening`` does (from the widest ``k`` in a small
    namespace); none when nothing searchable is left of ``text`` once escaped."""
    query = escape_lucene(text)
    if query is None:
        return []
    return ranked(widening(tx, target.text_search, dialect.index_name(target.text_index), {**params, "query": query},
                           limit, widest=target.is_small(tx, params["namespaces"])))

