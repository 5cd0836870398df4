"""docker-compose.yml as docker-compose itself parses it, and the Neo4j Cypher lint gate.

Both need tools: Debian's docker-compose (.ci/run installs it) and the npm packages in tools/cypher-gate (the
README's test command installs them). On a machine without them these tests skip and say which tool is
missing; .ci/run fails on any skip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import cypher_gate, needs_gate

ROOT = Path(__file__).resolve().parents[1]

needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None,
                                   reason="needs Debian's docker-compose package (installed by .ci/run)")


@needs_compose
def test_compose_config_pins_neo4j_and_waits_for_health() -> None:
    env = {**os.environ, "NEO4J_PASSWORD": "dummy-password-for-ci"}
    result = subprocess.run(["docker-compose", "config"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    neo4j, app = config["services"]["neo4j"], config["services"]["graphmem"]
    image, tag = neo4j["image"].split(":")
    assert image == "neo4j" and tag.startswith("5.26.") and tag.endswith("-community")
    assert tag.split("-")[0].count(".") == 2  # a patch release, not a moving tag
    assert neo4j["healthcheck"]["test"] and neo4j["environment"]["NEO4J_AUTH"] == "neo4j/dummy-password-for-ci"
    assert neo4j["environment"]["NEO4J_server_memory_heap_max__size"]
    assert neo4j["environment"]["NEO4J_server_memory_pagecache_size"]
    assert app["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert app["environment"]["GRAPHMEM_NEO4J_URI"] == "bolt://neo4j:7687"
    assert app["environment"]["GRAPHMEM_NEO4J_PASSWORD"] == "dummy-password-for-ci"
    assert all(str(p).startswith("127.0.0.1:") for p in app["ports"] + neo4j["ports"])
    assert "/ready" in " ".join(app["healthcheck"]["test"])  # healthy once searches are fast
    # Browser's style and guide on connect, as docker-compose hands it over (tests/test_browser_pages.py checks
    # the file's exact command)
    assert "NEO4J_browser_post__connect__cmd" in neo4j["environment"]


@needs_compose
def test_compose_refuses_to_start_without_a_password() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NEO4J_PASSWORD"}
    result = subprocess.run(["docker-compose", "config"], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=60, check=False)
    assert result.returncode != 0 and "NEO4J_PASSWORD" in result.stderr


@needs_gate
def test_gate_passes_every_statement(tmp_path: Path) -> None:
    dump = subprocess.run([sys.executable, "-m", "graphmem.store.dump", "neo4j"],
                          capture_output=True, text=True, timeout=60, check=True)
    statements = json.loads(dump.stdout)
    assert all(s["text"].startswith("CYPHER 5\n") for s in statements)
    assert any(s["name"] == "await_indexes" for s in statements)  # the Neo4j-only side is included
    result = cypher_gate(statements, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{len(statements)} statements checked" in result.stdout


BAD = [
    "MATCH (n:Fact RETURN n",
    "MATCH (n:Fact) RETURN m",
    "CALL db.index.vector.queryNodez('fact_embedding', 5, $v) YIELD node RETURN node",
    "CALL db.index.vector.queryNodes('fact_embedding', 5, $v) YIELD nodes RETURN nodes",
    "CREATE INDEX IF NOT EXISTS ON Fact (text) FULL_TEXT",
]


@needs_gate
def test_gate_fails_on_each_known_bad_statement(tmp_path: Path) -> None:
    # one run of the gate for all of them (each run loads Neo4j's analysis again, about 2 s), good ones between
    good = "CYPHER 5\nMATCH (n:Fact {id: $id}) RETURN n.id AS id"
    statements = [statement for i, bad in enumerate(BAD) for statement in (
        {"name": f"good{i}", "source": "test", "text": good},
        {"name": f"bad{i}", "source": "test", "text": f"CYPHER 5\n{bad}"})]
    result = cypher_gate(statements, tmp_path)
    assert result.returncode == 1
    failed = set(re.findall(r"^test: (\w+): line \d+: ", result.stderr, re.MULTILINE))
    assert failed == {f"bad{i}" for i in range(len(BAD))}, result.stderr
    assert f"{len(BAD)} failed" in result.stdout
