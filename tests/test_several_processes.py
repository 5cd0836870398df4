"""Several app processes on one database: three ``graphmem serve`` processes attached to one bundled engine
(started once with ``graphmem engine start``), or to one Neo4j in the Neo4j pass, with rate limits in Redis,
two with rate limits in memory (the negative control: their counts are not shared), and ``serve --workers``.

Each rule a team relies on when it runs more than one process is tried across processes: a credential made
on one works on the others and its revocation is refused by them within the credential cache's 5 s; a
credential's rate limit is one count across processes; a cursor from one continues on another; one
``request_id`` sent to two processes at once is one memory; an MCP call needs no session with the process
that answers it; each process reports its own readiness; a job is applied once by whichever process claims
it, and handed over after its lease when that process is killed with SIGKILL; and a Redis that goes away
makes calls 503, never uncounted.

Real parts only: a real engine, real ``redis-server`` (``.ci/run`` installs it; without it these tests fail
and say so), real processes. The hashing embedder and no warm-up searches keep them quick.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import neo4j
import pytest

from engines import ON_NEO4J
from graphmem.config import Settings
from graphmem.store.engine import BundledEngine
from helpers import free_port, own_store, query
from load import Serve, serve_env
from services import redis_process

pytestmark = pytest.mark.engine  # each test starts an engine of its own, through the CLI

READS_PER_WINDOW = 20  # small enough to exhaust in a test, large enough for the checks that read
LEASE_S = 2
START_S = 120  # a process's start on a busy two-core machine, imports and engine attach included


def graphmem(*args: str, env: dict[str, str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphmem.cli", *args], env=env, capture_output=True,
                          text=True, timeout=START_S, check=True, **kwargs)


def base_env(**settings: str) -> dict[str, str]:
    """What every process here gets on top of ``load.serve_env`` (none of the developer's GRAPHMEM_ settings)."""
    return serve_env("hashing", {
        "GRAPHMEM_WARM_UP_SEARCHES": "0", "GRAPHMEM_WARM_UP_EXPORTS": "0", "GRAPHMEM_JOB_LEASE_S": str(LEASE_S),
        "GRAPHMEM_RATE_LIMIT_READS": str(READS_PER_WINDOW),
        "GRAPHMEM_CURSOR_SECRET": "several-processes-share-this-cursor-secret-0123456789", **settings})


@contextmanager
def apps(count: int, data_dir: Path, env: dict[str, str], logs: Path, *args: str) -> Iterator[list[Serve]]:
    """``count`` serves on ``data_dir`` on free ports (``benchmarks/load.py``'s), started side by side, each
    ready; stopped at the end (and never waited for past its own exit: what happens to the engine is what the
    tests look at)."""
    started = [Serve(data_dir, env=env, log=logs / f"serve-{n}.log", owns_engine=False, args=args)
               for n in range(count)]
    try:
        for serve in started:
            serve.launch()
        for serve in started:
            serve.wait_ready(START_S)
        yield started
    finally:
        for serve in started:
            serve.stop()


@contextmanager
def redis_server(directory: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real redis-server on a free port (``benchmarks/services.py``), and its URI."""
    port = free_port()
    with redis_process(directory, port) as process:
        yield f"redis://127.0.0.1:{port}", process


@dataclass(frozen=True)
class Shared:
    """The database every serve of the module uses: its data directory (the owner's token; a bundled engine's
    files) and the settings that reach it (an external server's address)."""

    data_dir: Path
    settings: dict[str, str]

    def env(self, **settings: str) -> dict[str, str]:
        return base_env(**{f"GRAPHMEM_{name.upper()}": value for name, value in self.settings.items()}, **settings)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    """A bundled engine started once, detached, as an operator would (``graphmem engine start``), which every
    serve here attaches to and none stops; or, in the Neo4j pass, a new Neo4j database."""
    data_dir = tmp_path_factory.mktemp("several") / "data"
    if ON_NEO4J:
        with own_store(data_dir) as store:
            yield Shared(data_dir, store)
        return
    env = base_env()
    graphmem("engine", "start", "--data-dir", str(data_dir), env=env)
    try:
        yield Shared(data_dir, {})
        # every serve has stopped by now, and none of them stopped the engine it attached to
        assert json.loads(graphmem("engine", "status", "--json", "--data-dir", str(data_dir),
                                   env=env).stdout)["state"] == "running"
    finally:
        graphmem("engine", "stop", "--data-dir", str(data_dir), env=env)


@pytest.fixture(scope="module")
def graph(shared: Shared) -> Iterator[neo4j.Driver]:
    """An independent driver on the shared database, for checking what is really in the graph."""
    if ON_NEO4J:
        uri, auth = shared.settings["neo4j_uri"], (shared.settings["neo4j_user"], shared.settings["neo4j_password"])
    else:
        engine = BundledEngine(Settings(_env_file=None, data_dir=shared.data_dir))  # type: ignore[call-arg]
        uri, auth = engine.bolt_uri, ("root", engine.password())
    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
        yield driver


def owner(data_dir: Path) -> dict[str, str]:
    return {"Authorization": f"Bearer {(data_dir / 'owner-token').read_text().strip()}"}


def credential(app: Serve, headers: dict[str, str], namespace: str,
               scopes: str = "read_write") -> tuple[str, dict[str, str]]:
    """A credential of ``namespace`` made through ``app``: its id, and its bearer header."""
    made = httpx.post(app.url + "/api/credentials", headers=headers, timeout=30,
                      json={"name": f"c-{uuid.uuid4().hex[:6]}", "access": scopes, "namespaces": [namespace]})
    assert made.status_code == 201, made.text
    return made.json()["id"], {"Authorization": f"Bearer {made.json()['token']}"}


def remember(app: Serve, headers: dict[str, str], content: str, **fields: Any) -> httpx.Response:
    return httpx.post(app.url + "/v1/remember", headers=headers, json={"content": content, **fields}, timeout=60)


def reads_allowed(servers: list[Serve], headers: dict[str, str], reads: int) -> int:
    """How many of ``reads`` list calls, sent round-robin to ``servers``, are let through (others: 429)."""
    allowed = 0
    for number in range(reads):
        answer = httpx.get(servers[number % len(servers)].url + "/v1/memories", headers=headers, timeout=30)
        assert answer.status_code in (200, 429), answer.text
        allowed += answer.status_code == 200
    return allowed


def test_three_processes_share_one_database(shared: Shared, graph: neo4j.Driver, tmp_path: Path) -> None:
    with redis_server(tmp_path) as (redis_uri, redis), \
            apps(3, shared.data_dir, shared.env(GRAPHMEM_RATE_LIMIT_STORAGE=redis_uri), tmp_path) as servers:
        a, b, c = servers
        admin = owner(shared.data_dir)
        ns = f"mp-{uuid.uuid4().hex[:8]}"

        # each process reports its own readiness, and none of them owns a bundled engine
        engine = {"mode": "external"} if ON_NEO4J else {"mode": "bundled", "running": True, "owned": False}
        for app in servers:
            health = httpx.get(app.url + "/health", timeout=10).json()
            assert health["engine"] == {**engine, "reachable": True}

        # a credential made on one process works on every other
        made_id, made = credential(a, admin, ns)
        assert remember(b, made, "Ada Lovelace wrote the first program.").status_code == 201
        assert httpx.get(c.url + "/v1/memories", headers=made, timeout=30).json()["total"] == 1

        # a revocation on one is refused by every other within the credential cache's 5 s
        assert httpx.delete(a.url + f"/api/credentials/{made_id}", headers=admin, timeout=30).status_code == 200
        revoked_at = time.monotonic()
        for app in (b, c):
            while httpx.get(app.url + "/v1/memories", headers=made, timeout=30).status_code != 401:
                assert time.monotonic() - revoked_at < 5.5, f"{app.url} still accepts a revoked credential"
                time.sleep(0.25)

        # one count per credential across processes
        _, limited = credential(c, admin, ns, "read_only")
        assert reads_allowed(servers, limited, READS_PER_WINDOW + 3) == READS_PER_WINDOW

        # a cursor issued by one process continues on another
        _, writer = credential(b, admin, ns)
        for number in range(3):
            assert remember(a, writer, f"Memory number {number} of the cursor check.").status_code == 201
        first = httpx.get(a.url + "/v1/memories", headers=writer, params={"limit": 2}, timeout=30).json()
        second = httpx.get(b.url + "/v1/memories", headers=writer,
                           params={"limit": 2, "cursor": first["next_cursor"]}, timeout=30)
        assert second.status_code == 200, second.text
        seen = [m["id"] for m in first["memories"]] + [m["id"] for m in second.json()["memories"]]
        assert len(set(seen)) == len(seen) == 4

        # one request_id sent to two processes at once is one memory
        request_id = f"req-{uuid.uuid4().hex}"
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda app: remember(app, writer, "Grace Hopper found a moth in the relay.",
                                                         request_id=request_id), (a, c)))
        assert {answer.status_code for answer in answers} <= {200, 201}, [answer.text for answer in answers]
        assert len({answer.json()["id"] for answer in answers}) == 1
        assert query(graph, "MATCH (d:Document) WHERE d.namespace = $ns AND d.content STARTS WITH 'Grace' "
                            "RETURN count(d) AS n", ns=ns) == [{"n": 1}]

        # MCP without a session: initialised on one process, called on another
        mcp_headers = {**writer, "Accept": "application/json, text/event-stream"}
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        assert httpx.post(a.url + "/mcp", headers=mcp_headers, json=initialize, timeout=30).status_code == 200
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "list_memories", "arguments": {"limit": 10}}}
        answer = httpx.post(c.url + "/mcp", headers=mcp_headers, json=call, timeout=30)
        assert answer.status_code == 200, answer.text
        result = mcp_result(answer)
        assert not result.get("isError") and result["structuredContent"]["total"] == 5

        # a job is applied once by whichever process claims it; killed, it is handed over after its lease
        job_ns = f"job-{uuid.uuid4().hex[:8]}"
        _, jobs = credential(a, admin, job_ns)
        memories = [{"content": f"Katherine Johnson checked orbit number {n} by hand in Virginia."}
                    for n in range(400)]
        job_id = httpx.post(b.url + "/v1/jobs", headers=jobs, json={"memories": memories},
                            timeout=60).json()["job_id"]
        claimant = claimed_by(graph, job_id, servers)
        claimant.process.send_signal(signal.SIGKILL)
        claimant.process.wait(10)
        survivor = next(app for app in servers if app is not claimant)
        deadline = time.monotonic() + 180
        while (status := httpx.get(survivor.url + f"/v1/jobs/{job_id}", headers=jobs, timeout=30).json())[
                "status"] != "done":
            assert status["status"] in ("queued", "running"), status
            assert time.monotonic() < deadline, status
            time.sleep(0.5)
        assert status["attempts"] == 2
        owner_pid = query(graph, "MATCH (j:Job {id: $id}) RETURN j.lease_owner AS owner", id=job_id)[0]["owner"]
        assert owner_pid is None or f":{pid_of(claimant)}:" not in owner_pid
        assert query(graph, "MATCH (d:Document) WHERE d.namespace = $ns RETURN count(d) AS n, "
                            "count(DISTINCT d.content) AS distinct", ns=job_ns) == [{"n": 400, "distinct": 400}]

        # rate limits that cannot be counted are a 503, not a free pass
        redis.terminate()
        redis.wait(10)
        unreachable = httpx.get(survivor.url + "/v1/memories", headers=jobs, timeout=30)
        assert unreachable.status_code == 503 and unreachable.json()["error"]["code"] == "unavailable"


