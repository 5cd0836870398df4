"""Documents through the service layer on the real bundled engine: add, get, list, idempotency."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j
import pytest
from factories import add, update
from pydantic import BaseModel

from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.model import (
    CallerContext,
    DocumentInput,
    DocumentListOptions,
    ForgetMode,
    ForgetRequest,
    View,
    parse,
)
from graphmem.records import content_hash
from graphmem.results import DocumentPage
from graphmem.service import MemoryService
from helpers import counts, query


def listing(service: MemoryService, ctx: CallerContext, ns: str, **options: Any) -> DocumentPage:
    return service.list_memories(ctx, ns, DocumentListOptions(**options))


def inputs(rows: list[dict[str, Any]]) -> list[DocumentInput]:
    return [DocumentInput(**row) for row in rows]


class _Batch(BaseModel):
    """A batch as a front end receives it, to check that a bad item's error names its position."""

    items: list[DocumentInput]


def test_add_stores_document_and_sentence_facts(service: MemoryService, ctx: CallerContext, ns: str,
                                                graph: neo4j.Driver) -> None:
    content = "Alice moved to Lisbon. She works on graphs!  Does Bob know?\nYes, he does."
    doc = add(service, ctx, ns, content, title="Alice", source="notes/alice.md",
              metadata={"topic": "people", "stars": 3, "score": 0.5, "ok": True})
    assert doc.version == 1 and doc.is_latest and not doc.is_forgotten
    assert doc.chain_id == doc.id and doc.parent_memory_id is None and doc.latest_id == doc.id
    assert doc.fact_count == 4

    rows = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) "
                        "RETURN f.text AS text, f.start AS s, f.end AS e, f.namespace AS ns, "
                        "f.is_latest AS latest, f.extractor AS ex ORDER BY f.position", id=doc.id)
    assert [r["text"] for r in rows] == ["Alice moved to Lisbon.", "She works on graphs!",
                                         "Does Bob know?", "Yes, he does."]
    for row in rows:
        assert content[row["s"]:row["e"]] == row["text"]
        assert row["ns"] == ns and row["latest"] is True and row["ex"]
    stored = query(graph, "MATCH (d:Document {id: $id}) RETURN d.content_hash AS h, d.metadata AS m, "
                          "d.recorded_at AS t", id=doc.id)[0]
    assert stored["h"] == content_hash(ns, content)
    assert isinstance(stored["m"], str)  # metadata is a JSON string: neither engine stores maps
    assert isinstance(stored["t"], int) and stored["t"] == doc.recorded_at

    got = service.get_version(ctx, doc.id)
    assert got.content == content and got.metadata == {"topic": "people", "stars": 3, "score": 0.5, "ok": True}
    assert got.title == "Alice" and got.source == "notes/alice.md"


def test_list_pages_newest_first_with_totals(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    ids = [add(service, ctx, ns, f"Memory number {i}.").id for i in range(7)]
    first = listing(service, ctx, ns, offset=0, limit=3)
    second = listing(service, ctx, ns, offset=3, limit=3)
    third = listing(service, ctx, ns, offset=6, limit=3)
    assert first.total == second.total == third.total == 7
    listed = [d.id for page in (first, second, third) for d in page.items]
    assert len(listed) == 7 and set(listed) == set(ids)
    keys = [(d.recorded_at, d.id) for page in (first, second, third) for d in page.items]
    assert keys == sorted(keys, key=lambda k: (-k[0], k[1]))  # newest first, id breaks ties
    assert first.next_cursor is not None and third.next_cursor is None and len(third.items) == 1
    assert first.limit == 3
    assert listing(service, ctx, ns, offset=9, limit=3).items == []
    assert first.items[0].preview == "Memory number 6."


def test_list_default_view_hides_old_and_forgotten(service: MemoryService, ctx: CallerContext,
                                                   ns: str) -> None:
    kept = add(service, ctx, ns, "Kept.")
    old = add(service, ctx, ns, "Old text.")
    new = update(service, ctx, old.id, "New text.")
    gone = add(service, ctx, ns, "Forgotten text.")
    service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.soft))
    current = {d.id for d in service.list_memories(ctx, ns).items}
    assert current == {kept.id, new.id}
    everything = listing(service, ctx, ns, view=View(include_superseded=True, include_forgotten=True))
    assert {d.id for d in everything.items} == {kept.id, old.id, new.id, gone.id}
    as_of = listing(service, ctx, ns, view=View(as_of=old.recorded_at))
    assert old.id in {d.id for d in as_of.items} and new.id not in {d.id for d in as_of.items}


