"""The bounded evidence-graph export on the real engine (hashing embedder, real spaCy): caps held inside the
statements, the time view and namespaces (pages: ``test_export_pages.py``; renderings:
``test_export_formats.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import neo4j
import pytest
from export_helpers import (
    NASTY,
    Calls,
    check_edges_between_nodes,
    entity_id,
    export,
    gate,
    request,
)
from factories import add

from graphmem.errors import InvalidInput, NotFound
from graphmem.export import cypher_literal
from graphmem.export.page import READ_AHEAD_PAGES
from graphmem.model import (
    CURRENT,
    CallerContext,
    DocumentListOptions,
    ExportFormat,
    ExportRequest,
    View,
    parse,
)
from graphmem.results import Document
from graphmem.service import MemoryService
from helpers import needs_gate, query

# ---- the Cypher literal writer ----------------------------------------------------------------------


def test_cypher_literal_escapes() -> None:
    assert cypher_literal("it's") == "'it\\'s'"
    assert cypher_literal('a"b') == "'a\\\"b'"
    assert cypher_literal("a\\b") == "'a\\\\b'"
    assert cypher_literal("\\u0041") == "'\\\\u0041'"  # a backslash in data stays a backslash
    assert cypher_literal("a\nb\rc\td\be\ff") == "'a\\nb\\rc\\td\\be\\ff'"
    assert cypher_literal("\x00\x1b\x7f\x85") == "'\\u0000\\u001B\\u007F\\u0085'"
    assert cypher_literal("\u2028\u202e\u200b\ufeff") == "'\\u2028\\u202E\\u200B\\uFEFF'"
    assert cypher_literal("\U000e0041") == "'\\uDB40\\uDC41'"  # above U+FFFF: a surrogate pair
    assert cypher_literal("\ud800") == "'\\uD800'"  # a lone surrogate cannot be written as UTF-8
    assert cypher_literal("Zoë 中文 😀") == "'Zoë 中文 😀'"  # visible Unicode is written as it is
    assert cypher_literal(None) == "null"
    assert cypher_literal(True) == "true" and cypher_literal(False) == "false"
    assert cypher_literal(-42) == "-42" and cypher_literal(2**63 - 1) == str(2**63 - 1)
    assert cypher_literal(-(2**63)) == f"({-(2**63) + 1} - 1)"
    with pytest.raises(ValueError):
        cypher_literal(2**63)
    with pytest.raises(TypeError):
        cypher_literal(1.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", NASTY)
def test_cypher_literal_is_one_quoted_line(text: str) -> None:
    literal = cypher_literal(text)
    assert literal.startswith("'") and literal.endswith("'") and len(literal.splitlines()) <= 1
    body = literal[1:-1]
    # every quote inside is escaped: removing escape pairs leaves no quote and no lone backslash
    stripped = body.replace("\\\\", "").replace("\\'", "").replace('\\"', "")
    assert "'" not in stripped and '"' not in stripped
    assert all(c.isprintable() or c == " " for c in body)


def test_cypher_literals_read_back_exactly_on_the_engine(graph: neo4j.Driver) -> None:
    for text in NASTY:
        rows = query(graph, f"RETURN {cypher_literal(text)} AS v")
        assert rows == [{"v": text}], repr(text)
    assert query(graph, f"RETURN {cypher_literal(-(2**63))} AS v") == [{"v": -(2**63)}]


@needs_gate
def test_cypher_literals_lint_clean(tmp_path: Path) -> None:
    result = gate([f"RETURN {cypher_literal(text)} AS v" for text in NASTY], tmp_path)
    assert result.returncode == 0, result.stderr


# ---- input ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value", "bounds"), [
    ("depth", 0, "1 to 4"), ("depth", 5, "1 to 4"),
    ("max_nodes", 0, "1 to 5000"), ("max_nodes", 5001, "1 to 5000"),
    ("max_documents", 0, "1 to 1000"), ("max_documents", 1001, "1 to 1000"),
    ("fanout", 0, "1 to 500"), ("fanout", 501, "1 to 500"),
])
def test_out_of_range_caps_name_the_range(field: str, value: int, bounds: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        request({"kind": "ids", "ids": ["x"]}, {field: value})
    assert raised.value.code == "invalid_input"
    assert field in raised.value.message and bounds in raised.value.message


@pytest.mark.parametrize(("seed", "caps", "options"), [
    ({"kind": "ids", "ids": ["x"]}, {"depth": "2"}, {}),
    ({"kind": "ids", "ids": ["x"]}, {"depth": True}, {}),
    ({"kind": "ids", "ids": ["x"]}, {"width": 3}, {}),
    ({"kind": "ids", "ids": []}, {}, {}),
    ({"kind": "ids", "ids": [f"id-{i}" for i in range(101)]}, {}, {}),
    ({"kind": "query", "query": "   "}, {}, {}),
    ({"kind": "query", "query": "x" * 1001}, {}, {}),
    ({"kind": "document", "id": "not an id!"}, {}, {}),
    ({"kind": "document", "id": "x", "depth": 2}, {}, {}),
    ({"kind": "everything"}, {}, {}),
    ("just a string", {}, {}),
    ({"kind": "ids", "ids": ["x"]}, {}, {"view": {"as_of": -1}}),
    ({"kind": "ids", "ids": ["x"]}, {}, {"cursor": ""}),
    ({"kind": "ids", "ids": ["x"]}, {}, {"format": "graphml"}),  # the format is not part of the request
])
def test_bad_requests_are_invalid_input(seed: Any, caps: Any, options: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput) as raised:
        parse(ExportRequest, {"seed": seed, "caps": caps, **options})
    assert raised.value.code == "invalid_input"


@pytest.mark.parametrize("target", ["_system", "has space", "", "x" * 65, "a/b"])
def test_bad_target_namespace_is_invalid_input(service: MemoryService, ctx: CallerContext, ns: str,
                                               target: str) -> None:
    result = export(service, ctx, ns, {"kind": "ids", "ids": ["x"]}, {})
    with pytest.raises(InvalidInput, match="namespace") as raised:
        service.render_export(result, ExportFormat.cypher, ns, target_namespace=target)
    assert raised.value.code == "invalid_input"
    assert service.render_export(result, ExportFormat.cypher, ns, target_namespace="copy.of-it").format == "cypher"


def test_only_graphml_and_cypher_are_renderings(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    with pytest.raises(ValueError):
        ExportFormat("xml")
    result = export(service, ctx, ns, {"kind": "ids", "ids": ["x"]}, {})
    with pytest.raises(InvalidInput, match="json is the export itself"):
        service.render_export(result, ExportFormat.json, ns)
    with pytest.raises(InvalidInput, match="cypher format only"):
        service.render_export(result, ExportFormat.graphml, ns, target_namespace="elsewhere")


def test_unreadable_namespace_is_not_found(service: MemoryService, ns: str) -> None:
    with pytest.raises(NotFound):
        service.export(CallerContext.for_namespaces(f"{ns}-other"), ns, request({"kind": "ids", "ids": ["x"]}, {}))


# ---- view and namespace -----------------------------------------------------------------------------


def test_current_view_shows_placeholders_never_old_or_forgotten_content(
        service: MemoryService, ctx: CallerContext, ns: str, chain: tuple[Document, Document, Document],
        graph: neo4j.Driver) -> None:
    v1, v2, gone = chain
    result = export(service, ctx, ns, {"kind": "document", "id": v2.id}, {"depth": 4})
    by_id = {n.id: n for n in result.nodes}
    assert by_id[v2.id].kind == "document" and by_id[v2.id].depth == 0 and by_id[v2.id].version == 2
    placeholder = by_id[v1.id]
    assert placeholder.kind == "unavailable" and placeholder.depth == 1
    assert placeholder.model_dump(exclude_none=True) == {"id": v1.id, "kind": "unavailable", "depth": 1}
    assert (result.unavailable_documents, result.total_documents) == (1, 1)
    texts = {n.text for n in result.nodes if n.kind == "fact"}
    assert texts == {"Alice Johnson works at Google.", "Alice Johnson lives in Seattle."}
    names = {n.name for n in result.nodes if n.kind == "entity"}
    assert names == {"Alice Johnson", "Google", "Seattle"}  # Microsoft and Lisbon: only out-of-view facts
    with pytest.raises(NotFound):  # nor are they seeds
        service.export(ctx, ns, request({"kind": "entity", "id": entity_id(graph, ns, "Microsoft")}, {}))
    assert gone.id not in by_id
    assert ("previous_version", v2.id, v1.id) in {(e.kind, e.source, e.target) for e in result.edges}
    assert {e.predicate for e in result.edges if e.kind == "triple"} == {"work at", "live in"}
    check_edges_between_nodes(result)
    assert not result.truncated and result.coverage == 1.0 and result.next_cursor is None
    dumped = result.model_dump_json()
    assert "embedding" not in dumped and "Microsoft" not in dumped and "Lisbon" not in dumped
    assert json.loads(dumped)["total_documents"] == 1 and "unavailable_documents" in json.loads(dumped)

    # the old version as seed: an unavailable node, not expanded; the forgotten one: not found
    old = export(service, ctx, ns, {"kind": "document", "id": v1.id}, {"depth": 4})
    assert [(n.id, n.kind, n.depth) for n in old.nodes] == [(v1.id, "unavailable", 0)]
    assert old.edges == [] and old.unavailable_documents == 1 and old.total_documents == 0
    with pytest.raises(NotFound):
        service.export(ctx, ns, request({"kind": "document", "id": gone.id}, {}))
    ignored = export(service, ctx, ns, {"kind": "ids", "ids": [gone.id, "no-such-id"]}, {})
    assert ignored.nodes == [] and not ignored.truncated and ignored.coverage == 1.0


def test_include_forgotten_and_as_of_views(service: MemoryService, ctx: CallerContext, ns: str,
                                           chain: tuple[Document, Document, Document]) -> None:
    v1, v2, gone = chain
    alice = {"kind": "ids", "ids": [v2.id, gone.id]}
    everything = export(service, ctx, ns, alice, {"depth": 4}, view=View(include_forgotten=True))
    assert gone.id in {n.id for n in everything.nodes}
    assert "Lisbon" in {n.name for n in everything.nodes}

    # an export reads a current view as of its first page's time: the same documents as the current view
    for view in (View(), View(include_forgotten=True), View(include_superseded=True),
                 View(include_forgotten=True, include_superseded=True)):
        result = export(service, ctx, ns, {"kind": "ids", "ids": [v1.id, v2.id, gone.id]}, {"depth": 1},
                        view=view)
        listed = {d.id for d in service.list_memories(ctx, ns, DocumentListOptions(view=view)).items}
        assert {n.id for n in result.nodes if n.kind == "document"} == listed
        assert all(n.kind != "unavailable" for n in result.nodes) == view.include_superseded

    then = View(as_of=v1.recorded_at)
    old = export(service, ctx, ns, {"kind": "document", "id": v1.id}, {"depth": 4}, view=then)
    by_id = {n.id: n for n in old.nodes}
    assert by_id[v1.id].kind == "document" and by_id[v1.id].version == 1
    assert v2.id not in by_id  # recorded later: it did not exist then, not even as a reference
    assert {n.text for n in old.nodes if n.kind == "fact"} == {"Alice Johnson works at Microsoft.",
                                                               "Alice Johnson lives in Seattle."}
    assert "Google" not in {n.name for n in old.nodes}
    assert old.unavailable_documents == 0
    with pytest.raises(NotFound):
        service.export(ctx, ns, request({"kind": "document", "id": v2.id}, {}, view=then))


def test_namespaces_are_never_crossed(service: MemoryService, ns: str, graph: neo4j.Driver) -> None:
    other = f"{ns}-x"
    ctx = CallerContext.for_namespaces(ns, other)
    mine = add(service, ctx, ns, "Priya Raman leads Project Falcon at Corvid Works.")
    theirs = add(service, ctx, other, "Priya Raman leads Project Falcon at Corvid Works.")
    result = export(service, ctx, ns, {"kind": "ids", "ids": [mine.id, theirs.id]}, {"depth": 4})
    ids = [n.id for n in result.nodes]
    stored = query(graph, "MATCH (n) WHERE n.id IN $ids RETURN n.namespace AS ns", ids=ids)
    assert len(stored) == len(ids) and {r["ns"] for r in stored} == {ns}
    assert theirs.id not in ids and result.total_documents == 1
    with pytest.raises(NotFound):
        service.export(ctx, ns, request({"kind": "entity", "id": entity_id(graph, other, "Priya Raman")}, {}))
    with pytest.raises(NotFound):
        service.export(ctx, ns, request({"kind": "document", "id": theirs.id}, {}))


# ---- caps -------------------------------------------------------------------------------------------


def test_caps_hold_at_the_driver(service: MemoryService, ctx: CallerContext, ns: str, hub: list[Document],
                                 spy: Calls) -> None:
    caps = {"depth": 3, "max_nodes": 7, "max_documents": 3, "fanout": 4}
    seed = {"kind": "ids", "ids": [hub[0].id, hub[1].id]}
    spy.clear()
    result = export(service, ctx, ns, seed, caps)
    assert len(result.nodes) <= 7 and result.total_documents <= 3
    assert result.truncated and result.next_cursor is not None

    names = [name for name, _, _ in spy]
    walking = ("export_seeds", "export_level", "export_level_documents")
    # the page's walk, and the count of reachable documents (truncated) in a read transaction of its own
    page_walk = [call for call in spy.of(counting=False) if call[0] in walking]
    count_walk = spy.of(counting=True)
    assert [name for name, _, _ in page_walk + count_walk].count("export_seeds") == 2
    assert {name for name, _, _ in count_walk} <= set(walking)
    assert all(rows <= (2 * len(params["documents"]) if name == "export_level_documents" else params["remaining"])
               for name, params, rows in page_walk + count_walk)  # the versions next to a count's last documents
    # parts of levels until the page's nodes and one more are known, what the last part reads beyond them
    # cut at READ_AHEAD_PAGES pages
    assert sum(rows for _, _, rows in page_walk) <= READ_AHEAD_PAGES * 7 + 1
    assert all(params["fanout"] == 4 for name, params, _ in page_walk if name == "export_level")
    assert sum(rows for _, _, rows in count_walk) <= 10 * 7
    properties = [(name, rows) for name, _, rows in spy
                  if name in ("export_documents", "export_facts", "export_entities")]
    assert sum(rows for _, rows in properties) == len(result.nodes) - result.unavailable_documents
    assert names[-1] == "export_walk_save"  # kept for the next page, after the read
    saved = spy[-1][1]
    assert len(saved["ids"]) == len(saved["kinds"]) == len(saved["depths"]) <= READ_AHEAD_PAGES * 7 + 1
    check_edges_between_nodes(result)


def test_fanout_caps_a_hub_entity(service: MemoryService, ctx: CallerContext, ns: str, hub: list[Document],
                                  graph: neo4j.Driver, spy: Calls) -> None:
    kafka = {"kind": "entity", "id": entity_id(graph, ns, "Kafka")}
    spy.clear()
    result = export(service, ctx, ns, kafka, {"depth": 2, "fanout": 5})
    first_level = next(rows for name, params, rows in spy.of(counting=False) if name == "export_level")
    assert first_level == 5  # of its 12 facts and the entities it is related to, only 5 reach the driver
    # the page walk's two levels, and the count's first: its last level, the documents of the hub's facts, is
    # known from the facts (and there is no document in its frontier whose versions it would read)
    assert [name for name, _, _ in spy.of(counting=False) if name.startswith("export_level")] == [
        "export_level", "export_level"]
    assert [name for name, _, _ in spy.of(counting=True)] == ["export_seeds", "export_level"]
    assert [n.depth for n in result.nodes].count(1) == 5
    assert result.truncated and result.next_cursor is None  # one page, but the fan-out left nodes out
    # all twelve memories are reachable within two hops; the count is exact (below 10 x max_documents)
    assert result.coverage == pytest.approx(result.total_documents / 12) and not result.coverage_is_upper_bound
    assert result.total_documents < 12 and result.reachable_documents == 12

    capped = export(service, ctx, ns, kafka, {"depth": 2, "fanout": 500, "max_documents": 1})
    assert capped.total_documents == 1 and capped.next_cursor is not None
    assert capped.coverage_is_upper_bound and capped.coverage == pytest.approx(1 / 10)  # counted up to 10
    assert capped.reachable_documents == 10

    spy.clear()
    uncounted = service.export(ctx, ns, request(kafka, {"depth": 2, "fanout": 5}).model_copy(
        update={"count_reachable": False}))
    assert uncounted.truncated and uncounted.reachable_documents is None and uncounted.coverage is None
    assert uncounted.nodes == result.nodes  # the same page; only the count is skipped: no second, wider walk
    assert [params["fanout"] for name, params, _ in spy if name == "export_level"] == [5, 5]

    whole = export(service, ctx, ns, kafka, {"depth": 2, "fanout": 500})
    assert not whole.truncated and whole.coverage == 1.0 and whole.total_documents == whole.reachable_documents == 12


def test_the_counts_last_level_reaches_the_versions_next_to_its_documents(
        service: MemoryService, ctx: CallerContext, ns: str, chain: tuple[Document, Document, Document],
        graph: neo4j.Driver) -> None:
    """The count's last level adds the documents of its frontier's facts without reading them, and reads the
    versions next to its frontier's documents (``export_level_documents``): with superseded versions in view,
    v1 is reached over v2's PREVIOUS_VERSION edge at the last level."""
    v1, v2, _ = chain
    fact = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.id AS id ORDER BY f.position "
                        "LIMIT 1", id=v2.id)[0]["id"]
    seed = {"kind": "ids", "ids": [fact]}
    # a page of the seed and its whole first level (v2 and the fact's entities): v1 is not on it, so only the
    # count can find it
    first_level = len(service.export(ctx, ns, request(seed, {"depth": 1})).nodes)
    for view, reachable in ((View(include_superseded=True), 2), (CURRENT, 1)):
        result = service.export(ctx, ns, request(seed, {"depth": 2, "max_nodes": first_level}, view))
        assert result.truncated and not result.coverage_is_upper_bound
        assert result.total_documents == 1 and result.reachable_documents == reachable
    whole = service.export(ctx, ns, request(seed, {"depth": 2}, View(include_superseded=True)))
    assert {n.id for n in whole.nodes if n.kind == "document"} == {v1.id, v2.id}  # what the count counted


