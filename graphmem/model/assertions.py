"""What an agent states about the graph: entities, relations and observations, in the shapes of Neo4j's memory
MCP server (``mcp-neo4j-memory``: its field names, camelCase included, and its identifier pattern for types),
with graphmem's bounds. The ``neo4j-memory`` MCP tools, ``/v1/entities``, ``/v1/relations``,
``/v1/observations`` and the GraphQL mutations all build these; ``service/assertions.py`` stores them."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from graphmem.model.fields import Input, RequestId, _not_blank

MAX_ASSERTION_ITEMS = 100  # entities, relations, names or observation groups in one call
MAX_OBSERVATIONS = 100  # observations of one entity in one call
NAME_CHARS = 200
TYPE_CHARS = 60
OBSERVATION_CHARS = 4000
TYPE_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"  # the reference's own pattern for type and relationType

EntityName = Annotated[str, Field(strict=True, min_length=1, max_length=NAME_CHARS,
                                  description="the entity's name, matched to stored entities by name within the "
                                              "namespace (case, articles and punctuation folded)"),
                       AfterValidator(_not_blank)]
TypeName = Annotated[str, Field(strict=True, min_length=1, max_length=TYPE_CHARS, pattern=TYPE_PATTERN)]
Observation = Annotated[str, Field(strict=True, min_length=1, max_length=OBSERVATION_CHARS),
                        AfterValidator(_not_blank)]
Observations = Annotated[list[Observation], Field(max_length=MAX_OBSERVATIONS)]


class EntityAssertion(Input):
    name: EntityName
    type: TypeName = Field(description="its type (person, company, ...); wins over the type extraction votes")
    observations: Observations = Field(default_factory=list, description="standalone facts about the entity")


class RelationAssertion(Input):
    source: EntityName
    target: EntityName
    relationType: TypeName = Field(description="WORKS_AT, LIVES_IN, ...")


class ObservationAddition(Input):
    entityName: EntityName
    observations: Annotated[list[Observation], Field(min_length=1, max_length=MAX_OBSERVATIONS)]


class ObservationDeletion(Input):
    entityName: EntityName
    observations: Annotated[list[Observation], Field(min_length=1, max_length=MAX_OBSERVATIONS)]


class EntitiesCreate(Input):
    entities: Annotated[list[EntityAssertion], Field(min_length=1, max_length=MAX_ASSERTION_ITEMS)]
    request_id: RequestId = None


class RelationsChange(Input):
    relations: Annotated[list[RelationAssertion], Field(min_length=1, max_length=MAX_ASSERTION_ITEMS)]
    request_id: RequestId = None


class ObservationsAdd(Input):
    observations: Annotated[list[ObservationAddition], Field(min_length=1, max_length=MAX_ASSERTION_ITEMS)]
    request_id: RequestId = None


class ObservationsDelete(Input):
    deletions: Annotated[list[ObservationDeletion], Field(min_length=1, max_length=MAX_ASSERTION_ITEMS)]
    request_id: RequestId = None


class EntitiesDelete(Input):
    entityNames: Annotated[list[EntityName], Field(min_length=1, max_length=MAX_ASSERTION_ITEMS)]
    request_id: RequestId = None
