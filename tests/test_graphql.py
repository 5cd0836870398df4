"""The GraphQL API through the app: queries and mutations (happy path and bad input), the relationship fields
batched by DataLoaders (counted in statements), errors with extensions.code, auth before GraphQL, the rate
limit per operation, the operation limits, and the committed schema.graphql."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gql_helpers import Headers, bearer, code, credential, data, gql
from graphmem.app import create_app
from graphmem.graphql.schema import schema
from graphmem.identity import OPERATOR, Identity, NewCredential, RateLimits, Scope
from graphmem.runtime import Runtime
from helpers import sent_statements

ROOT = Path(__file__).resolve().parent.parent

MEMORY_FIELDS = "id namespace version isLatest content recordedAt parentMemoryId"


def token(runtime: Runtime, namespaces: list[str], scopes: tuple[Scope, ...] = (Scope.read, Scope.write)) -> Headers:
    return bearer(credential(runtime, namespaces, scopes))


REMEMBER = f"""mutation($content: String!, $requestId: String, $path: String) {{
  remember(content: $content, requestId: $requestId, path: $path) {{ ... on Memory {{ {MEMORY_FIELDS} path }} }} }}"""


def test_remember_read_search_recall_forget_restore(client: TestClient, auth: Headers, ns: str) -> None:
    falcon = {"content": "Priya Raman leads Project Falcon in Lisbon.", "requestId": "gq-request-1",
              "path": "projects/falcon"}
    made = data(client, auth, REMEMBER, **falcon)["remember"]
    assert made["version"] == 1 and made["namespace"] == ns and made["path"] == "projects/falcon"
    assert made["recordedAt"].endswith("+00:00")  # ISO 8601, UTC
    again = data(client, auth, REMEMBER, **falcon)["remember"]
    assert again["id"] == made["id"]  # a retry returns the first result
    memory = data(client, auth, """query($id: ID!) { memory(id: $id) {
        content facts { text start end memoryId memory { id } } } }""", id=made["id"])["memory"]
    assert memory["content"].startswith("Priya") and memory["facts"][0]["memory"]["id"] == made["id"]
    fact = memory["facts"][0]
    assert memory["content"][fact["start"]:fact["end"]] == fact["text"]

    hits = data(client, auth, """{ search(query: "Who leads Falcon?", explain: true) {
        edges { cursor score similarity signals { signal rank } evidence { text } node {
          ... on Memory { id title } } } } }""")["search"]["edges"]
    assert hits[0]["node"]["id"] == made["id"] and hits[0]["cursor"] == "1" and hits[0]["signals"]
    assert hits[0]["evidence"][0]["text"].startswith("Priya")
    facts = data(client, auth, """{ search(query: "Falcon", target: FACTS) {
        edges { node { ... on Fact { text memoryId entities { name } } } } } }""")["search"]["edges"]
    assert facts[0]["node"]["memoryId"] == made["id"]
    assert "Priya Raman" in {e["name"] for e in facts[0]["node"]["entities"]}

    recalled = data(client, auth, """{ recall(query: "Who leads Project Falcon?", maxTokens: 200) {
        answerStatus contextText tokensUsed items { text } } }""")["recall"]
    assert recalled["tokensUsed"] <= 200 and "Priya" in recalled["contextText"] and recalled["items"]

    forgotten = data(client, auth, """mutation($id: ID!) { forgetMemory(id: $id) { mode memories facts } }""",
                     id=made["id"])["forgetMemory"]
    assert forgotten == {"mode": "soft", "memories": 1, "facts": 1}
    assert data(client, auth, '{ search(query: "Falcon") { edges { score } } }')["search"]["edges"] == []
    restored = data(client, auth, """mutation($id: ID!) { restoreMemory(id: $id) { id isForgotten } }""",
                    id=made["id"])["restoreMemory"]
    assert restored == {"id": made["id"], "isForgotten": False}


def test_me_names_the_credential(client: TestClient, auth: Headers, ns: str) -> None:
    me = data(client, auth, "{ me { name scopes namespaces allNamespaces admin } }")["me"]
    assert me["name"].startswith("t-") and me["scopes"] == ["read", "write"] and me["namespaces"] == [ns]
    assert me["allNamespaces"] is False and me["admin"] is False


def test_previous_version_through_the_loader(client: TestClient, auth: Headers, runtime: Runtime, ns: str) -> None:
    first = data(client, auth, REMEMBER, content="Jonas works in Berlin.")["remember"]
    ctx, _ = runtime.identity.context(runtime.identity.authenticate(auth["Authorization"][7:]), ns)
    from graphmem.model import UpdateInput

    second = runtime.service.update_memory(ctx, first["id"], UpdateInput(content="Jonas works in Osaka.")).document
    got = data(client, auth, """query($id: ID!) { memory(id: $id) { version parentMemoryId
        previousVersion { id version content previousVersion { id } } } }""", id=second.id)["memory"]
    assert got["version"] == 2 and got["parentMemoryId"] == first["id"]
    assert got["previousVersion"] == {"id": first["id"], "version": 1, "content": "Jonas works in Berlin.",
                                      "previousVersion": None}


def test_nested_fields_are_batched_not_one_statement_per_item(client: TestClient, auth: Headers,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The statements a search with each hit's facts and each fact's memory sends do not grow with the
    number of hits: one batched read per relationship level."""
    for number in range(12):
        data(client, auth, REMEMBER, content=f"Batch note {number}: the kiln in studio {number} runs hot.")
    sent = sent_statements(monkeypatch)
    query = """query($first: Int!) { search(query: "kiln studio", first: $first) { edges { node {
        ... on Memory { id facts { id memory { id previousVersion { id } } } } } } } }"""

    def statements(first: int) -> tuple[int, int, int]:
        sent.clear()
        edges = data(client, auth, query, first=first)["search"]["edges"]
        return len(edges), sent.count("documents_facts"), sent.count("documents_get")

    small, large = statements(2), statements(12)
    assert small[0] == 2 and large[0] == 12
    # facts once; memories once (a fact's memory is a hit already loaded: the loader's cache answers it)
    assert small[1:] == large[1:] == (1, 1)


