"""The attack suite of the HTTP API, extended to every MCP tool: a credential of namespace A never reads, finds,
explores, paths through or writes anything of B, whether it names B's namespace or sends B's ids and names; a
read credential never writes; a '*' credential never reaches a '_' namespace. Every such call is a tool error
and no answer carries any of B's text or ids (an id or name the attacker sent itself may come back in the
message, exactly as for one that does not exist). Token problems (none, unknown, revoked) are the transport's
401, tested in tests/test_mcp_transports.py."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from graphmem.identity import Scope
from graphmem.model import CallerContext, DocumentInput, EntityLookup, HandoffInput
from graphmem.runtime import Runtime
from helpers import store_password
from mcp_helpers import credential, error_text, session
from secret_scan import leaks


@dataclass(frozen=True)
class World:
    a: str
    b: str
    a_memory: str
    b_memory: str
    b_job: str
    b_entity: str
    secrets: tuple[str, ...]


Args = Callable[[World, str], dict[str, Any]]  # (world, target) -> arguments; target: own, victim, system


def _ns(w: World, target: str) -> str:
    return {"own": w.a, "victim": w.b, "system": "_system"}[target]


def named(**arguments: Any) -> Args:
    """A call that names the target namespace."""
    return lambda w, t: {**arguments, "namespace": _ns(w, t)}


def memory(**arguments: Any) -> Args:
    """A call on the target's memory by id (a victim's id is sent without a namespace, as a guess would be)."""
    def build(w: World, t: str) -> dict[str, Any]:
        chosen = {"memory_id": w.b_memory if t == "victim" else w.a_memory, **arguments}
        return {**chosen, "namespace": "_system"} if t == "system" else chosen
    return build


def _memory_id(w: World, t: str) -> str:
    return w.b_memory if t == "victim" else w.a_memory


def _system_if(t: str) -> dict[str, str]:
    return {"namespace": "_system"} if t == "system" else {}


def entity_by_id(key: str, **arguments: Any) -> Args:
    def build(w: World, t: str) -> dict[str, Any]:
        chosen = {key: w.b_entity if t == "victim" else "no-such-entity", **arguments}
        return {**chosen, "namespace": "_system"} if t == "system" else chosen
    return build


TOOLS: list[tuple[str, bool, Args]] = [  # (tool, writes, arguments)
    ("search_memories", False, named(query="quartz ledger")),
    ("list_memories", False, named()),
    ("get_memory", False, memory()),
    ("add_memory", True, named(content="Planted in B.")),
    ("update_memory", True, memory(content="Overwritten.")),
    ("delete_memory", True, memory(mode="hard")),
    ("list_handoffs", False, named()),
    ("get_handoff", False, named(project="vault/plan")),
    ("save_handoff", True, named(project="vault/plan", goal="Take over", summary="Mine now", expected_version=1,
                                 request_id="req-attack-01")),
    ("log_exchange", True, named(user_message="Plant this.", assistant_message="Planted.")),
    ("check_memory_status", False, lambda w, t: {"ingestion_id": w.b_job, **({"namespace": "_system"}
                                                                            if t == "system" else {})}),
    ("recall_context", False, named(query="quartz ledger")),
    ("list_recent_memories", False, named()),
    ("search_facts", False, named(query="quartz ledger")),
    ("search_entities", False, named(query="Vera Quartz")),
    ("search_triples", False, named(term="Vera Quartz")),
    ("get_entity", False, named(name="Vera Quartz")),
    ("get_entity", False, entity_by_id("entity_id")),
    ("find_path", False, named(from_entity="Vera Quartz", to_entity="Quartz Ledger")),
    ("find_path", False, lambda w, t: {"from_entity": w.b_entity, "to_entity": w.b_entity,
                                       **({"namespace": "_system"} if t == "system" else {})}),
    ("explore_graph", False, named(seed={"kind": "query", "query": "quartz ledger"})),
    ("explore_graph", False, lambda w, t: {"seed": {"kind": "document", "id": _memory_id(w, t)},
                                           **_system_if(t)}),
    ("explore_graph", False, lambda w, t: {"seed": {"kind": "entity", "id": w.b_entity}, **_system_if(t)}),
    ("explore_graph", False, lambda w, t: {"seed": {"kind": "ids", "ids": [w.b_memory, w.b_entity]},
                                           **_system_if(t)}),
    ("memory_history", False, memory()),
    ("forget_memory", True, memory(mode="redact")),
    ("restore_memory", True, memory()),
    ("memory.search", False, named(query="quartz ledger")),
    ("graph.edge.search", False, named(term="Vera Quartz")),
]
CASES = ("A on B", "read token writing", "* on _system")
TABLE = [(tool, writes, args, case) for tool, writes, args in TOOLS for case in CASES
         if case != "read token writing" or writes]


@pytest.fixture(scope="module")
def world(runtime: Runtime) -> Iterator[World]:
    a, b = f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"
    service = runtime.service
    victim = CallerContext.for_namespaces(b)
    secret_text = f"Quartz ledger {uuid.uuid4().hex} belongs to Vera Quartz."
    b_memory = service.add_memory(victim, b, DocumentInput(content=secret_text, title="vault-title")).document.id
    service.add_memory(victim, b, DocumentInput(content="Vera Quartz works at Quartz Ledger in Geneva."))
    service.save_handoff(victim, b, HandoffInput(project="vault/plan", goal="Guard the vault", expected_version=0,
                                                 request_id="req-victim-1", summary="victim summary"))
    b_job = service.submit_memories(victim, b, [DocumentInput(content="Victim job memory.")]).id
    b_entity = service.get_entity(victim, b, EntityLookup(name="Vera Quartz")).id
    attacker = CallerContext.for_namespaces(a)
    a_memory = service.add_memory(attacker, a, DocumentInput(content="Attacker's own quartz ledger note.")).document.id
    yield World(a, b, a_memory, b_memory, b_job, b_entity,
                (secret_text, b_memory, b_job, b_entity, "vault-title", "Guard the vault", "victim summary", b,
                 "Geneva"))


@pytest.mark.parametrize(("tool", "writes", "args", "case"), TABLE,
                         ids=[f"{tool} {args(World('A', 'B', 'a', 'b', 'j', 'e', ()), 'victim')} | {case}"[:120]
                              for tool, _, args, case in TABLE])
def test_attack(runtime: Runtime, world: World, tool: str, writes: bool, args: Args, case: str) -> None:
    namespaces, scopes = {"A on B": ([world.a], (Scope.read, Scope.write)),
                          "read token writing": ([world.a], (Scope.read,)),
                          "* on _system": (["*"], (Scope.read, Scope.write))}[case]
    fixed, _ = credential(runtime, namespaces, scopes)
    target = {"A on B": "victim", "read token writing": "own", "* on _system": "system"}[case]
    arguments = args(world, target)

    async def main() -> tuple[bool, str]:
        async with session(runtime, fixed) as s:
            result = await s.result(tool, **arguments)
            return result.is_error, error_text(result) + str(result.structured_content or "")

    failed, text = anyio.run(main)
    seed = arguments.get("seed", {})
    if case == "A on B" and seed.get("kind") == "ids":  # ids that are not visible are ignored: an empty graph
        assert not failed and "'nodes': []" in text and "'totalDocuments': 0" in text, text[:300]
    else:
        assert failed, (tool, case, text[:300])
    if failed and case == "A on B":  # not found for reads and ids, forbidden for writes by name: never another error
        assert any(said in text for said in ("no namespace", "no memory", "no entity", "no document", "no job",
                                             "no write access")), text
    elif case == "read token writing":
        assert "no write access" in text and "may not write there" in text
    elif case == "* on _system":
        assert "reserved" in text or "_system" in text, text
    sent = set(_leaves(arguments))  # echoed as for ids and names that do not exist
    for secret in world.secrets:
        if secret not in sent:
            assert secret not in text, (tool, case, secret)
    assert not leaks(text, [store_password(runtime)]), (tool, case)


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [str(value)]


def test_b_is_untouched(runtime: Runtime, world: World) -> None:
    victim = CallerContext.for_namespaces(world.b)
    memory = runtime.service.get_version(victim, world.b_memory)
    assert memory.content and memory.content.startswith("Quartz ledger") and not memory.is_forgotten
    assert memory.version == 1
    assert runtime.service.namespace_counts(victim, world.b).documents == 2
    assert runtime.service.get_handoff(victim, world.b, "vault/plan").version == 1
