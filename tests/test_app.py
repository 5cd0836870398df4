"""The HTTP app: /health on the shared runtime, and `graphmem serve` as a real process."""

from __future__ import annotations

import http.client
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import neo4j
import pytest
from fastapi.testclient import TestClient

from engines import BundledOnly, bundled_only
from graphmem.app import create_app
from graphmem.errors import GraphmemError, Unavailable
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext, DocumentInput, ExportRequest, QuerySeed, SearchRequest
from graphmem.results import ExportResult, FactHit
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from graphmem.service.exporting import Exporting
from graphmem.service.search import Search
from graphmem.service.shared import Core
from helpers import child_environment, engine_processes, make_settings, own_database, query, store_password
from secret_scan import leaks

pytestmark = pytest.mark.engine  # starts engines or servers of its own


def test_health_reports_engine_dialect_and_versions_and_a_path_only_to_an_admin(runtime: Runtime) -> None:
    admin = runtime.identity.create(NewCredential(name="ops", scopes=[Scope.read], namespaces=["*"], admin=True),
                                    by=OPERATOR)[1]
    plain = runtime.identity.create(NewCredential(name="app", scopes=[Scope.read], namespaces=["*"]), by=OPERATOR)[1]
    with TestClient(create_app(runtime=runtime)) as client:
        public = client.get("/health")
        answers = [client.get("/health", headers={"Authorization": f"Bearer {token}"})
                   for token in (plain, "gm_" + "x" * 43, admin)]
    assert public.status_code == 200
    body = public.json()
    # "warming" while the shared engine rebuilds an index after the other tests' writes (test_ready covers it)
    assert body["status"] in ("ok", "warming") and body["schema_version"] >= 1 and body["versions"]["graphmem"]
    for answer in (public, *answers):
        assert store_password(runtime) not in answer.text
    if runtime.engine is None:  # Neo4j: a server graphmem neither starts nor knows the files of
        assert body["dialect"] == "neo4j" and body["versions"]["server"].startswith("Neo4j/5.26.")
        assert all(answer.json()["engine"] == {"mode": "external", "reachable": True} for answer in (public, *answers))
        return
    assert body["dialect"] == "arcadedb"
    assert body["engine"] == {"mode": "bundled", "running": True, "owned": True, "reachable": True}
    assert "ArcadeDB" in body["versions"]["server"]
    engine_pid = str(runtime.engine.status().state.pid)  # type: ignore[union-attr]
    for answer in (public, *answers[:2]):  # no path or PID without an admin's token
        assert answer.json()["engine"] == body["engine"]
        assert str(runtime.settings.data_dir.resolve()) not in answer.text
    assert answers[2].json()["engine"] == {**body["engine"], "data_dir": str(runtime.settings.data_dir.resolve()),
                                           "pid": int(engine_pid)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@bundled_only(BundledOnly.process)
def test_serve_starts_owns_and_stops_the_engine(run_root: Path) -> None:
    data_dir = run_root / "serve"
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port", str(port),
                               "--data-dir", str(data_dir), "--log-level", "info"], env=child_environment(),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except httpx.TransportError:
                assert server.poll() is None, server.stdout.read() if server.stdout else ""
                assert time.monotonic() < deadline, "serve did not answer /health in time"
                time.sleep(0.3)
        assert response.status_code == 200 and response.json()["engine"]["owned"] is True
        assert len(engine_processes(data_dir)) == 1
        for _ in range(3):
            assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=5).status_code == 200
        # a connection idle for longer than a client's pool keeps one (httpx: 5 s) is still open for the next
        # call: the server never closes it as the client sends on it
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            for _ in range(2):
                connection.request("GET", "/health")
                answer = connection.getresponse()
                assert answer.status == 200 and answer.read() and not answer.will_close
                time.sleep(6)
            connection.request("GET", "/health")  # on the same socket: the server would have closed it at 5 s
            assert connection.getresponse().status == 200
        finally:
            connection.close()
    finally:
        server.send_signal(signal.SIGTERM)
        output, _ = server.communicate(timeout=60)
    # quiet by default: the schema's HTTP calls and the probes leave no line at info level
    assert "connected to" in output and "HTTP Request" not in output and "/health" not in output, output
    deadline = time.monotonic() + 30
    while engine_processes(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not engine_processes(data_dir), "serve exited but its engine is still running"


def test_warm_up_touches_every_search_index(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="graphmem.runtime"):
        runtime.warm_up()
    assert "warm-up done" in caplog.text and "warm-up failed" not in caplog.text


def test_warm_up_searches_the_largest_namespace(runtime: Runtime, graph: neo4j.Driver,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for ns, texts in ((f"warm-{uuid.uuid4().hex[:8]}", ["Kafka streams events.", "Alice chose Kafka."]),
                      (f"warm-{uuid.uuid4().hex[:8]}", ["Bob likes tea."])):
        runtime.service.add_memories(CallerContext.for_namespaces(ns), ns, [DocumentInput(content=t) for t in texts])
    rows = query(graph, "MATCH (d:Document) WHERE d.namespace <> '_system' "
                        "RETURN d.namespace AS ns, count(d) AS n")
    largest = min(rows, key=lambda r: (-r["n"], r["ns"]))["ns"]
    searched: list[tuple[frozenset[str], str]] = []
    original = Search.facts

    def facts(self: Search, ctx: CallerContext, request: SearchRequest) -> list[FactHit]:
        searched.append((ctx.read, request.query))
        return original(self, ctx, request)

    monkeypatch.setattr(Search, "facts", facts)
    for count in (0, 5):
        settings = runtime.settings.model_copy(update={"warm_up_searches": count})
        MemoryService(runtime.store, settings, runtime.service.pipeline, runtime.service.core.cursors).warm_up()
        assert len(searched) == count
    assert {ns for ns, _ in searched} == {frozenset({largest})} and len({q for _, q in searched}) == 5


def test_warm_up_exports_in_the_largest_namespace(runtime: Runtime, monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The exports run where the searches do (``Core.largest_namespace``, whose choice the test above checks);
    here that is this test's own namespace, which other tests on this worker may outgrow."""
    ns = f"warm-{uuid.uuid4().hex[:8]}"
    runtime.service.add_memories(CallerContext.for_namespaces(ns), ns, [
        DocumentInput(content=t) for t in ["Kafka streams events.", "Alice chose Kafka.", "Bob runs Kafka.",
                                           "Carol reviews the release."]])
    monkeypatch.setattr(Core, "largest_namespace", lambda self: ns)
    exported: list[tuple[frozenset[str], str, int]] = []
    original = Exporting.export

    def export(self: Exporting, ctx: CallerContext, namespace: str, request: ExportRequest) -> ExportResult:
        result = original(self, ctx, namespace, request)
        assert isinstance(request.seed, QuerySeed)
        exported.append((ctx.read, namespace, len(result.nodes)))
        return result

    monkeypatch.setattr(Exporting, "export", export)
    for count in (0, 3):
        settings = runtime.settings.model_copy(update={"warm_up_exports": count})
        MemoryService(runtime.store, settings, runtime.service.pipeline, runtime.service.core.cursors).warm_up()
        assert len(exported) == count
    assert {(read, namespace) for read, namespace, _ in exported} == {(frozenset({ns}), ns)}
    assert all(nodes > 0 for _, _, nodes in exported)  # real walks, from the facts a search found

    def failing(self: Exporting, ctx: CallerContext, namespace: str, request: ExportRequest) -> ExportResult:
        raise Unavailable("the database went away")

    monkeypatch.setattr(Exporting, "export", failing)
    settings = runtime.settings.model_copy(update={"warm_up_exports": 3})
    with caplog.at_level("WARNING", logger="graphmem.service.memory"):
        MemoryService(runtime.store, settings, runtime.service.pipeline, runtime.service.core.cursors).warm_up()
    assert "warm-up exports failed" in caplog.text  # logged, not raised: the models and indexes are loaded


def test_health_is_503_never_500_while_the_engine_stops(run_root: Path) -> None:
    with own_database("stopping") as database, Runtime.open(make_settings(run_root / "stopping", **database.settings)) \
            as own, TestClient(create_app(runtime=own)) as client:
        assert client.get("/health").status_code == 200
        stopper = threading.Thread(target=database.stop, args=(own,))
        stopper.start()
        statuses = []
        while stopper.is_alive() or len(statuses) < 5:
            statuses.append(client.get("/health").status_code)
        stopper.join()
        final = client.get("/health")
        assert set(statuses) <= {200, 503} and final.status_code == 503, statuses
        assert final.json()["status"] == "unavailable" and final.json()["engine"]["reachable"] is False


def test_an_internal_rejection_logs_the_reference_it_returns(runtime: Runtime,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("ERROR", logger="graphmem.store.driver"), pytest.raises(GraphmemError) as raised:
        runtime.store.read(lambda tx: tx.run("documents_get"))  # a statement sent without its parameters
    ref = raised.value.details["ref"]
    assert raised.value.code == "internal" and "$" not in raised.value.message
    (line,) = [record.getMessage() for record in caplog.records if ref in record.getMessage()]
    assert "statement documents_get" in line and not leaks(line), line  # named, never quoted
