"""docker-compose.yml as docker-compose itself parses it (its default services and its `scale` profile),
deploy/nginx.conf as nginx itself checks it, and the Neo4j Cypher lint gate.

They need tools: Debian's docker-compose (.ci/run installs it) and the npm packages in tools/cypher-gate (the
README's test command installs them). On a machine without them these tests skip and say which tool is
missing; .ci/run fails on any skip. Without nginx the nginx test fails instead (tests/test_nginx.py too).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings

from graphmem.config import Settings
from graphmem.cursors import cursor_key
from graphmem.errors import ConfigurationError
from helpers import cypher_gate, make_settings, needs_gate
from services import NGINX_CONF, UPSTREAM, neo4j_version, nginx_command, rewritten

ROOT = Path(__file__).resolve().parents[1]

needs_compose = pytest.mark.skipif(shutil.which("docker-compose") is None,
                                   reason="needs Debian's docker-compose package (installed by .ci/run)")


def test_the_neo4j_of_the_tests_is_the_one_compose_runs() -> None:
    """tools/neo4j's pom.xml is the one place that names the Neo4j release the tests run; the compose file's
    image must be that release, so what the tests prove is what `docker compose up` runs."""
    image = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["neo4j"]["image"]
    assert image == f"neo4j:{neo4j_version()}-community", (image, neo4j_version())


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


SCALE_ENV = {"NEO4J_PASSWORD": "dummy-password-for-ci", "GRAPHMEM_CURSOR_SECRET": "c" * 40}


def compose_config(*args: str, **env: str) -> dict[str, Any]:
    """``docker-compose [args] config`` as parsed YAML, with ``env`` (and none of the developer's GRAPHMEM_ or
    NEO4J_ variables, which the file reads)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "NEO4J_"))}
    result = subprocess.run(["docker-compose", *args, "config"], cwd=ROOT, env={**clean, **env},
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = yaml.safe_load(result.stdout)
    return config


def patch_pinned(image: str) -> bool:
    """``name:1.2.3`` or ``name:1.2.3-variant``: a patch release, not a tag that moves."""
    return re.fullmatch(r"[a-z0-9./-]+:\d+\.\d+\.\d+(-[a-z0-9.]+)?", image) is not None


@needs_compose
def test_compose_scale_profile_runs_replicas_behind_nginx() -> None:
    """Redis and nginx pinned, several replicas that publish no port and are healthy once /ready, nginx the one
    way in (on loopback, deploy/nginx.conf, after the replicas are healthy), limits and cursors shared."""
    services = compose_config("--profile", "scale", **SCALE_ENV)["services"]
    redis, nginx, app = services["redis"], services["nginx"], services["graphmem-replica"]
    scaled = {name for name, service in services.items() if "scale" in service.get("profiles", [])}
    assert scaled == {"redis", "nginx", "graphmem-replica"}
    assert patch_pinned(redis["image"]) and redis["image"].startswith("redis:"), redis["image"]
    assert patch_pinned(nginx["image"]) and nginx["image"].startswith("nginx:"), nginx["image"]
    assert app["deploy"]["replicas"] > 1
    assert "/ready" in " ".join(app["healthcheck"]["test"])
    assert {name for name in scaled if services[name].get("ports")} == {"nginx"}
    assert nginx["ports"] and all(str(port).startswith("127.0.0.1:") for port in nginx["ports"])
    assert f"{NGINX_CONF}:/etc/nginx/nginx.conf:ro" in nginx["volumes"]
    assert nginx["depends_on"]["graphmem-replica"]["condition"] == "service_healthy"
    assert {app["depends_on"][name]["condition"] for name in ("neo4j", "redis")} == {"service_healthy"}
    env = app["environment"]
    assert env["GRAPHMEM_RATE_LIMIT_STORAGE"] == "redis://redis:6379"
    assert env["GRAPHMEM_CURSOR_SECRET"] == SCALE_ENV["GRAPHMEM_CURSOR_SECRET"]
    assert env["GRAPHMEM_NEO4J_URI"] == "bolt://neo4j:7687" and env["GRAPHMEM_HOST"] == "0.0.0.0"
    # nginx proxies to the replicas' service on the port they serve, and passes the Host clients send it
    # (127.0.0.1:<published port>) to the app, whose MCP routes check it as the SDK does
    upstream = UPSTREAM.search(NGINX_CONF.read_text())
    assert upstream is not None and upstream[0].split()[1] == "graphmem-replica:8420"
    published = str(nginx["ports"][0]).split("/")[0].split(":")
    allowed = Settings(_env_file=None, allowed_hosts=env["GRAPHMEM_ALLOWED_HOSTS"]).allowed_hosts  # type: ignore[call-arg]
    check = TransportSecurityMiddleware(TransportSecuritySettings(allowed_hosts=allowed))
    assert check._validate_host(f"127.0.0.1:{published[1]}") and check._validate_host(f"localhost:{published[1]}")


@needs_compose
def test_compose_scale_profile_without_a_cursor_secret_does_not_start(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """docker-compose reads every service whatever the profile, so a `:?` on the secret would stop the default
    services too: the secret comes through empty instead, and graphmem refuses an empty one at start."""
    env = compose_config("--profile", "scale", NEO4J_PASSWORD="dummy-password-for-ci")["services"][
        "graphmem-replica"]["environment"]
    assert env["GRAPHMEM_CURSOR_SECRET"] == ""
    monkeypatch.setenv("GRAPHMEM_CURSOR_SECRET", env["GRAPHMEM_CURSOR_SECRET"])
    with pytest.raises(ConfigurationError, match="GRAPHMEM_CURSOR_SECRET"):
        cursor_key(make_settings(tmp_path))


def test_nginx_accepts_the_deploy_config(tmp_path: Path) -> None:
    """``nginx -t`` on deploy/nginx.conf with its upstream host changed to 127.0.0.1 (``graphmem-replica``
    resolves only inside the compose network, and nginx resolves it to check): every other line as shipped."""
    text = rewritten("8420", ["127.0.0.1:8420"])
    changed = [(a, b) for a, b in zip(NGINX_CONF.read_text().splitlines(), text.splitlines(), strict=True) if a != b]
    assert [shipped.rsplit("# ", 1)[-1] for shipped, _ in changed] == ["@upstream", "@listen"], changed
    (tmp_path / "nginx.conf").write_text(text)
    result = subprocess.run(nginx_command(tmp_path, "-t"), capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0 and "syntax is ok" in result.stderr, result.stderr


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