def test_same_request_id_same_content_returns_original(service: MemoryService, ctx: CallerContext, ns: str,
                                                       graph: neo4j.Driver) -> None:
    first = add(service, ctx, ns, "Retry me.", title="t", metadata={"a": 1}, request_id="req-retry-1")
    before = counts(graph, ns)
    again = add(service, ctx, ns, "Retry me.", title="t", metadata={"a": 1}, request_id="req-retry-1")
    assert again.id == first.id and again.content == "Retry me."
    assert counts(graph, ns) == before


@pytest.mark.parametrize("change", [{"content": "Other."}, {"title": "other"}, {"source": "x"},
                                    {"metadata": {"a": 2}}])
def test_same_request_id_different_request_conflicts(service: MemoryService, ctx: CallerContext, ns: str,
                                                     graph: neo4j.Driver, change: dict[str, object]) -> None:
    base: dict[str, object] = {"content": "Retry me.", "title": "t", "metadata": {"a": 1}}
    service.add_memory(ctx, ns, DocumentInput(request_id="req-conflict", **base))
    before = counts(graph, ns)
    changed = DocumentInput(request_id="req-conflict", **{**base, **change})
    with pytest.raises(Conflict) as raised:
        service.add_memory(ctx, ns, changed)
    assert "next_step" in raised.value.details
    assert counts(graph, ns) == before


def test_request_ids_are_per_namespace(service: MemoryService) -> None:
    ctx = CallerContext.for_namespaces("t-rq-a", "t-rq-b")
    a = add(service, ctx, "t-rq-a", "Same words.", request_id="req-shared")
    b = add(service, ctx, "t-rq-b", "Same words.", request_id="req-shared")
    assert a.id != b.id


def test_concurrent_adds_with_one_request_id_make_one_document(service: MemoryService, ctx: CallerContext,
                                                               ns: str, graph: neo4j.Driver) -> None:
    def add_once(_: int) -> str:
        return add(service, ctx, ns, "It happens exactly once. Even under a race.", request_id="req-race-01").id

    with ThreadPoolExecutor(max_workers=6) as pool:
        ids = set(pool.map(add_once, range(6)))
    assert len(ids) == 1
    rows = query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN count(d) AS c", ns=ns)
    assert rows[0]["c"] == 1
    facts = query(graph, "MATCH (f:Fact) WHERE f.namespace = $ns RETURN count(f) AS c", ns=ns)
    assert facts[0]["c"] == 2


def test_unknown_id_is_not_found(service: MemoryService, ctx: CallerContext) -> None:
    for call in (lambda: service.get_version(ctx, "no-such-id"),
                 lambda: service.history(ctx, "no-such-id"),
                 lambda: update(service, ctx, "no-such-id", "x"),
                 lambda: service.forget(ctx, "no-such-id", ForgetRequest(mode=ForgetMode.soft)),
                 lambda: service.restore(ctx, "no-such-id")):
        with pytest.raises(NotFound):
            call()


def test_batch_add_is_one_write(service: MemoryService, ctx: CallerContext, ns: str, graph: neo4j.Driver) -> None:
    first = add(service, ctx, ns, "Sent before.", request_id="batch-req-0")
    items = [DocumentInput(content=f"Batch item {i}. Second sentence {i}.") for i in range(50)]
    items.append(DocumentInput(content="Sent before.", request_id="batch-req-0"))
    docs = [c.document for c in service.add_memories(ctx, ns, items)]
    assert len(docs) == 51 and docs[-1].id == first.id and len({d.id for d in docs}) == 51
    # nodes: documents, facts, a chunk each, the namespace's StoredTail; edges: CONTAINS (facts and chunks),
    # FOLLOWS (stored order)
    assert counts(graph, ns) == (51 + 101 + 51 + 1, 101 + 51 + 50)

    before = counts(graph, ns)
    with pytest.raises(InvalidInput) as raised:  # a blank item cannot even be built: the batch never starts
        parse(_Batch, {"items": [{"content": "fine"}, {"content": " "}]})
    assert raised.value.message.startswith("items.1.content")
    changed = inputs([{"content": "new"}, {"content": "changed", "request_id": "batch-req-0"}])
    with pytest.raises(Conflict):
        service.add_memories(ctx, ns, changed)
    with pytest.raises(InvalidInput):
        service.add_memories(ctx, ns, inputs([{"content": "x", "request_id": "dup-req-01"}] * 2))
    with pytest.raises(InvalidInput):
        service.add_memories(ctx, ns, inputs([{"content": "x"}] * 1001))
    with pytest.raises(InvalidInput):
        service.add_memories(ctx, ns, [])
    assert counts(graph, ns) == before
