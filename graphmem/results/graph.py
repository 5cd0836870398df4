"""Results of the graph calls: the evidence-graph export (nodes, edges, completeness fields)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from graphmem.results.documents import EntityWithAliases, NamespacesRead

# ---- the evidence-graph export ------------------------------------------------------------------------

NodeKind = Literal["document", "fact", "entity", "unavailable"]
EdgeKind = Literal["contains", "mentions", "triple", "previous_version"]


class ExportNode(BaseModel):
    """One node. Which fields are set depends on the kind; an unavailable node carries its id only."""

    id: str
    kind: NodeKind
    depth: int = Field(description="hops from the nearest seed")
    # documents
    title: str | None = None
    source: str | None = None
    version: int | None = None
    chain_id: str | None = None
    # facts
    text: str | None = None
    document_id: str | None = None
    position: int | None = None
    start: int | None = None
    end: int | None = None
    # entities
    name: str | None = None
    type: str | None = None
    # documents and facts: what the time views decide by
    is_latest: bool | None = None
    is_forgotten: bool | None = None
    recorded_at: int | None = None
    superseded_at: int | None = None


class ExportEdge(BaseModel):
    """An edge as stored: contains (document → fact), mentions (fact → entity), triple (subject → object,
    with its predicate, negation, supporting fact and whether an agent stated it), previous_version (newer →
    older version)."""

    source: str
    target: str
    kind: EdgeKind
    predicate: str | None = None
    negated: bool | None = None
    fact_id: str | None = None
    asserted: bool | None = Field(None, description="triples: an agent stated it (else extraction read it)")


class ExportSummary(BaseModel):
    """The honest completeness fields of one page (``graphmem/export/__init__.py`` defines them)."""

    total_documents: int = Field(description="documents on this page")
    reachable_documents: int | None = Field(
        description="documents reachable from the seeds within the caps' depth in the view (at least this many "
                    "when coverage_is_upper_bound); null when the export was asked not to count them")
    truncated: bool
    unavailable_documents: int
    coverage: float | None = Field(ge=0, le=1, description="this page's documents over reachable_documents; "
                                   "null when they were not counted")
    coverage_is_upper_bound: bool
    next_cursor: str | None = Field(None, description="None when this is the last page")
    namespaces: NamespacesRead = []


class ExportResult(ExportSummary):
    nodes: list[ExportNode]
    edges: list[ExportEdge]


class RenderedExport(ExportSummary):
    """A page rendered as GraphML or as a Cypher script, with the same completeness fields."""

    format: Literal["graphml", "cypher"]
    media_type: str
    content: str


# ---- entities and paths ------------------------------------------------------------------------------------


class EntityFact(BaseModel):
    """A fact that mentions an entity, with where it comes from."""

    fact_id: str
    text: str | None
    document_id: str
    title: str | None = None
    recorded_at: int


class Neighbour(BaseModel):
    """An entity joined to another by a triple: ``outgoing`` when the other is the triple's subject."""

    id: str
    name: str | None
    type: str | None
    predicate: str
    negated: bool
    outgoing: bool
    fact_id: str
    asserted: bool = Field(False, description="an agent stated this triple (else extraction read it)")


class EntityList(BaseModel):
    items: list[EntityWithAliases]
    total: int = Field(description="entities in the namespace, view and conditions")
    limit: int
    next_cursor: str | None = Field(None, description="None on the last page")
    cursors: list[str] | None = Field(None, description="with item_cursors: the cursor after each item")
    namespaces: NamespacesRead = []


class EntityDetail(BaseModel):
    id: str
    name: str | None
    type: str | None
    aliases: list[str] = Field(description="other names the memories in view gave it, as written")
    facts: list[EntityFact] = Field(description="newest first")
    facts_total: int
    facts_cut: bool = Field(description="more facts mention it than are listed")
    neighbours: list[Neighbour]
    neighbours_cut: bool = Field(description="it has more triples than are listed")


class PathStep(BaseModel):
    """One step of a path: from one entity to the next through a triple (its predicate; ``forward`` when the
    path runs from subject to object) or through a fact that mentions both."""

    source: str
    target: str
    via: Literal["triple", "fact"]
    predicate: str | None = None
    negated: bool | None = None
    forward: bool | None = None
    fact_id: str
    text: str | None = Field(None, description="the supporting fact")


class EntityPath(BaseModel):
    entities: list[str] = Field(description="entity ids, source first")
    names: list[str | None]
    steps: list[PathStep]


class PathResult(BaseModel):
    source: str
    target: str
    paths: list[EntityPath] = Field(description="shortest first; empty when none within max_hops")
    hops: int | None = Field(None, description="the length of the shortest path")
    cut: bool = Field(description="the search hit its bounds (fan-out or frontier) before it was exhaustive")
