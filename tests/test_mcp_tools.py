"""Every MCP tool through the SDK's in-memory client: the happy path, bad input (a tool error with a sentence,
never pydantic's report or a stack trace), and the structured result validated against the advertised
``outputSchema`` (``Session.call`` checks it on every call). The tool list is checked against the tables of
the MCP issue: names, titles, annotations and input schemas."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from graphmem.identity import OPERATOR, Identity, RateLimits, Scope
from graphmem.mcp.server import build_server
from graphmem.model import CallerContext, DocumentInput, SearchFilters, View
from graphmem.model.flat import flat_fields
from graphmem.runtime import Runtime
from graphmem.search.recall import count_tokens
from mcp_helpers import Session, credential, session

R, W, D = "read", "write", "destroy"  # read-only; writes, not destructive; destructive
# the flattened concepts: every field of the service's model is an argument of the tools that take it
FILTERS = {flat.name for flat in flat_fields(SearchFilters)}
VIEW = {flat.name for flat in flat_fields(View)}
TOOLS: dict[str, tuple[str, str, set[str], set[str]]] = {  # name: (title, kind, parameters, required)
    "search_memories": ("Search memories", R, {"query", "limit", "namespace", *FILTERS, *VIEW}, {"query"}),
    "list_memories": ("List memories", R, {"page", "limit", "path", "cursor", "namespace"}, set()),
    "get_memory": ("Get a memory", R, {"memory_id", "max_chars", "namespace"}, {"memory_id"}),
    "add_memory": ("Add a memory", W, {"content", "path", "title", "metadata", "namespace"}, {"content"}),
    "update_memory": ("Update a memory", W, {"memory_id", "content", "expected_version", "title", "metadata",
                                             "path", "namespace"}, {"memory_id", "content"}),
    "delete_memory": ("Delete a memory", D, {"memory_id", "mode", "namespace"}, {"memory_id"}),
    "list_handoffs": ("List handoffs", R, {"namespace"}, set()),
    "get_handoff": ("Get a handoff", R, {"project", "version", "namespace"}, {"project"}),
    "save_handoff": ("Save a handoff", W, {"project", "goal", "summary", "expected_version", "request_id",
                                           "decisions", "next_steps", "references", "namespace"},
                     {"project", "goal", "summary", "expected_version", "request_id"}),
    "log_exchange": ("Log an exchange", W, {"user_message", "assistant_message", "conversation_id", "namespace"},
                     {"user_message", "assistant_message"}),
    "check_memory_status": ("Check a logged exchange", R, {"ingestion_id", "namespace"}, {"ingestion_id"}),
    "recall_context": ("Recall context", R, {"query", "max_items", "max_tokens", "namespace", *FILTERS, *VIEW},
                       {"query"}),
    "list_recent_memories": ("List recent memories", R, {"limit", "namespace"}, set()),
    "search_facts": ("Search facts", R, {"query", "limit", "explain", "namespace", *FILTERS, *VIEW}, {"query"}),
    "search_entities": ("Search entities", R, {"query", "limit", "path", "namespace", *VIEW}, {"query"}),
    "search_triples": ("Search triples", R, {"subject", "predicate", "object", "term", "negated", "limit", "path",
                                             "cursor", "namespace", *VIEW}, set()),
    "get_entity": ("Get an entity", R, {"entity_id", "name", "facts", "neighbours", "namespace"}, set()),
    "find_path": ("Find a path", R, {"from_entity", "to_entity", "max_hops", "namespace"},
                  {"from_entity", "to_entity"}),
    "explore_graph": ("Explore the graph", R, {"seed", "caps", "max_tokens", "cursor", "count_reachable", "namespace",
                                               *VIEW}, {"seed"}),
    "memory_history": ("Memory history", R, {"memory_id", "cursor", "namespace"}, {"memory_id"}),
    "forget_memory": ("Forget a memory", D, {"memory_id", "mode", "namespace"}, {"memory_id"}),
    "restore_memory": ("Restore a memory", W, {"memory_id", "namespace"}, {"memory_id"}),
    "memory.search": ("Search memories (Mnemolog)", R, {"namespace", "query", "since", "limit"},
                      {"namespace", "query"}),
    "graph.edge.search": ("Search relations (Mnemolog)", R, {"namespace", "term", "relation", "limit"},
                          {"namespace"}),
}
MNEMOLOG = {"memory.search", "graph.edge.search"}


def run(runtime: Runtime, ns: str, scenario: Any, scopes: tuple[Scope, ...] = (Scope.read, Scope.write)) -> None:
    fixed, _ = credential(runtime, [ns], scopes)

    async def main() -> None:
        async with session(runtime, fixed) as s:
            await scenario(s)

    anyio.run(main)


def test_tool_list_matches_the_tables(runtime: Runtime, ns: str) -> None:
    async def scenario(s: Session) -> None:
        assert set(s.tools) == set(TOOLS)
        for name, (title, kind, parameters, required) in TOOLS.items():
            tool = s.tools[name]
            hints = tool.annotations
            assert tool.title == title and hints is not None, name
            assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == (
                kind == R, kind == D, False), name
            assert hints.idempotent_hint is not None, name
            assert set(tool.input_schema["properties"]) == parameters, name
            assert set(tool.input_schema.get("required", [])) == required, name
            assert tool.output_schema is not None and tool.output_schema.get("type") == "object", name
            assert tool.description and len(tool.description) > 60, name
        properties = {name: s.tools[name].input_schema["properties"] for name in TOOLS}
        # search_memories sets no maximum (clients must not refuse 500 before the server clamps it)
        assert "maximum" not in str(properties["search_memories"]["limit"])
        assert '"maximum": 200' in _json(properties["list_memories"]["limit"])
        assert '"maxLength": 100000' in _json(properties["add_memory"]["content"])
        caps = s.tools["explore_graph"].input_schema["$defs"]["ExploreCaps"]["properties"]
        assert (caps["depth"]["default"], caps["max_nodes"]["default"], caps["fanout"]["default"]) == (2, 100, 10)
        assert properties["explore_graph"]["max_tokens"]["default"] == 8000
        assert '"maximum": 4' in _json(properties["find_path"]["max_hops"])

    run(runtime, ns, scenario)
    default = build_server(lambda: runtime, runtime.settings, fixed=credential(runtime, [ns])[0])

    async def listed() -> set[str]:
        from mcp import Client

        async with Client(default) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert anyio.run(listed) == set(TOOLS) - MNEMOLOG  # mnemolog is off by default


def _json(value: object) -> str:
    import json

    return json.dumps(value)


def test_memory_tools(runtime: Runtime, ns: str) -> None:
    async def scenario(s: Session) -> None:
        added = await s.call("add_memory", content="Priya Raman leads Project Falcon at Acme Corp.",
                             path="projects/falcon", title="Falcon lead", metadata={"team": "core"})
        assert added["status"] == "remembered" and added["version"] == 1 and added["isLatest"] is True
        again = await s.call("add_memory", content="Priya Raman leads Project Falcon at Acme Corp.",
                             path="projects/falcon")
        assert again["status"] == "unchanged" and again["id"] == added["id"]
        for number in range(3):
            await s.call("add_memory", content=f"Note {number}: the lighthouse keeper logs the weather.",
                         path="notes")

        memory = await s.call("get_memory", memory_id=added["id"], max_chars=100)
        assert memory["memory"]["content"].startswith("Priya") and memory["memory"]["content_truncated"] is False
        assert memory["memory"]["metadata"]["client"] == "mcp" and memory["memory"]["metadata"]["team"] == "core"
        assert memory["facts"][0]["isLatest"] is True and memory["facts_total"] == 1
        assert "Priya Raman" in memory["entities"] and memory["memory"]["path"] == "projects/falcon"

        page = await s.call("list_memories", page=1, limit=2)
        assert page["total"] == 4 and len(page["memories"]) == 2 and page["has_more"] is True
        last = await s.call("list_memories", page=2, limit=2, path="notes")
        assert last["total"] == 3 and len(last["memories"]) == 1 and last["has_more"] is False
        first_page = await s.call("list_memories", limit=3)
        rest = await s.call("list_memories", limit=3, cursor=first_page["next_cursor"])
        assert first_page["has_more"] and not rest["has_more"] and rest["next_cursor"] is None
        assert {m["id"] for m in first_page["memories"] + rest["memories"]} == \
            {m["id"] for m in (await s.call("list_memories", limit=10))["memories"]}

        found = await s.call("search_memories", query="Who leads Project Falcon?", limit=500)
        assert found["limit"] == 100 and found["clamped"] is True
        assert found["results"][0]["id"] == added["id"] and "Falcon" in found["results"][0]["facts"][0]["text"]
        one = await s.call("search_memories", query="lighthouse weather", limit=0, path="notes")
        assert one["limit"] == 1 and one["clamped"] is True and len(one["results"]) == 1

        updated = await s.call("update_memory", memory_id=added["id"], expected_version=1,
                               content="Priya Raman leads Project Heron at Acme Corp.")
        assert updated["status"] == "updated" and updated["version"] == 2 and updated["chain_id"] == added["chain_id"]
        old = await s.error("update_memory", memory_id=added["id"], content="Stale write.")
        assert f"Next: update the latest version {updated['id']}" in old
        stale = await s.error("update_memory", memory_id=updated["id"], expected_version=1, content="Stale write.")
        assert "2" in stale and "Next:" in stale, stale

        deleted = await s.call("delete_memory", memory_id=updated["id"])
        assert deleted["mode"] == "soft" and deleted["documents"] == 2
        assert (await s.call("list_memories"))["total"] == 3
        restored = await s.call("restore_memory", memory_id=updated["id"])
        assert restored["id"] == updated["id"] and restored["isForgotten"] is False

        # bad input: a sentence naming the field and its rule
        blank = await s.error("add_memory", content="   ")
        assert blank.startswith("invalid input: content") and "pydantic" not in blank
        too_long = await s.error("add_memory", content="x" * 100_001)
        assert "content" in too_long and "100000" in too_long.replace(",", "")
        assert "no memory with id" in await s.error("get_memory", memory_id="missing-id")
        assert "page" in await s.error("list_memories", page=0)
        assert "limit" in await s.error("list_memories", limit=201)
        assert "mode" in await s.error("delete_memory", memory_id=added["id"], mode="shred")
        assert "namespace" in await s.error("list_memories", namespace="bad namespace!")

    run(runtime, ns, scenario)


def test_long_content_is_cut_with_a_flag(runtime: Runtime, ns: str) -> None:
    long_text = " ".join(f"Sentence {i} tells of the harbour at Varna and its cranes." for i in range(300))

    async def scenario(s: Session) -> None:
        added = await s.call("add_memory", content=long_text)
        short = await s.call("get_memory", memory_id=added["id"])
        assert short["memory"]["content_truncated"] is True and short["memory"]["content_chars"] == len(long_text)
        assert len(short["memory"]["content"]) <= 8001 and short["facts_total"] == 300 and len(short["facts"]) == 50
        whole = await s.call("get_memory", memory_id=added["id"], max_chars=100_000)
        assert whole["memory"]["content"] == long_text and whole["memory"]["content_truncated"] is False
        listed = await s.call("list_memories")
        assert len(listed["memories"][0]["preview"]) <= 301
        assert "embedding" not in str(short) + str(listed)

    run(runtime, ns, scenario)


def test_handoff_tools(runtime: Runtime, ns: str) -> None:
    async def scenario(s: Session) -> None:
        assert (await s.call("list_handoffs"))["items"] == []
        empty = await s.call("get_handoff", project="apollo/ui")
        assert empty["version"] == 0
        first = await s.call("save_handoff", project="apollo/ui", goal="Ship the UI", summary="Forms done",
                             expected_version=0, request_id="req-mcp-0001", next_steps=["tables"])
        assert first["version"] == 1 and first["context"]["next_steps"] == ["tables"]
        retried = await s.call("save_handoff", project="apollo/ui", goal="Ship the UI", summary="Forms done",
                               expected_version=0, request_id="req-mcp-0001", next_steps=["tables"])
        assert retried["version"] == 1
        stale = await s.error("save_handoff", project="apollo/ui", goal="Other", summary="Other",
                              expected_version=0, request_id="req-mcp-0002")
        assert "read the handoff, reconcile, and save with expected_version 1" in stale
        assert (await s.call("get_handoff", project="apollo/ui"))["context"]["summary"] == "Forms done"
        assert [h["project"] for h in (await s.call("list_handoffs"))["items"]] == ["apollo/ui"]
        assert "request_id" in await s.error("save_handoff", project="apollo/ui", goal="g", summary="s",
                                             expected_version=1, request_id="x")
        assert "expected_version" in await s.error("save_handoff", project="apollo/ui", goal="g", summary="s",
                                                   expected_version=-1, request_id="req-mcp-0003")

    run(runtime, ns, scenario)


def test_conversation_tools(runtime: Runtime, ns: str) -> None:
    worker = runtime.job_worker()

    async def scenario(s: Session) -> None:
        queued = await s.call("log_exchange", user_message="I moved to Lisbon last spring.",
                              assistant_message="Noted: you live in Lisbon now.", conversation_id="conv-7")
        assert queued["status"] == "queued"
        status = await s.call("check_memory_status", ingestion_id=queued["ingestion_id"])
        assert status["status"] in ("queued", "running", "done")
        while worker.run_once():
            pass
        done = await s.call("check_memory_status", ingestion_id=queued["ingestion_id"])
        assert done["status"] == "done" and len(done["memory_ids"]) == 1 and done["error"] is None
        memory = await s.call("get_memory", memory_id=done["memory_ids"][0])
        assert memory["memory"]["content"].startswith("User: I moved to Lisbon")
        assert memory["memory"]["metadata"]["conversation_id"] == "conv-7"
        assert memory["memory"]["metadata"]["roles"] == "user,assistant"
        recent = await s.call("list_recent_memories", limit=5)
        assert [m["id"] for m in recent["memories"]] == done["memory_ids"]
        recalled = await s.call("recall_context", query="Where do I live? Lisbon", max_tokens=200, max_items=3)
        assert recalled["tokens_used"] <= 200 and len(recalled["items"]) <= 3
        assert recalled["items"] and all(f"[{i['number']}] " in recalled["context_text"] and i["isLatest"]
                                         for i in recalled["items"])
        assert "Lisbon" in recalled["context_text"] and "text" not in recalled["items"][0]
        assert "max_tokens" in await s.error("recall_context", query="Lisbon", max_tokens=5)
        assert "no job with id 'missing'" in await s.error("check_memory_status", ingestion_id="missing")
        assert "user_message" in await s.error("log_exchange", user_message="", assistant_message="ok")

    run(runtime, ns, scenario)


def test_graph_tools(runtime: Runtime, ns: str) -> None:
    async def scenario(s: Session) -> None:
        first = await s.call("add_memory",
                             content="Priya Raman works at Acme Corp. In 2024 Acme Corp acquired Beta Labs.")
        await s.call("add_memory", content="Tomas Berg works at Beta Labs in Oslo.")
        facts = await s.call("search_facts", query="Where does Priya Raman work?", limit=3, explain=True)
        assert facts["facts"] and facts["facts"][0]["signals"]
        entities = await s.call("search_entities", query="Acme", limit=5)
        assert any(e["name"].startswith("Acme") for e in entities["items"])
        triples = await s.call("search_triples", subject="Priya Raman")
        assert triples["items"] and triples["items"][0]["predicate"] == "work at"
        assert "give at least one" in await s.error("search_triples")

        priya = await s.call("get_entity", name="Priya Raman")
        assert priya["facts_total"] >= 1 and priya["neighbours"][0]["name"].startswith("Acme")
        by_id = await s.call("get_entity", entity_id=priya["id"], facts=1, neighbours=1)
        assert by_id["name"] == "Priya Raman" and len(by_id["facts"]) <= 1
        assert "no entity" in (await s.error("get_entity", name="Nobody Atall")).lower()
        await s.call("add_memory", content="Beta hired two engineers.")  # a short name: an alias of Beta Labs
        beta = await s.call("get_entity", name="Beta")
        assert beta["name"] == "Beta Labs" and beta["aliases"] == ["Beta"]
        for neither_or_both in ({}, {"entity_id": priya["id"], "name": "Priya Raman"}):
            assert "give the entity's id or its name" in await s.error("get_entity", **neither_or_both)

        path = await s.call("find_path", from_entity="Priya Raman", to_entity="Tomas Berg", max_hops=4)
        assert path["paths"], path
        names = path["paths"][0]["names"]
        assert names[0] == "Priya Raman" and names[-1] == "Tomas Berg" and all(s["text"] for s in
                                                                               path["paths"][0]["steps"])
        assert "max_hops" in await s.error("find_path", from_entity="a", to_entity="b", max_hops=5)

        graph = await s.call("explore_graph", seed={"kind": "entity", "id": priya["id"]})
        assert graph["totalDocuments"] >= 1 and {n["kind"] for n in graph["nodes"]} >= {"entity", "fact"}
        assert {"truncated", "unavailableDocuments", "coverage", "nextCursor"} <= set(graph)
        by_memory = await s.call("explore_graph", seed={"kind": "document", "id": first["id"]},
                                 caps={"depth": 1, "max_nodes": 5})
        assert len(by_memory["nodes"]) <= 5 and by_memory["reachableDocuments"] >= 1
        uncounted = await s.call("explore_graph", seed={"kind": "document", "id": first["id"]},
                                 caps={"depth": 1, "max_nodes": 1}, count_reachable=False)
        assert uncounted["truncated"] and uncounted["reachableDocuments"] is None and uncounted["coverage"] is None
        assert "max_nodes" in await s.error("explore_graph", seed={"kind": "query", "query": "Acme"},
                                            caps={"max_nodes": 0})
        assert "seed" in await s.error("explore_graph", seed={"kind": "person", "id": priya["id"]})
        assert "seed" in await s.error("explore_graph")

        updated = await s.call("update_memory", memory_id=first["id"], content="Priya Raman works at Gamma Inc.")
        history = await s.call("memory_history", memory_id=updated["id"])
        assert [v["version"] for v in history["versions"]] == [2, 1]
        assert history["versions"][1]["isLatest"] is False
        forgotten = await s.call("forget_memory", memory_id=updated["id"], mode="soft")
        assert forgotten["documents"] == 2
        assert all(f["memory_id"] != updated["id"] for f in
                   (await s.call("search_facts", query="Gamma Inc"))["facts"])
        assert (await s.call("restore_memory", memory_id=updated["id"]))["isLatest"] is True

    run(runtime, ns, scenario)


def test_mnemolog_tools(runtime: Runtime, ns: str) -> None:
    async def scenario(s: Session) -> None:
        before = int(time.time() * 1000)
        added = await s.call("add_memory", content="Ines Duarte manages the Porto office. She hired Rui Costa.",
                             title="Porto")
        found = await s.call("memory.search", namespace=ns, query="Who manages the Porto office?")
        item = found["items"][0]
        assert item["id"] == added["id"] and item["title"] == "Porto" and "Porto office" in item["content"]
        assert item["created_at"] >= before
        assert (await s.call("memory.search", namespace=ns, query="Porto", since=before - 1000))["items"]
        assert (await s.call("memory.search", namespace=ns, query="Porto", since="2020-01-01T00:00:00Z"))["items"]
        assert (await s.call("memory.search", namespace=ns, query="Porto", since="2999-01-01"))["items"] == []
        assert (await s.call("memory.search", namespace=ns, query="Porto", since=str(before - 1000)))["items"]
        assert "ISO 8601" in await s.error("memory.search", namespace=ns, query="Porto", since="yesterday")
        edges = await s.call("graph.edge.search", namespace=ns, term="Ines Duarte")
        assert any(e["subject"] == "Ines Duarte" and e["memory_id"] == added["id"] for e in edges["edges"]), edges
        assert all(set(edge) == {"subject", "predicate", "object", "negated", "memory_id"} for edge in edges["edges"])
        assert "namespace" in await s.error("memory.search", query="Porto")

    run(runtime, ns, scenario)


def test_a_read_credential_may_only_read(runtime: Runtime, ns: str) -> None:
    """The service's rule, said as a sentence: every write tool is refused, the memory stays as it was."""
    own = runtime.service.add_memory(CallerContext.for_namespaces(ns), ns,
                                     DocumentInput(content="Kept as is.")).document

    async def scenario(s: Session) -> None:
        assert (await s.call("list_memories"))["total"] == 1
        for name, arguments in (("add_memory", {"content": "Nope."}), ("delete_memory", {"memory_id": own.id}),
                                ("update_memory", {"memory_id": own.id, "content": "Changed."}),
                                ("forget_memory", {"memory_id": own.id, "mode": "hard"}),
                                ("restore_memory", {"memory_id": own.id}),
                                ("save_handoff", {"project": "p", "goal": "g", "summary": "s", "expected_version": 0,
                                                  "request_id": "req-reader-1"}),
                                ("log_exchange", {"user_message": "a", "assistant_message": "b"})):
            refused = await s.error(name, **arguments)
            assert "no write access to namespace" in refused and "may not write there" in refused, (name, refused)
        assert (await s.call("get_memory", memory_id=own.id))["memory"]["content"] == "Kept as is."

    run(runtime, ns, scenario, scopes=(Scope.read,))


