"""/ready and /health's "warming": searches are slow while models load and while the database builds its
search indexes in the background (graphmem/store/settling.py); /ready answers 503 until both are done."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from engines import BundledOnly, bundled_only
from graphmem.app import create_app
from graphmem.errors import ModelsLoading
from graphmem.model import CallerContext, DocumentInput
from graphmem.nlp.loading import loaded
from graphmem.runtime import Runtime
from graphmem.store.driver import GraphStore
from graphmem.store.settling import TTL_S, IndexSettling, vector_index_busy
from helpers import child_environment, free_port, make_settings, new_database, own_store

pytestmark = pytest.mark.engine  # starts engines or servers of its own


def test_the_busy_rule_on_states_the_engine_reported() -> None:
    """States as the bundled engine reported them while a build was due, running, or not needed."""
    idle = {"mutationsSinceRebuild": 0, "asyncRebuildInProgress": 0, "graphNodeCount": 40_000,
            "effectiveMutationsThreshold": 8_000}
    assert not vector_index_busy(idle)
    assert vector_index_busy({**idle, "asyncRebuildInProgress": 1})  # a rebuild runs
    assert vector_index_busy({**idle, "mutationsSinceRebuild": 8_000})  # due: the next search starts one
    assert not vector_index_busy({**idle, "mutationsSinceRebuild": 960})  # left until the next writes: not slow
    assert not vector_index_busy({**idle, "graphNodeCount": 12, "effectiveMutationsThreshold": 100,
                                  "mutationsSinceRebuild": 3})  # a few writes on a small graph: searches stay fast
    assert not vector_index_busy({})  # nothing known is nothing pending


def test_a_look_that_fails_is_not_busy_and_is_cached(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    """Where the index states cannot be read (port 9: the bundled engine's HTTP API, or Neo4j's Bolt) the failure
    is logged once per time limit, never raised: /health reports an unreachable database through its own ping."""
    unreachable = GraphStore(GraphStore.open_driver("bolt://127.0.0.1:9", "neo4j", "wrong", 0.5),
                             runtime.store.database, runtime.store.dialect, transaction_timeout_s=1, retry_budget_s=0)
    http = None if runtime.store.dialect.is_neo4j else ("http://127.0.0.1:9", ("root", "wrong"))
    settling = IndexSettling(unreachable if http is None else runtime.store, http)
    with caplog.at_level("WARNING", logger="graphmem.store.settling"):
        assert settling.busy() is False and settling.busy() is False
    assert caplog.text.count("could not read whether the search indexes are being built") == 1
    unreachable.close()


@bundled_only(BundledOnly.index_rebuilds)
def test_ready_waits_for_the_engine_s_first_index_builds(run_root: Path) -> None:
    """A fresh engine: a batch of 120 facts leaves the facts' vector index due for a rebuild (its threshold is
    100 writes), so /ready is 503 with "indexes" and /health 200 "warming"; the engine rebuilds it after 15 s
    without writes, and /ready turns 200. Later builds leave /ready at 200 (/health still says "warming"):
    a load balancer keeps a server that answers."""
    with Runtime.open(make_settings(run_root / "ready")) as runtime, TestClient(create_app(runtime=runtime)) as client:
        ctx = CallerContext.for_namespaces("ready")

        def ingest(first: int) -> None:
            sentences = [f"Ana moved team {i} to Kafka in week {i}." for i in range(first, first + 120)]
            runtime.service.add_memories(ctx, "ready", [DocumentInput(content=" ".join(sentences[i:i + 12]))
                                                         for i in range(0, 120, 12)])
            time.sleep(TTL_S)  # the answer is cached this long

        ingest(0)
        waiting = client.get("/ready")
        assert waiting.status_code == 503 and waiting.json() == {"status": "warming", "waiting_for": ["indexes"]}
        health = client.get("/health")
        assert health.status_code == 200 and health.json()["status"] == "warming"
        deadline = time.monotonic() + 120
        while client.get("/ready").status_code != 200:
            assert time.monotonic() < deadline, "the engine's index builds did not settle in 2 minutes"
            time.sleep(1)
        assert client.get("/ready").json() == {"status": "ready"} and client.get("/health").json()["status"] == "ok"

        ingest(1000)  # due again; ready once, ready still
        assert client.get("/health").json()["waiting_for"] == ["indexes"]
        assert client.get("/ready").status_code == 200


def test_ready_waits_for_the_warm_up(run_root: Path) -> None:
    """While start_serving's warm-up runs, /ready waits for "models"."""
    data_dir = run_root / "warm-up"
    with own_store(data_dir) as store, Runtime.open(make_settings(data_dir, **store)) as runtime, \
            TestClient(create_app(runtime=runtime)) as client:
        release = threading.Event()
        warm_up = runtime.service.warm_up
        runtime.service.warm_up = lambda: (release.wait(30), warm_up())  # type: ignore[method-assign]
        stop = runtime.start_serving()
        try:
            assert client.get("/ready").json() == {"status": "warming", "waiting_for": ["models"]}
            release.set()
            deadline = time.monotonic() + 30
            while client.get("/ready").status_code != 200:
                assert time.monotonic() < deadline, "the warm-up did not end"
                time.sleep(0.2)
        finally:
            release.set()
            stop()


