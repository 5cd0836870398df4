"""Inputs of the search calls (facts, documents, entities, triples, recall) and of the evidence-graph export."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from graphmem.errors import InvalidInput
from graphmem.model.fields import (
    Cursor,
    Flag,
    Fraction,
    Id,
    Input,
    Namespaces,
    PathFilter,
    QueryText,
    within,
)
from graphmem.model.views import CURRENT, SearchFilters, View

# ---- search -------------------------------------------------------------------------------------------

MAX_LIMIT = 100  # results a search returns at most
Limit = Annotated[int, Field(strict=True), within(1, MAX_LIMIT)]


class FusionWeights(Input):
    """Weights of the fact-search signals in reciprocal-rank fusion (``search/hybrid.py`` says how they
    were tuned); ``memory`` is the prior of a fact whose memory ranks high by its own signals."""

    vector: float = Field(1.0, strict=True, ge=0, le=10)
    fulltext: float = Field(0.4, strict=True, ge=0, le=10)
    graph: float = Field(0.2, strict=True, ge=0, le=10)
    memory: float = Field(0.0, strict=True, ge=0, le=10, description=(
        "the memory prior, off by default: it costs four more statements a search (search/hybrid.py)"))


class SearchRequest(SearchFilters):
    """A fact or document search: the query, where (default: every namespace the caller can read), the
    filters, the view, fusion and output settings."""

    query: QueryText
    namespaces: Namespaces = None
    limit: Limit = 10
    view: View = CURRENT
    weights: FusionWeights = FusionWeights()
    rrf_k: Annotated[int, Field(strict=True, description="reciprocal-rank constant"), within(1, 1000)] = 5
    min_score: Annotated[Fraction | None, Field(description="cosine similarity on the 0..1 scale")] = None
    diversity: Annotated[Fraction, Field(description="MMR: 0 = pure relevance")] = 0.0
    recency_weight: Fraction = 0.0
    recency_half_life_days: float = Field(30.0, strict=True, gt=0, le=36_500)
    explain: Flag = False

    @staticmethod
    def clamped_limit(limit: int) -> int:
        """The seed tools' rule for a ``limit`` (their schema sets no bound): outside 1 to ``MAX_LIMIT`` it is
        brought inside rather than refused; callers say when it was."""
        return min(max(limit, 1), MAX_LIMIT)


MaxItems = Annotated[int, Field(strict=True), within(1, 50)]
MaxTokens = Annotated[int, Field(strict=True), within(32, 16_000)]


class RecallRequest(SearchFilters):
    """Budgeted recall: the facts that answer ``query``, as one cited context within both budgets."""

    query: QueryText
    namespaces: Namespaces = None
    max_items: MaxItems = 8
    max_tokens: MaxTokens = 1500
    view: View = CURRENT
    min_score: Annotated[Fraction | None, Field(description="cosine similarity on the 0..1 scale")] = None


class EntitySearchRequest(Input):
    """Entities by name and meaning, seen through the facts of the view (and of the folder, if ``path``)."""

    query: QueryText
    namespaces: Namespaces = None
    limit: Limit = 10
    view: View = CURRENT
    path: PathFilter | None = None
    explain: Flag = False
    cursor: Cursor = None


EntityName = Annotated[str, Field(strict=True, min_length=1, max_length=200)]


class TripleQuery(Input):
    """Triples by subject, predicate (matched as a verb lemma), object or a free term; at least one. The parts
    are entity names, bounded as one."""

    subject: EntityName | None = None
    predicate: Annotated[str, Field(strict=True, min_length=1, max_length=100)] | None = None
    object: EntityName | None = None
    term: EntityName | None = None
    negated: Annotated[bool | None, Field(strict=True)] = None
    namespaces: Namespaces = None
    limit: Limit = 10
    view: View = CURRENT
    path: PathFilter | None = None
    cursor: Cursor = None

    @model_validator(mode="after")
    def _something_asked(self) -> TripleQuery:
        if not any((self.subject, self.predicate, self.object, self.term)):
            raise ValueError("give at least one of subject, predicate, object, term")
        return self


# ---- the evidence-graph export ------------------------------------------------------------------------

MAX_SEED_IDS = 100


class QuerySeed(Input):
    """Start from the query's top fact hits (hybrid search in the namespace and view)."""

    kind: Literal["query"]
    query: QueryText