def test_a_hubs_fanout_takes_its_newest_facts(service: MemoryService, ctx: CallerContext, ns: str,
                                              graph: neo4j.Driver) -> None:
    """The fan-out is filled in the engine's adjacency order, not sorted (sorting read every neighbour of a
    hub); on the bundled engine that is the most recently linked first, so a hub shows its newest facts."""
    stored = [add(service, ctx, ns, f"Grimsby Harbour logged shipment number {i} on day {i}.") for i in range(8)]
    harbour = {"kind": "entity", "id": entity_id(graph, ns, "Grimsby Harbour")}
    result = export(service, ctx, ns, harbour, {"depth": 1, "fanout": 3})
    facts = [node for node in result.nodes if node.kind == "fact"]
    assert result.truncated and len(facts) == 3
    newest = {str(fact["id"]) for doc in stored[-3:] for fact in query(
        graph, "MATCH (:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.id AS id", id=doc.id)}
    assert {fact.id for fact in facts} == newest


def test_a_documents_versions_come_before_its_facts_in_the_fanout(
        service: MemoryService, ctx: CallerContext, ns: str, chain: tuple[Document, Document, Document]) -> None:
    """A document's versions (at most two) fill its fan-out before its facts, so a fan-out smaller than its
    facts still shows the version it replaced."""
    v1, v2, _ = chain
    result = export(service, ctx, ns, {"kind": "document", "id": v2.id}, {"depth": 1, "fanout": 1})
    assert [(node.id, node.kind, node.depth) for node in result.nodes] == [
        (v2.id, "document", 0), (v1.id, "unavailable", 1)]
    assert result.truncated  # its two facts were left out


def test_an_entity_with_no_fact_left_to_add_still_reaches_its_related_entities(
        service: MemoryService, ctx: CallerContext, ns: str, graph: neo4j.Driver) -> None:
    """An entity's triples are read while its facts leave room in its fan-out, also when it has no fact left to
    add at all: here its one fact is a seed too, and that fact's fan-out of 1 is its document, so the related
    entity comes only over the triple."""
    document = add(service, ctx, ns, "Priya Raman leads Project Falcon.")
    fact = query(graph, "MATCH (:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.id AS id", id=document.id)
    priya, falcon = entity_id(graph, ns, "Priya Raman"), entity_id(graph, ns, "Project Falcon")
    assert len(fact) == 1 and query(graph, "MATCH (:Entity {id: $a})-[r:RELATES]-(:Entity {id: $b}) "
                                           "RETURN count(r) AS n", a=priya, b=falcon) == [{"n": 1}]
    result = export(service, ctx, ns, {"kind": "ids", "ids": [priya, fact[0]["id"]]}, {"depth": 1, "fanout": 1})
    assert sorted((node.id, node.depth) for node in result.nodes if node.depth == 1) == sorted(
        [(document.id, 1), (falcon, 1)])
