"""Idempotent schema bootstrap and run-once migrations, at every start, before any data is written.

Order matters on the bundled engine: an index fixes its property's type, so the search indexes (SQL over
HTTP, from ``cypher/schema.arcadedb.sql``) are declared before the portable constraints and range indexes
(``cypher/schema.cypher``), and all of it before the first document. On Neo4j the search indexes come from
``cypher/schema.neo4j.cypher`` and the bootstrap waits for them to come online.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, cast

import httpx
from neo4j.exceptions import Neo4jError
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random

from graphmem.errors import ConfigurationError, Unavailable
from graphmem.records import now_ms
from graphmem.store.dialect import ARCADEDB_SCHEMA_SQL
from graphmem.store.driver import GraphStore, Tx
from graphmem.store.names import StatementName
from graphmem.store.queries import load_sql, statements

log = logging.getLogger(__name__)

# Migrations by target version: each runs once, in order, in its own transaction, and the version
# record moves with it. Version 1 is the initial schema, which the DDL below creates.
SCHEMA_VERSION = 1
MIGRATIONS: dict[int, Callable[[Tx], None]] = {1: lambda tx: None}
DDL_ATTEMPTS = 5


def portable_schema_statements() -> list[StatementName]:
    """The statements of ``schema.cypher``, read from the file (so each exists by construction)."""
    return [cast(StatementName, name) for name, s in statements().items() if s.source == "schema.cypher"]


def arcadedb_sql(client: httpx.Client, http_url: str, database: str, command: str, *,
                 read: bool = False) -> list[dict[str, Any]]:
    """One SQL command over the bundled engine's HTTP API (Bolt refuses its index DDL and has no access to
    its schema): ``read`` through the query endpoint. Raises ``httpx.HTTPError``, status errors included."""
    url = f"{http_url}/api/v1/{'query' if read else 'command'}/{database}"
    response = client.post(url, json={"language": "sql", "command": command})
    response.raise_for_status()
    return list(response.json().get("result", []))


# What the loser of a race between two processes creating the same index or constraint hears (the DDL says IF
# NOT EXISTS, which neither engine makes atomic): the bundled engine's HTTP API a 500, Neo4j these codes.
RACED_DDL_CODES = frozenset({"Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
                              "Neo.ClientError.Schema.IndexAlreadyExists",
                              "Neo.ClientError.Schema.ConstraintAlreadyExists"})


def _lost_a_ddl_race(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code >= 500
    return isinstance(exc, Neo4jError) and (exc.code in RACED_DDL_CODES or exc.is_retryable())


# Several app processes starting at once on a new database race on the schema DDL. A statement that lost is
# tried again a few times: it then finds what the winner made. One that keeps failing is a real error.
_DDL_AGAIN = Retrying(retry=retry_if_exception(_lost_a_ddl_race), stop=stop_after_attempt(DDL_ATTEMPTS),
                      wait=wait_random(0.05, 0.5), reraise=True)


def apply_arcadedb_sql(http_url: str, database: str, auth: tuple[str, str]) -> None:
    """Run the bundled engine's index DDL through its HTTP command API (Bolt refuses it), each command tried
    again after a lost race (``_DDL_AGAIN``); one that keeps failing is a configuration error."""
    with httpx.Client(auth=auth, timeout=60.0) as client:
        for command in load_sql(ARCADEDB_SCHEMA_SQL):
            try:
                _DDL_AGAIN(arcadedb_sql, client, http_url, database, command)
            except httpx.HTTPStatusError as exc:
                raise ConfigurationError(f"schema command failed on the bundled engine "
                                         f"({exc.response.status_code}): {command}") from exc
            except httpx.HTTPError as exc:
                raise Unavailable("the bundled engine's HTTP API is unreachable") from exc


def bootstrap(store: GraphStore, *, arcadedb_http: tuple[str, tuple[str, str]] | None = None) -> int:
    """Create what is missing and run pending migrations. Returns the schema version now in force."""
    started = time.perf_counter()
    if store.dialect.is_neo4j:
        for name in store.dialect.schema_statements:
            _DDL_AGAIN(store.run_autocommit, name)
    else:
        if arcadedb_http is None:
            raise ConfigurationError("the bundled engine dialect needs its HTTP address for index DDL "
                                     "(set GRAPHMEM_ARCADEDB_HTTP_URL for an external ArcadeDB)")
        apply_arcadedb_sql(arcadedb_http[0], store.database, arcadedb_http[1])
    for name in portable_schema_statements():
        _DDL_AGAIN(store.run_autocommit, name)
    if store.dialect.await_indexes_statement:
        store.run_autocommit(store.dialect.await_indexes_statement)

    def current(tx: Tx) -> int:
        row = tx.single("schema_version_get")
        return int(row["version"]) if row and row["version"] is not None else 0

    version = store.read(current)
    for target in sorted(v for v in MIGRATIONS if v > version):
        def migrate(tx: Tx, target: int = target) -> None:
            if current(tx) >= target:  # another process got there first
                return
            MIGRATIONS[target](tx)
            tx.run("schema_version_set", version=target, now=now_ms())

        store.write(migrate)
        version = target
    log.info("schema version %s ready in %.2f s", version, time.perf_counter() - started)
    return version


def check_embedder(store: GraphStore, name: str, dimensions: int) -> None:
    """Record the embedder on first start; refuse to start with another one.

    Vectors of two embedders are not comparable: mixing them would silently break search. Changing the
    embedder is a deliberate re-embedding, not a side effect of a setting.
    """

    def record(tx: Tx) -> dict[str, object] | None:
        row = tx.single("embedder_get")
        if row is None:
            tx.run("embedder_set", name=name, dimensions=dimensions, now=now_ms())
        return row

    stored = store.write(record)
    if stored is not None and (stored["name"], stored["dimensions"]) != (name, dimensions):
        raise ConfigurationError(
            f"this database holds embeddings of {stored['name']} ({stored['dimensions']} dimensions) but "
            f"graphmem is configured with {name} ({dimensions}); run `graphmem reembed` to re-embed it "
            "deliberately (or set GRAPHMEM_EMBEDDER back)"
        )


def record_embedder(store: GraphStore, name: str, dimensions: int) -> None:
    """Make ``name`` the database's embedder (after a complete re-embedding)."""
    store.write(lambda tx: tx.run("embedder_set", name=name, dimensions=dimensions, now=now_ms()))
