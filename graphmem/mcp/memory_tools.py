"""The ``memory`` tool set: the gateway seed's memory tools, with its names, inputs and bounds."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from graphmem.errors import Names
from graphmem.identity import Charge
from graphmem.mcp.calls import VIEW, Caller, Calls, as_argument
from graphmem.mcp.shapes import (
    FactBrief,
    GetMemoryResult,
    ListMemoriesResult,
    MemoryBrief,
    MemoryFound,
    MemoryFull,
    Passage,
    SearchMemoriesResult,
    Written,
)
from graphmem.model import (
    HARD_LIMITS,
    OWN_NAMESPACE,
    READ_NAMESPACE,
    Content,
    Cursor,
    DocumentInput,
    DocumentListOptions,
    ForgetMode,
    ForgetRequest,
    Id,
    MemoryDetailOptions,
    Metadata,
    PageLimit,
    Path,
    PathFilter,
    QueryText,
    SearchFilters,
    SearchRequest,
    Title,
    UpdateInput,
    View,
)
from graphmem.model.flat import flattened
from graphmem.results import ForgetResult
from graphmem.results.tokens import cut

Namespace = Annotated[str | None, Field(description=READ_NAMESPACE)]  # a read, or a call by id
OwnNamespace = Annotated[str | None, Field(description=OWN_NAMESPACE)]  # where a new memory goes
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
DESTROY = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
MEMORY_ID: Names = {"id": "memory_id"}  # the service's id of a memory, as the tools name it
CLIENT = "mcp"  # where a memory came from, in its metadata


def register(server: MCPServer, calls: Calls) -> None:
    @server.tool(title="Search memories", annotations=READ, structured_output=True)
    @flattened("view", View, as_argument)
    @flattened("filters", SearchFilters, as_argument)
    def search_memories(query: QueryText, filters: dict[str, Any], view: dict[str, Any], limit: int = 10,
                        namespace: Namespace = None) -> SearchMemoriesResult:
        """Find stored memories that answer a question or match a topic (meaning and words). Use before answering
        from memory. Returns up to `limit` memories (clamped to 1-100; `clamped` says so), best first, each with
        its best facts and where they come from. `path` narrows to a folder ("projects/x" or "projects/x%")."""
        used = SearchRequest.clamped_limit(limit)

        def work(caller: Caller) -> SearchMemoriesResult:
            request = SearchRequest(query=query, limit=used, view=view, namespaces=caller.namespaces, **filters)
            hits = caller.runtime.service.search_memories(caller.context, request)
            results = [MemoryFound(id=h.document_id, namespace=h.namespace, title=h.title,
                                   path=h.facts[0].citation.path if h.facts else None, score=round(h.score, 5),
                                   version=h.version, is_latest=h.is_latest, recorded_at=h.recorded_at,
                                   facts=[Passage.of(f) for f in h.facts]) for h in hits]
            return SearchMemoriesResult(results=results, total=len(results), limit=used, clamped=used != limit,
                                        namespaces=caller.namespaces)

        return calls.run(Charge.read, namespace, work, VIEW, across=True)

    @server.tool(title="List memories", annotations=READ, structured_output=True)
    def list_memories(page: Annotated[int, Field(ge=1)] = 1, limit: PageLimit = 50,
                      path: PathFilter | None = None, cursor: Cursor = None,
                      namespace: Namespace = None) -> ListMemoriesResult:
        """List stored memories, newest first, a page at a time: `page` from 1 (10,000 memories deep), or
        `cursor` (the previous result's next_cursor: stable while memories are added, and as deep as needed);
        `limit` 1-200. Each entry has a short preview; get_memory returns a whole memory."""

        def work(caller: Caller) -> ListMemoriesResult:
            at = {"cursor": cursor} if cursor else {"offset": (page - 1) * limit}
            options = DocumentListOptions(limit=limit, path=path, **at)
            listed = caller.runtime.service.list_memories(caller.context, caller.namespace, options)
            return ListMemoriesResult(memories=[MemoryBrief.of(m, m.preview) for m in listed.items],
                                      total=listed.total, page=page, limit=limit,
                                      has_more=listed.next_cursor is not None, next_cursor=listed.next_cursor,
                                      namespaces=listed.namespaces)

        return calls.run(Charge.read, namespace, work, across=True)

    @server.tool(title="Get a memory", annotations=READ, structured_output=True)
    def get_memory(memory_id: Id, max_chars: Annotated[int, Field(ge=100, le=HARD_LIMITS.content_chars)] = 8000,
                   namespace: Namespace = None) -> GetMemoryResult:
        """Read one memory by id: its content (cut at `max_chars`; `content_truncated` says so: call again with a
        larger max_chars for the rest), its lineage (version, isLatest, parentMemoryId), its first 50 facts and
        the entities they mention."""

        def work(caller: Caller) -> GetMemoryResult:
            detail = caller.runtime.service.get_memory(caller.context, memory_id,
                                                       MemoryDetailOptions(facts=50, entities=50))
            memory = detail.memory
            content, truncated = cut(memory.content, max_chars)
            full = MemoryFull(**MemoryBrief.of(memory, memory.content).model_dump(), content=content,
                              content_truncated=truncated, content_chars=len(memory.content or ""),
                              source=memory.source, metadata=memory.metadata, is_redacted=memory.is_redacted,
                              forget_reason=memory.forget_reason)
            return GetMemoryResult(memory=full, facts=[FactBrief.of_info(f) for f in detail.facts],
                                   facts_total=detail.facts_total,
                                   entities=[e.name or e.id for e in detail.entities],
                                   entities_total=detail.entities_total)

        return calls.run(Charge.read, namespace, work, MEMORY_ID, across=True)

    @server.tool(title="Add a memory", annotations=WRITE, structured_output=True)
    def add_memory(content: Content, path: Path | None = None, title: Title = None, metadata: Metadata = None,
                   namespace: OwnNamespace = None) -> Written:
        """Store a new memory (a note, a decision, a fact about the user). Text identical to a current memory
        returns that memory (`status: unchanged`). Returns its id; later changes go through update_memory."""

        def work(caller: Caller) -> Written:
            item = DocumentInput(content=content, path=path, title=title, metadata=metadata)
            return Written.of(caller.runtime.service.add_memory(caller.context, caller.own, item, CLIENT))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Update a memory", annotations=WRITE, structured_output=True)
    def update_memory(memory_id: Id, content: Content, expected_version: int | None = None, title: Title = None,
                      metadata: Metadata = None, path: Path | None = None, namespace: Namespace = None) -> Written:
        """Replace a memory's content with a new version (the old one stays in its history). Pass the version you
        read as `expected_version` to fail instead of overwriting someone else's change."""

        def work(caller: Caller) -> Written:
            update = UpdateInput(content=content, expected_version=expected_version, title=title, metadata=metadata,
                                 path=path)
            return Written.of(caller.runtime.service.update_memory(caller.context, memory_id, update))

        return calls.run(Charge.write, namespace, work, MEMORY_ID, across=True)

    @server.tool(title="Delete a memory", annotations=DESTROY, structured_output=True)
    def delete_memory(memory_id: Id, mode: ForgetMode = ForgetMode.soft, namespace: Namespace = None) -> ForgetResult:
        """Forget a memory, every version: `soft` hides it (restore_memory brings it back), `redact` removes its
        text for good but keeps its history, `hard` deletes it."""
        return forget(calls, memory_id, mode, namespace)


def forget(calls: Calls, memory_id: str, mode: ForgetMode, namespace: str | None) -> ForgetResult:
    """delete_memory (the gateway seed's name) and forget_memory (the graph set's) are one call."""
    request = ForgetRequest(mode=mode)
    return calls.run(Charge.write, namespace, lambda c: c.runtime.service.forget(c.context, memory_id, request),
                     MEMORY_ID, across=True)
