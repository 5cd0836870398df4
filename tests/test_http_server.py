"""The HTTP API over a real uvicorn server with httpx, rate limits, an engine outage while the server runs, the
owner credential made once under a race, and ``graphmem credentials`` from a shell."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.identity import OPERATOR, Identity, NewCredential, RateLimits, Scope
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.store.driver import GraphStore
from helpers import child_environment, coalescer, graph_driver, make_settings, own_database, query, served

pytestmark = pytest.mark.engine  # starts engines or servers of its own


@pytest.fixture(scope="module")
def server(runtime: Runtime) -> Iterator[str]:
    """The app on a real uvicorn server on 127.0.0.1, in this process."""
    with served(create_app(runtime=runtime)) as url:
        yield url


def test_end_to_end_over_uvicorn(server: str, runtime: Runtime, ns: str) -> None:
    new = NewCredential(name="e2e", scopes=[Scope.read, Scope.write], namespaces=[ns])
    _, token = runtime.identity.create(new, by=OPERATOR)
    with httpx.Client(base_url=server, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
        made = client.post("/v1/remember", json={"content": "Ilse moved to Leeds in March.", "path": "people"})
        assert made.status_code == 201
        memory_id = made.json()["id"]
        found = client.get("/v1/memories/search", params={"query": "Where did Ilse move?"})
        assert found.status_code == 200 and found.json()["results"][0]["document_id"] == memory_id
        context = client.post("/v1/recall/context", json={"query": "Ilse moved to Leeds in March", "max_tokens": 300})
        assert context.status_code == 200 and "Leeds" in context.text
        updated = client.patch(f"/v1/memories/{memory_id}", json={"content": "Ilse moved to York in May."})
        assert updated.status_code == 200 and updated.json()["version"] == 2
        handoff = client.post("/v1/handoffs", json={"project": "move", "goal": "Help Ilse move",
                                                    "expected_version": 0, "request_id": "req-e2e-01"})
        assert handoff.status_code == 200 and handoff.json()["author"] == "e2e"
        graph = client.get("/v1/graph", params={"seed": "document", "id": updated.json()["id"]})
        assert graph.status_code == 200 and graph.json()["totalDocuments"] >= 1
        assert client.post(f"/v1/memories/{memory_id}/forget", json={"mode": "soft"}).status_code == 200
        assert client.get("/v1/memories/search", params={"query": "Ilse"}).json()["total"] == 0
        assert client.get("/v1/memories").status_code == 200
    assert httpx.get(f"{server}/v1/memories").status_code == 401
    assert "graphmem_http_requests_total" in httpx.get(f"{server}/metrics").text


def test_rate_limits(runtime: Runtime, ns: str) -> None:
    """A short window set through configuration: the write after the limit is 429 with Retry-After, reads
    still pass, and the window recovers. The window is a moving one that starts at the first write: that
    write must not be the one that loads spaCy in this test process (about 2 s), or the window has moved on
    by the third."""
    runtime.service.add_memory(CallerContext.for_namespaces(ns), ns, DocumentInput(content="Warm up."))
    limited = Identity(runtime.identity.credentials, RateLimits(reads=50, writes=2, window_s=3,
                                                                storage_uri="memory://"), "default",
                       runtime.service.every_namespace)
    app = create_app(runtime=Runtime(runtime.settings, runtime.store, runtime.service, limited))
    new = NewCredential(name="busy", scopes=[Scope.read, Scope.write], namespaces=[ns])
    _, token = limited.create(new, by=OPERATOR)
    headers = {"Authorization": f"Bearer {token}"}
    with TestClient(app) as client:
        for number in range(2):
            assert client.post("/v1/remember", json={"content": f"Write {number}."}, headers=headers).status_code == 201
        refused = client.post("/v1/remember", json={"content": "One too many."}, headers=headers)
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        assert 1 <= int(refused.headers["retry-after"]) <= 3
        assert client.get("/v1/memories", headers=headers).status_code == 200  # reads have their own count
        time.sleep(3.2)
        assert client.post("/v1/remember", json={"content": "After the window."}, headers=headers).status_code == 201


def test_owner_made_once_and_an_outage_is_503_then_recovers(run_root: Path) -> None:
    with own_database("outage") as database, Runtime.open(make_settings(run_root / "outage", **database.settings)) \
            as own:
        made: list[Path | None] = []
        barrier = threading.Barrier(2)

        def claim() -> None:
            barrier.wait()
            made.append(own.identity.ensure_owner(own.settings.data_dir))

        racers = [threading.Thread(target=claim) for _ in range(2)]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join(60)
        assert len([m for m in made if m is not None]) == 1 and len(own.identity.list(by=OPERATOR)) == 1
        token_file = own.settings.data_dir / "owner-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        headers = {"Authorization": f"Bearer {token_file.read_text().strip()}"}
        with TestClient(create_app(runtime=own)) as client:
            assert client.get("/v1/memories", headers=headers).status_code == 200
            database.stop(own)
            started = time.perf_counter()
            down = client.get("/v1/memories", headers=headers)
            elapsed = time.perf_counter() - started
            assert down.status_code == 503 and down.json()["error"]["code"] == "unavailable"
            assert elapsed < 1.0, f"503 took {elapsed:.2f} s"
            print(f"503 while the engine is down: {elapsed * 1000:.0f} ms")
            database.start(own)
            deadline = time.monotonic() + 60
            while client.get("/v1/memories", headers=headers).status_code != 200:
                assert time.monotonic() < deadline, "the server did not recover after the engine came back"
                time.sleep(0.5)


def test_a_chunked_body_over_its_cap_is_413_in_the_envelope(server: str, runtime: Runtime, ns: str) -> None:
    """Without Content-Length the body is counted as it streams in, on every route, the MCP app's included."""
    new = NewCredential(name="chunked", scopes=[Scope.read, Scope.write], namespaces=[ns])
    headers = {"Authorization": f"Bearer {runtime.identity.create(new, by=OPERATOR)[1]}",
               "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def chunks() -> Iterator[bytes]:
        yield from (b"a" * 65_536 for _ in range(40))  # 2.5 MiB, over the 2 MiB cap

    for path in ("/v1/remember", "/graphql", "/mcp"):
        response = httpx.post(f"{server}{path}", content=chunks(), headers=headers, timeout=30)
        assert response.status_code == 413, (path, response.text)
        assert response.json()["error"] == {"code": "too_large", "message": "the request body is over 2097152 bytes",
                                            "details": {"max_bytes": 2097152}}
    small = httpx.post(f"{server}/v1/remember", content=iter([b'{"content": "Chunked, ', b'and small."}']),
                       headers=headers, timeout=30)
    assert small.status_code == 201, small.text


def test_twelve_writers_sharing_entities_all_get_201(server: str, runtime: Runtime, ns: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Concurrent remembers that merge the same entities conflict in the database and are retried there, for a
    time budget: none of them is answered 409 (or 503). Each remember writes alone here (no shared pass, which
    would put them in one transaction), as batches and updates from many callers still do."""
    monkeypatch.setattr(runtime.service, "coalescer", coalescer(runtime.service, window_ms=0))
    conflicts = in_flight = most_in_flight = 0
    attempt = GraphStore._once
    counting = threading.Lock()

    def counted(self: GraphStore, fn: Any, mode: str) -> Any:
        nonlocal conflicts, in_flight, most_in_flight
        with counting:
            in_flight += 1
            most_in_flight = max(most_in_flight, in_flight)
        try:
            return attempt(self, fn, mode)
        except Exception:
            conflicts += 1
            raise
        finally:
            with counting:
                in_flight -= 1

    monkeypatch.setattr(GraphStore, "_once", counted)
    tokens = [runtime.identity.create(NewCredential(name=f"writer-{n}", scopes=[Scope.read, Scope.write],
                                                    namespaces=[ns]), by=OPERATOR)[1] for n in range(12)]
    people = ["Priya Raman", "Tomas Berg", "Ada Quill", "Noor Haddad"]
    start = threading.Barrier(len(tokens))

    def write(number: int, token: str) -> list[int]:
        statuses = []
        with httpx.Client(base_url=server, headers={"Authorization": f"Bearer {token}"}, timeout=120) as client:
            start.wait()
            for turn in range(15):
                person = people[(number + turn) % len(people)]
                content = f"{person} joined Project Falcon in Lisbon (note {turn} of writer {number})."
                statuses.append(client.post("/v1/remember", json={"content": content}).status_code)
        return statuses

    with ThreadPoolExecutor(len(tokens)) as pool:
        statuses = [s for done in pool.map(write, range(len(tokens)), tokens) for s in done]
    assert statuses == [201] * 180, Counter(statuses)
    # The writers did meet each other: on the bundled engine a write that meets another fails and is tried
    # again; Neo4j's locks make the second wait for the first instead (a deadlock between them would be retried)
    assert most_in_flight > 1 and (conflicts > 0 or runtime.store.dialect.is_neo4j)
    falcon = query_entities(runtime, ns, "Project Falcon")
    assert falcon == 1  # one entity, merged by every writer
    # Each entity's type is also its label (for Browser), set after the write. Neo4j sets it under these
    # concurrent first writes; the bundled engine may refuse a label change that meets another one
    # (a SemanticError, logged), and the entity's next write puts it right.
    if not runtime.store.dialect.is_neo4j:
        people_and_places = " ".join(f"{person} visited Lisbon for Project Falcon." for person in people)
        assert httpx.post(f"{server}/v1/remember", json={"content": people_and_places},
                          headers={"Authorization": f"Bearer {tokens[0]}"}).status_code == 201
    assert unlabelled_entities(runtime, ns) == []


def unlabelled_entities(runtime: Runtime, ns: str) -> list[str]:
    """The entities of ``ns`` whose type is not (yet) one of their labels."""
    with graph_driver(runtime) as driver:
        rows = query(driver, "MATCH (e:Entity) WHERE e.namespace = $ns AND e.type IS NOT NULL "
                             "AND NOT e.type IN labels(e) RETURN e.name AS name", ns=ns)
    return sorted(row["name"] for row in rows)


def query_entities(runtime: Runtime, ns: str, name: str) -> int:
    with graph_driver(runtime) as driver:
        rows = query(driver, "MATCH (e:Entity) WHERE e.namespace = $ns AND e.name = $name RETURN count(e) AS n",
                     ns=ns, name=name)
    return int(rows[0]["n"])


def test_credentials_from_a_shell(runtime: Runtime, ns: str) -> None:
    environ = child_environment(runtime, embedder="hashing")
    base = [sys.executable, "-m", "graphmem.cli", "credentials"]
    data = ["--data-dir", str(runtime.settings.data_dir)]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args, *data], capture_output=True, text=True, timeout=300, env=environ,
                              check=False)

    created = run("create", "shell bot", "--scope", "read,write", "--namespace", ns, "--admin")  # a limited admin
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip()
    assert token.startswith("gm_") and token not in created.stderr
    listed = run("list", "--json")
    entry = next(c for c in json.loads(listed.stdout) if c["name"] == "shell bot")
    assert entry["scopes"] == ["read", "write"] and entry["namespaces"] == [ns] and entry["admin"]
    assert token not in listed.stdout
    assert runtime.identity.authenticate(token).id == entry["id"]
    assert run("revoke", entry["id"]).returncode == 0
    revoked = run("list", "--json")
    assert next(c for c in json.loads(revoked.stdout) if c["id"] == entry["id"])["revoked_at"]
    bad = run("create", "x", "--scope", "write", "--namespace", ns)
    assert bad.returncode == 2 and "read" in bad.stderr
