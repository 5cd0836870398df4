"""The typed errors every layer raises. Front ends map ``http_status`` (and ``code``) to their protocol.

Messages are written for the caller: they never contain a stack trace, a secret or a query.
"""

from __future__ import annotations

from typing import Any


class GraphmemError(Exception):
    """Base class. ``code`` is stable and machine-readable; ``message`` is for people."""

    code = "internal"
    http_status = 500

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = {k: v for k, v in details.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **({"details": self.details} if self.details else {})}


class InvalidInput(GraphmemError):
    """Bad input: out of bounds, wrong shape, malformed. Nothing was written."""

    code = "invalid_input"
    http_status = 400


class Unauthenticated(GraphmemError):
    code = "unauthenticated"
    http_status = 401


class Forbidden(GraphmemError):
    """The caller is known but may not do this in that namespace."""

    code = "forbidden"
    http_status = 403


class NotFound(GraphmemError):
    """No such id in the caller's namespaces (identical for ids that exist elsewhere)."""

    code = "not_found"
    http_status = 404


class Conflict(GraphmemError):
    """The request contradicts the stored state; ``next_step`` tells the caller what to do."""

    code = "conflict"
    http_status = 409

    def __init__(self, message: str, *, next_step: str, **details: Any) -> None:
        super().__init__(message, next_step=next_step, **details)


class RateLimited(GraphmemError):
    """The credential made too many calls of this kind in the window; ``retry_after`` is in seconds."""

    code = "rate_limited"
    http_status = 429

    def __init__(self, message: str, *, retry_after: int, **details: Any) -> None:
        super().__init__(message, retry_after=retry_after, **details)


class Unavailable(GraphmemError):
    """The graph database cannot be reached or did not answer in time."""

    code = "unavailable"
    http_status = 503


class Contended(Unavailable):
    """A write kept meeting concurrent changes to the same records for its whole retry budget: the server is
    busy (503 with a ``retry_after`` detail, in seconds), which is not the caller's conflict (409)."""


class ModelsLoading(Unavailable):
    """A model this call needs is still loading (at start, in the background) past the time a call waits for it:
    503 with a ``retry_after`` detail, in seconds."""


class EngineError(GraphmemError):
    """The bundled engine could not be started or stopped; the message carries its log's tail."""

    code = "engine_error"
    http_status = 503


class ConfigurationError(GraphmemError):
    """A startup problem the operator must fix (unknown server, changed embedder, bad settings)."""

    code = "configuration"
    http_status = 500
