"""The errors the OpenAPI document declares, derived once from each route (``declare``) rather than written on
each: a client generated from the document, and a contract test, then know every status a route may answer.

A route that authenticates (a ``reader``, ``writer`` or ``adder`` dependency) declares, in the error envelope
(``ErrorOut``):

* 401 (no token, or an unknown or revoked one), 429 (over the credential's rate limit) and 503 (the database
  cannot be reached, a model is still loading), whatever it does;
* 400 when it takes any input (a value refused, a body that is not JSON), and 413 when it takes a body;
* 403 when it writes (a namespace the credential may only read, a grant it does not hold) and on every route of
  the credentials administration (a credential that is not an admin);
* 404 when it addresses something: an id in its path, or a namespace it reads (one the credential cannot read
  is not found, like one that does not exist);
* 409 when it changes what is stored (a reused ``request_id``, an outdated version, the owner's revocation),
  which an ``adder`` (a queued job, a new credential) never meets.

FastAPI declares 422 itself for a route with inputs; an ``InvalidInputRoute`` answers those refusals with 400,
so its 422 is taken out. What a route declares itself is kept. Routes that need no token declare their own
answers where they are defined.

The declarations are added to the document FastAPI generates, once, rather than to the routes' ``responses``:
FastAPI reads a route's ``responses`` models only when the route is made, before its dependencies (which say what
kind of route it is) are known."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from graphmem.http import credentials
from graphmem.http.access import adder, reader, writer
from graphmem.http.errors import InvalidInputRoute
from graphmem.http.schemas import ErrorOut

PUBLIC = "public"  # the tag of the routes that need no token
REF = "#/components/schemas/"
RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before trying again, when the server knows",
                               "schema": {"type": "integer"}}}
ERRORS: dict[int, dict[str, Any]] = {
    400: {"description": "Invalid input: the message and `details.fields` name the values refused (or the body "
                         "is not JSON)"},
    401: {"description": "No token, or an unknown or revoked one",
          "headers": {"WWW-Authenticate": {"description": "Bearer", "schema": {"type": "string"}}}},
    403: {"description": "The credential may not do this: a namespace it may only read, an action or a grant it "
                         "does not hold"},
    404: {"description": "No such id, or no such namespace among those the credential may read"},
    409: {"description": "What is stored contradicts the request; `details.next_step` says what to do"},
    413: {"description": "The body is over its cap (`details.max_bytes`)"},
    429: {"description": "Over the credential's rate limit", "headers": RETRY_AFTER},
    503: {"description": "The database cannot be reached, or a model is still loading", "headers": RETRY_AFTER},
}


def declare(app: FastAPI, routers: Sequence[APIRouter]) -> None:
    """Makes ``app``'s OpenAPI document declare the errors of every authenticating route of ``routers`` (the
    module docstring says which). The routers' own routes are read, as they were made: the app holds them in
    whatever form its FastAPI release includes them in."""
    generate = app.openapi
    declared: dict[str, Any] | None = None

    def openapi() -> dict[str, Any]:
        nonlocal declared
        document = generate()  # FastAPI's, kept until the app's routes change
        if document is not declared:
            _declare_errors(document, [route for router in routers for route in router.routes])
            declared = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]


def _declare_errors(document: dict[str, Any], routes: list[BaseRoute]) -> None:
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    envelope = ErrorOut.model_json_schema(ref_template=REF + "{model}")
    schemas.update(envelope.pop("$defs", {}))
    schemas[ErrorOut.__name__] = envelope
    content = {"application/json": {"schema": {"$ref": REF + ErrorOut.__name__}}}
    for route in routes:
        if not isinstance(route, APIRoute) or not route.include_in_schema:
            continue
        calls = {dependency.call for dependency in route.dependant.dependencies}
        if not calls & {reader, writer, adder}:
            continue
        for method in route.methods or ():
            responses = document["paths"][route.path_format][method.lower()]["responses"]
            if isinstance(route, InvalidInputRoute):
                responses.pop("422", None)
            for status in _statuses(route, calls):
                responses.setdefault(str(status), {**ERRORS[status], "content": content})


def _statuses(route: APIRoute, calls: set[Callable[..., Any] | None]) -> list[int]:
    dependant = route.dependant
    inputs = {field.name for field in dependant.path_params + dependant.query_params} | _body_fields(route)
    changes = writer in calls
    administers = route.path_format.startswith(credentials.router.prefix)
    declared = [401, 429, 503]
    declared += [400] if inputs else []
    declared += [413] if route.body_field is not None else []
    declared += [403] if changes or adder in calls or administers else []
    declared += [404] if dependant.path_params or (reader in calls and "scope" in inputs) else []
    declared += [409] if changes else []
    return sorted(declared)


def _body_fields(route: APIRoute) -> set[str]:
    """The names a route's body holds (its model's fields), or ``body`` for a body of another type."""
    if route.body_field is None:
        return set()
    fields = getattr(route.body_field.field_info.annotation, "model_fields", None)
    return set(fields) if isinstance(fields, dict) else {"body"}
