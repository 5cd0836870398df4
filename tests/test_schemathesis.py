"""Schemathesis against a live server: the app on a real uvicorn server on 127.0.0.1, on a database of its own
(``isolated_store``: the run creates and revokes credentials), the OpenAPI document loaded from that server, and
every operation tried with generated requests (coverage, fuzzing and stateful phases; the document holds no
examples), a few each, with the owner's token.

Each answer must be no 5xx, a status the operation declares, a body that matches the declared schema and
content type, and a 405 with a complete ``Allow`` for a method the path does not declare. The seed is fixed, so
a run is repeatable; the schemathesis command line runs it in a process of its own, in a scratch directory
(nothing is cached or written in the repository).

The rest of this module covers what the runs found: methods a path does not answer (TRACE on every path,
``Allow`` naming every route of the path) and the errors the document declares."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphmem.app import create_app
from graphmem.identity import OPERATOR
from graphmem.identity.credentials import OWNER_TOKEN_FILE
from graphmem.runtime import Runtime
from helpers import isolated_store, served
from schemathesis_hooks import OWNER_ID

pytestmark = pytest.mark.engine  # starts engines or servers of its own

HOOKS = Path(__file__).with_name("schemathesis_hooks.py")
MAX_EXAMPLES = 25  # per operation and phase: the run takes about 30 s on two cores
SEED = 20_260_601
CHECKS = ["not_a_server_error", "status_code_conformance", "response_schema_conformance",
          "content_type_conformance", "unsupported_method", "allow_header_conformance"]
CHECKS_ON = "\n".join(f"{check}.enabled = true" for check in CHECKS)
CONFIG = f"""
seed = {SEED}
hooks = "{HOOKS}"
# One worker: with two, hypothesis parses lambdas' source in both threads at once, which CPython 3.11's ast
# module does not survive ("AST constructor recursion depth mismatch", a schemathesis error, not a finding).
workers = 1
request-timeout = 60

[generation]
max-examples = {MAX_EXAMPLES}
database = "none"

[cache]
enabled = false

[checks]
enabled = false
{CHECKS_ON}

