"""/v1 memories: remember, list, read, history, update, forget, restore, search and recall (the seed's paths).
Each route authenticates, turns its arguments into the service's inputs, and shapes the result."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response

from graphmem.http.access import Caller, ReadScope, reader, writer
from graphmem.http.errors import VIEW, NamedRoute, named
from graphmem.http.params import as_query
from graphmem.http.schemas import (
    ForgetBody,
    ForgetModeName,
    HistoryOut,
    MemoryDetailOut,
    MemoryList,
    MemoryOut,
    RecallContextBody,
    RecallContextOut,
    RememberBody,
    Remembered,
    SearchOut,
    UpdateBody,
)
from graphmem.model import (
    DocumentInput,
    DocumentListOptions,
    ForgetRequest,
    HistoryOptions,
    RecallRequest,
    SearchFilters,
    SearchRequest,
    UpdateInput,
    View,
    parse,
)
from graphmem.model.flat import flattened
from graphmem.results import ForgetResult

router = APIRouter(prefix="/v1", tags=["memories"], route_class=NamedRoute)
Read = Annotated[Caller, Depends(reader)]
Write = Annotated[Caller, Depends(writer)]
NO_STORE = "no-store, private"
MEMORY_ID = named({"id": "memory_id"})


def _document(body: RememberBody) -> DocumentInput:
    return DocumentInput(**body.model_dump(exclude={"scope"}, exclude_none=True))


@router.post("/remember", status_code=201, response_model=Remembered)
def remember(body: RememberBody, caller: Write) -> Remembered:
    """Store a memory; answers its id, version and chain."""
    ctx, ns = caller.scope(body.scope)
    document = caller.runtime.service.add_memory(ctx, ns, _document(body)).document
    return Remembered(id=document.id, version=document.version, chain_id=document.chain_id)


@router.post("/memories", status_code=201, response_model=MemoryOut)
def create_memory(body: RememberBody, caller: Write) -> MemoryOut:
    """Store a memory; answers the memory."""
    ctx, ns = caller.scope(body.scope)
    return MemoryOut.model_validate(caller.runtime.service.add_memory(ctx, ns, _document(body)).document.model_dump())


@router.get("/memories", response_model=MemoryList)
def list_memories(caller: Read, scope: ReadScope = None, limit: int = 100, offset: int = 0,
                  path: str | None = None, cursor: str | None = None) -> MemoryList:
    """A page of memories, newest first: by ``cursor`` (stable while memories are added), or by ``offset``
    up to 10,000."""
    ctx, _ = caller.reading(scope)
    options = parse(DocumentListOptions, {"limit": limit, "offset": offset, "path": path, "cursor": cursor},
                    caller.runtime.settings.limits)
    page = caller.runtime.service.list_memories(ctx, scope, options)
    return MemoryList.model_validate({"memories": [i.model_dump() for i in page.items], "total": page.total,
                                      "next_cursor": page.next_cursor, "namespaces": page.namespaces})


def _search(caller: Caller, response: Response, scope: str | None, values: dict[str, object]) -> SearchOut:
    ctx, names = caller.reading(scope)
    request = parse(SearchRequest, {**{k: v for k, v in values.items() if v is not None}, "namespaces": names})
    hits = caller.runtime.service.search_memories(ctx, request)
    response.headers["Cache-Control"] = NO_STORE
    return SearchOut.model_validate({"results": [h.model_dump() for h in hits], "total": len(hits),
                                     "namespaces": names})


@router.get("/memories/search", response_model=SearchOut)
@router.get("/recall", response_model=SearchOut, include_in_schema=True)
@named({"min_score": "threshold", **VIEW})
@flattened("view", View, as_query)
@flattened("filters", SearchFilters, as_query)
def search_memories(caller: Read, response: Response, query: str, filters: dict[str, Any], view: dict[str, Any],
                    limit: int = 5, threshold: float | None = None, scope: ReadScope = None,
                    explain: bool = False) -> SearchOut:
    """Memories that answer ``query``, each with its best facts and their citations (``total`` is the number
    returned)."""
    return _search(caller, response, scope, {"query": query, "limit": limit, "min_score": threshold,
                                             "explain": explain, "view": view, **filters})


@router.post("/recall/context", response_model=RecallContextOut)
@named({"min_score": "threshold"})
def recall_context(body: RecallContextBody, caller: Read, response: Response) -> RecallContextOut:
    """A cited context for a prompt, within an item and a token budget; ``answer_status`` says whether a
    relevant answer was found."""
    ctx, names = caller.reading(body.scope)
    request = RecallRequest(**body.model_dump(exclude={"scope", "namespaces"}), namespaces=names)
    response.headers["Cache-Control"] = NO_STORE
    return RecallContextOut.of(body.query, caller.runtime.service.recall(ctx, request))


@router.get("/memories/{memory_id}", response_model=MemoryDetailOut)
@MEMORY_ID
def get_memory(memory_id: str, caller: Read, scope: ReadScope = None) -> MemoryDetailOut:
    """A memory version, its facts with lineage fields, and the entities they mention."""
    ctx, _ = caller.reading(scope)
    detail = caller.runtime.service.get_memory(ctx, memory_id)
    return MemoryDetailOut.model_validate({
        **detail.memory.model_dump(), "facts": [f.model_dump() for f in detail.facts],
        "facts_total": detail.facts_total, "entities_total": detail.entities_total,
        "entities": [e.model_dump() for e in detail.entities]})


@router.get("/memories/{memory_id}/history", response_model=HistoryOut)
@MEMORY_ID
def memory_history(memory_id: str, caller: Read, scope: ReadScope = None, limit: int = 100,
                   cursor: str | None = None) -> HistoryOut:
    """Every version of the memory, newest first."""
    ctx, _ = caller.reading(scope)
    options = parse(HistoryOptions, {"limit": limit, "cursor": cursor}, caller.runtime.settings.limits)
    page = caller.runtime.service.history(ctx, memory_id, options)
    return HistoryOut.model_validate({"items": [i.model_dump() for i in page.items], "next_cursor": page.next_cursor})


@router.patch("/memories/{memory_id}", response_model=MemoryOut)
@MEMORY_ID
def update_memory(memory_id: str, body: UpdateBody, caller: Write, scope: ReadScope = None) -> MemoryOut:
    """A new version; ``expected_version`` is a compare-and-swap, ``request_id`` makes it retry-safe."""
    ctx, _ = caller.reading(scope)
    updated = caller.runtime.service.update_memory(ctx, memory_id, UpdateInput(**body.model_dump())).document
    return MemoryOut.model_validate(updated.model_dump())


def _forget(caller: Caller, memory_id: str, scope: str | None, body: ForgetBody) -> ForgetResult:
    ctx, _ = caller.reading(scope)
    request = ForgetRequest(mode=body.mode.mode, reason=body.reason, request_id=body.request_id)
    return caller.runtime.service.forget(ctx, memory_id, request)


@router.delete("/memories/{memory_id}", response_model=ForgetResult)
@MEMORY_ID
def delete_memory(memory_id: str, caller: Write, scope: ReadScope = None,
                  mode: ForgetModeName = ForgetModeName.soft_delete, reason: str | None = None,
                  request_id: str | None = None) -> ForgetResult:
    """Forget a memory (every version): soft (restorable), hard, or redact."""
    return _forget(caller, memory_id, scope, ForgetBody(mode=mode, reason=reason, request_id=request_id))


@router.post("/memories/{memory_id}/forget", response_model=ForgetResult)
@MEMORY_ID
def forget_memory(memory_id: str, body: ForgetBody, caller: Write, scope: ReadScope = None) -> ForgetResult:
    return _forget(caller, memory_id, scope, body)


@router.post("/memories/{memory_id}/restore", response_model=MemoryOut)
@MEMORY_ID
def restore_memory(memory_id: str, caller: Write, scope: ReadScope = None) -> MemoryOut:
    """Undo a soft forget."""
    ctx, _ = caller.reading(scope)
    return MemoryOut.model_validate(caller.runtime.service.restore(ctx, memory_id).model_dump())