def claimed_by(graph: neo4j.Driver, job_id: str, servers: list[Serve]) -> Serve:
    """The process whose job worker holds the job's lease (its worker id names its PID), while it runs."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        rows = query(graph, "MATCH (j:Job {id: $id}) RETURN j.status AS status, j.lease_owner AS owner",
                     id=job_id)
        assert rows and rows[0]["status"] in ("queued", "running"), f"the job ended before it could be killed: {rows}"
        if rows[0]["status"] == "running":
            pid = int(rows[0]["owner"].split(":")[1])
            return next(app for app in servers if pid_of(app) == pid)
        time.sleep(0.05)
    raise AssertionError("no process claimed the job")


def pid_of(serve: Serve) -> int:
    assert serve.process is not None
    return serve.process.pid


def mcp_result(answer: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC result of a Streamable HTTP answer (a JSON body, or an event stream of one message)."""
    if answer.headers["content-type"].startswith("application/json"):
        message = answer.json()
    else:
        message = json.loads(next(line[5:] for line in answer.text.splitlines() if line.startswith("data:")))
    assert "result" in message, message
    return dict(message["result"])


def test_rate_limits_in_memory_are_counted_per_process(shared: Shared, tmp_path: Path) -> None:
    """The negative control of the shared count: two processes with the memory storage let a credential
    through twice as often, and each warns at start that it counts alone."""
    with apps(2, shared.data_dir, shared.env(), tmp_path) as servers:
        _, limited = credential(servers[0], owner(shared.data_dir), f"mem-{uuid.uuid4().hex[:8]}", "read_only")
        assert reads_allowed(servers, limited, READS_PER_WINDOW + 3) == READS_PER_WINDOW + 3
        for app in servers:
            assert "each process counts alone" in app.log.read_text()


