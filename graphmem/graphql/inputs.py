"""GraphQL input types, each turned into the plain values a service input model is built from (the model,
not this module, holds the bounds), and the names the service's fields have as arguments where they differ
from the service's own (``errors.ArgumentNames``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import strawberry

from graphmem.errors import Names

PAGE: Names = {"limit": "first", "cursor": "after"}  # a page's size and where it continues, as Relay names them
VIEW: Names = {"view.as_of": "asOf", "view.include_superseded": "includeSuperseded",
               "view.include_forgotten": "includeForgotten"}  # the view's fields are the field's own arguments


def millis(value: datetime | None) -> int | None:
    """A ``DateTime`` argument as the service's epoch milliseconds (a time without a zone is UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return int(value.timestamp() * 1000)


@strawberry.input(description="A folder: exactly (eq), or it and everything under it (startsWith, by segment)")
class PathMatch:
    eq: str | None = None
    starts_with: str | None = None

    def value(self) -> str | None:
        """The service's path filter: exact, or a segment prefix written ``a/b%``."""
        if self.starts_with is not None:
            return self.starts_with.rstrip("/") + "%"
        return self.eq


FILTERS: Names = {"since": "filters.since", "until": "filters.until", "entity_id": "filters.entityId",
                  "document_id": "filters.memoryId", "source": "filters.source", "path": "filters.path"}


@strawberry.input(description="Narrowing a search beyond the view; every field optional, all must hold")
class SearchFilters:
    since: datetime | None = strawberry.field(default=None, description="recorded at or after")
    until: datetime | None = strawberry.field(default=None, description="recorded at or before")
    entity_id: strawberry.ID | None = strawberry.field(default=None, description="facts that mention it")
    memory_id: strawberry.ID | None = strawberry.field(default=None, description="facts of this version")
    source: str | None = None
    path: PathMatch | None = None

    def values(self) -> dict[str, Any]:
        return {"since": millis(self.since), "until": millis(self.until), "entity_id": self.entity_id,
                "document_id": self.memory_id, "source": self.source,
                "path": self.path.value() if self.path else None}


SEED: Names = {"seed.query.query": "seed.query", "seed.document.id": "seed.memoryId",
               "seed.entity.id": "seed.entityId", "seed.ids.ids": "seed.ids"}  # each kind's value, by its tag


@strawberry.input(description="Where the evidence graph starts: exactly one of the four")
class GraphSeed:
    query: str | None = strawberry.field(default=None, description="the top fact hits of a search")
    memory_id: strawberry.ID | None = None
    entity_id: strawberry.ID | None = None
    ids: list[strawberry.ID] | None = strawberry.field(default=None, description="ids of any kind, up to 100")

    def value(self) -> dict[str, Any]:
        given = {name: value for name, value in (("query", self.query), ("document", self.memory_id),
                                                 ("entity", self.entity_id), ("ids", self.ids)) if value is not None}
        if len(given) != 1:
            return {"kind": "none"}  # the service's model names the choices
        kind, value = next(iter(given.items()))
        return {"kind": kind, {"query": "query", "ids": "ids"}.get(kind, "id"): value}


@strawberry.input(description="The bounds of one page of the evidence graph")
class GraphCaps:
    depth: int = 2
    max_nodes: int = 2000
    max_documents: int = 1000
    fanout: int = 50

    def values(self) -> dict[str, int]:
        return {"depth": self.depth, "max_nodes": self.max_nodes, "max_documents": self.max_documents,
                "fanout": self.fanout}
