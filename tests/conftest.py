"""One store per test process (the README runs two): a real bundled engine over Bolt, or a real Neo4j with
``GRAPHMEM_TEST_ENGINE=neo4j`` (``engines.py``); a fresh namespace per test.

Graph checks in tests use their own driver and their own Cypher, independent of the code under test.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import neo4j
import pytest
from fastapi.testclient import TestClient

from engines import ON_NEO4J, open_servers, servers
from graphmem.app import create_app
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.model import CallerContext
from graphmem.runtime import Runtime
from graphmem.service import MemoryService
from graphmem.store.engine import BundledEngine
from helpers import engine_processes, graph_driver, make_settings, query

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest_plugins = ["export_helpers"]  # the export modules' fixtures (spy, chain, hub)

# What a test needs, as a marker: ``browser`` (headless Chromium; the module says so), ``engine`` (the bundled
# engine: the session's, through the ``runtime`` fixture, or its own; a module that starts one itself says
# so), else ``unit``: ``pytest -m unit`` is the fast subset, and a unit test that starts an engine fails.
ENGINE_FIXTURES = {"runtime"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("browser") or item.get_closest_marker("engine"):
            continue
        needs_engine = ENGINE_FIXTURES & set(getattr(item, "fixturenames", ()))
        item.add_marker(pytest.mark.engine if needs_engine else pytest.mark.unit)


@pytest.fixture(autouse=True)
def start_no_engine_unasked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit test starts no engine; and in the Neo4j pass no test starts a bundled engine, which would quietly
    test the bundled engine again instead of Neo4j (``helpers.own_store`` gives a test a store of its own)."""
    if request.node.get_closest_marker("unit") is not None:
        why = "is marked unit but starts the bundled engine: mark it engine"
    elif ON_NEO4J:
        why = "starts a bundled engine in the Neo4j pass: give it the Neo4j store (helpers.own_store)"
    else:
        return

    def refused(*_: object, **__: object) -> None:
        raise AssertionError(f"{request.node.nodeid} {why}")

    monkeypatch.setattr(BundledEngine, "_start", refused)


@pytest.fixture(scope="session", autouse=True)
def run_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The test process's directory, and in the Neo4j pass its Neo4j servers (``engines.py``), for every test;
    no engine of the process outlives it."""
    root = tmp_path_factory.mktemp("graphmem-run")
    neo4j_servers = open_servers(root / "neo4j") if ON_NEO4J else None
    yield root
    if neo4j_servers is not None:
        neo4j_servers.close()
    leftovers = engine_processes(root)
    for process in leftovers:
        process.kill()
    assert not leftovers, f"engine processes left running after the test run: {leftovers}"


@pytest.fixture(scope="session")
def runtime(run_root: Path) -> Iterator[Runtime]:
    """The test process's store: its own bundled engine, or its shared Neo4j (``engines.py``)."""
    on = servers().shared().settings() if ON_NEO4J else {}
    with Runtime.open(make_settings(run_root / "shared", **on), own_engine=True) as opened:
        yield opened


@pytest.fixture(scope="session")
def graph(runtime: Runtime) -> Iterator[neo4j.Driver]:
    """An independent driver for checking what is really in the graph."""
    with graph_driver(runtime) as driver:
        yield driver


def unfinished_jobs_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """The job queue is one per engine, shared by every namespace (``job_next`` claims the oldest head of any
    namespace): a job left queued (``test_body_caps`` leaves 30 memories of 95 KB) would be what a later
    test's worker claims first, in whichever worker process pytest-xdist runs it. So the unfinished jobs made
    in the scope of this fixture (a test, or a module's fixtures such as the attack suites' ``world``) are
    deleted when it ends, and the ones that were there before it are left to their own scope."""
    driver = request.getfixturevalue("graph") if "runtime" in request.fixturenames else None
    unfinished = ("MATCH (j:Job) WHERE j.namespace = '_system' AND j.status IN ['queued', 'running'] "
                  "AND NOT j.id IN $before ")
    before = [row["id"] for row in query(driver, unfinished + "RETURN j.id AS id", before=[])] if driver else []
    yield
    if driver is not None:
        query(driver, unfinished + "DETACH DELETE j", before=before)


jobs_of_this_test = pytest.fixture(autouse=True)(unfinished_jobs_left)
jobs_of_this_module = pytest.fixture(autouse=True, scope="module")(unfinished_jobs_left)


@pytest.fixture
def service(runtime: Runtime) -> MemoryService:
    return runtime.service


@pytest.fixture
def ns() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def ctx(ns: str) -> CallerContext:
    return CallerContext.for_namespaces(ns)


@pytest.fixture(scope="module")
def client(runtime: Runtime) -> Iterator[TestClient]:
    """The whole app (every front end) in this process, on the test process's store."""
    with TestClient(create_app(runtime=runtime)) as test_client:
        yield test_client


@pytest.fixture
def auth(runtime: Runtime, ns: str) -> dict[str, str]:
    """The bearer header of a read,write credential of the test's namespace only (its default namespace)."""
    _, token = runtime.identity.create(NewCredential(name=f"t-{uuid.uuid4().hex[:6]}",
                                                    scopes=[Scope.read, Scope.write], namespaces=[ns]), by=OPERATOR)
    return {"Authorization": f"Bearer {token}"}




@pytest.fixture(scope="session")
def gold_ns(runtime: Runtime) -> str:
    """A namespace holding the gold set (benchmarks/data, 70 memories) and one version chain: the data the
    pages that show the graph are tried on."""
    from gold import load_gold
    from graphmem.model import UpdateInput

    namespace = f"gold-views-{uuid.uuid4().hex[:6]}"
    first = next(iter(load_gold(runtime.service, namespace)))
    runtime.service.update_memory(CallerContext.for_namespaces(namespace), first, UpdateInput(
        content="Sofia Lindqvist stepped down as CEO of Corvid Works; Marcus Oyelaran leads it until March."))
    return namespace
