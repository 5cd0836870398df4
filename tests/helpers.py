"""Test helpers: settings that ignore the developer's environment, raw Cypher checks, engine processes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import neo4j
import psutil

from graphmem.config import Settings
from graphmem.runtime import Runtime


def engine_processes(root: Path) -> list[psutil.Process]:
    """Java processes whose ArcadeDB root path lies under ``root``."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info.get("cmdline") or []
        if any(arg.startswith(f"-Darcadedb.server.rootPath={root}") for arg in cmdline):
            found.append(process)
    return found


def make_settings(data_dir: Path, **overrides: Any) -> Settings:
    """Settings that ignore the developer's environment (never a real Neo4j by accident)."""
    values: dict[str, Any] = {"embedder": "hashing", **overrides}  # the real model where a test asks for it
    return Settings(_env_file=None, neo4j_uri=None, data_dir=data_dir, **values)  # type: ignore[call-arg]


def query(driver: neo4j.Driver, text: str, **params: Any) -> list[dict[str, Any]]:
    with driver.session(database="graphmem") as session:
        return [record.data() for record in session.run(text, params)]  # type: ignore[arg-type]


def counts(driver: neo4j.Driver, namespace: str) -> tuple[int, int]:
    """(nodes, relationships) touching the namespace."""
    nodes = query(driver, "MATCH (n) WHERE n.namespace = $ns RETURN count(n) AS c", ns=namespace)[0]["c"]
    rels = query(driver, "MATCH (a)-[r]->(b) WHERE a.namespace = $ns OR b.namespace = $ns "
                         "RETURN count(r) AS c", ns=namespace)[0]["c"]
    return int(nodes), int(rels)


def graph_driver(runtime: Runtime) -> neo4j.Driver:
    """An independent driver to a runtime's bundled engine, for checking what is really in the graph."""
    assert runtime.engine is not None
    return neo4j.GraphDatabase.driver(runtime.engine.bolt_uri, auth=("root", runtime.engine.password()))
