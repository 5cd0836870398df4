"""Forgetting: soft (restorable), redact (content gone, lineage kept) and hard (chain gone)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import neo4j
import pytest
from factories import add, update
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.errors import Conflict, Forbidden, GraphmemError, InvalidInput, NotFound
from graphmem.model import (
    CallerContext,
    DocumentListOptions,
    ForgetMode,
    ForgetRequest,
    View,
    parse,
)
from graphmem.results import Document, ForgetResult
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from helpers import counts, query
from mcp_helpers import credential, session


def forget(service: MemoryService, ctx: CallerContext, doc_id: str, mode: str,
           request_id: str | None = None) -> ForgetResult:
    return service.forget(ctx, doc_id, ForgetRequest(mode=ForgetMode(mode), request_id=request_id))


def _chain(service: MemoryService, ctx: CallerContext, ns: str) -> tuple[Document, Document]:
    v1 = add(service, ctx, ns, "The first secret is here. The second secret is here.", title="Private",
             metadata={"who": "me"}, source="people/alice-smith.md", request_id="chain-add-1")
    v2 = update(service, ctx, v1.id, "The third secret is here.")
    return v1, v2


def test_soft_forget_hides_and_restore_brings_back(service: MemoryService, ctx: CallerContext, ns: str,
                                                   graph: neo4j.Driver) -> None:
    v1, v2 = _chain(service, ctx, ns)
    nodes_before = counts(graph, ns)
    result = forget(service, ctx, v1.id, "soft")  # any version's id forgets the whole memory
    assert (result.documents, result.facts) == (2, 3)
    rows = query(graph, "MATCH (d:Document {chain_id: $c}) OPTIONAL MATCH (d)-[:CONTAINS]->(f:Fact) "
                        "RETURN d.is_forgotten AS df, d.forgotten_at AS t, f.is_forgotten AS ff, "
                        "d.content AS content", c=v1.id)
    assert all(r["df"] and r["ff"] and r["t"] and r["content"] for r in rows)
    assert counts(graph, ns) == nodes_before  # nothing deleted
    assert service.list_memories(ctx, ns).total == 0
    assert service.list_memories(ctx, ns, DocumentListOptions(view=View(include_forgotten=True))).total == 1
    assert service.get_version(ctx, v2.id).is_forgotten

    again = forget(service, ctx, v2.id, "soft")  # idempotent
    assert (again.documents, again.facts) == (0, 0)
    assert query(graph, "MATCH (d:Document {id: $id}) RETURN d.forgotten_at AS t", id=v2.id)[0]["t"] == \
        rows[0]["t"]
    with pytest.raises(Conflict):
        update(service, ctx, v2.id, "Cannot update a forgotten memory.")

    restored = service.restore(ctx, v1.id)
    assert restored.id == v2.id and not restored.is_forgotten and restored.restored_at
    assert service.list_memories(ctx, ns).total == 1
    flags = query(graph, "MATCH (d:Document {chain_id: $c})-[:CONTAINS]->(f:Fact) "
                         "RETURN collect(DISTINCT d.is_forgotten) + collect(DISTINCT f.is_forgotten) AS x",
                  c=v1.id)
    assert flags == [{"x": [False, False]}]
    assert service.restore(ctx, v1.id).id == v2.id  # restoring a present memory changes nothing


def test_redact_removes_text_keeps_lineage(service: MemoryService, ctx: CallerContext, ns: str,
                                           graph: neo4j.Driver) -> None:
    v1, v2 = _chain(service, ctx, ns)
    query(graph, "MATCH (f:Fact) WHERE f.namespace = $ns SET f.embedding = $v", ns=ns, v=[0.05] * 384)
    before = counts(graph, ns)
    result = forget(service, ctx, v2.id, "redact")
    assert (result.documents, result.facts) == (2, 3)
    assert counts(graph, ns) == before  # nodes and edges (lineage, CONTAINS) all kept
    docs = query(graph, "MATCH (d:Document {chain_id: $c}) RETURN d.content AS c, d.title AS t, "
                        "d.metadata AS m, d.content_hash AS h, d.is_redacted AS r, d.redacted_at AS ra, "
                        "d.recorded_at AS rec, d.version AS v, d.source AS src", c=v1.id)
    assert all(d["c"] is None and d["t"] is None and d["m"] is None and d["h"] is None and d["src"] is None
               for d in docs)
    assert all(d["r"] and d["ra"] and d["rec"] and d["v"] for d in docs)
    facts = query(graph, "MATCH (d:Document {chain_id: $c})-[:CONTAINS]->(f:Fact) "
                         "RETURN f.text AS text, f.embedding AS e, f.start AS s, f.end AS end", c=v1.id)
    assert len(facts) == 3 and all(f["text"] is None and f["e"] is None and f["end"] > f["s"] for f in facts)
    assert query(graph, "MATCH (:Document {id: $a})-[r:PREVIOUS_VERSION]->(:Document {id: $b}) "
                        "RETURN count(r) AS c", a=v2.id, b=v1.id) == [{"c": 1}]

    got = service.get_version(ctx, v2.id)
    assert got.is_redacted and got.content is None and got.is_forgotten
    assert [h.version for h in service.history(ctx, v1.id).items] == [2, 1]
    again = forget(service, ctx, v2.id, "redact")
    assert (again.documents, again.facts) == (0, 0)
    with pytest.raises(Conflict):
        service.restore(ctx, v2.id)
    with pytest.raises(Conflict):
        update(service, ctx, v2.id, "New content.")


def test_hard_delete_removes_the_whole_chain(service: MemoryService, ctx: CallerContext, ns: str,
                                             graph: neo4j.Driver) -> None:
    keep = add(service, ctx, ns, "Unrelated memory stays.")
    kept_counts = counts(graph, ns)
    v1, v2 = _chain(service, ctx, ns)
    result = forget(service, ctx, v1.id, "hard", request_id="hard-del-01")
    assert (result.documents, result.facts) == (2, 3)
    assert query(graph, "MATCH (d:Document {chain_id: $c}) RETURN count(d) AS c", c=v1.id) == [{"c": 0}]
    left = query(graph, "MATCH (f:Fact) WHERE f.document_id IN $ids RETURN count(f) AS c", ids=[v1.id, v2.id])
    assert left == [{"c": 0}]
    nodes, edges = counts(graph, ns)
    assert (nodes - 2, edges) == kept_counts  # left: the request's receipt and the add's tombstone
    leftovers = query(graph, "MATCH (r:Receipt) WHERE r.namespace = $ns RETURN keys(r) AS k", ns=ns)
    assert all(not {"content", "text", "title", "metadata"} & set(r["k"]) for r in leftovers)
    with pytest.raises(NotFound):
        service.get_version(ctx, v2.id)
    with pytest.raises(NotFound):
        service.restore(ctx, v2.id)
    with pytest.raises(NotFound):  # a repeat without the request id finds nothing
        forget(service, ctx, v1.id, "hard")
    retried = forget(service, ctx, v1.id, "hard", request_id="hard-del-01")
    assert retried == result
    with pytest.raises(Conflict):  # a late retry of the add must not bring the memory back
        add(service, ctx, ns, "The first secret is here. The second secret is here.", title="Private",
            metadata={"who": "me"}, source="people/alice-smith.md", request_id="chain-add-1")
    with pytest.raises(Forbidden):  # a reader cannot replay the delete to learn its result
        forget(service, CallerContext(read=frozenset({ns})), v1.id, "hard", request_id="hard-del-01")
    assert service.get_version(ctx, keep.id).content == "Unrelated memory stays."


def test_forget_rejects_unknown_mode(service: MemoryService, ctx: CallerContext, ns: str) -> None:
    doc = add(service, ctx, ns, "Text.")
    with pytest.raises(InvalidInput) as raised:
        parse(ForgetRequest, {"mode": "shred"})
    assert "mode" in raised.value.message
    assert not service.get_version(ctx, doc.id).is_forgotten


def test_concurrent_hard_forgets_with_one_request_id_agree(service: MemoryService, ctx: CallerContext,
                                                           ns: str) -> None:
    for round_ in range(3):
        doc = add(service, ctx, ns, f"This is round {round_}. Delete me only once.")
        barrier = threading.Barrier(4)

        def forget_once(_: int, doc_id: str = doc.id, rid: str = f"race-del-{round_}",
                        barrier: threading.Barrier = barrier) -> ForgetResult | GraphmemError:
            barrier.wait()
            try:
                return forget(service, ctx, doc_id, "hard", request_id=rid)
            except GraphmemError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=4) as pool:
            results = list(pool.map(forget_once, range(4)))
        assert all(r == results[0] for r in results), results
        assert (results[0].documents, results[0].facts) == (1, 2)  # type: ignore[union-attr]


def test_update_racing_forget_and_redact_stays_consistent(service: MemoryService, ctx: CallerContext,
                                                          ns: str, graph: neo4j.Driver) -> None:
    doc = add(service, ctx, ns, "Contended memory.")
    barrier = threading.Barrier(3)

    def act(kind: str) -> object:
        barrier.wait()
        try:
            if kind == "update":
                return update(service, ctx, doc.id, "Updated while forgotten?")
            return forget(service, ctx, doc.id, kind)
        except GraphmemError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=3) as pool:
        list(pool.map(act, ["update", "soft", "redact"]))
    rows = query(graph, "MATCH (d:Document {chain_id: $c}) RETURN d.is_forgotten AS f, d.is_redacted AS r, "
                        "d.content AS c, d.is_latest AS l", c=doc.id)
    assert sum(r["l"] for r in rows) == 1
    assert all(r["f"] and r["r"] and r["c"] is None for r in rows)  # redact reached every version


def test_a_redacted_memory_reads_as_its_redaction_record_on_every_front_end(
        runtime: Runtime, service: MemoryService, ctx: CallerContext, ns: str) -> None:
    """Its id, versions, redacted state and reason, and none of its text: /v1, GraphQL memory(id), MCP get_memory."""
    first = add(service, ctx, ns, "Ada Quill keeps the vault code 4471 in Lisbon.", title="vault")
    second = update(service, ctx, first.id, "Ada Quill keeps the vault code 9902 in Lisbon.")
    service.forget(ctx, first.id, ForgetRequest(mode=ForgetMode.redact, reason="asked to erase it"))
    secrets = ("4471", "9902", "Ada Quill", "Lisbon", "vault")
    fixed, token = credential(runtime, [ns])
    with TestClient(create_app(runtime=runtime)) as client:
        read = client.get(f"/v1/memories/{second.id}", headers={"Authorization": f"Bearer {token}"})
        assert read.status_code == 200, read.text
        body = read.json()
        assert (body["id"], body["version"], body["isLatest"], body["parentMemoryId"]) == (second.id, 2, True, first.id)
        assert body["is_redacted"] and body["isForgotten"] and body["redacted_at"]
        assert body["forget_reason"] == "asked to erase it" and body["content"] is None
        assert body["facts"] and all(f["text"] is None and f["attributes"] == [] for f in body["facts"])
        graphql = client.post("/graphql", headers={"Authorization": f"Bearer {token}"}, json={"query": """
            query($id: ID!) { memory(id: $id) { id version isRedacted redactedAt forgetReason content
                                                 facts(first: 5) { text } } }""", "variables": {"id": second.id}})
        assert "errors" not in graphql.json(), graphql.text
        memory = graphql.json()["data"]["memory"]
        assert memory["isRedacted"] and memory["forgetReason"] == "asked to erase it" and memory["content"] is None
        assert memory["redactedAt"] and all(f["text"] is None for f in memory["facts"])

    async def main() -> dict[str, Any]:
        async with session(runtime, fixed) as s:
            return await s.call("get_memory", memory_id=second.id)

    got = anyio.run(main)
    assert got["memory"]["is_redacted"] and got["memory"]["forget_reason"] == "asked to erase it"
    assert got["memory"]["content"] is None and all(f["text"] is None for f in got["facts"])
    for text in (read.text, graphql.text, str(got)):
        assert not any(secret in text for secret in secrets), text
