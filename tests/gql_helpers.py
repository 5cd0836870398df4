"""What the GraphQL tests share: credentials for a test's namespaces, and operations sent through the app."""

from __future__ import annotations

import uuid
from typing import Any

from fastapi.testclient import TestClient

from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.runtime import Runtime

Headers = dict[str, str]


def credential(runtime: Runtime, namespaces: list[str], scopes: tuple[Scope, ...] = (Scope.read, Scope.write)) -> str:
    """A new credential's token."""
    _, value = runtime.identity.create(NewCredential(name=f"g-{uuid.uuid4().hex[:6]}", scopes=list(scopes),
                                                     namespaces=namespaces), by=OPERATOR)
    return value


def bearer(token: str) -> Headers:
    return {"Authorization": f"Bearer {token}"}


def gql(client: TestClient, headers: Headers, query: str, status: int = 200, **variables: Any) -> dict[str, Any]:
    """An operation's whole answer, after checking its HTTP status."""
    response = client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    return body


def data(client: TestClient, headers: Headers, query: str, **variables: Any) -> dict[str, Any]:
    """An operation's data, after checking it answered no error."""
    body = gql(client, headers, query, **variables)
    assert "errors" not in body, body["errors"]
    result: dict[str, Any] = body["data"]
    return result


def code(body: dict[str, Any]) -> str:
    """The first error's ``extensions.code``."""
    value: str = body["errors"][0]["extensions"]["code"]
    return value
