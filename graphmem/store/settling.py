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
index on the bundled engine.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import httpx

from graphmem.store.driver import GraphStore

log = logging.getLogger(__name__)

TTL_S = 2.0


class IndexSettling:
    """``busy()``: is any search index still being built in the background?"""

    def __init__(self, store: GraphStore, arcadedb_http: tuple[str, tuple[str, str]] | None) -> None:
        self.store = store
        self.http = arcadedb_http
        self._lock = threading.Lock()
        self._checked_at = float("-inf")
        self._busy = False

    def busy(self) -> bool:
        with self._lock:
            if time.monotonic() - self._checked_at > TTL_S:
                self._busy = self._look()
                self._checked_at = time.monotonic()
            return self._busy

    def _look(self) -> bool:
        if self.store.dialect.is_neo4j:
            row = self.store.run_autocommit("indexes_populating")
            return bool(row and row[0]["populating"])
        if self.http is None:
            return False
        try:
            return any(vector_index_busy(state) for state in self._vector_index_states())
        except (httpx.HTTPError, KeyError, ValueError):  # an answer we cannot read is not a reason to refuse
            log.warning("could not read the bundled engine's vector index state", exc_info=True)
            return False

    def _vector_index_states(self) -> list[dict[str, Any]]:
        assert self.http is not None
        url, auth = self.http
        query = f"{url}/api/v1/query/{self.store.database}"
        with httpx.Client(auth=auth, timeout=5.0) as client:
            def sql(command: str) -> list[dict[str, Any]]:
                response = client.post(query, json={"language": "sql", "command": command})
                response.raise_for_status()
                return list(response.json()["result"])

            # the per-bucket indexes; `Label[property]` names merge their buckets' figures
            names = [str(row["name"]) for row in sql("SELECT name, indexType FROM schema:indexes")
                     if row.get("indexType") == "LSM_VECTOR" and "[" not in str(row["name"])]
            return [state for name in names for state in sql(f"SELECT FROM schema:index:`{name}`")]


def vector_index_busy(state: dict[str, Any]) -> bool:
    """One bundled-engine vector index's state (``schema:index:`name```) says a background build is due or
    running (the rule in the module docstring)."""
    pending = int(state.get("mutationsSinceRebuild") or 0)
    threshold = int(state.get("effectiveMutationsThreshold") or 0)
    return bool(state.get("asyncRebuildInProgress")) or (threshold > 0 and pending >= threshold)
