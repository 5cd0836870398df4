"""The ``neo4j-memory`` tool set: the nine tools of Neo4j's own memory MCP server (``mcp-neo4j-memory``), with its
names, argument shapes and answers (``{entities, relations}``; ``{"result": …}`` where it answers so), on
graphmem's graph (``service/assertions.py``). Additions the contract's clients ignore: an optional
``namespace`` on every tool, ``skipped`` in create_relations' answer, and ``cursor``/``limit`` with
``truncated``/``next_cursor`` on read_graph, which is bounded. Served alone at ``/mcp/neo4j-memory``."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from graphmem.identity import Charge
from graphmem.mcp.calls import Caller, Calls
from graphmem.mcp.memory_tools import Namespace, OwnNamespace
from graphmem.model import Cursor, QueryText, within
from graphmem.model.assertions import (
    MAX_ASSERTION_ITEMS,
    EntitiesCreate,
    EntitiesDelete,
    EntityAssertion,
    EntityName,
    ObservationAddition,
    ObservationDeletion,
    ObservationsAdd,
    ObservationsDelete,
    RelationAssertion,
    RelationsChange,
)
from graphmem.results.knowledge import (
    Deleted,
    EntitiesCreated,
    KnowledgeGraph,
    ObservationsAddedResult,
    RelationsCreated,
)

# the reference's hints: its writes are idempotent (MERGE), its deletes destructive
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
CREATE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DELETE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)
Items = Field(min_length=1, max_length=MAX_ASSERTION_ITEMS)
GraphLimit = Annotated[int, Field(strict=True, description="entities per page"), within(1, 100)]


def register(server: MCPServer, calls: Calls) -> None:
    @server.tool(title="Read Graph", annotations=READ, structured_output=True)
    def read_graph(namespace: Namespace = None, cursor: Cursor = None, limit: GraphLimit = 50) -> KnowledgeGraph:
        """Read the knowledge graph: entities (with their observations) and the relations between them, a page at
        a time (`limit` entities, name order); `truncated` says more follow: call again with `next_cursor`."""
        return calls.run(Charge.read, namespace, lambda caller: caller.runtime.service.read_graph(
            caller.context, caller.namespace, limit, cursor), across=True)

    @server.tool(title="Create Entities", annotations=CREATE, structured_output=True)
    def create_entities(entities: Annotated[list[EntityAssertion], Items],
                        namespace: OwnNamespace = None) -> EntitiesCreated:
        """Create entities with a name, a type and observations (standalone facts). An entity that exists (the
        same name: case, articles and punctuation aside) is merged: its new observations are added, none twice,
        and the type stated here becomes its type."""

        def work(caller: Caller) -> EntitiesCreated:
            return caller.runtime.service.create_entities(caller.context, caller.own,
                                                          EntitiesCreate(entities=entities))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Create Relations", annotations=CREATE, structured_output=True)
    def create_relations(relations: Annotated[list[RelationAssertion], Items],
                         namespace: OwnNamespace = None) -> RelationsCreated:
        """Create directed relations (source, target, relationType such as WORKS_AT) between entities that exist.
        A relation an end of which does not exist is not created: `skipped` lists it."""

        def work(caller: Caller) -> RelationsCreated:
            return caller.runtime.service.create_relations(caller.context, caller.own,
                                                           RelationsChange(relations=relations))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Add Observations", annotations=CREATE, structured_output=True)
    def add_observations(observations: Annotated[list[ObservationAddition], Items],
                         namespace: OwnNamespace = None) -> ObservationsAddedResult:
        """Add observations to entities that exist; each answer lists the observations that were new."""

        def work(caller: Caller) -> ObservationsAddedResult:
            return caller.runtime.service.add_observations(caller.context, caller.own,
                                                           ObservationsAdd(observations=observations))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Delete Entities", annotations=DELETE, structured_output=True)
    def delete_entities(entityNames: Annotated[list[EntityName], Items],
                        namespace: OwnNamespace = None) -> Deleted:
        """Delete what agents stated about these entities: their observations and the relations they are an end
        of. Memories stored as text are never changed; an entity nothing mentions any more is gone."""

        def work(caller: Caller) -> Deleted:
            return caller.runtime.service.delete_entities(caller.context, caller.own,
                                                          EntitiesDelete(entityNames=entityNames))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Delete Observations", annotations=DELETE, structured_output=True)
    def delete_observations(deletions: Annotated[list[ObservationDeletion], Items],
                            namespace: OwnNamespace = None) -> Deleted:
        """Delete observations of entities, matched by their exact text."""

        def work(caller: Caller) -> Deleted:
            return caller.runtime.service.delete_observations(caller.context, caller.own,
                                                              ObservationsDelete(deletions=deletions))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Delete Relations", annotations=DELETE, structured_output=True)
    def delete_relations(relations: Annotated[list[RelationAssertion], Items],
                         namespace: OwnNamespace = None) -> Deleted:
        """Delete relations; source, target and relationType must match exactly."""

        def work(caller: Caller) -> Deleted:
            return caller.runtime.service.delete_relations(caller.context, caller.own,
                                                           RelationsChange(relations=relations))

        return calls.run(Charge.write, namespace, work)

    @server.tool(title="Search Memories", annotations=READ, structured_output=True)
    def search_memories(query: QueryText, namespace: Namespace = None) -> KnowledgeGraph:
        """Find entities by name, type or what is known about them (words and meaning), with their observations
        and relations."""
        return calls.run(Charge.read, namespace, lambda caller: caller.runtime.service.search_knowledge(
            caller.context, caller.namespace, query), across=True)

    @server.tool(title="Find Memories by Name", annotations=READ, structured_output=True)
    def find_memories_by_name(names: Annotated[list[EntityName], Items], namespace: Namespace = None) -> KnowledgeGraph:
        """The entities with these names, with their observations and relations."""
        return calls.run(Charge.read, namespace, lambda caller: caller.runtime.service.find_entities_by_name(
            caller.context, caller.namespace, names), across=True)
