"""Document search: fact search aggregated by document. A document scores as its best fact (the one piece of
it that answers), and carries its best few facts as the evidence, each with its citation."""

from __future__ import annotations

from graphmem.results import DocumentHit, FactHit

FACTS_PER_DOCUMENT = 3
FACT_POOL_FACTOR = 5  # facts fetched per document asked for, so several facts of one document still leave room


def aggregate_documents(facts: list[FactHit], limit: int) -> list[DocumentHit]:
    """Group fact hits (best first) by document; order by best fact score, ties by document id."""
    grouped: dict[str, list[FactHit]] = {}
    for fact in facts:
        grouped.setdefault(fact.citation.document_id, []).append(fact)
    hits = [DocumentHit(document_id=doc_id, title=group[0].citation.title, source=group[0].citation.source,
                        version=group[0].version, is_latest=group[0].is_latest, recorded_at=group[0].recorded_at,
                        score=group[0].score, similarity=max(f.similarity for f in group),
                        facts=group[:FACTS_PER_DOCUMENT])
            for doc_id, group in grouped.items()]
    return sorted(hits, key=lambda h: (-h.score, h.document_id))[:limit]
