"""Folders (``path``) on memories, fuller updates, namespaces with ':', and lineage fields on results."""

from __future__ import annotations

import pytest
from factories import add

from graphmem.errors import Conflict, InvalidInput
from graphmem.model import (
    CallerContext,
    DocumentInput,
    DocumentListOptions,
    EntitySearchRequest,
    RecallRequest,
    SearchRequest,
    TripleQuery,
    UpdateInput,
    check_namespace,
    parse,
)
from graphmem.results import Document
from graphmem.service import MemoryService


@pytest.fixture
def folders(service: MemoryService, ctx: CallerContext, ns: str) -> dict[str, Document]:
    return {
        "ab": add(service, ctx, ns, "Priya Raman decided to use Kafka for billing.", path="a/b"),
        "abc": add(service, ctx, ns, "Marcus Lee decided to use Redis for caching.", path="a/b/c"),
        "abx": add(service, ctx, ns, "Dana Kim decided to use Kafka for audit logs.", path="a/bx"),
        "none": add(service, ctx, ns, "Oskar Berg decided to use Kafka everywhere."),
    }


@pytest.mark.parametrize(("path", "expected"), [
    ("a/b", {"ab"}), ("a/b%", {"ab", "abc"}), ("a/bx", {"abx"}), ("%", {"ab", "abc", "abx", "none"}),
    ("a%", {"ab", "abc", "abx"}), ("a/b/c%", {"abc"}), ("zzz", set()), (None, {"ab", "abc", "abx", "none"}),
])
def test_path_filters_everywhere(service: MemoryService, ctx: CallerContext, ns: str,
                                 folders: dict[str, Document], path: str | None, expected: set[str]) -> None:
    names = {doc.id: name for name, doc in folders.items()}
    listed = service.list_memories(ctx, ns, DocumentListOptions(path=path))
    assert {names[d.id] for d in listed.items} == expected and listed.total == len(expected)
    facts = service.search(ctx, SearchRequest(query="decided to use", path=path, limit=50))
    assert {names[h.citation.document_id] for h in facts} == expected
    assert all(h.citation.path == folders[names[h.citation.document_id]].path for h in facts)
    documents = service.search_memories(ctx, SearchRequest(query="decided to use", path=path, limit=50))
    assert {names[h.document_id] for h in documents} == expected
    recall = service.recall(ctx, RecallRequest(query="who decided to use Kafka", path=path, max_items=20))
    assert {names[i.citation.document_id] for i in recall.items} <= expected
    people = {"ab": "Priya Raman", "abc": "Marcus Lee", "abx": "Dana Kim", "none": "Oskar Berg"}
    entities = service.search_entities(ctx, EntitySearchRequest(query="person", path=path, limit=50)).items
    assert {e.name for e in entities} & set(people.values()) == {people[n] for n in expected}
    triples = service.search_triples(ctx, TripleQuery(predicate="decide", path=path, limit=50)).items
    assert {names[t.citation.document_id] for t in triples} <= expected


@pytest.mark.parametrize("bad", ["/a", "a/", "a//b", "a b", "a%b", "%a", "a/%", "x" * 201, "a/b%%", ""])
def test_bad_paths(bad: str) -> None:
    with pytest.raises(InvalidInput):
        parse(DocumentListOptions, {"path": bad})
    with pytest.raises(InvalidInput):
        parse(DocumentInput, {"content": "x", "path": bad})
    with pytest.raises(InvalidInput):
        parse(DocumentInput, {"content": "x", "path": "a/b%"})  # a memory's path is a folder, not a filter
    assert parse(DocumentInput, {"content": "x", "path": "under_score/x.y-z"}).path == "under_score/x.y-z"


def test_update_keeps_or_sets_title_metadata_and_path(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    first = add(service, ctx, ns, "The plan is draft one.", title="Plan", metadata={"owner": "priya"}, path="p/q")
    kept = service.update_memory(ctx, first.id, UpdateInput(content="The plan is draft two.")).document
    assert (kept.title, kept.metadata, kept.path, kept.version) == ("Plan", {"owner": "priya"}, "p/q", 2)
    moved = service.update_memory(ctx, kept.id, UpdateInput(content="The plan is draft two.", path="p/done",
                                                            title="Final plan",
                                                            metadata={"owner": "marcus"})).document
    assert (moved.title, moved.metadata, moved.path, moved.version) == ("Final plan", {"owner": "marcus"},
                                                                         "p/done", 3)
    assert moved.parent_memory_id == kept.id and moved.is_inference is False
    same = service.update_memory(ctx, moved.id, UpdateInput(content="The plan is draft two.", path="p/done")).document
    assert same.id == moved.id  # nothing changed: no new version
    listed = service.list_memories(ctx, ns, DocumentListOptions(path="p/done"))
    assert [d.id for d in listed.items] == [moved.id]
    hit = service.search(ctx, SearchRequest(query="plan draft", path="p/done"))[0]
    assert (hit.version, hit.is_latest, hit.is_forgotten, hit.is_inference, hit.parent_memory_id) == (
        3, True, False, False, kept.id)


def test_retried_update_request_covers_title_metadata_and_path(service: MemoryService, ctx: CallerContext,
                                                                ns: str) -> None:
    first = add(service, ctx, ns, "Version one.")
    update = UpdateInput(content="Version two.", path="x/y", request_id="req-upd-1")
    second = service.update_memory(ctx, first.id, update).document
    assert service.update_memory(ctx, first.id, update).document.id == second.id
    with pytest.raises(Conflict, match="already used"):
        service.update_memory(ctx, first.id, update.model_copy(update={"path": "x/z"}))


def test_namespaces_accept_a_colon(service: MemoryService) -> None:
    ns = "project:mnemolog"
    assert check_namespace(ns) == ns
    ctx = CallerContext.for_namespaces(ns)
    doc = add(service, ctx, ns, "Colons are fine in namespace names.")
    assert service.get_version(ctx, doc.id).namespace == ns
    with pytest.raises(InvalidInput):
        check_namespace("_project:x")
    with pytest.raises(InvalidInput):
        check_namespace("p" * 65)
