"""What the agent-graph calls answer (``service/assertions.py``), in the shapes of Neo4j's memory MCP server:
``{entities, relations}`` for reads, and the created items, each with the names and casing of that contract."""

from __future__ import annotations

from pydantic import BaseModel, Field

from graphmem.model.assertions import EntityAssertion, RelationAssertion
from graphmem.results.documents import NamespacesRead


class KnownEntity(BaseModel):
    name: str
    type: str
    observations: list[str] = Field(description="what agents stated about it, then the facts that mention it")


class KnownRelation(BaseModel):
    source: str
    target: str
    relationType: str = Field(description="an agent's relation type as stated; an extracted predicate in the "
                                          "same form (\"works at\" → WORKS_AT, negated: NOT_WORKS_AT)")
    asserted: bool = Field(description="an agent stated it (else extraction read it from a memory)")


class KnowledgeGraph(BaseModel):
    entities: list[KnownEntity]
    relations: list[KnownRelation]
    truncated: bool = Field(False, description="more entities follow: call again with next_cursor")
    next_cursor: str | None = None
    namespaces: NamespacesRead = []


class EntitiesCreated(BaseModel):
    result: list[EntityAssertion]


class RelationsCreated(BaseModel):
    result: list[RelationAssertion]
    skipped: list[RelationAssertion] = Field(description="relations an end of which does not exist: not created")


class ObservationsAdded(BaseModel):
    entityName: str
    addedObservations: list[str]


class ObservationsAddedResult(BaseModel):
    result: list[ObservationsAdded]


class Deleted(BaseModel):
    result: str
