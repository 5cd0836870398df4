"""GraphQL input types, each turned into the plain values a service input model is built from (the model,
not this module, holds the bounds), and the names the service's fields have as arguments where they differ
from the service's own (``errors.ArgumentNames``)."""

from __future__ import annotations

import typing
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import strawberry
from pydantic import BaseModel
from strawberry.utils.str_converters import to_camel_case

from graphmem import model
from graphmem.errors import Names
from graphmem.model.fields import EPOCH_MS, FOLDER_FILTER, IDENTIFIER
from graphmem.model.flat import Flat, flat_fields
from graphmem.model.queries import seed_of

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


# The service's names that the API says otherwise: a memory version, where the service says document.
API_NAMES = {"document_id": "memory_id"}


def _argument(flat: Flat) -> tuple[str, Any, Callable[[Any], Any]]:
    """A service field as a GraphQL input field: its API name, its GraphQL type (a time is a ``DateTime``, an
    id an ``ID``, a folder filter a ``PathMatch``) and how its value goes back to the service."""
    meanings = set(flat.metadata)
    if EPOCH_MS in meanings:
        return API_NAMES.get(flat.name, flat.name), datetime | None, millis
    if FOLDER_FILTER in meanings:
        return flat.name, PathMatch | None, lambda match: match.value() if match is not None else None
    plain = [member for member in typing.get_args(flat.annotation) if member is not type(None)] or [flat.annotation]
    kind = strawberry.ID if IDENTIFIER in meanings else plain[0]
    return API_NAMES.get(flat.name, flat.name), kind | None, lambda value: value


def input_of(model: type[BaseModel], name: str, description: str, at: str, within: str = "") -> tuple[type, Names]:
    """A GraphQL input type with a field for each of ``model``'s (``model/flat.py``), all optional, and a
    ``values()`` that gives the service's fields back (those given); with the argument names of the service's
    fields (the input is the argument ``at``; ``within``: the field of the request the model is), for invalid
    inputs. A field added to the model is a field of the
    input; left out, a field is the model's default."""
    flats = flat_fields(model)
    fields = {flat.field: _argument(flat) for flat in flats}
    namespace: dict[str, Any] = {"__annotations__": {}}
    for flat in flats:
        api_name, kind, _ = fields[flat.field]
        namespace["__annotations__"][api_name] = kind
        default = f"left out: {flat.default}" if flat.default not in (None, False) else ""
        namespace[api_name] = strawberry.field(default=None, description="; ".join(
            filter(None, [flat.description, default])) or None)

    def values(self: Any) -> dict[str, Any]:
        given = {field: convert(getattr(self, api_name)) for field, (api_name, _, convert) in fields.items()}
        return {field: value for field, value in given.items() if value is not None}

    namespace["values"] = values
    made = strawberry.input(type(name, (), namespace), description=description)
    prefix = f"{within}." if within else ""
    return made, {f"{prefix}{field}": f"{at}.{to_camel_case(api_name)}" for field, (api_name, _, _) in fields.items()}


_filters, FILTERS = input_of(model.SearchFilters, "SearchFilters",
                             "Narrowing a search beyond the view; every field optional, all must hold", "filters")
_caps, CAPS = input_of(model.ExportCaps, "GraphCaps", "The bounds of one page of the evidence graph", "caps",
                       within="caps")
if TYPE_CHECKING:
    class SearchFilters:  # the generated inputs, as the resolvers use them
        def values(self) -> dict[str, Any]: ...

    class GraphCaps(SearchFilters): ...
else:
    SearchFilters, GraphCaps = _filters, _caps


def present(values: dict[str, Any]) -> dict[str, Any]:
    """The arguments a caller gave (GraphQL's None is "not given"): the model's defaults fill the rest."""
    return {k: v for k, v in values.items() if v is not None}


def view_values(as_of: datetime | None, include_superseded: bool, include_forgotten: bool) -> dict[str, Any]:
    """The view arguments of a field as the service's ``View``."""
    return {"as_of": millis(as_of), "include_superseded": include_superseded, "include_forgotten": include_forgotten}


SEED: Names = {"seed.query.query": "seed.query", "seed.document.id": "seed.memoryId",
               "seed.entity.id": "seed.entityId", "seed.ids.ids": "seed.ids"}  # each kind's value, by its tag


@strawberry.input(description="Where the evidence graph starts: exactly one of the four")
class GraphSeed:
    query: str | None = strawberry.field(default=None, description="the top fact hits of a search")
    memory_id: strawberry.ID | None = None
    entity_id: strawberry.ID | None = None
    ids: list[strawberry.ID] | None = strawberry.field(default=None, description="ids of any kind, up to 100")

    def value(self) -> dict[str, Any]:
        return seed_of({"query": self.query, "document": self.memory_id, "entity": self.entity_id,
                        "ids": self.ids})
