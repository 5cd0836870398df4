"""The bounded evidence-graph export on the real engine (hashing embedder, real spaCy): caps held inside the
statements, the time view, namespaces, the signed cursor, GraphML and a Cypher script that lints as
Neo4j 5 and round-trips through the bundled engine."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import threading
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import neo4j
import pytest
from pydantic import SecretStr

from graphmem.cursors import Cursors, cursor_key
from graphmem.errors import ConfigurationError, InvalidInput, NotFound
from graphmem.export import cypher_literal, render_graphml
from graphmem.export.page import EXPIRY_SWEEP_MS, READ_AHEAD_PAGES
from graphmem.export.render import GRAPHML_NS
from graphmem.export.walk import MIN_CHUNK
from graphmem.model import (
    CURRENT,
    MAX_CURSOR_CHARS,
    CallerContext,
    DocumentInput,
    DocumentListOptions,
    ExportFormat,
    ExportRequest,
    ForgetMode,
    ForgetRequest,
    SearchRequest,
    UpdateInput,
    View,
    parse,
)
from graphmem.records import now_ms
from graphmem.results import Document, ExportNode, ExportResult, RenderedExport
from graphmem.service import MemoryService
from graphmem.store.driver import Tx
from helpers import cypher_gate, make_settings, needs_gate, query

NASTY = [
    "", "plain", "it's", 'say "hi"', "back\\slash", "\\'", "\\u0041 is not A", "line\nbreak", "cr\rlf\r\n",
    "tab\there", "nul\x00byte", "bell\x07 esc\x1b del\x7f", "c1\x85\x9f", "sep\u2028para\u2029",
    "bidi\u202eevil\u202c", "zero\u200bwidth\ufeff", "Zoë 中文 ‽", "emoji 😀 family 👨\u200d👩\u200d👧",
    "tag\U000e0041", "private\ue000 and \U000f0000", "unassigned\u0378", "'); MATCH (n) DETACH DELETE n //",
    "$param {{ fragment }} /* comment */", "ends with backslash\\",
]
NASTY_DOCUMENT = "Zoë's \"quoted\" note: back\\slash, tab\t, bell\x07, RLO\u202e done. Zoë likes Kafka."


# ---- helpers ----------------------------------------------------------------------------------------


def add(service: MemoryService, ctx: CallerContext, ns: str, content: str, **fields: Any) -> Document:
    return service.add_memory(ctx, ns, DocumentInput(content=content, **fields)).document


def add_all(service: MemoryService, ctx: CallerContext, ns: str, contents: list[str]) -> list[Document]:
    return [c.document for c in service.add_memories(ctx, ns, [DocumentInput(content=content) for content in contents])]


def request(seed: Any, caps: Any, view: View = CURRENT, cursor: str | None = None) -> ExportRequest:
    """An export request from plain seed and caps dicts (a bad one is ``InvalidInput``, as from a front end)."""
    return parse(ExportRequest, {"seed": seed, "caps": caps, "view": view, "cursor": cursor})


def export(service: MemoryService, ctx: CallerContext, ns: str, seed: dict[str, Any], caps: dict[str, Any],
           view: View = CURRENT, cursor: str | None = None) -> ExportResult:
    result = service.export(ctx, ns, request(seed, caps, view, cursor))
    assert isinstance(result, ExportResult)
    return result


def rendered(service: MemoryService, ctx: CallerContext, ns: str, seed: dict[str, Any], caps: dict[str, Any],
             format: ExportFormat, target_namespace: str | None = None) -> RenderedExport:
    result = service.render_export(export(service, ctx, ns, seed, caps), format, ns, target_namespace)
    assert isinstance(result, RenderedExport)
    return result


def all_pages(service: MemoryService, ctx: CallerContext, ns: str, seed: dict[str, Any],
              caps: dict[str, Any]) -> list[ExportResult]:
    pages = [export(service, ctx, ns, seed, caps)]
    while pages[-1].next_cursor is not None:
        pages.append(export(service, ctx, ns, seed, caps, cursor=pages[-1].next_cursor))
        assert len(pages) < 100
    return pages


def edge_keys(result: ExportResult) -> list[tuple[Any, ...]]:
    return [(e.source, e.target, e.kind, e.predicate, e.negated, e.fact_id) for e in result.edges]


def check_edges_between_nodes(result: ExportResult) -> None:
    kinds = {n.id: n.kind for n in result.nodes}
    for edge in result.edges:
        assert edge.source in kinds and edge.target in kinds
        if edge.kind == "triple":
            assert kinds.get(edge.fact_id or "") == "fact"  # every triple cites a fact of the export


def entity_id(graph: neo4j.Driver, ns: str, name: str) -> str:
    rows = query(graph, "MATCH (e:Entity) WHERE e.namespace = $ns AND e.name = $name RETURN e.id AS id",
                 ns=ns, name=name)
    assert len(rows) == 1, rows
    return str(rows[0]["id"])


def gate(statements: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return cypher_gate([{"name": f"line {i + 1}", "source": "export", "text": text}
                        for i, text in enumerate(statements)], tmp_path)


def script_statements(script: str) -> list[str]:
    """The script's statements: one per line (comments aside), each ending in ';'."""
    lines = [line for line in script.splitlines() if line and not line.startswith("//")]
    assert all(line.endswith(";") for line in lines)
    return [line.removesuffix(";") for line in lines]


