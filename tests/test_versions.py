"""Version chains: update, history, compare-and-swap, and concurrent updates that must not fork."""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import neo4j
import pytest
from factories import add, update

from graphmem.errors import Conflict, GraphmemError, NotFound
from graphmem.model import CallerContext, HistoryOptions
from graphmem.results import Document
from graphmem.service import MemoryService
from helpers import counts, query


def test_chain_of_several_versions(service: MemoryService, ctx: CallerContext, ns: str,
                                   graph: neo4j.Driver) -> None:
    v1 = add(service, ctx, ns, "Version one. Has two facts.", title="doc", metadata={"k": "v"})
    v2 = update(service, ctx, v1.id, "Version two.", expected_version=1)
    v3 = update(service, ctx, v2.id, "Version three. Still going. Three facts.")
    v4 = update(service, ctx, v3.id, "Version four.", expected_version=3)
    assert [v.version for v in (v1, v2, v3, v4)] == [1, 2, 3, 4]
    assert v4.chain_id == v1.id and v4.parent_memory_id == v3.id and v4.title == "doc" and v4.metadata == {"k": "v"}
    assert v4.created_at == v1.created_at and v4.recorded_at > v3.recorded_at > v2.recorded_at

    history = service.history(ctx, v2.id).items  # any version's id gives the whole chain
    assert [h.id for h in history] == [v4.id, v3.id, v2.id, v1.id]
    assert [h.is_latest for h in history] == [True, False, False, False]
    assert [h.parent_memory_id for h in history] == [v3.id, v2.id, v1.id, None]
    assert all(h.superseded_at is not None for h in history[1:]) and history[0].superseded_at is None
    assert history[1].superseded_at == history[0].recorded_at

    latest = query(graph, "MATCH (d:Document {chain_id: $c}) WHERE d.is_latest RETURN count(d) AS n", c=v1.id)
    assert latest[0]["n"] == 1
    facts = query(graph, "MATCH (d:Document {chain_id: $c})-[:CONTAINS]->(f:Fact) "
                         "RETURN d.version AS v, f.is_latest AS latest, f.text AS text, "
                         "f.superseded_at AS sup", c=v1.id)
    assert {(r["v"], r["latest"]) for r in facts} == {(1, False), (2, False), (3, False), (4, True)}
    assert all(r["text"] for r in facts)  # old facts keep their text
    assert all((r["sup"] is None) == r["latest"] for r in facts)
    chain = query(graph, "MATCH p = (:Document {id: $id})-[:PREVIOUS_VERSION*]->(:Document {id: $first}) "
                         "RETURN length(p) AS n", id=v4.id, first=v1.id)
    assert chain == [{"n": 3}]

    old = service.get_version(ctx, v2.id)
    assert old.version == 2 and not old.is_latest and old.latest_id == v4.id and old.content == "Version two."


def test_stale_expected_version_conflicts(service: MemoryService, ctx: CallerContext, ns: str,
                                          graph: neo4j.Driver) -> None:
    v1 = add(service, ctx, ns, "One.")
    v2 = update(service, ctx, v1.id, "Two.")
    before = counts(graph, ns)
    with pytest.raises(Conflict) as raised:
        update(service, ctx, v2.id, "Three.", expected_version=1)
    assert raised.value.details["latest_version"] == 2
    assert counts(graph, ns) == before


