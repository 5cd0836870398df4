"""Errors as the /v1 API answers them: ``{"error": {code, message, details?}}`` with the typed error's
status (401 with ``WWW-Authenticate: Bearer``, 429 with ``Retry-After``), 422 in FastAPI's own shape for a
request the route's model rejects, 413 for a body over its cap. No stack trace, secret, token or query text
ever reaches a body."""

from __future__ import annotations

import logging
import uuid

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.errors import GraphmemError, RateLimited, Unauthenticated
from graphmem.model import invalid_input

log = logging.getLogger(__name__)


def error_response(exc: GraphmemError) -> JSONResponse:
    headers = {}
    if isinstance(exc, Unauthenticated):
        headers["WWW-Authenticate"] = "Bearer"
    if isinstance(exc, RateLimited):
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

    @app.exception_handler(Exception)
    async def unexpected(_: Request, exc: Exception) -> JSONResponse:
        ref = uuid.uuid4().hex[:12]
        log.error("unexpected error (ref %s): %s", ref, type(exc).__name__, exc_info=exc)
        return JSONResponse(status_code=500, content={"error": {
            "code": "internal", "message": "an unexpected error; the server's log has the details",
            "details": {"ref": ref}}})


class BodyLimit:
    """Refuses a request body over its cap (413) before the route reads it: by ``Content-Length`` at once,
    and by counting while a body without one streams in. ``/v1/jobs`` carries a batch and has its own cap."""

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
        if declared is not None and declared.isdigit() and int(declared) > cap:
            await _too_large(cap)(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    raise _BodyTooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _BodyTooLarge:
            await _too_large(cap)(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


def _too_large(cap: int) -> JSONResponse:
    return JSONResponse(status_code=413, content={"error": {
        "code": "too_large", "message": f"the request body is over {cap} bytes", "details": {"max_bytes": cap}}})
