"""The typed errors every layer raises. Front ends map ``http_status`` (and ``code``) to their protocol.

Messages are written for the caller: they never contain a stack trace, a secret or a query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Loc = tuple[str, ...]  # a field's place in an input: ("caps", "depth"), ("entities", "3", "type")
Names = Mapping[str, str]
"""A front end's names for the service's fields: the dotted place the service knows a field by ("caps.depth")
to the one the front end's callers know it by ("depth", or "caps.maxNodes")."""


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
    """Bad input: out of bounds, wrong shape, malformed. Nothing was written.

    The input at fault is named as the service names it: ``field``, or ``problems`` (each value refused, by
    its place, and why: the message lists them, ``fields`` holds their first parts). A front end whose
    arguments feed fields of other names says the error in its callers' words with ``renamed``."""

    code = "invalid_input"
    http_status = 400

    def __init__(self, message: str, *, problems: Sequence[tuple[Loc, str]] = (), **details: Any) -> None:
        super().__init__(message, **details)
        self.problems = tuple(problems)

    @classmethod
    def listing(cls, problems: Sequence[tuple[Loc, str]]) -> InvalidInput:
        """One error naming every value refused, as ``place: why`` (a rule of the whole input: ``input: why``)."""
        return cls("; ".join(f"{'.'.join(loc) or 'input'}: {why}" for loc, why in problems), problems=problems,
                   fields=[loc[0] for loc, _ in problems if loc])

    def renamed(self, names: Names, spell: Callable[[str], str] = str) -> InvalidInput:
        """This error in a front end's words: each place the service names is replaced by ``names`` (its
        longest prefix found there), and every part is then written by ``spell`` (GraphQL's camelCase). A
        ``field`` the message begins with is renamed in the message too."""

        def said(loc: Loc) -> Loc:
            known = next((n for n in range(len(loc), 0, -1) if ".".join(loc[:n]) in names), 0)
            place = (*names[".".join(loc[:known])].split("."), *loc[known:]) if known else loc
            return tuple(spell(part) for part in place)

        if self.problems:
            return self.listing([(said(loc), why) for loc, why in self.problems])
        field = self.details.get("field")
        if not isinstance(field, str):
            return self
        name = ".".join(said(tuple(field.split("."))))
        begins = re.match(rf"{re.escape(field)}\b", self.message)
        message = name + self.message[len(field):] if begins else self.message
        return InvalidInput(message, **{**self.details, "field": name})


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
