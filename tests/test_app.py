"""The HTTP app: /health on the shared runtime, and `graphmem serve` as a real process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from graphmem.app import create_app
from graphmem.runtime import Runtime
from helpers import engine_processes


def test_health_reports_engine_dialect_and_versions(runtime: Runtime) -> None:
    with TestClient(create_app(runtime=runtime)) as client:
        response = client.get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["dialect"] == "arcadedb"
    assert body["engine"] == {"mode": "bundled", "running": True, "owned": True, "reachable": True,
                              "data_dir": str(runtime.settings.data_dir.resolve())}
    assert body["versions"]["graphmem"] and "ArcadeDB" in body["versions"]["server"]
    assert body["schema_version"] >= 1
    assert runtime.engine is not None and runtime.engine.password() not in response.text


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_starts_owns_and_stops_the_engine(run_root: Path) -> None:
    data_dir = run_root / "serve"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    server = subprocess.Popen([sys.executable, "-m", "graphmem.cli", "serve", "--port", str(port),
                               "--data-dir", str(data_dir), "--log-level", "warning"], env=env,
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
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    deadline = time.monotonic() + 30
    while engine_processes(data_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not engine_processes(data_dir), "serve exited but its engine is still running"


def test_warm_up_touches_every_search_index(runtime: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("INFO", logger="graphmem.runtime"):
        runtime.warm_up()
    assert "warm-up done" in caplog.text and "warm-up failed" not in caplog.text
