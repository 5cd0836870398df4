"""Subscriptions over the ``graphql-transport-ws`` protocol on ``/graphql``: ``job(id)`` streams a job's
status until it ends. The token comes in the ``connection_init`` payload (``{"token": "gm_..."}`` or
``{"Authorization": "Bearer gm_..."}``); a missing or bad one closes the socket with code 4401. A message that
is not one of the protocol's (not a JSON object, a subscribe whose payload, query or variables have another
type) closes it with 4400, as the protocol says, with a reason a close frame can carry."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
from typing import Any

import strawberry
from cross_web import HTTPException
from graphql import ExecutionResult, GraphQLError, GraphQLSyntaxError
from starlette.websockets import WebSocket
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.extensions import SchemaExtension
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import BaseGraphQLTransportWSHandler, Operation
from strawberry.subscriptions.protocols.graphql_transport_ws.types import ConnectionInitMessage, Message
from strawberry.types.graphql import OperationType

from graphmem.errors import GraphmemError, InvalidInput
from graphmem.graphql.answers import JobType
from graphmem.graphql.connections import Namespace
from graphmem.graphql.context import GraphContext, Info
from graphmem.graphql.errors import coded, streamed
from graphmem.identity import Charge

SUBSCRIPTIONS_NEED_WEBSOCKETS = "subscriptions need the graphql-transport-ws WebSocket protocol on /graphql"
CLOSE_REASON_BYTES = 123  # the most of a reason a WebSocket close frame carries (RFC 6455, 5.5)


@strawberry.type
class Subscription:
    @strawberry.subscription(description="a job's status: now, at each change, and last when it ends")
    async def job(self, info: Info, id: strawberry.ID,
                  namespace: Namespace = None,
                  ) -> AsyncGenerator[JobType, None]:
        try:  # one charge for the subscription (the operation's own charge skips subscriptions)
            info.context.runtime.identity.charge(info.context.credential, Charge.read)
            ctx, _ = info.context.reading(namespace)
            async for job in info.context.service.watch_job(ctx, str(id)):
                yield JobType.from_result(job)
        except GraphmemError as exc:
            raise streamed(exc) from None


class OverWebSocketOnly(SchemaExtension):
    """A subscription sent as a plain HTTP request is refused (400, BAD_INPUT) before it runs: executed as a
    query, its stream would be a field that cannot be null answered with nothing."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context.context
        if (self.execution_context.operation_type is OperationType.SUBSCRIPTION
                and isinstance(context, GraphContext) and not isinstance(context.request, WebSocket)):
            if context.response is not None:
                context.response.status_code = 400
            refused = InvalidInput(SUBSCRIPTIONS_NEED_WEBSOCKETS)
            self.execution_context.result = ExecutionResult(None, [GraphQLError(refused.message,
                                                                                original_error=refused)])
        yield


async def _coded(results: AsyncGenerator[Any, None]) -> AsyncGenerator[Any, None]:
    """``results`` with their errors coded; a syntax error stays as it is (the protocol closes with 4400)."""
    async for result in results:
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = [e if isinstance(e, GraphQLSyntaxError) else coded(e) for e in errors]
        yield result


def invalid_message(message: object) -> str | None:
    """Why ``message`` is not a graphql-transport-ws message, or None. Only what strawberry reads without
    looking is checked here (the message itself, its id, a subscribe's payload): strawberry refuses an unknown
    type, a missing field and a bad ``connection_init`` payload itself."""
    if not isinstance(message, dict):
        return "a message must be a JSON object"
    if "id" in message and not isinstance(message["id"], str):
        return "a message's id must be a string"
    if message.get("type") != "subscribe":
        return None
    payload = message.get("payload")
    if not isinstance(payload, dict):
        return "a subscribe message's payload must be an object"
    if not isinstance(payload.get("query"), str):
        return "a subscribe message's query must be a string"
    if not isinstance(payload.get("operationName"), str | None):
        return "a subscribe message's operationName must be a string or null"
    for name in ("variables", "extensions"):
        if not isinstance(payload.get(name), dict | None):
            return f"a subscribe message's {name} must be an object or null"
    return None


def close_reason(text: str) -> str:
    """``text`` as a close frame can carry it: UTF-8 (a lone surrogate escaped), at most ``CLOSE_REASON_BYTES``,
    cut between characters."""
    return text.encode("utf-8", "backslashreplace")[:CLOSE_REASON_BYTES].decode("utf-8", "ignore")


class WebSocketAdapter(ASGIWebSocketAdapter):
    """strawberry's WebSocket adapter, with every close reason one a close frame can carry: strawberry closes
    with the client's own text in the reason (an unknown operation's name, a syntax error's), and a server
    cannot send a reason over 123 bytes or with a lone surrogate (it would drop the connection instead)."""

    async def close(self, code: int, reason: str) -> None:
        await super().close(code, close_reason(reason))


def token_in(payload: dict[str, Any]) -> str | None:
    """The token of a ``connection_init`` payload."""
    token = payload.get("token")
    if isinstance(token, str) and token:
        return token
    header = payload.get("Authorization") or payload.get("authorization")
    if isinstance(header, str) and header.lower().startswith("bearer "):
        return header[7:].strip() or None
    return None


class TransportWS(BaseGraphQLTransportWSHandler[GraphContext, None]):
    """graphql-transport-ws with the caller authenticated at ``connection_init`` (close code 4401 if not),
    and every error of every frame coded as over HTTP (the socket's frames leave before the operation's
    error coder runs)."""

    async def handle(self) -> None:
        """A frame the router's JSON reading refuses (``Router.decode_json``: not JSON, nested too deep, a number
        past Python's digit limit) closes the socket with 4400 like any invalid message: strawberry's loop
        expects a ``JSONDecodeError`` only, and would end on the router's refusal with the socket left open and
        nothing reading it."""
        try:
            await super().handle()
        except HTTPException as exc:
            await self.handle_invalid_message(exc.reason)

    async def handle_message(self, message: Message) -> None:
        """An invalid message (``invalid_message``) closes the socket with 4400 before strawberry reads it:
        strawberry reads a payload and an id as they come (another type would end the connection with an
        exception) and hands a query or variables of another type to the executor (an unexpected error)."""
        problem = invalid_message(message)
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        await super().handle_message(message)

    async def _send_result_stream(self, operation: Operation[GraphContext, None], result_source: Any) -> None:
        await super()._send_result_stream(operation, _coded(result_source))

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        payload = message.get("payload") or {}
        if not self.connection_init_received and isinstance(payload, dict):
            try:
                await self.context.authenticate(token_in(payload))
            except GraphmemError:
                await self.websocket.close(code=4401, reason="Unauthorized")
                return
        await super().handle_connection_init(message)
