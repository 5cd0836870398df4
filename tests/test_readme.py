"""The README's examples, run as written against a real `graphmem serve` on a new data directory.

Which blocks run: the README's shell blocks whose fence reads ```sh readme-test (Markdown renders the first
word of a fence's info string as its language, so the marker does not show). Install and serve commands are
plain ```sh blocks and are left out: this module plays their part. It starts `graphmem serve` (the real app,
the bundled engine it starts and owns, or in the Neo4j pass a new Neo4j database with the serve and the
README's shell pointed at it by GRAPHMEM_NEO4J_URI; the default embedder) in a new directory laid out like a checkout
(`.venv` is this test run's virtualenv, `.graphmem` is made by the server), waits for `/ready`, and runs every
marked block, in README order, in one `bash` process under `set -euo pipefail`, so the variables a block sets
(`$GRAPHMEM_URL`, `$TOKEN`, `$ID`, ...) reach the next ones. The only thing it sets for them is
`GRAPHMEM_URL` (the README's `${GRAPHMEM_URL:-http://127.0.0.1:8420}` keeps it), since port 8420 may be in
use. The README's `curl -fsS` makes any answer other than 2xx fail the run.

What is asserted of the output, block by block: every search, recall, GraphQL and MCP example answered, and
answered with at least one result (a non-empty list, and "found" for a recall); and reads that name no
namespace cover every namespace the owner may read and say which (the README's namespace rule)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from helpers import child_environment, engine_processes, free_port, own_store

pytestmark = pytest.mark.engine  # starts engines or servers of its own

README = Path(__file__).resolve().parents[1] / "README.md"
MARKED = re.compile(r"^```sh readme-test\n(.*?)^```$", re.MULTILINE | re.DOTALL)
BLOCK_START = "@@readme-block {}@@"
BLOCK_SPLIT = re.compile(r"\n?@@readme-block (\d+)@@\n")
# the calls whose answers must hold results: /v1 search and recall, GraphQL, MCP tool calls (over HTTP and
# with the SDK's stdio client), and the CLI's search and recall
READ_CALLS = re.compile(r"/v1/memories/search|/v1/recall|/graphql\b|\"tools/call\"|call_tool\(|"
                        r"graphmem (?:search|recall) ")
CLI_TABLE = re.compile(r"^(\d+) memories for ", re.MULTILINE)
NOT_RESULTS = {"namespaces", "skipped"}  # lists in an answer that are not its results


@dataclass(frozen=True)
class Block:
    number: int
    text: str
    stdout: str
    finished: bool

    @property
    def on_the_command_line(self) -> bool:
        """The CLI's block: the local operator's reads, which name their namespaces in the table's title."""
        return "curl" not in self.text and "call_tool(" not in self.text


@dataclass(frozen=True)
class Run:
    blocks: list[Block]
    returncode: int
    stderr: str
    server_log: str


def marked_blocks(readme: str) -> list[str]:
    return [match.group(1) for match in MARKED.finditer(readme)]


def script(blocks: list[str]) -> str:
    """One bash script of every block, each announced on stdout and stderr so output can be told apart."""
    lines = ["set -euo pipefail"]
    for number, block in enumerate(blocks):
        marker = BLOCK_START.format(number)
        lines += [f"printf '\\n%s\\n' '{marker}'", f"printf '\\n%s\\n' '{marker}' >&2", block.rstrip("\n")]
    return "\n".join(lines) + "\n"


def json_values(text: str) -> tuple[list[Any], str]:
    """The JSON objects printed one after another in ``text`` (curl ends an answer with no newline; every
    answer the README prints is an object), and the lines that are not JSON (the CLI's tables)."""
    decoder = json.JSONDecoder()
    values: list[Any] = []
    other: list[str] = []
    at = 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        if text[at] == "{":
            try:
                value, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                pass
            else:
                values.append(value)
                continue
        end = text.find("\n", at)
        end = len(text) if end < 0 else end + 1
        other.append(text[at:end])
        at = end
    return values, "".join(other)


def kind_of(answer: Any) -> str | None:
    """Which read an answer is, by its shape; None for the other answers (a write, a memory, a history)."""
    if not isinstance(answer, dict):
        return None
    if "jsonrpc" in answer:
        result = answer.get("result")
        return "mcp" if "error" in answer or (isinstance(result, dict) and "content" in result) else None
    if "data" in answer or "errors" in answer:
        return "graphql"
    if "results" in answer:
        return "search"
    if "context_text" in answer:
        return "recall"
    return None


def holds_results(value: Any) -> bool:
    """Whether a non-empty list of results lies anywhere in ``value``."""
    if isinstance(value, list):
        return bool(value)
    if isinstance(value, dict):
        return any(holds_results(item) for key, item in value.items() if key not in NOT_RESULTS)
    return False


def problem(kind: str, answer: dict[str, Any]) -> str | None:
    """What is wrong with a read's answer, or None when it holds results."""
    if kind == "search":
        return None if answer["results"] else "no results"
    if kind == "recall":
        return None if answer["items"] and answer["answer_status"] == "found" else "nothing recalled"
    if kind == "graphql":
        if answer.get("errors") or not isinstance(answer.get("data"), dict):
            return f"errors: {answer.get('errors')}"
        empty = [field for field, value in answer["data"].items() if not holds_results(value)]
        return f"no results in {empty}" if empty else None
    if "error" in answer:
        return f"JSON-RPC error: {answer['error']}"
    result = answer["result"]
    if result.get("isError"):
        return f"tool error: {result.get('content')}"
    return None if holds_results(result.get("structuredContent")) else "no results"