@pytest.mark.timeout(60)
def test_rate_limited_calls_say_how_long_to_wait(runtime: Runtime, ns: str) -> None:
    limited = Identity(runtime.identity.credentials, RateLimits(reads=2, writes=1, window_s=30,
                                                                storage_uri="memory://"), "default",
                       runtime.service.every_namespace)
    busy = Runtime(runtime.settings, runtime.store, runtime.service, limited)
    fixed, _ = credential(runtime, [ns])

    async def main() -> None:
        async with session(busy, fixed, limited=True) as s:
            await s.call("add_memory", content="The only write this window.")
            refused = await s.error("add_memory", content="One too many.")
            assert "rate limited: wait " in refused and "seconds, then call again" in refused
            for _ in range(2):
                await s.call("list_memories")  # reads have their own count
            assert "rate limited" in await s.error("search_facts", query="write")

    anyio.run(main)


BABBAGE = {"kind": "query", "query": "Analytical Engine Babbage Lovelace"}


def test_explore_graph_fits_its_token_budget(runtime: Runtime, ns: str) -> None:
    """A dense page: labels are cut shorter, then edges left out, to stay within max_tokens; every node stays
    (the next page starts after it) and the result says what it cut."""
    sentences = [f"Ada Lovelace and Charles Babbage discussed the Analytical Engine with Mary Somerville in "
                 f"London on evening {i}, while the Royal Society debated the difference engine funding at length."
                 for i in range(60)]

    async def scenario(s: Session) -> None:
        await s.call("add_memory", content=" ".join(sentences))
        # 40 nodes: which facts a capped fan-out reaches through the entities follows the engine's adjacency
        # order, and the default cap of 100 holds 39 to 65 nodes here, by engine
        default = await s.call("explore_graph", seed=BABBAGE, caps={"max_nodes": 40})
        assert default["tokens"] <= 8000 and len(default["nodes"]) == 40
        # half the default's size: about 80 tokens a node without labels or edges leaves room, so it must cut
        tight = await s.call("explore_graph", seed=BABBAGE, caps={"max_nodes": 40}, max_tokens=4000)
        assert len(tight["nodes"]) == len(default["nodes"])
        for result, cap in ((default, 8000), (tight, 4000)):
            recounted = count_tokens(json.dumps(result, ensure_ascii=False))
            assert abs(recounted - result["tokens"]) <= 2 and recounted <= cap, (recounted, result["tokens"])
        assert tight["labelsCutAt"] < 300
        assert all(len(n["label"]) <= tight["labelsCutAt"] + 1 for n in tight["nodes"] if n["label"])
        refs = {n["ref"] for n in tight["nodes"]}
        assert all(e["source"] in refs or isinstance(e["source"], str) for e in tight["edges"])
        assert tight["edgesLeftOut"] >= 0 and len(tight["edges"]) + tight["edgesLeftOut"] == len(default["edges"]) \
            + default["edgesLeftOut"]
        too_small = await s.error("explore_graph", seed=BABBAGE, max_tokens=1000)
        assert "ask for max_nodes" in too_small

    run(runtime, ns, scenario)


