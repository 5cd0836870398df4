"""The ``graph`` tool set (graphmem's own): facts, entities, triples, one entity's neighbourhood, paths between
entities, the bounded evidence graph, a memory's history, forgetting and restoring."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from graphmem.identity import Charge
from graphmem.mcp.calls import VIEW, Caller, Calls, as_argument
from graphmem.mcp.memory_tools import DESTROY, MEMORY_ID, READ, WRITE, Namespace, OwnNamespace, forget
from graphmem.mcp.shapes import PREVIEW_CHARS, FactFound, MemoryBrief, cut_texts
from graphmem.model import (
    EXPLORE_TOKENS,
    Cursor,
    EntityLookup,
    EntityName,
    EntitySearchRequest,
    ExploreCaps,
    ExploreTokens,
    ExportRequest,
    ExportSeed,
    ForgetMode,
    HistoryOptions,
    Hops,
    Id,
    Limit,
    ListedItems,
    PathFilter,
    PathRequest,
    QueryText,
    SearchFilters,
    SearchRequest,
    TripleQuery,
    View,
)
from graphmem.model.flat import flattened
from graphmem.results import EntityDetail, EntityPage, ForgetResult, NamespacesRead, PathResult, TriplePage
from graphmem.results.tokens import GraphResult

EXPLORE = ExploreCaps()


class FactsFound(BaseModel):
    facts: list[FactFound]
    namespaces: NamespacesRead


class History(BaseModel):
    versions: list[MemoryBrief] = Field(description="newest first")
    next_cursor: str | None = None


def register(server: MCPServer, calls: Calls) -> None:
    @server.tool(title="Search facts", annotations=READ, structured_output=True)
    @flattened("view", View, as_argument)
    @flattened("filters", SearchFilters, as_argument)
    def search_facts(query: QueryText, filters: dict[str, Any], view: dict[str, Any], limit: Limit = 10,
                     explain: bool = False, namespace: Namespace = None) -> FactsFound:
        """Single facts (sentences) that answer a query, best first, each with its memory, lineage and
        citation. `as_of` (epoch ms) reads the memory as it was then; `since`/`until` narrow by when facts were
        recorded; `explain` adds each signal's rank."""

        def work(caller: Caller) -> FactsFound:
            request = SearchRequest(query=query, limit=limit, view=view, explain=explain,
                                    namespaces=caller.namespaces, **filters)
            return FactsFound(facts=[FactFound.of(h) for h in caller.runtime.service.search(caller.context, request)],
                              namespaces=caller.namespaces)

        return calls.run(Charge.read, namespace, work, VIEW, across=True)

    @server.tool(title="Search entities", annotations=READ, structured_output=True)
    @flattened("view", View, as_argument)
    def search_entities(query: QueryText, view: dict[str, Any], limit: Limit = 10, path: PathFilter | None = None,
                        namespace: Namespace = None) -> EntityPage:
        """People, organisations, places, products and concepts by name or meaning, with how many facts
        mention each."""
        return calls.run(Charge.read, namespace, lambda c: c.runtime.service.search_entities(
            c.context, EntitySearchRequest(query=query, limit=limit, path=path, view=view,
                                           namespaces=c.namespaces)), VIEW, across=True)

    @server.tool(title="Search triples", annotations=READ, structured_output=True)
    @flattened("view", View, as_argument)
    def search_triples(view: dict[str, Any], subject: EntityName | None = None, predicate: EntityName | None = None,
                       object: EntityName | None = None, term: EntityName | None = None, negated: bool | None = None,
                       limit: Limit = 10, path: PathFilter | None = None, cursor: Cursor = None,
                       namespace: Namespace = None) -> TriplePage:
        """Statements (subject, predicate, object) read from the memories, newest first: by subject, by
        predicate ("works at", matched as a verb), by object, or a free term; negated ones say so. Give at
        least one of subject, predicate, object, term."""

        def work(caller: Caller) -> TriplePage:
            query = TripleQuery(subject=subject, predicate=predicate, object=object, term=term, negated=negated,
                                limit=limit, path=path, cursor=cursor, view=view, namespaces=caller.namespaces)
            page = caller.runtime.service.search_triples(caller.context, query)
            return page.model_copy(update={"items": cut_texts(page.items)})

        return calls.run(Charge.read, namespace, work, VIEW, across=True)

    @server.tool(title="Get an entity", annotations=READ, structured_output=True)
    def get_entity(entity_id: Id | None = None, name: EntityName | None = None, facts: ListedItems = 10,
                   neighbours: ListedItems = 10, namespace: OwnNamespace = None) -> EntityDetail:
        """One entity (by id, or by name) with its latest facts and the entities it has triples with; each
        list is bounded and says (`facts_cut`, `neighbours_cut`) when more exist."""

        def work(caller: Caller) -> EntityDetail:
            lookup = EntityLookup(id=entity_id, name=name, facts=facts, neighbours=neighbours)
            detail = caller.runtime.service.get_entity(caller.context, caller.own, lookup)
            return detail.model_copy(update={"facts": cut_texts(detail.facts)})

        return calls.run(Charge.read, namespace, work, {"id": "entity_id"})

    @server.tool(title="Find a path", annotations=READ, structured_output=True)
    def find_path(from_entity: EntityName, to_entity: EntityName, max_hops: Hops = 3,
                  namespace: OwnNamespace = None) -> PathResult:
        """How two entities (ids or names) are connected: the shortest chains through triples and facts that
        mention both, up to `max_hops` steps, each step with its supporting fact. `cut` says the search hit its
        bounds."""

        def work(caller: Caller) -> PathResult:
            request = PathRequest(source=from_entity, target=to_entity, max_hops=max_hops)
            found = caller.runtime.service.find_path(caller.context, caller.own, request)
            return found.model_copy(update={"paths": [p.model_copy(update={"steps": cut_texts(p.steps)})
                                                      for p in found.paths]})

        return calls.run(Charge.read, namespace, work, {"source": "from_entity", "target": "to_entity"})

    @server.tool(title="Explore the graph", annotations=READ, structured_output=True)
    @flattened("view", View, as_argument)
    def explore_graph(seed: ExportSeed, view: dict[str, Any], caps: ExploreCaps = EXPLORE,
                      max_tokens: ExploreTokens = EXPLORE_TOKENS, cursor: Cursor = None, count_reachable: bool = True,
                      namespace: Namespace = None) -> GraphResult:
        """The evidence graph around a seed: {"kind": "query", "query": "..."}, {"kind": "document", "id": a
        memory id}, {"kind": "entity", "id": an entity id} or {"kind": "ids", "ids": [...]}. Memories, facts,
        entities and their links, bounded by `caps` (depth 2, 100 nodes, 10 neighbours a node by default) and
        `max_tokens` (8,000; labels are cut to 300 characters, shorter when needed: labelsCutAt, then edges
        left out: edgesLeftOut), with how complete it is (totalDocuments, truncated, unavailableDocuments,
        coverage; `count_reachable: false` skips counting and leaves reachableDocuments and coverage null, for
        speed) and nextCursor for the next page. Edges name nodes by their `ref`."""

        def work(caller: Caller) -> GraphResult:
            request = ExportRequest(seed=seed, caps=caps.export_caps(), cursor=cursor, view=view,
                                    count_reachable=count_reachable)
            return caller.runtime.service.export_within_tokens(caller.context, caller.namespace, request,
                                                               PREVIEW_CHARS, max_tokens)

        return calls.run(Charge.read, namespace, work, {"max_documents": "caps.max_nodes", **VIEW}, across=True)

    @server.tool(title="Memory history", annotations=READ, structured_output=True)
    def memory_history(memory_id: Id, cursor: Cursor = None, namespace: Namespace = None) -> History:
        """Every version of a memory, newest first (20 a page), each with its lineage."""

        def work(caller: Caller) -> History:
            page = caller.runtime.service.history(caller.context, memory_id, HistoryOptions(limit=20, cursor=cursor))
            return History(versions=[MemoryBrief.of(v) for v in page.items], next_cursor=page.next_cursor)

        return calls.run(Charge.read, namespace, work, MEMORY_ID, across=True)

    @server.tool(title="Forget a memory", annotations=DESTROY, structured_output=True)
    def forget_memory(memory_id: Id, mode: ForgetMode = ForgetMode.soft, namespace: Namespace = None) -> ForgetResult:
        """Forget a memory, every version: `soft` (restorable), `redact` (text removed for good, history kept) or
        `hard` (deleted)."""
        return forget(calls, memory_id, mode, namespace)

    @server.tool(title="Restore a memory", annotations=WRITE.model_copy(update={"idempotent_hint": True}),
                 structured_output=True)
    def restore_memory(memory_id: Id, namespace: Namespace = None) -> MemoryBrief:
        """Bring back a memory forgotten with mode `soft`, every version as it was; returns its latest version.
        A redacted or hard-deleted memory cannot come back."""

        def work(caller: Caller) -> MemoryBrief:
            restored = caller.runtime.service.restore(caller.context, memory_id)
            return MemoryBrief.of(restored, restored.content)

        return calls.run(Charge.write, namespace, work, MEMORY_ID, across=True)
