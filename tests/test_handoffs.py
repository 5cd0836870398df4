"""Handoffs: optimistic versions that never fork, retry-safe saves, the seed's bounds, and namespaces."""

from __future__ import annotations

import threading
from typing import Any

import neo4j
import pytest

from graphmem.errors import Conflict, Forbidden, InvalidInput, NotFound
from graphmem.model import CallerContext, HandoffInput, HandoffListOptions, parse
from graphmem.results import Handoff
from graphmem.service import MemoryService
from helpers import query


def save(service: MemoryService, ctx: CallerContext, ns: str, expected: int, request_id: str,
         **fields: Any) -> Handoff:
    values: dict[str, Any] = {"project": "atlas/api", "goal": "Ship the API", "summary": "Half done.", **fields}
    return service.save_handoff(ctx, ns, HandoffInput(expected_version=expected, request_id=request_id, **values))


def test_first_revision_latest_and_history(service: MemoryService, ctx: CallerContext, ns: str,
                                           graph: neo4j.Driver) -> None:
    empty = service.get_handoff(ctx, ns, "atlas/api")
    assert (empty.version, empty.context) == (0, None)
    first = save(service, ctx, ns, 0, "req-0001", decisions=["use Kafka"])
    assert first.version == 1 and first.author == "local" and first.context is not None
    assert first.context.decisions == ["use Kafka"] and first.context.next_steps == []
    second = save(service, CallerContext.for_namespaces(ns).model_copy(update={"credential_name": "agent-7"}), ns,
                  1, "req-0002", summary="Done.", next_steps=["tell Priya"])
    assert second.version == 2 and second.author == "agent-7"
    assert service.get_handoff(ctx, ns, "atlas/api") == second
    assert service.get_handoff(ctx, ns, "atlas/api", 1) == first
    with pytest.raises(NotFound):
        service.get_handoff(ctx, ns, "atlas/api", 3)
    chain = query(graph, "MATCH (n:Handoff)-[:PREVIOUS_VERSION]->(o:Handoff) WHERE n.namespace = $ns "
                         "RETURN n.version AS new, o.version AS old, o.is_latest AS stale", ns=ns)
    assert chain == [{"new": 2, "old": 1, "stale": False}]


def test_stale_expected_version_says_what_to_do(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    save(service, ctx, ns, 0, "req-0001")
    save(service, ctx, ns, 1, "req-0002")
    with pytest.raises(Conflict) as raised:
        save(service, ctx, ns, 1, "req-0003")
    assert raised.value.details["next_step"] == "read the handoff, reconcile, and save with expected_version 2"
    with pytest.raises(Conflict) as first:
        save(service, ctx, ns, 5, "req-0004", project="other")  # a project with no revision is at 0
    assert first.value.details["next_step"].endswith("expected_version 0")


def test_retries_return_the_first_revision_and_reused_ids_conflict(service: MemoryService, ctx: CallerContext,
                                                                   ns: str) -> None:
    first = save(service, ctx, ns, 0, "req-retry-1", decisions=["a"])
    again = save(service, ctx, ns, 0, "req-retry-1", decisions=["a"])  # stale version, same request: its result
    assert again == first
    with pytest.raises(Conflict, match="already used"):
        save(service, ctx, ns, 1, "req-retry-1", decisions=["b"])
    assert service.get_handoff(ctx, ns, "atlas/api").version == 1


def test_concurrent_saves_one_wins_no_gap_no_fork(service: MemoryService, ctx: CallerContext, ns: str,
                                                  graph: neo4j.Driver) -> None:
    save(service, ctx, ns, 0, "req-base-1")
    outcomes: list[object] = []
    barrier = threading.Barrier(6)

    def racer(number: int) -> None:
        barrier.wait()
        try:
            outcomes.append(save(service, ctx, ns, 1, f"req-race-{number}", summary=f"racer {number}"))
        except Conflict as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=racer, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    wins = [o for o in outcomes if isinstance(o, Handoff)]
    assert len(outcomes) == 6 and len(wins) == 1 and wins[0].version == 2
    versions = query(graph, "MATCH (h:Handoff) WHERE h.namespace = $ns RETURN h.version AS v, h.is_latest AS l "
                            "ORDER BY v", ns=ns)
    assert versions == [{"v": 1, "l": False}, {"v": 2, "l": True}]


@pytest.mark.parametrize("bad", [
    {"project": ""}, {"project": "a" * 101}, {"project": "has space"}, {"goal": ""}, {"goal": "g" * 8001},
    {"summary": "s" * 20001}, {"expected_version": -1}, {"expected_version": "1"}, {"request_id": "short"},
    {"request_id": "has space!"}, {"decisions": ["d"] * 31}, {"next_steps": ["x" * 2001]}, {"references": "one"},
])
def test_bounds(bad: dict[str, Any]) -> None:
    valid = {"project": "p", "goal": "g", "summary": "", "expected_version": 0, "request_id": "req-bound"}
    parse(HandoffInput, valid)
    with pytest.raises(InvalidInput):
        parse(HandoffInput, {**valid, **bad})
    edge = {**valid, "project": "a/b.c_d-e" + "x" * 91, "goal": "g" * 8000, "summary": "s" * 20000,
            "decisions": ["d" * 2000] * 30}
    assert parse(HandoffInput, edge).project == edge["project"]


def test_list_latest_per_project_paged(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    for number, project in enumerate(["beta", "alpha", "gamma"]):
        save(service, ctx, ns, 0, f"req-list-{number}", project=project)
    save(service, ctx, ns, 1, "req-list-9", project="alpha", summary="second")
    page = service.list_handoffs(ctx, ns, HandoffListOptions(limit=2))
    assert [(h.project, h.version) for h in page.items] == [("alpha", 2), ("beta", 1)]
    rest = service.list_handoffs(ctx, ns, HandoffListOptions(limit=2, cursor=page.next_cursor))
    assert [h.project for h in rest.items] == ["gamma"] and rest.next_cursor is None


def test_handoffs_stay_in_their_namespace(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    save(service, ctx, ns, 0, "req-iso-1")
    other = f"{ns}-b"
    theirs = CallerContext.for_namespaces(other)
    assert service.get_handoff(theirs, other, "atlas/api").version == 0  # same project name, another namespace
    assert service.list_handoffs(theirs, other).items == []
    first = save(service, theirs, other, 0, "req-iso-1")  # the same request id is theirs to use
    assert first.version == 1
    with pytest.raises(NotFound):
        service.get_handoff(theirs, ns, "atlas/api")
    with pytest.raises(NotFound):
        service.list_handoffs(theirs, ns)
    reader = CallerContext(read=frozenset({ns}))
    assert service.get_handoff(reader, ns, "atlas/api").version == 1
    with pytest.raises(Forbidden, match="no write access"):
        save(service, reader, ns, 1, "req-iso-2")
