"""Search targets beyond facts (documents, entities, triples), the filters, and budgeted recall, on the real
engine (hashing embedder, real spaCy). Every path is checked against the time views and namespaces."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from factories import add, update

from graphmem.errors import InvalidInput, NotFound
from graphmem.model import (
    CallerContext,
    DocumentInput,
    EntitySearchRequest,
    ForgetMode,
    ForgetRequest,
    RecallRequest,
    SearchRequest,
    TripleQuery,
    View,
    parse,
)
from graphmem.results import DocumentHit, EntityHit, RecallResult, TripleHit
from graphmem.search import entities as entity_search
from graphmem.search import memories, retrieve
from graphmem.search.memories import MEMORY_RRF_K, MEMORY_WEIGHTS
from graphmem.search.recall import count_tokens
from graphmem.service import MemoryService

# ---- helpers: one typed request per call --------------------------------------------------------------


def forget(service: MemoryService, ctx: CallerContext, doc_id: str) -> None:
    service.forget(ctx, doc_id, ForgetRequest(mode=ForgetMode.soft))


def cited(service: MemoryService, ctx: CallerContext, query: str, **options: Any) -> list[str]:
    """The document ids the fact hits cite, in rank order."""
    return [h.citation.document_id for h in service.search(ctx, SearchRequest(query=query, **options))]


def documents(service: MemoryService, ctx: CallerContext, query: str, **options: Any) -> list[DocumentHit]:
    return service.search_memories(ctx, SearchRequest(query=query, **options))


def entities(service: MemoryService, ctx: CallerContext, query: str, **options: Any) -> list[EntityHit]:
    return service.search_entities(ctx, EntitySearchRequest(query=query, **options)).items


def triples(service: MemoryService, ctx: CallerContext, **query: Any) -> list[TripleHit]:
    return service.search_triples(ctx, TripleQuery(**query)).items


def recall(service: MemoryService, ctx: CallerContext, query: str, **options: Any) -> RecallResult:
    return service.recall(ctx, RecallRequest(query=query, **options))


# ---- tests --------------------------------------------------------------------------------------------


def test_filters_narrow_inside_the_query(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    first = add(service, ctx, ns, "Kafka carries the billing events.", source="notes/a.md")
    second = add(service, ctx, ns, "Kafka carries the audit events for Priya.", source="notes/b.md")
    query = "Kafka events"
    assert set(cited(service, ctx, query)) == {first.id, second.id}
    assert cited(service, ctx, query, source="notes/b.md") == [second.id]
    assert cited(service, ctx, query, document_id=first.id) == [first.id]
    assert cited(service, ctx, query, since=second.recorded_at) == [second.id]
    assert cited(service, ctx, query, until=first.recorded_at) == [first.id]
    priya = next(e for e in entities(service, ctx, "Priya") if e.name == "Priya")
    assert cited(service, ctx, query, entity_id=priya.id) == [second.id]
    with pytest.raises(InvalidInput, match="since must not be after until"):
        parse(SearchRequest, {"query": query, "since": 2, "until": 1})
    with pytest.raises(InvalidInput):
        parse(SearchRequest, {"query": query, "weights": {"magic": 1.0}})


@pytest.fixture(params=["exact_scan", "index"])
def vector_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each target's vector signal both ways: its exact scan (a namespace this small), and its vector index
    (as a namespace past ``scan_max`` searches)."""
    if request.param == "index":
        for module, name in ((retrieve, "FACTS"), (memories, "CHUNKS"), (entity_search, "ENTITIES")):
            monkeypatch.setattr(module, name, dataclasses.replace(getattr(module, name), scan_max=0))
    return str(request.param)


def test_documents_rank_by_their_own_and_their_facts_signals(service: MemoryService, ctx: CallerContext,
                                                              ns: str, vector_path: str) -> None:
    long = add(service, ctx, ns, "Falcon ships in October. Its tracking portal shows live positions. "
                                 "Kafka streams the Falcon events.")
    other = add(service, ctx, ns, "The Porto office opens at nine.")
    hits = documents(service, ctx, "When does Falcon ship?", explain=True)
    assert [h.document_id for h in hits][:1] == [long.id] and len({h.document_id for h in hits}) == len(hits)
    top = hits[0]
    assert 1 <= len(top.facts) <= 3 and top.signals and top.score == sum(
        MEMORY_WEIGHTS[s.signal] / (MEMORY_RRF_K + s.rank) for s in top.signals)
    assert top.facts[0].explain is not None and top.facts[0].explain.path[0] == long.id
    assert len(documents(service, ctx, "office", limit=1)) == 1
    new = update(service, ctx, long.id, "Falcon ships in November.")
    forget(service, ctx, other.id)
    assert [h.document_id for h in documents(service, ctx, "Falcon ship office")] == [new.id]
    old = documents(service, ctx, "Falcon ship office", view=View(as_of=long.recorded_at))
    assert {h.document_id for h in old} == {long.id}  # the office memory came later, and is forgotten
    both = documents(service, ctx, "Falcon ship office", view=View(as_of=other.recorded_at, include_forgotten=True))
    assert {h.document_id for h in both} == {long.id, other.id}