class DocumentSeed(Input):
    kind: Literal["document"]
    id: Id


class EntitySeed(Input):
    kind: Literal["entity"]
    id: Id


class IdsSeed(Input):
    """Ids of any kind (documents, facts, entities); the ones not visible are ignored."""

    kind: Literal["ids"]
    ids: Annotated[list[Id], Field(min_length=1, max_length=MAX_SEED_IDS)]


ExportSeed = Annotated[QuerySeed | DocumentSeed | EntitySeed | IdsSeed, Field(discriminator="kind")]
SEED_VALUES = {"query": "query", "document": "id", "entity": "id", "ids": "ids"}  # each kind's value field


def seed_of(given: dict[str, Any]) -> dict[str, Any]:
    """An export's seed from a front end's choices, one per kind (``query``, ``document``, ``entity``,
    ``ids``; None: not chosen), as ``ExportSeed`` reads it. Exactly one must be chosen."""
    chosen = {kind: value for kind, value in given.items() if value is not None}
    if len(chosen) != 1:
        raise InvalidInput(f"give exactly one seed of {', '.join(SEED_VALUES)}, not {len(chosen)}", field="seed")
    kind, value = next(iter(chosen.items()))
    return {"kind": kind, SEED_VALUES[kind]: value}


Depth = Annotated[int, Field(strict=True), within(1, 4)]
MaxNodes = Annotated[int, Field(strict=True), within(1, 5000)]
MaxDocuments = Annotated[int, Field(strict=True), within(1, 1000)]
Fanout = Annotated[int, Field(strict=True), within(1, 500)]


class ExportCaps(Input):
    """The bounds of one page. Every one is enforced inside the statements, not after them."""

    depth: Depth = 2
    max_nodes: MaxNodes = 2000
    max_documents: MaxDocuments = 1000
    fanout: Fanout = 50


class ExploreCaps(Input):
    """An agent's first look at the graph stays small: one cap on nodes, which bounds the memories too. A page
    is at most 1,000 nodes (the HTTP API's 5,000): each costs some 35 tokens before its label."""

    depth: Depth = 2
    max_nodes: Annotated[int, Field(strict=True), within(1, 1000)] = 100
    fanout: Fanout = 10

    def export_caps(self) -> ExportCaps:
        return ExportCaps(depth=self.depth, max_nodes=self.max_nodes, max_documents=self.max_nodes,
                          fanout=self.fanout)


# the token budget of an explored page: measured under 8,000 tokens at ExploreCaps' defaults
EXPLORE_TOKENS = 8000
ExploreTokens = Annotated[int, Field(ge=1000, le=100_000, description="the result's size cap in tokens")]


class ExportRequest(Input):
    """One page of the evidence graph around ``seed``; the next page is the same request with the page's
    ``next_cursor``."""

    seed: ExportSeed
    caps: ExportCaps = ExportCaps()
    view: View = CURRENT
    cursor: Cursor = None
    count_reachable: bool = Field(True, description="count the documents reachable from the seeds (a second, "
                                  "wider walk on the first page of a truncated export); false skips it, and "
                                  "reachable_documents and coverage are then null")


class ExportFormat(StrEnum):
    json = "json"
    graphml = "graphml"
    cypher = "cypher"


# ---- entities and paths ------------------------------------------------------------------------------------

ListedItems = Annotated[int, Field(strict=True), within(0, 100)]
Hops = Annotated[int, Field(strict=True), within(1, 4)]


class EntityLookup(Input):
    """One entity by ``id`` or by ``name`` (its normalised name, else the best full-text match), with up to
    ``facts`` of its facts (newest first) and ``neighbours`` entities it has triples with."""

    id: Id | None = None
    name: EntityName | None = None
    facts: ListedItems = 10
    neighbours: ListedItems = 10
    view: View = CURRENT

    @model_validator(mode="after")
    def _one(self) -> EntityLookup:
        if (self.id is None) == (self.name is None):
            raise ValueError("give the entity's id or its name")
        return self


class PathRequest(Input):
    """The shortest chains between two entities (each given by id or name) through triples and shared facts."""

    source: EntityName
    target: EntityName
    max_hops: Hops = 3
    max_paths: Annotated[int, Field(strict=True), within(1, 10)] = 3
    view: View = CURRENT