# /v1/memories/search lies under /v1/memories/{{memory_id}} too ("search" is an id there), so PATCH and DELETE
# are routed on it and its Allow names them; the document lists only its GET. The path's Allow is right.
[[operations]]
include-path = "/v1/memories/search"
checks.allow_header_conformance.enabled = false
"""


@dataclass(frozen=True)
class Live:
    base_url: str
    token: str
    owner_id: str
    runtime: Runtime

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture(scope="module")
def live(runtime: Runtime, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """The app served on a store of its own, rate limits off (the run's few thousand calls would meet them),
    with the owner credential ``graphmem serve`` makes and the token it writes to the data directory."""
    data_dir = tmp_path_factory.mktemp("schemathesis-data")
    with isolated_store(runtime, data_dir, rate_limit_reads=0, rate_limit_writes=0) as store:
        assert store.identity.ensure_owner(data_dir) == data_dir / OWNER_TOKEN_FILE
        (owner,) = store.identity.list(by=OPERATOR)
        token = (data_dir / OWNER_TOKEN_FILE).read_text().strip()
        with served(create_app(runtime=store)) as base_url:
            yield Live(base_url, token, owner.id, store)


def test_schemathesis_finds_nothing(live: Live, tmp_path: Path) -> None:
    (tmp_path / "schemathesis.toml").write_text(CONFIG)
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(tmp_path / "schemathesis.toml"), "--no-color",
         "run", f"{live.base_url}/openapi.json", "--header", f"Authorization: Bearer {live.token}"],
        cwd=tmp_path, env={**os.environ, OWNER_ID: live.owner_id}, capture_output=True, text=True, timeout=240,
        check=False)
    took = time.monotonic() - started
    assert run.returncode == 0, f"schemathesis failed after {took:.0f} s:\n{run.stdout[-20_000:]}{run.stderr[-3000:]}"
    selected = re.search(r"Operations:\s+(\d+) selected / (\d+) total", run.stdout)
    assert selected and selected[1] == selected[2] and int(selected[1]) >= 37, run.stdout  # the public routes too
    assert not [c for c in live.runtime.identity.list(by=OPERATOR) if c.id == live.owner_id and c.revoked]
    assert httpx.get(f"{live.base_url}/api/credentials", headers=live.auth).status_code == 200


# ---- methods a path does not answer -------------------------------------------------------------------------

# (path, with the owner's token, the methods the path answers)
TRACED = [("/v1/memories", True, ["GET", "POST"]), ("/v1/memories/some-id", True, ["GET", "PATCH", "DELETE"]),
          ("/health", False, ["GET"]), ("/static/vendor/swagger-ui/swagger-ui.css", False, ["GET", "HEAD"]),
          ("/mcp", True, ["GET", "POST", "DELETE"]), ("/mcp", False, []), ("/nothing-here", True, []), ("/", False, [])]


@pytest.mark.parametrize(("path", "token", "allowed"), TRACED,
                         ids=[f"{path}{'' if token else ' no token'}" for path, token, _ in TRACED])
def test_trace_is_405_on_every_path(live: Live, path: str, token: bool, allowed: list[str]) -> None:
    """Known or unknown, with a token or without (the MCP app checks it before the method: its 401 names no
    method): 405 in the envelope, the path's own methods in ``Allow``, nothing of the request echoed back."""
    marker = "echo-me-7f3a"
    headers = {**(live.auth if token else {}), "X-Marker": marker}
    answer = httpx.request("TRACE", live.base_url + path, headers=headers)
    assert answer.status_code == 405, answer.text
    assert answer.headers["allow"] == ", ".join(allowed)
    assert answer.json()["error"] == {"code": "method_not_allowed", "message": "this route does not answer TRACE",
                                      "details": {"allow": allowed}}
    assert marker not in answer.text and live.token not in answer.text


@pytest.mark.parametrize(("path", "allowed"), [("/v1/memories", "GET, POST"), ("/api/credentials", "GET, POST"),
                                               ("/v1/entities", "POST, DELETE"), ("/v1/handoffs", "GET, POST")])
def test_allow_names_every_route_of_the_path(live: Live, path: str, allowed: str) -> None:
    """A path served by several routes (one per method) names them all: Starlette named only the first it
    found (``Allow: POST`` for ``/v1/memories``)."""
    for method in ("PUT", "OPTIONS"):
        answer = httpx.request(method, live.base_url + path, headers=live.auth)
        assert answer.status_code == 405 and answer.headers["allow"] == allowed, (method, answer.headers)
        assert answer.json()["error"]["details"]["allow"] == allowed.split(", ")


# ---- what the document declares -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def document(live: Live) -> dict[str, Any]:
    return httpx.get(f"{live.base_url}/openapi.json").raise_for_status().json()  # type: ignore[no-any-return]


def _statuses(document: dict[str, Any], method: str, path: str) -> list[str]:
    return sorted(document["paths"][path][method]["responses"])


@pytest.mark.parametrize(("method", "path", "statuses"), [
    ("get", "/v1/memories", ["200", "400", "401", "404", "422", "429", "503"]),
    ("patch", "/v1/memories/{memory_id}", ["200", "400", "401", "403", "404", "409", "413", "422", "429", "503"]),
    ("post", "/v1/entities", ["200", "400", "401", "403", "409", "413", "429", "503"]),  # its refusals are 400
    ("post", "/v1/jobs", ["202", "400", "401", "403", "413", "422", "429", "503"]),  # queued: nothing to conflict
    ("get", "/api/credentials", ["200", "401", "403", "429", "503"]),  # no input: nothing to refuse or find
    ("delete", "/api/credentials/{credential_id}", ["200", "400", "401", "403", "404", "409", "422", "429", "503"]),
    ("get", "/health", ["200", "503"]), ("get", "/ready", ["200", "503"]), ("get", "/metrics", ["200"]),
])
def test_the_document_declares_what_a_route_answers(document: dict[str, Any], method: str, path: str,
                                                    statuses: list[str]) -> None:
    assert _statuses(document, method, path) == statuses
    responses = document["paths"][path][method]["responses"]
    for status in statuses:
        if status.startswith(("4", "5")) and status != "422" and path.startswith(("/v1/", "/api/")):
            assert responses[status]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/ErrorOut"}, status


def test_every_authenticated_operation_declares_the_envelope(document: dict[str, Any]) -> None:
    assert document["components"]["schemas"]["ErrorOut"]["required"] == ["error"]
    assert document["components"]["schemas"]["ErrorBody"]["required"] == ["code", "message"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            authenticated = {"401", "429", "503"} <= set(operation["responses"])
            assert authenticated is (operation["tags"] != ["public"]), (method, path)
    pages = {path: operations["get"]["responses"]["200"]["content"] for path, operations in document["paths"].items()
             if path in ("/docs", "/redoc", "/graph", "/browser/guide.html", "/browser/graphmem.grass", "/metrics")}
    assert pages == {"/docs": {"text/html": {"schema": {"type": "string"}}},
                     "/redoc": {"text/html": {"schema": {"type": "string"}}},
                     "/graph": {"text/html": {"schema": {"type": "string"}}},
                     "/browser/guide.html": {"text/html": {"schema": {"type": "string"}}},
                     "/browser/graphmem.grass": {"text/plain": {"schema": {"type": "string"}}},
                     "/metrics": {"text/plain": {"schema": {"type": "string"}}}}
