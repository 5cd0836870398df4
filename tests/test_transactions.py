"""A failure half-way through a write leaves no half-written graph: one transaction per logical write."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest

from graphmem.model import CallerContext, DocumentInput, ForgetMode, ForgetRequest, UpdateInput
from graphmem.results import Document
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from graphmem.store.driver import Tx
from helpers import counts, query


def add(service: MemoryService, ctx: CallerContext, ns: str, content: str, **fields: Any) -> Document:
    return service.add_document(ctx, ns, DocumentInput(content=content, **fields))


class InjectedFault(Exception):
    pass


def fail_at(monkeypatch: pytest.MonkeyPatch, statement: str) -> list[str]:
    """Make ``Tx.run`` raise when it reaches ``statement``; returns the statements that ran before."""
    ran: list[str] = []
    original = Tx.run

    def run(self: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
        if name == statement:
            raise InjectedFault(name)
        result = original(self, name, **params)
        ran.append(name)
        return result

    monkeypatch.setattr(Tx, "run", run)
    return ran


def test_add_failing_after_document_created_leaves_nothing(service: MemoryService, ctx: CallerContext,
                                                           ns: str, graph: neo4j.Driver,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    add(service, ctx, ns, "Already here.")
    before = counts(graph, ns)
    ran = fail_at(monkeypatch, "facts_create")
    with pytest.raises(InjectedFault):
        add(service, ctx, ns, "Half written? Never.", request_id="req-fault-1")
    assert "documents_create" in ran  # the fault really came after a write
    assert counts(graph, ns) == before
    monkeypatch.undo()
    doc = add(service, ctx, ns, "Half written? Never.", request_id="req-fault-1")
    assert doc.fact_count == 2  # the retry is a fresh write, not a collision with a ghost


def test_update_failing_after_supersede_leaves_old_version_latest(service: MemoryService,
                                                                  ctx: CallerContext, ns: str,
                                                                  graph: neo4j.Driver,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = add(service, ctx, ns, "Version one.")
    before = counts(graph, ns)
    ran = fail_at(monkeypatch, "version_link")
    with pytest.raises(InjectedFault):
        service.update_document(ctx, v1.id, UpdateInput(content="Version two."))
    assert {"version_supersede", "documents_create", "facts_create"} <= set(ran)
    assert counts(graph, ns) == before
    rows = query(graph, "MATCH (d:Document {id: $id})-[:CONTAINS]->(f:Fact) "
                        "RETURN d.is_latest AS d, d.superseded_at AS s, f.is_latest AS f", id=v1.id)
    assert rows == [{"d": True, "s": None, "f": True}]


def test_hard_delete_failing_half_way_deletes_nothing(service: MemoryService, ctx: CallerContext, ns: str,
                                                      graph: neo4j.Driver,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    v1 = add(service, ctx, ns, "Keep me. Please.")
    before = counts(graph, ns)
    ran = fail_at(monkeypatch, "chain_delete_documents")
    with pytest.raises(InjectedFault):
        service.forget(ctx, v1.id, ForgetRequest(mode=ForgetMode.hard))
    assert "chain_delete_facts" in ran
    assert counts(graph, ns) == before


def test_a_record_deleted_by_a_concurrent_transaction_is_retried_then_a_conflict(runtime: Runtime) -> None:
    """The bundled engine reports a read of a record another transaction just deleted as EntityNotFound: the
    store retries it like a write conflict, and after the last attempt the caller hears a conflict with its
    next step, not an internal error."""
    from neo4j.exceptions import Neo4jError

    from graphmem.errors import Conflict

    calls = 0

    def always_racing(tx: object) -> None:
        nonlocal calls
        calls += 1
        raise Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.EntityNotFound", message="deleted")

    with pytest.raises(Conflict) as raised:
        runtime.store.write(always_racing)
    assert calls > 1 and raised.value.details["next_step"]
