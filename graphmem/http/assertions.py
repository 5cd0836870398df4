"""/v1 routes for what agents state (the calls of Neo4j's memory MCP server, ``service/assertions.py``):
``POST`` and ``DELETE`` on ``/v1/entities``, ``/v1/relations`` and ``/v1/observations``, with the tools' bodies
plus ``request_id``. A body that breaks a bound is 400 ``invalid_input`` naming the item."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from graphmem.http.access import Caller, OwnScope, writer
from graphmem.http.errors import InvalidInputRoute
from graphmem.model.assertions import (
    EntitiesCreate,
    EntitiesDelete,
    ObservationsAdd,
    ObservationsDelete,
    RelationsChange,
)
from graphmem.results.knowledge import Deleted, EntitiesCreated, ObservationsAddedResult, RelationsCreated

router = APIRouter(prefix="/v1", tags=["graph"], route_class=InvalidInputRoute)
Write = Annotated[Caller, Depends(writer)]


@router.post("/entities", response_model=EntitiesCreated)
def create_entities(caller: Write, body: EntitiesCreate, scope: OwnScope = None) -> EntitiesCreated:
    """Entities with a type and observations; an entity that exists (by name) is merged, nothing twice."""
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.create_entities(ctx, ns, body)


@router.delete("/entities", response_model=Deleted)
def delete_entities(caller: Write, body: EntitiesDelete, scope: OwnScope = None) -> Deleted:
    """Forget what agents stated about these entities (memories stored as text are not changed)."""
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.delete_entities(ctx, ns, body)


@router.post("/relations", response_model=RelationsCreated)
def create_relations(caller: Write, body: RelationsChange, scope: OwnScope = None) -> RelationsCreated:
    """Relations between entities that exist; the others are listed in ``skipped``."""
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.create_relations(ctx, ns, body)


@router.delete("/relations", response_model=Deleted)
def delete_relations(caller: Write, body: RelationsChange, scope: OwnScope = None) -> Deleted:
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.delete_relations(ctx, ns, body)


@router.post("/observations", response_model=ObservationsAddedResult)
def add_observations(caller: Write, body: ObservationsAdd, scope: OwnScope = None) -> ObservationsAddedResult:
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.add_observations(ctx, ns, body)


@router.delete("/observations", response_model=Deleted)
def delete_observations(caller: Write, body: ObservationsDelete, scope: OwnScope = None) -> Deleted:
    ctx, ns = caller.scope(scope)
    return caller.runtime.service.delete_observations(ctx, ns, body)
