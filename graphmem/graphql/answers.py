"""What GraphQL operations answer around the graph's types (``types.py``): search hits, recall, the evidence
graph, paths, handoffs, jobs, history pages, the caller, forgetting."""

from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Annotated

import strawberry

from graphmem.graphql.types import Entity, Fact, Memory, at, optional_id, when
from graphmem.results import (
    Document,
    DocumentHit,
    ExportResult,
    FactHit,
    Handoff,
    JobInfo,
    PathResult,
    RecallResult,
    SignalScore,
)


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
    def of_memories(cls, hits: list[DocumentHit], documents: dict[str, Document]) -> SearchConnection:
        return cls(edges=[SearchHit(cursor=str(rank), score=hit.score, similarity=hit.similarity,
                                     signals=Signal.of(hit.signals),
                                     evidence=[Fact.from_hit(f) for f in hit.facts],
                                     node=Memory.from_result(documents[hit.document_id]))
                          for rank, hit in enumerate(hits, start=1) if hit.document_id in documents])

    @classmethod
    def of_facts(cls, hits: list[FactHit]) -> SearchConnection:
        return cls(edges=[SearchHit(cursor=str(rank), score=hit.score, similarity=hit.similarity,
                                     signals=Signal.of(hit.explain.signals if hit.explain else None),
                                     evidence=[], node=Fact.from_hit(hit))
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
    def from_result(cls, result: RecallResult) -> RecallResultType:
        return cls(answer_status=result.answer_status.value, context_text=result.context_text,
                   tokens_used=result.tokens_used, max_tokens=result.max_tokens, max_items=result.max_items,
                   items=[Fact.from_hit(f) for f in result.items])


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
    reachable_documents: int | None = strawberry.field(
        description="documents reachable from the seeds within the depth (at least this many when "
                    "coverageIsUpperBound); null when not counted (countReachable: false)")
    truncated: bool
    unavailable_documents: int
    coverage: float | None = strawberry.field(description="null when not counted")
    coverage_is_upper_bound: bool
    next_cursor: str | None = strawberry.field(description="null on the last page")

    @classmethod
    def from_result(cls, result: ExportResult) -> EvidenceGraph:
        return cls(
            nodes=[GraphNode(id=strawberry.ID(n.id), kind=str(n.kind), depth=n.depth, title=n.title, text=n.text,
                             name=n.name, type=n.type, version=n.version, memory_id=optional_id(n.document_id),
                             is_latest=n.is_latest, recorded_at=when(n.recorded_at)) for n in result.nodes],
            edges=[GraphEdge(source=strawberry.ID(e.source), target=strawberry.ID(e.target), kind=str(e.kind),
                             predicate=e.predicate, negated=e.negated, fact_id=optional_id(e.fact_id))
                   for e in result.edges],
            total_documents=result.total_documents, reachable_documents=result.reachable_documents,
            truncated=result.truncated,
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