def test_a_fixed_token_is_checked_at_every_call(runtime: Runtime, ns: str) -> None:
    """stdio runs on a token, not a credential object: revoking it stops a long-lived process's calls."""
    revoked, token = credential(runtime, [ns])

    async def main() -> None:
        async with session(runtime, token) as s:
            assert (await s.call("list_memories"))["total"] == 0
            runtime.identity.revoke(revoked.id, by=OPERATOR)
            assert "token" in (await s.error("list_memories")).lower()

    anyio.run(main)


def test_list_settings_read_commas_or_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """GRAPHMEM_ALLOWED_HOSTS, GRAPHMEM_MCP_TOOLSETS and GRAPHMEM_CORS_ORIGINS as the README writes them."""
    from pydantic import ValidationError

    from graphmem.config import Settings, Toolset

    monkeypatch.setenv("GRAPHMEM_ALLOWED_HOSTS", "127.0.0.1:*, memory.example.org:443")
    monkeypatch.setenv("GRAPHMEM_MCP_TOOLSETS", "memory,graph")
    monkeypatch.setenv("GRAPHMEM_CORS_ORIGINS", '["https://a.example", "https://b.example"]')
    chosen = Settings(_env_file=None)  # type: ignore[call-arg]
    assert chosen.allowed_hosts == ["127.0.0.1:*", "memory.example.org:443"]
    assert chosen.mcp_toolsets == [Toolset.memory, Toolset.graph]
    assert chosen.cors_origins == ["https://a.example", "https://b.example"]
    monkeypatch.setenv("GRAPHMEM_MCP_TOOLSETS", "memory,everything")
    with pytest.raises(ValidationError):
        Settings(_env_file=None)  # type: ignore[call-arg]
    monkeypatch.delenv("GRAPHMEM_MCP_TOOLSETS")
    assert Toolset.mnemolog not in Settings(_env_file=None).mcp_toolsets  # type: ignore[call-arg]
