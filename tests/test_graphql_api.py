"""The rest of the GraphQL API: connections (pages walked while memories are added, where, sort), facts and
entities with their relationships (batched), triples, the evidence graph, paths, history, updates, handoffs,
jobs and the job subscription over graphql-transport-ws, and the namespace attacks of the HTTP API as
GraphQL operations."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from gql_helpers import Headers, bearer, code, credential, data, gql
from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.runtime import Runtime
from helpers import sent_statements

REMEMBER = """mutation($content: String!, $title: String, $path: String) {
  remember(content: $content, title: $title, path: $path) { ... on Memory { id version recordedAt } } }"""


def remember(client: TestClient, auth: Headers, content: str, **fields: Any) -> dict[str, Any]:
    made: dict[str, Any] = data(client, auth, REMEMBER, content=content, **fields)["remember"]
    return made


MEMORIES = """query($first: Int!, $after: String, $where: MemoryWhere, $sort: MemorySort! = RECORDED_AT_DESC) {
  memories(first: $first, after: $after, where: $where, sort: $sort) {
    totalCount pageInfo { endCursor hasNextPage } edges { cursor node { id title path } } } }"""


def walk(client: TestClient, auth: Headers, first: int, during: Any = None, **variables: Any) -> list[str]:
    """Every page of the memories connection; ``during(page_number)`` runs between pages."""
    seen: list[str] = []
    after = None
    for number in range(100):
        page = data(client, auth, MEMORIES, first=first, after=after, **variables)["memories"]
        seen += [edge["node"]["id"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            return seen
        after = page["pageInfo"]["endCursor"]
        assert after == page["edges"][-1]["cursor"]
        if during:
            during(number)
    raise AssertionError("the walk did not end")


def test_memories_walk_is_stable_while_memories_are_added(client: TestClient, auth: Headers) -> None:
    existing = {remember(client, auth, f"Note {i} about the harbour.", title=f"n{i:02d}")["id"] for i in range(11)}
    added: list[str] = []
    seen = walk(client, auth, 3, during=lambda n: added.append(remember(client, auth, f"Added during {n}.")["id"]))
    assert len(seen) == len(set(seen)) == 11  # no duplicate, no gap, nothing added after the walk began
    assert set(seen) == existing and added
    total = data(client, auth, MEMORIES, first=1)["memories"]["totalCount"]
    assert total == 11 + len(added)
    # a cursor from one request continues no other
    page = data(client, auth, MEMORIES, first=2)["memories"]
    other = gql(client, auth, MEMORIES, first=2, after=page["pageInfo"]["endCursor"], sort="TITLE_ASC")
    assert code(other) == "BAD_INPUT" and other["errors"][0]["message"].startswith("after belongs to another")


def test_memories_where_and_sort(client: TestClient, auth: Headers) -> None:
    a = remember(client, auth, "Alpha plan for the kiln.", title="Alpha plan", path="projects/kiln")
    b = remember(client, auth, "Beta notes on glazes.", title="Beta notes", path="projects/kiln/glaze")
    c = remember(client, auth, "Gamma: unrelated.", title="Gamma", path="personal")
    untitled = remember(client, auth, "No title here.")

    def ids(**variables: Any) -> list[str]:
        return walk(client, auth, 2, **variables)

    assert ids(sort="TITLE_ASC") == [untitled["id"], a["id"], b["id"], c["id"]]
    assert ids(sort="RECORDED_AT_ASC") == [a["id"], b["id"], c["id"], untitled["id"]]
    assert ids() == [untitled["id"], c["id"], b["id"], a["id"]]
    assert ids(where={"path": {"startsWith": "projects/kiln"}}) == [b["id"], a["id"]]
    assert ids(where={"path": {"eq": "projects/kiln"}}) == [a["id"]]
    assert ids(where={"title": {"contains": "notes"}}) == [b["id"]]
    assert ids(where={"title": {"startsWith": "Al"}, "path": {"startsWith": "projects"}}) == [a["id"]]
    assert ids(where={"id": {"in": [a["id"], c["id"]]}}) == [c["id"], a["id"]]
    assert ids(where={"recordedAt": {"gt": b["recordedAt"]}}) == [untitled["id"], c["id"]]
    assert ids(where={"recordedAt": {"lt": b["recordedAt"]}}) == [a["id"]]
    both = gql(client, auth, MEMORIES, first=2, where={"id": {"eq": a["id"], "in": [b["id"]]}})
    assert code(both) == "BAD_INPUT"
    too_many = gql(client, auth, MEMORIES, first=201)
    assert code(too_many) == "BAD_INPUT"


def test_facts_and_entities_connections(client: TestClient, auth: Headers) -> None:
    first = remember(client, auth, "Priya Raman leads Project Falcon. Jonas Weber joined Project Falcon.")
    remember(client, auth, "Mira Sato works at Helix Labs in Osaka.")
    facts = data(client, auth, """query($memory: ID!) { facts(first: 10, where: {memoryId: {eq: $memory}},
        sort: RECORDED_AT_ASC) { totalCount edges { cursor node { text memoryId entities { name } } } } }""",
                 memory=first["id"])["facts"]
    assert facts["totalCount"] == 2 and {e["node"]["memoryId"] for e in facts["edges"]} == {first["id"]}
    texted = data(client, auth, """{ facts(first: 5, where: {text: {contains: "Osaka"}}) {
        totalCount edges { node { text } } } }""")["facts"]
    assert texted["totalCount"] == 1 and "Osaka" in texted["edges"][0]["node"]["text"]

    entities = data(client, auth, """{ entities(first: 50) { totalCount edges { node { id name type } } } }""")
    names = [e["node"]["name"] for e in entities["entities"]["edges"]]
    assert names == sorted(names, key=lambda n: n or "") and {"Priya Raman", "Mira Sato"} <= set(names)
    falcon = data(client, auth, """{ entities(first: 5, where: {name: {startsWith: "Project"}}) {
        edges { node { id name facts { text } triples { statement } neighbours { entity { name } predicate } } } } }""")
    node = falcon["entities"]["edges"][0]["node"]
    assert node["name"] == "Project Falcon" and len(node["facts"]) == 2
    assert any("lead" in t["statement"] for t in node["triples"])
    mentioned = data(client, auth, """query($entity: ID!) { facts(first: 5, where: {entityId: {eq: $entity}}) {
        totalCount } }""", entity=node["id"])["facts"]
    assert mentioned["totalCount"] == 2
    descending = data(client, auth, "{ entities(first: 50, sort: NAME_DESC) { edges { node { name } } } }")
    assert [e["node"]["name"] for e in descending["entities"]["edges"]] == sorted(names, key=lambda n: n or "",
                                                                                   reverse=True)


def test_fact_entity_and_their_relationships(client: TestClient, auth: Headers) -> None:
    made = remember(client, auth, "Priya Raman leads Project Falcon.")
    memory = data(client, auth, "query($id: ID!) { memory(id: $id) { facts { id } } }", id=made["id"])["memory"]
    fact = data(client, auth, """query($id: ID!) { fact(id: $id) { text memory { id } entities { name }
        triples { subject { name } predicate object { name } fact { id } } } }""",
                id=memory["facts"][0]["id"])["fact"]
    assert fact["memory"]["id"] == made["id"] and {e["name"] for e in fact["entities"]} >= {"Priya Raman"}
    assert fact["triples"][0]["subject"]["name"] == "Priya Raman" and fact["triples"][0]["fact"]["id"]
    by_name = data(client, auth, """{ entity(name: "priya raman") { id name
        neighbours { entity { name } outgoing fact { text } } } }""")["entity"]
    assert by_name["name"] == "Priya Raman" and by_name["neighbours"][0]["entity"]["name"] == "Project Falcon"
    by_id = data(client, auth, "query($id: ID!) { entity(id: $id) { name } }", id=by_name["id"])["entity"]
    assert by_id["name"] == "Priya Raman"
    assert code(gql(client, auth, '{ entity(name: "Nobody Atall") { id } }')) == "NOT_FOUND"
    remember(client, auth, "Falcon ships in March.")  # a short name: an alias of Project Falcon
    by_alias = data(client, auth, '{ entity(name: "Falcon") { name aliases } }')["entity"]
    assert by_alias == {"name": "Project Falcon", "aliases": ["Falcon"]}
    assert code(gql(client, auth, '{ entity { id } }')) == "BAD_INPUT"
    assert code(gql(client, auth, '{ fact(id: "no-such-fact") { id } }')) == "NOT_FOUND"


def test_entity_and_fact_relationships_are_batched(client: TestClient, auth: Headers,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for number in range(8):
        remember(client, auth, f"Engineer{number} Okafor{number} maintains the Orbit{number} service.")
    sent = sent_statements(monkeypatch)
    query = """query($first: Int!) { entities(first: $first) { edges { node {
        facts(first: 3) { id entities { id } triples { statement } }
        neighbours(first: 3) { entity { name } fact { id } } } } } }"""

    def statements(first: int) -> dict[str, int]:
        sent.clear()
        edges = data(client, auth, query, first=first)["entities"]["edges"]
        assert len(edges) == first
        return {name: sent.count(name) for name in set(sent)}

    assert statements(2) == statements(12)


def test_triples_graph_and_paths(client: TestClient, auth: Headers) -> None:
    remember(client, auth, "Mira Sato works at Helix Labs.")
    remember(client, auth, "Helix Labs partners with Nordwind Robotics.")
    remember(client, auth, "Jonas Weber works at Nordwind Robotics.")
    remember(client, auth, "Ada Quist works at Helix Labs.")
    page = data(client, auth, """{ triples(predicate: "work", first: 2) {
        edges { cursor node { statement subject { name } } } pageInfo { endCursor hasNextPage } } }""")["triples"]
    assert len(page["edges"]) == 2 and page["pageInfo"]["hasNextPage"]
    rest = data(client, auth, """query($after: String) { triples(predicate: "work", first: 2, after: $after) {
        edges { node { statement } } pageInfo { hasNextPage } } }""", after=page["pageInfo"]["endCursor"])["triples"]
    statements = [e["node"]["statement"] for e in page["edges"] + rest["edges"]]
    assert len(statements) == len(set(statements)) == 3 and not rest["pageInfo"]["hasNextPage"]

    graph = data(client, auth, """{ graph(seed: {query: "Who works at Helix Labs?"}, caps: {depth: 2}) {
        nodes { id kind } edges { source target kind } totalDocuments truncated coverage nextCursor } }""")["graph"]
    assert {n["kind"] for n in graph["nodes"]} >= {"document", "fact", "entity"} and graph["edges"]
    assert graph["totalDocuments"] >= 1 and graph["truncated"] is False
    uncounted = data(client, auth, """{ graph(seed: {query: "Who works at Helix Labs?"}, caps: {maxNodes: 1},
        countReachable: false) { truncated reachableDocuments coverage } }""")["graph"]
    assert uncounted == {"truncated": True, "reachableDocuments": None, "coverage": None}
    assert code(gql(client, auth, '{ graph(seed: {query: "x", memoryId: "y"}) { truncated } }')) == "BAD_INPUT"
    assert code(gql(client, auth, '{ graph(seed: {query: "x"}, caps: {depth: 9}) { truncated } }')) == "BAD_INPUT"

    path = data(client, auth, """{ findPath(from: "Mira Sato", to: "Jonas Weber", maxHops: 4) {
        hops cut paths { names steps { via predicate text } } } }""")["findPath"]
    assert path["hops"] == 3 and path["paths"][0]["names"] == ["Mira Sato", "Helix Labs", "Nordwind Robotics",
                                                                "Jonas Weber"]


def test_update_history_and_conflicts(client: TestClient, auth: Headers) -> None:
    made = remember(client, auth, "Jonas works in Berlin.")
    updated = data(client, auth, """mutation($id: ID!) { updateMemory(id: $id, content: "Jonas works in Osaka.",
        expectedVersion: 1) { id version parentMemoryId content } }""", id=made["id"])["updateMemory"]
    assert updated["version"] == 2 and updated["parentMemoryId"] == made["id"] and "Osaka" in updated["content"]
    stale = gql(client, auth, """mutation($id: ID!) { updateMemory(id: $id, content: "x", expectedVersion: 1) {
        id } }""", id=updated["id"])
    assert code(stale) == "CONFLICT" and stale["errors"][0]["extensions"]["nextStep"]
    history = data(client, auth, "query($id: ID!) { history(id: $id) { items { version content } nextCursor } }",
                   id=made["id"])["history"]
    assert [v["version"] for v in history["items"]] == [2, 1] and history["items"][1]["content"].endswith("Berlin.")
    paged = data(client, auth, "query($id: ID!) { history(id: $id, first: 1) { items { version } nextCursor } }",
                 id=made["id"])["history"]
    more = data(client, auth, """query($id: ID!, $after: String) { history(id: $id, first: 1, after: $after) {
        items { version } nextCursor } }""", id=made["id"], after=paged["nextCursor"])["history"]
    assert [paged["items"][0]["version"], more["items"][0]["version"]] == [2, 1] and more["nextCursor"] is None
    nested = data(client, auth, "query($id: ID!) { memory(id: $id) { history(first: 5) { version isLatest } } }",
                  id=made["id"])["memory"]
    assert nested["history"] == [{"version": 2, "isLatest": True}, {"version": 1, "isLatest": False}]


def test_handoffs(client: TestClient, auth: Headers) -> None:
    save = """mutation($expected: Int!, $request: String!) { saveHandoff(project: "atlas", goal: "Ship v2",
        expectedVersion: $expected, requestId: $request, nextSteps: ["write docs"]) { project version nextSteps } }"""
    first = data(client, auth, save, expected=0, request="handoff-001")["saveHandoff"]
    assert first == {"project": "atlas", "version": 1, "nextSteps": ["write docs"]}
    assert data(client, auth, save, expected=0, request="handoff-001")["saveHandoff"]["version"] == 1  # a retry
    stale = gql(client, auth, save, expected=0, request="handoff-002")
    assert code(stale) == "CONFLICT" and stale["errors"][0]["extensions"]["nextStep"]
    read = data(client, auth, '{ handoff(project: "atlas") { version goal author createdAt } }')["handoff"]
    assert read["version"] == 1 and read["goal"] == "Ship v2" and read["createdAt"]
    listed = data(client, auth, "{ handoffs { items { project version } nextCursor } }")["handoffs"]
    assert listed == {"items": [{"project": "atlas", "version": 1}], "nextCursor": None}
    none_yet = data(client, auth, '{ handoff(project: "nothing-yet") { version goal } }')["handoff"]
    assert none_yet == {"version": 0, "goal": None}


JOB_SUBSCRIPTION = "subscription($id: ID!) { job(id: $id) { status memoryIds } }"


def test_async_remember_job_and_its_subscription(client: TestClient, runtime: Runtime, ns: str) -> None:
    token = credential(runtime, [ns])
    job = data(client, bearer(token), """mutation { remember(content: "Queued for later.", async: true) {
        ... on Job { id status items } } }""")["remember"]
    assert job["status"] == "queued" and job["items"] == 1
    assert data(client, bearer(token), "query($id: ID!) { job(id: $id) { status } }", id=job["id"])["job"] == {
        "status": "queued"}
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"token": token}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {"query": JOB_SUBSCRIPTION,
                                                                   "variables": {"id": job["id"]}}})
        first = ws.receive_json()
        assert first["type"] == "next" and first["payload"]["data"]["job"]["status"] == "queued"
        worker = runtime.job_worker()
        assert worker.run_once()
        statuses = []
        while True:
            message = ws.receive_json()
            if message["type"] == "complete":
                break
            statuses.append(message["payload"]["data"]["job"])
        assert statuses[-1]["status"] == "done" and len(statuses[-1]["memoryIds"]) == 1


@pytest.mark.parametrize("payload", [{}, {"token": "gm_not-a-token"}, {"Authorization": "Bearer nope"}])
def test_a_subscription_with_a_bad_token_is_closed_4401(client: TestClient, payload: dict[str, str]) -> None:
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": payload})
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4401


SUBSCRIBE = '{"id": "1", "type": "subscribe", "payload": %s}'
INVALID_MESSAGES = {
    "not JSON": "{",
    "a number past Python's digits": '{"type": "ping", "payload": {"n": 1' + "0" * 5000 + "}}",
    "nested too deep": "[" * 10_000 + "]" * 10_000,
    "not an object": "5",
    "a list": "[]",
    "an id not a string": '{"id": [], "type": "complete"}',
    "a payload not an object": SUBSCRIBE % "5",
    "a query not a string": SUBSCRIBE % '{"query": null}',
    "variables not an object": SUBSCRIBE % json.dumps({"query": JOB_SUBSCRIPTION, "variables": ["x"]}),
    "an operation name not a string": SUBSCRIBE % json.dumps({"query": JOB_SUBSCRIPTION, "operationName": 5}),
    "an unknown operation named at length": SUBSCRIBE % json.dumps({"query": JOB_SUBSCRIPTION,
                                                                    "operationName": "N" * 300}),
    "an unknown operation named with a lone surrogate": SUBSCRIBE % json.dumps({"query": JOB_SUBSCRIPTION,
                                                                                "operationName": "\ud800"}),
}


@pytest.mark.parametrize("message", list(INVALID_MESSAGES.values()), ids=list(INVALID_MESSAGES))
def test_a_message_outside_the_protocol_closes_the_socket_4400(client: TestClient, runtime: Runtime, ns: str,
                                                                caplog: pytest.LogCaptureFixture,
                                                                message: str) -> None:
    """graphql-transport-ws answers an invalid message by closing with 4400, whatever is wrong with it: a frame
    the router's JSON reading refuses, a payload or an id of another type, a query or variables of another
    type, an unknown operation; never an open socket nobody reads, a broken connection or an unexpected error.
    The reason fits a close frame (123 bytes of UTF-8): a real server cannot send a longer one, or one with a
    lone surrogate."""
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"Authorization": f"Bearer {credential(runtime, [ns])}"}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_text(message)
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    assert closed.value.code == 4400
    assert len(closed.value.reason.encode("utf-8")) <= 123
    assert not [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR]


ATTACKS = [
    ('query($id: ID!) { memory(id: $id) { content } }', "NOT_FOUND"),
    ('query($id: ID!) { history(id: $id) { items { id } } }', "NOT_FOUND"),
    ('query($id: ID!) { fact(id: $id) { text } }', "NOT_FOUND"),
    ('query($id: ID!) { memories(first: 5, where: {id: {eq: $id}}) { totalCount } }', None),
    ('query($id: ID!) { graph(seed: {memoryId: $id}) { nodes { id } } }', "NOT_FOUND"),
    ('mutation($id: ID!) { updateMemory(id: $id, content: "mine now") { id } }', "NOT_FOUND"),
    ('mutation($id: ID!) { forgetMemory(id: $id, mode: HARD) { facts } }', "NOT_FOUND"),
    ('mutation($id: ID!) { restoreMemory(id: $id) { id } }', "NOT_FOUND"),
]


@pytest.mark.parametrize(("operation", "expected"), ATTACKS)
def test_another_namespace_cannot_be_reached(client: TestClient, runtime: Runtime, operation: str,
                                             expected: str | None) -> None:
    """A's credential, B's ids: not found (or an empty answer), and B is untouched."""
    victim_ns, attacker_ns = f"gq-b-{uuid.uuid4().hex[:6]}", f"gq-a-{uuid.uuid4().hex[:6]}"
    victim = bearer(credential(runtime, [victim_ns]))
    theirs = remember(client, victim, "Victim secret: the vault code is 4417.")
    fact_id = data(client, victim, "query($id: ID!) { memory(id: $id) { facts { id } } }",
                   id=theirs["id"])["memory"]["facts"][0]["id"]
    attacker = bearer(credential(runtime, [attacker_ns]))
    target = fact_id if "fact(" in operation else theirs["id"]
    body = gql(client, attacker, operation, id=target)
    if expected is None:
        assert "errors" not in body and "4417" not in str(body)
        assert body["data"]["memories"]["totalCount"] == 0
    else:
        assert code(body) == expected and "4417" not in str(body)
    # naming the victim's namespace is not found too
    named = gql(client, attacker, "query($ns: String) { memories(first: 1, namespace: $ns) { totalCount } }",
                ns=victim_ns)
    assert code(named) == "NOT_FOUND"
    still = data(client, victim, "query($id: ID!) { memory(id: $id) { content isForgotten } }", id=theirs["id"])
    assert still["memory"] == {"content": "Victim secret: the vault code is 4417.", "isForgotten": False}


BAD_INPUT = [
    '{ recall(query: "x", maxTokens: 10) { contextText } }',
    '{ recall(query: "") { contextText } }',
    '{ triples(first: 5) { edges { cursor } } }',
    '{ triples(term: "x", first: 0) { edges { cursor } } }',
    '{ history(id: "bad id!") { nextCursor } }',
    '{ handoff(project: "no spaces allowed") { version } }',
    '{ handoffs(first: 0) { nextCursor } }',
    '{ job(id: "bad id!") { status } }',
    '{ findPath(from: "A", to: "B", maxHops: 99) { hops } }',
    '{ search(query: "x", target: ENTITIES, first: 0) { edges { score } } }',
    '{ search(query: "x", filters: {since: "2026-02-01T00:00:00Z", until: "2026-01-01T00:00:00Z"}) '
    '{ edges { score } } }',
    '{ facts(first: 0) { totalCount } }',
    '{ entities(first: 5, where: {id: {in: []}}) { totalCount } }',
    '{ memories(first: 5, after: "not-a-cursor") { totalCount } }',
    '{ memory(id: "x") { facts(first: 5000) { id } } }',
    'mutation { updateMemory(id: "x", content: "") { id } }',
    'mutation { saveHandoff(project: "p", goal: "g", expectedVersion: 0, requestId: "short") { version } }',
    'mutation { forgetMemory(id: "bad id!") { facts } }',
    'mutation { restoreMemory(id: "bad id!") { id } }',
    'mutation { remember(content: "x", metadata: {nested: {deep: 1}}) { ... on Memory { id } } }',
]


@pytest.mark.parametrize("operation", BAD_INPUT)
def test_bad_input_is_bad_input(client: TestClient, auth: Headers, operation: str) -> None:
    if "facts(first: 5000)" in operation:
        made = remember(client, auth, "A memory to read.")
        operation = operation.replace('"x"', f'"{made["id"]}"')
    body = gql(client, auth, operation)
    assert code(body) == "BAD_INPUT", body
    assert body["errors"][0]["message"] and "Traceback" not in str(body)


def test_requests_graphql_cannot_run_are_400_bad_input(client: TestClient, auth: Headers) -> None:
    """Variables nested thousands deep (a short body), a subscription sent as a plain POST, a body that is not
    JSON (or not UTF-8, or a number past Python's digit limit), and JSON that is not an object: each a 400 with
    BAD_INPUT, never an INTERNAL error."""
    deep = '{"query": "query($v: JSON) { me { name } }", "variables": {"v": ' + "[" * 5000 + "]" * 5000 + "}}"
    subscription = {"query": 'subscription { job(id: "00000000-0000-4000-8000-000000000000") { status } }'}
    huge_number = '{"query": "{ me { name } }", "variables": {"n": ' + "1" * 5000 + "}}"
    for sent in ({"content": deep}, {"json": subscription}, {"content": "{not json"}, {"content": b"\xff\xfe"},
                 {"content": huge_number}, {"content": "1"}, {"content": "null"}):
        response = client.post("/graphql", headers={**auth, "Content-Type": "application/json"}, **sent)
        assert response.status_code == 400, response.text
        assert code(response.json()) == "BAD_INPUT", response.text
    refused = client.post("/graphql", headers=auth, json=subscription).json()["errors"][0]["message"]
    assert "graphql-transport-ws" in refused


def test_not_found_answers(client: TestClient, auth: Headers) -> None:
    missing = "00000000-0000-4000-8000-000000000000"
    for operation in ('query($id: ID!) { job(id: $id) { status } }',
                      'query($id: ID!) { history(id: $id) { nextCursor } }',
                      'mutation($id: ID!) { restoreMemory(id: $id) { id } }'):
        assert code(gql(client, auth, operation, id=missing)) == "NOT_FOUND", operation


def test_search_targets_and_filters(client: TestClient, auth: Headers) -> None:
    kiln = remember(client, auth, "The kiln in studio four runs hot.", path="studio/four")
    remember(client, auth, "Priya Raman fires the kiln in studio nine.", path="studio/nine")
    entities = data(client, auth, '{ search(query: "Priya Raman", target: ENTITIES) { edges { score node { '
                                  '... on Entity { name facts(first: 5) { text } } } } } }')["search"]["edges"]
    priya = next(e["node"] for e in entities if e["node"]["name"] == "Priya Raman")
    assert [f["text"] for f in priya["facts"]] == ["Priya Raman fires the kiln in studio nine."]
    filtered = data(client, auth, """{ search(query: "kiln", filters: {path: {eq: "studio/four"}}) {
        edges { node { ... on Memory { id } } } } }""")["search"]["edges"]
    assert [e["node"]["id"] for e in filtered] == [kiln["id"]]
    facts = data(client, auth, """query($id: ID!) { search(query: "kiln", target: FACTS, filters: {memoryId: $id}) {
        edges { node { ... on Fact { memoryId } } } } }""", id=kiln["id"])["search"]["edges"]
    assert facts and {e["node"]["memoryId"] for e in facts} == {kiln["id"]}
    later = data(client, auth, """{ search(query: "kiln", filters: {since: "2999-01-01T00:00:00Z"}) {
        edges { score } } }""")["search"]["edges"]
    assert later == []


def test_facts_walk_is_stable_while_memories_are_added(client: TestClient, auth: Headers) -> None:
    for number in range(7):
        remember(client, auth, f"Fact number {number} about the mill.")
    query = """query($after: String) { facts(first: 3, after: $after) { totalCount
        pageInfo { endCursor hasNextPage } edges { node { id } } } }"""
    seen: list[str] = []
    after = None
    while True:
        page = data(client, auth, query, after=after)["facts"]
        seen += [e["node"]["id"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
        remember(client, auth, f"Added while walking {len(seen)}.")
    assert len(seen) == len(set(seen)) == 7


@pytest.mark.parametrize("mutation", [
    'mutation { remember(content: "Nope.") { ... on Memory { id } } }',
    'mutation($id: ID!) { updateMemory(id: $id, content: "Nope.") { id } }',
    'mutation($id: ID!) { forgetMemory(id: $id) { facts } }',
    'mutation { saveHandoff(project: "p", goal: "g", expectedVersion: 0, requestId: "read-only-1") { version } }',
])
def test_a_read_token_cannot_write(client: TestClient, runtime: Runtime, ns: str, auth: Headers,
                                   mutation: str) -> None:
    made = remember(client, auth, "Written by the owner of the namespace.")
    reader = bearer(credential(runtime, [ns], scopes=(Scope.read,)))
    body = gql(client, reader, mutation, **({"id": made["id"]} if "$id" in mutation else {}))
    assert code(body) == "FORBIDDEN"
    assert data(client, auth, "query($id: ID!) { memory(id: $id) { isForgotten version } }",
                id=made["id"])["memory"] == {"isForgotten": False, "version": 1}


def test_the_system_namespace_is_not_reachable(client: TestClient, runtime: Runtime) -> None:
    _, token = runtime.identity.create(NewCredential(name="star", scopes=[Scope.read, Scope.write],
                                                     namespaces=["*"]), by=OPERATOR)
    # names starting with "_" are graphmem's own: no credential, not even "*", can name one
    body = gql(client, bearer(token), '{ memories(first: 1, namespace: "_system") { totalCount } }')
    assert code(body) == "BAD_INPUT" and "_" in body["errors"][0]["message"]
    body = gql(client, bearer(token), 'mutation { remember(content: "x", namespace: "_system") { ... on Memory '
                                      '{ id } } }')
    assert code(body) == "BAD_INPUT" and body["data"] is None


def test_a_subscription_to_an_unknown_job_answers_not_found(client: TestClient, runtime: Runtime, ns: str) -> None:
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"Authorization": f"Bearer {credential(runtime, [ns])}"}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "1", "type": "subscribe", "payload": {
            "query": JOB_SUBSCRIPTION, "variables": {"id": "00000000-0000-4000-8000-000000000000"}}})
        answer = ws.receive_json()
        errors = answer["payload"] if answer["type"] == "error" else answer["payload"]["errors"]
        assert errors[0]["extensions"]["code"] == "NOT_FOUND" and "Traceback" not in str(answer)


def test_relationships_follow_the_view_their_parent_was_read_in(client: TestClient, auth: Headers) -> None:
    made = remember(client, auth, "Mira Sato works at Helix Labs.")
    data(client, auth, """mutation($id: ID!) { updateMemory(id: $id, content: "Mira Sato works at Nordwind Robotics.") {
        id } }""", id=made["id"])
    old = data(client, auth, """query($id: ID!) { memory(id: $id) { isLatest facts { triples { statement } } } }""",
               id=made["id"])["memory"]
    assert old["isLatest"] is False and old["facts"][0]["triples"][0]["statement"] == "Mira Sato work at Helix Labs"
    query = """query($superseded: Boolean!) { entities(first: 10, includeSuperseded: $superseded,
        where: {name: {eq: "Mira Sato"}}) { edges { node { facts { text } neighbours { entity { name } } } } } }"""
    now = data(client, auth, query, superseded=False)["entities"]["edges"][0]["node"]
    every = data(client, auth, query, superseded=True)["entities"]["edges"][0]["node"]
    assert [f["text"] for f in now["facts"]] == ["Mira Sato works at Nordwind Robotics."]
    assert {f["text"] for f in every["facts"]} == {"Mira Sato works at Nordwind Robotics.",
                                                   "Mira Sato works at Helix Labs."}
    assert {n["entity"]["name"] for n in now["neighbours"]} == {"Nordwind Robotics"}
    assert {n["entity"]["name"] for n in every["neighbours"]} == {"Nordwind Robotics", "Helix Labs"}


def test_errors_over_the_socket_carry_codes(client: TestClient, runtime: Runtime, ns: str) -> None:
    with client.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
        ws.send_json({"type": "connection_init", "payload": {"token": credential(runtime, [ns])}})
        assert ws.receive_json()["type"] == "connection_ack"
        ws.send_json({"id": "q", "type": "subscribe", "payload": {"query": '{ memory(id: "no-such") { id } }'}})
        answer = ws.receive_json()
        assert answer["type"] == "next" and answer["payload"]["errors"][0]["extensions"]["code"] == "NOT_FOUND"
        assert ws.receive_json() == {"id": "q", "type": "complete"}
        ws.send_json({"id": "v", "type": "subscribe", "payload": {"query": "{ nothingHere }"}})
        invalid = ws.receive_json()
        assert invalid["type"] == "error" and invalid["payload"][0]["extensions"]["code"] == "BAD_INPUT"


def test_a_subscription_is_charged_and_refused_over_the_limit(runtime: Runtime, ns: str) -> None:
    from graphmem.identity import Identity, RateLimits

    limited = Identity(runtime.identity.credentials, RateLimits(reads=1, writes=5, window_s=60,
                                                                storage_uri="memory://"), "default",
                       runtime.service.every_namespace)
    app = create_app(runtime=Runtime(runtime.settings, runtime.store, runtime.service, limited))
    new = NewCredential(name="busy-sub", scopes=[Scope.read, Scope.write], namespaces=[ns])
    _, token = limited.create(new, by=OPERATOR)
    with TestClient(app) as busy:
        job = data(busy, bearer(token), """mutation { remember(content: "Queued.", async: true) {
            ... on Job { id } } }""")["remember"]
        with busy.websocket_connect("/graphql", subprotocols=["graphql-transport-ws"]) as ws:
            ws.send_json({"type": "connection_init", "payload": {"token": token}})
            assert ws.receive_json()["type"] == "connection_ack"
            for number in range(2):
                ws.send_json({"id": str(number), "type": "subscribe", "payload": {
                    "query": JOB_SUBSCRIPTION, "variables": {"id": job["id"]}}})
                first = ws.receive_json()
                if number == 0:
                    assert first["payload"]["data"]["job"]["status"] == "queued"
                    ws.send_json({"id": "0", "type": "complete"})
                else:
                    assert first["payload"]["errors"][0]["extensions"]["code"] == "RATE_LIMITED"
