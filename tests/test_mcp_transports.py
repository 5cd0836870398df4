"""The MCP server over its real transports: Streamable HTTP on a uvicorn server (bearer tokens, 401 with
``WWW-Authenticate``, a read token's write refused, ``/mcp/`` served, DNS-rebinding protection, a revocation
taking effect mid-session) with an agent-style scenario end to end, and stdio: ``graphmem mcp`` as a
subprocess, driven by the SDK's stdio client (stdout carries only JSON-RPC; a relative data directory is
refused)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from graphmem.app import create_app
from graphmem.identity import OPERATOR, Scope
from graphmem.runtime import Runtime
from helpers import child_environment, engine_processes, own_store, served
from mcp_helpers import Session, credential, over_http

pytestmark = pytest.mark.engine  # starts engines or servers of its own

GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "t", "version": "1"}}}
JSON_RPC = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SCENARIO_LOG: list[tuple[str, str]] = []  # (tool, what it returned): printed for the closing note with -s


@pytest.fixture(scope="module")
def server(runtime: Runtime) -> Iterator[str]:
    with served(create_app(runtime=runtime)) as url:
        yield url


async def http_session(client: Client) -> Session:
    return Session(client, {tool.name: tool for tool in (await client.list_tools()).tools})


def test_bearer_tokens_over_streamable_http(server: str, runtime: Runtime, ns: str) -> None:
    _, token = credential(runtime, [ns])
    _, reader = credential(runtime, [ns], (Scope.read,))

    async def main() -> None:
        async with over_http(f"{server}/mcp", token) as client:
            s = await http_session(client)
            added = await s.call("add_memory", content="Mira Sato runs the Kyoto lab.")
            assert added["status"] == "remembered"
        async with over_http(f"{server}/mcp/", token) as client:  # as one seed documents its URL
            s = await http_session(client)
            assert (await s.call("list_memories"))["total"] == 1
        async with over_http(f"{server}/mcp", reader) as client:
            s = await http_session(client)
            assert (await s.call("get_memory", memory_id=added["id"]))["memory"]["id"] == added["id"]
            refused = await s.error("add_memory", content="A reader writes.")
            assert "no write access" in refused and "may not write there" in refused

    anyio.run(main)
    initialize, headers = INITIALIZE, JSON_RPC
    for sent in ({}, {"Authorization": "Bearer gm_" + "x" * 43}, {"X-API-Key": token}):
        refused = httpx.post(f"{server}/mcp", json=initialize, headers={**headers, **sent})
        assert refused.status_code == 401, sent
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer") and "/.well-known/oauth-protected-resource/mcp" in challenge
    metadata = httpx.get(f"{server}/.well-known/oauth-protected-resource/mcp").json()
    assert metadata["resource"] == "http://127.0.0.1:8420/mcp"
    rebinding = httpx.post(f"{server}/mcp", json=initialize,
                           headers={**headers, "Authorization": f"Bearer {token}", "Host": "evil.example:80"})
    assert rebinding.status_code in (400, 421), rebinding.status_code
    assert httpx.get(f"{server}/health").status_code == 200  # the MCP routes take nothing from the app
    missing = httpx.get(f"{server}/no-such-route")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert httpx.get(f"{server}/v1/memories", headers={"Authorization": f"Bearer {token}"}).json()["total"] == 1


def test_a_revoked_token_stops_working_mid_session(server: str, runtime: Runtime, ns: str) -> None:
    revoked, token = credential(runtime, [ns])

    async def main() -> None:
        async with over_http(f"{server}/mcp", token) as client:
            s = await http_session(client)
            assert (await s.call("list_memories"))["total"] == 0
            runtime.identity.revoke(revoked.id, by=OPERATOR)
            with pytest.raises(MCPError):  # the transport's 401, as the SDK reports it
                await client.call_tool("list_memories", {})

    anyio.run(main)
    assert httpx.post(f"{server}/mcp", json=INITIALIZE, headers={**JSON_RPC, "Authorization": f"Bearer {token}"}
                      ).status_code == 401


def test_an_agent_scenario_end_to_end(server: str, runtime: Runtime, ns: str) -> None:
    """Add three memories, update one, search (the update wins), recall with a budget, explore from an entity,
    find a path, save and read a handoff, forget a memory and see it gone from search."""
    _, token = credential(runtime, [ns])
    SCENARIO_LOG.clear()

    async def main() -> None:
        async with over_http(f"{server}/mcp", token) as client:
            s = await http_session(client)

            async def call(name: str, note: Any = None, /, **arguments: Any) -> dict[str, Any]:
                result = await s.call(name, **arguments)
                SCENARIO_LOG.append((name, note(result) if note else json.dumps(result)[:160]))
                return result

            kyoto = await call("add_memory", lambda r: f"{r['status']} v{r['version']}",
                               content="Mira Sato works at Helix Labs in Kyoto.", path="people")
            await call("add_memory", lambda r: r["status"],
                       content="Helix Labs acquired Nordwind Robotics in 2025.", path="companies")
            await call("add_memory", lambda r: r["status"],
                       content="Jonas Weber works at Nordwind Robotics in Hamburg.", path="people")
            moved = await call("update_memory", lambda r: f"{r['status']} v{r['version']}", memory_id=kyoto["id"],
                               expected_version=1, content="Mira Sato works at Helix Labs in Osaka now.")
            found = await call("search_memories", lambda r: f"top {r['results'][0]['id'] == moved['id']} "
                                                            f"v{r['results'][0]['version']}",
                               query="Where does Mira Sato work?")
            assert found["results"][0]["id"] == moved["id"] and "Osaka" in found["results"][0]["facts"][0]["text"]
            assert all(r["id"] != kyoto["id"] for r in found["results"])  # the old version is not current
            recalled = await call("recall_context", lambda r: f"{r['answer_status']}, {r['tokens_used']} tokens, "
                                                              f"{len(r['items'])} items",
                                  query="Where does Mira Sato work?", max_tokens=120)
            assert recalled["tokens_used"] <= 120 and "Osaka" in recalled["context_text"]
            mira = await call("get_entity", lambda r: f"{r['name']}: {r['facts_total']} facts, "
                                                      f"{len(r['neighbours'])} neighbours", name="Mira Sato")
            graph = await call("explore_graph", lambda r: f"{len(r['nodes'])} nodes, {len(r['edges'])} edges, "
                                                          f"truncated {r['truncated']}",
                               seed={"kind": "entity", "id": mira["id"]})
            assert any(n["label"] == "Helix Labs" for n in graph["nodes"])
            path = await call("find_path", lambda r: " → ".join(r["paths"][0]["names"]) if r["paths"] else "none",
                              from_entity="Mira Sato", to_entity="Jonas Weber")
            assert path["paths"] and path["paths"][0]["names"][-1] == "Jonas Weber"
            saved = await call("save_handoff", lambda r: f"v{r['version']} by {r['author']}", project="hiring",
                               goal="Hire for Osaka", summary="Mira moved", expected_version=0,
                               request_id="req-scenario-1")
            read = await call("get_handoff", lambda r: f"v{r['version']}: {r['context']['goal']}", project="hiring")
            assert read["version"] == saved["version"] == 1
            await call("forget_memory", lambda r: f"{r['mode']}, {r['documents']} versions",
                       memory_id=moved["id"], mode="soft")
            after = await call("search_memories", lambda r: f"{len(r['results'])} results, Mira gone "
                               f"{all('Mira' not in f['text'] for x in r['results'] for f in x['facts'])}",
                               query="Where does Mira Sato work?")
            assert all(r["id"] not in (moved["id"], kyoto["id"]) for r in after["results"])

    anyio.run(main)
    for name, note in SCENARIO_LOG:
        print(f"{name}: {note}")


def test_stdio_subprocess(runtime: Runtime, ns: str, tmp_path: Path) -> None:
    """``graphmem mcp`` on the test process's data directory (it attaches to the running engine) as a token's
    credential, and on a new data directory (it starts its own engine) as the owner it creates; the SDK's stdio
    client drives it."""
    _, token = credential(runtime, [ns])
    env = child_environment(runtime, embedder="hashing")

    async def main(own: dict[str, str]) -> None:
        as_token = StdioServerParameters(command=GRAPHMEM, args=["mcp", "--log-level", "warning"],
                                         env={**env, "GRAPHMEM_TOKEN": token}, cwd=str(tmp_path))
        async with Client(as_token, read_timeout_seconds=120) as client:
            s = await http_session(client)
            added = await s.call("add_memory", content="Noor Haddad keeps the stdio notes.")
            queued = await s.call("log_exchange", user_message="Remember my desk is B12.",
                                  assistant_message="Noted: desk B12.")
            for _ in range(100):  # the command runs the job worker, as serve does
                status = await s.call("check_memory_status", ingestion_id=queued["ingestion_id"])
                if status["status"] == "done":
                    break
                await anyio.sleep(0.2)
            assert status["status"] == "done"
            assert (await s.call("list_memories"))["total"] == 2
            assert (await s.call("get_memory", memory_id=added["id"]))["memory"]["namespace"] == ns
        # a data directory and a store of its own: on the bundled engine no engine runs there, so the command
        # starts one (and stops it on exit); the store has no credential, so it makes the owner's and runs as it
        as_owner = StdioServerParameters(command=GRAPHMEM, args=["mcp", "--log-level", "warning"], env=own,
                                         cwd=str(tmp_path))
        async with Client(as_owner, read_timeout_seconds=180) as client:
            s = await http_session(client)
            await s.call("add_memory", content="The owner writes here.", namespace="notes")
            assert (await s.call("list_memories", namespace="notes"))["total"] == 1  # '*': any namespace

    with own_store(tmp_path / "own") as store:
        anyio.run(main, child_environment(**store, data_dir=str(tmp_path / "own"), embedder="hashing"))
    owner_token = tmp_path / "own" / "owner-token"
    assert owner_token.is_file() and owner_token.stat().st_mode & 0o777 == 0o600
    assert not engine_processes(tmp_path / "own"), "the command left its engine running"


def test_stdio_stdout_is_json_rpc_only(runtime: Runtime, ns: str, tmp_path: Path) -> None:
    _, token = credential(runtime, [ns])
    env = child_environment(runtime, embedder="hashing", token=token)
    messages = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "add_memory", "arguments": {"content": "Stdout stays clean."}}},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "search_memories", "arguments": {"query": "stdout"}}}]
    stderr = tmp_path / "stderr.log"
    with stderr.open("w") as errors:
        process = subprocess.Popen([GRAPHMEM, "mcp", "--log-level", "debug"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=errors, text=True, env=env, cwd=tmp_path)
        assert process.stdin is not None and process.stdout is not None
        lines: list[str] = []
        try:
            for message in messages:  # one at a time: each reply (if any) before the next message
                process.stdin.write(json.dumps(message) + "\n")
                process.stdin.flush()
                if "id" in message:
                    lines.append(process.stdout.readline())
        finally:
            process.stdin.close()
            rest = process.stdout.read()
            process.wait(timeout=60)
    lines = [line for line in lines + rest.splitlines() if line.strip()]
    for line in lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line  # every line of stdout is a JSON-RPC message
    replies = {json.loads(line).get("id"): json.loads(line) for line in lines}
    assert replies[1]["result"]["serverInfo"]["name"] == "graphmem"
    assert replies[2]["result"]["structuredContent"]["status"] == "remembered", replies[2]
    assert "result" in replies[3], replies[3]  # a search ran (models loaded) and stdout is still JSON-RPC
    logged = stderr.read_text()
    assert "DEBUG" in logged or "INFO" in logged  # the logs went to stderr


def test_stdio_refuses_a_relative_data_dir(tmp_path: Path) -> None:
    env = {**os.environ, "GRAPHMEM_DATA_DIR": ".graphmem", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([GRAPHMEM, "mcp"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert done.returncode != 0 and done.stdout == ""
    assert "relative" in done.stderr and "absolute path" in done.stderr
    assert not (tmp_path / ".graphmem").exists()
