"""Export pages on the real engine: pages add up to one traversal, completeness against a brute-force walk,
the kept walk and its expiry, and the signed cursor that pins the view and refuses tampering."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import neo4j
import pytest
from export_helpers import (
    HUB_TEAMS,
    Calls,
    add_all,
    all_pages,
    edge_keys,
    entity_id,
    export,
)
from factories import add
from pydantic import SecretStr

from graphmem.cursors import Cursors, cursor_key
from graphmem.errors import ConfigurationError, InvalidInput
from graphmem.export.page import EXPIRY_SWEEP_MS
from graphmem.export.walk import MIN_CHUNK
from graphmem.model import (
    MAX_CURSOR_CHARS,
    CallerContext,
    ForgetMode,
    ForgetRequest,
    SearchRequest,
    UpdateInput,
    View,
)
from graphmem.records import now_ms
from graphmem.results import Document, ExportResult
from graphmem.service import MemoryService
from helpers import make_settings, query

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
