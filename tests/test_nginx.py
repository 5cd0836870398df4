"""deploy/nginx.conf in front of two app servers: the real nginx (never skipped: .ci/run installs it) runs the
shipped file, with only its listen and upstream lines rewritten (benchmarks/services.py), before two uvicorn
servers of the app on this process's store. Through it: the /v1 API, its body caps (nginx's own 413 over 2 MiB,
10 MiB on /v1/jobs), a GraphQL subscription over WebSocket, the MCP SDK's client over Streamable HTTP, and a
replica stopped while nginx keeps answering. Its access log names the upstream of every request, which is how
the tests see that requests went to both servers."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from websockets.sync.client import connect
from websockets.typing import Subprotocol

from graphmem.app import create_app
from graphmem.runtime import Runtime
from helpers import free_port, served
from mcp_helpers import over_http
from services import running_nginx

MiB = 1024 * 1024
LOGGED = re.compile(r'"(?P<method>[A-Z]+) (?P<path>\S+) [^"]*" (?P<status>\d{3}) \d+ \S+ '
                    r'upstream="(?P<upstream>[^"]*)"')
JOB_SUBSCRIPTION = "subscription($id: ID!) { job(id: $id) { status memoryIds } }"


@dataclass
class Logged:
    method: str
    path: str
    status: int
    upstreams: list[str]  # the servers tried, in order ("127.0.0.1:1234"); none when nginx answered itself


@dataclass
class Proxy:
    url: str
    upstreams: list[str]  # host:port of each app server
    log: Path

    def mark(self) -> int:
        """Where the log ends now: ``since`` reads what was logged after it."""
        return self.log.stat().st_size

    def since(self, mark: int, count: int) -> list[Logged]:
        """The requests logged after ``mark``, once there are ``count`` (nginx logs a request after it has
        answered it, so the last one may come a moment later)."""
        deadline = time.monotonic() + 5
        while True:
            with self.log.open("rb") as handle:
                handle.seek(mark)
                text = handle.read().decode("utf-8", "replace")
            found = [Logged(m["method"], m["path"], int(m["status"]),
                            [] if m["upstream"] in ("", "-") else m["upstream"].split(", "))
                     for m in LOGGED.finditer(text)]
            if len(found) >= count or time.monotonic() > deadline:
                assert len(found) >= count, f"{count} requests expected in nginx's log, found: {text}"
                return found
            time.sleep(0.05)


def answered_by(entries: list[Logged]) -> set[str]:
    """The upstream that answered each request (the last one tried)."""
    return {entry.upstreams[-1] for entry in entries if entry.upstreams}


@pytest.fixture(scope="module")
def proxy(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    with served(create_app(runtime=runtime)) as first, served(create_app(runtime=runtime)) as second:
        upstreams = [first.removeprefix("http://"), second.removeprefix("http://")]
        port = free_port()
        with running_nginx(tmp_path_factory.mktemp("nginx"), port, upstreams) as log:
            yield Proxy(f"http://127.0.0.1:{port}", upstreams, log)


def test_remember_and_search_through_nginx_on_both_servers(proxy: Proxy, auth: dict[str, str]) -> None:
    mark = proxy.mark()
    with httpx.Client(base_url=proxy.url, headers=auth, timeout=30) as client:
        made = client.post("/v1/remember", json={"content": "Ines Duarte runs the Porto depot.", "path": "people"})
        assert made.status_code == 201, made.text
        found = client.get("/v1/memories/search", params={"query": "Who runs the Porto depot?"})
        assert found.status_code == 200 and found.json()["results"][0]["document_id"] == made.json()["id"]
    logged = proxy.since(mark, 2)
    assert [(e.method, e.status) for e in logged] == [("POST", 201), ("GET", 200)]
    assert answered_by(logged) == set(proxy.upstreams)  # round robin: one request each


def test_body_caps_are_graphmems_own(proxy: Proxy, auth: dict[str, str]) -> None:
    """Over 2 MiB, nginx answers 413 itself (no server tried); /v1/jobs takes up to 10 MiB, so 3 MiB reaches
    the app, which answers it (here 422: a job with no memories)."""
    mark = proxy.mark()
    headers = {**auth, "Content-Type": "application/json"}
    too_large = json.dumps({"content": "x" * (2 * MiB)}).encode()
    refused = httpx.post(f"{proxy.url}/v1/memories", content=too_large, headers=headers, timeout=30)
    assert refused.status_code == 413 and "nginx" in refused.text and "text/html" in refused.headers["content-type"]
    queued = json.dumps({"memories": [], "note": "x" * (3 * MiB)}).encode()
    answered = httpx.post(f"{proxy.url}/v1/jobs", content=queued, headers=headers, timeout=30)
    assert answered.status_code == 422 and answered.json()["detail"], answered.text[:300]  # the app's schema
    logged = proxy.since(mark, 2)
    assert logged[0].status == 413 and logged[0].upstreams == []
    assert logged[1].path == "/v1/jobs" and logged[1].status == 422 and len(logged[1].upstreams) == 1


def test_a_graphql_subscription_over_websocket_through_nginx(proxy: Proxy, runtime: Runtime,
                                                             auth: dict[str, str]) -> None:
    """The job's status as it is now, then its changes while the socket stays open through nginx."""
    mark = proxy.mark()
    job = httpx.post(f"{proxy.url}/v1/jobs", headers=auth, json={"memories": [{"content": "Queued via nginx."}]},
                     timeout=30)
    assert job.status_code == 202, job.text
    url = proxy.url.replace("http://", "ws://") + "/graphql"
    with connect(url, subprotocols=[Subprotocol("graphql-transport-ws")], proxy=None, open_timeout=10) as ws:
        ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": auth["Authorization"]}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "connection_ack"
        ws.send(json.dumps({"id": "1", "type": "subscribe",
                            "payload": {"query": JOB_SUBSCRIPTION, "variables": {"id": job.json()["job_id"]}}}))
        first = json.loads(ws.recv(timeout=10))
        assert first["type"] == "next" and first["payload"]["data"]["job"]["status"] == "queued", first
        assert runtime.job_worker().run_once()  # the served apps run no worker: the test is the worker
        statuses = []
        while (message := json.loads(ws.recv(timeout=30)))["type"] != "complete":
            statuses.append(message["payload"]["data"]["job"])
    assert statuses[-1]["status"] == "done" and len(statuses[-1]["memoryIds"]) == 1
    upgraded = proxy.since(mark, 2)[1]  # logged when the socket closed
    assert (upgraded.path, upgraded.status, len(upgraded.upstreams)) == ("/graphql", 101, 1)


