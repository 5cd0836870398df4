"""The MCP servers: the official SDK's ``MCPServer`` with graphmem's tool sets, for Streamable HTTP (``/mcp`` with
the tool sets ``GRAPHMEM_MCP_TOOLSETS`` names, ``/mcp/neo4j-memory`` with Neo4j's memory tool set alone, and
the SDK's ``/.well-known`` metadata of each, routes of the FastAPI app) and for stdio (``graphmem mcp``).

Who calls: over HTTP, the bearer token of the identity module, checked by the SDK's token verifier (no token or
a bad one is 401 with ``WWW-Authenticate``); graphmem is not an OAuth server, so ``GRAPHMEM_PUBLIC_URL`` only
names the issuer and resource URLs the SDK's metadata needs, and no scope is required at the transport (the
tools check read and write). Over stdio and in-memory there is no token: the server factory takes a fixed
credential. DNS-rebinding protection stays on, with ``GRAPHMEM_ALLOWED_HOSTS``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from graphmem import __version__
from graphmem.config import Settings, Toolset
from graphmem.errors import Unauthenticated
from graphmem.identity import Credential
from graphmem.mcp import (
    conversation_tools,
    graph_tools,
    handoff_tools,
    memory_tools,
    mnemolog_tools,
    neo4j_memory_tools,
)
from graphmem.mcp.calls import Calls, explain
from graphmem.model.fields import invalid_input
from graphmem.runtime import Runtime

MCP_PATH = "/mcp"
NEO4J_MEMORY_PATH = "/mcp/neo4j-memory"
TOOLSETS = {Toolset.memory: memory_tools.register, Toolset.handoffs: handoff_tools.register,
            Toolset.conversation: conversation_tools.register, Toolset.graph: graph_tools.register,
            Toolset.mnemolog: mnemolog_tools.register, Toolset.neo4j_memory: neo4j_memory_tools.register}
INSTRUCTIONS = """graphmem is a knowledge-graph memory. Search before answering from memory (search_memories, or
recall_context for a cited context within a token budget; when it says no_confirmed_answer, say you do not know).
Store what should last with add_memory (or log_exchange for a conversation turn); change it with update_memory,
which keeps the history. Facts, entities and triples are searchable on their own (search_facts,
search_entities, search_triples); get_entity, find_path and explore_graph show how things connect. Every result
is bounded and says what it left out. Times are epoch milliseconds UTC."""


class GraphmemMCP(MCPServer):
    """The SDK's server, with argument errors said as graphmem says them: one sentence naming each field at
    fault and its rule (the SDK's text is pydantic's report, with links and input types)."""

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__  # arguments the schema refused, or an input model a tool built refused
            if isinstance(cause, ValidationError):
                raise ToolError(explain(invalid_input(cause))) from cause
            raise


class BearerVerifier:
    """The SDK's token verifier over the identity module: a live credential's token is accepted; an unknown
    or revoked one is refused (401). An unreachable database is not a bad token: it raises, and the app's
    error handler answers 503."""

    def __init__(self, runtime: Callable[[], Runtime]) -> None:
        self._runtime = runtime

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            credential = await run_in_threadpool(self._runtime().identity.authenticate, token)
        except Unauthenticated:
            return None
        return AccessToken(token=token, client_id=credential.id, scopes=[s.value for s in credential.scopes])


NEO4J_MEMORY_INSTRUCTIONS = """A knowledge graph you write and read: create_entities (name, type, observations),
create_relations (source, target, relationType such as WORKS_AT) and add_observations store what you state;
search_memories, find_memories_by_name and read_graph read it back, with what graphmem's memories say about
the same entities. Deletes remove only what agents stated."""


def build_server(runtime: Callable[[], Runtime], settings: Settings, *, fixed: Credential | str | None = None,
                 limited: bool = True, toolsets: list[Toolset] | None = None, path: str = MCP_PATH) -> MCPServer:
    """One server with ``toolsets`` (default: those ``settings.mcp_toolsets`` names), served at ``path`` over
    HTTP. ``fixed``: the credential (or the token, checked at every call) of every call that comes without an
    access token (stdio, the in-memory client); ``limited``: charge rate limits."""
    http = fixed is None
    chosen = toolsets or settings.mcp_toolsets
    alone = chosen == [Toolset.neo4j_memory]
    server = GraphmemMCP(
        name="graphmem-neo4j-memory" if alone else "graphmem", version=__version__,
        title="graphmem (Neo4j memory tools)" if alone else "graphmem memory",
        instructions=NEO4J_MEMORY_INSTRUCTIONS if alone else INSTRUCTIONS,
        token_verifier=BearerVerifier(runtime) if http else None,
        # graphmem's tokens are not issued for one resource (no audience to check): the verifier's lookup is
        # the whole check, so the SDK is told not to compare a token's resource.
        auth=AuthSettings(issuer_url=settings.public_url, validate_token_resource=False,
                          resource_server_url=settings.public_url.rstrip("/") + path)
        if http else None)
    calls = Calls(runtime, fixed, limited)
    for toolset in dict.fromkeys(chosen):
        TOOLSETS[toolset](server, calls)
    return server


def http_routes(server: MCPServer, settings: Settings, path: str = MCP_PATH) -> list[Route]:
    """The Streamable HTTP app's paths as routes of the host app (``path`` and the ``/.well-known`` metadata
    the SDK serves), each handing the whole request to the SDK's app with its middleware. Routes, not a mount
    at ``/``: a mount would take every path the host's routes did not, so an unknown path or a wrong method
    would be the SDK's plain 404 instead of the host's 404 and 405. A client configured with ``/mcp/`` (as one
    seed documents) is served as ``/mcp``, without a redirect some clients would not follow with a POST.

    Stateless (the SDK's ``stateless_http``): every POST carries all a call needs, so any of several app
    processes behind a proxy answers it, and a process restarting loses no client. graphmem's tools are
    request and answer; nothing is pushed to a client later (no sampling, elicitation or resumable
    streams), which is all a session would add."""
    origins = [f"{scheme}://{host}" for host in settings.allowed_hosts for scheme in ("http", "https")]
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=settings.allowed_hosts,
                                         allowed_origins=origins + settings.cors_origins)
    inner = server.streamable_http_app(streamable_http_path=path, transport_security=security,
                                       host=settings.host, stateless_http=True)
    sdk = _SDKApp(inner, path)
    paths = [route.path for route in inner.routes if isinstance(route, Route)]
    return [Route(served, sdk, include_in_schema=False) for served in [*paths, path + "/"]]


class _SDKApp:
    """The SDK's app as a route's endpoint (an ASGI callable that is not a function: Starlette passes every
    method to it, and the SDK answers the methods it does not serve)."""

    def __init__(self, inner: ASGIApp, path: str) -> None:
        self.inner = inner
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == self.path + "/":
            scope = {**scope, "path": self.path, "raw_path": self.path.encode()}
        await self.inner(scope, receive, send)

