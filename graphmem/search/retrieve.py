"""Candidate facts from the vector and full-text signals, always inside the caller's namespaces and view.

* Vector: the index is approximate and post-filtered (namespace, view), so the query over-fetches and
  widens while filters leave too few hits, up to a bound. A namespace small enough is scanned exactly with
  ``vector.similarity.cosine`` instead (through the dialect, which puts both servers on one 0..1 scale),
  so a 10-fact namespace inside 100k other facts still finds its hits.
* Full-text: user text is Lucene-escaped; when nothing searchable is left the signal is skipped, never
  sent.

Each candidate carries its signal's score and rank; ties break by id so results are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphmem.search.lucene import escape_lucene
from graphmem.store.dialect import Dialect, SearchIndex
from graphmem.store.driver import Tx
from graphmem.store.views import View

EXACT_SCAN_MAX_FACTS = 5_000  # at or below: an exact scan is both exact and fast enough
OVERFETCH = 4  # first index request: limit x this
MAX_INDEX_K = 2_000  # widening stops here (post-filtered index results)


@dataclass(frozen=True)
class Candidate:
    fact_id: str
    signal: str  # "vector" or "fulltext"
    score: float
    rank: int  # 1-based within its signal


def _ranked(rows: list[dict[str, Any]], signal: str, score_key: str = "score",
            scale: Any = float) -> list[Candidate]:
    return [Candidate(str(row["id"]), signal, scale(row[score_key]), rank)
            for rank, row in enumerate(rows, start=1)]


def vector_candidates(tx: Tx, dialect: Dialect, namespaces: list[str], view: View, vector: list[float],
                      limit: int) -> list[Candidate]:
    params = {"namespaces": namespaces, "vector": vector, "limit": limit, **view.params()}
    count = tx.single("facts_count", namespaces=namespaces)
    if count is not None and int(count["facts"]) <= EXACT_SCAN_MAX_FACTS:
        rows = tx.run("facts_vector_scan", **params)
        return _ranked(rows, "vector", "raw", dialect.cosine_score)
    k = max(limit * OVERFETCH, 50)
    index = dialect.index_name(SearchIndex.fact_embedding)
    while True:
        rows = tx.run("facts_vector_search", index=index, k=k, **params)
        if len(rows) >= limit or k >= MAX_INDEX_K:
            return _ranked(rows, "vector")
        k = min(k * 4, MAX_INDEX_K)


def fulltext_candidates(tx: Tx, dialect: Dialect, namespaces: list[str], view: View, text: str,
                        limit: int) -> list[Candidate]:
    query = escape_lucene(text)
    if query is None:
        return []
    rows = tx.run("facts_fulltext_search", index=dialect.index_name(SearchIndex.fact_text), query=query,
                  k=min(max(limit * OVERFETCH, 50), MAX_INDEX_K), limit=limit, namespaces=namespaces,
                  **view.params())
    return _ranked(rows, "fulltext")
