"""Retrieval signals on the real engine: the time views hold on every signal, and a small namespace
inside a large one finds its hits through both the exact scan and the widening index path."""

from __future__ import annotations

import dataclasses
import random
import uuid

import neo4j
import pytest
from factories import add, update

from graphmem.model import NO_FILTERS, CallerContext, ForgetMode, ForgetRequest, View
from graphmem.runtime import Runtime
from graphmem.search import retrieve
from graphmem.search.hybrid import _graph_candidates
from graphmem.search.retrieve import fulltext_candidates, vector_candidates
from graphmem.service import MemoryService
from graphmem.store.driver import Tx
from graphmem.store.views import filter_params, view_params
from helpers import query, sent_statements


def forget(service: MemoryService, ctx: CallerContext, doc_id: str) -> None:
    service.forget(ctx, doc_id, ForgetRequest(mode=ForgetMode.soft))


def fact_texts(graph: neo4j.Driver, ids: list[str]) -> list[str]:
    rows = query(graph, "UNWIND $ids AS id MATCH (f:Fact {id: id}) RETURN f.text AS t", ids=ids)
    return [r["t"] for r in rows]


@pytest.mark.parametrize("signal", ["vector", "fulltext"])
def test_views_hold_on_every_signal(runtime: Runtime, service: MemoryService, ctx: CallerContext, ns: str,
                                    graph: neo4j.Driver, signal: str) -> None:
    v1 = add(service, ctx, ns, "The winter freeze starts on the fifteenth of December.")
    v2 = update(service, ctx, v1.id, "The winter freeze starts on the tenth of December.")
    gone = add(service, ctx, ns, "The winter freeze starts on the first of December.")
    forget(service, ctx, gone.id)
    question = "When does the winter freeze start?"
    (vector,) = service.pipeline.embedder.embed([question])

    def hits(view: View) -> list[str]:
        def read(tx: Tx) -> list[str]:
            if signal == "vector":
                found = vector_candidates(tx, runtime.store.dialect, [ns], view, vector, 10)
            else:
                found = fulltext_candidates(tx, runtime.store.dialect, [ns], view, "winter freeze", 10)
            return [c.id for c in found]
        return fact_texts(graph, runtime.store.read(read))

    assert hits(View()) == ["The winter freeze starts on the tenth of December."]
    assert hits(View(as_of=v1.recorded_at)) == ["The winter freeze starts on the fifteenth of December."]
    assert hits(View(as_of=v2.recorded_at)) == ["The winter freeze starts on the tenth of December."]
    assert len(hits(View(include_superseded=True))) == 2
    assert len(hits(View(include_superseded=True, include_forgotten=True))) == 3


def _plant(graph: neo4j.Driver, namespace: str, vectors: list[list[float]], text: str) -> list[str]:
    rows = [{"id": str(uuid.uuid4()), "namespace": namespace, "text": f"{text} {i}", "embedding": v,
             "is_latest": True, "is_forgotten": False, "recorded_at": 1} for i, v in enumerate(vectors)]
    query(graph, "UNWIND $rows AS row CREATE (f:Fact) SET f = row", rows=rows)
    return [r["id"] for r in rows]


def _unit(rng: random.Random, centre: list[float], spread: float) -> list[float]:
    v = [c + rng.gauss(0, spread) for c in centre]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


@pytest.mark.parametrize("path", ["exact_scan", "index"])
def test_small_namespace_inside_a_large_one_finds_its_hits(runtime: Runtime, graph: neo4j.Driver, ns: str,
                                                          monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    rng = random.Random(5)
    centre = _unit(rng, [0.0] * 384, 1.0)
    _plant(graph, f"{ns}-crowd", [_unit(rng, centre, 0.01) for _ in range(400)], "crowd")  # all nearer
    mine = _plant(graph, ns, [_unit(rng, centre, 0.2) for _ in range(3)], "mine")
    if path == "index":
        monkeypatch.setattr(retrieve, "FACTS", dataclasses.replace(retrieve.FACTS, scan_max=0))

    def read(tx: Tx) -> list[str]:
        return [c.id for c in vector_candidates(tx, runtime.store.dialect, [ns], View(), centre, 5)]

    assert sorted(runtime.store.read(read)) == sorted(mine)


def test_graph_expansion_holds_the_views(runtime: Runtime, service: MemoryService, ctx: CallerContext, ns: str,
                                         graph: neo4j.Driver) -> None:
    seed = add(service, ctx, ns, "Priya Raman owns the winter freeze plan.")
    v1 = add(service, ctx, ns, "Priya Raman starts the freeze on the fifteenth.")
    update(service, ctx, v1.id, "Priya Raman starts the freeze on the tenth.")
    gone = add(service, ctx, ns, "Priya Raman starts the freeze on the first.")
    forget(service, ctx, gone.id)
    seed_fact = query(graph, "MATCH (:Document {id: $id})-[:CONTAINS]->(f:Fact) RETURN f.id AS id", id=seed.id)[0]["id"]
    (vector,) = service.pipeline.embedder.embed(["When does the freeze start?"])

    def expanded(view: View) -> list[str]:
        scope = {"namespaces": [ns], **view_params(view), **filter_params(NO_FILTERS)}
        found = runtime.store.read(lambda tx: _graph_candidates(tx, runtime.store.dialect, scope, "freeze", vector,
                                                                [seed_fact], 10))
        return sorted(fact_texts(graph, [c.id for c in found]))

    assert expanded(View()) == ["Priya Raman starts the freeze on the tenth."]
    assert expanded(View(as_of=v1.recorded_at)) == ["Priya Raman starts the freeze on the fifteenth."]
    assert len(expanded(View(include_superseded=True, include_forgotten=True))) == 3


@pytest.mark.parametrize("path", ["widest_at_once", "widening"])
def test_full_text_finds_a_small_namespace_under_a_common_term(runtime: Runtime, graph: neo4j.Driver, ns: str,
                                                                monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    """A namespace small enough to scan asks the index for its widest k in one statement; a larger one
    widens step by step. Both find the few facts a crowd elsewhere outranks."""
    rng = random.Random(7)
    crowd = [_unit(rng, [1.0] * 384, 0.5) for _ in range(300)]
    _plant(graph, f"{ns}-crowd", crowd, "kafka kafka kafka topic")  # ranks above ours for "kafka"
    mine = _plant(graph, ns, crowd[:2], "kafka topic of the small team")
    if path == "widening":
        monkeypatch.setattr(retrieve, "FACTS", dataclasses.replace(retrieve.FACTS, scan_max=0))
    sent = sent_statements(monkeypatch)

    def read(tx: Tx) -> list[str]:
        return [c.id for c in fulltext_candidates(tx, runtime.store.dialect, [ns], View(), "kafka", 5)]

    assert sorted(runtime.store.read(read)) == sorted(mine)
    searches = sent.count("facts_fulltext_search")
    assert searches == 1 if path == "widest_at_once" else searches > 1
