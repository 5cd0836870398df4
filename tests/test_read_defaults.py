"""Reads that name no namespace cover every namespace the caller may read, on every front end, and say which;
calls addressed by id find their memory wherever the caller may read it; a reader of one namespace never sees
another, whatever it leaves out.

The store is a database of its own (``isolated_store``): what "every namespace" means depends on the whole
store, which the session's shared store fills with every other test's namespaces.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.config import Toolset
from graphmem.errors import InvalidInput
from graphmem.identity import OPERATOR, Credential, Identity, NewCredential, Scope
from graphmem.model import MAX_NAMESPACES, CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.service.access import within_bound
from helpers import isolated_store
from mcp_helpers import session

ALPHA, BETA = "alpha", "beta"
SHIPYARD = "The Harbour Guild runs the Eastmere shipyard, where the ferry Wren was built in 1998."
FALCON = "Maya Okafor leads Project Falcon at Tidewater Labs in Leeds."
FALCON_QUESTION = "Who leads Project Falcon?"


@dataclass
class World:
    runtime: Runtime
    client: TestClient
    owner: str  # read,write on every namespace
    reader: str  # read on alpha only
    pair: Credential  # read,write on alpha and beta
    pair_token: str
    shipyard: str  # memory ids
    falcon: str


def _token(runtime: Runtime, namespaces: list[str], scopes: list[Scope]) -> tuple[Credential, str]:
    return runtime.identity.create(NewCredential(name=f"r-{uuid.uuid4().hex[:6]}", scopes=scopes,
                                                 namespaces=namespaces), by=OPERATOR)


@pytest.fixture(scope="module")
def world(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with isolated_store(runtime, tmp_path_factory.mktemp("read-defaults")) as store:
        both = CallerContext.for_namespaces(ALPHA, BETA)
        shipyard = store.service.add_memory(both, ALPHA, DocumentInput(content=SHIPYARD, title="Eastmere")).document
        falcon = store.service.add_memory(both, BETA, DocumentInput(content=FALCON, title="Falcon")).document
        _, owner = _token(store, ["*"], [Scope.read, Scope.write])
        _, reader = _token(store, [ALPHA], [Scope.read])
        pair, pair_token = _token(store, [ALPHA, BETA], [Scope.read, Scope.write])
        with TestClient(create_app(runtime=store)) as client:
            yield World(store, client, owner, reader, pair, pair_token, shipyard.id, falcon.id)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def get(world: World, token: str, path: str, **params: Any) -> Any:
    response = world.client.get(path, params=params, headers=bearer(token))
    assert response.status_code == 200, response.text
    return response.json()


def test_v1_reads_cover_every_namespace_and_name_them(world: World) -> None:
    for token in (world.owner, world.pair_token):
        found = get(world, token, "/v1/memories/search", query=FALCON_QUESTION)
        assert found["namespaces"] == [ALPHA, BETA]
        assert found["results"][0]["document_id"] == world.falcon and found["results"][0]["namespace"] == BETA
        context = world.client.post("/v1/recall/context", json={"query": FALCON_QUESTION}, headers=bearer(token))
        assert context.status_code == 200 and context.json()["namespaces"] == [ALPHA, BETA]
        assert "Falcon" in context.json()["context_text"]
        listed = get(world, token, "/v1/memories")
        assert listed["namespaces"] == [ALPHA, BETA] and listed["total"] == 2
        assert {m["id"] for m in listed["memories"]} == {world.shipyard, world.falcon}
        entities = get(world, token, "/v1/entities/search", query="Maya Okafor")
        assert entities["namespaces"] == [ALPHA, BETA]
        assert any(e["name"] == "Maya Okafor" and e["namespace"] == BETA for e in entities["items"])
        triples = get(world, token, "/v1/triples", term="Harbour Guild")
        assert triples["namespaces"] == [ALPHA, BETA] and triples["items"]
        assert {t["citation"]["namespace"] for t in triples["items"]} == {ALPHA}
        graph = get(world, token, "/v1/graph", seed="query", query=FALCON_QUESTION)
        assert graph["namespaces"] == [BETA] and world.falcon in {n["id"] for n in graph["nodes"]}
        by_id = get(world, token, "/v1/graph", seed="document", id=world.shipyard)
        assert by_id["namespaces"] == [ALPHA]
    named = get(world, world.owner, "/v1/memories/search", query=FALCON_QUESTION, scope=ALPHA)
    assert named["namespaces"] == [ALPHA] and world.falcon not in {r["document_id"] for r in named["results"]}


def test_one_ranking_across_namespaces(world: World) -> None:
    """Not a list per namespace: the best memory of each comes first, whichever namespace it is in."""
    for question, best in ((FALCON_QUESTION, world.falcon), ("Which shipyard built the ferry Wren?", world.shipyard)):
        results = get(world, world.owner, "/v1/memories/search", query=question, limit=2)["results"]
        assert results[0]["document_id"] == best and len(results) == 2
        assert results[0]["score"] >= results[1]["score"]


def test_calls_by_id_find_the_memory_in_any_readable_namespace(world: World) -> None:
    headers = bearer(world.owner)
    client = world.client
    added = client.post("/v1/remember", json={"content": "Tidewater Labs moved its lab to York.", "scope": BETA},
                        headers=headers).json()["id"]
    assert client.get(f"/v1/memories/{added}", headers=headers).json()["namespace"] == BETA
    assert client.get(f"/v1/memories/{added}/history", headers=headers).status_code == 200
    updated = client.patch(f"/v1/memories/{added}", json={"content": "Tidewater Labs moved its lab to Hull."},
                           headers=headers)
    assert updated.status_code == 200 and updated.json()["version"] == 2
    newest = updated.json()["id"]
    assert client.post(f"/v1/memories/{newest}/forget", json={"mode": "soft"}, headers=headers).status_code == 200
    assert client.post(f"/v1/memories/{newest}/restore", headers=headers).status_code == 200
    assert client.delete(f"/v1/memories/{newest}", params={"mode": "hard"}, headers=headers).status_code == 200


def test_a_reader_of_one_namespace_never_sees_another(world: World) -> None:
    token, client = world.reader, world.client
    found = get(world, token, "/v1/memories/search", query=FALCON_QUESTION)
    assert found["namespaces"] == [ALPHA] and world.falcon not in {r["document_id"] for r in found["results"]}
    assert {m["id"] for m in get(world, token, "/v1/memories")["memories"]} == {world.shipyard}
    assert all(e["namespace"] == ALPHA for e in get(world, token, "/v1/entities/search", query="Maya Okafor")["items"])
    assert get(world, token, "/v1/triples", term="Maya Okafor")["items"] == []
    assert get(world, token, "/v1/graph", seed="query", query=FALCON_QUESTION)["namespaces"] == [ALPHA]
    for path in (f"/v1/memories/{world.falcon}", f"/v1/memories/{world.falcon}/history"):
        assert client.get(path, headers=bearer(token)).status_code == 404, path
    assert client.get("/v1/graph", params={"seed": "document", "id": world.falcon},
                      headers=bearer(token)).status_code == 404
    assert client.get("/v1/memories", params={"scope": BETA}, headers=bearer(token)).status_code == 404
    answer = client.post("/graphql", headers=bearer(token), json={
        "query": "query($id: ID!) { memory(id: $id) { id } }", "variables": {"id": world.falcon}}).json()
    assert answer["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    searched = client.post("/graphql", headers=bearer(token), json={
        "query": "query($q: String!) { search(query: $q) { edges { node { ... on Memory { id namespace } } } } }",
        "variables": {"q": FALCON_QUESTION}}).json()
    assert {e["node"]["namespace"] for e in searched["data"]["search"]["edges"]} <= {ALPHA}
    assert searched["extensions"]["namespaces"] == [ALPHA]


def test_graphql_reads_cover_every_namespace(world: World) -> None:
    answer = world.client.post("/graphql", headers=bearer(world.owner), json={
        "query": """query($q: String!, $id: ID!) {
            search(query: $q) { edges { node { ... on Memory { id namespace } } evidence { text } } }
            recall(query: $q) { items { text } }
            memories { totalCount }
            memory(id: $id) { id namespace } }""",
        "variables": {"q": FALCON_QUESTION, "id": world.falcon}}).json()
    assert "errors" not in answer, answer
    data = answer["data"]
    assert data["search"]["edges"][0]["node"] == {"id": world.falcon, "namespace": BETA}
    assert data["recall"]["items"] and data["memories"]["totalCount"] >= 2
    assert data["memory"] == {"id": world.falcon, "namespace": BETA}
    assert answer["extensions"]["namespaces"] == [ALPHA, BETA]


def test_mcp_reads_cover_every_namespace(world: World) -> None:
    async def main() -> None:
        async with session(world.runtime, world.owner) as s:
            found = await s.call("search_memories", query=FALCON_QUESTION)
            assert found["namespaces"] == [ALPHA, BETA] and found["results"][0]["id"] == world.falcon
            assert found["results"][0]["namespace"] == BETA
            memory = await s.call("get_memory", memory_id=world.falcon)
            assert memory["memory"]["namespace"] == BETA
            recalled = await s.call("recall_context", query=FALCON_QUESTION)
            assert recalled["namespaces"] == [ALPHA, BETA] and recalled["items"]
            facts = await s.call("search_facts", query=FALCON_QUESTION)
            assert facts["facts"][0]["namespace"] == BETA
        async with session(world.runtime, world.owner, toolsets=[Toolset.neo4j_memory]) as s:
            known = await s.call("search_memories", query="Maya Okafor")
            assert known["namespaces"] == [ALPHA, BETA]
            assert any(e["name"] == "Maya Okafor" for e in known["entities"])
            named = await s.call("find_memories_by_name", names=["Harbour Guild"])
            assert [e["name"] for e in named["entities"]] == ["Harbour Guild"]
            graph = await s.call("read_graph")
            assert graph["namespaces"] == [ALPHA, BETA] and len(graph["entities"]) >= 2
        async with session(world.runtime, world.reader) as s:
            found = await s.call("search_memories", query=FALCON_QUESTION)
            assert found["namespaces"] == [ALPHA] and world.falcon not in {r["id"] for r in found["results"]}
            assert "no memory" in (await s.error("get_memory", memory_id=world.falcon)).lower()

    anyio.run(main)


def test_writes_without_a_namespace_keep_the_credential_rule(world: World) -> None:
    """A new memory goes to the credential's only namespace, else the default one; several and no default:
    name one."""
    owner = world.client.post("/v1/remember", json={"content": "Kept in the default namespace."},
                              headers=bearer(world.owner))
    assert owner.status_code == 201
    assert get(world, world.owner, f"/v1/memories/{owner.json()['id']}")["namespace"] == "default"
    pair = world.client.post("/v1/remember", json={"content": "Where?"}, headers=bearer(world.pair_token))
    assert pair.status_code == 400 and pair.json()["error"]["code"] == "invalid_input"


def test_more_than_a_hundred_readable_namespaces_ask_for_one(world: World) -> None:
    """The bound is the service's (``within_bound``, applied by ``every_namespace``); the identity module reads
    through it. What the store lists is given as a list here, so the rule is tried without writing 101
    namespaces."""
    many = [f"n{i:03d}" for i in range(MAX_NAMESPACES + 1)]
    assert within_bound(many[:MAX_NAMESPACES]) == many[:MAX_NAMESPACES]
    with pytest.raises(InvalidInput) as refused:
        within_bound(many)
    assert refused.value.details["field"] == "namespace" and "name the one" in refused.value.message
    identity = Identity(world.runtime.identity.credentials, world.runtime.identity.limits, "default",
                        lambda: within_bound(many))
    everything = world.runtime.identity.authenticate(world.owner)
    with pytest.raises(InvalidInput):
        identity.reading(everything, None)
    context, names = identity.reading(everything, "n042")
    assert names == ["n042"] and context.can_read("n042") and not context.can_read("n041")
    answer = world.client.get("/v1/memories", headers=bearer(world.owner))
    assert answer.status_code == 200 and answer.json()["namespaces"] == world.runtime.service.every_namespace()


def test_an_empty_store_reads_the_default_namespace(runtime: Runtime, tmp_path: Path) -> None:
    with isolated_store(runtime, tmp_path) as store:
        _, owner = _token(store, ["*"], [Scope.read, Scope.write])
        with TestClient(create_app(runtime=store)) as client:
            found = client.get("/v1/memories/search", params={"query": "anything"}, headers=bearer(owner))
            assert found.status_code == 200 and found.json() == {"results": [], "total": 0,
                                                                   "namespaces": ["default"]}


def test_a_job_in_a_new_namespace_is_found_by_id_before_it_stores_anything(world: World) -> None:
    """No memory is in `gamma` yet: the job's own registration of its namespace makes it readable."""
    job = world.client.post("/v1/jobs", json={"scope": "gamma", "memories": [{"content": "Queued, not applied."}]},
                            headers=bearer(world.owner))
    assert job.status_code == 202
    found = get(world, world.owner, f"/v1/jobs/{job.json()['job_id']}")
    assert found["namespace"] == "gamma" and found["status"] == "queued"
    assert "gamma" in get(world, world.owner, "/v1/memories")["namespaces"]