def test_errors_carry_codes_and_no_stack_trace(client: TestClient, auth: Headers, runtime: Runtime) -> None:
    missing = gql(client, auth, '{ memory(id: "no-such-id") { id } }')
    assert code(missing) == "NOT_FOUND" and "no-such-id" in missing["errors"][0]["message"]
    bad_id = gql(client, auth, '{ memory(id: "bad id!") { id } }')
    assert code(bad_id) == "BAD_INPUT"
    too_many = gql(client, auth, '{ search(query: "x", first: 101) { edges { score } } }')
    assert code(too_many) == "BAD_INPUT" and too_many["errors"][0]["message"].startswith("first:")
    empty = gql(client, auth, 'mutation { remember(content: "") { ... on Memory { id } } }')
    assert code(empty) == "BAD_INPUT"
    unknown = gql(client, auth, "{ nothingHere }")
    assert code(unknown) == "BAD_INPUT"
    other = gql(client, auth, '{ search(query: "x", namespace: "someone-else") { edges { score } } }')
    assert code(other) == "NOT_FOUND"  # a namespace the caller cannot read is invisible, as in /v1
    reader = token(runtime, ["gq-read-" + uuid.uuid4().hex[:6]], scopes=(Scope.read,))
    refused = gql(client, reader, 'mutation { remember(content: "Nope.") { ... on Memory { id } } }')
    assert code(refused) == "FORBIDDEN"
    for body in (missing, bad_id, too_many, empty, unknown, other, refused):
        assert "Traceback" not in str(body) and "File \"" not in str(body)


def test_a_memory_of_another_namespace_is_not_found(client: TestClient, auth: Headers, runtime: Runtime) -> None:
    other_ns = f"gq-other-{uuid.uuid4().hex[:6]}"
    theirs = data(client, token(runtime, [other_ns]), REMEMBER, content="Secret plan for Atlas.")["remember"]
    found = gql(client, auth, "query($id: ID!) { memory(id: $id) { content } }", id=theirs["id"])
    assert code(found) == "NOT_FOUND"
    hits = data(client, auth, '{ search(query: "Secret plan Atlas") { edges { score } } }')["search"]["edges"]
    assert hits == []


def test_a_missing_or_bad_token_is_401_before_graphql(client: TestClient) -> None:
    for headers in ({}, {"Authorization": "Bearer gm_not-a-token"}):
        response = client.post("/graphql", json={"query": "{ me { name } }"}, headers=headers)
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "unauthenticated"
    assert client.get("/graphql", params={"query": "{ me { name } }"}).status_code == 401