def test_update_of_old_version_names_latest(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    v1 = add(service, ctx, ns, "One.")
    v2 = update(service, ctx, v1.id, "Two.")
    with pytest.raises(Conflict) as raised:
        update(service, ctx, v1.id, "Three.")
    assert raised.value.details["latest_id"] == v2.id
    assert v2.id in raised.value.details["next_step"]


def test_retried_update_returns_first_result(service: MemoryService, ctx: CallerContext, ns: str,
                                             graph: neo4j.Driver) -> None:
    v1 = add(service, ctx, ns, "One.")
    v2 = update(service, ctx, v1.id, "Two.", expected_version=1, request_id="upd-retry-1")
    before = counts(graph, ns)
    again = update(service, ctx, v1.id, "Two.", expected_version=1, request_id="upd-retry-1")
    assert again.id == v2.id and counts(graph, ns) == before
    with pytest.raises(Conflict):
        update(service, ctx, v1.id, "Different.", expected_version=1, request_id="upd-retry-1")


def test_concurrent_updates_with_same_expected_version(service: MemoryService, ctx: CallerContext, ns: str,
                                                       graph: neo4j.Driver) -> None:
    v1 = add(service, ctx, ns, "Base version.")
    writers = 6
    barrier = threading.Barrier(writers)

    def write(i: int) -> Document | GraphmemError:
        barrier.wait()
        try:
            return update(service, ctx, v1.id, f"Writer {i} wins.", expected_version=1)
        except GraphmemError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=writers) as pool:
        results = list(pool.map(write, range(writers)))
    won = [r for r in results if isinstance(r, Document)]
    lost = [r for r in results if not isinstance(r, Document)]
    assert len(won) == 1, results
    assert all(isinstance(r, Conflict) for r in lost), lost
    versions = query(graph, "MATCH (d:Document {chain_id: $c}) RETURN d.version AS v, d.is_latest AS l "
                            "ORDER BY v", c=v1.id)
    assert versions == [{"v": 1, "l": False}, {"v": 2, "l": True}]
    forks = query(graph, "MATCH (d:Document {id: $id})<-[:PREVIOUS_VERSION]-(n) RETURN count(n) AS c", id=v1.id)
    assert forks == [{"c": 1}]


def test_concurrent_updates_without_expected_version_serialise(service: MemoryService, ctx: CallerContext,
                                                               ns: str, graph: neo4j.Driver) -> None:
    """Without a version check each writer targets the latest id it saw: one wins, the rest are told
    which id is latest now. The chain stays linear either way."""
    v1 = add(service, ctx, ns, "Base.")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda i: _attempt(service, ctx, v1.id, i), range(4)))
    assert sum(isinstance(r, Document) for r in results) == 1
    rows = query(graph, "MATCH (d:Document {chain_id: $c}) RETURN count(d) AS n, "
                        "sum(CASE WHEN d.is_latest THEN 1 ELSE 0 END) AS latest", c=v1.id)
    assert rows == [{"n": 2, "latest": 1}]


def _attempt(service: MemoryService, ctx: CallerContext, doc_id: str, i: int) -> Document | GraphmemError:
    try:
        return update(service, ctx, doc_id, f"Writer {i}.")
    except GraphmemError as exc:
        return exc


def test_updaters_racing_on_one_chain_are_told_409_never_404(service: MemoryService, ctx: CallerContext,
                                                              ns: str, graph: neo4j.Driver) -> None:
    """Each writer reads the latest id and updates it, over and over. Neo4j reads committed data without a
    snapshot, so a writer may look for the latest while another update commits and see no version latest
    at all: that is a race to retry, not a memory that is gone."""
    first = add(service, ctx, ns, "Version zero of the shared note.")
    seen: Counter[str] = Counter()
    stop = time.monotonic() + 8

    def keep_updating(writer: int) -> None:
        attempt = 0
        while time.monotonic() < stop:
            attempt += 1
            latest = service.history(ctx, first.id, HistoryOptions(limit=1)).items[0].id
            try:
                update(service, ctx, latest, f"Version {attempt} by writer {writer}.")
                seen["updated"] += 1
            except Conflict:
                seen["conflict"] += 1
            except NotFound:
                seen["not found"] += 1

    writers = [threading.Thread(target=keep_updating, args=(n,)) for n in range(6)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert seen["not found"] == 0 and seen["updated"] > 0, seen
    rows = query(graph, "MATCH (d:Document {chain_id: $c}) RETURN count(d) AS n, "
                        "sum(CASE WHEN d.is_latest THEN 1 ELSE 0 END) AS latest", c=first.id)
    assert rows == [{"n": seen["updated"] + 1, "latest": 1}]