def test_entities_by_name_and_meaning_within_the_view(service: MemoryService, ctx: CallerContext, ns: str,
                                                      vector_path: str) -> None:
    kept = add(service, ctx, ns, "Priya Raman leads Project Falcon.")
    gone = add(service, ctx, ns, "Oskar Lindqvist joined the Heron team.")
    hits = entities(service, ctx, "Priya Raman", explain=True)
    assert hits[0].name == "Priya Raman" and hits[0].facts == 1 and hits[0].signals is not None
    assert any(s.signal == "name" for s in hits[0].signals) and "embedding" not in hits[0].model_dump_json()
    assert any(h.name == "Oskar Lindqvist" for h in entities(service, ctx, "Oskar Lindqvist"))
    forget(service, ctx, gone.id)
    assert all(h.name != "Oskar Lindqvist" for h in entities(service, ctx, "Oskar Lindqvist", limit=100))
    shown = entities(service, ctx, "Oskar Lindqvist", view=View(include_forgotten=True))
    assert shown[0].name == "Oskar Lindqvist"
    update(service, ctx, kept.id, "Marcus Chen leads Project Falcon.")
    assert all(h.name != "Priya Raman" for h in entities(service, ctx, "Priya Raman", limit=100))
    before = entities(service, ctx, "Priya Raman", view=View(as_of=kept.recorded_at))
    assert before[0].name == "Priya Raman"


