"""The attack suite: every data route of the HTTP API, crossed with {no token, unknown token, revoked token, a
read token writing, a token of namespace A on B's ids and names, a '*' token on a '_' namespace}, gives exactly the
documented status, and no answer carries any of B's text or ids (an id or name the attacker sent itself may come
back in the message, exactly as for an id or name that does not exist)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext, DocumentInput, HandoffInput
from graphmem.runtime import Runtime
from helpers import isolated_store, store_password
from secret_scan import leaks


@dataclass(frozen=True)
class World:
    a: str  # the attacker's namespace
    b: str  # the victim's
    a_memory: str
    b_memory: str
    b_job: str
    secrets: tuple[str, ...]  # B's text and ids: never in an answer to A
    tokens: dict[str, str]


@dataclass(frozen=True)
class Route:
    name: str
    write: bool
    call: Callable[[TestClient, dict[str, str], World, str], Any]  # (client, headers, world, target) -> response
    by_id: bool = False  # addresses B by an id (else by a namespace name)


def _target_ns(world: World, target: str) -> str:
    return {"own": world.a, "victim": world.b, "system": "_system"}[target]


def _memory(world: World, target: str) -> str:
    return world.b_memory if target == "victim" else world.a_memory


def scope(world: World, target: str) -> dict[str, str]:
    return {"scope": _target_ns(world, target)}


ROUTES = [
    Route("GET /v1/memories", False, lambda c, h, w, t: c.get("/v1/memories", params=scope(w, t), headers=h)),
    Route("GET /v1/memories/search", False, lambda c, h, w, t: c.get(
        "/v1/memories/search", params={**scope(w, t), "query": "quartz ledger"}, headers=h)),
    Route("GET /v1/recall", False, lambda c, h, w, t: c.get(
        "/v1/recall", params={**scope(w, t), "query": "quartz ledger"}, headers=h)),
    Route("POST /v1/recall/context", False, lambda c, h, w, t: c.post(
        "/v1/recall/context", json={**scope(w, t), "query": "quartz ledger"}, headers=h)),
    Route("GET /v1/memories/{id}", False, lambda c, h, w, t: c.get(
        f"/v1/memories/{_memory(w, t)}", params=scope(w, t) if t == "system" else {}, headers=h), by_id=True),
    Route("GET /v1/memories/{id}/history", False, lambda c, h, w, t: c.get(
        f"/v1/memories/{_memory(w, t)}/history", params=scope(w, t) if t == "system" else {}, headers=h),
          by_id=True),
    Route("PATCH /v1/memories/{id}", True, lambda c, h, w, t: c.patch(
        f"/v1/memories/{_memory(w, t)}", json={"content": "Overwritten."},
        params=scope(w, t) if t == "system" else {}, headers=h), by_id=True),
    Route("DELETE /v1/memories/{id}", True, lambda c, h, w, t: c.delete(
        f"/v1/memories/{_memory(w, t)}", params={"mode": "hard_delete", **(scope(w, t) if t == "system" else {})},
        headers=h), by_id=True),
    Route("POST /v1/memories/{id}/forget", True, lambda c, h, w, t: c.post(
        f"/v1/memories/{_memory(w, t)}/forget", json={"mode": "redact"},
        params=scope(w, t) if t == "system" else {}, headers=h), by_id=True),
    Route("POST /v1/memories/{id}/restore", True, lambda c, h, w, t: c.post(
        f"/v1/memories/{_memory(w, t)}/restore", params=scope(w, t) if t == "system" else {}, headers=h),
          by_id=True),
    Route("POST /v1/remember", True, lambda c, h, w, t: c.post(
        "/v1/remember", json={**scope(w, t), "content": f"Planted {uuid.uuid4()}."}, headers=h)),
    Route("POST /v1/memories", True, lambda c, h, w, t: c.post(
        "/v1/memories", json={**scope(w, t), "content": f"Planted {uuid.uuid4()}."}, headers=h)),
    Route("GET /v1/entities/search", False, lambda c, h, w, t: c.get(
        "/v1/entities/search", params={**scope(w, t), "query": "Quartz"}, headers=h)),
    Route("GET /v1/triples", False, lambda c, h, w, t: c.get(
        "/v1/triples", params={**scope(w, t), "term": "quartz"}, headers=h)),
    Route("GET /v1/graph", False, lambda c, h, w, t: c.get(
        "/v1/graph", params={**scope(w, t), "seed": "query", "query": "quartz ledger"}, headers=h)),
    Route("GET /v1/graph?seed=document", False, lambda c, h, w, t: c.get(
        "/v1/graph", params={"seed": "document", "id": _memory(w, t), **(scope(w, t) if t == "system" else {})},
        headers=h), by_id=True),
    Route("POST /v1/jobs", True, lambda c, h, w, t: c.post(
        "/v1/jobs", json={**scope(w, t), "memories": [{"content": "Planted by a job."}]}, headers=h)),
    Route("GET /v1/jobs/{id}", False, lambda c, h, w, t: c.get(
        f"/v1/jobs/{w.b_job}", params=scope(w, t) if t == "system" else {}, headers=h), by_id=True),
    Route("GET /v1/handoffs", False, lambda c, h, w, t: c.get("/v1/handoffs", params=scope(w, t), headers=h)),
    Route("GET /v1/handoffs/{project}", False, lambda c, h, w, t: c.get(
        "/v1/handoffs/vault/plan", params=scope(w, t), headers=h)),
    Route("POST /v1/handoffs", True, lambda c, h, w, t: c.post(
        "/v1/handoffs", json={**scope(w, t), "project": "vault/plan", "goal": "Take over", "expected_version": 1,
                              "request_id": f"req-{uuid.uuid4().hex[:12]}"}, headers=h)),
]

CASES = ["no token", "unknown token", "revoked token", "read token writing", "A on B", "* on _system"]


def expected(route: Route, case: str) -> int | None:
    """The documented status; None where the case does not apply to the route."""
    if case in ("no token", "unknown token", "revoked token"):
        return 401
    if case == "read token writing":
        return 403 if route.write else None
    if case == "A on B":
        return 404 if route.by_id or not route.write else 403
    return 400  # '*' on '_system': a reserved namespace is invalid input


@pytest.fixture(scope="module")
def world(runtime: Runtime) -> Iterator[tuple[TestClient, World]]:
    a, b = f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    service = runtime.service
    victim = CallerContext.for_namespaces(b)
    secret_text = f"Quartz ledger {uuid.uuid4().hex} belongs to Vera Quartz."
    b_memory = service.add_memory(victim, b, DocumentInput(content=secret_text, title="vault-title")).document.id
    service.save_handoff(victim, b, HandoffInput(project="vault/plan", goal="Guard the vault", expected_version=0,
                                                 request_id="req-victim-1", summary="victim summary"))
    b_job = service.submit_memories(victim, b, [DocumentInput(content="Victim job memory.")]).id
    attacker = CallerContext.for_namespaces(a)
    a_memory = service.add_memory(attacker, a, DocumentInput(content="Attacker's own quartz ledger note.")).document.id

    def make(namespaces: list[str], scopes: list[Scope]) -> str:
        new = NewCredential(name="attack", scopes=scopes, namespaces=namespaces)
        return runtime.identity.create(new, by=OPERATOR)[1]

    revoked_credential, revoked = runtime.identity.create(
        NewCredential(name="gone", scopes=[Scope.read, Scope.write], namespaces=[a]), by=OPERATOR)
    runtime.identity.revoke(revoked_credential.id, by=OPERATOR)
    tokens = {"no token": "", "unknown token": "gm_" + "x" * 43, "revoked token": revoked,
              "read token writing": make([a], [Scope.read]), "A on B": make([a], [Scope.read, Scope.write]),
              "* on _system": make(["*"], [Scope.read, Scope.write])}
    secrets = (secret_text, b_memory, b_job, "vault-title", "Guard the vault", "victim summary", b)
    with TestClient(create_app(runtime=runtime)) as client:
        yield client, World(a, b, a_memory, b_memory, b_job, secrets, tokens)


TABLE = [(route, case) for route in ROUTES for case in CASES if expected(route, case) is not None]


@pytest.mark.parametrize(("route", "case"), TABLE, ids=[f"{r.name} | {c}" for r, c in TABLE])
def test_attack(world: tuple[TestClient, World], route: Route, case: str, runtime: Runtime) -> None:
    client, w = world
    status = expected(route, case)
    token = w.tokens[case]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    target = {"read token writing": "own", "A on B": "victim", "* on _system": "system"}.get(case, "victim")
    response = route.call(client, headers, w, target)
    assert response.status_code == status, (route.name, case, response.status_code, response.text)
    if status == 401:
        assert response.headers["www-authenticate"] == "Bearer"
    sent = {w.b, w.b_memory, w.b_job} if case == "A on B" else set()  # echoed as for ids that do not exist
    for secret in w.secrets:
        if secret not in sent:
            assert secret not in response.text, (route.name, case, secret)
    assert not leaks(response.text, [store_password(runtime)]), (route.name, case)


def test_b_is_untouched(world: tuple[TestClient, World], runtime: Runtime) -> None:
    _, w = world
    victim = CallerContext.for_namespaces(w.b)
    memory = runtime.service.get_version(victim, w.b_memory)
    assert memory.content and memory.content.startswith("Quartz ledger") and not memory.is_forgotten
    assert runtime.service.namespace_counts(victim, w.b).documents == 1
    assert runtime.service.get_handoff(victim, w.b, "vault/plan").version == 1


# ---- credential administration: a credential grants only what it holds ---------------------------------------


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _admin_token(runtime: Runtime, namespaces: list[str], scopes: list[Scope]) -> str:
    new = NewCredential(name="admin", scopes=scopes, namespaces=namespaces, admin=True)
    return runtime.identity.create(new, by=OPERATOR)[1]


def _grant(client: TestClient, token: str, namespaces: list[str], access: str = "read_write",
           admin: bool = False) -> Any:
    return client.post("/api/credentials", headers=_bearer(token),
                       json={"name": "minted", "access": access, "namespaces": namespaces, "admin": admin})


def test_a_namespace_admin_grants_only_its_own_namespaces(world: tuple[TestClient, World], runtime: Runtime) -> None:
    client, w = world
    limited = _admin_token(runtime, [w.a], [Scope.read, Scope.write])
    for namespaces, admin in (([w.b], False), ([w.a, w.b], False), (["*"], False), ([w.a], True)):
        refused = _grant(client, limited, namespaces, admin=admin)
        assert refused.status_code == 403, (namespaces, admin, refused.text)
        assert refused.json()["error"]["code"] == "forbidden"
    minted = _grant(client, limited, [w.a])
    assert minted.status_code == 201, minted.text
    own = _bearer(minted.json()["token"])
    assert client.get("/v1/memories", params={"scope": w.a}, headers=own).json()["total"] >= 1
    assert client.get("/v1/memories", params={"scope": w.b}, headers=own).status_code == 404


def test_a_read_only_admin_only_lists(world: tuple[TestClient, World], runtime: Runtime) -> None:
    client, w = world
    reader = _admin_token(runtime, ["*"], [Scope.read])
    for access in ("read_write", "read_only"):
        refused = _grant(client, reader, [w.a], access=access)
        assert refused.status_code == 403 and "read-only" in refused.json()["error"]["message"], refused.text
    other = runtime.identity.create(NewCredential(name="other", scopes=[Scope.read], namespaces=[w.a]),
                                    by=OPERATOR)[0]
    assert client.delete(f"/api/credentials/{other.id}", headers=_bearer(reader)).status_code == 403
    assert other.id in {c["id"] for c in client.get("/api/credentials", headers=_bearer(reader)).json()}


def test_a_namespace_admin_lists_and_revokes_only_inside_its_namespaces(world: tuple[TestClient, World],
                                                                       runtime: Runtime) -> None:
    client, w = world
    limited = _admin_token(runtime, [w.a], [Scope.read, Scope.write])
    inside = runtime.identity.create(NewCredential(name="in-a", scopes=[Scope.read], namespaces=[w.a]),
                                     by=OPERATOR)[0]
    victim = runtime.identity.create(NewCredential(name="in-b", scopes=[Scope.read], namespaces=[w.b]),
                                     by=OPERATOR)[0]
    straddling = runtime.identity.create(NewCredential(name="a-and-b", scopes=[Scope.read], namespaces=[w.a, w.b]),
                                         by=OPERATOR)[0]
    star = runtime.identity.create(NewCredential(name="star", scopes=[Scope.read], namespaces=["*"], admin=True),
                                   by=OPERATOR)[0]
    listed = client.get("/api/credentials", headers=_bearer(limited))
    assert listed.status_code == 200
    ids = {c["id"] for c in listed.json()}
    assert inside.id in ids and not ids & {victim.id, straddling.id, star.id}
    assert all(not c["all_namespaces"] and set(c["namespaces"]) <= {w.a} for c in listed.json())
    for outside in (victim.id, straddling.id, star.id):
        refused = client.delete(f"/api/credentials/{outside}", headers=_bearer(limited))
        assert refused.status_code == 404, refused.text
    assert not any(c.revoked for c in runtime.identity.list(by=OPERATOR) if c.id in {victim.id, straddling.id, star.id})
    revoked = client.delete(f"/api/credentials/{inside.id}", headers=_bearer(limited))
    assert revoked.status_code == 200 and revoked.json()["revoked_at"]


def test_the_owner_and_the_last_star_admin_are_revoked_only_by_the_operator(runtime: Runtime, tmp_path: Path) -> None:
    with isolated_store(runtime, tmp_path) as store, TestClient(create_app(runtime=store)) as client:
        (owner_credential,) = store.identity.list(by=OPERATOR)  # the lifespan made the store's owner
        second = _admin_token(store, ["*"], [Scope.read, Scope.write])
        refused = client.delete(f"/api/credentials/{owner_credential.id}", headers=_bearer(second))
        assert refused.status_code == 409, refused.text
        assert "graphmem credentials revoke" in refused.json()["error"]["details"]["next_step"]
        store.identity.revoke(owner_credential.id, by=OPERATOR)  # the operator may
        (second_credential,) = [c for c in store.identity.list(by=OPERATOR) if not c.revoked]
        last = client.delete(f"/api/credentials/{second_credential.id}", headers=_bearer(second))
        assert last.status_code == 409 and "last" in last.json()["error"]["message"], last.text
        assert "graphmem credentials revoke" in last.json()["error"]["details"]["next_step"]
        _admin_token(store, ["*"], [Scope.read])  # a read-only admin does not count: it cannot grant
        assert client.delete(f"/api/credentials/{second_credential.id}", headers=_bearer(second)).status_code == 409
        third = _grant(client, second, ["*"], admin=True)
        assert third.status_code == 201, third.text
        assert client.delete(f"/api/credentials/{second_credential.id}", headers=_bearer(second)).status_code == 200


# ---- bad input: a clear 4xx in the envelope, never a 500, never the value echoed -----------------------------

SURROGATE = "\\ud800"  # as JSON carries it: a lone surrogate, which UTF-8 cannot encode


def _raw(client: TestClient, method: str, path: str, body: str, token: str) -> Any:
    return client.request(method, path, content=body.encode(), headers={**_bearer(token),
                                                                        "Content-Type": "application/json"})


# (method, path, JSON body with the surrogate in one field, the field as the error names it)
SURROGATE_FIELDS = [
    ("POST", "/v1/remember", f'{{"content": "a {SURROGATE} b"}}', "content"),
    ("POST", "/v1/remember", f'{{"content": "ok", "title": "{SURROGATE}"}}', "title"),
    ("POST", "/v1/remember", f'{{"content": "ok", "path": "a/{SURROGATE}"}}', "path"),
    ("POST", "/v1/remember", f'{{"content": "ok", "scope": "{SURROGATE}"}}', "scope"),
    ("POST", "/v1/remember", f'{{"content": "ok", "metadata": {{"{SURROGATE}": 1}}}}', "metadata"),
    ("POST", "/v1/remember", f'{{"content": "ok", "metadata": {{"k": "{SURROGATE}"}}}}', "metadata"),
    ("POST", "/v1/remember", f'{{"content": "ok", "request_id": "req-{SURROGATE}-0001"}}', "request_id"),
    ("POST", "/v1/recall/context", f'{{"query": "when {SURROGATE}?"}}', "query"),
    ("PATCH", "/v1/memories/{id}", f'{{"content": "new {SURROGATE}"}}', "content"),
    ("POST", "/v1/handoffs", f'{{"project": "p", "goal": "{SURROGATE}", "expected_version": 0, '
                             f'"request_id": "req-00000001"}}', "goal"),
    ("POST", "/v1/handoffs", f'{{"project": "p", "goal": "g", "expected_version": 0, "request_id": "req-00000001", '
                             f'"next_steps": ["{SURROGATE}"]}}', "next_steps.0"),
    ("POST", "/v1/jobs", f'{{"memories": [{{"content": "{SURROGATE}"}}]}}', "memories.0.content"),
]


@pytest.mark.parametrize(("method", "path", "body", "field"), SURROGATE_FIELDS,
                         ids=[f"{m} {p} {f}" for m, p, _, f in SURROGATE_FIELDS])
def test_a_lone_surrogate_is_invalid_input_naming_the_field(world: tuple[TestClient, World], method: str, path: str,
                                                            body: str, field: str) -> None:
    client, w = world
    response = _raw(client, method, path.replace("{id}", w.a_memory), body, w.tokens["A on B"])
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_input" and field in error["details"]["fields"], error


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_number_json_cannot_carry_is_invalid_input(world: tuple[TestClient, World], number: str) -> None:
    client, w = world
    response = _raw(client, "POST", "/v1/remember", f'{{"content": "ok", "metadata": {{"n": {number}}}}}',
                    w.tokens["A on B"])
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["fields"] == ["metadata"]


def test_a_body_the_schema_rejects_stays_422_and_echoes_nothing(world: tuple[TestClient, World]) -> None:
    client, w = world
    secret = "sent-but-never-echoed"
    response = _raw(client, "POST", "/v1/remember", f'{{"content": "{SURROGATE} {secret}", "color": "{secret}", '
                                                    f'"metadata": {{"n": NaN}}}}', w.tokens["A on B"])
    assert response.status_code == 422, response.text
    detail = response.json()["detail"]
    assert {tuple(d["loc"]) for d in detail} >= {("body", "color"), ("body", "content")}
    assert all(set(d) == {"type", "loc", "msg"} for d in detail) and secret not in response.text


@pytest.mark.parametrize(("field", "value"), [
    ("path", "."), ("path", ".."), ("path", "a/../../x"), ("path", "a//b"), ("path", "/a"), ("path", "a/"),
    ("project", "."), ("project", "a/../../x"), ("project", "a/./b"), ("project", "a//b"), ("project", "/a"),
])
def test_path_segments_that_climb_or_alias_are_refused(world: tuple[TestClient, World], field: str,
                                                       value: str) -> None:
    client, w = world
    body: dict[str, Any] = ({"content": "A note in a folder.", "path": value} if field == "path" else
                            {"project": value, "goal": "g", "expected_version": 0, "request_id": "req-00000001"})
    route = "/v1/remember" if field == "path" else "/v1/handoffs"
    response = client.post(route, json=body, headers=_bearer(w.tokens["A on B"]))
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"]["fields"] == [field]


def test_unknown_routes_and_wrong_methods_answer_in_the_envelope(world: tuple[TestClient, World]) -> None:
    client, w = world
    auth = _bearer(w.tokens["A on B"])
    for path in ("/v1/nope", "/v1/memories/x/y/z", "/nothing-here"):
        missing = client.get(path, headers=auth)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found", missing.text
    wrong = client.put("/v1/remember", headers=auth)
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST", wrong.text
    assert wrong.json()["error"] == {"code": "method_not_allowed", "message": "this route does not answer PUT",
                                     "details": {"allow": ["POST"]}}
    assert client.delete("/graphql", headers=auth).json()["error"]["code"] == "method_not_allowed"


def test_an_unexpected_error_is_logged_once_with_its_reference(runtime: Runtime,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(runtime=runtime)

    @app.get("/v1/boom")
    def boom() -> None:
        raise RuntimeError("a bug")

    with TestClient(app) as client, caplog.at_level("ERROR"):
        response = client.get("/v1/boom")  # the test client raises what the app lets through: nothing here
    assert response.status_code == 500 and "a bug" not in response.text
    ref = response.json()["error"]["details"]["ref"]
    logged = [record for record in caplog.records if record.levelname == "ERROR"]
    assert len(logged) == 1 and ref in logged[0].getMessage() and logged[0].exc_info is not None
