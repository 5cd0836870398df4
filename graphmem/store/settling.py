"""Whether the database is still building its search indexes in the background: what ``/ready`` waits for
(``Runtime.pending``), because searches meanwhile are slow (measured at 100k facts on the bundled engine: the
first search after a bulk load took 6.8 s at 10k facts and seconds at 100k while the engine rebuilt its vector
index graphs).

**Neo4j**: an index that is not ``ONLINE`` or not fully populated (``SHOW INDEXES``; the statement
``indexes_populating``). **The bundled engine** (ArcadeDB 26.10) keeps each vector index's state in its
schema, readable over its HTTP API (``SELECT FROM schema:index:`name```, per bucket index). It rebuilds an
index's graph in the background once enough writes are pending, one index at a time. An index counts as busy
while a rebuild runs (``asyncRebuildInProgress``) or while its pending writes reach the threshold that
triggers one (``mutationsSinceRebuild >= effectiveMutationsThreshold``; the engine's threshold is a fifth of
the graph, at least 100 and at most 50,000 writes). Fewer pending writes are not busy: searches scan them
beside the graph without slowing down, and the engine may leave them until the next writes (so counting them
would keep a quiet server unready for good).

The answer is cached for ``TTL_S``: ``/health`` and ``/ready`` are polled, and one look costs a request per
index on the bundled engine (its schema listing carries no state). A look that fails is logged and counts as
not busy: ``/health`` reports an unreachable database through its own ping.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import httpx
from cachetools import TTLCache, cached
from neo4j.exceptions import Neo4jError

from graphmem.errors import GraphmemError
from graphmem.store.dialect import ARCADEDB_SETTLING_SQL
from graphmem.store.driver import GraphStore
from graphmem.store.queries import load_sql
from graphmem.store.schema import arcadedb_sql

log = logging.getLogger(__name__)

TTL_S = 2.0


class IndexSettling:
    """``busy()``: is any search index still being built in the background?"""

    def __init__(self, store: GraphStore, arcadedb_http: tuple[str, tuple[str, str]] | None) -> None:
        self.store = store
        self.http = arcadedb_http
        # the two SQL commands, read once (a look runs every TTL_S while /health is polled)
        self._listing, self._state = load_sql(ARCADEDB_SETTLING_SQL) if arcadedb_http else ("", "")
        self.busy = cached(TTLCache(maxsize=1, ttl=TTL_S), lock=threading.Lock())(self._look)

    def _look(self) -> bool:
        try:
            if self.store.dialect.is_neo4j:
                rows = self.store.run_autocommit("indexes_populating")
                return bool(rows and rows[0]["populating"])
            return self.http is not None and any(vector_index_busy(s) for s in self._vector_index_states())
        except (GraphmemError, Neo4jError, httpx.HTTPError, KeyError, ValueError):
            log.warning("could not read whether the search indexes are being built", exc_info=True)
            return False

    def _vector_index_states(self) -> list[dict[str, Any]]:
        assert self.http is not None
        url, auth = self.http
        with httpx.Client(auth=auth, timeout=5.0) as client:
            def sql(command: str) -> list[dict[str, Any]]:
                return arcadedb_sql(client, url, self.store.database, command, read=True)

            # the per-bucket indexes; `Label[property]` names merge their buckets' figures
            names = [str(row["name"]) for row in sql(self._listing)
                     if row.get("indexType") == "LSM_VECTOR" and "[" not in str(row["name"])]
            return [row for name in names for row in sql(self._state.replace("{name}", name))]


def vector_index_busy(state: dict[str, Any]) -> bool:
    """One bundled-engine vector index's state (``schema:index:`name```) says a background build is due or
    running (the rule in the module docstring)."""
    pending = int(state.get("mutationsSinceRebuild") or 0)
    threshold = int(state.get("effectiveMutationsThreshold") or 0)
    return bool(state.get("asyncRebuildInProgress")) or (threshold > 0 and pending >= threshold)
