"""Who is calling: the token (``Authorization: Bearer`` or ``X-API-Key``) checked by the identity module
before any GraphQL runs (a missing or bad one is HTTP 401 from the app's error handler), the rate limit
charged once per operation (``Charged``: a mutation is a write, anything else a read), and the namespace an
operation names turned into the service's caller context. The explorer page itself is public."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from fastapi.concurrency import run_in_threadpool
from graphql import ExecutionResult, GraphQLError
from starlette.requests import HTTPConnection
from strawberry.extensions import SchemaExtension
from strawberry.fastapi import BaseContext
from strawberry.types import Info as StrawberryInfo
from strawberry.types.graphql import OperationType

from graphmem.errors import RateLimited, Unauthenticated
from graphmem.graphql.loaders import Loaders
from graphmem.http.access import token_of
from graphmem.identity import Charge, Credential
from graphmem.model import CallerContext
from graphmem.runtime import Runtime
from graphmem.service.memory import MemoryService

T = TypeVar("T")


class GraphContext(BaseContext):
    """One request's caller, its loaders, and the way into the service."""

    def __init__(self, runtime: Runtime, credential: Credential | None) -> None:
        super().__init__()
        self.runtime = runtime
        self._credential = credential
        self.loaders = Loaders(self)
        self.namespaces_read: set[str] = set()  # what the operation's reads covered (extensions.namespaces)

    @property
    def credential(self) -> Credential:
        if self._credential is None:  # only the explorer page is served without one
            raise Unauthenticated("send a token: Authorization: Bearer <token>")
        return self._credential

    async def authenticate(self, token: str | None) -> None:
        """Check ``token`` (a WebSocket's, from its ``connection_init``) and make it this context's caller."""
        identity = self.runtime.identity
        if identity.served_from_memory(token):
            self._credential = identity.authenticate(token)
        else:
            self._credential = await run_in_threadpool(identity.authenticate, token)

    @property
    def service(self) -> MemoryService:
        return self.runtime.service

    def scope(self, namespace: str | None) -> tuple[CallerContext, str]:
        """The caller's context, and the namespace the operation addresses (the HTTP API's rules)."""
        return self.runtime.identity.context(self.credential, namespace)

    def reading(self, namespace: str | None) -> tuple[CallerContext, list[str]]:
        """The caller's context for a read or an id-addressed write, and the namespaces it covers (the one
        named, else every one the credential may read), which the answer's ``extensions.namespaces`` names."""
        ctx, names = self.runtime.identity.reading(self.credential, namespace)
        self.namespaces_read.update(names)
        return ctx, names

    async def call(self, work: Callable[..., T], *args: Any) -> T:
        """Service calls block (the driver is synchronous): they run in the thread pool."""
        return await run_in_threadpool(work, *args)


Info = StrawberryInfo[GraphContext, None]


async def graph_context(connection: HTTPConnection) -> GraphContext:
    """FastAPI dependency of ``/graphql``: authenticates every request that runs GraphQL. The explorer page
    (a GET without a query) and WebSocket upgrades (whose token comes in ``connection_init``) pass."""
    context = GraphContext(connection.app.state.runtime, None)
    explorer = connection.scope.get("method") == "GET" and "query" not in connection.query_params
    if connection.scope["type"] != "websocket" and not explorer:
        await context.authenticate(token_of(connection))
    return context


class Charged(SchemaExtension):
    """Charges the credential's rate limit once per operation, before it runs; over the limit, the
    operation does not run and answers RATE_LIMITED (the router makes that HTTP 429)."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context.context
        subscription = self.execution_context.operation_type is OperationType.SUBSCRIPTION
        if isinstance(context, GraphContext) and not subscription:  # a subscription charges in its resolver
            kind = Charge.write if self.execution_context.operation_type is OperationType.MUTATION else Charge.read
            try:
                context.runtime.identity.charge(context.credential, kind)
            except RateLimited as exc:
                if context.response is not None:
                    context.response.status_code = exc.http_status
                    context.response.headers["Retry-After"] = str(exc.details["retry_after"])
                self.execution_context.result = ExecutionResult(None, [GraphQLError(exc.message, original_error=exc)])
        yield


class NamespacesRead(SchemaExtension):
    """``extensions.namespaces``: the namespaces the operation's reads covered, in name order."""

    def get_results(self) -> dict[str, Any]:
        context = self.execution_context.context
        if isinstance(context, GraphContext) and context.namespaces_read:
            return {"namespaces": sorted(context.namespaces_read)}
        return {}