def test_serve_with_workers_owns_its_engine_and_sums_its_metrics(tmp_path: Path) -> None:
    """``serve --workers 2`` on a data directory and a database of its own: the metrics of a scrape count the
    requests every worker answered; on the bundled engine the parent starts the engine (workers attach), and
    SIGTERM stops the engine too."""
    data_dir = tmp_path / "data"
    with own_store(data_dir) as store:
        serves_with_workers(Shared(data_dir, store), tmp_path)


def serves_with_workers(own: Shared, tmp_path: Path) -> None:
    # a read limit above the 30 reads: each worker counts alone, and the kernel may give one of them most
    data_dir, env = own.data_dir, own.env(GRAPHMEM_RATE_LIMIT_READS="100")
    with apps(1, data_dir, env, tmp_path, "--workers", "2") as (server,):
        headers = owner(data_dir)
        for _ in range(30):  # fresh connections: the kernel spreads them over the workers (all 30 on the worker
            # that answers the scrape, which would make the sum below pass without summing: 2^-30)
            assert httpx.get(server.url + "/v1/memories", headers=headers, timeout=30).status_code == 200
        engine = httpx.get(server.url + "/health", timeout=10).json()["engine"]
        assert engine.get("owned") is (None if ON_NEO4J else False)  # a worker's view
        metrics = httpx.get(server.url + "/metrics", timeout=10).text
        line = next(line for line in metrics.splitlines()
                    if line.startswith('graphmem_http_requests_total{method="GET",route="/v1/memories"'))
        assert float(line.rsplit(" ", 1)[1]) == 30
        assert "2 worker processes serve this port: each process counts alone" in server.log.read_text()
        if ON_NEO4J:
            return
        status = json.loads(graphmem("engine", "status", "--json", "--data-dir", str(data_dir), env=env).stdout)
        assert status["state"] == "running" and status["owner_pid"] == pid_of(server)
    status = json.loads(graphmem("engine", "status", "--json", "--data-dir", str(data_dir), env=env).stdout)
    assert status["state"] == "stopped"
