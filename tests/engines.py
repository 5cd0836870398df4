"""Which graph engine the engine tests run on, and the Neo4j servers of a test process.

``GRAPHMEM_TEST_ENGINE`` chooses: ``bundled`` (the default: the bundled engine, as ``graphmem serve`` runs it) or
``neo4j`` (Neo4j Community from tools/neo4j, started by the tests). On Neo4j each test process has:

* the **shared** server, behind the session's ``runtime``: tests isolate by namespace there, as on the bundled
  engine (Community has one user database);
* a **spare**, for the tests that need a store nobody else writes (``helpers.new_database``, ``helpers.own_store``):
  wiped (data, indexes and constraints) before each use, so it is a new database each time (a second spare
  starts only while the first is held);
* a server of **its own** (``helpers.own_database``) for a test that stops or kills its database.

Servers start on first use and stop when the session ends. A test that cannot apply to Neo4j is skipped there
with ``bundled_only(reason)``, and only for one of ``BundledOnly``'s reasons: ``.ci/run`` fails on any other
skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import neo4j
import pytest

from graphmem.store.processes import free_port

if TYPE_CHECKING:  # benchmarks/ is on the path in the tests' processes, not in every child they start
    from services import Neo4jServer

ENGINE = os.environ.get("GRAPHMEM_TEST_ENGINE", "bundled")
if ENGINE not in ("bundled", "neo4j"):
    raise RuntimeError(f"GRAPHMEM_TEST_ENGINE={ENGINE!r}: use bundled or neo4j")
ON_NEO4J = ENGINE == "neo4j"
DATABASE = "neo4j" if ON_NEO4J else "graphmem"  # the database the session's runtime uses


class BundledOnly(StrEnum):
    """What a test skipped on Neo4j is about: the bundled engine's own behaviour, which Neo4j does not have."""

    process = "on Neo4j: tests the bundled engine's process management (graphmem starts, owns and stops it)"
    watch = "on Neo4j: tests the bundled engine's restart watch (graphmem restarts the engine it started)"
    message_cap = "on Neo4j: tests the bundled engine's 16 MiB Bolt message cap"
    index_rebuilds = "on Neo4j: tests the bundled engine's vector index rebuilds in the background"


def bundled_only(reason: BundledOnly) -> pytest.MarkDecorator:
    return pytest.mark.skipif(ON_NEO4J, reason=reason.value)


def wipe(server: Neo4jServer) -> None:
    """Everything out of ``server``'s database: nodes and relationships, then every index and constraint, so
    graphmem's bootstrap meets a new database."""
    with neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password)) as driver, \
            driver.session(database=server.database) as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
        for row in list(session.run("SHOW CONSTRAINTS YIELD name")):
            session.run(f"DROP CONSTRAINT `{row['name']}`").consume()
        for row in list(session.run("SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'")):
            session.run(f"DROP INDEX `{row['name']}`").consume()


class Neo4jServers:
    """The test process's shared and spare servers, started on first use, under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._stack = ExitStack()
        self._shared: Neo4jServer | None = None
        self._spares: dict[Neo4jServer, bool] = {}  # each spare, and whether a test holds it

    def shared(self) -> Neo4jServer:
        if self._shared is None:
            self._shared = self._stack.enter_context(self._start("shared"))
        return self._shared

    @contextmanager
    def empty(self) -> Iterator[Neo4jServer]:
        """A spare, wiped: a store nobody else writes, with nothing in it, until the block ends. A spare held
        already (a module's store, and a test's inside it) is not handed out twice: another one starts."""
        free = [server for server, held in self._spares.items() if not held]
        server = free[0] if free else self._stack.enter_context(self._start(f"spare-{len(self._spares)}"))
        self._spares[server] = True
        try:
            wipe(server)
            yield server
        finally:
            self._spares[server] = False

    @contextmanager
    def own(self, name: str) -> Iterator[OwnNeo4j]:
        """A new server for one test (one that stops or kills it), stopped when the block ends."""
        own = OwnNeo4j(self.root / name)
        try:
            yield own
        finally:
            own.stop()

    def _start(self, name: str) -> AbstractContextManager[Neo4jServer]:
        return _process(self.root / name, free_port())

    def close(self) -> None:
        self._stack.close()


class OwnNeo4j:
    """A server of one test's, which it may stop or kill and start again, on the same files and port (where the
    drivers connected to it look for it)."""

    def __init__(self, home: Path) -> None:
        self.home, self.port = home, free_port()
        self._running = ExitStack()
        self.server = self.start()

    def start(self) -> Neo4jServer:
        self._running = ExitStack()
        self.server = self._running.enter_context(_process(self.home, self.port))
        return self.server

    def stop(self) -> None:
        self._running.close()

    def kill(self) -> None:
        self.server.process.kill()
        self.server.process.wait(30)
        self.stop()


def _process(home: Path, port: int) -> AbstractContextManager[Neo4jServer]:
    from services import neo4j_process

    return neo4j_process(home, port)


_servers: Neo4jServers | None = None


def open_servers(root: Path) -> Neo4jServers:
    global _servers
    _servers = Neo4jServers(root)
    return _servers


def servers() -> Neo4jServers:
    assert ON_NEO4J and _servers is not None, "Neo4j servers are only opened when GRAPHMEM_TEST_ENGINE=neo4j"
    return _servers
