"""Test helpers: settings that ignore the developer's environment, raw Cypher checks, engine processes, the
Neo4j Cypher lint gate."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import neo4j
import psutil
import pytest
import uvicorn

from engines import DATABASE, ON_NEO4J, OwnNeo4j, servers
from graphmem.config import Settings
from graphmem.runtime import Runtime
from graphmem.service.adding import Adding
from graphmem.service.coalescing import Coalescer
from graphmem.service.documents import Documents
from graphmem.service.memory import MemoryService
from graphmem.store.driver import Tx
from services import clean_environment

GATE = Path(__file__).resolve().parents[1] / "tools" / "cypher-gate"
needs_gate = pytest.mark.skipif(
    shutil.which("node") is None or not (GATE / "node_modules" / "@neo4j-cypher").is_dir(),
    reason="needs Node and `npm ci` in tools/cypher-gate (the README's test command does it)")


def cypher_gate(statements: list[dict[str, str]], directory: Path) -> subprocess.CompletedProcess[str]:
    """Neo4j's own parser and semantic analysis over ``statements`` ({name, source, text} each), as
    ``tools/cypher-gate/lint.mjs`` runs it in CI."""
    path = directory / "statements.json"
    path.write_text(json.dumps(statements))
    return subprocess.run(["node", str(GATE / "lint.mjs"), str(path)], capture_output=True, text=True,
                          timeout=120, check=False)


def engine_processes(root: Path) -> list[psutil.Process]:
    """Java processes of an engine whose files lie under ``root``: a bundled engine (its ArcadeDB root path) or
    a Neo4j of tools/neo4j (its ``--home``)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info.get("cmdline") or []
        neo4j_home = cmdline[cmdline.index("--home") + 1] if "--home" in cmdline[:-1] else ""
        if any(arg.startswith(f"-Darcadedb.server.rootPath={root}") for arg in cmdline) or (
                "graphmem.neo4j.Launcher" in cmdline and neo4j_home.startswith(f"{root}/")):
            found.append(process)
    return found


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings that ignore the developer's environment (never a real Neo4j by accident)."""
    # the real model where a test asks for it; no warm-up searches or exports (a test that wants them says so)
    values: dict[str, Any] = {"embedder": "hashing", "warm_up_searches": 0, "warm_up_exports": 0, "neo4j_uri": None,
                              **overrides}
    return Settings(_env_file=None, data_dir=data_dir, **values)  # type: ignore[call-arg]


def query(driver: neo4j.Driver, text: str, **params: Any) -> list[dict[str, Any]]:
    """``text`` on the database of the session's runtime, by a driver of the test's own."""
    with driver.session(database=DATABASE) as session:
        return [record.data() for record in session.run(text, params)]  # type: ignore[arg-type]