def test_triples_by_subject_predicate_object_and_term(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    add(service, ctx, ns, "Priya Raman leads Project Falcon.")
    dislike = add(service, ctx, ns, "Marcus does not like MySQL.")
    add(service, ctx, ns, "Marcus likes PostgreSQL.")
    led = triples(service, ctx, subject="Priya")
    assert [(t.subject.name, t.predicate, t.object.name) for t in led] == [("Priya Raman", "lead", "Project Falcon")]
    assert led[0].citation.start == 0 and led[0].text == "Priya Raman leads Project Falcon."
    assert [t.object.name for t in triples(service, ctx, predicate="leads")] == ["Project Falcon"]
    likes = triples(service, ctx, subject="Marcus", predicate="like")
    assert {(t.object.name, t.negated) for t in likes} == {("MySQL", True), ("PostgreSQL", False)}
    negated = next(t for t in likes if t.negated)
    assert negated.statement == "Marcus not like MySQL"
    assert [t.object.name for t in triples(service, ctx, subject="Marcus", negated=False)] == ["PostgreSQL"]
    assert [t.object.name for t in triples(service, ctx, object="MySQL")] == ["MySQL"]
    assert {t.object.name for t in triples(service, ctx, term="Marcus")} == {"MySQL", "PostgreSQL"}
    assert [(t.subject.name, t.negated) for t in triples(service, ctx, term="MySQL")] == [("Marcus", True)]
    assert [t.object.name for t in triples(service, ctx, term="leads Project")] == ["Project Falcon"]
    forget(service, ctx, dislike.id)
    assert [t.object.name for t in triples(service, ctx, subject="Marcus")] == ["PostgreSQL"]
    assert len(triples(service, ctx, subject="Marcus", view=View(include_forgotten=True))) == 2
    with pytest.raises(InvalidInput, match="at least one of"):
        parse(TripleQuery, {})
    with pytest.raises(InvalidInput):
        parse(TripleQuery, {"subject": "Marcus", "limit": 101})


def test_triples_follow_versions(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    v1 = add(service, ctx, ns, "Hannah manages Project Heron.")
    update(service, ctx, v1.id, "Hannah manages Project Osprey.")
    assert [t.object.name for t in triples(service, ctx, subject="Hannah")] == ["Project Osprey"]
    old = triples(service, ctx, subject="Hannah", view=View(as_of=v1.recorded_at))
    assert [t.object.name for t in old] == ["Project Heron"]


def test_recall_never_exceeds_its_budget(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    service.add_memories(ctx, ns, [DocumentInput(content=f"Kafka cluster {i} carries the events of team {i} in Porto.",
                                                  title=f"cluster {i}", source=f"ops/{i}.md") for i in range(12)])
    query = "Which Kafka cluster carries the events of the Porto teams?"
    for max_tokens, max_items in ((1500, 8), (120, 8), (60, 3), (32, 8)):
        result = recall(service, ctx, query, max_items=max_items, max_tokens=max_tokens)
        assert count_tokens(result.context_text) == result.tokens_used <= max_tokens
        assert len(result.items) <= max_items
        for number, item in enumerate(result.items, start=1):
            assert f"[{number}] {item.text} (doc {item.citation.document_id}" in result.context_text
        reasons = {s.reason for s in result.skipped}
        if max_tokens == 1500:
            assert result.answer_status == "found" and len(result.items) == 8 and reasons == {"item_limit"}
        if max_tokens == 32:
            assert result.answer_status == "no_confirmed_answer" and result.context_text == ""
            assert reasons == {"token_budget"}
    for bad, allowed in (({"max_items": 0}, "1 to 50"), ({"max_items": 51}, "1 to 50"),
                         ({"max_tokens": 31}, "32 to 16000"), ({"max_tokens": 16_001}, "32 to 16000")):
        with pytest.raises(InvalidInput, match=f"must be from {allowed}"):
            parse(RecallRequest, {"query": query, **bad})


def test_recall_abstains_when_nothing_relevant(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    add(service, ctx, ns, "The Porto office opens at nine.")
    result = recall(service, ctx, "quantum chromodynamics lattice gauge theory")
    assert result.answer_status == "no_confirmed_answer" and result.items == []
    assert {s.reason for s in result.skipped} == {"below_relevance"}
    assert recall(service, ctx, "When does the Porto office open?").answer_status == "found"


def test_recall_respects_views(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    v1 = add(service, ctx, ns, "The standup is at nine in Porto.")
    v2 = update(service, ctx, v1.id, "The standup is at ten in Porto.")
    assert [i.text for i in recall(service, ctx, "When is the standup in Porto?").items] == [v2.content]
    old = recall(service, ctx, "When is the standup in Porto?", view=View(as_of=v1.recorded_at))
    assert [i.text for i in old.items] == [v1.content]
    forget(service, ctx, v2.id)
    assert recall(service, ctx, "When is the standup in Porto?").items == []


def test_no_target_crosses_namespaces(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    other_ns = f"{ns}-other"
    other = CallerContext.for_namespaces(other_ns)
    add(service, other, other_ns, "Marcus does not like MySQL. Priya Raman leads Project Falcon.")
    add(service, ctx, ns, "The Porto office opens at nine.")
    assert {h.name for h in entities(service, ctx, "Marcus Priya Raman MySQL Falcon", limit=100)} == {"Porto"}
    assert triples(service, ctx, term="Marcus") == []
    assert all(d.facts[0].text == "The Porto office opens at nine."
               for d in documents(service, ctx, "Marcus MySQL Falcon", limit=100))
    assert all(i.text == "The Porto office opens at nine." for i in recall(service, ctx, "Marcus MySQL").items)
    for call in (lambda: entities(service, ctx, "Marcus", namespaces=[other_ns]),
                 lambda: triples(service, ctx, namespaces=[other_ns], term="Marcus"),
                 lambda: recall(service, ctx, "Marcus", namespaces=[other_ns])):
        with pytest.raises(NotFound):
            call()


def test_recall_confirms_only_an_answer_of_the_asked_kind(service: MemoryService, ctx: CallerContext,
                                                          ns: str) -> None:
    add(service, ctx, ns, "Brightwater Logistics is headquartered in Rotterdam.")
    unconfirmed = recall(service, ctx, "How many employees does Brightwater Logistics have?")
    assert unconfirmed.answer_status == "no_confirmed_answer" and unconfirmed.items  # context, not an answer
    add(service, ctx, ns, "Brightwater Logistics has 420 employees.")
    assert recall(service, ctx, "How many employees does Brightwater Logistics have?").answer_status == "found"
    assert recall(service, ctx, "Where is Brightwater Logistics headquartered?").answer_status == "found"