def test_the_mcp_client_through_nginx_reaches_both_servers(proxy: Proxy, auth: dict[str, str]) -> None:
    """The SDK's client over Streamable HTTP: the server keeps no session, so its calls may go to either."""
    token = auth["Authorization"].removeprefix("Bearer ")
    mark = proxy.mark()

    async def main() -> None:
        async with over_http(f"{proxy.url}/mcp", token) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert {"add_memory", "search_memories"} <= tools
            added = await client.call_tool("add_memory", {"content": "Tomas Berg repairs the Oslo ferries."})
            assert not added.is_error and added.structured_content, added
            found = await client.call_tool("search_memories", {"query": "Who repairs the Oslo ferries?"})
            assert not found.is_error and found.structured_content, found
            assert found.structured_content["results"][0]["id"] == added.structured_content["id"]
        async with over_http(f"{proxy.url}/mcp/neo4j-memory", token) as client:
            assert "read_graph" in {tool.name for tool in (await client.list_tools()).tools}

    anyio.run(main)
    logged = [entry for entry in proxy.since(mark, 5) if entry.path.startswith("/mcp")]
    assert all(entry.status < 500 for entry in logged)
    assert answered_by([e for e in logged if e.method == "POST" and e.path == "/mcp"]) == set(proxy.upstreams)


def test_a_stopped_server_is_passed_over(runtime: Runtime, auth: dict[str, str], tmp_path: Path) -> None:
    """Passive health: with one of two servers stopped, every request still succeeds (a refused connection is
    passed on, POSTs included, since nothing was sent), and after max_fails (2) refused tries nginx does not
    try the stopped one again within fail_timeout."""
    with ExitStack() as stays, ExitStack() as stops:
        staying = stays.enter_context(served(create_app(runtime=runtime))).removeprefix("http://")
        stopping = stops.enter_context(served(create_app(runtime=runtime))).removeprefix("http://")
        port = free_port()
        log = stays.enter_context(running_nginx(tmp_path / "nginx", port, [staying, stopping]))
        proxy = Proxy(f"http://127.0.0.1:{port}", [staying, stopping], log)
        with httpx.Client(base_url=proxy.url, headers=auth, timeout=30) as client:
            mark = proxy.mark()
            assert [client.get("/v1/memories").status_code for _ in range(2)] == [200, 200]
            assert answered_by(proxy.since(mark, 2)) == {staying, stopping}
            stops.close()  # the second server exits
            mark = proxy.mark()
            for number in range(4):  # writes first: round robin sends one of the first two to the stopped server
                made = client.post("/v1/remember", json={"content": f"Written with a server down, {number}."})
                assert made.status_code == 201, made.text
            assert [client.get("/v1/memories").json()["total"] for _ in range(4)] == [4] * 4
        logged = proxy.since(mark, 8)
        assert all(entry.upstreams[-1] == staying for entry in logged)
        tried = [entry for entry in logged if stopping in entry.upstreams]
        assert len(tried) == 2, [entry.upstreams for entry in logged]  # max_fails=2 in deploy/nginx.conf
        assert tried[0].method == "POST" and tried[0].upstreams == [stopping, staying]
        assert "upstream server temporarily disabled" in log.read_text()
