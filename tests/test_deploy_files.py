"""docker-compose.yml as docker-compose itself parses it, and the Neo4j Cypher lint gate.

Both need tools that .ci/run installs (Debian's docker-compose; npm packages in tools/cypher-gate).
On a machine without them these tests skip and say which tool is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GATE = ROOT / "tools" / "cypher-gate"

needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None,
                                   reason="needs Debian's docker-compose package (installed by .ci/run)")
needs_gate = pytest.mark.skipif(
    shutil.which("node") is None or not (GATE / "node_modules" / "@neo4j-cypher").is_dir(),
    reason="needs Node and `npm ci` in tools/cypher-gate (done by .ci/run)")


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


def _gate(statements: list[dict[str, str]], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "statements.json"
    path.write_text(json.dumps(statements))
    return subprocess.run(["node", str(GATE / "lint.mjs"), str(path)], capture_output=True, text=True,
                          timeout=120, check=False)


@needs_gate
def test_gate_passes_every_statement(tmp_path: Path) -> None:
    dump = subprocess.run([sys.executable, "-m", "graphmem.cli", "cypher-statements", "--dialect", "neo4j"],
                          capture_output=True, text=True, timeout=60, check=True)
    statements = json.loads(dump.stdout)
    assert all(s["text"].startswith("CYPHER 5\n") for s in statements)
    assert any(s["name"] == "await_indexes" for s in statements)  # the Neo4j-only side is included
    result = _gate(statements, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{len(statements)} statements checked" in result.stdout


@needs_gate
@pytest.mark.parametrize("bad", [
    "MATCH (n:Fact RETURN n",
    "MATCH (n:Fact) RETURN m",
    "CALL db.index.vector.queryNodez('fact_embedding', 5, $v) YIELD node RETURN node",
    "CALL db.index.vector.queryNodes('fact_embedding', 5, $v) YIELD nodes RETURN nodes",
    "CREATE INDEX IF NOT EXISTS ON Fact (text) FULL_TEXT",
])
def test_gate_fails_on_known_bad_statement(tmp_path: Path, bad: str) -> None:
    good = {"name": "good", "source": "test", "text": "CYPHER 5\nMATCH (n:Fact {id: $id}) RETURN n.id AS id"}
    result = _gate([good, {"name": "bad", "source": "test", "text": f"CYPHER 5\n{bad}"}], tmp_path)
    assert result.returncode == 1
    assert "bad" in result.stderr and "1 failed" in result.stdout
