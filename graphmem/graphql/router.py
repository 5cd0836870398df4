"""``/graphql`` on the app: queries and mutations over POST and GET, and the explorer (GraphiQL) on a
browser's GET, served from the package (``graphmem/web``): strawberry's own page loads GraphiQL from a CDN,
which fails offline."""

from __future__ import annotations

import json
from functools import cached_property

from cross_web import HTTPException
from fastapi import Request, Response, WebSocket
from fastapi.responses import JSONResponse
from strawberry.fastapi import GraphQLRouter
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types.unset import UNSET

from graphmem.config import Settings
from graphmem.graphql.context import GraphContext, graph_context
from graphmem.graphql.schema import build_schema
from graphmem.graphql.subscriptions import TransportWS, WebSocketAdapter
from graphmem.web import WEB_DIR

MAX_JSON_DEPTH = 32  # nesting of a request's JSON (variables included); the API's inputs need a handful


class Router(GraphQLRouter[GraphContext, None]):
    """strawberry's router with the explorer served from the package, and the request refusals strawberry
    answers as plain text (a body that is not JSON, no query) answered as GraphQL errors with BAD_INPUT."""

    graphql_transport_ws_handler_class = TransportWS
    websocket_adapter_class = WebSocketAdapter

    @cached_property
    def graphql_ide_html(self) -> str:
        return (WEB_DIR / "static" / "graphiql.html").read_text(encoding="utf-8")

    # the base class types run() as two overloads (HTTP, WebSocket); this wraps both alike
    async def run(self, request: Request | WebSocket, context: GraphContext = UNSET,  # type: ignore[override]
                  root_value: None = UNSET) -> Response | WebSocket:
        try:
            return await super().run(request, context, root_value)
        except HTTPException as exc:  # its reason may quote the request (an operation name): cut and escaped
            reason = exc.reason[:300].encode("utf-8", "backslashreplace").decode("utf-8")
            return JSONResponse(status_code=exc.status_code, content={"errors": [
                {"message": reason, "extensions": {"code": "BAD_INPUT"}}]})

    def decode_json(self, data: str | bytes) -> object:
        """A JSON object (or a list of them), no deeper than ``MAX_JSON_DEPTH``: Python's parser runs out of stack
        on a short body nested thousands deep, and strawberry reads anything else as a map."""
        try:
            value = json.loads(data)
        except RecursionError:
            raise HTTPException(400, f"the request's JSON is nested deeper than {MAX_JSON_DEPTH} levels") from None
        except ValueError:  # not JSON, not UTF-8, or a number past Python's digit limit
            raise HTTPException(400, "the request is not valid JSON") from None
        if not isinstance(value, dict | list):
            raise HTTPException(400, "the request must be a JSON object")
        if nesting(value) > MAX_JSON_DEPTH:
            raise HTTPException(400, f"the request's JSON is nested deeper than {MAX_JSON_DEPTH} levels")
        return value


def nesting(value: object) -> int:
    """How deep lists and maps nest in ``value`` (a scalar is 0), counted without recursion and given up past
    ``MAX_JSON_DEPTH``."""
    deepest, pending = 0, [(value, 1)]
    while pending and deepest <= MAX_JSON_DEPTH:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in children)
    return deepest


def graphql_router(settings: Settings) -> Router:
    return Router(build_schema(settings), path="/graphql", context_getter=graph_context,
                  subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL])