def test_the_explorer_page_is_public_and_works_offline(client: TestClient) -> None:
    page = client.get("/graphql", headers={"Accept": "text/html"})
    assert page.status_code == 200 and "GraphiQL" in page.text and "Authorization" in page.text
    assert "http://" not in page.text and "https://" not in page.text  # no outside host: every asset is ours
    assets = re.findall(r'(?:src|href)="(/static/vendor/[^"]+)"', page.text)
    assert len(assets) == 4
    for asset in assets:
        assert client.get(asset).status_code == 200, asset


def test_queries_over_get(client: TestClient, auth: Headers) -> None:
    response = client.get("/graphql", params={"query": "{ me { namespaces } }"}, headers=auth)
    assert response.status_code == 200 and response.json()["data"]["me"]["namespaces"]


def test_operation_limits(client: TestClient, auth: Headers, runtime: Runtime) -> None:
    settings = runtime.settings
    deep = "{ memory(id: \"x\") { " + "previousVersion { " * settings.graphql_max_depth + "id" + " }" * (
        settings.graphql_max_depth + 1) + " }"
    body = gql(client, auth, deep)
    assert code(body) == "BAD_INPUT" and "depth" in body["errors"][0]["message"]
    aliases = "{ " + " ".join(f"a{i}: me {{ name }}" for i in range(settings.graphql_max_aliases + 1)) + " }"
    body = gql(client, auth, aliases)
    assert code(body) == "BAD_INPUT" and "aliases" in body["errors"][0]["message"]
    tokens = "{ " + " ".join("me { name }" for _ in range(settings.graphql_max_tokens // 3)) + " }"
    body = gql(client, auth, tokens)
    assert code(body) == "BAD_INPUT" and "token" in body["errors"][0]["message"].lower()


def test_rate_limit_is_charged_once_per_operation_and_answers_429(runtime: Runtime, ns: str) -> None:
    limited = Identity(runtime.identity.credentials, RateLimits(reads=3, writes=1, window_s=60,
                                                                storage_uri="memory://"), "default",
                       runtime.service.every_namespace)
    app = create_app(runtime=Runtime(runtime.settings, runtime.store, runtime.service, limited))
    new = NewCredential(name="busy-gql", scopes=[Scope.read, Scope.write], namespaces=[ns])
    _, value = limited.create(new, by=OPERATOR)
    headers = {"Authorization": f"Bearer {value}"}
    with TestClient(app) as client:
        write = 'mutation($c: String!) { remember(content: $c) { ... on Memory { id } } }'
        assert "errors" not in gql(client, headers, write, c="One write.")
        refused = gql(client, headers, write, status=429, c="Two writes.")
        assert code(refused) == "RATE_LIMITED" and refused["errors"][0]["extensions"]["retryAfter"] >= 1
        # one operation with three fields (and nested loaders) is one read
        for _ in range(3):
            assert "errors" not in gql(client, headers, "{ a: me { name } b: me { name } c: me { name } }")
        assert code(gql(client, headers, "{ me { name } }", status=429)) == "RATE_LIMITED"


def test_the_committed_schema_is_the_code_schema() -> None:
    committed = (ROOT / "schema.graphql").read_text()
    assert committed == schema.as_str() + "\n", (
        "schema.graphql differs from the code's schema: run `.venv/bin/graphmem graphql-schema > schema.graphql`")


def test_every_typed_error_has_its_code() -> None:
    """The mapping itself, for the errors a live test cannot provoke cheaply (an outage, a bug)."""
    from graphql import GraphQLError

    from graphmem.errors import Conflict, Unavailable
    from graphmem.graphql.errors import coded

    outage = coded(GraphQLError("x", original_error=Unavailable("the graph database cannot be reached")))
    assert outage.extensions == {"code": "UNAVAILABLE"} and "cannot be reached" in outage.message
    conflict = coded(GraphQLError("x", original_error=Conflict("stale", next_step="read it again")))
    assert conflict.extensions == {"code": "CONFLICT", "nextStep": "read it again"}
    bug = coded(GraphQLError("x", original_error=KeyError("secret internals")))
    assert bug.extensions is not None and bug.extensions["code"] == "INTERNAL" and bug.extensions["ref"]
    assert "secret" not in bug.message
