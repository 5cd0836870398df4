"""The /v1 HTTP API through the app: every route's happy path and bad input, credentials, errors, metrics,
body caps, CORS and the offline docs. (Real-server, attack-suite, rate-limit and outage tests are in
tests/test_http_server.py and tests/test_http_attacks.py.)"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.runtime import Runtime

Headers = dict[str, str]


def token(runtime: Runtime, namespaces: list[str], scopes: tuple[Scope, ...] = (Scope.read, Scope.write),
          admin: bool = False) -> Headers:
    _, value = runtime.identity.create(NewCredential(name=f"t-{uuid.uuid4().hex[:6]}", scopes=list(scopes),
                                                     namespaces=namespaces, admin=admin), by=OPERATOR)
    return {"Authorization": f"Bearer {value}"}


def remember(client: TestClient, auth: Headers, content: str, **fields: Any) -> dict[str, Any]:
    response = client.post("/v1/memories", json={"content": content, **fields}, headers=auth)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def test_remember_read_update_history_forget_restore(client: TestClient, auth: Headers) -> None:
    made = client.post("/v1/remember", json={"content": "Priya Raman leads Project Falcon.", "path": "p/falcon",
                                             "request_id": "req-http-1"}, headers=auth)
    assert made.status_code == 201 and made.json()["status"] == "remembered" and made.json()["version"] == 1
    again = client.post("/v1/remember", json={"content": "Priya Raman leads Project Falcon.", "path": "p/falcon",
                                              "request_id": "req-http-1"}, headers=auth)
    assert again.json()["id"] == made.json()["id"]  # a retry returns the first result
    memory_id = made.json()["id"]
    detail = client.get(f"/v1/memories/{memory_id}", headers=auth).json()
    assert detail["content"].startswith("Priya") and detail["isLatest"] is True and detail["isInference"] is False
    assert detail["facts"][0]["isLatest"] is True and detail["facts_total"] == 1
    assert {e["name"] for e in detail["entities"]} >= {"Priya Raman"}
    updated = client.patch(f"/v1/memories/{memory_id}", json={"content": "Priya Raman leads Project Heron.",
                                                               "expected_version": 1}, headers=auth)
    assert updated.status_code == 200 and updated.json()["version"] == 2
    assert updated.json()["parentMemoryId"] == memory_id and updated.json()["path"] == "p/falcon"
    stale = client.patch(f"/v1/memories/{memory_id}", json={"content": "x", "expected_version": 1}, headers=auth)
    assert stale.status_code == 409 and "next_step" in stale.json()["error"]["details"]
    history = client.get(f"/v1/memories/{updated.json()['id']}/history", headers=auth).json()
    assert [v["version"] for v in history["items"]] == [2, 1]
    forgotten = client.delete(f"/v1/memories/{memory_id}", params={"mode": "soft_delete", "reason": "test"},
                              headers=auth)
    assert forgotten.status_code == 200 and forgotten.json()["mode"] == "soft"
    assert client.get("/v1/memories", headers=auth).json()["total"] == 0
    restored = client.post(f"/v1/memories/{memory_id}/restore", headers=auth)
    assert restored.status_code == 200 and restored.json()["id"] == updated.json()["id"]
    hard = client.post(f"/v1/memories/{memory_id}/forget", json={"mode": "hard"}, headers=auth)
    assert hard.status_code == 200 and hard.json()["documents"] == 2
    assert client.get(f"/v1/memories/{memory_id}", headers=auth).status_code == 404


def test_list_search_recall_and_paging(client: TestClient, auth: Headers) -> None:
    for i in range(5):
        remember(client, auth, f"Note {i}: the lighthouse keeper logs the weather.", path="notes/weather")
    remember(client, auth, "Kafka carries the billing events.", path="notes/billing")
    page = client.get("/v1/memories", params={"limit": 2}, headers=auth).json()
    assert len(page["memories"]) == 2 and page["total"] == 6 and page["next_cursor"]
    rest = client.get("/v1/memories", params={"limit": 10, "cursor": page["next_cursor"]}, headers=auth).json()
    assert len(rest["memories"]) == 4 and rest["next_cursor"] is None
    assert client.get("/v1/memories", params={"path": "notes/billing"}, headers=auth).json()["total"] == 1
    for path in ("/v1/memories/search", "/v1/recall"):
        found = client.get(path, params={"query": "billing events", "limit": 3, "explain": "true"}, headers=auth)
        assert found.status_code == 200 and found.headers["cache-control"] == "no-store, private"
        body = found.json()
        assert body["total"] == len(body["results"]) <= 3 and "Kafka" in body["results"][0]["facts"][0]["text"]
        assert body["results"][0]["facts"][0]["explain"]["signals"]
    context = client.post("/v1/recall/context", json={"query": "What carries the billing events?",
                                                      "max_items": 2, "max_tokens": 200}, headers=auth).json()
    assert context["budget"]["max_items"] == 2 and context["budget"]["used_tokens"] <= 200
    assert context["answer_status"] in ("found", "no_confirmed_answer") and "Kafka" in context["context_text"]


@pytest.mark.parametrize(("seed", "missing"), [("query", "query"), ("document", "id"), ("entity", "id"),
                                                ("ids", "ids")])
def test_a_graph_seed_without_its_value_names_that_parameter(client: TestClient, auth: Headers, seed: str,
                                                             missing: str) -> None:
    answer = client.get("/v1/graph", params={"seed": seed}, headers=auth)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["details"]["fields"] == [missing], answer.json()


def test_graph_entities_triples_jobs_handoffs(client: TestClient, auth: Headers) -> None:
    remember(client, auth, "Marcus likes Kafka. Priya Raman leads Project Falcon.")
    entities = client.get("/v1/entities/search", params={"query": "Kafka"}, headers=auth).json()
    assert any(e["name"] == "Kafka" for e in entities["items"])
    triples = client.get("/v1/triples", params={"predicate": "like"}, headers=auth).json()
    assert [t["statement"] for t in triples["items"]] == ["Marcus like Kafka"]
    graph = client.get("/v1/graph", params={"seed": "query", "query": "Kafka", "depth": 2}, headers=auth)
    assert graph.status_code == 200 and {"totalDocuments", "truncated", "unavailableDocuments", "coverage"} <= set(
        graph.json())
    uncounted = client.get("/v1/graph", params={"seed": "query", "query": "Kafka", "max_nodes": 1,
                                                "count_reachable": "false"}, headers=auth).json()
    assert uncounted["truncated"] and uncounted["reachableDocuments"] is None and uncounted["coverage"] is None
    graphml = client.get("/v1/graph", params={"seed": "query", "query": "Kafka", "format": "graphml"}, headers=auth)
    assert graphml.headers["content-type"].startswith("application/graphml+xml") and "<graphml" in graphml.text
    script = client.get("/v1/graph", params={"seed": "query", "query": "Kafka", "format": "cypher"}, headers=auth)
    assert script.headers["content-type"].startswith("application/x-cypher-query") and "MERGE" in script.text
    job = client.post("/v1/jobs", json={"memories": [{"content": "A queued memory."}]}, headers=auth)
    assert job.status_code == 202
    status = client.get(f"/v1/jobs/{job.json()['job_id']}", headers=auth).json()
    assert status["status"] in ("queued", "running", "done")
    saved = client.post("/v1/handoffs", json={"project": "atlas/api", "goal": "Ship it", "expected_version": 0,
                                              "request_id": "req-hand-1", "next_steps": ["review"]}, headers=auth)
    assert saved.status_code == 200 and saved.json()["version"] == 1 and saved.json()["author"].startswith("t-")
    assert client.get("/v1/handoffs/atlas/api", headers=auth).json()["context"]["next_steps"] == ["review"]
    assert client.get("/v1/handoffs/atlas/api", params={"version": 1}, headers=auth).json()["version"] == 1
    assert [h["project"] for h in client.get("/v1/handoffs", headers=auth).json()["items"]] == ["atlas/api"]
    conflict = client.post("/v1/handoffs", json={"project": "atlas/api", "goal": "x", "expected_version": 0,
                                                 "request_id": "req-hand-2"}, headers=auth)
    assert conflict.status_code == 409
    assert conflict.json()["error"]["details"]["next_step"].endswith("expected_version 1")


@pytest.mark.parametrize(("method", "path", "payload", "status"), [
    ("post", "/v1/remember", {"json": {"content": ""}}, 422),
    ("post", "/v1/remember", {"json": {"content": "x" * 100_001}}, 422),
    ("post", "/v1/remember", {"json": {"content": "ok", "unknown": 1}}, 422),
    ("post", "/v1/remember", {"json": {"content": "ok", "path": "/bad/"}}, 400),  # a path that leaves the tree
    ("post", "/v1/remember", {"json": {"content": "ok", "scope": "_system"}}, 400),
    ("get", "/v1/memories", {"params": {"offset": 10_001}}, 400),
    ("get", "/v1/memories", {"params": {"limit": "many"}}, 422),
    ("get", "/v1/memories", {"params": {"cursor": "forged"}}, 400),
    ("get", "/v1/memories/search", {"params": {"query": "x", "limit": 101}}, 400),
    ("get", "/v1/memories/search", {}, 422),
    ("get", "/v1/memories/not a valid id!", {}, 400),
    ("get", "/v1/memories/00000000-0000-4000-8000-000000000000", {}, 404),
    ("patch", "/v1/memories/00000000-0000-4000-8000-000000000000", {"json": {"content": "x"}}, 404),
    ("delete", "/v1/memories/00000000-0000-4000-8000-000000000000", {"params": {"mode": "shred"}}, 422),
    ("post", "/v1/recall/context", {"json": {"query": "x", "max_tokens": 5}}, 422),
    ("get", "/v1/triples", {}, 400),
    ("get", "/v1/graph", {"params": {"seed": "query", "query": "x", "depth": 9}}, 400),
    ("get", "/v1/graph", {"params": {"seed": "nothing"}}, 422),
    ("post", "/v1/jobs", {"json": {"memories": []}}, 422),
    ("get", "/v1/jobs/00000000-0000-4000-8000-000000000000", {}, 404),
    ("post", "/v1/handoffs", {"json": {"project": "p", "goal": "", "expected_version": 0, "request_id": "r"}}, 422),
    ("get", "/v1/handoffs/p", {"params": {"version": 0}}, 400),
])
def test_bad_input_gets_the_documented_status(client: TestClient, auth: Headers, method: str, path: str,
                                              payload: dict[str, Any], status: int) -> None:
    response = getattr(client, method)(path, headers=auth, **payload)
    assert response.status_code == status, response.text
    body = response.json()
    if status == 422:
        assert "detail" in body  # FastAPI's validation shape, as the seed documents
    else:
        assert set(body["error"]) >= {"code", "message"} and "Traceback" not in response.text


def test_credentials_routes_are_the_owners(client: TestClient, runtime: Runtime, ns: str) -> None:
    admin = token(runtime, ["*"], admin=True)
    plain = token(runtime, [ns])
    made = client.post("/api/credentials", json={"name": "ci bot", "access": "read_only", "namespaces": [ns]},
                       headers=admin)
    assert made.status_code == 201 and made.json()["token"].startswith("gm_")
    listed = client.get("/api/credentials", headers=admin).json()
    assert any(c["id"] == made.json()["id"] and c["scopes"] == ["read"] for c in listed)
    assert all("token" not in c and "token_digest" not in c for c in listed)
    assert client.get("/api/credentials", headers=plain).status_code == 403
    assert client.post("/api/credentials", json={"name": "x", "access": "read_write", "namespaces": ["a"]},
                       headers=plain).status_code == 403
    bot = {"X-API-Key": made.json()["token"]}
    assert client.get("/v1/memories", headers=bot).status_code == 200
    assert client.delete(f"/api/credentials/{made.json()['id']}", headers=admin).json()["revoked_at"]
    assert client.get("/v1/memories", headers=bot).status_code == 401  # at once in this process
    assert client.post("/api/credentials", json={"name": "x", "access": "root", "namespaces": ["a"]},
                       headers=admin).status_code == 422


def test_namespace_resolution(client: TestClient, runtime: Runtime, ns: str) -> None:
    """A read that names no namespace covers every one the credential may read; a new memory must name one
    when the credential has several and the default is not among them."""
    two = token(runtime, [ns, f"{ns}-b"])
    unnamed = client.get("/v1/memories", headers=two)
    assert unnamed.status_code == 200 and unnamed.json()["namespaces"] == sorted([ns, f"{ns}-b"])
    write = client.post("/v1/remember", json={"content": "Where does this go?"}, headers=two)
    assert write.status_code == 400 and ns in write.json()["error"]["message"]
    named = client.get("/v1/memories", params={"scope": f"{ns}-b"}, headers=two)
    assert named.status_code == 200 and named.json()["namespaces"] == [f"{ns}-b"]
    everywhere = token(runtime, ["*"])
    assert client.post("/v1/remember", json={"content": "In the default namespace."},
                       headers=everywhere).status_code == 201
    assert client.get("/v1/memories", params={"scope": "_system"}, headers=everywhere).status_code == 400


def test_public_routes_and_metrics(client: TestClient, auth: Headers, ns: str) -> None:
    for path in ("/health", "/metrics", "/docs", "/redoc", "/openapi.json"):
        assert client.get(path).status_code == 200, path
    remember(client, auth, "Metrics must not leak this text.", title="secret-title")
    text = client.get("/metrics").text
    assert 'route="/v1/memories",status="201"' in text and "graphmem_database_reachable 1.0" in text
    assert ns not in text and "leak" not in text and "secret-title" not in text
    schema = client.get("/openapi.json").json()
    assert "/v1/memories/search" in schema["paths"] and "isLatest" in str(schema["components"])


def test_docs_work_offline(client: TestClient) -> None:
    for path in ("/docs", "/redoc"):
        page = client.get(path).text
        assert "http://" not in page and "https://" not in page and "/static/vendor/" in page
    script = client.get("/static/vendor/swagger-ui/swagger-ui-bundle.js")
    assert script.status_code == 200 and len(script.content) > 100_000
    assert client.get("/static/vendor/redoc/redoc.standalone.js").status_code == 200


def test_body_caps(client: TestClient, auth: Headers) -> None:
    big = {"content": "word " * (500_000)}  # 2.5 MB of JSON: over the 2 MiB default
    assert client.post("/v1/remember", json=big, headers=auth).status_code == 413
    memories = [{"content": "word " * 19_000} for _ in range(30)]  # 2.9 MB: within the jobs cap
    assert client.post("/v1/jobs", json={"memories": memories}, headers=auth).status_code == 202


def test_cors_is_off_unless_configured(runtime: Runtime, client: TestClient) -> None:
    asked = {"Origin": "https://evil.example", "Access-Control-Request-Method": "GET"}
    assert "access-control-allow-origin" not in client.options("/v1/memories", headers=asked).headers
    allowed = runtime.settings.model_copy(update={"cors_origins": ["https://ok.example"]})
    with TestClient(create_app(runtime=Runtime(allowed, runtime.store, runtime.service, runtime.identity))) as other:
        answer = other.options("/v1/memories", headers={**asked, "Origin": "https://ok.example"})
        assert answer.headers["access-control-allow-origin"] == "https://ok.example"
