"""Errors as the /v1 API answers them: ``{"error": {code, message, details?}}`` with the typed error's status
(401 with ``WWW-Authenticate: Bearer``, 429 and 503 with ``Retry-After`` when the error says when to retry).

* A request the route's schema rejects is 422 in FastAPI's own shape (``{"detail": [{type, loc, msg}]}``),
  without the values sent: an answer never echoes input. When every problem is a value graphmem cannot store
  faithfully (a lone surrogate, NaN or an infinity) or a path that would leave its tree, it is 400
  ``invalid_input`` naming the fields instead: the body had the right shape, its values are refused.
* An unknown path is 404 and a known path's wrong method 405 (``Allow`` naming every method of the path), in the
  envelope; TRACE is 405 on every path (``Untraceable``); a body over its cap is 413 (``BodyLimit``), with or
  without ``Content-Length``.
* Anything unexpected is logged once, with a reference the 500 answer carries (``Unexpected``).
* An invalid input a /v1 route raises (a service input it built, or the service) names the route's parameters,
  not the service's fields: ``scope`` for ``namespace`` on every route (``NamedRoute``), and what a route
  declares with ``named`` (``threshold`` for ``min_score``).

No stack trace, secret, token or query text ever reaches a body."""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import ValidationError
from pydantic_core import ErrorDetails
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.routing import Match, Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.errors import GraphmemError, InvalidInput, Names, Unauthenticated
from graphmem.model import View, invalid_input
from graphmem.model.fields import NOT_FINITE, REFUSED_VALUES, message
from graphmem.model.flat import flat_names

log = logging.getLogger(__name__)

REQUEST_PARTS = ("body", "query", "path", "header", "cookie")  # where FastAPI says a value was
NOT_FINITE_MESSAGE = "must be a finite number (not NaN or infinite)"
SCOPE: Names = {"namespace": "scope", "namespaces": "scope"}  # what a /v1 request addresses, on every route
VIEW: Names = flat_names(View, "view")  # a read's view, as parameters of its own
Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])
HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")  # what a route may answer, in Allow's order
_declared: dict[Callable[..., Any], Names] = {}


def error_response(exc: GraphmemError) -> JSONResponse:
    headers = {}
    if isinstance(exc, Unauthenticated):
        headers["WWW-Authenticate"] = "Bearer"
    if "retry_after" in exc.details:
        headers["Retry-After"] = str(exc.details["retry_after"])
    return JSONResponse(status_code=exc.http_status, content={"error": exc.to_dict()}, headers=headers)


