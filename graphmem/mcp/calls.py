"""What every tool does before and after the service: find who calls (the SDK's access token over HTTP, or the
server's fixed credential over stdio and in-memory), charge the rate limit once per call (a read-only tool is
a read, any other a write; stdio is not limited), turn the ``namespace`` argument into the caller's context,
and turn a typed error into a tool error with a sentence that says what to do next (an invalid input names the
tool's arguments: a tool whose arguments feed service fields of other names declares them). Who may write where
is the service's rule (a read credential's context has nothing to write to), never checked here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypeVar

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field, ValidationError

from graphmem.errors import (
    Conflict,
    Forbidden,
    GraphmemError,
    InvalidInput,
    Names,
    NotFound,
    RateLimited,
    Unauthenticated,
)
from graphmem.identity import Charge, Credential
from graphmem.model import CallerContext, View
from graphmem.model.fields import invalid_input
from graphmem.model.flat import Flat, flat_names
from graphmem.results import ErrorReport
from graphmem.runtime import Runtime

T = TypeVar("T")
SAME_NAMES: Names = MappingProxyType({})
VIEW: Names = MappingProxyType(flat_names(View, "view"))  # a flattened view's fields, as the tools name them


def as_argument(flat: Flat) -> Any:
    """A tool argument made from a service model's field (``model/flat.py``): its default and description,
    no bounds of its own (the model built from it checks them)."""
    return Field(flat.default, description=flat.help or None)


@dataclass(frozen=True)
class Caller:
    """Who calls, in which namespaces: ``namespace`` is the one the call addresses (for a call ``across``
    namespaces that named none: None, which the service reads as every namespace of ``context``), and
    ``namespaces`` every one it covers, which read results name."""

    runtime: Runtime
    credential: Credential
    context: CallerContext
    namespace: str | None
    namespaces: list[str]

    @property
    def own(self) -> str:
        """The namespace a call that is not ``across`` addresses."""
        assert self.namespace is not None
        return self.namespace


class Calls:
    """The tools' one way into the service (built once per server)."""

    def __init__(self, runtime: Callable[[], Runtime], fixed: Credential | str | None, limited: bool) -> None:
        self._runtime = runtime
        # stdio and in-memory clients have no access token: this credential, or this token's (checked at
        # every call, so a revocation reaches a long-lived stdio process within the identity cache's seconds)
        self._fixed = fixed
        self._limited = limited

    def run(self, kind: Charge, namespace: str | None, work: Callable[[Caller], T], names: Names = SAME_NAMES,
            *, across: bool = False) -> T:
        """``work`` for the caller; ``names``: the tool's names for the service fields its arguments feed,
        where they differ; ``across``: a read, or a call addressed by id, which names a namespace or covers
        every one the credential may read (``Identity.reading``)."""
        runtime = self._runtime()
        try:
            credential = self._credential(runtime)
            if self._limited:
                runtime.identity.charge(credential, kind)
            if across:
                context, covered = runtime.identity.reading(credential, namespace)
                caller = Caller(runtime, credential, context, namespace, covered)
            else:
                context, resolved = runtime.identity.context(credential, namespace)
                caller = Caller(runtime, credential, context, resolved, [resolved])
            return work(caller)
        except InvalidInput as exc:
            raise ToolError(explain(exc.renamed(names))) from None
        except GraphmemError as exc:
            raise ToolError(explain(exc)) from None
        except ValidationError as exc:  # a rule across arguments, checked when the service's input is built
            raise ToolError(explain(invalid_input(exc).renamed(names))) from None

    def _credential(self, runtime: Runtime) -> Credential:
        token = get_access_token()
        if token is not None:
            return runtime.identity.authenticate(token.token)
        if self._fixed is None:
            raise Unauthenticated("no credential: connect with a bearer token")
        return runtime.identity.authenticate(self._fixed) if isinstance(self._fixed, str) else self._fixed


def report(error: ErrorReport | None) -> str:
    """An error an item's outcome carries, as a sentence (the same as ``explain`` gives for a raised one)."""
    if error is None:
        return "the memory was not stored; try again"
    next_step = error.details.get("next_step")
    return f"{error.message}. Next: {next_step}." if next_step else f"invalid input: {error.message}" \
        if error.code == "invalid_input" else error.message


def explain(exc: GraphmemError) -> str:
    """The error as a sentence an agent can act on."""
    if isinstance(exc, Conflict):
        return f"{exc.message}. Next: {exc.details['next_step']}."
    if isinstance(exc, RateLimited):
        return f"rate limited: wait {exc.details['retry_after']} seconds, then call again"
    if isinstance(exc, NotFound):
        if "namespace" in exc.details:
            return f"{exc.message}: name a namespace this credential may use, or none for its own"
        if "entity" in exc.details:
            return f"{exc.message}: search_entities finds an entity's exact name and id"
        return f"{exc.message}: check the id (ids come from the search and list tools, and from add_memory)"
    if isinstance(exc, Forbidden):
        return (f"{exc.message}: this credential may not write there (it may only read, or not that "
                "namespace); ask the owner for a read,write credential of it")
    if isinstance(exc, InvalidInput):
        return f"invalid input: {exc.message}. Fix the arguments and call again"
    if isinstance(exc, Unauthenticated):
        return f"{exc.message}"
    return f"{exc.message} (try again shortly; if it persists, tell the operator the reference " \
           f"{exc.details.get('ref', exc.code)})"
