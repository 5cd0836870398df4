"""The ``conversation`` tool set (the Synap seed's names): log a turn in the background, check on it, recall a
budgeted context, list recent memories."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from graphmem.identity import Charge
from graphmem.mcp.calls import VIEW, Caller, Calls, as_argument
from graphmem.mcp.memory_tools import CLIENT, READ, Namespace, OwnNamespace
from graphmem.mcp.shapes import Lineage, MemoryBrief
from graphmem.model import (
    DocumentListOptions,
    Exchange,
    Id,
    MaxItems,
    MaxTokens,
    PageLimit,
    QueryText,
    RecallRequest,
    SearchFilters,
    View,
)
from graphmem.model.documents import Turn
from graphmem.model.flat import flattened
from graphmem.results import FactHit, NamespacesRead


class Queued(BaseModel):
    ingestion_id: str
    status: Literal["queued"] = "queued"


class IngestionStatus(BaseModel):
    ingestion_id: str
    status: Literal["queued", "running", "done", "failed"]
    memory_ids: list[str]
    error: str | None = None


class Cited(Lineage):
    """An item of the context, by reference: its text is in ``context_text`` (as ``[number]``), not again here."""

    number: int = Field(description="its [number] in context_text")
    fact_id: str
    memory_id: str
    similarity: float

    @classmethod
    def of(cls, number: int, hit: FactHit) -> Cited:
        return cls(number=number, fact_id=hit.fact_id, memory_id=hit.citation.document_id,
                   similarity=round(hit.similarity, 4), version=hit.version, is_latest=hit.is_latest,
                   is_forgotten=hit.is_forgotten, parent_memory_id=hit.parent_memory_id)


class RecallContext(BaseModel):
    context_text: str = Field(description="paste into the prompt: the facts, each with its source")
    answer_status: Literal["found", "no_confirmed_answer"]
    items: list[Cited]
    tokens_used: int
    skipped: int = Field(description="relevant-looking facts left out (budget, duplicates, low relevance)")
    namespaces: NamespacesRead


class RecentMemories(BaseModel):
    memories: list[MemoryBrief]
    namespaces: NamespacesRead


def register(server: MCPServer, calls: Calls) -> None:
    @server.tool(title="Log an exchange", annotations=READ.model_copy(update={"read_only_hint": False,
                                                                              "idempotent_hint": False}),
                 structured_output=True)
    def log_exchange(user_message: Turn, assistant_message: Turn,
                     conversation_id: Annotated[str | None, Field(max_length=100)] = None,
                     namespace: OwnNamespace = None) -> Queued:
        """Remember one turn of the conversation (both messages), in the background: returns at once with an
        ingestion_id; check_memory_status says when it is stored."""

        def work(caller: Caller) -> Queued:
            exchange = Exchange(user_message=user_message, assistant_message=assistant_message,
                                conversation_id=conversation_id)
            return Queued(ingestion_id=caller.runtime.service.log_exchange(caller.context, caller.own, exchange,
                                                                           CLIENT).id)

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Check a logged exchange", annotations=READ, structured_output=True)
    def check_memory_status(ingestion_id: Id, namespace: Namespace = None) -> IngestionStatus:
        """Whether a logged exchange is stored yet: queued, running, done (with its memory ids) or failed."""

        def work(caller: Caller) -> IngestionStatus:
            job = caller.runtime.service.job_status(caller.context, ingestion_id)
            return IngestionStatus(ingestion_id=job.id, status=job.status.value, memory_ids=job.document_ids or [],
                                   error=job.error)

        return calls.run(Charge.read, namespace, work, {"id": "ingestion_id"}, across=True)

    @server.tool(title="Recall context", annotations=READ, structured_output=True)
    @flattened("view", View, as_argument)
    @flattened("filters", SearchFilters, as_argument)
    def recall_context(query: QueryText, filters: dict[str, Any], view: dict[str, Any], max_items: MaxItems = 8,
                       max_tokens: MaxTokens = 1500, namespace: Namespace = None) -> RecallContext:
        """Memories relevant to a question as one cited context, within `max_items` facts and `max_tokens`
        tokens. `answer_status` is `no_confirmed_answer` when nothing stored really answers: say so rather
        than guess."""

        def work(caller: Caller) -> RecallContext:
            request = RecallRequest(query=query, max_items=max_items, max_tokens=max_tokens, view=view,
                                    namespaces=caller.namespaces, **filters)
            result = caller.runtime.service.recall(caller.context, request)
            return RecallContext(context_text=result.context_text, answer_status=result.answer_status.value,
                                 items=[Cited.of(n, i) for n, i in enumerate(result.items, start=1)],
                                 tokens_used=result.tokens_used,
                                 skipped=len(result.skipped), namespaces=result.namespaces)

        return calls.run(Charge.read, namespace, work, VIEW, across=True)

    @server.tool(title="List recent memories", annotations=READ, structured_output=True)
    def list_recent_memories(limit: PageLimit = 10,
                             namespace: Namespace = None) -> RecentMemories:
        """The most recently stored memories, newest first, each with a short preview."""

        def work(caller: Caller) -> RecentMemories:
            page = caller.runtime.service.list_memories(caller.context, caller.namespace,
                                                         DocumentListOptions(limit=limit))
            return RecentMemories(memories=[MemoryBrief.of(m, m.preview) for m in page.items],
                                  namespaces=page.namespaces)

        return calls.run(Charge.read, namespace, work, across=True)
