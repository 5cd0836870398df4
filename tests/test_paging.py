"""Paging: signed keyset cursors for documents, history, entity and triple searches; bounded offsets.

A walk of every page while memories are added (or updated) sees exactly the memories of the first page's
time, once each; a cursor is bound to the request it continues and cannot be edited or reused elsewhere.
"""

from __future__ import annotations

import pytest
from factories import add

from graphmem.errors import InvalidInput
from graphmem.model import (
    MAX_OFFSET,
    CallerContext,
    DocumentListOptions,
    EntitySearchRequest,
    HistoryOptions,
    TripleQuery,
    UpdateInput,
    View,
    parse,
)
from graphmem.service import MemoryService


def walk_documents(service: MemoryService, ctx: CallerContext, ns: str, limit: int,
                   between: list[str] | None = None, view: View | None = None) -> list[str]:
    """Every page's ids; the memories of ``between`` are added one per page turn (the rest at the end)."""
    page = service.list_memories(ctx, ns, DocumentListOptions(limit=limit, view=view or View()))
    ids = [item.id for item in page.items]
    pending = list(between or [])
    while page.next_cursor is not None:
        if pending:
            add(service, ctx, ns, pending.pop(0))
        page = service.list_memories(ctx, ns, DocumentListOptions(limit=limit, cursor=page.next_cursor,
                                                                   view=view or View()))
        ids += [item.id for item in page.items]
        assert len(ids) < 1000
    for content in pending:
        add(service, ctx, ns, content)
    return ids


def test_document_pages_are_stable_while_memories_are_added(service: MemoryService, ctx: CallerContext,
                                                              ns: str) -> None:
    existing = [add(service, ctx, ns, f"Memory number {i} about the lighthouse.").id for i in range(11)]
    walked = walk_documents(service, ctx, ns, limit=3, between=[f"Added later {i}." for i in range(6)])
    assert sorted(walked) == sorted(existing) and len(walked) == len(set(walked))
    assert len(service.list_memories(ctx, ns).items) == 17  # a new walk sees the added ones


