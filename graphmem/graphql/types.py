"""The graph's GraphQL types (Memory, Fact, Entity, Triple and the edges between them), each built from a service
result; what operations answer around them is ``answers.py``. Times are ``DateTime`` (ISO 8601, UTC): epoch
milliseconds overflow GraphQL's 32-bit ``Int``. Relationship fields resolve through the request's loaders
(``loaders.py``), each bounded by ``first`` (0-1,000, checked by the service); each object keeps the namespace
it was read from, so its relationships are read with that namespace's rules."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import cast

import strawberry
from strawberry.scalars import JSON

from graphmem.graphql.context import Info
from graphmem.model import CURRENT, View
from graphmem.results import (
    Document,
    DocumentInfo,
    EntityRef,
    FactHit,
    FactInfo,
    FactRecord,
    Neighbour,
    TripleHit,
)
from graphmem.results.search import triple_statement

FIRST = 20  # items a relationship field returns unless a query asks for more (up to 1,000)


def when(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def optional_id(value: str | None) -> strawberry.ID | None:
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
    redacted_at: datetime | None
    forget_reason: str | None = strawberry.field(description="the reason given when it was forgotten or redacted")
    parent_memory_id: strawberry.ID | None = strawberry.field(description="the previous version's id")
    read: strawberry.Private[Document | None]  # the full read, when this object came from one

    @classmethod
    def from_result(cls, doc: DocumentInfo) -> Memory:
        return cls(id=strawberry.ID(doc.id), namespace=doc.namespace, chain_id=doc.chain_id, version=doc.version,
                   is_latest=doc.is_latest, is_forgotten=doc.is_forgotten, is_redacted=doc.is_redacted,
                   title=doc.title, source=doc.source, path=doc.path, metadata=cast(JSON, doc.metadata),
                   created_at=when(doc.created_at), recorded_at=at(doc.recorded_at),
                   superseded_at=when(doc.superseded_at), forgotten_at=when(doc.forgotten_at),
                   redacted_at=when(doc.redacted_at), forget_reason=doc.forget_reason,
                   parent_memory_id=optional_id(doc.parent_memory_id),
                   read=doc if isinstance(doc, Document) else None)

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
        return None if full is None else optional_id(full.latest_id)

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
    def from_hit(cls, hit: FactHit) -> Fact:
        return cls(id=strawberry.ID(hit.fact_id), text=hit.text, start=hit.citation.start, end=hit.citation.end,
                   version=hit.version, is_latest=hit.is_latest, is_forgotten=hit.is_forgotten,
                   is_inference=hit.is_inference, attributes=hit.attributes, recorded_at=at(hit.recorded_at),
                   memory_id=strawberry.ID(hit.citation.document_id), namespace=hit.citation.namespace,
                   mentions=hit.entities)

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
        return [Triple.from_hit(t) for t in hits]


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

    @strawberry.field(description="other names the memories in view gave it, as written: a short name ('Maya' "
                                  "for 'Maya Okafor') or the other number")
    async def aliases(self, info: Info) -> list[str]:
        ref = await info.context.loaders.entities.load((self.namespace, str(self.id), self.view))
        return ref.aliases if ref is not None else []

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
    asserted: bool = strawberry.field(description="an agent stated it (createRelations); else extraction read it")
    statement: str = strawberry.field(description='"subject predicate object", with "not" when negated')
    fact_id: strawberry.ID
    namespace: strawberry.Private[str]

    @classmethod
    def from_hit(cls, hit: TripleHit) -> Triple:
        namespace = hit.citation.namespace
        return cls(subject=Entity.from_ref(hit.subject, namespace), predicate=hit.predicate,
                   object=Entity.from_ref(hit.object, namespace), negated=hit.negated, asserted=hit.asserted,
                   statement=hit.statement,
                   fact_id=strawberry.ID(hit.fact_id), namespace=namespace)

    @classmethod
    def from_neighbour(cls, entity: Entity, n: Neighbour) -> Triple:
        other = Entity(id=strawberry.ID(n.id), name=n.name, type=n.type, namespace=entity.namespace,
                       view=entity.view)
        subject, obj = (entity, other) if n.outgoing else (other, entity)
        return cls(subject=subject, predicate=n.predicate, object=obj, negated=n.negated, asserted=n.asserted,
                   statement=triple_statement(subject.name, n.predicate, obj.name, n.negated),
                   fact_id=strawberry.ID(n.fact_id), namespace=entity.namespace)

    @strawberry.field(description="the fact it was read from")
    async def fact(self, info: Info) -> Fact | None:
        record = await info.context.loaders.facts.load((self.namespace, str(self.fact_id)))
        return None if record is None else Fact.from_record(record)
