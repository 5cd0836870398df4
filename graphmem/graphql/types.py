"""The GraphQL types, each built from a service result (``from_result``). Times are ``DateTime`` (ISO 8601,
UTC): epoch milliseconds overflow GraphQL's 32-bit ``Int``. Relationship fields resolve through the
request's loaders (``loaders.py``), each bounded by ``first``."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, cast

import strawberry
from strawberry.scalars import JSON

from graphmem.graphql.context import Info
from graphmem.results import Document, DocumentHit, FactHit, FactInfo, RecallResult, SignalScore
from graphmem.results.documents import EntityRef

FIRST_FACTS = 20  # facts a memory shows unless a query asks for more (up to 1,000)


def when(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC)


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


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
    content: str | None = strawberry.field(description="null once redacted")
    created_at: datetime | None = strawberry.field(description="the first version's time")
    recorded_at: datetime
    superseded_at: datetime | None
    forgotten_at: datetime | None
    parent_memory_id: strawberry.ID | None = strawberry.field(description="the previous version's id")
    latest_id: strawberry.ID | None = strawberry.field(description="the id of the chain's latest version")

    @classmethod
    def from_result(cls, doc: Document) -> Memory:
        return cls(id=strawberry.ID(doc.id), namespace=doc.namespace, chain_id=doc.chain_id, version=doc.version,
                   is_latest=doc.is_latest, is_forgotten=doc.is_forgotten, is_redacted=doc.is_redacted,
                   title=doc.title, source=doc.source, path=doc.path, metadata=cast(JSON, doc.metadata),
                   content=doc.content,
                   created_at=when(doc.created_at), recorded_at=at(doc.recorded_at),
                   superseded_at=when(doc.superseded_at), forgotten_at=when(doc.forgotten_at),
                   parent_memory_id=_id(doc.parent_memory_id), latest_id=_id(doc.latest_id))

    @strawberry.field(description="its facts in order (first: 1-1000, default 20)")
    async def facts(self, info: Info, first: int = FIRST_FACTS) -> list[Fact]:
        facts = await info.context.loaders.facts.load((self.namespace, str(self.id), first))
        return [Fact.from_info(f, self.namespace, str(self.id)) for f in facts]

    @strawberry.field(description="the version this one replaced, if any")
    async def previous_version(self, info: Info) -> Memory | None:
        if self.parent_memory_id is None:
            return None
        found = await info.context.loaders.memories.load((self.namespace, str(self.parent_memory_id)))
        return None if found is None else Memory.from_result(found)


@strawberry.type(description="A sentence (or item, field, row) of a memory, with its exact span.")
class Fact:
    id: strawberry.ID
    text: str | None = strawberry.field(description="null once redacted")
    start: int
    end: int
    version: int | None
    is_latest: bool
    is_forgotten: bool
    is_inference: bool
    attributes: list[str] = strawberry.field(description='dates and numbers: "DATE: last May"')
    recorded_at: datetime
    memory_id: strawberry.ID
    entities: list[Entity] | None = strawberry.field(
        description="what it mentions (on search and recall results; null where not loaded)")
    namespace: strawberry.Private[str]

    @classmethod
    def from_info(cls, fact: FactInfo, namespace: str, memory_id: str) -> Fact:
        return cls(id=strawberry.ID(fact.id), text=fact.text, start=fact.start, end=fact.end, version=fact.version,
                   is_latest=fact.is_latest, is_forgotten=fact.is_forgotten, is_inference=fact.is_inference,
                   attributes=fact.attributes, recorded_at=at(fact.recorded_at), memory_id=strawberry.ID(memory_id),
                   entities=None, namespace=namespace)

    @classmethod
    def from_hit(cls, hit: FactHit, namespace: str) -> Fact:
        return cls(id=strawberry.ID(hit.fact_id), text=hit.text, start=hit.citation.start, end=hit.citation.end,
                   version=hit.version, is_latest=hit.is_latest, is_forgotten=hit.is_forgotten,
                   is_inference=hit.is_inference, attributes=hit.attributes, recorded_at=at(hit.recorded_at),
                   memory_id=strawberry.ID(hit.citation.document_id),
                   entities=[Entity.from_ref(e) for e in hit.entities], namespace=namespace)

    @strawberry.field(description="the memory version it belongs to")
    async def memory(self, info: Info) -> Memory | None:
        found = await info.context.loaders.memories.load((self.namespace, str(self.memory_id)))
        return None if found is None else Memory.from_result(found)


@strawberry.type(description="A person, organisation, place, product, ... named in facts.")
class Entity:
    id: strawberry.ID
    name: str | None
    type: str | None

    @classmethod
    def from_ref(cls, ref: EntityRef) -> Entity:
        return cls(id=strawberry.ID(ref.id), name=ref.name, type=ref.type)


@strawberry.enum(description="what a search returns")
class SearchTarget(Enum):
    FACTS = "facts"
    MEMORIES = "memories"


@strawberry.type(description="A signal that found a hit (with explain): its score and rank within the signal.")
class Signal:
    signal: str
    score: float
    rank: int

    @classmethod
    def of(cls, scores: list[SignalScore] | None) -> list[Signal] | None:
        return None if scores is None else [cls(signal=s.signal.value, score=s.score, rank=s.rank) for s in scores]


SearchNode = Annotated[Memory | Fact, strawberry.union("SearchNode")]


@strawberry.type
class SearchEdge:
    cursor: str = strawberry.field(description="the hit's 1-based position (search pages are not walked)")
    score: float
    similarity: float = strawberry.field(description="cosine similarity to the query, 0..1")
    signals: list[Signal] | None = strawberry.field(description="with explain: the signals that ranked it")
    evidence: list[Fact] = strawberry.field(description="for a memory: its facts that answer best")
    node: SearchNode


@strawberry.type
class SearchConnection:
    edges: list[SearchEdge]

    @classmethod
    def of_memories(cls, hits: list[DocumentHit], documents: dict[str, Document], namespace: str) -> SearchConnection:
        return cls(edges=[SearchEdge(cursor=str(rank), score=hit.score, similarity=hit.similarity,
                                     signals=Signal.of(hit.signals),
                                     evidence=[Fact.from_hit(f, namespace) for f in hit.facts],
                                     node=Memory.from_result(documents[hit.document_id]))
                          for rank, hit in enumerate(hits, start=1) if hit.document_id in documents])

    @classmethod
    def of_facts(cls, hits: list[FactHit], namespace: str) -> SearchConnection:
        return cls(edges=[SearchEdge(cursor=str(rank), score=hit.score, similarity=hit.similarity,
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


def _id(value: str | None) -> strawberry.ID | None:
    return None if value is None else strawberry.ID(value)