def namespaces_named(kind: str, answer: dict[str, Any]) -> Any:
    """The namespaces an answer says it read: ``namespaces`` in /v1 and MCP results, GraphQL's
    ``extensions.namespaces``."""
    if kind == "graphql":
        return (answer.get("extensions") or {}).get("namespaces")
    if kind == "mcp":
        return (answer["result"].get("structuredContent") or {}).get("namespaces")
    return answer.get("namespaces")


def serve(directory: Path, env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    """`graphmem serve` in ``directory`` (its data directory: ``.graphmem`` there), once it is ready."""
    with log.open("wb") as out:
        server = subprocess.Popen([str(directory / ".venv" / "bin" / "graphmem"), "serve", "--port", str(port)],
                                  cwd=directory, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 180
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            raise AssertionError(f"graphmem serve did not become ready:\n{log.read_text(errors='replace')}")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def run(run_root: Path) -> Iterator[Run]:
    blocks = marked_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "the README marks no block with ```sh readme-test"
    checkout = run_root / "readme"
    checkout.mkdir()
    (checkout / ".venv").symlink_to(Path(sys.prefix))
    port = free_port()
    log = checkout / "serve.log"
    with own_store(checkout / ".graphmem") as store:
        env = child_environment(**store)
        server = serve(checkout, env, port, log)
        try:
            done = subprocess.run(["bash", "-c", script(blocks)], cwd=checkout, capture_output=True, text=True,
                                  env={**env, "GRAPHMEM_URL": f"http://127.0.0.1:{port}"}, timeout=240, check=False)
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
    deadline = time.monotonic() + 30
    while engine_processes(checkout) and time.monotonic() < deadline:
        time.sleep(0.2)
    parts = BLOCK_SPLIT.split(done.stdout)
    outputs = {int(number): text for number, text in zip(parts[1::2], parts[2::2], strict=True)}
    started = max(outputs, default=-1)
    yield Run([Block(number, text, outputs.get(number, ""), number < started or done.returncode == 0)
               for number, text in enumerate(blocks)], done.returncode, done.stderr,
              log.read_text(errors="replace"))
    assert not engine_processes(checkout), "graphmem serve exited but its engine is still running"


def failed_block(run: Run) -> str:
    block = next((b for b in run.blocks if not b.finished), run.blocks[-1])
    return (f"block {block.number} failed (exit {run.returncode}):\n{block.text}\n--- its stdout:\n{block.stdout}"
            f"\n--- stderr:\n{run.stderr[-4000:]}\n--- server log:\n{run.server_log[-3000:]}")


def test_the_marked_blocks_run_in_order_in_one_shell(run: Run) -> None:
    assert run.returncode == 0, failed_block(run)


def test_every_search_recall_graphql_and_mcp_example_finds_something(run: Run) -> None:
    seen: set[str] = set()
    for block in run.blocks:
        if not block.finished:
            continue
        values, other = json_values(block.stdout)
        answers = [(kind, value) for value in values if (kind := kind_of(value))]
        tables = [int(count) for count in CLI_TABLE.findall(other)]
        calls = len(READ_CALLS.findall(block.text))
        assert len(answers) + len(tables) == calls, (
            f"block {block.number} makes {calls} search, recall, GraphQL or MCP calls but printed "
            f"{len(answers)} such answers and {len(tables)} tables:\n{block.text}\n--- stdout:\n{block.stdout}")
        for kind, answer in answers:
            wrong = problem(kind, answer)
            assert wrong is None, f"block {block.number}, a {kind} answer: {wrong}\n{json.dumps(answer)[:2000]}"
        assert all(count > 0 for count in tables), f"block {block.number}: a CLI search found nothing\n{other}"
        seen.update(kind for kind, _ in answers)
        seen.update("cli table" for _ in tables)
    assert run.returncode == 0, failed_block(run)
    assert seen == {"search", "recall", "graphql", "mcp", "cli table"}, f"the README's examples answered only {seen}"


def test_reads_without_a_namespace_cover_every_readable_namespace_and_name_them(run: Run) -> None:
    """The first writes go to `default` (the owner's) and `team` (a one-namespace credential's, without naming
    it); every read example names no namespace, so each covers both and says so, and the search for who works
    on Project Falcon finds the memory in `team`."""
    named: list[tuple[int, str, Any]] = []
    found_in_team = False
    for block in run.blocks:
        if not block.finished:
            continue
        if block.on_the_command_line:
            assert "in default, team" in block.stdout, f"a CLI search did not read every namespace:\n{block.stdout}"
            continue
        for value in json_values(block.stdout)[0]:
            kind = kind_of(value)
            if kind is None:
                continue
            named.append((block.number, kind, namespaces_named(kind, value)))
            found_in_team = found_in_team or "Jonas Weber" in json.dumps(value)
    assert named, failed_block(run)
    missing = [(number, kind, names) for number, kind, names in named
               if not isinstance(names, list) or not {"default", "team"} <= set(names)]
    assert not missing, f"(block, answer, namespaces named) not naming both default and team: {missing}"
    assert found_in_team, "no read without a namespace found the memory stored in `team`"
