"""Hybrid fact search through the service on the real engine (hashing embedder, real spaCy)."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.errors import InvalidInput, NotFound
from graphmem.model import (
    CallerContext,
    DocumentInput,
    ForgetMode,
    ForgetRequest,
    SearchRequest,
    UpdateInput,
    View,
    parse,
)
from graphmem.results import Explanation, FactHit
from graphmem.service import MemoryService

MEMORIES = [
    "Priya Raman leads Project Falcon at Corvid Works.",
    "Project Falcon streams its events through Kafka.",
    "Marcus prefers PostgreSQL for billing data.",
    "The office in Porto opens at nine.",
    "The Lisbon team moved to a new floor in May.",
    "Jonas cycles to work every day.",
    "The coffee machine on the third floor is broken.",
    "Quarterly planning happens in the first week of January.",
    "Corvid Works hired two designers this spring.",
    "Marcus met Priya Raman in Berlin.",
]


def search(service: MemoryService, ctx: CallerContext, query: str, **options: Any) -> list[FactHit]:
    return service.search(ctx, SearchRequest(query=query, **options))


def signal_names(explain: Explanation | None) -> set[str]:
    return set() if explain is None else {s.signal.value for s in explain.signals}


@pytest.fixture
def loaded(service: MemoryService, ctx: CallerContext, ns: str) -> dict[str, str]:
    docs = [c.document for c in
            service.add_memories(ctx, ns, [DocumentInput(content=m, title=f"m{i}") for i, m in enumerate(MEMORIES)])]
    return {d.content or "": d.id for d in docs}


def test_finds_cites_and_explains(service: MemoryService, ctx: CallerContext, ns: str,
                                  loaded: dict[str, str]) -> None:
    hits = search(service, ctx, "Which platform does Project Falcon use for events?", explain=True)
    assert hits[0].text == "Project Falcon streams its events through Kafka."
    top = hits[0]
    assert top.citation.document_id == loaded[top.text] and top.citation.start == 0
    assert top.citation.end == len(top.text) and top.citation.title == "m1"
    assert top.explain is not None and {"vector", "fulltext"} <= signal_names(top.explain)
    assert top.explain.path[:2] == [top.citation.document_id, top.fact_id]
    assert "embedding" not in top.model_dump_json()
    # graph expansion: facts sharing an entity with the top hits gain the graph signal (the seeds do not)
    expanded = [h for h in hits if "graph" in signal_names(h.explain)]
    assert expanded and all(h.text != top.text for h in expanded)
    seed_entities = {e.id for h in hits[:5] for e in h.entities}
    assert any(seed_entities & {e.id for e in h.entities} for h in expanded)
    again = search(service, ctx, "Which platform does Project Falcon use for events?", explain=True)
    assert [h.fact_id for h in again] == [h.fact_id for h in hits]  # deterministic


def test_current_view_never_returns_old_or_forgotten(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    v1 = service.add_memory(ctx, ns, DocumentInput(content="The billing service runs on MySQL.")).document
    v2 = service.update_memory(ctx, v1.id, UpdateInput(content="The billing service runs on PostgreSQL.")).document
    gone = service.add_memory(ctx, ns, DocumentInput(content="The billing service ran on Oracle long ago.")).document
    service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.soft))
    for explain in (False, True):
        hits = search(service, ctx, "billing service database MySQL Oracle", limit=20, explain=explain)
        assert [h.text for h in hits] == ["The billing service runs on PostgreSQL."]
        assert not explain or (hits[0].explain is not None and hits[0].explain.path[0] == v2.id)
    old = search(service, ctx, "billing service database", view=View(as_of=v1.recorded_at), explain=True)
    assert [h.text for h in old] == ["The billing service runs on MySQL."]
    assert old[0].explain is not None and old[0].explain.path[0] == v1.id
    assert old[0].version == 1 and not old[0].is_latest
    assert v2.version == 2


def test_namespaces_are_never_crossed(service: MemoryService, ctx: CallerContext, ns: str,
                                      loaded: dict[str, str]) -> None:
    other = CallerContext.for_namespaces(f"{ns}-x")
    service.add_memory(other, f"{ns}-x", DocumentInput(
        content="Project Falcon streams its events through Kafka, says the other team."))
    assert all(h.citation.document_id in loaded.values()
               for h in search(service, ctx, "Project Falcon Kafka events", limit=50))
    with pytest.raises(NotFound):
        search(service, ctx, "Kafka", namespaces=[f"{ns}-x"])


def test_min_score_and_bad_options(service: MemoryService, ctx: CallerContext, ns: str,
                                   loaded: dict[str, str]) -> None:
    assert search(service, ctx, "Porto office opening time", min_score=1.0) == []
    for bad in ({"limit": 0}, {"limit": 101}, {"min_score": 2}, {"weights": "x"}, {"unknown": 1}):
        with pytest.raises(InvalidInput):
            parse(SearchRequest, {"query": "Porto", **bad})
    for bad_limit in (0, 101):  # the message names the whole range
        with pytest.raises(InvalidInput, match="limit: must be from 1 to 100"):
            parse(SearchRequest, {"query": "Porto", "limit": bad_limit})
    for query in ("", "   ", "x" * 1001):
        with pytest.raises(InvalidInput):
            parse(SearchRequest, {"query": query})
    assert search(service, ctx, "AND ( OR )")  # nothing for full text, vector still answers
