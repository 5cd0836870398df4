"""``/graphql`` on the app: queries and mutations over POST and GET, and the explorer (GraphiQL) on a
browser's GET, served from the package (``graphmem/web``): strawberry's own page loads GraphiQL from a CDN,
which fails offline."""

from __future__ import annotations

from functools import cached_property

from strawberry.fastapi import GraphQLRouter
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL

from graphmem.config import Settings
from graphmem.graphql.context import GraphContext, graph_context
from graphmem.graphql.schema import build_schema
from graphmem.graphql.subscriptions import TransportWS
from graphmem.web import WEB_DIR


class Router(GraphQLRouter[GraphContext, None]):
    graphql_transport_ws_handler_class = TransportWS
    @cached_property
    def graphql_ide_html(self) -> str:
        return (WEB_DIR / "static" / "graphiql.html").read_text(encoding="utf-8")


def graphql_router(settings: Settings) -> Router:
    return Router(build_schema(settings), path="/graphql", context_getter=graph_context,
                  subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL])
