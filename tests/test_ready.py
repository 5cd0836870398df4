"""/ready and /health's "warming": searches are slow while models load and while the database builds its
search indexes in the background (graphmem/store/settling.py); /ready answers 503 until both are done."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.model import CallerContext, DocumentInput
from graphmem.runtime import Runtime
from graphmem.store.settling import TTL_S, IndexSettling, vector_index_busy
from helpers import make_settings


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
    """An engine HTTP API that cannot be reached (port 9) is logged once per time limit, never raised:
    /health reports an unreachable database through its own ping."""
    settling = IndexSettling(runtime.store, ("http://127.0.0.1:9", ("root", "wrong")))
    with caplog.at_level("WARNING", logger="graphmem.store.settling"):
        assert settling.busy() is False and settling.busy() is False
    assert caplog.text.count("could not read whether the search indexes are being built") == 1


def test_ready_waits_for_the_warm_up_and_the_engine_s_first_index_builds(run_root: Path) -> None:
    """A fresh engine: a batch of 120 facts leaves the facts' vector index due for a rebuild (its threshold is
    100 writes), so /ready is 503 with "indexes" and /health 200 "warming"; the engine rebuilds it after 15 s
    without writes, and /ready turns 200. Later builds leave /ready at 200 (/health still says "warming"):
    a load balancer keeps a server that answers. While start_serving's warm-up runs, /ready waits for
    "models"."""
    with Runtime.open(make_settings(run_root / "ready")) as runtime, TestClient(create_app(runtime=runtime)) as client:
        ctx = CallerContext.for_namespaces("ready")

        def ingest(first: int) -> None:
            sentences = [f"Ana moved team {i} to Kafka in week {i}." for i in range(first, first + 120)]
            runtime.service.add_documents(ctx, "ready", [DocumentInput(content=" ".join(sentences[i:i + 12]))
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
