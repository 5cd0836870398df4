"""The schema: queries and mutations that translate their arguments into the service's typed inputs (built
with ``parse``: the model holds every bound and names the field at fault) and shape its typed results
(``types.py``). Every operation takes an optional ``namespace`` with the HTTP API's rules (default: the
credential's own).

The schema's text is committed as ``schema.graphql`` at the repository root (``graphmem graphql-schema``
prints it; a test fails when the two differ)."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated, Any

import strawberry
from strawberry.extensions import MaxAliasesLimiter, MaxTokensLimiter, QueryDepthLimiter
from strawberry.scalars import JSON
from strawberry.types import ExecutionContext

from graphmem.config import Settings
from graphmem.graphql.answers import (
    EvidenceGraph,
    ForgetResultType,
    HandoffPage,
    HandoffType,
    HistoryPage,
    JobType,
    Me,
    PathResultType,
    RecallResultType,
    SearchConnection,
    SearchHit,
    SearchTarget,
)
from graphmem.graphql.assertions import (
    EntityInput,
    ObservationInput,
    ObservationsAddedType,
    RelationInput,
    RelationsCreatedType,
    StatedEntity,
    StatedRelation,
    entities_body,
    observations_body,
    relations_body,
)
from graphmem.graphql.connections import Connections, Namespace, OwnNamespace, PageInfo
from graphmem.graphql.context import Charged, Info, NamespacesRead
from graphmem.graphql.errors import ArgumentNames, ErrorCodes
from graphmem.graphql.inputs import (
    CAPS,
    FILTERS,
    PAGE,
    SEED,
    VIEW,
    GraphCaps,
    GraphSeed,
    PathMatch,
    SearchFilters,
    present,
    view_values,
)
from graphmem.graphql.subscriptions import OverWebSocketOnly, Subscription
from graphmem.graphql.types import Entity, Fact, Memory, Triple
from graphmem.model import (
    DocumentInput,
    EntityLookup,
    EntitySearchRequest,
    ExportRequest,
    ForgetMode,
    ForgetRequest,
    HandoffInput,
    HandoffListOptions,
    HistoryOptions,
    PathRequest,
    RecallRequest,
    SearchRequest,
    TripleQuery,
    UpdateInput,
    parse,
)
from graphmem.model.assertions import (
    EntitiesCreate,
    EntitiesDelete,
    ObservationsAdd,
    ObservationsDelete,
    RelationsChange,
)


@strawberry.type
class TripleEdge:
    cursor: str = strawberry.field(description="on the last edge, the page's endCursor; elsewhere the position "
                                               "(a triple page continues from its end only)")
    node: Triple


@strawberry.type
class TripleConnection:
    edges: list[TripleEdge]
    page_info: PageInfo


@strawberry.type
class Query(Connections):
    @strawberry.field(description="the calling credential: its name, scopes and namespaces")
    def me(self, info: Info) -> Me:
        credential = info.context.credential
        return Me(name=credential.name, scopes=[s.value for s in credential.scopes],
                  namespaces=credential.namespaces, all_namespaces=credential.all_namespaces,
                  admin=credential.admin)

    @strawberry.field(description="a memory version by id (NOT_FOUND outside the caller's namespaces)")
    async def memory(self, info: Info, id: strawberry.ID, namespace: Namespace = None) -> Memory:
        ctx, _ = info.context.reading(namespace)
        return Memory.from_result(await info.context.call(info.context.service.get_version, ctx, str(id)))

    @strawberry.field(description="a fact by id")
    async def fact(self, info: Info, id: strawberry.ID, namespace: Namespace = None) -> Fact:
        ctx, _ = info.context.reading(namespace)
        return Fact.from_record(await info.context.call(info.context.service.get_fact, ctx, str(id)))

    @strawberry.field(description="an entity by id or by name (its normalised name, else the best match)")
    async def entity(self, info: Info, id: strawberry.ID | None = None, name: str | None = None,
                     namespace: OwnNamespace = None) -> Entity:
        ctx, ns = info.context.scope(namespace)
        lookup = parse(EntityLookup, present({"id": id, "name": name, "facts": 0, "neighbours": 0}))
        found = await info.context.call(info.context.service.get_entity, ctx, ns, lookup)
        return Entity(id=strawberry.ID(found.id), name=found.name, type=found.type, namespace=ns)

    @strawberry.field(description="hybrid search of memories (ranked by their own and their facts' signals), "
                                  "facts or entities; first 1-100",
                      extensions=[ArgumentNames({"limit": "first", **VIEW, **FILTERS})])
    async def search(self, info: Info, query: str, target: SearchTarget = SearchTarget.MEMORIES,
                     filters: SearchFilters | None = None, as_of: datetime | None = None,
                     include_superseded: bool = False, include_forgotten: bool = False, explain: bool = False,
                     first: int = 10,
                     namespace: Namespace = None) -> SearchConnection:
        ctx, names = info.context.reading(namespace)
        service = info.context.service
        view = view_values(as_of, include_superseded, include_forgotten)
        if target is SearchTarget.ENTITIES:
            entity_request = parse(EntitySearchRequest, present({
                "query": query, "limit": first, "explain": explain, "namespaces": names, "view": view,
                **(filters.values() if filters else {})}))  # entities take path only: the model refuses the rest
            entities = await info.context.call(service.search_entities, ctx, entity_request)
            return SearchConnection(edges=[SearchHit(  # its facts and neighbours read in the search's view
                cursor=str(rank), score=hit.score, similarity=hit.similarity, signals=None, evidence=[],
                node=Entity(id=strawberry.ID(hit.id), name=hit.name, type=hit.type, namespace=hit.namespace,
                            view=entity_request.view))
                for rank, hit in enumerate(entities.items, start=1)])
        request = parse(SearchRequest, present({"query": query, "limit": first, "explain": explain,
                                                 "namespaces": names, "view": view,
                                                 **(filters.values() if filters else {})}))
        if target is SearchTarget.FACTS:
            return SearchConnection.of_facts(await info.context.call(service.search, ctx, request))
        hits = await info.context.call(service.search_memories, ctx, request)
        documents = await info.context.loaders.memories.load_many([(h.namespace, h.document_id) for h in hits])
        return SearchConnection.of_memories(hits, {d.id: d for d in documents if d is not None})

    @strawberry.field(description="subject-predicate-object statements, newest first; a page at a time",
                      extensions=[ArgumentNames({**PAGE, **VIEW})])
    async def triples(self, info: Info, subject: str | None = None, predicate: str | None = None,
                      object: str | None = None, term: str | None = None, negated: bool | None = None,
                      path: PathMatch | None = None, as_of: datetime | None = None, include_superseded: bool = False,
                      include_forgotten: bool = False, first: int = 10, after: str | None = None,
                      namespace: Namespace = None) -> TripleConnection:
        ctx, names = info.context.reading(namespace)
        query = parse(TripleQuery, present({"subject": subject, "predicate": predicate, "object": object,
                                             "term": term, "negated": negated, "limit": first, "cursor": after,
                                             "path": path.value() if path else None, "namespaces": names,
                                             "view": view_values(as_of, include_superseded, include_forgotten)}))
        page = await info.context.call(info.context.service.search_triples, ctx, query)
        edges = [TripleEdge(cursor=page.next_cursor if rank == len(page.items) and page.next_cursor else str(rank),
                            node=Triple.from_hit(hit)) for rank, hit in enumerate(page.items, start=1)]
        return TripleConnection(edges=edges, page_info=PageInfo(end_cursor=page.next_cursor,
                                                                has_next_page=page.next_cursor is not None))

    @strawberry.field(description="a cited context for a prompt: maxItems 1-50, maxTokens 32-16000",
                      extensions=[ArgumentNames({**VIEW, **FILTERS})])
    async def recall(self, info: Info, query: str, max_items: int = 8, max_tokens: int = 1500,
                     filters: SearchFilters | None = None, as_of: datetime | None = None,
                     include_superseded: bool = False, include_forgotten: bool = False,
                     namespace: Namespace = None) -> RecallResultType:
        ctx, names = info.context.reading(namespace)
        request = parse(RecallRequest, {"query": query, "max_items": max_items, "max_tokens": max_tokens,
                                        "namespaces": names, **(filters.values() if filters else {}),
                                        "view": view_values(as_of, include_superseded, include_forgotten)})
        return RecallResultType.from_result(await info.context.call(info.context.service.recall, ctx, request))

    @strawberry.field(description="one page of the bounded evidence graph around a seed, with how complete it is",
                      extensions=[ArgumentNames({"cursor": "after", **SEED, **CAPS, **VIEW})])
    async def graph(self, info: Info, seed: GraphSeed, caps: GraphCaps | None = None, after: str | None = None,
                    as_of: datetime | None = None, include_superseded: bool = False, include_forgotten: bool = False,
                    count_reachable: Annotated[bool, strawberry.argument(
                        description="false: skip counting the reachable documents (reachableDocuments and "
                                    "coverage are then null)")] = True,
                    namespace: Namespace = None) -> EvidenceGraph:
        ctx, _ = info.context.reading(namespace)
        request = parse(ExportRequest, present({"seed": seed.value(), "caps": caps.values() if caps else None,
                                                 "cursor": after,
                                                 "view": view_values(as_of, include_superseded, include_forgotten),
                                                 "count_reachable": count_reachable}))
        return EvidenceGraph.from_result(await info.context.call(info.context.service.export, ctx, namespace,
                                                                 request))

    @strawberry.field(name="findPath", description="the shortest paths between two entities, by name",
                      extensions=[ArgumentNames({"source": "from", "target": "to"})])
    async def find_path(self, info: Info, from_: Annotated[str, strawberry.argument(name="from")], to: str,
                        max_hops: int = 3, max_paths: int = 3, namespace: OwnNamespace = None) -> PathResultType:
        ctx, ns = info.context.scope(namespace)
        request = parse(PathRequest, {"source": from_, "target": to, "max_hops": max_hops, "max_paths": max_paths})
        return PathResultType.from_result(await info.context.call(info.context.service.find_path, ctx, ns, request))

    @strawberry.field(description="the versions of a memory, newest first; a page at a time",
                      extensions=[ArgumentNames(PAGE)])
    async def history(self, info: Info, id: strawberry.ID, first: int = 100, after: str | None = None,
                      namespace: Namespace = None) -> HistoryPage:
        ctx, _ = info.context.reading(namespace)
        options = parse(HistoryOptions, present({"limit": first, "cursor": after}),
                        info.context.runtime.settings.limits)
        page = await info.context.call(info.context.service.history, ctx, str(id), options)
        return HistoryPage(items=[Memory.from_result(v) for v in page.items], next_cursor=page.next_cursor)

    @strawberry.field(description="a project's handoff: its latest revision, or the version asked for")
    async def handoff(self, info: Info, project: str, version: int | None = None,
                      namespace: OwnNamespace = None) -> HandoffType:
        ctx, ns = info.context.scope(namespace)
        found = await info.context.call(info.context.service.get_handoff, ctx, ns, project, version)
        return HandoffType.from_result(found)

    @strawberry.field(description="the latest handoff of each project; a page at a time",
                      extensions=[ArgumentNames(PAGE)])
    async def handoffs(self, info: Info, first: int = 100, after: str | None = None,
                       namespace: OwnNamespace = None) -> HandoffPage:
        ctx, ns = info.context.scope(namespace)
        options = parse(HandoffListOptions, present({"limit": first, "cursor": after}))
        page = await info.context.call(info.context.service.list_handoffs, ctx, ns, options)
        return HandoffPage(items=[HandoffType.from_result(h) for h in page.items], next_cursor=page.next_cursor)

    @strawberry.field(description="a background ingestion job")
    async def job(self, info: Info, id: strawberry.ID, namespace: Namespace = None) -> JobType:
        ctx, _ = info.context.reading(namespace)
        return JobType.from_result(await info.context.call(info.context.service.job_status, ctx, str(id)))


@strawberry.enum(name="ForgetMode",
                 description="soft: hidden, restorable; redact: text removed, lineage kept; hard: deleted")
class ForgetModeType(Enum):
    SOFT = ForgetMode.soft
    REDACT = ForgetMode.redact
    HARD = ForgetMode.hard


Remembered = Annotated[Memory | JobType, strawberry.union(
    "Remembered", description="the memory (stored now), or with async: true the job that will store it")]


@strawberry.type
class Mutation:
    @strawberry.mutation(description="store a memory; requestId makes a retry return the first result; "
                                     "async: true queues it and answers the job")
    async def remember(self, info: Info, content: str, title: str | None = None, path: str | None = None,
                       metadata: JSON | None = None, request_id: str | None = None,
                       async_: Annotated[bool, strawberry.argument(name="async")] = False,
                       namespace: OwnNamespace = None) -> Remembered:
        ctx, ns = info.context.scope(namespace)
        item = parse(DocumentInput, present({"content": content, "title": title, "path": path, "metadata": metadata,
                                              "request_id": request_id}), info.context.runtime.settings.limits)
        service = info.context.service
        if async_:
            return JobType.from_result(await info.context.call(service.submit_memories, ctx, ns, [item]))
        return Memory.from_result((await info.context.call(service.add_memory, ctx, ns, item)).document)

    @strawberry.mutation(description="a new version of a memory; expectedVersion is a compare-and-swap")
    async def update_memory(self, info: Info, id: strawberry.ID, content: str, title: str | None = None,
                            metadata: JSON | None = None, path: str | None = None,
                            expected_version: int | None = None, request_id: str | None = None,
                            namespace: Namespace = None) -> Memory:
        ctx, _ = info.context.reading(namespace)
        update = parse(UpdateInput, present({"content": content, "title": title, "metadata": metadata, "path": path,
                                              "expected_version": expected_version, "request_id": request_id}),
                       info.context.runtime.settings.limits)
        changed = await info.context.call(info.context.service.update_memory, ctx, str(id), update)
        return Memory.from_result(changed.document)

    @strawberry.mutation(description="forget a memory's chain (every version)")
    async def forget_memory(self, info: Info, id: strawberry.ID, mode: ForgetModeType = ForgetModeType.SOFT,
                            request_id: str | None = None, namespace: Namespace = None) -> ForgetResultType:
        ctx, _ = info.context.reading(namespace)
        request = parse(ForgetRequest, present({"mode": ForgetMode(mode.value), "request_id": request_id}))
        result = await info.context.call(info.context.service.forget, ctx, str(id), request)
        return ForgetResultType(id=strawberry.ID(result.id), chain_id=result.chain_id, mode=result.mode.value,
                                memories=result.documents, facts=result.facts)

    @strawberry.mutation(description="restore a softly forgotten memory")
    async def restore_memory(self, info: Info, id: strawberry.ID, namespace: Namespace = None) -> Memory:
        ctx, _ = info.context.reading(namespace)
        return Memory.from_result(await info.context.call(info.context.service.restore, ctx, str(id)))

    @strawberry.mutation(description="a new revision of a project's handoff (expectedVersion: the one you read)")
    async def save_handoff(self, info: Info, project: str, goal: str, expected_version: int, request_id: str,
                           summary: str = "", decisions: list[str] | None = None,
                           next_steps: list[str] | None = None, references: list[str] | None = None,
                           namespace: OwnNamespace = None) -> HandoffType:
        ctx, ns = info.context.scope(namespace)
        handoff = parse(HandoffInput, present({
            "project": project, "goal": goal, "summary": summary, "expected_version": expected_version,
            "request_id": request_id, "decisions": decisions, "next_steps": next_steps, "references": references}))
        return HandoffType.from_result(await info.context.call(info.context.service.save_handoff, ctx, ns, handoff))


    # ---- what agents state (Neo4j's memory-MCP calls) ----------------------------------------------------

    @strawberry.mutation(description="entities with a type and observations; one that exists (by name) is merged, "
                                     "nothing twice; the type stated wins over the type extraction votes")
    async def create_entities(self, info: Info, entities: list[EntityInput], request_id: str | None = None,
                              namespace: OwnNamespace = None) -> list[StatedEntity]:
        ctx, ns = info.context.scope(namespace)
        body = parse(EntitiesCreate, present({"entities": entities_body(entities), "request_id": request_id}))
        made = await info.context.call(info.context.service.create_entities, ctx, ns, body)
        return [StatedEntity(name=e.name, type=e.type, observations=e.observations) for e in made.result]

    @strawberry.mutation(description="directed relations between entities that exist; the others are skipped")
    async def create_relations(self, info: Info, relations: list[RelationInput], request_id: str | None = None,
                               namespace: OwnNamespace = None) -> RelationsCreatedType:
        ctx, ns = info.context.scope(namespace)
        body = parse(RelationsChange, present({"relations": relations_body(relations), "request_id": request_id}))
        made = await info.context.call(info.context.service.create_relations, ctx, ns, body)
        return RelationsCreatedType(created=[StatedRelation.of(r) for r in made.result],
                                    skipped=[StatedRelation.of(r) for r in made.skipped])

    @strawberry.mutation(description="observations of entities that exist; each answer lists the new ones")
    async def add_observations(self, info: Info, observations: list[ObservationInput], request_id: str | None = None,
                               namespace: OwnNamespace = None) -> list[ObservationsAddedType]:
        ctx, ns = info.context.scope(namespace)
        body = parse(ObservationsAdd, present({"observations": observations_body(observations),
                                                "request_id": request_id}))
        added = await info.context.call(info.context.service.add_observations, ctx, ns, body)
        return [ObservationsAddedType.of(item) for item in added.result]

    @strawberry.mutation(description="forget what agents stated about these entities (memories are not changed)")
    async def delete_entities(self, info: Info, entity_names: list[str], request_id: str | None = None,
                              namespace: OwnNamespace = None) -> str:
        ctx, ns = info.context.scope(namespace)
        body = parse(EntitiesDelete, present({"entityNames": entity_names, "request_id": request_id}))
        return (await info.context.call(info.context.service.delete_entities, ctx, ns, body)).result

    @strawberry.mutation(description="forget observations of entities, by their exact text")
    async def delete_observations(self, info: Info, deletions: list[ObservationInput], request_id: str | None = None,
                                  namespace: OwnNamespace = None) -> str:
        ctx, ns = info.context.scope(namespace)
        body = parse(ObservationsDelete, present({"deletions": observations_body(deletions),
                                                   "request_id": request_id}))
        return (await info.context.call(info.context.service.delete_observations, ctx, ns, body)).result

    @strawberry.mutation(description="forget relations agents stated (source, target and type match exactly)")
    async def delete_relations(self, info: Info, relations: list[RelationInput], request_id: str | None = None,
                               namespace: OwnNamespace = None) -> str:
        ctx, ns = info.context.scope(namespace)
        body = parse(RelationsChange, present({"relations": relations_body(relations), "request_id": request_id}))
        return (await info.context.call(info.context.service.delete_relations, ctx, ns, body)).result


class GraphmemSchema(strawberry.Schema):
    def process_errors(self, errors: list[Any], execution_context: ExecutionContext | None = None) -> None:
        """Errors are logged where they are coded (``errors.py``: unexpected ones only), not here."""


def build_schema(settings: Settings) -> strawberry.Schema:
    return GraphmemSchema(query=Query, mutation=Mutation, subscription=Subscription, extensions=[
        lambda: QueryDepthLimiter(max_depth=settings.graphql_max_depth),
        lambda: MaxAliasesLimiter(max_alias_count=settings.graphql_max_aliases),
        lambda: MaxTokensLimiter(max_token_count=settings.graphql_max_tokens),
        OverWebSocketOnly, Charged, ErrorCodes, NamespacesRead])


schema = build_schema(Settings(_env_file=None))  # the default limits; for the schema's export and tests
