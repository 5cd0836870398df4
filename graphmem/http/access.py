"""Who is calling, for the HTTP routes: the token (``Authorization: Bearer`` or ``X-API-Key``) through the
identity module, charged once per request as a read or a write, and the namespace a request names (``scope``)
turned into the service's caller context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Query, Request
from fastapi.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection

from graphmem.identity import Charge, Credential, Identity
from graphmem.model import OWN_NAMESPACE, READ_NAMESPACE, CallerContext
from graphmem.runtime import Runtime

# ``scope`` is the /v1 name of a namespace, which the seed system's clients send
ReadScope = Annotated[str | None, Query(description=READ_NAMESPACE)]
OwnScope = Annotated[str | None, Query(description=OWN_NAMESPACE)]


def runtime_of(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


def token_of(request: HTTPConnection) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    return request.headers.get("x-api-key") or None


@dataclass(frozen=True)
class Caller:
    runtime: Runtime
    credential: Credential

    @property
    def identity(self) -> Identity:
        return self.runtime.identity

    def scope(self, namespace: str | None) -> tuple[CallerContext, str]:
        """The caller's context, and the namespace the request addresses (a write without an id)."""
        return self.identity.context(self.credential, namespace)

    def reading(self, namespace: str | None) -> tuple[CallerContext, list[str]]:
        """The caller's context for a read or an id-addressed write, and the namespaces it covers: the one
        named, else every one the credential may read."""
        return self.identity.reading(self.credential, namespace)


def _check(runtime: Runtime, token: str | None, kind: Charge) -> Caller:
    credential = runtime.identity.authenticate(token)
    runtime.identity.charge(credential, kind)
    return Caller(runtime, credential)


async def _caller(request: Request, kind: Charge) -> Caller:
    """Checked on the event loop when everything it needs is in memory (the usual case: a cached credential
    and in-memory rate limits), else in the thread pool: a request pays one thread hop, for its route."""
    runtime, token = runtime_of(request), token_of(request)
    if runtime.identity.served_from_memory(token):
        return _check(runtime, token, kind)
    return await run_in_threadpool(_check, runtime, token, kind)


async def reader(request: Request) -> Caller:
    """A route that reads or searches."""
    return await _caller(request, Charge.read)


async def writer(request: Request) -> Caller:
    """A route that writes."""
    return await _caller(request, Charge.write)


async def adder(request: Request) -> Caller:
    """A route that writes only something new (a queued job, a credential): charged as a write, but nothing stored
    can contradict it, so its OpenAPI operation declares no 409 (``graphmem/http/openapi.py``)."""
    return await _caller(request, Charge.write)
