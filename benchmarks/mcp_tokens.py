"""How many tokens each MCP tool's result costs an agent, on the gold set's data (real model, bundled engine).

Every tool is called through the SDK's in-memory client as an agent would: with its defaults ("typical": the
median over the gold questions for tools that take a query, else one call), and with its largest arguments
("largest": limits and budgets at their maximum, on the same data). A result is counted as the text the SDK
sends (the JSON of the structured result), with the recall tokenizer (all-MiniLM-L6-v2's). The last column
says what bounds the result whatever the data.

    .venv/bin/python benchmarks/mcp_tokens.py [--embedder minilm] [--questions 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from gold import load_gold, load_jsonl
from graphmem.config import Settings, Toolset
from graphmem.identity import OPERATOR, NewCredential, Scope
from graphmem.mcp.server import build_server
from graphmem.model import CallerContext, HandoffInput
from graphmem.runtime import Runtime
from graphmem.search.recall import count_tokens

NAMESPACE = "gold"
BOUNDS = {
    "search_memories": "limit ≤ 100 memories x 3 facts x 500 chars",
    "list_memories": "limit ≤ 200 x a 300-char preview",
    "get_memory": "max_chars ≤ 100,000 + 50 facts x 500 chars + 50 entity names",
    "add_memory": "constant",
    "update_memory": "constant",
    "delete_memory": "constant",
    "list_handoffs": "100 projects x a handoff's bounds",
    "get_handoff": "a handoff's bounds (goal, summary, 3 lists)",
    "save_handoff": "a handoff's bounds",
    "log_exchange": "constant",
    "check_memory_status": "constant",
    "recall_context": "max_tokens ≤ 16,000 of context + max_items ≤ 50 references",
    "list_recent_memories": "limit ≤ 200 x a 300-char preview",
    "search_facts": "limit ≤ 100 facts x 500 chars",
    "search_entities": "limit ≤ 100 names",
    "search_triples": "limit ≤ 100 triples x 500 chars",
    "get_entity": "facts ≤ 100 x 500 chars + neighbours ≤ 100",
    "find_path": "≤ 3 paths x 4 hops x 500 chars",
    "explore_graph": "max_tokens (default 8,000; at most 100,000)",
    "memory_history": "20 versions x a 300-char preview",
    "forget_memory": "constant",
    "restore_memory": "a 300-char preview",
    "memory.search": "limit ≤ 100 x 1,000 chars",
    "graph.edge.search": "limit ≤ 100 edges",
}


async def measure(runtime: Runtime, questions: list[str]) -> list[tuple[str, int, int]]:
    credential, _ = runtime.identity.create(NewCredential(name="bench", scopes=[Scope.read, Scope.write],
                                                         namespaces=[NAMESPACE]), by=OPERATOR)
    settings = runtime.settings.model_copy(update={"mcp_toolsets": list(Toolset)})
    server = build_server(lambda: runtime, settings, fixed=credential, limited=False)
    rows: list[tuple[str, int, int]] = []
    async with Client(server) as client:
        async def tokens(name: str, **arguments: Any) -> tuple[int, dict[str, Any]]:
            result = await client.call_tool(name, arguments)
            text = " ".join(getattr(block, "text", "") for block in result.content)
            if result.is_error:
                raise SystemExit(f"{name}({arguments}) failed: {text}")
            return count_tokens(text), result.structured_content or {}

        async def median(name: str, largest: dict[str, Any], **arguments: Any) -> None:
            typical = [(await tokens(name, query=q, **arguments))[0] for q in questions]
            big = max([(await tokens(name, query=q, **{**arguments, **largest}))[0] for q in questions[:5]])
            rows.append((name, int(statistics.median(typical)), big))

        async def once(name: str, largest: dict[str, Any] | None = None, **arguments: Any) -> dict[str, Any]:
            size, result = await tokens(name, **arguments)
            rows.append((name, size, (await tokens(name, **{**arguments, **largest}))[0] if largest else size))
            return result

        await median("search_memories", {"limit": 100})
        listed = await once("list_memories", {"limit": 200})
        memory_id = max(listed["memories"], key=lambda m: len(m["preview"] or ""))["id"]
        await once("get_memory", {"max_chars": 100_000}, memory_id=memory_id)
        added = await once("add_memory", content="The benchmark adds this note about the quarterly review.")
        await once("update_memory", memory_id=added["id"], content="The benchmark changed this note.")
        await once("list_handoffs")
        await once("get_handoff", project="launch")
        await once("save_handoff", project="launch", goal="Ship the release", summary="Benchmark handoff.",
                   expected_version=1, request_id="req-bench-0002", next_steps=["measure"])
        queued = await once("log_exchange", user_message="What did we decide on the launch date?",
                            assistant_message="You decided on the second week of June.")
        await once("check_memory_status", ingestion_id=queued["ingestion_id"])
        await median("recall_context", {"max_tokens": 16_000, "max_items": 50})
        await once("list_recent_memories", {"limit": 200})
        await median("search_facts", {"limit": 100})
        await median("search_entities", {"limit": 100})
        entities = (await tokens("search_entities", query=questions[0], limit=2))[1]["items"]
        await once("search_triples", {"limit": 100}, term=entities[0]["name"])
        await once("get_entity", {"facts": 100, "neighbours": 100}, entity_id=entities[0]["id"])
        await once("find_path", {"max_hops": 4}, from_entity=entities[0]["id"], to_entity=entities[1]["id"])
        typical = [(await tokens("explore_graph", seed={"kind": "query", "query": q}))[0] for q in questions]
        largest = {"caps": {"max_nodes": 1000, "depth": 4, "fanout": 50}, "max_tokens": 100_000}
        big = max([(await tokens("explore_graph", seed={"kind": "query", "query": q}, **largest))[0]
                   for q in questions[:5]])
        rows.append(("explore_graph", int(statistics.median(typical)), big))
        await once("memory_history", memory_id=added["id"])
        await once("forget_memory", memory_id=added["id"])
        await once("restore_memory", memory_id=added["id"])
        await median("memory.search", {"limit": 100}, namespace=NAMESPACE)
        await once("graph.edge.search", {"limit": 100}, namespace=NAMESPACE, term=entities[0]["name"])
        await once("delete_memory", memory_id=added["id"], mode="hard")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm")
    parser.add_argument("--questions", type=int, default=20)
    args = parser.parse_args()
    questions = [q["question"] for q in load_jsonl("questions.jsonl")][:args.questions]
    with tempfile.TemporaryDirectory(prefix="graphmem-mcp-tokens-") as tmp:
        settings = Settings(_env_file=None, neo4j_uri=None, data_dir=Path(tmp), embedder=args.embedder)  # type: ignore[call-arg]
        with Runtime.open(settings) as runtime:
            load_gold(runtime.service, NAMESPACE)
            runtime.service.save_handoff(CallerContext.for_namespaces(NAMESPACE), NAMESPACE, HandoffInput(
                project="launch", goal="Ship the release", summary="Gold-set handoff.", expected_version=0,
                request_id="req-bench-0001", decisions=["June launch"], next_steps=["write notes"]))
            rows = anyio.run(measure, runtime, questions)
    print(f"tokens per result on the gold set ({len(questions)} questions, embedder {args.embedder})")
    print("| tool | typical | largest arguments | bounded by |")
    print("|---|---:|---:|---|")
    for name, typical, largest in rows:
        print(f"| `{name}` | {typical:,} | {largest:,} | {BOUNDS[name]} |")


if __name__ == "__main__":
    main()