class Calls(list[tuple[str, dict[str, Any], int]]):
    """Statements run: (name, parameters, rows the driver received); ``counting`` says which ran in the
    reachable-document count's own read transaction (its thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.counting: list[bool] = []

    def of(self, counting: bool) -> list[tuple[str, dict[str, Any], int]]:
        return [call for call, count in zip(self, self.counting, strict=True) if count == counting]

    def clear(self) -> None:
        super().clear()
        self.counting.clear()


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Calls:
    """Every named statement run, with its parameters and the number of rows the driver received (those of
    a statement that returns its rows collected in one list, ``rows``, are counted one by one)."""
    calls = Calls()
    original = Tx.run
    lock = threading.Lock()

    def run(self: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
        rows = original(self, name, **params)
        collected = len(rows) == 1 and isinstance(rows[0].get("rows"), list)
        with lock:
            calls.append((name, params, len(rows[0]["rows"]) if collected else len(rows)))
            calls.counting.append(threading.current_thread().name.startswith("graphmem-export-count"))
        return rows

    monkeypatch.setattr(Tx, "run", run)
    return calls


@pytest.fixture
def chain(service: MemoryService, ctx: CallerContext, ns: str) -> tuple[Document, Document, Document]:
    """v1 → v2 of one memory, and a forgotten memory about the same person."""
    v1 = add(service, ctx, ns, "Alice Johnson works at Microsoft. Alice Johnson lives in Seattle.", title="alice")
    v2 = service.update_memory(ctx, v1.id, UpdateInput(
        content="Alice Johnson works at Google. Alice Johnson lives in Seattle.")).document
    gone = add(service, ctx, ns, "Alice Johnson visited Lisbon.")
    service.forget(ctx, gone.id, ForgetRequest(mode=ForgetMode.soft))
    return v1, v2, gone


HUB_TEAMS = ["Atlas", "Borealis", "Cascade", "Dynamo", "Ember", "Fjord", "Glacier", "Harbor", "Iris", "Juniper",
             "Kestrel", "Lumen"]


@pytest.fixture
def hub(service: MemoryService, ctx: CallerContext, ns: str) -> list[Document]:
    """Twelve memories that all mention Kafka (a hub entity)."""
    return add_all(service, ctx, ns, [f"Team {name} streams its audit events through Kafka." for name in HUB_TEAMS])


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


# ---- pages ------------------------------------------------------------------------------------------


@pytest.fixture(params=[MIN_CHUNK, 1], ids=["parts", "one-node-parts"])
def min_chunk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """The fewest frontier nodes a page expands in one statement: as shipped (the small test graphs' levels
    are then mostly read whole), and one, so that pages read every level in many parts."""
    monkeypatch.setattr("graphmem.export.walk.MIN_CHUNK", request.param)
    return int(request.param)


def test_pages_add_up_to_one_traversal(service: MemoryService, ctx: CallerContext, ns: str,
                                       hub: list[Document], chain: tuple[Document, Document, Document],
                                       min_chunk: int, spy: Calls) -> None:
    add(service, ctx, ns, "Priya Raman leads Project Falcon at Corvid Works. Project Falcon uses Kafka.")
    seed = {"kind": "ids", "ids": [chain[1].id, hub[0].id]}
    whole = export(service, ctx, ns, seed, {"depth": 4, "max_nodes": 5000})
    # big enough for many pages, small enough that the first page counts the reachable documents exactly
    assert not whole.truncated and 30 < len(whole.nodes) < 10 * 8
    spy.clear()
    pages = all_pages(service, ctx, ns, seed, {"depth": 4, "max_nodes": 8, "max_documents": 2})
    assert len(pages) > 5
    if min_chunk == 1:  # levels were read in parts, going on where a part, or the budget inside one, stopped
        parts = [(params, rows) for name, params, rows in spy.of(counting=False) if name == "export_level"]
        assert any(min(params["position"].values()) > 0 for params, _ in parts)
        assert any(rows == params["remaining"] for params, rows in parts)
    assert all(len(p.nodes) <= 8 and p.total_documents <= 2 and p.truncated for p in pages)
    assert [n for p in pages for n in p.nodes] == whole.nodes  # same nodes, same order, nothing repeated
    edges = [key for p in pages for key in edge_keys(p)]
    assert len(edges) == len(set(edges)) and set(edges) == set(edge_keys(whole))
    emitted: set[str] = set()
    for page in pages:  # each edge comes with the later of its nodes
        emitted |= {n.id for n in page.nodes}
        assert all(e.source in emitted and e.target in emitted for e in page.edges)
        assert all(e.source in {n.id for n in page.nodes} or e.target in {n.id for n in page.nodes}
                   or e.fact_id in {n.id for n in page.nodes} for e in page.edges)
    assert sum(p.total_documents for p in pages) == whole.total_documents
    assert sum(p.coverage for p in pages) == pytest.approx(1.0)
    assert all(not p.coverage_is_upper_bound and p.reachable_documents == whole.total_documents for p in pages)


def brute_force_walk(graph: neo4j.Driver, ns: str, seed_ids: list[str],
                     depth: int) -> tuple[dict[str, str], set[tuple[Any, ...]]]:
    """Every node within ``depth`` hops of the seeds in the current view, with the kind it is shown as, and
    every edge among them that an export shows (as ``edge_keys``): the README's rules, applied in Python to
    the whole namespace read back from the engine (no statement of the export is used)."""
    def visible(row: dict[str, Any]) -> bool:
        return bool(row["latest"]) and not row["forgotten"]

    fields = "n.id AS id, n.is_latest AS latest, n.is_forgotten AS forgotten"
    documents = {r["id"]: r for r in query(graph, f"MATCH (n:Document) WHERE n.namespace = $ns RETURN {fields}", ns=ns)}
    facts = {r["id"]: r for r in query(graph, f"MATCH (n:Fact) WHERE n.namespace = $ns RETURN {fields}", ns=ns)}
    entities = {r["id"] for r in query(graph, "MATCH (n:Entity) WHERE n.namespace = $ns RETURN n.id AS id", ns=ns)}
    neighbours: dict[str, list[tuple[str, str]]] = {}
    stored: list[tuple[Any, ...]] = []  # (source, target, kind, predicate, negated, fact_id)

    def link(a: str, b: str, kind: str) -> None:
        neighbours.setdefault(a, []).append((b, kind))

    for r in query(graph, "MATCH (d:Document)-[:CONTAINS]->(f:Fact) WHERE d.namespace = $ns "
                          "RETURN d.id AS d, f.id AS f", ns=ns):
        stored.append((r["d"], r["f"], "contains", None, None, None))
        if visible(facts[r["f"]]):
            link(r["d"], r["f"], "fact")
        if visible(documents[r["d"]]):
            link(r["f"], r["d"], "document")
    for r in query(graph, "MATCH (f:Fact)-[:MENTIONS]->(e:Entity) WHERE f.namespace = $ns "
                          "RETURN f.id AS f, e.id AS e", ns=ns):
        stored.append((r["f"], r["e"], "mentions", None, None, None))
        link(r["f"], r["e"], "entity")
        if visible(facts[r["f"]]):
            link(r["e"], r["f"], "fact")
    for r in query(graph, "MATCH (s:Entity)-[r:RELATES]->(o:Entity) WHERE r.namespace = $ns "
                          "RETURN s.id AS s, o.id AS o, r.fact_id AS fact, r.predicate AS predicate, "
                          "r.negated AS negated", ns=ns):
        stored.append((r["s"], r["o"], "triple", r["predicate"], r["negated"], r["fact"]))
        if visible(facts[r["fact"]]):
            link(r["s"], r["o"], "entity")
            link(r["o"], r["s"], "entity")
    for r in query(graph, "MATCH (a:Document)-[:PREVIOUS_VERSION]->(b:Document) WHERE a.namespace = $ns "
                          "RETURN a.id AS a, b.id AS b", ns=ns):
        stored.append((r["a"], r["b"], "previous_version", None, None, None))
        for x, y in ((r["a"], r["b"]), (r["b"], r["a"])):
            if visible(documents[y]):
                link(x, y, "document")
            elif not documents[y]["forgotten"]:
                link(x, y, "unavailable")
    kinds = {**{i: "document" if visible(r) else "unavailable" for i, r in documents.items()
                if not r["forgotten"]},
             **{i: "fact" for i, r in facts.items() if visible(r)}, **dict.fromkeys(entities, "entity")}
    reached = {i: kinds[i] for i in seed_ids if i in kinds}
    level = list(reached)
    for _ in range(depth):
        following: list[str] = []
        for node in level:
            if reached[node] == "unavailable":
                continue  # shown by id, never expanded
            for neighbour, kind in neighbours.get(node, []):
                if neighbour not in reached:
                    reached[neighbour] = kind
                    following.append(neighbour)
        level = following
    # an edge is shown between shown nodes; a triple also needs its fact shown; two unavailable references
    # are not linked
    edges = {edge for edge in stored if edge[0] in reached and edge[1] in reached
             and (edge[2] != "triple" or reached.get(edge[5]) == "fact")
             and (edge[2] != "previous_version" or "document" in (reached[edge[0]], reached[edge[1]]))}
    return reached, edges


def test_a_fact_and_its_document_share_their_view_flags(service: MemoryService, ctx: CallerContext, ns: str,
                                                        chain: tuple[Document, Document, Document],
                                                        graph: neo4j.Driver) -> None:
    """The count's last level takes a fact in view to mean its document is in view (``Traversal._last_level``):
    every statement that changes a document's view flags changes its facts' alike, in the same transaction."""
    kept = add(service, ctx, ns, "Bob Stone runs the Oslo office. Bob Stone hired Dana Reyes.")
    redacted = add(service, ctx, ns, "Carol Diaz approved the Lisbon budget. Carol Diaz signed it.")
    service.forget(ctx, kept.id, ForgetRequest(mode=ForgetMode.soft))
    service.restore(ctx, kept.id)
    service.update_memory(ctx, kept.id, UpdateInput(content="Bob Stone runs the Bergen office now."))
    service.forget(ctx, redacted.id, ForgetRequest(mode=ForgetMode.redact))
    rows = query(graph, "MATCH (d:Document)-[:CONTAINS]->(f:Fact) WHERE d.namespace = $ns "
                        "RETURN d.is_latest = f.is_latest AND d.is_forgotten = f.is_forgotten "
                        "AND d.recorded_at = f.recorded_at "
                        "AND coalesce(d.superseded_at, -1) = coalesce(f.superseded_at, -1) AS same, "
                        "d.is_latest AS latest, d.is_forgotten AS forgotten", ns=ns)
    assert rows and all(row["same"] for row in rows)
    assert {(row["latest"], row["forgotten"]) for row in rows} == {(True, False), (False, False), (True, True)}


def test_completeness_matches_a_brute_force_walk(service: MemoryService, ctx: CallerContext, ns: str,
                                                 hub: list[Document], chain: tuple[Document, Document, Document],
                                                 graph: neo4j.Driver, min_chunk: int) -> None:
    add(service, ctx, ns, "Priya Raman leads Project Falcon at Corvid Works. Project Falcon uses Kafka.")
    # fact seeds: the count's last level starts from the documents the walk read with the facts (walk.py
    # ``Traversal._last_level``), from the seeds at depth 1 and from facts reached over entities at 3 (facts reached
    # over documents: the hub's document seed at depth 2)
    facts = [row["id"] for row in query(graph, "MATCH (d:Document)-[:CONTAINS]->(f:Fact) WHERE d.id IN $ids "
                                               "RETURN f.id AS id ORDER BY f.id", ids=[hub[1].id, chain[1].id])]
    exact = 0
    for seed_ids, depth in (([hub[0].id], 2), ([hub[0].id], 3), ([chain[1].id, hub[3].id], 4),
                            ([chain[0].id], 1), (facts, 1), (facts, 3)):
        truth, truth_edges = brute_force_walk(graph, ns, seed_ids, depth)
        reachable = sum(1 for kind in truth.values() if kind == "document")
        pages = all_pages(service, ctx, ns, {"kind": "ids", "ids": seed_ids},
                          {"depth": depth, "max_nodes": 6, "max_documents": 2, "fanout": 100})
        assert {n.id: n.kind for p in pages for n in p.nodes} == truth  # every page together: the whole walk
        edges = [key for p in pages for key in edge_keys(p)]
        assert len(edges) == len(set(edges)) and set(edges) == truth_edges  # each edge once, all of them
        assert sum(p.total_documents for p in pages) == reachable
        assert sum(p.unavailable_documents for p in pages) == list(truth.values()).count("unavailable")
        first = pages[0]
        assert first.truncated == (len(pages) > 1)
        if first.coverage_is_upper_bound:  # the count stopped at ten times the caps: a lower bound
            assert first.reachable_documents is not None and first.reachable_documents <= reachable
        else:
            exact += 1
            assert all(p.reachable_documents == reachable for p in pages)
            assert first.coverage == pytest.approx(first.total_documents / reachable if reachable else 1.0)
        assert seed_ids != facts or not first.coverage_is_upper_bound  # the fact seeds' counts are exact
    assert exact >= 3  # most of these graphs are small enough to count exactly


def test_later_pages_go_on_from_the_kept_walk(service: MemoryService, ctx: CallerContext, ns: str,
                                              hub: list[Document], chain: tuple[Document, Document, Document],
                                              spy: Calls) -> None:
    seed_ids = [chain[1].id, hub[0].id]
    seed, caps = {"kind": "ids", "ids": seed_ids}, {"depth": 4, "max_nodes": 5, "max_documents": 2}
    spy.clear()
    pages = all_pages(service, ctx, ns, seed, caps)
    assert len(pages) > 4
    later = spy[next(i for i, (name, _, _) in enumerate(spy) if name == "export_walk_get"):]
    names = [name for name, _, _ in later]
    assert "export_seeds" not in names  # no later page starts the walk again from its seeds
    levels = [params for name, params, _ in later if name == "export_level"]
    assert all(set(seed_ids) <= set(params["visited"]) for params in levels)
    # about one level statement per page (a page that needs more of a level than one part gave reads another
    # part), plus one per deeper level reached (re-walking: pages x levels)
    assert len(levels) <= len(pages) - 1 + caps["depth"]
    assert names.count("export_walk_get") == len(pages) - 1
    starts = [i for i, name in enumerate(names) if name == "export_walk_get"]
    per_page = [names[a:b] for a, b in itertools.pairwise([*starts, len(names)])]
    assert any("export_level" not in page for page in per_page)  # nodes read ahead: no level read at all
    # a page's edges from earlier facts are read from those facts only that have one (pending edges)
    edge_reads = [params for name, params, _ in spy.of(counting=False) if name == "export_edges"]
    assert len(edge_reads) == len(pages)
    for number, (page, params) in enumerate(zip(pages, edge_reads, strict=True)):
        earlier = {node.id for before in pages[:number] for node in before.nodes if node.kind == "fact"}
        linked = {edge.source if edge.kind == "mentions" else edge.target for edge in page.edges
                  if edge.kind in ("contains", "mentions")} & earlier
        assert set(params["earlier_facts"]) == linked
    assert any(params["earlier_facts"] for params in edge_reads)


def test_a_cursor_used_again_gives_the_same_page(service: MemoryService, ctx: CallerContext, ns: str,
                                                 hub: list[Document], chain: tuple[Document, Document, Document],
                                                 min_chunk: int) -> None:
    """A retry, a second click: a cursor used again, at once or after the later pages were read, gives the
    same page, nodes, edges and all (the pending edges a page moves on are not used up by it)."""
    add(service, ctx, ns, "Priya Raman leads Project Falcon at Corvid Works. Project Falcon uses Kafka.")
    seed, caps = {"kind": "ids", "ids": [chain[1].id, hub[0].id]}, {"depth": 4, "max_nodes": 8, "max_documents": 2}

    def same(a: ExportResult, b: ExportResult) -> bool:
        return a.model_dump(exclude={"next_cursor"}) == b.model_dump(exclude={"next_cursor"})

    pages = [export(service, ctx, ns, seed, caps)]
    while pages[-1].next_cursor is not None:
        page = export(service, ctx, ns, seed, caps, cursor=pages[-1].next_cursor)
        assert same(export(service, ctx, ns, seed, caps, cursor=pages[-1].next_cursor), page)
        pages.append(page)
    assert len(pages) > 5 and any(edge.kind in ("contains", "mentions") for page in pages[1:] for edge in page.edges)
    for before, page in itertools.pairwise(pages):
        assert before.next_cursor is not None
        assert same(export(service, ctx, ns, seed, caps, cursor=before.next_cursor), page)


def test_an_expired_walk_says_start_again(service: MemoryService, ctx: CallerContext, ns: str,
                                          hub: list[Document], graph: neo4j.Driver) -> None:
    seed, caps = {"kind": "entity", "id": entity_id(graph, ns, "Kafka")}, {"depth": 2, "max_nodes": 5}
    first = export(service, ctx, ns, seed, caps)
    assert first.next_cursor is not None
    ttl_ms = service.core.settings.export_walk_ttl_s * 1000
    later = MemoryService(service.core.store, service.core.settings, service.pipeline, service.core.cursors,
                          clock=lambda: now_ms() + ttl_ms + 1)
    with pytest.raises(InvalidInput, match=r"cursor has expired.*start again from the first page") as raised:
        export(later, ctx, ns, seed, caps, cursor=first.next_cursor)
    assert raised.value.code == "invalid_input" and raised.value.details == {"field": "cursor"}
    again = all_pages(later, ctx, ns, seed, caps)  # starting again works, and saving drops the expired walks
    assert len(again) > 1
    kept = query(graph, "MATCH (w:SystemRecord) WHERE w.kind = 'export_walk' "
                        "RETURN w.namespace AS namespace, w.owner AS owner, w.expires_at AS expires_at")
    assert kept and all(w["namespace"] == "_system" and w["expires_at"] > now_ms() + ttl_ms for w in kept)


def test_expired_walks_are_swept_once_a_minute(service: MemoryService, ctx: CallerContext, ns: str,
                                               hub: list[Document], graph: neo4j.Driver,
                                               spy: Calls) -> None:
    """The first page that keeps a walk in a minute of the clock sweeps the expired ones; the other first
    pages of that minute do not (the sweep is a write transaction of its own)."""
    seed, caps = {"kind": "entity", "id": entity_id(graph, ns, "Kafka")}, {"depth": 2, "max_nodes": 5}
    minute = (now_ms() // EXPIRY_SWEEP_MS + 10) * EXPIRY_SWEEP_MS  # a minute no other test's clock is in
    times = iter([minute + 1_000, minute + 50_000, minute + EXPIRY_SWEEP_MS + 1_000])
    ticking = MemoryService(service.core.store, service.core.settings, service.pipeline, service.core.cursors,
                            clock=lambda: next(times))
    sweeps = []
    for _ in range(3):
        spy.clear()
        assert export(ticking, ctx, ns, seed, caps).next_cursor is not None
        sweeps.append([name for name, _, _ in spy].count("export_walks_expire"))
    assert sweeps == [1, 0, 1]


def test_what_is_forgotten_between_pages_is_left_off_later_pages(service: MemoryService, ctx: CallerContext,
                                                                  ns: str, hub: list[Document],
                                                                  graph: neo4j.Driver, spy: Calls) -> None:
    seed, caps = {"kind": "entity", "id": entity_id(graph, ns, "Kafka")}, {"depth": 2, "max_nodes": 5}
    first = export(service, ctx, ns, seed, caps)
    assert first.next_cursor is not None
    on_first = {node.id for node in first.nodes}
    # the memories behind the kept walk's nodes past the first page (level 1 of Kafka: their facts, and the
    # team entities only they mention), chosen from the walk itself: which level-1 nodes it keeps depends on
    # their random ids, and forgetting memories it did not keep would test nothing
    kept = {i for name, params, _ in spy if name == "export_walk_save" for i in params["ids"]} - on_first
    owners = {row["id"] for row in query(
        graph, "MATCH (d:Document)-[:CONTAINS]->(f:Fact) WHERE d.namespace = $ns AND (f.id IN $kept OR EXISTS { "
               "MATCH (f)-[:MENTIONS]->(e:Entity) WHERE e.id IN $kept AND COUNT { (e)<-[:MENTIONS]-() } = 1 }) "
               "RETURN d.id AS id", ns=ns, kept=list(kept))}
    gone = [doc for doc in hub if doc.id in owners and doc.id not in on_first]
    assert gone
    for doc in gone:
        service.forget(ctx, doc.id, ForgetRequest(mode=ForgetMode.soft))
    # the kept nodes out of view now: the forgotten facts, and the entities only they mention
    stale = {row["id"] for row in query(
        graph, "MATCH (n) WHERE n.id IN $kept AND ((n:Fact AND n.is_forgotten) OR (n:Entity AND NOT EXISTS { "
               "MATCH (n)<-[:MENTIONS]-(f:Fact) WHERE f.is_latest AND NOT f.is_forgotten })) RETURN n.id AS id",
        kept=list(kept))}
    spy.clear()
    pages = [first]
    while pages[-1].next_cursor is not None:
        pages.append(export(service, ctx, ns, seed, caps, cursor=pages[-1].next_cursor))
    later = [node for page in pages[1:] for node in page.nodes]
    forgotten_ids = {doc.id for doc in gone}
    forgotten_texts = {doc.content for doc in gone}
    assert later and not any(node.id in forgotten_ids or node.is_forgotten for node in later)
    assert not any(node.text in forgotten_texts for node in later if node.kind == "fact")
    checked = {i for name, params, _ in spy if name in ("export_entities", "export_facts") for i in params["ids"]}
    assert stale and stale <= checked and not stale & {node.id for node in later}  # kept, checked, left off
    shown = {node.id for page in pages for node in page.nodes}
    for page in pages[1:]:  # no edge leads to a node left off (an edge may end on an earlier page)
        assert all(edge.source in shown and edge.target in shown and (edge.fact_id is None or edge.fact_id in shown)
                   for edge in page.edges)
    # the same walk started after the forgetting shows the same memories
    again = all_pages(service, ctx, ns, seed, caps)
    assert {n.id for p in again for n in p.nodes if n.kind == "document"} == \
        {n.id for p in pages for n in p.nodes if n.kind == "document"}


def test_a_walk_stops_at_its_limit(service: MemoryService, ctx: CallerContext, ns: str, hub: list[Document],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("graphmem.export.page.WALK_LIMIT", 10)
    pages = all_pages(service, ctx, ns, {"kind": "ids", "ids": [hub[0].id]}, {"depth": 4, "max_nodes": 4})
    assert [len(p.nodes) for p in pages] == [4, 4, 2]
    assert pages[-1].truncated and pages[-1].next_cursor is None  # more is reachable; the export says so


def test_cursor_pins_the_view_and_the_query_seeds(service: MemoryService, ctx: CallerContext, ns: str,
                                                  hub: list[Document]) -> None:
    seed = {"kind": "query", "query": "Which team streams audit events through Kafka?"}
    caps = {"depth": 2, "max_nodes": 8}
    before = export(service, ctx, ns, seed, {"depth": 2, "max_nodes": 5000})
    hits = [h.fact_id for h in service.search(ctx, SearchRequest(query=seed["query"], namespaces=[ns], limit=10))]
    assert sorted(n.id for n in before.nodes if n.depth == 0) == sorted(hits)
    first = export(service, ctx, ns, seed, caps)
    # memories change between pages: later pages still show the graph as of the first page
    service.update_memory(ctx, hub[0].id,
                            UpdateInput(content="Team Atlas streams its audit events through Pulsar now."))
    add_all(service, ctx, ns, [f"Team {n} also streams audit events through Kafka." for n in ("Nova", "Orion", "Pike")])
    pages = [first]
    while pages[-1].next_cursor is not None:
        pages.append(export(service, ctx, ns, seed, caps, cursor=pages[-1].next_cursor))
    assert [(n.id, n.kind, n.depth) for p in pages for n in p.nodes] == \
        [(n.id, n.kind, n.depth) for n in before.nodes]


def test_foreign_or_tampered_cursors_are_refused(service: MemoryService, ns: str, hub: list[Document]) -> None:
    other = f"{ns}-x"
    ctx = CallerContext.for_namespaces(ns, other)
    add_all(service, ctx, other, [f"Team {n} streams its audit events through Kafka." for n in HUB_TEAMS])
    seed = {"kind": "query", "query": "audit events through Kafka"}
    caps = {"max_nodes": 3}
    cursor = export(service, ctx, ns, seed, caps).next_cursor
    assert cursor is not None
    assert export(service, ctx, ns, seed, caps, cursor=cursor).nodes  # the genuine one works

    payload, mac = cursor.rsplit(".", 1)  # the signature follows the last dot (a compressed payload starts with one)
    flipped = payload[:10] + ("A" if payload[10] != "A" else "B") + payload[11:]
    tampered = [f"{flipped}.{mac}", f"{payload}.{mac[::-1]}", f"{payload}.", cursor + "=", cursor + ".x",
                f"{payload}!.{mac}", "", "x" * 5000, cursor.replace(".", "")]
    for bad in tampered:
        # a cursor of impossible length is refused by the request model, any other by the signature check
        message = "cursor is not valid" if 0 < len(bad) <= MAX_CURSOR_CHARS else "cursor: "
        with pytest.raises(InvalidInput, match=message) as raised:
            export(service, ctx, ns, seed, caps, cursor=bad)
        assert raised.value.code == "invalid_input"
    for namespace, other_seed, other_caps, view in [
            (other, seed, caps, View()), (ns, {**seed, "query": "Kafka"}, caps, View()),
            (ns, seed, {"max_nodes": 4}, View()), (ns, seed, caps, View(include_forgotten=True))]:
        with pytest.raises(InvalidInput, match="cursor belongs to another request"):
            export(service, ctx, namespace, other_seed, other_caps, view=view, cursor=cursor)

    # a replica with another key refuses it like a forgery
    settings = service.core.settings.model_copy(update={"cursor_secret": SecretStr("s" * 40)})
    replica = MemoryService(service.core.store, settings, service.pipeline, Cursors(cursor_key(settings)))
    with pytest.raises(InvalidInput, match="cursor is not valid"):
        export(replica, ctx, ns, seed, caps, cursor=cursor)


def test_cursor_key_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    settings = make_settings(tmp_path / "data")
    key = cursor_key(settings)
    path = tmp_path / "data" / "cursor.key"
    assert len(key) == 32 and path.read_bytes() == key and (path.stat().st_mode & 0o777) == 0o600
    assert cursor_key(make_settings(tmp_path / "data")) == key
    assert os.listdir(tmp_path / "data") == ["cursor.key"]  # no draft left behind
    assert cursor_key(make_settings(tmp_path, cursor_secret=SecretStr("k" * 32))) == b"k" * 32
    with pytest.raises(ConfigurationError):
        cursor_key(make_settings(tmp_path, cursor_secret=SecretStr("short")))
    path.write_bytes(b"truncated")
    with pytest.raises(ConfigurationError):
        cursor_key(settings)


# ---- formats ----------------------------------------------------------------------------------------


def test_graphml_keeps_text_except_what_xml_cannot_hold() -> None:
    nodes = [ExportNode(id=f"f{i}", kind="fact", depth=0, text=text) for i, text in enumerate(NASTY)]
    root = ET.fromstring(render_graphml(ExportResult(
        total_documents=0, reachable_documents=0, truncated=False, unavailable_documents=0, coverage=1.0,
        coverage_is_upper_bound=False,
        nodes=nodes, edges=[])).encode())
    read = {n.get("id"): next((d.text or "" for d in n if d.get("key") == "n_text"), "")
            for n in root.iter(f"{{{GRAPHML_NS}}}node")}
    xml_chars = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
    assert read == {f"f{i}": xml_chars.sub("\ufffd", text) for i, text in enumerate(NASTY)}


def test_graphml_parses_and_declares_its_keys(service: MemoryService, ctx: CallerContext, ns: str,
                                              chain: tuple[Document, Document, Document]) -> None:
    nasty = add(service, ctx, ns, NASTY_DOCUMENT)
    seed = {"kind": "ids", "ids": [chain[1].id, nasty.id]}
    result = export(service, ctx, ns, seed, {"depth": 3})
    graphml = rendered(service, ctx, ns, seed, {"depth": 3}, ExportFormat.graphml)
    assert graphml.format == "graphml" and graphml.total_documents == result.total_documents
    root = ET.fromstring(graphml.content.encode())
    tag = f"{{{GRAPHML_NS}}}"
    assert root.tag == f"{tag}graphml"
    keys = {k.get("id"): (k.get("for"), k.get("attr.name"), k.get("attr.type")) for k in root.iter(f"{tag}key")}
    assert keys["n_kind"] == ("node", "kind", "string") and keys["e_negated"] == ("edge", "negated", "boolean")
    assert keys["g_total_documents"] == ("graph", "total_documents", "long")
    assert all(d.get("key") in keys for d in root.iter(f"{tag}data"))
    graph = root.find(f"{tag}graph")
    assert graph is not None and graph.get("edgedefault") == "directed"
    nodes = {n.get("id"): {d.get("key"): d.text for d in n} for n in graph.iter(f"{tag}node")}
    assert list(nodes) == [n.id for n in result.nodes]
    assert nodes[chain[0].id] == {"n_kind": "unavailable", "n_depth": "1"}
    texts = {d["n_text"] for d in nodes.values() if "n_text" in d}
    assert "Zoë's \"quoted\" note: back\\slash, tab\t, bell\ufffd, RLO\u202e done." in texts  # BEL: not XML
    edges = [(e.get("source"), e.get("target")) for e in graph.iter(f"{tag}edge")]
    assert edges == [(e.source, e.target) for e in result.edges]


@needs_gate
def test_cypher_export_lints_clean(service: MemoryService, ctx: CallerContext, ns: str, hub: list[Document],
                                   chain: tuple[Document, Document, Document], tmp_path: Path) -> None:
    nasty = add(service, ctx, ns, NASTY_DOCUMENT)
    script = rendered(service, ctx, ns, {"kind": "ids", "ids": [nasty.id, chain[1].id]}, {"depth": 4},
                      ExportFormat.cypher, target_namespace="copy.of-it").content
    statements = script_statements(script)
    assert len(statements) > 40
    result = gate(statements, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{len(statements)} statements checked" in result.stdout


def test_cypher_export_round_trips(service: MemoryService, ns: str, graph: neo4j.Driver,
                                   chain: tuple[Document, Document, Document]) -> None:
    target = f"{ns}-copy"
    ctx = CallerContext.for_namespaces(ns, target)
    nasty = add(service, ctx, ns, NASTY_DOCUMENT)
    falcon = add(service, ctx, ns, "Priya Raman leads Project Falcon. Zoë does not use Oracle.")
    seed = {"kind": "ids", "ids": [chain[1].id, nasty.id, falcon.id]}
    original = export(service, ctx, ns, seed, {"depth": 4})
    assert not original.truncated and original.unavailable_documents == 1
    assert any(e.kind == "triple" and e.negated for e in original.edges)
    script = rendered(service, ctx, ns, seed, {"depth": 4}, ExportFormat.cypher, target_namespace=target).content

    # ids are unique across the database: the copy loads where they are not present any more
    query(graph, "MATCH (n) WHERE n.namespace = $ns DETACH DELETE n", ns=ns)
    for statement in script_statements(script):
        query(graph, statement)
    for statement in script_statements(script):  # MERGE: a second run changes nothing
        query(graph, statement)

    copy = export(service, ctx, target, seed, {"depth": 4})
    placeholders = {n.id for n in original.nodes if n.kind == "unavailable"}  # not recreated: nothing to copy
    expected_nodes = [n for n in original.nodes if n.id not in placeholders]
    expected_edges = [e for e in original.edges if e.source not in placeholders and e.target not in placeholders]
    assert copy.nodes == expected_nodes
    assert copy.edges == expected_edges
    assert copy.total_documents == original.total_documents and not copy.truncated
    stored = query(graph, "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=target)[0]["c"]
    linked = query(graph, "MATCH (a)-[r]->(b) WHERE a.namespace = $ns AND b.namespace = $ns "
                          "RETURN count(r) AS c", ns=target)[0]["c"]
    assert (stored, linked) == (len(expected_nodes), len(expected_edges))
    assert any(n.text and "\u202e" in n.text and "\x07" in n.text for n in copy.nodes)
