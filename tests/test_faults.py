"""Faults a server lives through: ``graphmem serve`` killed with SIGKILL while it applies a job, and a write while
the database is down. Acknowledged work is applied exactly once; a refused write leaves nothing behind.

(The worker killed inside a job's transaction is in ``test_jobs.py``; the engine killed under a running server,
and its restart, in ``test_engine.py``.)
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import httpx
import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext
from graphmem.runtime import Runtime
from helpers import (
    child_environment,
    engine_processes,
    free_port,
    graph_driver,
    make_settings,
    own_database,
    own_store,
    query,
)

pytestmark = pytest.mark.engine  # starts engines or servers of its own

NS = "faults"


def until(check: Callable[[], Any], seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@contextmanager
def serving(data_dir: Path, port: int, **settings: str) -> Iterator[subprocess.Popen[str]]:
    """``graphmem serve`` on ``data_dir`` with the fast test embedder and ``settings`` (``GRAPHMEM_`` names,
    lower-case), ready to answer; stopped (SIGTERM) at the end unless the test killed it."""
    env = child_environment(embedder="hashing", **settings)
    server = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port", str(port), "--data-dir",
                               str(data_dir), "--log-level", "warning"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)

    def ready() -> bool:
        assert server.poll() is None, server.stdout.read() if server.stdout else "serve exited"
        try:
            return httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    try:
        until(ready, 120, "serve to be ready")
        yield server
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=60)
        until(lambda: not engine_processes(data_dir), 30, "the engine of serve to stop")


def wait_for_line(stream: IO[str] | None, text: str, seconds: float) -> None:
    assert stream is not None
    deadline = time.monotonic() + seconds
    while text not in stream.readline():
        assert time.monotonic() < deadline, f"no line with {text!r}"


def test_serve_killed_while_applying_a_job_applies_it_once_after_a_restart(run_root: Path) -> None:
    """The job's transaction is open (a fault point holds it) when serve is SIGKILLed (a bundled engine with it);
    serve started again on the same data directory takes the job over after its lease: one memory, job done."""
    data_dir, port = run_root / "serve-killed-in-a-job", free_port()
    url = f"http://127.0.0.1:{port}"
    with own_store(data_dir) as store:
        with serving(data_dir, port, fault_point="job-before-commit", job_lease_s="2", **store) as server:
            auth = {"Authorization": f"Bearer {(data_dir / 'owner-token').read_text().strip()}"}
            job = httpx.post(f"{url}/v1/jobs", headers=auth, json={
                "scope": NS, "memories": [{"content": "Applied exactly once, whatever happens to the server."}]})
            assert job.status_code == 202, job.text
            job_id = job.json()["job_id"]
            wait_for_line(server.stdout, "fault point reached", 60)
            assert httpx.get(f"{url}/v1/jobs/{job_id}", headers=auth).json()["status"] == "running"
            server.send_signal(signal.SIGKILL)
            server.wait(10)
        with serving(data_dir, port, job_lease_s="2", **store):
            done = until(lambda: (answer := httpx.get(f"{url}/v1/jobs/{job_id}", headers=auth).json())["status"]
                         in ("done", "failed") and answer, 60, "the job to finish")
            assert done["status"] == "done" and done["attempts"] == 2
            listed = httpx.get(f"{url}/v1/memories", headers=auth, params={"scope": NS}).json()
            assert listed["total"] == 1 and listed["memories"][0]["id"] == done["document_ids"][0]


def test_a_write_while_the_engine_is_down_is_503_and_leaves_nothing_half_written(tmp_path: Path) -> None:
    """The database killed under a server: a write answers 503 at once and stores nothing; once the database is
    back (the bundled engine restarted by the server's watch, Neo4j by its operator), the same request (its
    request_id) stores the memory once."""
    with own_database("killed") as database:
        runtime = Runtime.open(make_settings(tmp_path, **database.settings), own_engine=True)
        _, token = runtime.identity.create(NewCredential(name="w", scopes=[Scope.read, Scope.write],
                                                         namespaces=[NS]), by=OPERATOR)
        auth = {"Authorization": f"Bearer {token}"}
        write = {"content": "Written once, after the outage. Not half before it.", "request_id": "outage-0001"}
        stop = runtime.start_serving()
        try:
            with TestClient(create_app(runtime=runtime)) as client:
                database.kill(runtime)
                seen = "restarting" if runtime.engine is not None else "unavailable"
                until(lambda: client.get("/health").json()["status"] == seen, 5, "the outage to be seen")
                refused = client.post("/v1/remember", headers=auth, json=write)
                assert refused.status_code == 503 and refused.json()["error"]["code"] == "unavailable", refused.text
                if runtime.engine is None:
                    database.start(runtime)
                until(lambda: client.get("/ready").status_code == 200, 60, "the database to be back")
                with graph_driver(runtime) as driver:
                    left = query(driver, "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=NS)
                assert left == [{"c": 0}], "the refused write left nodes behind"
                stored = client.post("/v1/remember", headers=auth, json=write)
                again = client.post("/v1/remember", headers=auth, json=write)
                assert stored.status_code == 201 and again.json()["id"] == stored.json()["id"]
                assert len(runtime.service.list_memories(CallerContext.for_namespaces(NS), NS).items) == 1
        finally:
            stop()
            runtime.close()
