"""The GraphQL types, each built from a service result. Times are ``DateTime`` (ISO 8601, UTC): epoch
milliseconds overflow GraphQL's 32-bit ``Int``. Relationship fields resolve through the request's loaders
(``loaders.py``), each bounded by ``first`` (0-1,000, checked by the service); each object keeps the namespace
it was read from, so its relationships are read with that namespace's rules."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, cast

import strawberry
from strawberry.scalars import JSON

from graphmem.graphql.context import Info
from graphmem.model import CURRENT, View
from graphmem.results import (
    Document,
    DocumentHit,
    DocumentInfo,
    EntityRef,
    ExportResult,
    FactHit,
    FactInfo,
    FactRecord,
    Handoff,
    JobInfo,
    Neighbour,
    PathResult,
    RecallResult,
    SignalScore,
    TripleHit,
)

FIRST = 20  # items a relationship field returns unless a query asks for more (up to 1,000)


def when(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def _id(value: str | None) -> strawberry.ID | None:
    return None if value is None else strawberry.ID(value)


@strawberry.type(description="A memory version: its text, lineage and times. Older versions stay readable.")
class Memory:
    id: strawberry.ID
    namespace: str
    chain_id: str = strawberry.field(description="the id every version of this memory shares")
    version: int | None
    is_latest: bool
    is_forgotten: bool
    is_redacted: bool
    title: str | None
    source: str | None
    path: str | None = strawberry.field(description="the memory's folder, e.g. projects/atlas/decisions")
    metadata: JSON | None
    created_at: datetime | None = strawberry.field(description="the first version's time")
    recorded_at: datetime
    superseded_at: datetime | None
    forgotten_at: datetime | None
    parent_memory_id: strawberry.ID | None = strawberry.field(description="the previous version's id")
    read: strawberry.Private[Document | None]  # the full read, when this object came from one

    @classmethod
    def from_result(cls, doc: DocumentInfo) -> Memory:
        return cls(id=strawberry.ID(doc.id), namespace=doc.namespace, chain_id=doc.chain_id, version=doc.version,
                   is_latest=doc.is_latest, is_forgotten=doc.is_forgotten, is_redacted=doc.is_redacted,
                   title=doc.title, source=doc.source, path=doc.path, metadata=cast(JSON, doc.metadata),
                   created_at=when(doc.created_at), recorded_at=at(doc.recorded_at),
                   superseded_at=when(doc.superseded_at), forgotten_at=when(doc.forgotten_at),
                   parent_memory_id=_id(doc.parent_memory_id), read=doc if isinstance(doc, Document) else None)

    async def _full(self, info: Info) -> Document | None:
        if self.read is None:
            self.read = await info.context.loaders.memories.load((self.namespace, str(self.id)))
        return self.read

    @strawberry.field(description="null once redacted")
    async def content(self, info: Info) -> str | None:
        full = await self._full(info)
        return None if full is None else full.content

    @strawberry.field(description="the id of the chain's latest version")
    async def latest_id(self, info: Info) -> strawberry.ID | None:
        full = await self._full(info)
        return None if full is None else _id(full.latest_id)

    @strawberry.field(description="its facts in order (first: 0-1000)")
    async def facts(self, info: Info, first: int = FIRST) -> list[Fact]:
        facts = await info.context.loaders.memory_facts.load((self.namespace, str(self.id), first))
        return [Fact.from_info(f, self.namespace, str(self.id)) for f in facts]

    @strawberry.field(description="the version this one replaced, if any")
    async def previous_version(self, info: Info) -> Memory | None:
        if self.parent_memory_id is None:
            return None
        found = await info.context.loaders.memories.load((self.namespace, str(self.parent_memory_id)))
        return None if found is None else Memory.from_result(found)

    @strawberry.field(description="every version of this memory, newest first (first: 0-1000)")
    async def history(self, info: Info, first: int = FIRST) -> list[Memory]:
        versions = await info.context.loaders.histories.load((self.namespace, str(self.id), first))
        return [Memory.from_result(v) for v in versions]


@strawberry.type(description="A sentence (or item, field, row) of a memory, with its exact span.")
class Fact:
    id: strawberry.ID
    text: str | None = strawberry.field(description="null once redacted")
    start: int
    end: int
    version: int | None = strawberry.field(description="its memory version's")
    is_latest: bool
    is_forgotten: bool
    is_inference: bool
    attributes: list[str] = strawberry.field(description='dates and numbers: "DATE: last May"')
    recorded_at: datetime
    memory_id: strawberry.ID
    namespace: strawberry.Private[str]
    mentions: strawberry.Private[list[EntityRef] | None]  # known already (search hits), else loaded

    @classmethod
    def from_info(cls, fact: FactInfo, namespace: str, memory_id: str) -> Fact:
        return cls(id=strawberry.ID(fact.id), text=fact.text, start=fact.start, end=fact.end, version=fact.version,
                   is_latest=fact.is_latest, is_forgotten=fact.is_forgotten, is_inference=fact.is_inference,
                   attributes=fact.attributes, recorded_at=at(fact.recorded_at), memory_id=strawberry.ID(memory_id),
                   namespace=namespace, mentions=None)

    @classmethod
    def from_record(cls, fact: FactRecord) -> Fact:
        return cls.from_info(fact, fact.namespace, fact.memory_id)

    @classmethod
    def from_hit(cls, hit: FactHit, namespace: str) -> Fact:
        return cls(id=strawberry.ID(hit.fact_id), text=hit.text, start=hit.citation.start, end=hit.citation.end,
                   version=hit.version, is_latest=hit.is_latest, is_forgotten=hit.is_forgotten,
                   is_inference=hit.is_inference, attributes=hit.attributes, recorded_at=at(hit.recorded_at),
                   memory_id=strawberry.ID(hit.citation.document_id), namespace=namespace, mentions=hit.entities)

    @strawberry.field(description="the memory version it belongs to")
    async def memory(self, info: Info) -> Memory | None:
        found = await info.context.loaders.memories.load((self.namespace, str(self.memory_id)))
        return None if found is None else Memory.from_result(found)

    @strawberry.field(description="the entities it mentions, by name")
    async def entities(self, info: Info) -> list[Entity]:
        refs = self.mentions
        if refs is None:
            refs = await info.context.loaders.fact_entities.load((self.namespace, str(self.id)))
        return [Entity.from_ref(e, self.namespace) for e in refs]

    @strawberry.field(description="the triples read from it (first: 0-1000)")
    async def triples(self, info: Info, first: int = FIRST) -> list[Triple]:
        hits = await info.context.loaders.fact_triples.load((self.namespace, str(self.id), first))
        return [Triple.from_hit(t, self.namespace) for t in hits]


@strawberry.type(description="A person, organisation, place, product, ... named in facts.")
class Entity:
    id: strawberry.ID
    name: str | None
    type: str | None
    namespace: strawberry.Private[str]
    view: strawberry.Private[View] = CURRENT  # the view it was listed in: its facts and triples are read in it

    @classmethod
    def from_ref(cls, ref: EntityRef, namespace: str, view: View = CURRENT) -> Entity:
        return cls(id=strawberry.ID(ref.id), name=ref.name, type=ref.type, namespace=namespace, view=view)

    @strawberry.field(description="the facts that mention it, newest first (first: 0-1000)")
    async def facts(self, info: Info, first: int = FIRST) -> list[Fact]:
        mentions = await info.context.loaders.entity_facts.load((self.namespace, str(self.id), first, self.view))
        records = await info.context.loaders.facts.load_many([(self.namespace, m.fact_id) for m in mentions])
        return [Fact.from_record(r) for r in records if r is not None]

    @strawberry.field(description="the triples it is the subject or object of (first: 0-1000)")
    async def triples(self, info: Info, first: int = FIRST) -> list[Triple]:
        return [Triple.from_neighbour(self, n) for n in await self._neighbours(info, first)]

    @strawberry.field(description="the entities one triple away, each with the triple (first: 0-1000)")
    async def neighbours(self, info: Info, first: int = FIRST) -> list[NeighbourEdge]:
        return [NeighbourEdge(entity=Entity(id=strawberry.ID(n.id), name=n.name, type=n.type,
                                            namespace=self.namespace, view=self.view),
                              predicate=n.predicate, negated=n.negated, outgoing=n.outgoing,
                              fact_id=strawberry.ID(n.fact_id), namespace=self.namespace)
                for n in await self._neighbours(info, first)]

    async def _neighbours(self, info: Info, first: int) -> list[Neighbour]:
        return await info.context.loaders.entity_neighbours.load((self.namespace, str(self.id), first, self.view))


@strawberry.type(description="An entity one triple away, and the triple.")
class NeighbourEdge:
    entity: Entity
    predicate: str
    negated: bool
    outgoing: bool = strawberry.field(description="true when the entity asked about is the subject")
    fact_id: strawberry.ID
    namespace: strawberry.Private[str]

    @strawberry.field(description="the fact the triple was read from")
    async def fact(self, info: Info) -> Fact | None:
        record = await info.context.loaders.facts.load((self.namespace, str(self.fact_id)))
        return None if record is None else Fact.from_record(record)


@strawberry.type(description="A subject-predicate-object statement read from a fact.")
class Triple:
    subject: Entity
    predicate: str = strawberry.field(description="a verb lemma with its particles")
    object: Entity
    negated: bool
    statement: str = strawberry.field(description='"subject predicate object", with "not" when negated')
    fact_id: strawberry.ID
    namespace: strawberry.Private[str]

    @classmethod
    def from_hit(cls, hit: TripleHit, namespace: str) -> Triple:
        return cls(subject=Entity.from_ref(hit.subject, namespace), predicate=hit.predicate,
                   object=Entity.from_ref(hit.object, namespace), negated=hit.negated, statement=hit.statement,
                   fact_id=strawberry.ID(hit.fact_id), namespace=namespace)

    @classmethod
    def from_neighbour(cls, entity: Entity, n: Neighbour) -> Triple:
        other = Entity(id=strawberry.ID(n.id), name=n.name, type=n.type, namespace=entity.namespace,
                       view=entity.view)
        subject, obj = (entity, other) if n.outgoing else (other, entity)
        statement = f"{subject.name} {'not ' if n.negated else ''}{n.predicate} {obj.name}"
        return cls(subject=subject, predicate=n.predicate, object=obj, negated=n.negated, statement=statement,
                   fact_id=strawberry.ID(n.fact_id), namespace=entity.namespace)

    @strawberry.field(description="the fact it was read from")
    async def fact(self, info: Info) -> Fact | None:
        record = await info.context.loaders.facts.load((self.namespace, str(self.fact_id)))
        return None if record is None else Fact.from_record(record)


@strawberry.enum(description="what a search returns")
class SearchTarget(Enum):
    FACTS = "facts"
    MEMORIES = "memories"
    ENTITIES = "entities"


@strawberry.type(description="A signal that found a hit (with explain): its score and rank within the signal.")
class Signal:
    signal: str
    score: float
    rank: int

    @classmethod
    def of(cls, scores: list[SignalScore] | None) -> list[Signal] | None:
        return None if scores is None else [cls(signal=s.signal.value, score=s.score, rank=s.rank) for s in scores]


SearchNode = Annotated[Memory | Fact | Entity, strawberry.union("SearchNode")]


@strawberry.type(description="A hit: its score, its signals (with explain) and the memory, fact or entity")
class SearchHit:
    cursor: str = strawberry.field(description="the hit's 1-based position (a search is one page)")
    score: float
    similarity: float = strawberry.field(description="cosine similarity to the query, 0..1")
    signals: list[Signal] | None = strawberry.field(description="with explain: the signals that ranked it")
    evidence: list[Fact] = strawberry.field(description="for a memory: its facts that answer best")
    node: SearchNode


@strawberry.type
class SearchConnection:
    edges: list[SearchHit]

    @classmethod
    def of_memories(cls, hits: list[DocumentHit], documents: dict[str, Document], namespace: str) -> SearchConnection:
        return cls(edges=[SearchHit(cursor=str(rank), score=hit.score, similarity=hit.similarity,
                                     signals=Signal.of(hit.signals),
                                     evidence=[Fact.from_hit(f, namespace) for f in hit.facts],
                                     node=Memory.from_result(documents[hit.document_id]))
                          for rank, hit in enumerate(hits, start=1) if hit.document_id in documents])

    @classmethod
    def of_facts(cls, hits: list[FactHit], namespace: str) -> SearchConnection:
        return cls(edges=[SearchHit(cursor=str(rank), score=hit.score, similarity=hit.similarity,
                                     signals=Signal.of(hit.explain.signals if hit.explain else None),
                                     evidence=[], node=Fact.from_hit(hit, namespace))
                          for rank, hit in enumerate(hits, start=1)])


@strawberry.type(name="RecallResult", description="A cited context for a prompt, within both budgets.")
class RecallResultType:
    answer_status: str = strawberry.field(description="found, or no_confirmed_answer")
    context_text: str
    tokens_used: int
    max_tokens: int
    max_items: int
    items: list[Fact]

    @classmethod
    def from_result(cls, result: RecallResult, namespace: str) -> RecallResultType:
        return cls(answer_status=result.answer_status.value, context_text=result.context_text,
                   tokens_used=result.tokens_used, max_tokens=result.max_tokens, max_items=result.max_items,
                   items=[Fact.from_hit(f, namespace) for f in result.items])


@strawberry.type(description="A node of the evidence graph: a memory, a fact or an entity.")
class GraphNode:
    id: strawberry.ID
    kind: str = strawberry.field(description="document, fact or entity")
    depth: int = strawberry.field(description="hops from the nearest seed")
    title: str | None
    text: str | None
    name: str | None
    type: str | None
    version: int | None
    memory_id: strawberry.ID | None
    is_latest: bool | None
    recorded_at: datetime | None


@strawberry.type(description="An edge of the evidence graph: contains, mentions, a triple, a version link.")
class GraphEdge:
    source: strawberry.ID
    target: strawberry.ID
    kind: str
    predicate: str | None
    negated: bool | None
    fact_id: strawberry.ID | None


@strawberry.type(description="One page of the bounded evidence graph, and how complete it is.")
class EvidenceGraph:
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    total_documents: int = strawberry.field(description="documents on this page")
    truncated: bool
    unavailable_documents: int
    coverage: float
    coverage_is_upper_bound: bool
    next_cursor: str | None = strawberry.field(description="null on the last page")

    @classmethod
    def from_result(cls, result: ExportResult) -> EvidenceGraph:
        return cls(
            nodes=[GraphNode(id=strawberry.ID(n.id), kind=str(n.kind), depth=n.depth, title=n.title, text=n.text,
                             name=n.name, type=n.type, version=n.version, memory_id=_id(n.document_id),
                             is_latest=n.is_latest, recorded_at=when(n.recorded_at)) for n in result.nodes],
            edges=[GraphEdge(source=strawberry.ID(e.source), target=strawberry.ID(e.target), kind=str(e.kind),
                             predicate=e.predicate, negated=e.negated, fact_id=_id(e.fact_id)) for e in result.edges],
            total_documents=result.total_documents, truncated=result.truncated,
            unavailable_documents=result.unavailable_documents, coverage=result.coverage,
            coverage_is_upper_bound=result.coverage_is_upper_bound, next_cursor=result.next_cursor)


@strawberry.type(description="One step of a path: a triple (predicate, direction) or a fact naming both.")
class PathStep:
    source: strawberry.ID
    target: strawberry.ID
    via: str = strawberry.field(description="triple or fact")
    predicate: str | None
    negated: bool | None
    forward: bool | None
    fact_id: strawberry.ID
    text: str | None = strawberry.field(description="the supporting fact")


@strawberry.type
class EntityPath:
    entities: list[strawberry.ID] = strawberry.field(description="entity ids, the source first")
    names: list[str | None]
    steps: list[PathStep]


@strawberry.type(name="PathResult", description="The shortest paths between two entities.")
class PathResultType:
    source: strawberry.ID
    target: strawberry.ID
    paths: list[EntityPath] = strawberry.field(description="shortest first; empty when none within maxHops")
    hops: int | None
    cut: bool = strawberry.field(description="a bound stopped the search before it was exhaustive")

    @classmethod
    def from_result(cls, result: PathResult) -> PathResultType:
        return cls(source=strawberry.ID(result.source), target=strawberry.ID(result.target), hops=result.hops,
                   cut=result.cut, paths=[EntityPath(
                       entities=[strawberry.ID(e) for e in p.entities], names=p.names,
                       steps=[PathStep(source=strawberry.ID(s.source), target=strawberry.ID(s.target), via=s.via,
                                       predicate=s.predicate, negated=s.negated, forward=s.forward,
                                       fact_id=strawberry.ID(s.fact_id), text=s.text) for s in p.steps])
                       for p in result.paths])


@strawberry.type(name="Handoff", description="A revision of a project's handoff (version 0: none yet).")
class HandoffType:
    project: str
    version: int
    goal: str | None
    summary: str | None
    decisions: list[str]
    next_steps: list[str]
    references: list[str]
    author: str | None
    created_at: datetime | None

    @classmethod
    def from_result(cls, handoff: Handoff) -> HandoffType:
        context = handoff.context
        return cls(project=handoff.project, version=handoff.version, goal=context.goal if context else None,
                   summary=context.summary if context else None, decisions=context.decisions if context else [],
                   next_steps=context.next_steps if context else [],
                   references=context.references if context else [], author=handoff.author,
                   created_at=when(handoff.created_at))


@strawberry.type
class HandoffPage:
    items: list[HandoffType] = strawberry.field(description="the latest revision of each project")
    next_cursor: str | None


@strawberry.type(name="Job", description="Background ingestion of memories.")
class JobType:
    id: strawberry.ID
    namespace: str
    status: str = strawberry.field(description="queued, running, done or failed")
    attempts: int
    items: int
    submitted_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None
    memory_ids: list[strawberry.ID] | None = strawberry.field(description="when done: the memories written")

    @classmethod
    def from_result(cls, job: JobInfo) -> JobType:
        return cls(id=strawberry.ID(job.id), namespace=job.namespace, status=job.status.value, attempts=job.attempts,
                   items=job.items, submitted_at=at(job.submitted_at), started_at=when(job.started_at),
                   finished_at=when(job.finished_at), error=job.error,
                   memory_ids=None if job.document_ids is None else [strawberry.ID(i) for i in job.document_ids])


@strawberry.type
class HistoryPage:
    items: list[Memory] = strawberry.field(description="versions, newest first")
    next_cursor: str | None


@strawberry.type(description="The calling credential.")
class Me:
    name: str
    scopes: list[str]
    namespaces: list[str] = strawberry.field(description="empty when allNamespaces")
    all_namespaces: bool
    admin: bool


@strawberry.type(name="ForgetResult", description="What forgetting did.")
class ForgetResultType:
    id: strawberry.ID
    chain_id: str
    mode: str
    memories: int = strawberry.field(description="versions affected (hard: deleted)")
    facts: int
