"""The ``mnemolog`` tool set (off by default): the Mnemolog seed's two tools, with its dotted names and its
required ``namespace`` argument, so agents written for it switch without a prompt change.

Decision: ``memory.search`` items carry, as ``content``, the memory's passages that matched (its best facts in
the order they appear), not the whole memory: that is what answers the query, it stays small, and it costs no
second read per hit; get_memory reads the whole memory."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from graphmem.errors import InvalidInput
from graphmem.identity import Charge
from graphmem.mcp.calls import Caller, Calls
from graphmem.mcp.memory_tools import READ
from graphmem.model import EntityName, Limit, QueryText, SearchRequest, TripleQuery
from graphmem.model.fields import Namespace
from graphmem.results.tokens import cut

CONTENT_CHARS = 1000

Since = Annotated[int | str | None, Field(description="epoch milliseconds, or an ISO 8601 date-time "
                                                      "(UTC when it names no zone)")]


class MnemologItem(BaseModel):
    id: str
    title: str | None
    content: str = Field(description="the passages that matched, in order (get_memory has the whole memory)")
    content_truncated: bool = Field(description=f"the passages were cut at {CONTENT_CHARS} characters")
    created_at: int = Field(description="when this version was recorded, epoch ms UTC")
    score: float


class MnemologItems(BaseModel):
    items: list[MnemologItem]


class MnemologEdge(BaseModel):
    subject: str
    predicate: str
    object: str
    negated: bool
    memory_id: str


class MnemologEdges(BaseModel):
    edges: list[MnemologEdge]


def epoch_ms(since: int | str | None) -> int | None:
    """``since`` as the service takes it: epoch ms as given, an ISO 8601 date-time converted."""
    if since is None or isinstance(since, int):
        return since
    if since.strip().isdigit():
        return int(since)
    try:
        parsed = datetime.fromisoformat(since)
    except ValueError:
        raise InvalidInput(f"since: {since[:40]!r} is neither epoch milliseconds nor an ISO 8601 date-time "
                           "(e.g. 2026-05-01T00:00:00Z)", field="since") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def register(server: MCPServer, calls: Calls) -> None:
    @server.tool(name="memory.search", title="Search memories (Mnemolog)", annotations=READ,
                 structured_output=True)
    def memory_search(namespace: Namespace, query: QueryText, since: Since = None,
                      limit: Limit = 10) -> MnemologItems:
        """Memories of a namespace that match a query, best first, each with the passages that matched
        (cut at 1,000 characters). `since` keeps memories recorded from then on."""

        def work(caller: Caller) -> MnemologItems:
            request = SearchRequest(query=query, limit=limit, since=epoch_ms(since), namespaces=caller.namespaces)
            items = []
            for hit in caller.runtime.service.search_memories(caller.context, request):
                passages = " … ".join(f.text for f in sorted(hit.facts, key=lambda f: f.citation.start))
                content, truncated = cut(passages, CONTENT_CHARS)
                items.append(MnemologItem(id=hit.document_id, title=hit.title, content=content or "",
                                          content_truncated=truncated, created_at=hit.recorded_at,
                                          score=round(hit.score, 5)))
            return MnemologItems(items=items)

        return calls.run(Charge.read, namespace, work)

    @server.tool(name="graph.edge.search", title="Search relations (Mnemolog)", annotations=READ,
                 structured_output=True)
    def edge_search(namespace: Namespace, term: EntityName | None = None, relation: EntityName | None = None,
                    limit: Limit = 10) -> MnemologEdges:
        """Relations (subject, predicate, object) read from a namespace's memories, newest first: by a term in
        the subject or object, by relation (a verb such as "works at"), or both; give at least one."""

        def work(caller: Caller) -> MnemologEdges:
            query = TripleQuery(term=term, predicate=relation, limit=limit, namespaces=caller.namespaces)
            page = caller.runtime.service.search_triples(caller.context, query)
            return MnemologEdges(edges=[MnemologEdge(subject=t.subject.name or t.subject.id, predicate=t.predicate,
                                                     object=t.object.name or t.object.id, negated=t.negated,
                                                     memory_id=t.citation.document_id) for t in page.items])

        return calls.run(Charge.read, namespace, work, {"predicate": "relation"})