def counts(driver: neo4j.Driver, namespace: str) -> tuple[int, int]:
    """(nodes, relationships) touching the namespace."""
    nodes = query(driver, "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=namespace)[0]["c"]
    rels = query(driver, "MATCH (a)-[r]->(b) WHERE a.namespace = $ns OR b.namespace = $ns "
                         "RETURN count(r) AS c", ns=namespace)[0]["c"]
    return int(nodes), int(rels)


@contextmanager
def new_database(runtime: Runtime) -> Iterator[dict[str, str]]:
    """A store no other test writes, as the settings that reach it (``GRAPHMEM_`` names, lower-case): on the
    bundled engine a database of its own in ``runtime``'s engine (made over HTTP, dropped after), without a
    second engine; on Neo4j, whose Community edition has one user database, the spare server, wiped."""
    if ON_NEO4J:
        with servers().empty() as server:
            yield server.settings()
        return
    assert runtime.engine is not None
    name = f"iso_{uuid.uuid4().hex[:12]}"
    auth = ("root", runtime.engine.password())

    def server(command: str) -> None:
        httpx.post(f"{runtime.engine.http_url}/api/v1/server", json={"command": command}, auth=auth,
                   timeout=30).raise_for_status()

    server(f"create database {name}")
    try:
        yield {"neo4j_uri": runtime.engine.bolt_uri, "neo4j_user": "root", "neo4j_password": auth[1],
               "neo4j_database": name, "dialect": "arcadedb", "arcadedb_http_url": runtime.engine.http_url}
    finally:
        server(f"drop database {name}")


@contextmanager
def isolated_store(runtime: Runtime, data_dir: Path, **overrides: Any) -> Iterator[Runtime]:
    """A runtime on a new database (``new_database``), for rules about the whole store (its owner, its last
    admin)."""
    with new_database(runtime) as database, Runtime.open(make_settings(data_dir, **database, **overrides)) as opened:
        yield opened


@contextmanager
def own_store(data_dir: Path) -> Iterator[dict[str, str]]:
    """The settings of a store of its own for runtimes opened on ``data_dir`` (``make_settings(data_dir,
    **these)``; several in turn share it): on the bundled engine none, so the first runtime starts an engine
    of its own there; on Neo4j the spare server, wiped."""
    if not ON_NEO4J:
        yield {}
        return
    with servers().empty() as server:
        yield server.settings()


@dataclass
class OwnDatabase:
    """A database only this test uses, which it may stop, kill and start again: the bundled engine that the
    first runtime opened with ``settings`` starts (and owns), or a Neo4j server of the test's own."""

    settings: dict[str, str]
    neo4j: OwnNeo4j | None = None

    def stop(self, runtime: Runtime) -> None:
        if self.neo4j is not None:
            self.neo4j.stop()
        else:
            assert runtime.engine is not None
            runtime.engine.stop()

    def kill(self, runtime: Runtime) -> None:
        if self.neo4j is not None:
            self.neo4j.kill()
        else:
            assert runtime.engine is not None
            state = runtime.engine.status().state
            assert state is not None and state.pid is not None
            os.kill(state.pid, signal.SIGKILL)

    def start(self, runtime: Runtime) -> None:
        if self.neo4j is not None:
            self.neo4j.start()
        else:
            assert runtime.engine is not None
            runtime.engine.ensure_running(owned=True)


@contextmanager
def own_database(name: str) -> Iterator[OwnDatabase]:
    """``OwnDatabase``: for runtimes opened with ``make_settings(a new data directory, **own.settings)``."""
    if not ON_NEO4J:
        yield OwnDatabase({})
        return
    with servers().own(name) as server:
        yield OwnDatabase(server.server.settings(), server)


def store_password(runtime: Runtime) -> str:
    """The password of the database ``runtime`` uses (a secret no answer may carry)."""
    if runtime.engine is not None:
        return runtime.engine.password()
    assert runtime.settings.neo4j_password is not None
    return runtime.settings.neo4j_password.get_secret_value()


def store_address(runtime: Runtime) -> dict[str, str]:
    """The settings (``GRAPHMEM_`` names, lower-case) that reach ``runtime``'s database by its Bolt address, as an
    external server is reached (a bundled engine too: its address, its root password and its HTTP API)."""
    settings = runtime.settings
    if runtime.engine is not None:
        return {"neo4j_uri": runtime.engine.bolt_uri, "neo4j_user": "root", "neo4j_password": store_password(runtime),
                "neo4j_database": settings.engine_database, "dialect": "arcadedb",
                "arcadedb_http_url": runtime.engine.http_url}
    found = {"neo4j_uri": str(settings.neo4j_uri), "neo4j_user": settings.neo4j_user,
             "neo4j_password": store_password(runtime), "neo4j_database": settings.neo4j_database,
             "dialect": settings.dialect.value}
    if settings.arcadedb_http_url:
        found["arcadedb_http_url"] = settings.arcadedb_http_url
    return found


def store_settings(runtime: Runtime) -> dict[str, str]:
    """The settings that reach ``runtime``'s store from another process as ``runtime`` reached it: its data
    directory (a bundled engine's files, the owner's token), and an external server's address."""
    return {"data_dir": str(runtime.settings.data_dir),
            **(store_address(runtime) if runtime.settings.neo4j_uri else {})}


def child_environment(runtime: Runtime | None = None, **settings: str) -> dict[str, str]:
    """The environment of a graphmem process a test starts (a CLI command, a serve): ``clean_environment``'s,
    attached to ``runtime``'s store if one is given, with ``settings`` (lower-case names) on top."""
    more = {**(store_settings(runtime) if runtime is not None else {}), **settings}
    return {**clean_environment(), **{f"GRAPHMEM_{name.upper()}": value for name, value in more.items()}}


def graph_driver(runtime: Runtime) -> neo4j.Driver:
    """An independent driver to a runtime's database, for checking what is really in the graph."""
    if runtime.engine is not None:
        return neo4j.GraphDatabase.driver(runtime.engine.bolt_uri, auth=("root", runtime.engine.password()))
    return neo4j.GraphDatabase.driver(str(runtime.settings.neo4j_uri),
                                      auth=(runtime.settings.neo4j_user, store_password(runtime)))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def served(app: Any) -> Iterator[str]:
    """``app`` on a real uvicorn server on 127.0.0.1, in this process; yields its base URL."""
    port = free_port()
    running = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        running.should_exit = True
        thread.join(30)


def coalescer(service: MemoryService, window_ms: float, most: int = 64, content_chars: int | None = None) -> Coalescer:
    """A coalescer of remembers writing to ``service``'s store (with an operator's lower content bound, if given):
    a test sets its window, or puts it in the service's place."""
    core = service.core
    if content_chars is not None:
        limits = core.limits.model_copy(update={"content_chars": content_chars})
        core = dataclasses.replace(core, settings=core.settings.model_copy(update={"limits": limits}))
    return Coalescer(Adding(core, Documents(core)), window_ms, most)


def sent_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the statements sent from now on in this test, in order (it counts, the store still runs
    them): how a test sees that a nested query is batched, or that a search sent a statement once."""
    sent: list[str] = []
    original = Tx.run

    def counted(self: Tx, name: str, /, **params: Any) -> list[dict[str, Any]]:
        sent.append(name)
        return original(self, name, **params)

    monkeypatch.setattr(Tx, "run", counted)
    return sent
