"""Driving the MCP server in tests: an in-memory client session on a server with a fixed credential, tool
calls whose structured result is checked against the tool's advertised ``outputSchema``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import jsonschema
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, Tool

from graphmem.config import Toolset
from graphmem.identity import OPERATOR, Credential, NewCredential, Scope
from graphmem.mcp.server import build_server
from graphmem.runtime import Runtime


def credential(runtime: Runtime, namespaces: list[str],
               scopes: tuple[Scope, ...] = (Scope.read, Scope.write)) -> tuple[Credential, str]:
    return runtime.identity.create(NewCredential(name=f"t-{uuid.uuid4().hex[:6]}", scopes=list(scopes),
                                                 namespaces=namespaces), by=OPERATOR)


class Session:
    """One client session; ``call`` returns the structured result (validated) or raises with the tool error."""

    def __init__(self, client: Client, tools: dict[str, Tool]) -> None:
        self.client = client
        self.tools = tools

    async def result(self, name: str, /, **arguments: Any) -> CallToolResult:
        return await self.client.call_tool(name, arguments)

    async def call(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        result = await self.result(name, **arguments)
        assert not result.is_error, f"{name} failed: {error_text(result)}"
        schema = self.tools[name].output_schema
        assert schema is not None and result.structured_content is not None, name
        jsonschema.validate(result.structured_content, schema)
        return result.structured_content

    async def error(self, name: str, /, **arguments: Any) -> str:
        """The tool error's sentence (fails when the call succeeds)."""
        result = await self.result(name, **arguments)
        assert result.is_error, f"{name} succeeded: {result.structured_content}"
        return error_text(result)


def over_http(url: str, token: str | None) -> Client:
    """The SDK's client over Streamable HTTP, with a bearer token (or none)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers=headers)))


def error_text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


# every tool set that can share a server (neo4j-memory is served alone)
EVERY_TOOLSET: list[Toolset] = [toolset for toolset in Toolset if toolset is not Toolset.neo4j_memory]


@asynccontextmanager
async def session(runtime: Runtime, fixed: Credential | str, toolsets: list[Toolset] | None = None,
                  limited: bool = False) -> AsyncIterator[Session]:
    """A client of a server with ``toolsets`` (default: every tool set that can share one server)."""
    settings = runtime.settings.model_copy(update={"mcp_toolsets": toolsets or EVERY_TOOLSET})
    server = build_server(lambda: runtime, settings, fixed=fixed, limited=limited)
    async with Client(server, raise_exceptions=True) as client:
        listed = await client.list_tools()
        yield Session(client, {tool.name: tool for tool in listed.tools})