def install(app: FastAPI) -> None:
    @app.exception_handler(GraphmemError)
    async def typed(_: Request, exc: GraphmemError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(ValidationError)
    async def invalid(_: Request, exc: ValidationError) -> JSONResponse:
        """A service input a route built from its arguments refused a value: the range it names is the
        message (the route's own model answers 422 before this)."""
        return error_response(invalid_input(exc))

    @app.exception_handler(RequestValidationError)
    async def rejected(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if errors and all(_refused_value(error) for error in errors):
            problems = [f"{_field(error)}: {_message(error)}" for error in errors]
            return error_response(InvalidInput("; ".join(problems), fields=[_field(error) for error in errors]))
        return JSONResponse(status_code=422, content={"detail": [
            {"type": error["type"], "loc": [_printable(part) for part in error["loc"]], "msg": _message(error)}
            for error in errors]})

    @app.exception_handler(HTTPException)
    async def routing(request: Request, exc: HTTPException) -> JSONResponse:
        """Starlette's and FastAPI's own refusals (no route, wrong method, an unreadable body), in the
        envelope."""
        body: dict[str, Any]
        if exc.status_code == 404:
            body = {"code": "not_found", "message": "no such route"}
        elif exc.status_code == 405:
            named = (exc.headers or {}).get("Allow", "")
            return method_not_allowed(request.method, allowed_methods(request, named.split(", ") if named else []))
        elif exc.status_code == 400:
            body = {"code": "invalid_input", "message": "the request body could not be read as JSON"}
        else:
            body = {"code": "http_error", "message": str(exc.detail)}
        return JSONResponse(status_code=exc.status_code, content={"error": body}, headers=exc.headers)


def allowed_methods(request: Request, named: list[str]) -> list[str]:
    """The methods the request's path answers: those a refusal ``named``, and those of every route of the path.
    Starlette names only the first route it finds (``POST`` for ``/v1/memories``, not its ``GET``), and a 405's
    ``Allow`` must list them all. A route that answers every method itself (a mount, the MCP app) is not asked:
    its own refusal names its methods."""
    found = set(named)
    for route in request.app.router.routes:
        if isinstance(route, Mount) or (isinstance(route, Route) and route.methods is None):
            continue
        found |= {method for method in HTTP_METHODS
                  if route.matches({**request.scope, "method": method})[0] is Match.FULL}
    return sorted(found, key=lambda method: (HTTP_METHODS.index(method) if method in HTTP_METHODS
                                             else len(HTTP_METHODS), method))


def method_not_allowed(method: str, allowed: list[str]) -> JSONResponse:
    """405 in the envelope: the router's refusal and ``Untraceable``'s say the same."""
    return JSONResponse(status_code=405, headers={"Allow": ", ".join(allowed)}, content={"error": {
        "code": "method_not_allowed", "message": f"this route does not answer {method}",
        "details": {"allow": allowed}}})


def named(names: Names) -> Callable[[Endpoint], Endpoint]:
    """Declares the /v1 names of the service fields a route's parameters feed where they differ, for its
    invalid inputs (``NamedRoute``)."""

    def declare(endpoint: Endpoint) -> Endpoint:
        _declared[endpoint] = names
        return endpoint

    return declare


class NamedRoute(APIRoute):
    """A /v1 route: an invalid input raised while its endpoint runs names the route's parameters (``SCOPE``,
    and what the endpoint declares with ``named``) instead of the service's fields."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            names = {**SCOPE, **_declared.get(self.endpoint, {})}
            try:
                return await handler(request)
            except ValidationError as exc:  # a service input the endpoint built itself
                raise invalid_input(exc).renamed(names) from None
            except InvalidInput as exc:
                raise exc.renamed(names) from None

        return route


class InvalidInputRoute(NamedRoute):
    """A route whose refused request is 400 ``invalid_input`` naming each item at fault (``entities.3.type``)
    rather than FastAPI's 422: the agent-graph routes, whose callers fix one item of a list and send again."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def route(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                errors = list(exc.errors())
                raise InvalidInput("; ".join(f"{_field(error)}: {_message(error)}" for error in errors),
                                   fields=[_field(error) for error in errors]) from None

        return route


def _refused_value(error: ErrorDetails) -> bool:
    """A value the field's type allows but graphmem cannot store or place (``fields.REFUSED_VALUES``), or a
    non-finite number refused by a range."""
    return error["type"] in REFUSED_VALUES or _not_finite(error)


def _not_finite(error: ErrorDetails) -> bool:
    value = error.get("input")
    return error["type"] == NOT_FINITE or (isinstance(value, float) and not math.isfinite(value))


def _message(error: ErrorDetails) -> str:
    return NOT_FINITE_MESSAGE if _not_finite(error) else _sendable(message(error))


def _field(error: ErrorDetails) -> str:
    """The field as the caller names it: ``metadata``, ``memories.0.content`` (not ``body.…``)."""
    loc = list(error["loc"])
    if loc and loc[0] in REQUEST_PARTS:
        loc = loc[1:]
    return ".".join(str(_printable(part)) for part in loc) or "body"


def _printable(part: Any) -> Any:
    """A location part as it can be sent back: an unknown key is the caller's own text, which may be long or
    hold a lone surrogate that JSON as UTF-8 cannot carry."""
    return _sendable(part[:100]) if isinstance(part, str) else part


def _sendable(text: str) -> str:
    """``text`` with any lone surrogate written as its escape, so that JSON as UTF-8 can carry it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class Unexpected:
    """An exception no handler took: logged once with a reference, answered 500 with that reference.
    (Starlette's own last-resort handler answers too, then re-raises for the server, which logs the
    traceback a second time.) After the answer has started, it is only logged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def sending(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as exc:
            ref = uuid.uuid4().hex[:12]
            log.error("unexpected error (ref %s): %s", ref, type(exc).__name__, exc_info=exc)
            if not started:
                await JSONResponse(status_code=500, content={"error": {
                    "code": "internal", "message": "an unexpected error; the server's log has the details",
                    "details": {"ref": ref}}})(scope, receive, send)


class BodyLimit:
    """Refuses a request body over its cap (413) before any route or the MCP app reads it: by
    ``Content-Length`` at once; a body without one (``Transfer-Encoding: chunked``) is read here first, up to
    its cap, and handed on whole. (Refusing it midway through a route's read would reach the route as a
    failed read, which FastAPI turns into a 400 and the MCP SDK into a 500.) ``/v1/jobs`` carries a batch and
    has its own cap."""

    def __init__(self, app: ASGIApp, default_max: int, caps: dict[str, int]) -> None:
        self.app = app
        self.default_max = default_max
        self.caps = caps

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = self.caps.get(scope["path"].rstrip("/"), self.default_max)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:  # the server reads exactly that many bytes
            if declared.isdigit() and int(declared) > cap:
                await _too_large(cap)(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        parts: list[bytes] = []
        received = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: nobody to answer
                return
            parts.append(message.get("body", b""))
            received += len(parts[-1])
            if received > cap:
                await _too_large(cap)(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        whole: Message | None = {"type": "http.request", "body": b"".join(parts), "more_body": False}

        async def replay() -> Message:
            nonlocal whole
            if whole is None:
                return await receive()
            message, whole = whole, None
            return message

        await self.app(scope, replay, send)


def _too_large(cap: int) -> JSONResponse:
    return JSONResponse(status_code=413, content={"error": {
        "code": "too_large", "message": f"the request body is over {cap} bytes", "details": {"max_bytes": cap}}})


class Untraceable:
    """TRACE is 405 on every path, known or unknown, in the envelope, so that no path ever echoes a request back
    (cross-site tracing) or answers it otherwise. The app's own answer is asked for and dropped, and only its
    ``Allow`` kept when it is a 405 too: a known path's router names the methods it answers, but the MCP app
    would answer 401 (it checks the token first) and an unknown path 404 (no method is allowed there). (uvicorn
    refuses methods it does not know, such as TRACK, with 400 before any app sees them.)"""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "TRACE":
            await self.app(scope, receive, send)
            return
        allowed: list[str] = []

        async def listen(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 405:
                allowed.extend(method for method in Headers(raw=message["headers"]).get("allow", "").split(", ")
                               if method)

        await self.app(scope, receive, listen)
        await method_not_allowed(scope["method"], allowed)(scope, receive, send)
