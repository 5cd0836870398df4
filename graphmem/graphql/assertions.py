"""GraphQL types of what agents state (the calls of Neo4j's memory MCP server, ``service/assertions.py``): the
mutations' inputs, with the tools' field names, and their answers."""

from __future__ import annotations

from typing import Any

import strawberry

from graphmem.model.assertions import RelationAssertion
from graphmem.results.knowledge import ObservationsAdded


@strawberry.input(description="an entity an agent states: merged by name with the one stored")
class EntityInput:
    name: str
    type: str = strawberry.field(description="A-Z a-z 0-9 _, starting with a letter or _; at most 60")
    observations: list[str] = strawberry.field(default_factory=list)


@strawberry.input(description="a directed relation between two entities that exist")
class RelationInput:
    source: str
    target: str
    relation_type: str = strawberry.field(description="WORKS_AT, LIVES_IN, ...")


@strawberry.input(description="observations of one entity, by its name")
class ObservationInput:
    entity_name: str
    observations: list[str]


@strawberry.type(description="an entity as stated")
class StatedEntity:
    name: str
    type: str
    observations: list[str]


@strawberry.type(description="a relation as stated")
class StatedRelation:
    source: str
    target: str
    relation_type: str

    @classmethod
    def of(cls, relation: RelationAssertion) -> StatedRelation:
        return cls(source=relation.source, target=relation.target, relation_type=relation.relationType)


@strawberry.type
class RelationsCreatedType:
    created: list[StatedRelation]
    skipped: list[StatedRelation] = strawberry.field(description="an end does not exist: not created")


@strawberry.type
class ObservationsAddedType:
    entity_name: str
    added_observations: list[str] = strawberry.field(description="those that were new")

    @classmethod
    def of(cls, added: ObservationsAdded) -> ObservationsAddedType:
        return cls(entity_name=added.entityName, added_observations=added.addedObservations)


def entities_body(entities: list[EntityInput]) -> list[dict[str, Any]]:
    return [{"name": e.name, "type": e.type, "observations": e.observations} for e in entities]


def relations_body(relations: list[RelationInput]) -> list[dict[str, Any]]:
    return [{"source": r.source, "target": r.target, "relationType": r.relation_type} for r in relations]


def observations_body(observations: list[ObservationInput]) -> list[dict[str, Any]]:
    return [{"entityName": o.entity_name, "observations": o.observations} for o in observations]
