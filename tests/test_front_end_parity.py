"""Every front end offers every field of the concepts it takes (the search filters, the view, the export caps)
under its own name for it, read from what each front end publishes: the OpenAPI document, the GraphQL schema,
the MCP tools' input schemas and the CLI's options. A field a front end lacks fails here unless ``REASONS`` says
why; so a new field of a model (and the front ends derive their parameters from the models) is checked
everywhere at once."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import typer
from pydantic import BaseModel
from strawberry.utils.str_converters import to_camel_case

from graphmem.app import create_app
from graphmem.cli import app as cli_app
from graphmem.config import Settings, Toolset
from graphmem.graphql.inputs import API_NAMES
from graphmem.graphql.schema import schema as graphql_schema
from graphmem.mcp.server import build_server
from graphmem.model import ExportCaps, SearchFilters, View
from graphmem.model.flat import flat_fields

CONCEPTS: dict[str, type[BaseModel]] = {"filters": SearchFilters, "view": View, "caps": ExportCaps}

# (front end, operation) -> the concepts it takes
OPERATIONS: dict[tuple[str, str], tuple[str, ...]] = {
    ("v1", "GET /v1/memories/search"): ("filters", "view"),
    ("v1", "GET /v1/recall"): ("filters", "view"),
    ("v1", "POST /v1/recall/context"): ("filters", "view"),
    ("v1", "GET /v1/entities/search"): ("view",),
    ("v1", "GET /v1/triples"): ("view",),
    ("v1", "GET /v1/graph"): ("view", "caps"),
    ("graphql", "search"): ("filters", "view"),
    ("graphql", "recall"): ("filters", "view"),
    ("graphql", "triples"): ("view",),
    ("graphql", "graph"): ("view", "caps"),
    ("graphql", "memories"): ("view",),
    ("graphql", "facts"): ("view",),
    ("graphql", "entities"): ("view",),
    ("mcp", "search_memories"): ("filters", "view"),
    ("mcp", "search_facts"): ("filters", "view"),
    ("mcp", "recall_context"): ("filters", "view"),
    ("mcp", "search_entities"): ("view",),
    ("mcp", "search_triples"): ("view",),
    ("mcp", "explore_graph"): ("view", "caps"),
    ("mcp", "memory.search"): ("filters",),
    ("cli", "search"): ("filters", "view"),
    ("cli", "recall"): ("filters", "view"),
    ("cli", "export"): ("view", "caps"),
}

MNEMOLOG_SEED = "the Mnemolog seed's tool keeps its own arguments (since, as epoch ms or ISO 8601)"
# (front end, operation, field) -> why it is not offered there
REASONS: dict[tuple[str, str, str], str] = {
    **{("mcp", "explore_graph", field): "explore_graph's caps are ExploreCaps: one cap on nodes bounds the memories "
                                        "too, for an agent's first look" for field in ("max_documents",)},
    **{("mcp", "memory.search", flat.name): MNEMOLOG_SEED
       for flat in flat_fields(SearchFilters) if flat.name != "since"},
}


def graphql_name(field: str) -> str:
    return to_camel_case(API_NAMES.get(field, field))


def offered_v1() -> dict[str, set[str]]:
    document = create_app(Settings(_env_file=None)).openapi()
    offered: dict[str, set[str]] = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            names = {p["name"] for p in operation.get("parameters", [])}
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                names |= nested_properties(document, resolve(document, body))
            offered[f"{method.upper()} {path}"] = names
    return offered


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """A schema with its ``$ref`` followed (into ``components/schemas`` or ``$defs``), and a nullable object's
    object."""
    ref = schema.get("$ref")
    if ref:
        *where, name = ref.lstrip("#/").split("/")
        found: dict[str, Any] = document
        for part in where:
            found = found[part]
        return resolve(document, found[name])
    objects = [s for s in schema.get("anyOf", []) if s.get("$ref") or s.get("type") == "object"]
    return resolve(document, objects[0]) if objects else schema


def nested_properties(document: dict[str, Any], schema: dict[str, Any]) -> set[str]:
    """An object's properties, and its object properties' own as ``property.inner``."""
    names = set()
    for name, inner in schema.get("properties", {}).items():
        names.add(name)
        names |= {f"{name}.{deeper}" for deeper in resolve(document, inner).get("properties", {})}
    return names


def offered_graphql() -> dict[str, set[str]]:
    """A field's arguments, and the fields of its input-object arguments as ``argument.field``."""
    offered: dict[str, set[str]] = {}
    for name, field in graphql_schema._schema.query_type.fields.items():  # type: ignore[union-attr]
        names = set(field.args)
        for argument, arg in field.args.items():
            kind = arg.type
            while hasattr(kind, "of_type"):
                kind = kind.of_type
            names |= {f"{argument}.{inner}" for inner in getattr(kind, "fields", {})}
        offered[name] = names
    return offered


