"""Errors as GraphQL answers them: a message for people and ``extensions.code`` (BAD_INPUT, UNAUTHENTICATED,
FORBIDDEN, NOT_FOUND, CONFLICT with ``nextStep``, RATE_LIMITED with ``retryAfter``, UNAVAILABLE, INTERNAL),
never a stack trace. A query the schema rejects (unknown field, wrong type, over a limit) is BAD_INPUT; an
argument a service input refuses is BAD_INPUT too (resolvers build inputs with ``parse``, which raises the typed
error); anything else, a validation error of a result included, is unexpected: logged with a reference the
answer carries, and the answer says nothing else.

An invalid input names the arguments as the schema spells them (camelCase), and a field whose arguments feed
service fields of other names (``first`` for ``limit``) declares them with ``ArgumentNames``."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import FieldExtension, SchemaExtension
from strawberry.schema.exceptions import CannotGetOperationTypeError
from strawberry.types import Info
from strawberry.utils.str_converters import to_camel_case

from graphmem.errors import GraphmemError, InvalidInput, Names, RateLimited

log = logging.getLogger(__name__)

CODES = {"invalid_input": "BAD_INPUT", "unauthenticated": "UNAUTHENTICATED", "forbidden": "FORBIDDEN",
         "not_found": "NOT_FOUND", "conflict": "CONFLICT", "rate_limited": "RATE_LIMITED",
         "unavailable": "UNAVAILABLE", "engine_error": "UNAVAILABLE"}
DETAILS = {"next_step": "nextStep", "retry_after": "retryAfter", "field": "field"}


def coded(error: GraphQLError) -> GraphQLError:
    """``error`` with the message and extensions a client sees."""
    original = error.original_error
    if original is None:  # the query itself: syntax, unknown names, wrong types, a limit
        return _with(error, error.message, {"code": "BAD_INPUT"})
    if isinstance(original, GraphmemError):
        said = original.renamed({}, to_camel_case) if isinstance(original, InvalidInput) else original
        return _with(error, said.message, _extensions(said))
    if isinstance(original, GraphQLError):  # a scalar's parse error, raised as GraphQL's own
        return _with(error, original.message, {"code": "BAD_INPUT"})
    if isinstance(original, CannotGetOperationTypeError):  # no operation of that name (over a WebSocket: over
        # HTTP the router refuses it before), or several and none named
        return _with(error, original.as_http_error_reason(), {"code": "BAD_INPUT"})
    ref = uuid.uuid4().hex[:12]
    log.error("unexpected error in a GraphQL resolver (ref %s): %s", ref, type(original).__name__,
              exc_info=original)
    return _with(error, "an unexpected error; the server's log has the details", {"code": "INTERNAL", "ref": ref})


def _extensions(exc: GraphmemError) -> dict[str, Any]:
    extensions: dict[str, Any] = {"code": CODES.get(exc.code, "INTERNAL")}
    extensions.update({DETAILS[k]: v for k, v in exc.details.items() if k in DETAILS})
    return extensions


def streamed(exc: GraphmemError) -> GraphQLError:
    """A typed error of a subscription's stream, coded here: streamed results bypass ``ErrorCodes``."""
    return GraphQLError(exc.message, original_error=exc, extensions=_extensions(exc))


def rate_limited(errors: list[GraphQLError]) -> RateLimited | None:
    """The rate-limit error among ``errors``, if any (the router answers it with HTTP 429)."""
    for error in errors:
        if isinstance(error.original_error, RateLimited):
            return error.original_error
    return None


def _with(error: GraphQLError, message: str, extensions: dict[str, Any]) -> GraphQLError:
    return GraphQLError(message, nodes=error.nodes, source=error.source, positions=error.positions,
                        path=error.path, original_error=error.original_error, extensions=extensions)


class ErrorCodes(SchemaExtension):
    """Rewrites every error of an operation's result into its coded form."""

    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        errors = getattr(result, "errors", None)
        if result is not None and errors:
            result.errors = [coded(e) for e in errors]


class ArgumentNames(FieldExtension):
    """A field whose arguments feed service fields of other names: an invalid input raised while it resolves
    names its arguments (``names``: each service field's place to the argument's)."""

    def __init__(self, names: Names) -> None:
        self.names = names

    async def resolve_async(self, next_: Callable[..., Awaitable[Any]], source: Any, info: Info,
                            **kwargs: Any) -> Any:
        try:
            return await next_(source, info, **kwargs)
        except InvalidInput as exc:
            raise exc.renamed(self.names) from None
