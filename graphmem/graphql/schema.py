"""The schema: queries and mutations that translate their arguments into the service's typed inputs and
shape its typed results (``types.py``). Every operation takes an optional ``namespace`` with the HTTP API's
rules (default: the credential's own). Bounds (``first``, text sizes, budgets) are the service's models'.

The schema's text is committed as ``schema.graphql`` at the repository root (``graphmem graphql-schema``
writes it; a test fails when the two differ)."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.types import ExecutionContext

from graphmem.config import Settings
from graphmem.graphql.context import Charged, Info
from graphmem.graphql.errors import ErrorCodes
from graphmem.graphql.types import (
    ForgetResultType,
    Me,
    Memory,
    RecallResultType,
    SearchConnection,
    SearchTarget,
)
from graphmem.model import DocumentInput, ForgetRequest, RecallRequest, SearchRequest, parse
from graphmem.model.documents import ForgetMode

Namespace = Annotated[str | None, strawberry.argument(description="the namespace (default: the credential's own)")]


@strawberry.type
class Query:
    @strawberry.field(description="the calling credential: its name, scopes and namespaces")
    def me(self, info: Info) -> Me:
        credential = info.context.credential
        return Me(name=credential.name, scopes=[s.value for s in credential.scopes],
                  namespaces=credential.namespaces, all_namespaces=credential.all_namespaces,
                  admin=credential.admin)

    @strawberry.field(description="a memory version by id (NOT_FOUND outside the caller's namespaces)")
    async def memory(self, info: Info, id: strawberry.ID, namespace: Namespace = None) -> Memory:
        ctx, _ = info.context.scope(namespace)
        document = await info.context.call(lambda: info.context.service.get_document(ctx, str(id)))
        return Memory.from_result(document)

    @strawberry.field(description="hybrid search: memories (ranked by their own and their facts' signals) "
                                  "or facts; first 1-100")
    async def search(self, info: Info, query: str, target: SearchTarget = SearchTarget.MEMORIES,
                     first: int = 10, explain: bool = False,
                     namespace: Namespace = None) -> SearchConnection:
        ctx, ns = info.context.scope(namespace)
        request = parse(SearchRequest, {"query": query, "limit": first, "explain": explain, "namespaces": [ns]})
        service = info.context.service
        if target is SearchTarget.FACTS:
            facts = await info.context.call(lambda: service.search(ctx, request))
            return SearchConnection.of_facts(facts, ns)
        hits = await info.context.call(lambda: service.search_documents(ctx, request))
        documents = await info.context.loaders.memories.load_many([(ns, h.document_id) for h in hits])
        return SearchConnection.of_memories(hits, {d.id: d for d in documents if d is not None}, ns)

    @strawberry.field(description="a cited context for a prompt: maxItems 1-50, maxTokens 32-16000")
    async def recall(self, info: Info, query: str, max_items: int = 8, max_tokens: int = 1500,
                     namespace: Namespace = None) -> RecallResultType:
        ctx, ns = info.context.scope(namespace)
        request = parse(RecallRequest, {"query": query, "max_items": max_items, "max_tokens": max_tokens,
                                        "namespaces": [ns]})
        result = await info.context.call(lambda: info.context.service.recall(ctx, request))
        return RecallResultType.from_result(result, ns)


@strawberry.enum(name="ForgetMode",
                description="soft: hidden, restorable; redact: text removed, lineage kept; hard: deleted")
class ForgetModeType(Enum):
    SOFT = ForgetMode.soft
    REDACT = ForgetMode.redact
    HARD = ForgetMode.hard


@strawberry.type
class Mutation:
    @strawberry.mutation(description="store a memory (requestId makes a retry return the first result)")
    async def remember(self, info: Info, content: str, title: str | None = None, path: str | None = None,
                       metadata: strawberry.scalars.JSON | None = None, request_id: str | None = None,
                       namespace: Namespace = None) -> Memory:
        ctx, ns = info.context.scope(namespace)
        item = parse(DocumentInput, {k: v for k, v in {"content": content, "title": title, "path": path,
                                                        "metadata": metadata, "request_id": request_id}.items()
                                     if v is not None}, info.context.runtime.settings.limits)
        document = await info.context.call(lambda: info.context.service.add_document(ctx, ns, item))
        return Memory.from_result(document)

    @strawberry.mutation(description="forget a memory's chain (every version)")
    async def forget_memory(self, info: Info, id: strawberry.ID, mode: ForgetModeType = ForgetModeType.SOFT,
                            request_id: str | None = None, namespace: Namespace = None) -> ForgetResultType:
        ctx, _ = info.context.scope(namespace)
        request = parse(ForgetRequest, {"mode": ForgetMode(mode.value), "request_id": request_id})
        result = await info.context.call(lambda: info.context.service.forget(ctx, str(id), request))
        return ForgetResultType(id=strawberry.ID(result.id), chain_id=result.chain_id, mode=result.mode.value,
                                memories=result.documents, facts=result.facts)

    @strawberry.mutation(description="restore a softly forgotten memory")
    async def restore_memory(self, info: Info, id: strawberry.ID, namespace: Namespace = None) -> Memory:
        ctx, _ = info.context.scope(namespace)
        document = await info.context.call(lambda: info.context.service.restore(ctx, str(id)))
        return Memory.from_result(document)


class GraphmemSchema(strawberry.Schema):
    def process_errors(self, errors: list[Any], execution_context: ExecutionContext | None = None) -> None:
        """Errors are logged where they are coded (``errors.py``: unexpected ones only), not here."""


def build_schema(settings: Settings) -> strawberry.Schema:
    return GraphmemSchema(query=Query, mutation=Mutation, extensions=[
        lambda: QueryDepthLimiter(max_depth=settings.graphql_max_depth),
        lambda: MaxAliasesLimiter(max_alias_count=settings.graphql_max_aliases),
        lambda: MaxTokensLimiter(max_token_count=settings.graphql_max_tokens),
        Charged, ErrorCodes])


schema = build_schema(Settings(_env_file=None))  # the default limits; for `strawberry export-schema` and tests
