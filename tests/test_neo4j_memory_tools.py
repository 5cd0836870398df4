"""Neo4j's memory-MCP contract on graphmem, through every front end: the nine tools with the reference's names,
argument and answer shapes, over Streamable HTTP at ``/mcp/neo4j-memory`` (its own protected-resource metadata)
and over stdio, driven by the official client in an exchange shaped like the reference README's, then read back
over /v1 and GraphQL; the /v1 routes and GraphQL mutations with their bounds (400 naming the item), read-only
tokens refused on every write, namespaces kept apart; and the two tool sets that cannot share a server."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters
from pydantic import ValidationError

from gql_helpers import bearer, data, gql
from gql_helpers import credential as gql_credential
from graphmem.app import create_app
from graphmem.config import Settings, Toolset
from graphmem.identity import Scope
from graphmem.runtime import Runtime
from helpers import child_environment, served
from mcp_helpers import Session, credential, over_http, session

NINE = {"read_graph", "create_entities", "create_relations", "add_observations", "delete_entities",
        "delete_observations", "delete_relations", "search_memories", "find_memories_by_name"}
GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
ENTITIES = [
    {"name": "Alice Johnson", "type": "person", "observations": ["Software engineer", "Enjoys hiking"]},
    {"name": "Bob Smith", "type": "person", "observations": ["Product manager"]},
    {"name": "Microsoft", "type": "company", "observations": ["Headquartered in Redmond"]},
    {"name": "Seattle", "type": "city", "observations": ["Rainy in winter"]},
    {"name": "Redmond", "type": "city", "observations": []},
]
RELATIONS = [
    {"source": "Alice Johnson", "target": "Microsoft", "relationType": "WORKS_AT"},
    {"source": "Bob Smith", "target": "Microsoft", "relationType": "WORKS_AT"},
    {"source": "Alice Johnson", "target": "Seattle", "relationType": "LIVES_IN"},
    {"source": "Microsoft", "target": "Redmond", "relationType": "LOCATED_IN"},
]


@pytest.fixture(scope="module")
def server(runtime: Runtime) -> Iterator[str]:
    with served(create_app(runtime=runtime)) as url:
        yield url


async def exchange(s: Session) -> None:
    """The reference README's kind of exchange, with the reference's answer shapes checked at each step."""
    assert set(s.tools) == NINE
    created = await s.call("create_entities", entities=ENTITIES)
    assert [e["name"] for e in created["result"]] == [e["name"] for e in ENTITIES]
    related = await s.call("create_relations", relations=[
        *RELATIONS, {"source": "Alice Johnson", "target": "Atlantis", "relationType": "VISITED"}])
    assert len(related["result"]) == 4 and related["skipped"] == [
        {"source": "Alice Johnson", "target": "Atlantis", "relationType": "VISITED"}]
    added = await s.call("add_observations", observations=[
        {"entityName": "Alice Johnson", "observations": ["Promoted to senior engineer", "Enjoys hiking"]}])
    assert added == {"result": [{"entityName": "Alice Johnson", "addedObservations": ["Promoted to senior engineer"]}]}

    found = await s.call("search_memories", query="Who works at Microsoft?")
    names = {e["name"] for e in found["entities"]}
    assert {"Microsoft", "Alice Johnson"} <= names
    assert {"source": "Alice Johnson", "target": "Microsoft", "relationType": "WORKS_AT", "asserted": True} \
        in found["relations"]
    by_name = await s.call("find_memories_by_name", names=["Alice Johnson"])
    assert by_name["entities"] == [{"name": "Alice Johnson", "type": "person", "observations": [
        "Software engineer", "Enjoys hiking", "Promoted to senior engineer"]}]
    assert {(r["relationType"], r["target"]) for r in by_name["relations"]} == {("WORKS_AT", "Microsoft"),
                                                                               ("LIVES_IN", "Seattle")}
    page = await s.call("read_graph", limit=3)
    assert len(page["entities"]) == 3 and page["truncated"] is True and page["next_cursor"]
    rest = await s.call("read_graph", limit=3, cursor=page["next_cursor"])
    assert {e["name"] for e in page["entities"] + rest["entities"]} == {e["name"] for e in ENTITIES}
    assert rest["truncated"] is False

    deleted = await s.call("delete_relations", relations=[RELATIONS[2]])
    assert deleted == {"result": "Relations deleted successfully"}
    assert await s.call("delete_observations", deletions=[
        {"entityName": "Seattle", "observations": ["Rainy in winter"]}]) == {
        "result": "Observations deleted successfully"}
    assert await s.call("delete_entities", entityNames=["Bob Smith"]) == {"result": "Entities deleted successfully"}
    after = await s.call("find_memories_by_name", names=["Alice Johnson", "Bob Smith", "Seattle"])
    assert {e["name"]: e["observations"] for e in after["entities"]} == {
        "Alice Johnson": ["Software engineer", "Enjoys hiking", "Promoted to senior engineer"], "Seattle": []}
    assert {r["relationType"] for r in after["relations"]} == {"WORKS_AT"}


def test_the_nine_tools_over_streamable_http_read_back_over_v1_and_graphql(server: str, runtime: Runtime,
                                                                           ns: str) -> None:
    _, token = credential(runtime, [ns])
    _, reader = credential(runtime, [ns], (Scope.read,))

    async def main() -> None:
        async with over_http(f"{server}/mcp/neo4j-memory", token) as client:
            tools = (await client.list_tools()).tools
            s = Session(client, {tool.name: tool for tool in tools})
            schema = s.tools["create_entities"].input_schema
            assert "entities" in schema["required"] and "namespace" in schema["properties"]
            await exchange(s)
            refused = await s.error("create_relations", relations=[
                {"source": "A", "target": "B", "relationType": "bad type!"}])
            assert "relations.0.relationType" in refused
        async with over_http(f"{server}/mcp/neo4j-memory", reader) as client:
            s = Session(client, {tool.name: tool for tool in (await client.list_tools()).tools})
            writes = {"create_entities": {"entities": ENTITIES[:1]}, "create_relations": {"relations": RELATIONS[:1]},
                      "add_observations": {"observations": [{"entityName": "Seattle", "observations": ["x"]}]},
                      "delete_entities": {"entityNames": ["Seattle"]},
                      "delete_observations": {"deletions": [{"entityName": "Seattle", "observations": ["x"]}]},
                      "delete_relations": {"relations": RELATIONS[:1]}}
            for name, arguments in writes.items():
                assert "may not write" in await s.error(name, **arguments), name
            assert (await s.call("read_graph"))["entities"]  # reading is allowed
            assert "no namespace" in await s.error("read_graph", namespace=ns + "-other")
        async with over_http(f"{server}/mcp", token) as client:  # the graphmem tools stay at /mcp
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "create_entities" not in names and "add_memory" in names

    anyio.run(main)

    headers = {"Authorization": f"Bearer {token}"}
    triples = httpx.get(f"{server}/v1/triples", params={"subject": "Alice Johnson"}, headers=headers).json()
    assert {(t["predicate"], t["object"]["name"], t["asserted"]) for t in triples["items"]} == {
        ("WORKS_AT", "Microsoft", True)}
    hits = httpx.get(f"{server}/v1/memories/search", params={"query": "Where is Microsoft located?"},
                     headers=headers).json()
    assert any(hit["source"].startswith("agent:") and "Microsoft located in Redmond." in str(hit["facts"])
               for hit in hits["results"]), hits
    answer = httpx.post(f"{server}/graphql", headers=headers, json={"query": """{ triples(subject: "Microsoft") {
        edges { node { predicate asserted object { name } } } } }"""}).json()
    assert {(e["node"]["predicate"], e["node"]["object"]["name"], e["node"]["asserted"])
            for e in answer["data"]["triples"]["edges"]} == {("LOCATED_IN", "Redmond", True)}

    # its own protected-resource metadata, named in the 401's WWW-Authenticate
    unauthorised = httpx.post(f"{server}/mcp/neo4j-memory", json={})
    assert unauthorised.status_code == 401
    assert "oauth-protected-resource/mcp/neo4j-memory" in unauthorised.headers["www-authenticate"]
    metadata = httpx.get(f"{server}/.well-known/oauth-protected-resource/mcp/neo4j-memory").json()
    assert metadata["resource"].rstrip("/").endswith("/mcp/neo4j-memory")


def test_the_tool_set_over_stdio(runtime: Runtime, ns: str, tmp_path: Path) -> None:
    _, token = credential(runtime, [ns])
    env = child_environment(runtime, token=token, embedder="hashing", mcp_toolsets="neo4j-memory")

    async def main() -> None:
        parameters = StdioServerParameters(command=GRAPHMEM, args=["mcp", "--log-level", "warning"], env=env,
                                           cwd=str(tmp_path))
        async with Client(parameters, read_timeout_seconds=120) as client:
            s = Session(client, {tool.name: tool for tool in (await client.list_tools()).tools})
            await exchange(s)

    anyio.run(main)


def test_memory_and_neo4j_memory_cannot_share_a_server(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="memory and neo4j-memory"):
        Settings(mcp_toolsets="memory,neo4j-memory")
    env = {**os.environ, "GRAPHMEM_DATA_DIR": str(tmp_path / "data"), "GRAPHMEM_MCP_TOOLSETS": "neo4j-memory,memory"}
    started = subprocess.run([GRAPHMEM, "mcp"], env=env, capture_output=True, text=True, timeout=60,
                             stdin=subprocess.DEVNULL)
    assert started.returncode != 0
    assert "memory and neo4j-memory" in started.stderr
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").iterdir())


def test_in_memory_tools_keep_namespaces_apart(runtime: Runtime, ns: str) -> None:
    _, theirs = credential(runtime, [ns + "-b"])
    _, ours = credential(runtime, [ns])

    async def main() -> None:
        async with session(runtime, ours, [Toolset.neo4j_memory]) as s:
            await s.call("create_entities", entities=ENTITIES[:2])
        async with session(runtime, theirs, [Toolset.neo4j_memory]) as s:
            assert (await s.call("read_graph"))["entities"] == []
            assert (await s.call("find_memories_by_name", names=["Alice Johnson"]))["entities"] == []
            assert "no namespace" in await s.error("find_memories_by_name", names=["Alice Johnson"], namespace=ns)
            assert "may not write" in await s.error("delete_entities", entityNames=["Alice Johnson"], namespace=ns)

    anyio.run(main)


def test_v1_routes_and_graphql_mutations(client: TestClient, runtime: Runtime, ns: str) -> None:
    headers = bearer(gql_credential(runtime, [ns]))
    reading = bearer(gql_credential(runtime, [ns], (Scope.read,)))

    def v1(method: str, path: str, body: dict[str, Any], status: int = 200, auth: dict[str, str] = headers) -> Any:
        response = client.request(method, f"/v1/{path}", json=body, headers=auth)
        assert response.status_code == status, response.text
        return response.json()

    assert v1("POST", "entities", {"entities": ENTITIES, "request_id": "entities-0001"})["result"][0]["name"] == \
        "Alice Johnson"
    assert v1("POST", "entities", {"entities": ENTITIES, "request_id": "entities-0001"})["result"]  # replayed
    reused = v1("POST", "entities", {"entities": ENTITIES[:1], "request_id": "entities-0001"}, 409)
    assert reused["error"]["code"] == "conflict"
    made = v1("POST", "relations", {"relations": [*RELATIONS, {"source": "X", "target": "Y",
                                                                 "relationType": "Z"}]})
    assert len(made["result"]) == 4 and len(made["skipped"]) == 1
    assert v1("POST", "observations", {"observations": [{"entityName": "Seattle", "observations": ["Coffee"]}]}) == {
        "result": [{"entityName": "Seattle", "addedObservations": ["Coffee"]}]}
    assert v1("DELETE", "observations", {"deletions": [{"entityName": "Seattle", "observations": ["Coffee"]}]})[
        "result"] == "Observations deleted successfully"
    assert v1("DELETE", "relations", {"relations": RELATIONS[3:]})["result"] == "Relations deleted successfully"
    assert v1("DELETE", "entities", {"entityNames": ["Bob Smith"]})["result"] == "Entities deleted successfully"

    # bounds: 400 naming the item
    bad = v1("POST", "entities", {"entities": [{"name": "A", "type": "person"}, {"name": "B", "type": "no spaces"}]},
             400)
    assert bad["error"]["code"] == "invalid_input" and "entities.1.type" in bad["error"]["message"]
    too_many = v1("POST", "entities", {"entities": [{"name": f"E{i}", "type": "t"} for i in range(101)]}, 400)
    assert "entities" in too_many["error"]["message"]
    long_text = v1("POST", "observations", {"observations": [{"entityName": "Seattle",
                                                               "observations": ["x" * 4001]}]}, 400)
    assert "observations.0.observations.0" in long_text["error"]["message"]
    long_name = v1("DELETE", "entities", {"entityNames": ["n" * 201]}, 400)
    assert "entityNames.0" in long_name["error"]["message"]
    # read-only tokens refused on every new write; another namespace is not reachable
    for method, path, body in [("POST", "entities", {"entities": ENTITIES[:1]}),
                               ("DELETE", "entities", {"entityNames": ["Seattle"]}),
                               ("POST", "relations", {"relations": RELATIONS[:1]}),
                               ("DELETE", "relations", {"relations": RELATIONS[:1]}),
                               ("POST", "observations", {"observations": [{"entityName": "A", "observations": ["b"]}]}),
                               ("DELETE", "observations", {"deletions": [{"entityName": "A", "observations": ["b"]}]})]:
        assert v1(method, path, body, 403, reading)["error"]["code"] == "forbidden", (method, path)
    assert v1("POST", f"entities?scope={ns}-else", {"entities": ENTITIES[:1]}, 403)["error"]["code"] == "forbidden"

    # the GraphQL mutations call the same service
    created = data(client, headers, """mutation($e: [EntityInput!]!) { createEntities(entities: $e) { name type } }""",
                   e=[{"name": "Dana Reyes", "type": "person", "observations": ["Designer"]}])
    assert created["createEntities"] == [{"name": "Dana Reyes", "type": "person"}]
    related = data(client, headers, """mutation($r: [RelationInput!]!) { createRelations(relations: $r) {
        created { source relationType target } skipped { target } } }""",
                   r=[{"source": "Dana Reyes", "target": "Microsoft", "relationType": "WORKS_AT"},
                      {"source": "Dana Reyes", "target": "Nowhere", "relationType": "LIVES_IN"}])
    assert related["createRelations"] == {"created": [{"source": "Dana Reyes", "relationType": "WORKS_AT",
                                                       "target": "Microsoft"}], "skipped": [{"target": "Nowhere"}]}
    added = data(client, headers, """mutation { addObservations(observations: [{entityName: "Dana Reyes",
        observations: ["Likes maps"]}]) { entityName addedObservations } }""")
    assert added["addObservations"] == [{"entityName": "Dana Reyes", "addedObservations": ["Likes maps"]}]
    for mutation in ['deleteObservations(deletions: [{entityName: "Dana Reyes", observations: ["Likes maps"]}])',
                     'deleteRelations(relations: [{source: "Dana Reyes", target: "Microsoft", '
                     'relationType: "WORKS_AT"}])',
                     'deleteEntities(entityNames: ["Dana Reyes"])']:
        assert "deleted successfully" in next(iter(data(client, headers, f"mutation {{ {mutation} }}").values()))
    refused = gql(client, headers, 'mutation { createEntities(entities: [{name: "X", type: "1bad"}]) { name } }')
    assert refused["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    forbidden = gql(client, reading, 'mutation { deleteEntities(entityNames: ["Seattle"]) }')
    assert forbidden["errors"][0]["extensions"]["code"] == "FORBIDDEN"
