"""/v1 graph reads: entities, triples, and the bounded evidence graph (JSON with the seed's completeness
names, GraphML, or a Cypher script)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Response

from graphmem.http.access import Caller, ReadScope, reader
from graphmem.http.errors import VIEW, NamedRoute, named
from graphmem.http.params import as_query
from graphmem.http.schemas import GraphOut
from graphmem.model import EntitySearchRequest, ExportCaps, ExportFormat, ExportRequest, TripleQuery, View, parse
from graphmem.model.flat import flat_names, flattened
from graphmem.model.queries import SEED_VALUES
from graphmem.results import EntityPage, TriplePage

router = APIRouter(prefix="/v1", tags=["graph"], route_class=NamedRoute)
Read = Annotated[Caller, Depends(reader)]


@router.get("/entities/search", response_model=EntityPage)
@named(VIEW)
@flattened("view", View, as_query)
def search_entities(caller: Read, query: str, view: dict[str, Any], limit: int = 10, scope: ReadScope = None,
                    path: str | None = None, explain: bool = False, cursor: str | None = None) -> EntityPage:
    """Entities by name and meaning; a page at a time."""
    ctx, names = caller.reading(scope)
    request = parse(EntitySearchRequest, {"query": query, "limit": limit, "path": path, "explain": explain,
                                          "cursor": cursor, "namespaces": names, "view": view})
    return caller.runtime.service.search_entities(ctx, request)


@router.get("/triples", response_model=TriplePage)
@named(VIEW)
@flattened("view", View, as_query)
def search_triples(caller: Read, view: dict[str, Any], scope: ReadScope = None, subject: str | None = None,
                   predicate: str | None = None, object: str | None = None, term: str | None = None,
                   negated: bool | None = None, limit: int = 10, path: str | None = None,
                   cursor: str | None = None) -> TriplePage:
    """Subject-predicate-object statements by subject, predicate, object or a free term."""
    ctx, names = caller.reading(scope)
    values = {"subject": subject, "predicate": predicate, "object": object, "term": term, "negated": negated,
              "limit": limit, "path": path, "cursor": cursor, "namespaces": names, "view": view}
    return caller.runtime.service.search_triples(ctx, parse(TripleQuery, {k: v for k, v in values.items()
                                                                           if v is not None}))


GRAPH_CONTENT: dict[str, dict[str, object]] = {"application/json": {}, "application/graphml+xml": {},
                                                "application/x-cypher-query": {}}


@router.get("/graph", response_model=GraphOut, responses={200: {"content": GRAPH_CONTENT}})
@named({"seed.query.query": "query", "seed.document.id": "id", "seed.entity.id": "id", "seed.ids.ids": "ids",
        "target_namespace": "target_scope", **flat_names(ExportCaps, "caps"), **VIEW})
@flattened("view", View, as_query)
@flattened("caps", ExportCaps, as_query)
def graph(caller: Read, seed: Literal["query", "document", "entity", "ids"], caps: dict[str, Any],
          view: dict[str, Any], scope: ReadScope = None, query: str | None = None, id: str | None = None,
          ids: Annotated[list[str] | None, Query(description="ids of any kind, for seed=ids")] = None,
          cursor: str | None = None, format: ExportFormat = ExportFormat.json,
          target_scope: str | None = None,
          count_reachable: Annotated[bool, Query(description="false: skip counting the reachable documents "
                                                 "(reachableDocuments and coverage are then null)")] = True,
          ) -> GraphOut | Response:
    """One page of the bounded evidence graph around a seed, with how complete it is (``totalDocuments``,
    ``truncated``, ``unavailableDocuments``, ``coverage``) and the next page's cursor."""
    ctx, _ = caller.reading(scope)
    seed_value = {"kind": seed, SEED_VALUES[seed]: {"query": query, "ids": ids}.get(seed, id)}
    request = parse(ExportRequest, {  # a seed without its value is refused naming that parameter
        "seed": seed_value, "cursor": cursor, "view": view, "count_reachable": count_reachable, "caps": caps})
    service = caller.runtime.service
    result = service.export(ctx, scope, request)
    if format is ExportFormat.json:
        return GraphOut.model_validate(result.model_dump())
    rendered = service.render_export(result, format, result.namespaces[0], target_scope)
    return Response(content=rendered.content, media_type=rendered.media_type,
                    headers={"X-Graphmem-Truncated": str(rendered.truncated).lower(),
                             "X-Graphmem-Next-Cursor": rendered.next_cursor or ""})