def offered_mcp() -> dict[str, set[str]]:
    toolsets = [Toolset.memory, Toolset.graph, Toolset.conversation, Toolset.mnemolog]
    server = build_server(lambda: None, Settings(_env_file=None), toolsets=toolsets)  # type: ignore[arg-type,return-value]
    return {tool.name: nested_properties(tool.input_schema, tool.input_schema) for tool in anyio.run(server.list_tools)}


def offered_cli() -> dict[str, set[str]]:
    command = typer.main.get_command(cli_app)
    return {name: {param.name for param in sub.params if param.name}  # type: ignore[attr-defined]
            for name, sub in command.commands.items()}  # type: ignore[attr-defined]


def expected_names(front_end: str, concept: str, field: str) -> set[str]:
    """A field's names in a front end: flat (a parameter of its own) or inside the concept's object, in the
    front end's casing."""
    name = graphql_name(field) if front_end == "graphql" else field
    return {name, f"{concept}.{name}"}


@pytest.fixture(scope="module")
def offered() -> dict[str, dict[str, set[str]]]:
    return {"v1": offered_v1(), "graphql": offered_graphql(), "mcp": offered_mcp(), "cli": offered_cli()}


@pytest.mark.parametrize(("front_end", "operation"), list(OPERATIONS))
def test_every_field_of_a_concept_is_offered_or_its_absence_explained(
        offered: dict[str, dict[str, set[str]]], front_end: str, operation: str) -> None:
    names = offered[front_end].get(operation)
    assert names is not None, f"{front_end} has no operation {operation}"
    missing = [field for concept in OPERATIONS[(front_end, operation)]
               for field in (flat.name for flat in flat_fields(CONCEPTS[concept]))
               if not expected_names(front_end, concept, field) & names
               and (front_end, operation, field) not in REASONS]
    assert not missing, f"{front_end} {operation} lacks {missing} (offers {sorted(names)})"


def test_every_reason_is_still_needed(offered: dict[str, dict[str, set[str]]]) -> None:
    """A stated reason for a field a front end now offers is stale: the table stays true."""
    stale = []
    for front_end, operation, field in REASONS:
        concept = next(c for c in OPERATIONS[(front_end, operation)]
                       if field in {f.name for f in flat_fields(CONCEPTS[c])})
        if expected_names(front_end, concept, field) & offered[front_end][operation]:
            stale.append((front_end, operation, field))
    assert not stale


def test_the_check_sees_a_missing_field() -> None:
    """The comparison itself: a concept field absent from an operation's names is reported, flat or nested."""
    first, *rest = [flat.name for flat in flat_fields(SearchFilters)]
    assert [f for f in [first, *rest] if not expected_names("v1", "filters", f) & set(rest)] == [first]
    assert not expected_names("graphql", "filters", "document_id") & {"documentId", "filters.documentId"}
    assert expected_names("graphql", "filters", "document_id") & {"filters.memoryId"}