def test_first_users_of_a_model_share_one_load_and_wait_for_it_a_bounded_time() -> None:
    """Eight first users at once (a barrier): one load, on the loading thread; those that wait 0.2 s hear
    ModelsLoading (503, Retry-After) while it goes on, the others get the one model. A failed load is tried
    again by the next user."""
    gate, loads = threading.Event(), []
    key = ("test-model", uuid.uuid4().hex)

    def load() -> object:
        loads.append(threading.current_thread().name)
        gate.wait(30)
        return object()

    start = threading.Barrier(8)
    got: dict[int, object] = {}

    def use(number: int) -> None:
        start.wait()
        try:
            got[number] = loaded(key, "test model", load, 0.2 if number < 4 else None)
        except ModelsLoading as exc:
            got[number] = exc

    users = [threading.Thread(target=use, args=(n,)) for n in range(8)]
    for user in users:
        user.start()
    for user in users[:4]:
        user.join(10)
    gate.set()
    for user in users[4:]:
        user.join(10)
    assert len(loads) == 1 and loads[0].startswith("graphmem-models")
    refused = [got[n] for n in range(4)]
    assert all(isinstance(e, ModelsLoading) and e.http_status == 503 and e.details["retry_after"] > 0
               for e in refused)
    assert len({id(got[n]) for n in range(4, 8)}) == 1 and not isinstance(got[4], Exception)

    failing = ("failing-model", uuid.uuid4().hex)
    attempts = iter([RuntimeError("corrupt file"), "model"])

    def flaky() -> str:
        outcome = next(attempts)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    with pytest.raises(RuntimeError):
        loaded(failing, "flaky model", flaky, None)
    assert loaded(failing, "flaky model", flaky, None) == "model"


def test_requests_to_a_cold_server_wait_for_the_models_or_hear_503_never_500(runtime: Runtime,
                                                                             tmp_path: Path) -> None:
    """A cold `graphmem serve` (the default embedder, exported at first use into a new data directory), sent
    writes and searches from eight threads as soon as it answers, before /ready: each is 2xx, or 503 with
    Retry-After while a model loads for longer than GRAPHMEM_MODEL_WAIT_S (0.5 s here); none fails otherwise,
    and every one gets through."""
    port = free_port()
    with new_database(runtime) as database:
        env = child_environment(**database, model_wait_s="0.5", warm_up_searches="0", warm_up_exports="0")
        server = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port", str(port), "--data-dir",
                                   str(tmp_path), "--log-level", "warning"], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"{base}/health", timeout=2)
                    break
                except httpx.TransportError:
                    assert server.poll() is None and time.monotonic() < deadline, "serve did not answer"
                    time.sleep(0.1)
            assert httpx.get(f"{base}/ready").status_code == 503  # still loading: the requests come before /ready
            token = (tmp_path / "owner-token").read_text().strip()
            seen: list[tuple[int, bool]] = []  # (status, carried Retry-After)

            def client(number: int) -> None:
                with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
                    while time.monotonic() < deadline + 120:
                        if number % 2:
                            answer = http.get("/v1/memories/search", params={"query": f"harbour {number}"})
                        else:
                            answer = http.post("/v1/remember", json={"content": f"Ship {number} left Harbour Nine."})
                        seen.append((answer.status_code, "retry-after" in answer.headers))
                        if answer.status_code != 503:
                            return
                        time.sleep(0.2)

            clients = [threading.Thread(target=client, args=(n,)) for n in range(8)]
            for thread in clients:
                thread.start()
            for thread in clients:
                thread.join(180)
        finally:
            server.terminate()
            output, _ = server.communicate(timeout=60)
    assert all(status in (200, 201) or (status == 503 and retry) for status, retry in seen), (seen, output)
    assert sum(status in (200, 201) for status, _ in seen) == 8, seen  # every client got through
    assert any(status == 503 for status, _ in seen), seen  # some came while a model loaded past the wait
    assert "Traceback" not in output and "ImportError" not in output, output


def test_a_warm_up_cut_short_by_closing_is_no_error(runtime: Runtime, tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    """A stdio client may leave while ``graphmem mcp`` still warms up: the closed driver stops the warm-up,
    which says so instead of logging a failure with its traceback (the store still logs its one line)."""
    with new_database(runtime) as database:
        opened = Runtime.open(make_settings(tmp_path, **database, warm_up_searches=1))
        opened.close()
        with caplog.at_level("INFO", logger="graphmem.runtime"):
            opened.warm_up()
    assert "warm-up stopped: the server is shutting down" in caplog.text
    assert not [r for r in caplog.records if r.name == "graphmem.runtime" and r.levelname == "ERROR"]