def test_a_walk_sees_one_state_while_memories_change(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    docs = [add(service, ctx, ns, f"Harbour note {i}.") for i in range(6)]
    first = service.list_memories(ctx, ns, DocumentListOptions(limit=2))
    newest = first.items[0].id
    service.update_memory(ctx, docs[0].id, UpdateInput(content="Harbour note 0, revised."))
    rest: list[str] = []
    page = first
    while page.next_cursor is not None:
        page = service.list_memories(ctx, ns, DocumentListOptions(limit=2, cursor=page.next_cursor))
        rest += [item.id for item in page.items]
    assert sorted([i.id for i in first.items] + rest) == sorted(d.id for d in docs)  # the old version, pinned
    assert newest == docs[-1].id


def test_offset_mode_is_bounded(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    docs = [add(service, ctx, ns, f"Offset note {i}.").id for i in range(5)]
    page = service.list_memories(ctx, ns, DocumentListOptions(limit=2, offset=2))
    assert [i.id for i in page.items] == list(reversed(docs))[2:4] and page.total == 5
    assert service.list_memories(ctx, ns, DocumentListOptions(limit=2, offset=MAX_OFFSET)).items == []
    with pytest.raises(InvalidInput, match="cursor"):
        parse(DocumentListOptions, {"offset": MAX_OFFSET + 1})
    with pytest.raises(InvalidInput, match="either a cursor or an offset"):
        parse(DocumentListOptions, {"offset": 2, "cursor": "abc"})
    for bad in ({"limit": 0}, {"limit": 201}, {"limit": "5"}, {"limit": True}, {"offset": -1}):
        with pytest.raises(InvalidInput):
            parse(DocumentListOptions, bad)


def test_cursors_cannot_be_forged_or_moved(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    other = f"{ns}-b"
    both = CallerContext.for_namespaces(ns, other)
    for i in range(3):
        add(service, both, ns, f"Alpha {i}.")
        add(service, both, other, f"Beta {i}.")
    cursor = service.list_memories(both, ns, DocumentListOptions(limit=1)).next_cursor
    assert cursor is not None
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    for bad in (tampered, "not-a-cursor", cursor + "x"):
        with pytest.raises(InvalidInput, match="not valid"):
            service.list_memories(both, ns, DocumentListOptions(limit=1, cursor=bad))
    with pytest.raises(InvalidInput, match="another request"):
        service.list_memories(both, other, DocumentListOptions(limit=1, cursor=cursor))
    with pytest.raises(InvalidInput, match="another request"):
        service.list_memories(both, ns, DocumentListOptions(limit=1, cursor=cursor,
                                                             view=View(include_forgotten=True)))
    doc = add(service, both, ns, "Gamma.")
    with pytest.raises(InvalidInput, match="not valid"):  # a documents cursor is no history cursor
        service.history(both, doc.id, HistoryOptions(cursor=cursor))


def test_history_pages(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    doc = add(service, ctx, ns, "Version one of the plan.")
    for version in range(2, 6):
        doc = service.update_memory(ctx, doc.id, UpdateInput(content=f"Version {version} of the plan.")).document
    versions: list[int | None] = []
    page = service.history(ctx, doc.id, HistoryOptions(limit=2))
    versions += [item.version for item in page.items]
    while page.next_cursor is not None:
        page = service.history(ctx, doc.id, HistoryOptions(limit=2, cursor=page.next_cursor))
        versions += [item.version for item in page.items]
    assert versions == [5, 4, 3, 2, 1]
    first = service.history(ctx, doc.id, HistoryOptions(limit=2))
    other = add(service, ctx, ns, "Another memory.")
    with pytest.raises(InvalidInput, match="another request"):
        service.history(ctx, other.id, HistoryOptions(limit=2, cursor=first.next_cursor))


def test_entity_search_pages_repeat_nothing(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    names = ["Amara Okafor", "Bruno Salgado", "Chen Wei", "Dara Kim", "Elif Demir", "Farah Haddad", "Goran Petrov"]
    for name in names:
        add(service, ctx, ns, f"{name} joined the lighthouse crew in Porto.")
    whole = service.search_entities(ctx, EntitySearchRequest(query="lighthouse crew member", limit=30)).items
    seen: list[str] = []
    page = service.search_entities(ctx, EntitySearchRequest(query="lighthouse crew member", limit=3))
    seen += [hit.id for hit in page.items]
    while page.next_cursor is not None:
        page = service.search_entities(ctx, EntitySearchRequest(query="lighthouse crew member", limit=3,
                                                                cursor=page.next_cursor))
        seen += [hit.id for hit in page.items]
        assert len(seen) < 100
    assert seen == [hit.id for hit in whole]
    with pytest.raises(InvalidInput, match="another request"):
        service.search_entities(ctx, EntitySearchRequest(query="something else", limit=3,
                                                         cursor=service.search_entities(ctx, EntitySearchRequest(
                                                             query="lighthouse crew member", limit=3)).next_cursor))


def test_triple_search_pages_repeat_nothing(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    people = ["Amara Okafor", "Bruno Salgado", "Chen Wei", "Dara Kim", "Farah Haddad", "Goran Petrov", "Marcus"]
    for person, drink in zip(people, ["coffee", "tea", "cocoa", "kefir", "lemonade", "cider", "matcha"],
                             strict=True):
        add(service, ctx, ns, f"{person} likes {drink}.")
    whole = service.search_triples(ctx, TripleQuery(predicate="like", limit=100)).items
    assert len(whole) >= 7
    keys: list[tuple[str, str, str]] = []
    page = service.search_triples(ctx, TripleQuery(predicate="like", limit=2))
    keys += [(t.fact_id, t.subject.id, t.object.id) for t in page.items]
    while page.next_cursor is not None:
        page = service.search_triples(ctx, TripleQuery(predicate="like", limit=2, cursor=page.next_cursor))
        keys += [(t.fact_id, t.subject.id, t.object.id) for t in page.items]
        assert len(keys) < 100
    assert keys == [(t.fact_id, t.subject.id, t.object.id) for t in whole]
