"""Invalid input in the caller's words: a bound broken through GraphQL names the GraphQL argument (``first``,
not the service's ``limit``), through /v1 the /v1 parameter (``threshold``, not ``min_score``), through MCP the
tool's argument (``relation``, not ``predicate``), in the message and in the field the error names. Codes and
envelopes are the usual ones."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient

from gql_helpers import Headers, code, gql
from graphmem.runtime import Runtime
from mcp_helpers import credential as mcp_credential
from mcp_helpers import session


def refused(client: TestClient, auth: Headers, query: str) -> tuple[str, dict[str, Any]]:
    """The BAD_INPUT error's message and extensions."""
    body = gql(client, auth, query)
    assert code(body) == "BAD_INPUT", body
    error: dict[str, Any] = body["errors"][0]
    return error["message"], error["extensions"]


@pytest.mark.parametrize("query", [
    '{ search(query: "x", first: 300) { edges { score } } }',
    '{ search(query: "x", target: ENTITIES, first: 300) { edges { score } } }',
    '{ triples(term: "x", first: 300) { edges { cursor } } }',
    "{ memories(first: 300) { totalCount } }",
    "{ facts(first: 300) { totalCount } }",
    "{ entities(first: 300) { totalCount } }",
    "{ handoffs(first: 300) { nextCursor } }",
], ids=["search", "entity search", "triples", "memories", "facts", "entities", "handoffs"])
def test_graphql_names_first_not_limit(client: TestClient, auth: Headers, query: str) -> None:
    message, _ = refused(client, auth, query)
    assert message.startswith("first: ") and "limit" not in message, message


def test_graphql_names_after_not_cursor(client: TestClient, auth: Headers) -> None:
    message, extensions = refused(client, auth, '{ memories(after: "forged") { totalCount } }')
    assert message.startswith("after is not valid") and extensions == {"code": "BAD_INPUT", "field": "after"}


@pytest.mark.parametrize(("query", "named", "service"), [
    ('{ recall(query: "x", maxItems: 51) { tokensUsed } }', "maxItems", "max_items"),
    ('{ search(query: "x", filters: {memoryId: "not an id!"}) { edges { score } } }', "filters.memoryId",
     "document_id"),
    ('{ search(query: "x", asOf: "1969-12-31T00:00:00Z") { edges { score } } }', "asOf", "view"),
    ('{ graph(seed: {query: "x"}, caps: {maxNodes: 5001}) { truncated } }', "caps.maxNodes", "max_nodes"),
    ('{ graph(seed: {memoryId: "not an id!"}) { truncated } }', "seed.memoryId", "seed.document"),
    ('{ findPath(from: "' + "a" * 201 + '", to: "b") { cut } }', "from", "source"),
    ('{ memories(where: {title: {contains: ""}}) { totalCount } }', "where.title.contains", "title_contains"),
    ('{ facts(where: {recordedAt: {lt: "1969-12-31T00:00:00Z"}}) { totalCount } }', "where.recordedAt.lt",
     "recorded_before"),
    ('mutation { remember(content: "x", requestId: "short") { ... on Memory { id } } }', "requestId",
     "request_id"),
], ids=["recall", "search filters", "search view", "graph caps", "graph seed", "findPath", "memories where",
        "facts where", "remember"])
def test_graphql_names_the_argument_as_the_schema_spells_it(client: TestClient, auth: Headers, query: str,
                                                             named: str, service: str) -> None:
    message, _ = refused(client, auth, query)
    assert message.startswith(f"{named}: ") and service not in message, message


@pytest.mark.parametrize(("params", "named", "service"), [
    ({"query": "x", "threshold": 2}, "threshold", "min_score"),
    ({"query": "x", "as_of": -1}, "as_of", "view"),
], ids=["threshold", "as_of"])
def test_v1_search_names_its_parameter(client: TestClient, auth: Headers, params: dict[str, Any], named: str,
                                       service: str) -> None:
    response = client.get("/v1/memories/search", params=params, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and error["details"] == {"fields": [named]}
    assert error["message"].startswith(f"{named}: ") and service not in error["message"]


def test_v1_graph_names_its_parameters(client: TestClient, auth: Headers) -> None:
    response = client.get("/v1/graph", params={"seed": "document", "id": "not an id!", "depth": 9, "max_nodes": 0},
                          headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["details"] == {"fields": ["id", "depth", "max_nodes"]}
    assert error["message"].startswith("id: ") and "; depth: must be from 1 to 4; max_nodes: " in error["message"]
    assert "seed." not in error["message"] and "caps." not in error["message"]


def test_v1_names_scope_and_the_path_parameter(client: TestClient, auth: Headers) -> None:
    scope = client.get("/v1/memories", params={"scope": "not a namespace!"}, headers=auth).json()["error"]
    assert scope["message"].startswith("scope must be") and scope["details"] == {"field": "scope"}
    memory = client.get("/v1/memories/not an id!", headers=auth).json()["error"]
    assert memory["message"].startswith("memory_id must be") and memory["details"] == {"field": "memory_id"}


def test_mcp_names_the_tool_argument(runtime: Runtime, ns: str) -> None:
    """``graph.edge.search`` takes a relation of up to 200 characters; the service's predicate holds 100."""
    fixed, _ = mcp_credential(runtime, [ns])

    async def main() -> None:
        async with session(runtime, fixed) as s:
            error = await s.error("graph.edge.search", namespace=ns, relation="works at " * 15)
            assert "invalid input: relation: String should have at most 100 characters" in error
            assert "predicate" not in error

    anyio.run(main)
